/* test_procs.c: processes by pid and host, and the host and rank of records that lack them
 * (procs.h), whatever order the records that say them come in. */
#include <check.h>
#include <string.h>

#include "check_main.h"
#include "parse.h"
#include "procs.h"

/* The process of each line, in turn, into idx; lines end with NULL. */
static void
feed(struct cut_procs *p, const char *const *lines, size_t *idx)
{
	struct cut_parser *ps = cut_parser_new();
	char buf[1024], why[256];
	for (size_t i = 0; lines[i]; i++) {
		struct cut_event ev;
		size_t n = strlen(lines[i]);
		ck_assert_uint_lt(n, sizeof(buf));
		memcpy(buf, lines[i], n + 1);
		ck_assert_int_eq(cut_parse(ps, buf, n, &ev, CUT_PARSE_AUTO, why, sizeof(why)),
		                 CUT_PARSE_EVENT);
		idx[i] = cut_procs_of(p, &ev);
	}
	cut_parser_free(ps);
}

START_TEST(test_hostless_first)
{
	/* Records without host or rank before the ones that carry them, and after: one process,
	 * which takes the host and the rank of the first that says them. */
	static const char *const lines[] = {
	    "{\"ts\":1,\"pid\":7,\"tid\":7,\"layer\":\"runtime\",\"name\":\"cudaFree\",\"dur\":1}",
	    "{\"ts\":2,\"host\":\"a\",\"rank\":3,\"pid\":7,\"tid\":7,\"layer\":\"api\","
	    "\"name\":\"cuMemFree_v2\",\"dur\":1}",
	    "{\"ts\":3,\"pid\":7,\"tid\":8,\"layer\":\"nvtx\",\"name\":\"step\",\"dur\":1}", NULL};
	size_t idx[3];
	struct cut_procs *p = cut_procs_new();
	feed(p, lines, idx);
	ck_assert_uint_eq(cut_procs_count(p), 1);
	ck_assert_uint_eq(idx[0], 0);
	ck_assert_uint_eq(idx[1], 0);
	ck_assert_uint_eq(idx[2], 0);
	ck_assert_str_eq(cut_procs_host(p, 0), "a");
	ck_assert_int_eq(cut_procs_rank(p, 0), 3);
	ck_assert_str_eq(cut_procs_label(p, 0), "pid 7"); /* one host: not named */
	cut_procs_free(p);
}
END_TEST

START_TEST(test_two_hosts)
{
	/* pid 100 on two hosts: two processes, their ranks from their process records (which
	 * come after their first records); a record without host goes to the first met. */
	static const char *const lines[] = {
	    "{\"ts\":1,\"host\":\"a\",\"pid\":100,\"tid\":100,\"layer\":\"api\",\"name\":\"x\"}",
	    "{\"ts\":2,\"host\":\"b\",\"pid\":100,\"tid\":100,\"layer\":\"api\",\"name\":\"x\"}",
	    "{\"ts\":3,\"host\":\"b\",\"pid\":100,\"tid\":100,\"layer\":\"meta\","
	    "\"name\":\"process\",\"args\":{\"comm\":\"t\",\"rank\":1}}",
	    "{\"ts\":3,\"host\":\"a\",\"pid\":100,\"tid\":100,\"layer\":\"meta\","
	    "\"name\":\"process\",\"args\":{\"comm\":\"t\",\"rank\":0}}",
	    "{\"ts\":4,\"pid\":100,\"tid\":100,\"layer\":\"nvtx\",\"name\":\"x\",\"dur\":1}",
	    "{\"ts\":5,\"host\":\"b\",\"pid\":100,\"tid\":100,\"layer\":\"api\",\"name\":\"x\"}",
	    NULL};
	size_t idx[6];
	struct cut_procs *p = cut_procs_new();
	feed(p, lines, idx);
	ck_assert_uint_eq(cut_procs_count(p), 2);
	ck_assert_uint_eq(cut_procs_hosts(p), 2);
	ck_assert_uint_eq(idx[0], 0);
	ck_assert_uint_eq(idx[1], 1);
	ck_assert_uint_eq(idx[2], 1);
	ck_assert_uint_eq(idx[3], 0);
	ck_assert_uint_eq(idx[4], 0);
	ck_assert_uint_eq(idx[5], 1);
	ck_assert_int_eq(cut_procs_rank(p, 0), 0);
	ck_assert_int_eq(cut_procs_rank(p, 1), 1);
	ck_assert_int_eq(cut_procs_pid(p, 1), 100);
	ck_assert_str_eq(cut_procs_label(p, 1), "pid 100 on b");
	cut_procs_free(p);
}
END_TEST

START_TEST(test_header_host)
{
	/* A header names its process's host in its args; an envelope rank beats the process
	 * record's; a process of no rank says -1. */
	static const char *const lines[] = {
	    "{\"ts\":1,\"pid\":5,\"tid\":5,\"layer\":\"meta\",\"name\":\"header\","
	    "\"args\":{\"schema\":2,\"host\":\"gpu1\"}}",
	    "{\"ts\":1,\"pid\":5,\"tid\":5,\"layer\":\"meta\",\"name\":\"process\","
	    "\"args\":{\"comm\":\"t\",\"rank\":4}}",
	    "{\"ts\":2,\"rank\":2,\"pid\":5,\"tid\":5,\"layer\":\"api\",\"name\":\"x\"}",
	    "{\"ts\":2,\"pid\":6,\"tid\":6,\"layer\":\"api\",\"name\":\"x\"}", NULL};
	size_t idx[4];
	struct cut_procs *p = cut_procs_new();
	feed(p, lines, idx);
	ck_assert_uint_eq(cut_procs_count(p), 2);
	ck_assert_str_eq(cut_procs_host(p, idx[2]), "gpu1");
	ck_assert_int_eq(cut_procs_rank(p, idx[2]), 2);
	ck_assert_ptr_null(cut_procs_host(p, idx[3]));
	ck_assert_int_eq(cut_procs_rank(p, idx[3]), -1);
	cut_procs_free(p);
}
END_TEST

static Suite *
procs_suite(void)
{
	Suite *s = suite_create("procs");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, test_hostless_first);
	tcase_add_test(tc, test_two_hosts);
	tcase_add_test(tc, test_header_host);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return run_suite(procs_suite());
}
