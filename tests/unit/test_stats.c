/* test_stats.c: cutstat's per-function numbers (stats.h): the ioctls inside each call, counted
 * as cutmerge counts them where the trace did not go through it. */
#include <check.h>
#include <string.h>

#include "check_main.h"
#include "parse.h"
#include "stats.h"

#define CALL(ts, dur, tid, layer, name)                                                            \
	"{\"ts\":" #ts ",\"dur\":" #dur ",\"pid\":1,\"tid\":" #tid ",\"layer\":\"" layer           \
	"\",\"name\":\"" name "\"}"
#define IOCTL(ts, dur, tid)                                                                        \
	"{\"ts\":" #ts ",\"dur\":" #dur ",\"pid\":1,\"tid\":" #tid                                 \
	",\"layer\":\"ioctl\",\"name\":\"NV_ESC_RM_CONTROL\",\"args\":{\"cmd\":\"0xc020462a\"}}"

/* Feeds lines to an api and a runtime accumulator as cutstat does, and finishes both; a line
 * NEXT starts another input. */
#define NEXT "next"
static void
feed(const char *const *lines, struct cut_stats *api, struct cut_stats *rt)
{
	struct cut_parser *p = cut_parser_new();
	char buf[1024], why[256];
	for (const char *const *l = lines; *l; l++) {
		struct cut_event ev;
		if (strcmp(*l, NEXT) == 0) {
			stats_next_input(api);
			stats_next_input(rt);
			continue;
		}
		size_t n = strlen(*l);
		ck_assert_uint_lt(n, sizeof(buf));
		memcpy(buf, *l, n + 1);
		ck_assert_int_eq(cut_parse(p, buf, n, &ev, CUT_PARSE_AUTO, why, sizeof(why)),
		                 CUT_PARSE_EVENT);
		stats_add(api, &ev);
		if (ev.layer == CUT_RUNTIME)
			stats_add(rt, &ev);
		else
			stats_ioctl(rt, &ev);
	}
	cut_parser_free(p);
	stats_finish(api);
	stats_finish(rt);
}

static const struct cut_fn_stat *
fn(const struct cut_stats *st, const char *name)
{
	for (size_t i = 0; i < st->nfns; i++)
		if (strcmp(st->fns[i].name, name) == 0)
			return &st->fns[i];
	ck_abort_msg("no function %s", name);
	return NULL;
}

START_TEST(test_ioctls_in_calls)
{
	/* A runtime call holding two driver calls; the ioctls count in the innermost driver call
	 * around them and in the runtime call; one on another thread at the same time, one
	 * between the driver calls and one without "cmd" (an mmap) count in no driver call. */
	static const char *const lines[] = {
	    CALL(100, 1000, 1, "runtime", "cudaMalloc"),
	    CALL(110, 400, 1, "api", "cuMemAlloc_v2"),
	    IOCTL(120, 50, 1),
	    IOCTL(130, 30, 2),
	    IOCTL(200, 70, 1),
	    IOCTL(520, 5, 1),
	    "{\"ts\":530,\"dur\":9,\"pid\":1,\"tid\":1,\"layer\":\"ioctl\",\"name\":\"mmap\","
	    "\"args\":{\"len\":4096}}",
	    CALL(600, 300, 1, "api", "cuCtxSynchronize"),
	    IOCTL(700, 100, 1),
	    CALL(900, 10, 1, "api", "cuCtxGetCurrent"),
	    IOCTL(2000, 100, 1),
	    NULL,
	};
	struct cut_stats *api = stats_new(0), *rt = stats_new_layer(0, CUT_RUNTIME);
	feed(lines, api, rt);
	ck_assert(api->have_nioctl);
	ck_assert(!api->ioctls_unsorted);
	ck_assert_int_eq(fn(api, "cuMemAlloc_v2")->ioctls, 2);
	ck_assert_int_eq(fn(api, "cuMemAlloc_v2")->ioctl_ns, 120);
	ck_assert_int_eq(fn(api, "cuCtxSynchronize")->ioctls, 1);
	ck_assert_int_eq(fn(api, "cuCtxSynchronize")->ioctl_ns, 100);
	ck_assert_int_eq(fn(api, "cuCtxGetCurrent")->ioctls, 0); /* (it ends at 910) */
	ck_assert(rt->have_nioctl);
	ck_assert_int_eq(fn(rt, "cudaMalloc")->ioctls, 4);
	ck_assert_int_eq(fn(rt, "cudaMalloc")->ioctl_ns, 225);
	stats_free(api);
	stats_free(rt);
}
END_TEST

START_TEST(test_counted_by_cutmerge)
{
	/* A call cutmerge counted keeps its count: the ioctl inside it is not counted twice; a
	 * call it did not count (written before its ioctls were known) gets it here. */
	static const char *const lines[] = {
	    "{\"ts\":100,\"dur\":500,\"pid\":1,\"tid\":1,\"layer\":\"api\",\"name\":\"cuInit\","
	    "\"id\":1,\"nioctl\":3,\"ioctl_ns\":90}",
	    IOCTL(200, 30, 1),
	    CALL(700, 100, 1, "api", "cuInit"),
	    IOCTL(710, 20, 1),
	    NULL,
	};
	struct cut_stats *api = stats_new(0), *rt = stats_new_layer(0, CUT_RUNTIME);
	feed(lines, api, rt);
	ck_assert(api->have_nioctl);
	ck_assert_int_eq(fn(api, "cuInit")->ioctls, 4);
	ck_assert_int_eq(fn(api, "cuInit")->ioctl_ns, 110);
	ck_assert(!rt->have_nioctl);
	stats_free(api);
	stats_free(rt);
}
END_TEST

START_TEST(test_out_of_order)
{
	/* Out of order, the calls around an ioctl cannot be known as it comes: nothing is
	 * counted, and the accumulator says why (cutstat then says to sort it with cutmerge). */
	static const char *const lines[] = {
	    CALL(100, 500, 1, "api", "cuInit"),
	    IOCTL(200, 30, 1),
	    CALL(50, 10, 1, "api", "cuDriverGetVersion"),
	    IOCTL(300, 30, 1),
	    NULL,
	};
	struct cut_stats *api = stats_new(0), *rt = stats_new_layer(0, CUT_RUNTIME);
	feed(lines, api, rt);
	ck_assert(!api->have_nioctl);
	ck_assert(api->ioctls_unsorted);
	ck_assert_int_eq(fn(api, "cuInit")->ioctls, 0);
	ck_assert(!rt->ioctls_unsorted); /* (no runtime call) */
	stats_free(api);
	stats_free(rt);
}
END_TEST

START_TEST(test_inputs)
{
	/* Two files of two processes, each in order, the second starting earlier: counted. */
	static const char *const lines[] = {
	    CALL(100, 500, 1, "api", "cuInit"), IOCTL(200, 30, 1), NEXT,
	    CALL(50, 100, 2, "api", "cuInit"),  IOCTL(60, 10, 2),  NULL,
	};
	struct cut_stats *api = stats_new(0), *rt = stats_new_layer(0, CUT_RUNTIME);
	feed(lines, api, rt);
	ck_assert(!api->ioctls_unsorted);
	ck_assert(api->have_nioctl);
	ck_assert_int_eq(fn(api, "cuInit")->ioctls, 2);
	ck_assert_int_eq(fn(api, "cuInit")->ioctl_ns, 40);
	stats_free(api);
	stats_free(rt);
}
END_TEST

START_TEST(test_no_ioctls)
{
	/* Calls without the ioctl layer: counted, none found; no claim of unsorted ioctls. */
	static const char *const lines[] = {
	    CALL(100, 500, 1, "api", "cuInit"),
	    CALL(50, 10, 1, "api", "cuDriverGetVersion"),
	    NULL,
	};
	struct cut_stats *api = stats_new(0), *rt = stats_new_layer(0, CUT_RUNTIME);
	feed(lines, api, rt);
	ck_assert(!api->ioctls_unsorted);
	ck_assert_int_eq(fn(api, "cuInit")->ioctls, 0);
	stats_free(api);
	stats_free(rt);
}
END_TEST

static Suite *
stats_suite(void)
{
	Suite *s = suite_create("stats");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, test_ioctls_in_calls);
	tcase_add_test(tc, test_counted_by_cutmerge);
	tcase_add_test(tc, test_out_of_order);
	tcase_add_test(tc, test_inputs);
	tcase_add_test(tc, test_no_ioctls);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return run_suite(stats_suite());
}
