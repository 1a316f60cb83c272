/* test_summary.c: the summary's histograms built a duration at a time and merged as they are
 * built whole, its items read back as written and refused when they are not items, and the
 * NVTX ranges' histograms (cutstat -j's "nvtx" list). */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "event.h"
#include "nvtxstats.h"
#include "summarize.h"
#include "summary.h"

static const int64_t durs[] = {0, 1, 2, 3, 900, 1000, 1000, 1100, 123456789, 5, 7, INT64_MAX};
#define NDURS (sizeof(durs) / sizeof(durs[0]))

static int64_t
count_at(const struct cut_hist *h, int b)
{
	return b >= h->lo && b < h->hi ? h->counts[b - h->lo] : 0;
}

START_TEST(test_add_is_of)
{
	struct cut_hist whole, one = {0, 0, NULL};
	cut_hist_of(&whole, durs, NDURS);
	for (size_t i = 0; i < NDURS; i++)
		cut_hist_add(&one, durs[i]);
	for (int b = 0; b < CUT_HIST_N; b++)
		ck_assert_int_eq(count_at(&whole, b), count_at(&one, b));
	ck_assert_int_eq(one.lo, whole.lo);
	ck_assert_int_eq(one.hi, whole.hi);
	cut_hist_free(&whole);
	cut_hist_free(&one);
}
END_TEST

START_TEST(test_merge)
{
	static int64_t all[CUT_HIST_N];
	struct cut_hist h = {0, 0, NULL}, want;
	bool sat = false;
	cut_hist_of(&want, durs, NDURS);
	/* the first half as one, the second merged: the buckets widen both ways */
	cut_hist_of(&h, durs + 4, 4);
	for (size_t i = 0; i < NDURS; i++)
		if (i < 4 || i >= 8)
			all[cut_hist_bucket(durs[i])]++;
	cut_hist_merge(&h, all, &sat);
	ck_assert(!sat);
	for (int b = 0; b < CUT_HIST_N; b++)
		ck_assert_int_eq(count_at(&h, b), count_at(&want, b));
	/* a count that would pass INT64_MAX stays there and says so */
	memset(all, 0, sizeof(all));
	all[cut_hist_bucket(1000)] = INT64_MAX;
	cut_hist_merge(&h, all, &sat);
	ck_assert(sat);
	ck_assert_int_eq(count_at(&h, cut_hist_bucket(1000)), INT64_MAX);
	cut_hist_free(&h);
	cut_hist_free(&want);
}
END_TEST

START_TEST(test_item)
{
	static struct cut_sum_item it;
	char why[128];
	json_t *o =
	    json_loads("{\"name\": \"k\", \"kind\": \"memcpy\", \"calls\": 3, \"total_ns\": 30,"
	               " \"min_ns\": 5, \"max_ns\": 20, \"hist\": [[19, 2], [35, 1]]}",
	               0, NULL);
	ck_assert(cut_summary_item(o, CUT_SUM_KERNELS, &it, why, sizeof(why)));
	ck_assert_str_eq(it.name, "k");
	ck_assert_str_eq(it.kind, "memcpy");
	ck_assert_ptr_null(it.domain);
	ck_assert_int_eq(it.calls, 3);
	ck_assert_int_eq(it.hist[19], 2);
	ck_assert_int_eq(it.hist[35], 1);
	/* an NVTX range without a domain is of the default one */
	ck_assert(cut_summary_item(o, CUT_SUM_NVTX, &it, why, sizeof(why)));
	ck_assert_str_eq(it.domain, "");
	ck_assert_ptr_null(it.kind);
	json_decref(o);
	static const char *const bad[] = {
	    "[]",
	    "{\"calls\": 1, \"total_ns\": 1, \"min_ns\": 1, \"max_ns\": 1}",
	    "{\"name\": \"k\", \"calls\": -1, \"total_ns\": 1, \"min_ns\": 1, \"max_ns\": 1}",
	    "{\"name\": \"k\", \"calls\": 1, \"total_ns\": 1, \"min_ns\": 2, \"max_ns\": 1}",
	    "{\"name\": \"k\", \"calls\": 1, \"total_ns\": 1, \"min_ns\": 1, \"max_ns\": 1, "
	    "\"hist\": [[512, 1]]}",
	    "{\"name\": \"k\", \"domain\": 3, \"calls\": 1, \"total_ns\": 1, \"min_ns\": 1, "
	    "\"max_ns\": 1}",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		o = json_loads(bad[i], 0, NULL);
		ck_assert_ptr_nonnull(o);
		ck_assert_msg(!cut_summary_item(o, CUT_SUM_NVTX, &it, why, sizeof(why)), "%s",
		              bad[i]);
		json_decref(o);
	}
}
END_TEST

/* The NVTX ranges' durations as cutstat -j writes them: extremes and histogram per name. */
START_TEST(test_nvtx_hist)
{
	struct cut_nvtx_stats *s = nvtxstats_new(true);
	static const int64_t d[] = {500, 100, 9000};
	for (int i = 0; i < 3; i++) {
		struct cut_event ev;
		cut_event_init(&ev);
		ev.ts = 1000 * (i + 1) * 100;
		ev.dur = d[i];
		ev.pid = ev.tid = 5;
		ev.layer = CUT_NVTX;
		ev.has |= CUT_HAS_DUR;
		ev.name = i == 2 ? "aten::mm, seq = 3, op_id = 9" : "aten::mm, seq = 1";
		nvtxstats_add(s, &ev);
	}
	nvtxstats_finish(s);
	ck_assert_uint_eq(s->nranges, 1);
	const struct cut_nvtx_range *r = &s->ranges[0];
	ck_assert_int_eq(r->count, 3);
	ck_assert_int_eq(r->min, 100);
	ck_assert_int_eq(r->max, 9000);
	struct cut_hist want;
	cut_hist_of(&want, d, 3);
	for (int b = 0; b < CUT_HIST_N; b++)
		ck_assert_int_eq(count_at(&r->hist, b), count_at(&want, b));
	cut_hist_free(&want);
	struct cut_summary_src src = {NULL, NULL, NULL, s, false, -1, NULL, 0};
	json_t *o = cut_summary_of(&src), *nv = json_object_get(o, "nvtx");
	ck_assert_uint_eq(json_array_size(nv), 1);
	static struct cut_sum_item it;
	char why[128];
	ck_assert(cut_summary_item(json_array_get(nv, 0), CUT_SUM_NVTX, &it, why, sizeof(why)));
	ck_assert_str_eq(it.name, "aten::mm");
	ck_assert_int_eq(it.total, 9600);
	ck_assert_int_eq(it.hist[cut_hist_bucket(9000)], 1);
	ck_assert_ptr_null(json_object_get(o, "nvtx_full"));
	json_decref(o);
	nvtxstats_free(s);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("summary");
	TCase *tc = tcase_create("summary");
	tcase_add_test(tc, test_add_is_of);
	tcase_add_test(tc, test_merge);
	tcase_add_test(tc, test_item);
	tcase_add_test(tc, test_nvtx_hist);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
