/* test_order.c: cutcapture's reorder buffer (capture/order.c), fed synthetic records: handed
 * out by start time, ties in arrival order, held back until their time; long off-CPU periods
 * handed out in parts that the late record then continues. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "order.h"

static struct cc_hdr *
rec(uint16_t kind, uint64_t ts, uint64_t dur, uint32_t tid, uint32_t mark)
{
	struct cc_hdr *h = calloc(1, sizeof(*h));
	ck_assert_ptr_nonnull(h);
	h->kind = kind;
	h->ts = ts;
	h->dur = dur;
	h->pid = 1;
	h->tid = tid;
	h->cpu = mark; /* which record it is */
	h->size = sizeof(*h);
	return h;
}

START_TEST(test_sorted_and_stable)
{
	struct order o = {0};
	static const uint64_t ts[] = {50, 10, 40, 10, 30, 20, 10, 60};
	for (uint32_t i = 0; i < 8; i++)
		order_push(&o, rec(CC_EV_API, ts[i], 1, 7, i));
	ck_assert_uint_eq(order_pending(&o), 8);
	/* Nothing at or after upto comes out. */
	ck_assert_ptr_null(order_pop(&o, 10));
	static const uint32_t want[] = {1, 3, 6, 5, 4}; /* ts 10 (in arrival order), 20, 30 */
	for (size_t i = 0; i < 5; i++) {
		struct cc_hdr *h = order_pop(&o, 40);
		ck_assert_ptr_nonnull(h);
		ck_assert_uint_eq(h->cpu, want[i]);
		free(h);
	}
	ck_assert_ptr_null(order_pop(&o, 40));
	ck_assert_uint_eq(order_pending(&o), 3);
	order_free(&o); /* frees what is still held */
	ck_assert_uint_eq(order_pending(&o), 0);
}
END_TEST

START_TEST(test_many_random)
{
	struct order o = {0};
	srand(11);
	for (uint32_t i = 0; i < 20000; i++)
		order_push(&o, rec(CC_EV_API, (uint64_t)(rand() % 1000), 0, 1, i));
	uint64_t last_ts = 0, last_mark = 0;
	struct cc_hdr *h;
	size_t n = 0;
	while ((h = order_pop(&o, UINT64_MAX))) {
		ck_assert(h->ts > last_ts || (h->ts == last_ts && (n == 0 || h->cpu > last_mark)));
		last_ts = h->ts;
		last_mark = h->cpu;
		n++;
		free(h);
	}
	ck_assert_uint_eq(n, 20000);
	order_free(&o);
}
END_TEST

START_TEST(test_offcpu_parts)
{
	struct order o = {0};
	uint64_t part;
	const uint64_t s = 1000000000, age = 1000; /* off the CPU since s; parts after 1000 ns */
	/* Young: it holds the output back from its start. */
	ck_assert_uint_eq(order_offcpu_hold(&o, 9, s, s + 999, age, s + 500, &part), s);
	ck_assert_uint_eq(part, 0);
	/* Old enough: [s, s+1500) is due, and the thread holds back only from there. */
	ck_assert_uint_eq(order_offcpu_hold(&o, 9, s, s + 2000, age, s + 1500, &part), s + 1500);
	ck_assert_uint_eq(part, s);
	/* The rest is young again. */
	ck_assert_uint_eq(order_offcpu_hold(&o, 9, s, s + 2100, age, s + 1600, &part), s + 1500);
	ck_assert_uint_eq(part, 0);
	ck_assert_uint_eq(order_offcpu_hold(&o, 9, s, s + 2600, age, s + 2400, &part), s + 2400);
	ck_assert_uint_eq(part, s + 1500);
	/* Another thread is not affected; an off-CPU record of it arrives whole. */
	struct cc_hdr *other = rec(CC_EV_SCHED, s, 3000, 8, 1);
	order_offcpu_arrived(&o, other);
	ck_assert_uint_eq(other->ts, s);
	ck_assert_uint_eq(other->dur, 3000);
	free(other);
	/* The period's own record arrives: cut to what was not handed out. */
	struct cc_hdr *r = rec(CC_EV_SCHED, s, 3000, 9, 2);
	order_offcpu_arrived(&o, r);
	ck_assert_uint_eq(r->ts, s + 2400);
	ck_assert_uint_eq(r->dur, 600);
	/* ...and only once: the split is forgotten. */
	struct cc_hdr *again = rec(CC_EV_SCHED, s, 3000, 9, 3);
	order_offcpu_arrived(&o, again);
	ck_assert_uint_eq(again->ts, s);
	free(again);
	free(r);
	/* A upto not past what was handed out gives nothing. */
	ck_assert_uint_eq(order_offcpu_hold(&o, 5, s, s + 5000, age, s, &part), s);
	ck_assert_uint_eq(part, 0);
	order_free(&o);
}
END_TEST

START_TEST(test_offcpu_new_period)
{
	struct order o = {0};
	uint64_t part;
	const uint64_t s = 5000, age = 100;
	ck_assert_uint_eq(order_offcpu_hold(&o, 3, s, s + 200, age, s + 150, &part), s + 150);
	ck_assert_uint_eq(part, s);
	/* Its record was never seen (it ended unseen); a later period starts afresh. */
	const uint64_t s2 = 9000;
	ck_assert_uint_eq(order_offcpu_hold(&o, 3, s2, s2 + 50, age, s2 + 20, &part), s2);
	ck_assert_uint_eq(part, 0);
	ck_assert_uint_eq(order_offcpu_hold(&o, 3, s2, s2 + 300, age, s2 + 250, &part), s2 + 250);
	ck_assert_uint_eq(part, s2);
	struct cc_hdr *r = rec(CC_EV_SCHED, s2, 400, 3, 0);
	order_offcpu_arrived(&o, r);
	ck_assert_uint_eq(r->ts, s2 + 250);
	ck_assert_uint_eq(r->dur, 150);
	free(r);
	/* A record ending before the part handed out is left empty, not negative. */
	ck_assert_uint_eq(order_offcpu_hold(&o, 4, s, s + 900, age, s + 800, &part), s + 800);
	r = rec(CC_EV_SCHED, s, 500, 4, 0);
	order_offcpu_arrived(&o, r);
	ck_assert_uint_eq(r->ts, s + 800);
	ck_assert_uint_eq(r->dur, 0);
	free(r);
	order_free(&o);
}
END_TEST

/* The race seen under load: the thread woke (its period's record went into the ring) and left
 * the CPU again before the scan, which read the thread table before the ring. The record of
 * the first period, read after that scan, must still be cut to what was not handed out: it
 * used to arrive whole, 15 s behind the trace. */
START_TEST(test_offcpu_record_after_next_period)
{
	struct order o = {0};
	uint64_t part;
	const uint64_t s = 1000, age = 100;
	ck_assert_uint_eq(order_offcpu_hold(&o, 7, s, s + 300, age, s + 250, &part), s + 250);
	ck_assert_uint_eq(part, s);
	/* The scan sees the next period of the thread, still young. */
	const uint64_t s2 = s + 400;
	order_offcpu_sweep(&o);
	ck_assert_uint_eq(order_offcpu_hold(&o, 7, s2, s2 + 10, age, s2, &part), s2);
	ck_assert_uint_eq(part, 0);
	/* Then the ring gives the first period's record. */
	struct cc_hdr *r = rec(CC_EV_SCHED, s, 390, 7, 0);
	order_offcpu_arrived(&o, r);
	ck_assert_uint_eq(r->ts, s + 250);
	ck_assert_uint_eq(r->dur, 140);
	free(r);
	/* A period that ended unseen and whose record never came is forgotten by the next scan
	 * but one; the current period keeps its split. */
	ck_assert_uint_eq(order_offcpu_hold(&o, 7, s2, s2 + 300, age, s2 + 200, &part), s2 + 200);
	ck_assert_uint_eq(part, s2);
	const uint64_t s3 = s2 + 1000;
	ck_assert_uint_eq(order_offcpu_hold(&o, 7, s3, s3 + 10, age, s3, &part), s3);
	ck_assert_uint_eq(o.nsplits, 1);
	/* ...and counted: its rest is lost. */
	ck_assert_uint_eq(order_offcpu_sweep(&o), 1);
	ck_assert_uint_eq(o.nsplits, 0);
	ck_assert_uint_eq(order_offcpu_sweep(&o), 0);
	order_free(&o);
}
END_TEST

/* The thread table at the end, for test_offcpu_end: thread 2 still off since 2000. */
static bool
end_still_off(uint32_t tid, uint64_t off_ts, void *arg)
{
	ck_assert_ptr_eq(arg, &end_still_off);
	return tid == 2 && off_ts == 2000;
}

/* At the end: of the periods written in part, the one still going on is no loss, the one
 * whose record comes in the ring's last read is cut as ever, and the one whose record never
 * comes (its thread gone or back on the CPU) is counted. */
START_TEST(test_offcpu_end)
{
	struct order o = {0};
	uint64_t part;
	const uint64_t age = 100;
	for (uint32_t tid = 1; tid <= 3; tid++) {
		uint64_t s = tid * 1000;
		ck_assert_uint_eq(order_offcpu_hold(&o, tid, s, s + 300, age, s + 250, &part),
		                  s + 250);
		ck_assert_uint_eq(part, s);
	}
	order_offcpu_end(&o, end_still_off, (void *)&end_still_off);
	struct cc_hdr *r = rec(CC_EV_SCHED, 1000, 400, 1, 0);
	order_offcpu_arrived(&o, r);
	ck_assert_uint_eq(r->ts, 1250);
	ck_assert_uint_eq(r->dur, 150);
	free(r);
	ck_assert_uint_eq(order_offcpu_sweep(&o), 1); /* thread 3's */
	ck_assert_uint_eq(o.nsplits, 1);
	ck_assert_uint_eq(o.splits[0].tid, 2);
	order_free(&o);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("order");
	TCase *tc = tcase_create("order");
	tcase_add_test(tc, test_sorted_and_stable);
	tcase_add_test(tc, test_many_random);
	tcase_add_test(tc, test_offcpu_parts);
	tcase_add_test(tc, test_offcpu_new_period);
	tcase_add_test(tc, test_offcpu_record_after_next_period);
	tcase_add_test(tc, test_offcpu_end);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
