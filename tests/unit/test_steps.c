/* test_steps.c: cutstat -s's per-step numbers (steps.h): the quantiles, and a kernel that runs
 * across many steps (held at each step's start) against short ones that start in them. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "check_main.h"
#include "parse.h"
#include "steps.h"

START_TEST(test_quantile)
{
	/* numpy.percentile([1, 2, 4, 8, 100], [10, 50, 90]) = 1.4, 4, 63.2 */
	static const int64_t v[] = {1, 2, 4, 8, 100};
	ck_assert_double_eq_tol(steps_quantile(v, 5, 0.1), 1.4, 1e-9);
	ck_assert_double_eq_tol(steps_quantile(v, 5, 0.5), 4, 1e-9);
	ck_assert_double_eq_tol(steps_quantile(v, 5, 0.9), 63.2, 1e-9);
	ck_assert_double_eq_tol(steps_quantile(v, 1, 0.9), 1, 1e-9);
	ck_assert_double_eq_tol(steps_quantile(v, 5, 1), 100, 1e-9);
}
END_TEST

static void
add_line(struct cut_steps *s, struct cut_parser *p, const char *line)
{
	char buf[512], why[256];
	struct cut_event ev;
	size_t n = strlen(line);
	ck_assert_uint_lt(n, sizeof(buf));
	memcpy(buf, line, n + 1);
	ck_assert_int_eq(cut_parse(p, buf, n, &ev, CUT_PARSE_AUTO, why, sizeof(why)),
	                 CUT_PARSE_EVENT);
	steps_add(s, &ev);
}

START_TEST(test_long_kernel)
{
	/* "spin" runs from 0 to 100000 on one stream; each step (1000 long, every 2000) has a
	 * 600-long "gemm" in it. spin covers each step whole: it is the top kernel of every
	 * one, and the GPU is busy all of each. */
	struct cut_steps *s = steps_new("step");
	struct cut_parser *p = cut_parser_new();
	char line[512];
	add_line(s, p,
	         "{\"ts\":0,\"dur\":100000,\"pid\":1,\"tid\":1,\"layer\":\"gpu\",\"name\":\"spin\","
	         "\"cat\":\"kernel\"}");
	for (int k = 0; k < 40; k++) {
		int64_t t = 1000 + 2000 * k;
		snprintf(line, sizeof(line),
		         "{\"ts\":%lld,\"dur\":1000,\"pid\":1,\"tid\":1,\"layer\":\"nvtx\","
		         "\"name\":\"step\",\"cat\":\"range\"}",
		         (long long)t);
		add_line(s, p, line);
		snprintf(line, sizeof(line),
		         "{\"ts\":%lld,\"dur\":600,\"pid\":1,\"tid\":1,\"layer\":\"gpu\","
		         "\"name\":\"gemm\",\"cat\":\"kernel\"}",
		         (long long)t + 100);
		add_line(s, p, line);
	}
	cut_parser_free(p);
	steps_finish(s);
	ck_assert_uint_eq(s->nsteps, 40);
	ck_assert_uint_eq(s->nprocs, 1);
	for (size_t i = 0; i < s->nsteps; i++) {
		ck_assert_int_eq(s->steps[i].n, (int64_t)i + 1);
		ck_assert_str_eq(s->steps[i].top, "spin");
		ck_assert_int_eq(s->steps[i].top_ns, 1000);
		ck_assert_int_eq(s->steps[i].gpu_busy, 1000);
		ck_assert(!s->steps[i].outlier);
	}
	ck_assert_int_eq(s->procs[0].outliers, 0);
	steps_free(s);
}
END_TEST

static Suite *
steps_suite(void)
{
	Suite *s = suite_create("steps");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, test_quantile);
	tcase_add_test(tc, test_long_kernel);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return run_suite(steps_suite());
}
