/* test_nvtxstats.c: the folding of PyTorch emit_nvtx() range names to their operator. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "nvtxstats.h"

START_TEST(test_op_len)
{
	static const struct {
		const char *name, *op;
	} cases[] = {
	    {"aten::addmm, seq = 50, op_id = 366, sizes = [[32, 64], [64]]", "aten::addmm"},
	    {"aten::linear, seq = 49, op_id = 362", "aten::linear"},
	    {"autograd::engine::evaluate_function: AddmmBackward0, op_id = 34",
	     "autograd::engine::evaluate_function: AddmmBackward0"},
	    {"aten::view, seq = -1", "aten::view"},
	    {"a, seq = 5, seq = 6", "a"},
	    {"x, input_op_ids = [(1, 0), (2, 1)]", "x"},
	    {"a, sizes = [[]]", "a"},
	    {"a, sizes = [], op_id = 3", "a"},
	    {"forward", "forward"},
	    {"", ""},
	    /* fields not at the end, not of emit_nvtx's keys or values, or nothing before */
	    {"a, op_id = 1, b", "a, op_id = 1, b"},
	    {"a, seq = x", "a, seq = x"},
	    {"a, seq = ", "a, seq = "},
	    {"a, seq = 1x", "a, seq = 1x"},
	    {"a, shapes = [1]", "a, shapes = [1]"},
	    {"a, op_id = [1]", "a, op_id = [1]"},
	    {"a, sizes = 1", "a, sizes = 1"},
	    {"x, sizes = [[1, 2], [3]", "x, sizes = [[1, 2], [3]"},
	    {"x, sizes = [1]]", "x, sizes = [1]]"},
	    {"seq = 5", "seq = 5"},
	    {", seq = 1", ", seq = 1"},
	    {", seq = 1, op_id = 2", ", seq = 1, op_id = 2"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_msg(cut_nvtx_op_len(cases[i].name) == strlen(cases[i].op), "%s: %zu",
		              cases[i].name, cut_nvtx_op_len(cases[i].name));
}
END_TEST

/* Linear: a name of a million brackets, or of a million fields, is one pass. */
START_TEST(test_op_len_long)
{
	size_t n = 1000000;
	char *s = malloc(n + 16);
	ck_assert_ptr_nonnull(s);
	memcpy(s, "a, sizes = ", 11);
	memset(s + 11, '[', n / 2);
	memset(s + 11 + n / 2, ']', n / 2);
	s[11 + n] = '\0';
	ck_assert_uint_eq(cut_nvtx_op_len(s), 1);
	memset(s + 11, ']', n);
	ck_assert_uint_eq(cut_nvtx_op_len(s), 11 + n);
	size_t k = 1;
	s[0] = 'a';
	while (k + 10 < n)
		memcpy(s + k, ", seq = 12", 10), k += 10;
	s[k] = '\0';
	ck_assert_uint_eq(cut_nvtx_op_len(s), 1);
	free(s);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("nvtxstats");
	TCase *tc = tcase_create("nvtxstats");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_op_len);
	tcase_add_test(tc, test_op_len_long);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
