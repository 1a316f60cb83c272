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

/* The span of a piece whose END ran at end_ev, the event before it at before_ev (have_before),
 * its call began at t0 and the device had it at ready, the piece before it on its stream
 * written to end at prev_end (have_prev); the gap 1200 ns. */
static struct gpu_span
span(int64_t end_ev, int64_t before_ev, bool have_before, int64_t t0, int64_t ready,
     int64_t prev_end, bool have_prev)
{
	struct gpu_span_in in = {.end_ev = end_ev,
	                         .before_ev = before_ev,
	                         .have_before = have_before,
	                         .gap = 1200,
	                         .t0 = t0,
	                         .ready = ready,
	                         .prev_end = prev_end,
	                         .have_prev = have_prev};
	struct gpu_span sp;
	gpu_work_span(&in, &sp);
	return sp;
}

START_TEST(test_span)
{
	/* A busy stream: the work starts a gap after the work before it ended, and ends a gap
	 * before its END. */
	struct gpu_span sp = span(11200, 5000, true, 2000, 3000, 3800, true);
	ck_assert_int_eq(sp.start, 6200);
	ck_assert_int_eq(sp.end, 10000);
	ck_assert_int_eq(sp.how, 0);
	/* An idle stream: the previous work ended before the call returned. */
	sp = span(11200, 1000, true, 2000, 4000, 0, false);
	ck_assert_int_eq(sp.start, 4000);
	ck_assert_int_eq(sp.how, GPU_SPAN_FROM_CALL);
	/* Nothing before it on the stream. */
	sp = span(11200, 0, false, 2000, 4000, 0, false);
	ck_assert_int_eq(sp.start, 4000);
	ck_assert_int_eq(sp.how, GPU_SPAN_FROM_CALL);
}
END_TEST

/* Whatever the mapping says, a piece never starts before its call nor inside the piece before
 * it on its stream, and never ends before it starts; each move is said. */
START_TEST(test_span_clamped)
{
	/* Events mapped before the call began (an END before it: a mapping off by more than
	 * the piece): not a piece before its call with a duration of 0, as it was. */
	struct gpu_span sp = span(1500, 500, true, 2000, 2000, 0, false);
	ck_assert_int_ge(sp.start, 2000);
	ck_assert_int_ge(sp.end, sp.start);
	ck_assert(sp.how & GPU_SPAN_CLAMPED_END);
	/* A ready before the call's start (it never is; the call's start is the floor). */
	sp = span(9000, 0, false, 2000, 1000, 0, false);
	ck_assert_int_eq(sp.start, 2000);
	ck_assert(sp.how & GPU_SPAN_CLAMPED_START);
	/* The piece before it on the stream was written to end at 8000 (mapped by an older
	 * anchor), this one's events say 6200: it starts at 8000, its end kept. */
	sp = span(11200, 5000, true, 2000, 3000, 8000, true);
	ck_assert_int_eq(sp.start, 8000);
	ck_assert_int_eq(sp.end, 10000);
	ck_assert_int_eq(sp.how, GPU_SPAN_CLAMPED_START);
	/* ... and ends before 8000 too: both moved, never a negative duration. */
	sp = span(8200, 5000, true, 2000, 3000, 9000, true);
	ck_assert_int_eq(sp.start, 9000);
	ck_assert_int_eq(sp.end, 9000);
	ck_assert_int_eq(sp.how, GPU_SPAN_CLAMPED_START | GPU_SPAN_CLAMPED_END);
	/* A START a gap before its END: a piece of length 0, which is what the events say,
	 * nothing moved. */
	sp = span(10000, 7600, true, 2000, 3000, 0, false);
	ck_assert_int_eq(sp.start, 8800);
	ck_assert_int_eq(sp.end, 8800);
	ck_assert_int_eq(sp.how, 0);
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
	tcase_add_test(tc, test_span_clamped);
	tcase_add_test(tc, test_median);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
