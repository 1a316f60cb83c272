/* test_buf.c: the direct-write number formatters of buf.c (buf_put_i64, buf_put_hex) and the
 * buf_add* functions built on them, at every digit-count boundary. */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "buf.h"
#include "check_main.h"

START_TEST(test_put_i64)
{
	int64_t v[64];
	size_t n = 0;
	v[n++] = 0;
	v[n++] = INT64_MAX;
	v[n++] = INT64_MIN;
	v[n++] = INT64_MIN + 1;
	for (int64_t p = 1; p <= INT64_MAX / 10; p *= 10) {
		v[n++] = p;
		v[n++] = p - 1;
		v[n++] = -p;
	}
	v[n++] = 1000000000000000000;
	for (size_t i = 0; i < n; i++) {
		char want[32], got[32];
		snprintf(want, sizeof(want), "%" PRId64, v[i]);
		char *end = buf_put_i64(got, v[i]);
		*end = 0;
		ck_assert_str_eq(got, want);
		struct cut_buf b = {0};
		buf_adds(&b, "x");
		buf_addi64(&b, v[i]);
		ck_assert_str_eq(b.s + 1, want);
		ck_assert_uint_eq(b.len, strlen(want) + 1);
		buf_free(&b);
	}
}
END_TEST

START_TEST(test_put_hex)
{
	static const uint64_t v[] = {
	    0, 1, 0xf, 0x10, 0xff, 0x100, 0x7000000000, UINT64_MAX, 0x8000000000000000ull};
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		char want[32], got[32];
		snprintf(want, sizeof(want), "\"0x%" PRIx64 "\"", v[i]);
		*buf_put_hex(got, v[i]) = 0;
		ck_assert_str_eq(got, want);
		struct cut_buf b = {0};
		buf_addhex(&b, v[i]);
		ck_assert_str_eq(b.s, want);
		buf_free(&b);
	}
}
END_TEST

START_TEST(test_room)
{
	struct cut_buf b = {0};
	char *p = buf_try_room(&b, 1000);
	ck_assert_ptr_nonnull(p);
	memset(p, 'a', 1000);
	buf_commit(&b, p + 1000);
	ck_assert_uint_eq(b.len, 1000);
	ck_assert_uint_eq(strlen(b.s), 1000);
	p = buf_room(&b, 3);
	memcpy(p, "xyz", 3);
	buf_commit(&b, p + 3);
	ck_assert_uint_eq(b.len, 1003);
	ck_assert_str_eq(b.s + 1000, "xyz");
	ck_assert_uint_eq(buf_digits[2 * 42], '4');
	ck_assert_uint_eq(buf_digits[2 * 42 + 1], '2');
	buf_free(&b);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("buf");
	TCase *tc = tcase_create("buf");
	tcase_add_test(tc, test_put_i64);
	tcase_add_test(tc, test_put_hex);
	tcase_add_test(tc, test_room);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
