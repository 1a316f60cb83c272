/* test_rankstats.c: cutstat's per-rank view (rankstats.h): busy time, top kernel, and the
 * NCCL kernels by the collective rule. */
#include <check.h>
#include <string.h>

#include "check_main.h"
#include "parse.h"
#include "rankstats.h"

#define AR "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE"
#define LSA "_ZN4c10d14nccl_extension14lsa_get_kernelEPPvimS1_m"
#define K(ts, dur, rank, name)                                                                     \
	"{\"ts\":" #ts ",\"dur\":" #dur ",\"rank\":" #rank ",\"pid\":1" #rank                      \
	",\"tid\":1,\"layer\":\"gpu\",\"name\":\"" name "\",\"cat\":\"kernel\"}"

START_TEST(test_collectives)
{
	/* The all-reduce, mangled as real traces have it, is the one NCCL kernel; PyTorch's
	 * c10d::nccl_extension kernels hold "nccl" but are not NCCL's (they were counted, and
	 * rank 1's, the larger, made it the top of the table). */
	static const char *const lines[] = {
	    K(100, 80, 0, AR), K(130, 50, 1, AR), K(200, 10, 0, LSA), K(210, 300, 1, LSA), NULL,
	};
	struct cut_rank_stats *s = rankstats_new();
	struct cut_parser *p = cut_parser_new();
	char buf[1024], why[256];
	for (const char *const *l = lines; *l; l++) {
		struct cut_event ev;
		size_t n = strlen(*l);
		ck_assert_uint_lt(n, sizeof(buf));
		memcpy(buf, *l, n + 1);
		ck_assert_int_eq(cut_parse(p, buf, n, &ev, CUT_PARSE_AUTO, why, sizeof(why)),
		                 CUT_PARSE_EVENT);
		rankstats_add(s, &ev);
	}
	cut_parser_free(p);
	rankstats_finish(s);
	ck_assert_uint_eq(s->nrows, 2);
	ck_assert_uint_eq(s->nnccl, 1);
	ck_assert_str_eq(s->nccl[0].name, AR);
	ck_assert_int_eq(s->nccl[0].ranks, 2);
	ck_assert_int_eq(s->nccl[0].max, 80);
	ck_assert_int_eq(s->nccl[0].rank, 0);
	ck_assert_int_eq(s->nccl[0].min, 50);
	ck_assert_int_eq(s->nccl[0].least, 1);
	ck_assert_str_eq(s->rows[1].top_kernel, LSA);
	rankstats_free(s);
}
END_TEST

static Suite *
rankstats_suite(void)
{
	Suite *s = suite_create("rankstats");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, test_collectives);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return run_suite(rankstats_suite());
}
