/* test_legacy.c: import of bpftrace-style and LD_PRELOAD-style begin/end traces. */
#include <check.h>
#include <string.h>

#include "check_main.h"
#include "event.h"
#include "parse.h"

struct run {
	struct cut_parser *p;
	char why[256];
	char line[1024];
};

static int
feed(struct run *r, const char *text, struct cut_event *ev)
{
	strcpy(r->line, text);
	return cut_parse(r->p, r->line, strlen(r->line), ev, CUT_PARSE_AUTO, r->why,
	                 sizeof(r->why));
}

START_TEST(test_bpftrace_pairs)
{
	struct run r = {.p = cut_parser_new()};
	struct cut_event ev;
	ck_assert_int_eq(feed(&r,
	                      "{\"event_id\":1,\"ts\":0.001,\"type\":\"userspace\",\"name\":"
	                      "\"cuInit\",\"phase\":\"B\"}",
	                      &ev),
	                 CUT_PARSE_NONE);
	ck_assert_int_eq(feed(&r,
	                      "{\"event_id\":2,\"ts\":0.0015,\"type\":\"kernel\",\"name\":\"rm_"
	                      "ioctl\",\"phase\":\"B\"}",
	                      &ev),
	                 CUT_PARSE_NONE);
	ck_assert_int_eq(feed(&r,
	                      "{\"event_id\":3,\"ts\":0.0017,\"type\":\"kernel\",\"name\":\"rm_"
	                      "ioctl\",\"phase\":\"E\"}",
	                      &ev),
	                 CUT_PARSE_EVENT);
	/* ms to ns: 0.0015 ms = 1500 ns, lasting 200 ns. */
	ck_assert_str_eq(ev.name, "rm_ioctl");
	ck_assert_int_eq(ev.layer, CUT_KERNEL);
	ck_assert_int_eq(ev.ts, 1500);
	ck_assert_int_eq(ev.dur, 200);
	ck_assert_int_eq(feed(&r,
	                      "{\"event_id\":4,\"ts\":0.003,\"type\":\"userspace\",\"name\":"
	                      "\"cuInit\",\"phase\":\"E\",\"duration_us\":2.5}",
	                      &ev),
	                 CUT_PARSE_EVENT);
	/* duration_us wins over the difference of the times. */
	ck_assert_str_eq(ev.name, "cuInit");
	ck_assert_int_eq(ev.layer, CUT_API);
	ck_assert_int_eq(ev.ts, 1000);
	ck_assert_int_eq(ev.dur, 2500);
	ck_assert(ev.has & CUT_HAS_DUR);
	ck_assert_str_eq(r.why, "");
	uint64_t line;
	ck_assert_int_eq(cut_parse_flush(r.p, &ev, &line), CUT_PARSE_NONE);
	cut_parser_free(r.p);
}
END_TEST

START_TEST(test_preload_pairs)
{
	struct run r = {.p = cut_parser_new()};
	struct cut_event ev;
	/* Two overlapping calls told apart only by op_id. */
	ck_assert_int_eq(feed(&r,
	                      "{\"ts\":0.001,\"op_id\":1,\"phase\":\"B\",\"name\":\"cuMemAlloc\","
	                      "\"details\":{\"size\":4000000}}",
	                      &ev),
	                 CUT_PARSE_NONE);
	ck_assert_int_eq(feed(&r,
	                      "{\"ts\":0.002,\"op_id\":2,\"phase\":\"B\",\"name\":\"cuMemAlloc\","
	                      "\"details\":{\"size\":8}}",
	                      &ev),
	                 CUT_PARSE_NONE);
	ck_assert_int_eq(
	    feed(&r,
	         "{\"ts\":0.005,\"op_id\":1,\"phase\":\"E\",\"name\":\"cuMemAlloc\",\"result\":0}",
	         &ev),
	    CUT_PARSE_EVENT);
	ck_assert_int_eq(ev.ts, 1000);
	ck_assert_int_eq(ev.dur, 4000);
	ck_assert_str_eq(ev.args, "{\"size\":4000000}");
	ck_assert(ev.has & CUT_HAS_RET);
	ck_assert_int_eq(ev.ret, 0);
	ck_assert_int_eq(
	    feed(&r, "{\"ts\":0.0065,\"op_id\":2,\"phase\":\"E\",\"name\":\"cuMemAlloc\"}", &ev),
	    CUT_PARSE_EVENT);
	ck_assert_int_eq(ev.ts, 2000);
	ck_assert_int_eq(ev.dur, 4500);
	ck_assert_str_eq(ev.args, "{\"size\":8}");
	cut_parser_free(r.p);
}
END_TEST

START_TEST(test_unmatched)
{
	struct run r = {.p = cut_parser_new()};
	struct cut_event ev;
	uint64_t line;
	/* An end alone with a duration is a whole span; without one, a reported instant. */
	ck_assert_int_eq(
	    feed(&r, "{\"ts\":0.010,\"phase\":\"E\",\"name\":\"cuLaunchKernel\",\"duration_us\":3}",
	         &ev),
	    CUT_PARSE_EVENT);
	ck_assert_int_eq(ev.ts, 7000);
	ck_assert_int_eq(ev.dur, 3000);
	ck_assert_str_eq(r.why, "");
	ck_assert_int_eq(
	    feed(&r, "{\"ts\":0.010,\"phase\":\"E\",\"name\":\"cuCtxSynchronize\"}", &ev),
	    CUT_PARSE_EVENT);
	ck_assert(!(ev.has & CUT_HAS_DUR));
	ck_assert_str_eq(r.why, "legacy end without begin: kept as an instant");
	/* An end before its begin is unusable. */
	ck_assert_int_eq(feed(&r, "{\"ts\":0.02,\"phase\":\"B\",\"name\":\"cuA\"}", &ev),
	                 CUT_PARSE_NONE);
	ck_assert_int_eq(feed(&r, "{\"ts\":0.01,\"phase\":\"E\",\"name\":\"cuA\"}", &ev),
	                 CUT_PARSE_ERROR);
	/* Begins never ended come back at the end, with their line. */
	ck_assert_int_eq(feed(&r, "{\"ts\":0.5,\"phase\":\"B\",\"name\":\"cuB\"}", &ev),
	                 CUT_PARSE_NONE);
	ck_assert_int_eq(cut_parse_flush(r.p, &ev, &line), CUT_PARSE_EVENT);
	ck_assert_str_eq(ev.name, "cuB");
	ck_assert_int_eq(ev.ts, 500000);
	ck_assert_uint_eq(line, 5);
	ck_assert_int_eq(cut_parse_flush(r.p, &ev, &line), CUT_PARSE_NONE);
	/* Unusable records. */
	ck_assert_int_eq(feed(&r, "{\"ts\":-1,\"phase\":\"B\",\"name\":\"cuB\"}", &ev),
	                 CUT_PARSE_ERROR);
	ck_assert_int_eq(feed(&r, "{\"ts\":1,\"phase\":\"Q\",\"name\":\"cuB\"}", &ev),
	                 CUT_PARSE_ERROR);
	ck_assert_str_eq(r.why, "legacy record with unknown \"phase\"");
	ck_assert_int_eq(
	    feed(&r, "{\"ts\":1,\"phase\":\"B\",\"type\":\"martian\",\"name\":\"cuB\"}", &ev),
	    CUT_PARSE_ERROR);
	cut_parser_free(r.p);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("legacy");
	TCase *tc = tcase_create("legacy");
	tcase_add_test(tc, test_bpftrace_pairs);
	tcase_add_test(tc, test_preload_pairs);
	tcase_add_test(tc, test_unmatched);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
