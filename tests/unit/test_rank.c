/* test_rank.c: a process's rank from the launcher variables of its environment (rank.h). */
#include <check.h>
#include <string.h>

#include "check_main.h"
#include "rank.h"

static struct cut_rank
from(const char *block, size_t len)
{
	struct cut_env_block b = {block, len};
	struct cut_rank r;
	cut_rank_read(&r, cut_env_block_get, &b);
	return r;
}

#define BLOCK(s) from(s, sizeof(s))

START_TEST(test_torchrun)
{
	struct cut_rank r = BLOCK("PATH=/bin\0RANK=3\0LOCAL_RANK=1\0WORLD_SIZE=8\0HOME=/");
	ck_assert_int_eq(r.rank, 3);
	ck_assert_int_eq(r.local_rank, 1);
	ck_assert_int_eq(r.world_size, 8);
}
END_TEST

START_TEST(test_order_and_others)
{
	/* the first variable of each list that holds a number wins, wherever it is */
	struct cut_rank r = BLOCK("SLURM_PROCID=9\0OMPI_COMM_WORLD_RANK=4\0SLURM_LOCALID=2\0"
	                          "PMI_SIZE=16\0OMPI_COMM_WORLD_SIZE=12");
	ck_assert_int_eq(r.rank, 4);
	ck_assert_int_eq(r.local_rank, 2);
	ck_assert_int_eq(r.world_size, 12);
	r = BLOCK("MPI_LOCALRANKID=5\0PMIX_RANK=7");
	ck_assert_int_eq(r.rank, 7);
	ck_assert_int_eq(r.local_rank, 5);
	ck_assert_int_eq(r.world_size, -1);
}
END_TEST

START_TEST(test_not_numbers)
{
	/* empty, signed, hex, spaces, too long: skipped for the next variable */
	struct cut_rank r = BLOCK("RANK=\0OMPI_COMM_WORLD_RANK=-1\0PMI_RANK=0x2\0PMIX_RANK= 3\0"
	                          "SLURM_PROCID=1234567890\0MV2_COMM_WORLD_RANK=0");
	ck_assert_int_eq(r.rank, 0);
	r = BLOCK("XRANK=1\0RANKS=2\0LOCAL_RANK=3");
	ck_assert_int_eq(r.rank, -1); /* names are whole: no XRANK, no RANKS */
	ck_assert_int_eq(r.local_rank, 3);
	struct cut_env_block b = {"RANK=1", 6};
	struct cut_rank none;
	ck_assert(!cut_rank_read(&none, cut_env_block_get, &(struct cut_env_block){"", 0}));
	ck_assert(cut_rank_read(&none, cut_env_block_get, &b)); /* the last string unterminated */
	ck_assert_int_eq(none.rank, 1);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("rank");
	TCase *tc = tcase_create("rank");
	tcase_add_test(tc, test_torchrun);
	tcase_add_test(tc, test_order_and_others);
	tcase_add_test(tc, test_not_numbers);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
