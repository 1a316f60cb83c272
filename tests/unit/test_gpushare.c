/* test_gpushare.c: GPU work of processes time-slicing one device (gpushare.h): nesting (a
 * container keeps its time around what it holds, or, started at its call, only what follows
 * it), chains, ties, pieces the rule leaves alone, any input order, and on random pieces the
 * promises: no two processes' time overlaps on a device afterwards, every piece keeps parts
 * of its own span, a device's busy time is what its pieces covered (none started at its
 * call), and the rule applied again to what was kept changes nothing. */
#include <check.h>
#include <stdarg.h>
#include <stdlib.h>

#include "check_main.h"
#include "gpushare.h"

#define P(s, e, dev, proc)                                                                         \
	{                                                                                          \
		(s), (e), (dev), (proc), false, -1, -1, 0, 0                                       \
	}
#define C(s, e, dev, proc)                                                                         \
	{                                                                                          \
		(s), (e), (dev), (proc), true, -1, -1, 0, 0                                        \
	}

static struct cut_gpu_span *parts;
static size_t nparts;

static size_t
resolve(struct cut_gpu_piece *p, size_t n)
{
	free(parts);
	return cut_gpu_resolve(p, n, &parts, &nparts);
}

/* Piece q kept exactly the parts given as s, e pairs, ending with -1. */
static void
kept(const struct cut_gpu_piece *q, ...)
{
	va_list ap;
	va_start(ap, q);
	size_t k = 0;
	int64_t total = 0;
	for (int64_t s; (s = va_arg(ap, int64_t)) >= 0; k++) {
		int64_t e = va_arg(ap, int64_t);
		ck_assert_uint_lt(k, q->nparts);
		ck_assert_int_eq(parts[q->first + k].s, s);
		ck_assert_int_eq(parts[q->first + k].e, e);
		total += e - s;
	}
	va_end(ap);
	ck_assert_uint_eq(q->nparts, k);
	ck_assert_int_eq(q->kept, total);
	ck_assert_int_eq(q->resolved, k ? parts[q->first].s : q->end);
}

#define END ((int64_t)-1)

START_TEST(test_nested)
{
	/* Process 2's piece inside process 1's: 1 keeps its time around it (a kernel preempted
	 * for 2's turn), or, started at its call, only what follows it (it waited for the turn). */
	struct cut_gpu_piece p[] = {P(100, 1000, 0, 1), P(300, 500, 0, 2)};
	ck_assert_uint_eq(resolve(p, 2), 1);
	kept(&p[0], (int64_t)100, (int64_t)300, (int64_t)500, (int64_t)1000, END);
	kept(&p[1], (int64_t)300, (int64_t)500, END);
	struct cut_gpu_piece c[] = {C(100, 1000, 0, 1), P(300, 500, 0, 2)};
	ck_assert_uint_eq(resolve(c, 2), 1);
	kept(&c[0], (int64_t)500, (int64_t)1000, END);
	kept(&c[1], (int64_t)300, (int64_t)500, END);
}
END_TEST

START_TEST(test_chain_of_three)
{
	/* Three processes, each piece starting before the one before it ended: each keeps the
	 * time after the end before it, whatever the order given. */
	struct cut_gpu_piece p[] = {P(250, 400, 0, 3), P(0, 200, 0, 1), P(100, 300, 0, 2)};
	ck_assert_uint_eq(resolve(p, 3), 2);
	kept(&p[1], (int64_t)0, (int64_t)200, END);
	kept(&p[2], (int64_t)200, (int64_t)300, END);
	kept(&p[0], (int64_t)300, (int64_t)400, END);
}
END_TEST

START_TEST(test_chain_over_own)
{
	/* Where another process's piece ends first, it ran; then all of process 1's pieces
	 * keep their time, overlapping as they were. */
	struct cut_gpu_piece p[] = {P(0, 100, 0, 2), P(50, 150, 0, 1), P(90, 200, 0, 1)};
	ck_assert_uint_eq(resolve(p, 3), 2);
	kept(&p[0], (int64_t)0, (int64_t)100, END);
	kept(&p[1], (int64_t)100, (int64_t)150, END);
	kept(&p[2], (int64_t)100, (int64_t)200, END);
	/* Started at their calls: the latest other end before each is 100, the same. */
	struct cut_gpu_piece c[] = {P(0, 100, 0, 2), C(50, 150, 0, 1), C(90, 200, 0, 1)};
	ck_assert_uint_eq(resolve(c, 3), 2);
	kept(&c[1], (int64_t)100, (int64_t)150, END);
	kept(&c[2], (int64_t)100, (int64_t)200, END);
}
END_TEST

START_TEST(test_left_alone)
{
	/* One process's pieces overlap (two streams): as recorded. Two devices: as recorded.
	 * Touching ends are no overlap; a piece of no length keeps none. */
	struct cut_gpu_piece p[] = {P(0, 100, 0, 1), C(50, 150, 0, 1), P(20, 120, 1, 2),
	                            C(150, 300, 0, 2), P(70, 70, 0, 2)};
	ck_assert_uint_eq(resolve(p, 5), 0);
	kept(&p[0], (int64_t)0, (int64_t)100, END);
	kept(&p[1], (int64_t)50, (int64_t)150, END);
	kept(&p[2], (int64_t)20, (int64_t)120, END);
	kept(&p[3], (int64_t)150, (int64_t)300, END);
	ck_assert_uint_eq(p[4].nparts, 0);
	ck_assert_int_eq(p[4].resolved, 70);
}
END_TEST

START_TEST(test_ties)
{
	/* Pieces of two processes that end together: the shorter ran last. Started at its call,
	 * the longer keeps nothing, and as no evidence moves nothing after it. */
	struct cut_gpu_piece p[] = {P(0, 100, 0, 1), P(60, 100, 0, 2), P(80, 200, 0, 1)};
	ck_assert_uint_eq(resolve(p, 3), 2);
	kept(&p[0], (int64_t)0, (int64_t)60, END);
	kept(&p[1], (int64_t)60, (int64_t)100, END);
	kept(&p[2], (int64_t)100, (int64_t)200, END);
	struct cut_gpu_piece c[] = {C(0, 100, 0, 1), P(60, 100, 0, 2), C(80, 200, 0, 1)};
	ck_assert_uint_eq(resolve(c, 3), 2);
	kept(&c[0], END);
	kept(&c[1], (int64_t)60, (int64_t)100, END);
	kept(&c[2], (int64_t)100, (int64_t)200, END);
	ck_assert_uint_eq(resolve(c, 0), 0);
	ck_assert_uint_eq(nparts, 0);
}
END_TEST

/* The time the spans [s, e) cover. */
static int
by_start(const void *a, const void *b)
{
	const struct cut_gpu_span *x = a, *y = b;
	return (x->s > y->s) - (x->s < y->s);
}

static int64_t
covered(struct cut_gpu_span *v, size_t n)
{
	qsort(v, n, sizeof(*v), by_start);
	int64_t t = 0, cs = 0, ce = 0;
	for (size_t i = 0; i < n; i++) {
		if (i == 0 || v[i].s > ce) {
			t += ce - cs;
			cs = v[i].s;
			ce = v[i].e;
		} else if (v[i].e > ce)
			ce = v[i].e;
	}
	return t + ce - cs;
}

START_TEST(test_random)
{
	enum { N = 250 };
	static struct cut_gpu_piece p[N], q[4 * N];
	static struct cut_gpu_span a[4 * N], b[4 * N];
	srand(7);
	for (int round = 0; round < 60; round++) {
		bool calls = round % 2;
		for (int i = 0; i < N; i++) {
			int64_t s = rand() % 100000, d = rand() % 3 ? rand() % 500 : rand() % 20000;
			p[i] = (struct cut_gpu_piece)P(s, s + d, (uint64_t)(rand() % 2),
			                               (uint64_t)(rand() % 4));
			p[i].from_call = calls && rand() % 2;
		}
		resolve(p, N);
		size_t nq = 0;
		for (int i = 0; i < N; i++) {
			if (p[i].kept > p[i].end - p[i].start)
				ck_abort_msg("piece %d kept more than its length", i);
			for (size_t k = p[i].first; k < p[i].first + p[i].nparts; k++) {
				if (parts[k].s < p[i].start || parts[k].e > p[i].end ||
				    parts[k].s >= parts[k].e)
					ck_abort_msg("piece %d: part [%lld,%lld] not in its span",
					             i, (long long)parts[k].s,
					             (long long)parts[k].e);
				q[nq++] = (struct cut_gpu_piece)P(parts[k].s, parts[k].e,
				                                  p[i].device, p[i].proc);
			}
		}
		/* (ck_assert in loops this long costs the forked runner a message each) */
		for (size_t i = 0; i < nq; i++)
			for (size_t j = 0; j < nq; j++)
				if (q[i].device == q[j].device && q[i].proc != q[j].proc &&
				    (q[i].start > q[j].start ? q[i].start : q[j].start) <
				        (q[i].end < q[j].end ? q[i].end : q[j].end))
					ck_abort_msg("[%lld,%lld] and [%lld,%lld] overlap",
					             (long long)q[i].start, (long long)q[i].end,
					             (long long)q[j].start, (long long)q[j].end);
		for (uint64_t dev = 0; !calls && dev < 2; dev++) {
			size_t na = 0, nb = 0;
			for (int i = 0; i < N; i++)
				if (p[i].device == dev && p[i].end > p[i].start)
					a[na++] = (struct cut_gpu_span){p[i].start, p[i].end};
			for (size_t i = 0; i < nq; i++)
				if (q[i].device == dev)
					b[nb++] = (struct cut_gpu_span){q[i].start, q[i].end};
			ck_assert_int_eq(covered(a, na), covered(b, nb));
		}
		ck_assert_uint_eq(resolve(q, nq), 0);
	}
}
END_TEST

static Suite *
gpushare_suite(void)
{
	Suite *s = suite_create("gpushare");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, test_nested);
	tcase_add_test(tc, test_chain_of_three);
	tcase_add_test(tc, test_chain_over_own);
	tcase_add_test(tc, test_left_alone);
	tcase_add_test(tc, test_ties);
	tcase_add_test(tc, test_random);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	int r = run_suite(gpushare_suite());
	free(parts);
	return r;
}
