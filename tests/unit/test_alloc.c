/* test_alloc.c: cut.h's allocation that never returns NULL (cut_x*) and array growth
 * (cut_grow, CUT_GROW): contents kept, new room zeroed, sizes past SIZE_MAX out of memory. */
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "check_main.h"
#include "cut.h"

START_TEST(test_grow)
{
	int *v = NULL;
	size_t cap = 0;
	CUT_GROW(v, 3, cap);
	ck_assert_ptr_nonnull(v);
	ck_assert_uint_ge(cap, 3);
	for (size_t i = 0; i < cap; i++)
		ck_assert_int_eq(v[i], 0);
	v[0] = 7, v[2] = 9;
	size_t before = cap;
	CUT_GROW(v, before, cap); /* room enough: nothing moves */
	ck_assert_uint_eq(cap, before);
	CUT_GROW(v, 1000, cap);
	ck_assert_uint_ge(cap, 1000);
	ck_assert_int_eq(v[0], 7);
	ck_assert_int_eq(v[2], 9);
	for (size_t i = before; i < cap; i++)
		ck_assert_int_eq(v[i], 0);
	free(v);
}
END_TEST

START_TEST(test_x)
{
	char *p = cut_xmalloc(0);
	ck_assert_ptr_nonnull(p);
	free(p);
	int *z = cut_xcalloc(4, sizeof(int));
	ck_assert_int_eq(z[3], 0);
	z = cut_xrealloc(z, 8, sizeof(int));
	ck_assert_int_eq(z[3], 0);
	free(z);
	char *s = cut_xstrdup("layer");
	ck_assert_str_eq(s, "layer");
	free(s);
	s = cut_xstrndup("layer", 3);
	ck_assert_str_eq(s, "lay");
	free(s);
}
END_TEST

/* A count of elements whose bytes pass SIZE_MAX is out of memory: exit 2, not a short array. */
START_TEST(test_realloc_overflow)
{
	volatile size_t n = SIZE_MAX / 2 + 2; /* not a constant the compiler refuses */
	cut_xrealloc(NULL, n, 2);
}
END_TEST

START_TEST(test_grow_overflow)
{
	uint64_t *v = NULL;
	size_t cap = 0;
	volatile size_t n = SIZE_MAX / 4;
	CUT_GROW(v, n, cap);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("alloc");
	TCase *tc = tcase_create("alloc");
	tcase_add_test(tc, test_grow);
	tcase_add_test(tc, test_x);
	tcase_add_exit_test(tc, test_realloc_overflow, CUT_EXIT_FATAL);
	tcase_add_exit_test(tc, test_grow_overflow, CUT_EXIT_FATAL);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
