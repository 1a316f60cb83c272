/* test_gpushare.c: GPU work of processes time-slicing one device (gpushare.h): nesting,
 * chains, ties, pieces the rule leaves alone, any input order, and on random pieces the
 * promises: no two processes' pieces overlap (share time) on a device afterwards, starts only move
 * later and never past their ends, and a second pass changes nothing. */
#include <check.h>
#include <stdlib.h>

#include "check_main.h"
#include "gpushare.h"

#define P(s, e, dev, proc)                                                                         \
	{                                                                                          \
		(s), (e), (dev), (proc), -1                                                        \
	}

START_TEST(test_nested)
{
	/* Process 2's piece inside process 1's: 1 waited for 2's turn, its start moves to 2's
	 * end; 2's is left alone. */
	struct cut_gpu_piece p[] = {P(100, 1000, 0, 1), P(300, 500, 0, 2)};
	ck_assert_uint_eq(cut_gpu_resolve(p, 2), 1);
	ck_assert_int_eq(p[0].resolved, 500);
	ck_assert_int_eq(p[1].resolved, 300);
}
END_TEST

START_TEST(test_chain_of_three)
{
	/* Three processes, each piece starting before the one before it ended: each start moves
	 * to the end before it, in order of end whatever the order given. */
	struct cut_gpu_piece p[] = {P(250, 400, 0, 3), P(0, 200, 0, 1), P(100, 300, 0, 2)};
	ck_assert_uint_eq(cut_gpu_resolve(p, 3), 2);
	ck_assert_int_eq(p[1].resolved, 0);
	ck_assert_int_eq(p[2].resolved, 200);
	ck_assert_int_eq(p[0].resolved, 300);
}
END_TEST

START_TEST(test_chain_over_own)
{
	/* The latest end before a piece is its own process's: the latest of another's counts. */
	struct cut_gpu_piece p[] = {P(0, 100, 0, 2), P(50, 150, 0, 1), P(90, 200, 0, 1)};
	ck_assert_uint_eq(cut_gpu_resolve(p, 3), 2);
	ck_assert_int_eq(p[0].resolved, 0);
	ck_assert_int_eq(p[1].resolved, 100);
	ck_assert_int_eq(p[2].resolved, 100);
}
END_TEST

START_TEST(test_left_alone)
{
	/* One process's pieces overlap (two streams): as recorded. Two devices: as recorded.
	 * Touching ends are no overlap. */
	struct cut_gpu_piece p[] = {P(0, 100, 0, 1), P(50, 150, 0, 1), P(20, 120, 1, 2),
	                            P(150, 300, 0, 2)};
	ck_assert_uint_eq(cut_gpu_resolve(p, 4), 0);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(p[i].resolved, p[i].start);
}
END_TEST

START_TEST(test_covered)
{
	/* Pieces of two processes that end together: the shorter ran last, the longer moves to
	 * no length, and as no evidence it moves nothing after it. */
	struct cut_gpu_piece p[] = {P(0, 100, 0, 1), P(60, 100, 0, 2), P(80, 200, 0, 1)};
	ck_assert_uint_eq(cut_gpu_resolve(p, 3), 2);
	ck_assert_int_eq(p[1].resolved, 60);
	ck_assert_int_eq(p[0].resolved, 100);
	ck_assert_int_eq(p[2].resolved, 100);
	ck_assert_uint_eq(cut_gpu_resolve(p, 0), 0);
}
END_TEST

START_TEST(test_random)
{
	enum { N = 400 };
	static struct cut_gpu_piece p[N], q[N];
	srand(7);
	for (int round = 0; round < 50; round++) {
		for (int i = 0; i < N; i++) {
			int64_t s = rand() % 100000, d = rand() % 3 ? rand() % 500 : rand() % 20000;
			p[i] = (struct cut_gpu_piece)P(s, s + d, (uint64_t)(rand() % 3),
			                               (uint64_t)(rand() % 4));
		}
		cut_gpu_resolve(p, N);
		for (int i = 0; i < N; i++) {
			ck_assert_int_ge(p[i].resolved, p[i].start);
			ck_assert_int_le(p[i].resolved, p[i].end);
			q[i] = p[i];
			q[i].start = p[i].resolved;
		}
		for (int i = 0; i < N; i++)
			for (int j = 0; j < N; j++)
				if (q[i].device == q[j].device && q[i].proc != q[j].proc)
					ck_assert_msg(
					    (q[i].start > q[j].start ? q[i].start : q[j].start) >=
					        (q[i].end < q[j].end ? q[i].end : q[j].end),
					    "[%lld,%lld] and [%lld,%lld] overlap",
					    (long long)q[i].start, (long long)q[i].end,
					    (long long)q[j].start, (long long)q[j].end);
		ck_assert_uint_eq(cut_gpu_resolve(q, N), 0);
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
	tcase_add_test(tc, test_covered);
	tcase_add_test(tc, test_random);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return run_suite(gpushare_suite());
}
