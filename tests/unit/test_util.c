/* test_util.c: args member lookup, the string table, the byte buffer, and the statistics
 * (medians, standard deviation, top calls). */
#include <check.h>
#include <math.h>
#include <string.h>

#include "args.h"
#include "buf.h"
#include "check_main.h"
#include "stats.h"
#include "strtab.h"
#include "units.h"

START_TEST(test_args)
{
	const char *a = "{\"s\":\"a\\\"b\\u0041\",\"nested\":{\"bytes\":1,\"x\":[1,{\"y\":2}]},"
	                "\"bytes\":4096,\"ptr\":\"0x7f00\",\"neg\":-3,\"real\":1.5,\"dec\":\"12\"}";
	int64_t v;
	char s[16];
	ck_assert_int_eq(cut_args_int(a, "bytes", &v), 0);
	ck_assert_int_eq(v, 4096); /* the top-level one, not nested.bytes */
	ck_assert_int_eq(cut_args_int(a, "ptr", &v), 0);
	ck_assert_int_eq(v, 0x7f00);
	ck_assert_int_eq(cut_args_int(a, "neg", &v), 0);
	ck_assert_int_eq(v, -3);
	ck_assert_int_eq(cut_args_int(a, "dec", &v), 0);
	ck_assert_int_eq(v, 12);
	ck_assert_int_eq(cut_args_int(a, "real", &v), -1);
	ck_assert_int_eq(cut_args_int(a, "s", &v), -1);
	ck_assert_int_eq(cut_args_int(a, "missing", &v), -1);
	ck_assert_int_eq(cut_args_int(NULL, "bytes", &v), -1);
	/* the edges of int64 and of 64-bit handles */
	static const struct {
		const char *args;
		int rc;
		int64_t v;
	} ints[] = {
	    {"{\"x\":9223372036854775807}", 0, INT64_MAX},
	    {"{\"x\":-9223372036854775808}", 0, INT64_MIN},
	    {"{\"x\":9223372036854775808}", -1, 0},
	    {"{\"x\":-9223372036854775809}", -1, 0},
	    {"{\"x\":99999999999999999999}", -1, 0},
	    {"{\"x\":-0}", 0, 0},
	    {"{\"x\":1e3}", -1, 0},
	    {"{\"x\":-}", -1, 0},
	    {"{\"x\":\"0xffffffffffffffff\"}", 0, -1},
	    {"{\"x\":\"0XaBcD\"}", 0, 0xabcd},
	    {"{\"x\":\"0x10000000000000000\"}", -1, 0},
	    {"{\"x\":\"0x\"}", -1, 0},
	    {"{\"x\":\"0x12g\"}", -1, 0},
	    {"{\"x\":\"18446744073709551615\"}", 0, -1},
	    {"{\"x\":\"18446744073709551616\"}", -1, 0},
	    {"{\"x\":\"-1\"}", -1, 0},
	    {"{\"x\":\"\"}", -1, 0},
	    {"{\"x\":\"12ab\"}", -1, 0},
	    {"{\"x\":true}", -1, 0},
	};
	for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
		v = 42;
		ck_assert_msg(cut_args_int(ints[i].args, "x", &v) == ints[i].rc, "%s",
		              ints[i].args);
		if (ints[i].rc == 0)
			ck_assert_msg(v == ints[i].v, "%s read as %lld", ints[i].args,
			              (long long)v);
	}
	ck_assert_int_eq(cut_args_str(a, "s", s, sizeof(s)), 4);
	ck_assert_str_eq(s, "a\"bA");
	ck_assert_int_eq(cut_args_str(a, "s", s, 3), 4); /* truncated, full length returned */
	ck_assert_str_eq(s, "a\"");
	ck_assert_int_eq(cut_args_str(a, "bytes", s, sizeof(s)), -1);
	/* \u escapes as UTF-8: one byte, two, a surrogate pair (four), a lone surrogate (U+FFFD) */
	ck_assert_int_eq(
	    cut_args_str("{\"s\":\"\\u0041\\u00e9\\ud83d\\ude00\\ud800x\"}", "s", s, sizeof(s)),
	    1 + 2 + 4 + 3 + 1);
	ck_assert_str_eq(s, "A\xc3\xa9\xf0\x9f\x98\x80\xef\xbf\xbdx");
	ck_assert_ptr_null(cut_args_find("{}", "x"));
	ck_assert_ptr_nonnull(cut_args_find("{ \"x\" : 1 }", "x"));
}
END_TEST

/* The members in turn, nested values skipped whole, and the end. */
START_TEST(test_args_next)
{
	const char *a =
	    "{ \"s\":\"a,\\\"}\" , \"nested\":{\"ptr\":\"0x1\"},\"ptr\":\"0x7f00\",\"n\":[1,2]}";
	static const char *const keys[] = {"s", "nested", "ptr", "n"};
	const char *key, *val, *p = a;
	size_t klen, n = 0;
	int64_t v;
	while ((p = cut_args_next(p, &key, &klen, &val))) {
		ck_assert_uint_lt(n, 4);
		ck_assert_uint_eq(klen, strlen(keys[n]));
		ck_assert(memcmp(key, keys[n], klen) == 0);
		ck_assert_int_eq(cut_args_int_at(val, &v), n == 2 ? 0 : -1);
		n++;
	}
	ck_assert_uint_eq(n, 4);
	ck_assert_int_eq(cut_args_int_at(cut_args_find(a, "ptr"), &v), 0);
	ck_assert_int_eq(v, 0x7f00);
	ck_assert_ptr_null(cut_args_next("{}", &key, &klen, &val));
	ck_assert_ptr_null(cut_args_next(NULL, &key, &klen, &val));
	ck_assert_ptr_null(cut_args_next("[1]", &key, &klen, &val));
	ck_assert_int_eq(cut_args_int_at(NULL, &v), -1);
}
END_TEST

START_TEST(test_strtab)
{
	struct cut_strtab *t = strtab_new();
	char key[32];
	for (int i = 0; i < 5000; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		ck_assert_uint_eq(strtab_intern(t, key), (size_t)i);
	}
	ck_assert_uint_eq(strtab_intern(t, "k42"), 42);
	ck_assert_uint_eq(strtab_find(t, "k4999"), 4999);
	ck_assert_uint_eq(strtab_find(t, "nope"), (size_t)-1);
	ck_assert_str_eq(strtab_key(t, 7), "k7");
	ck_assert_uint_eq(strtab_len(t), 5000);
	strtab_free(t);
}
END_TEST

START_TEST(test_buf)
{
	struct cut_buf b = {0};
	buf_addi64(&b, INT64_MIN);
	buf_addc(&b, ' ');
	buf_addi64(&b, 0);
	buf_addf(&b, " %s", "x");
	ck_assert_str_eq(b.s, "-9223372036854775808 0 x");
	buf_reset(&b);
	buf_addjstr(&b, "\xe2\x82", 2); /* a cut UTF-8 sequence */
	ck_assert_str_eq(b.s, "\"\\ufffd\\ufffd\"");
	buf_free(&b);
}
END_TEST

START_TEST(test_units)
{
	char b[32];
	ck_assert_int_eq(cut_parse_duration("1500"), 1500);
	ck_assert_int_eq(cut_parse_duration("1500ns"), 1500);
	ck_assert_int_eq(cut_parse_duration("2.5us"), 2500);
	ck_assert_int_eq(cut_parse_duration("10ms"), 10000000);
	ck_assert_int_eq(cut_parse_duration("2s"), 2000000000);
	ck_assert_int_eq(cut_parse_duration("0"), 0);
	ck_assert_int_eq(cut_parse_duration("-1ms"), -1);
	ck_assert_int_eq(cut_parse_duration("ms"), -1);
	ck_assert_int_eq(cut_parse_duration("5 ms"), -1);
	ck_assert_int_eq(cut_parse_duration("3h"), -1);
	ck_assert_int_eq(cut_parse_duration("1e10s"), -1);
	ck_assert_int_eq(cut_parse_duration("nan"), -1);
	ck_assert_str_eq(cut_format_duration(812, b, sizeof(b)), "812 ns");
	ck_assert_str_eq(cut_format_duration(4000, b, sizeof(b)), "4.000 us");
	ck_assert_str_eq(cut_format_duration(1250000, b, sizeof(b)), "1.250 ms");
	ck_assert_str_eq(cut_format_duration(3078000000.0, b, sizeof(b)), "3.078 s");
}
END_TEST

START_TEST(test_buf_members)
{
	struct cut_buf b = {0};
	buf_addkv_str(&b, "a", "x\"y");
	buf_addkey(&b, "o");
	buf_addc(&b, '{');
	buf_addkv_int(&b, "n", -3);
	buf_adds(&b, "}}");
	ck_assert_str_eq(b.s, "{\"a\":\"x\\\"y\",\"o\":{\"n\":-3}}");
	buf_free(&b);
}
END_TEST

static void
add_api(struct cut_stats *st, const char *name, int64_t ts, int64_t dur, const char *args)
{
	struct cut_event ev;
	cut_event_init(&ev);
	ev.ts = ts;
	ev.dur = dur;
	ev.has = CUT_HAS_DUR;
	ev.pid = ev.tid = 1;
	ev.layer = CUT_API;
	ev.name = name;
	ev.args = args;
	stats_add(st, &ev);
}

START_TEST(test_stats)
{
	struct cut_stats *st = stats_new(2);
	/* cuA: 10, 40, 20, 30 -> median 25, mean 25, sample stddev sqrt(500/3). */
	add_api(st, "cuA", 0, 10, NULL);
	add_api(st, "cuA", 100, 40, NULL);
	add_api(st, "cuA", 200, 20, NULL);
	add_api(st, "cuA", 300, 30, NULL);
	/* cuMemcpyHtoD_v2: one of 5: median 5, 1000 bytes. */
	add_api(st, "cuMemcpyHtoD_v2", 400, 5, "{\"bytes\":1000}");
	add_api(st, "cuMemcpyAsync", 500, 50, "{\"bytes\":10,\"dir\":\"DtoH\"}");
	stats_finish(st);
	ck_assert_uint_eq(st->nfns, 3);
	ck_assert_str_eq(st->fns[0].name, "cuA"); /* 100 ns in all, the most */
	ck_assert_int_eq(st->fns[0].calls, 4);
	ck_assert(st->fns[0].med == 25.0);
	ck_assert(fabs(st->fns[0].stddev - sqrt(500.0 / 3)) < 1e-9);
	ck_assert_int_eq(st->fns[0].min, 10);
	ck_assert_int_eq(st->fns[0].max, 40);
	ck_assert_int_eq(st->xfer_bytes[CUT_X_HTOD], 1000);
	ck_assert_int_eq(st->xfer_bytes[CUT_X_DTOH], 10);
	ck_assert_int_eq(st->first, 0);
	ck_assert_int_eq(st->last, 550);
	ck_assert_int_eq(st->api_total, 155);
	ck_assert_uint_eq(st->nslow, 2);
	ck_assert_int_eq(st->slow[0].dur, 50);
	ck_assert_int_eq(st->slow[1].dur, 40);
	stats_free(st);
}
END_TEST

START_TEST(test_slowest)
{
	/* 2000 calls, durations (i * 7919) % 1000 / 4 (each of 0..249 eight times): the 20
	 * longest are the eight of 249, the eight of 248 and four of the eight of 247; longest
	 * first, then by start. */
	struct cut_stats *st = stats_new(20);
	for (int i = 0; i < 2000; i++)
		add_api(st, "cuX", i, (i * 7919) % 1000 / 4, NULL);
	stats_finish(st);
	ck_assert_uint_eq(st->nslow, 20);
	for (size_t k = 0; k < 20; k++) {
		ck_assert_int_eq(st->slow[k].dur, k < 8 ? 249 : k < 16 ? 248 : 247);
		ck_assert_int_eq((st->slow[k].ts * 7919) % 1000 / 4, st->slow[k].dur);
		if (k > 0 && st->slow[k].dur == st->slow[k - 1].dur)
			ck_assert_int_lt(st->slow[k - 1].ts, st->slow[k].ts);
		ck_assert_str_eq(st->slow[k].name, "cuX");
	}
	stats_free(st);
	/* Freed unfinished, the calls kept go too (the sanitized run checks). */
	st = stats_new(3);
	for (int i = 0; i < 10; i++)
		add_api(st, "cuY", i, i, NULL);
	stats_free(st);
}
END_TEST

START_TEST(test_median_many)
{
	/* Medians of 1..n in shuffled order, odd and even n, with duplicates. */
	for (int n = 1; n <= 200; n++) {
		struct cut_stats *st = stats_new(0);
		for (int i = 0; i < n; i++)
			add_api(st, "cuX", i, (i * 7919) % n / 2, NULL);
		stats_finish(st);
		int64_t v[200];
		for (int i = 0; i < n; i++)
			v[i] = (i * 7919) % n / 2;
		for (int i = 1; i < n; i++) /* insertion sort: the reference */
			for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
				int64_t t = v[j];
				v[j] = v[j - 1];
				v[j - 1] = t;
			}
		double want = n % 2 ? (double)v[n / 2] : ((double)v[n / 2 - 1] + v[n / 2]) / 2;
		ck_assert_msg(st->fns[0].med == want, "n=%d: %f want %f", n, st->fns[0].med, want);
		stats_free(st);
	}
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("util");
	TCase *tc = tcase_create("util");
	tcase_add_test(tc, test_args);
	tcase_add_test(tc, test_args_next);
	tcase_add_test(tc, test_strtab);
	tcase_add_test(tc, test_buf);
	tcase_add_test(tc, test_units);
	tcase_add_test(tc, test_buf_members);
	tcase_add_test(tc, test_stats);
	tcase_add_test(tc, test_slowest);
	tcase_add_test(tc, test_median_many);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
