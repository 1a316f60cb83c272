/* test_collwait.c: NCCL collectives matched across ranks and the time waiting in them
 * (collwait.h): the k-th of a name per rank, the last to arrive, early ends, unmatched kernels,
 * ranks from process records. */
#include <check.h>
#include <string.h>

#include "check_main.h"
#include "collwait.h"
#include "parse.h"

/* Feeds w the lines of a trace (each parsed as the tools' reader would). */
static void
feed(struct cut_collwait *w, const char *const *lines)
{
	struct cut_parser *p = cut_parser_new();
	char buf[1024], why[256];
	for (; *lines; lines++) {
		struct cut_event ev;
		size_t n = strlen(*lines);
		ck_assert_uint_lt(n, sizeof(buf));
		memcpy(buf, *lines, n + 1);
		ck_assert_int_eq(cut_parse(p, buf, n, &ev, CUT_PARSE_AUTO, why, sizeof(why)),
		                 CUT_PARSE_EVENT);
		collwait_add(w, &ev);
	}
	cut_parser_free(p);
}

#define K(ts, dur, rank, name, stream)                                                             \
	"{\"ts\":" #ts ",\"dur\":" #dur ",\"rank\":" #rank ",\"pid\":1" #rank                      \
	",\"tid\":1,\"layer\":\"gpu\",\"name\":\"" name "\",\"cat\":\"kernel\","                   \
	"\"args\":{\"stream\":\"" stream "\"}}"

START_TEST(test_match)
{
	/* all-reduce 0: rank 1 last by 30; 1: rank 0 last by 50; broadcast: rank 0 ends before
	 * rank 1 starts (early); a kernel of rank 1 beyond rank 0's count is unmatched; a plain
	 * kernel is not a collective */
	static const char *const lines[] = {
	    K(100, 80, 0, "ncclDevKernel_AllReduce", "0x1"),
	    K(130, 50, 1, "ncclDevKernel_AllReduce", "0x2"),
	    K(200, 10, 0, "ncclDevKernel_Broadcast", "0x1"),
	    K(300, 70, 1, "ncclDevKernel_AllReduce", "0x2"),
	    K(350, 20, 0, "ncclDevKernel_AllReduce", "0x1"),
	    K(400, 10, 1, "ncclDevKernel_Broadcast", "0x2"),
	    K(500, 10, 1, "ncclDevKernel_AllReduce", "0x3"),
	    K(600, 10, 1, "gemm", "0x2"),
	    NULL,
	};
	struct cut_collwait *w = collwait_new();
	feed(w, lines);
	collwait_finish(w);
	ck_assert_int_eq(w->instances, 3);
	ck_assert_int_eq(w->unmatched, 1);
	ck_assert_int_eq(w->unranked, 0);
	ck_assert_uint_eq(w->nranks, 2);
	const struct cut_collwait_rank *r0 = &w->ranks[0], *r1 = &w->ranks[1];
	ck_assert_int_eq(r0->rank, 0);
	ck_assert_int_eq(r0->collectives, 3);
	ck_assert_int_eq(r0->in_ns, 80 + 10 + 20);
	ck_assert_int_eq(r0->wait_ns, 30);
	ck_assert_int_eq(r0->last, 1);
	ck_assert_int_eq(r0->early, 1);
	ck_assert_int_eq(r0->unmatched, 0);
	ck_assert_int_eq(r0->streams, 1);
	ck_assert_int_eq(r0->most, 1);
	ck_assert_int_eq(r1->rank, 1);
	ck_assert_int_eq(r1->in_ns, 50 + 70 + 10);
	ck_assert_int_eq(r1->wait_ns, 50);
	ck_assert_int_eq(r1->last, 2);
	ck_assert_int_eq(r1->unmatched, 1);
	ck_assert_int_eq(r1->streams, 2);
	ck_assert_int_eq(r1->most, 0);
	ck_assert_uint_eq(w->npairs, 2);
	ck_assert_int_eq(w->pairs[0].rank, 0);
	ck_assert_int_eq(w->pairs[0].waited_for, 1);
	ck_assert_int_eq(w->pairs[0].count, 1);
	ck_assert_int_eq(w->pairs[0].wait_ns, 30);
	ck_assert_int_eq(w->pairs[1].rank, 1);
	ck_assert_int_eq(w->pairs[1].count, 1);
	ck_assert_int_eq(w->pairs[1].wait_ns, 50);
	collwait_free(w);
}
END_TEST

START_TEST(test_rule)
{
	/* NCCL's kernels by their real, mangled names; PyTorch's c10d::nccl_extension kernels
	 * (device-initiated puts and gets) hold "nccl" but are not collectives of NCCL: they
	 * were counted as such, and here, one more on rank 1, as an unmatched one. */
#define AR "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE"
#define LSA "_ZN4c10d14nccl_extension14lsa_get_kernelEPPvimS1_m"
	static const char *const lines[] = {
	    K(100, 80, 0, AR, "0x1"),  K(130, 50, 1, AR, "0x2"),  K(200, 10, 0, LSA, "0x1"),
	    K(210, 10, 1, LSA, "0x2"), K(300, 10, 1, LSA, "0x2"), NULL,
	};
#undef AR
#undef LSA
	struct cut_collwait *w = collwait_new();
	feed(w, lines);
	collwait_finish(w);
	ck_assert_int_eq(w->instances, 1);
	ck_assert_int_eq(w->unmatched, 0);
	ck_assert_uint_eq(w->nranks, 2);
	ck_assert_int_eq(w->ranks[0].in_ns, 80);
	ck_assert_int_eq(w->ranks[0].wait_ns, 30);
	ck_assert_int_eq(w->ranks[1].in_ns, 50);
	collwait_free(w);
}
END_TEST

START_TEST(test_process_rank)
{
	/* kernels without a rank take their process record's (by host and pid); of a pid with no
	 * record, they are left out; a name some rank never ran is unmatched everywhere; equal
	 * starts: the lowest rank is last and nobody waited */
	static const char *const lines[] = {
	    "{\"ts\":1,\"host\":\"a\",\"pid\":7,\"tid\":7,\"layer\":\"meta\",\"name\":\"process\","
	    "\"args\":{\"comm\":\"python\",\"rank\":3}}",
	    "{\"ts\":1,\"host\":\"b\",\"pid\":7,\"tid\":7,\"layer\":\"meta\",\"name\":\"process\","
	    "\"args\":{\"comm\":\"python\",\"rank\":5}}",
	    "{\"ts\":10,\"dur\":5,\"host\":\"a\",\"pid\":7,\"tid\":7,\"layer\":\"gpu\","
	    "\"name\":\"ncclKernel_X\",\"cat\":\"kernel\",\"args\":{\"stream\":\"0x1\"}}",
	    "{\"ts\":10,\"dur\":9,\"host\":\"b\",\"pid\":7,\"tid\":7,\"layer\":\"gpu\","
	    "\"name\":\"ncclKernel_X\",\"cat\":\"kernel\",\"args\":{\"stream\":\"0x1\"}}",
	    "{\"ts\":20,\"dur\":9,\"host\":\"b\",\"pid\":7,\"tid\":7,\"layer\":\"gpu\","
	    "\"name\":\"ncclKernel_Y\",\"cat\":\"kernel\",\"args\":{\"stream\":\"0x1\"}}",
	    "{\"ts\":20,\"dur\":9,\"host\":\"c\",\"pid\":7,\"tid\":7,\"layer\":\"gpu\","
	    "\"name\":\"ncclKernel_Y\",\"cat\":\"kernel\",\"args\":{\"stream\":\"0x1\"}}",
	    NULL,
	};
	struct cut_collwait *w = collwait_new();
	feed(w, lines);
	collwait_finish(w);
	ck_assert_uint_eq(w->nranks, 2);
	ck_assert_int_eq(w->ranks[0].rank, 3);
	ck_assert_int_eq(w->ranks[1].rank, 5);
	ck_assert_int_eq(w->instances, 1);
	ck_assert_int_eq(w->ranks[0].last, 1);
	ck_assert_int_eq(w->ranks[1].wait_ns, 0);
	ck_assert_int_eq(w->ranks[1].unmatched, 1);
	ck_assert_int_eq(w->unmatched, 1);
	ck_assert_int_eq(w->unranked, 1);
	ck_assert_uint_eq(w->npairs, 0);
	ck_assert_int_eq(w->ranks[1].most, -1);
	collwait_free(w);
}
END_TEST

START_TEST(test_empty)
{
	struct cut_collwait *w = collwait_new();
	collwait_finish(w);
	ck_assert_uint_eq(w->nranks, 0);
	ck_assert_int_eq(w->instances, 0);
	collwait_free(w);
}
END_TEST

/* The one rule for "waited most" and "straggler": the largest and smallest total, ties to the
 * lowest rank whatever the order given; and collwait_finish names them from in_ns. */
START_TEST(test_pick)
{
	const struct cut_coll_total v[] = {{3, 50}, {1, 90}, {2, 10}, {0, 90}, {5, 10}};
	size_t most, least;
	collwait_pick(v, 5, &most, &least);
	ck_assert_int_eq(v[most].rank, 0);
	ck_assert_int_eq(v[least].rank, 2);
	collwait_pick(v, 1, &most, &least);
	ck_assert_uint_eq(most, 0);
	ck_assert_uint_eq(least, 0);

	static const char *const lines[] = {
	    K(100, 80, 0, "ncclDevKernel_AllReduce", "0x1"),
	    K(130, 50, 1, "ncclDevKernel_AllReduce", "0x2"),
	    NULL,
	};
	struct cut_collwait *w = collwait_new();
	feed(w, lines);
	collwait_finish(w);
	ck_assert_int_eq(w->most, 0);
	ck_assert_int_eq(w->straggler, 1);
	collwait_free(w);
	w = collwait_new();
	feed(w, lines + 1); /* one rank: no one waited */
	collwait_finish(w);
	ck_assert_int_eq(w->most, -1);
	ck_assert_int_eq(w->straggler, -1);
	collwait_free(w);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("collwait");
	TCase *tc = tcase_create("collwait");
	tcase_add_test(tc, test_match);
	tcase_add_test(tc, test_rule);
	tcase_add_test(tc, test_process_rank);
	tcase_add_test(tc, test_empty);
	tcase_add_test(tc, test_pick);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
