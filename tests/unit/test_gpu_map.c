/* test_gpu_map.c: the gpu layer's clock mapping and work spans (capture/hook/gpu_map.c), fed
 * made-up clocks: a GPU clock drifting against the host's is mapped back within the bound the
 * function states; work starts after the work before it on its stream, never before its call
 * returned. */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "check_main.h"
#include "gpu.h"

/* A GPU clock: OFFSET + host * (1 + drift). */
static double
gpu_at(double host, double drift)
{
	return 5e12 + host * (1 + drift);
}

START_TEST(test_drift_measured_and_bounded)
{
	const double drift = -18.4e-6;
	struct gpu_clock c;
	/* Anchors every 50 ms over 10 s, each with an error of up to 1.5 us of its own. */
	double host = 1e9, anchor_gpu = gpu_at(host, drift);
	gpu_clock_init(&c, (int64_t)host + 700, 1500, 1216);
	ck_assert(c.rate == 1.0);
	srand(7);
	for (int i = 1; i <= 200; i++) {
		double h = 1e9 + i * 50e6, g = gpu_at(h, drift);
		int64_t e = rand() % 1500;
		gpu_clock_anchor(&c, (int64_t)h + e, 1500, g - anchor_gpu);
		anchor_gpu = g;
		/* Events 0 to 60 ms after the anchor, and 5 ms before it: within the bound. */
		for (double d = -5e6; d <= 60e6; d += 5e6) {
			int64_t bound;
			int64_t got = gpu_clock_map(&c, (g + d * (1 + drift)) - anchor_gpu, &bound);
			double want = h + d;
			ck_assert_msg(fabs((double)got - want) <= (double)bound,
			              "anchor %d, %+.0f ns: %lld off, bound %lld", i, d,
			              (long long)(got - (int64_t)want), (long long)bound);
			ck_assert_int_lt(bound, 5000);
		}
	}
	/* After 10 s the rate is measured to well under a ppm. */
	ck_assert(fabs(c.rate - 1 / (1 + drift)) < 1e-6);
	ck_assert(c.rate_err < 1e-6);
}
END_TEST

START_TEST(test_unmeasured_rate_bounds_drift)
{
	/* Before a second of anchors, the rate is taken as 1: a drift of 18.4 ppm over 60 ms
	 * (1.1 us) stays inside the bound. */
	struct gpu_clock c;
	gpu_clock_init(&c, 0, 100, 1216);
	int64_t bound;
	int64_t got = gpu_clock_map(&c, 60e6 * (1 - 18.4e-6), &bound);
	ck_assert(llabs(got - 60000000) <= bound);
	ck_assert_int_ge(bound, 1104);
}
END_TEST

START_TEST(test_span)
{
	bool from_call;
	int64_t end;
	/* A busy stream: the work starts a gap after the work before it ended. */
	ck_assert_int_eq(gpu_work_span(10000, 0, false, 5000, true, 1200, 3000, &end, &from_call),
	                 6200);
	ck_assert(!from_call);
	ck_assert_int_eq(end, 10000);
	/* An idle stream: the previous work ended before the call returned. */
	ck_assert_int_eq(gpu_work_span(10000, 0, false, 1000, true, 1200, 4000, &end, &from_call),
	                 4000);
	ck_assert(from_call);
	/* A START recorded (the stream waited): a gap after it. */
	ck_assert_int_eq(gpu_work_span(10000, 7000, true, 1000, true, 1200, 4000, &end, &from_call),
	                 8200);
	ck_assert(!from_call);
	/* Nothing before it on the stream. */
	ck_assert_int_eq(gpu_work_span(10000, 0, false, 0, false, 1200, 4000, &end, &from_call),
	                 4000);
	/* Never after the end: zero length, not negative. */
	ck_assert_int_eq(gpu_work_span(10000, 9900, true, 0, false, 1200, 4000, &end, &from_call),
	                 10000);
	ck_assert_int_eq(end, 10000);
}
END_TEST

START_TEST(test_median)
{
	int64_t v[] = {9, 1, 5, 3, 7};
	ck_assert_int_eq(gpu_median(v, 5), 5);
	ck_assert_int_eq(gpu_median(v, 0), 0);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("gpu_map");
	TCase *tc = tcase_create("gpu_map");
	tcase_add_test(tc, test_drift_measured_and_bounded);
	tcase_add_test(tc, test_unmeasured_rate_bounds_drift);
	tcase_add_test(tc, test_span);
	tcase_add_test(tc, test_median);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
