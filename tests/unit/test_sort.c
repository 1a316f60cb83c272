/* test_sort.c: the bounded-memory sort against a model (qsort of what was added), in memory,
 * with runs on disk, with more runs than are kept open, stable at equal ts, with the input's
 * line numbers carried through; and text.c's escaping for terminals and CSV. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "check_main.h"
#include "sort.h"
#include "text.h"

static uint64_t rng = 88172645463325252u;

static uint64_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

struct item {
	int64_t ts;
	uint64_t order;
};

static int
item_cmp(const void *a, const void *b)
{
	const struct item *x = a, *y = b;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* Adds n events with ts drawn from [0, spread) (0: in order), each naming its place in args,
 * through a sorter of mem bytes; checks the output against the model. Returns the runs. */
static unsigned
check_sort(size_t n, int64_t spread, size_t mem)
{
	struct cut_sorter *s = cut_sorter_new(mem);
	struct item *model = malloc(n * sizeof(*model));
	ck_assert_ptr_nonnull(s);
	for (size_t i = 0; i < n; i++) {
		struct cut_event ev;
		char args[64], name[32];
		cut_event_init(&ev);
		ev.ts = spread ? (int64_t)(rnd() % (uint64_t)spread) : (int64_t)i;
		ev.dur = 5;
		ev.has |= CUT_HAS_DUR;
		ev.pid = ev.tid = 7;
		ev.layer = CUT_API;
		snprintf(name, sizeof(name), "cuCall%zu", i % 13);
		ev.name = name;
		snprintf(args, sizeof(args), "{\"order\":%zu}", i);
		ev.args = args;
		model[i] = (struct item){ev.ts, i};
		ck_assert_int_eq(cut_sorter_add(s, &ev, 1000 + i), 0);
	}
	qsort(model, n, sizeof(*model), item_cmp);
	struct cut_event ev;
	uint64_t line;
	size_t got = 0;
	int rc;
	while ((rc = cut_sorter_next(s, &ev, &line)) > 0) {
		int64_t order;
		ck_assert_uint_lt(got, n);
		ck_assert_int_eq(cut_args_int(ev.args, "order", &order), 0);
		if (ev.ts != model[got].ts || (uint64_t)order != model[got].order ||
		    line != 1000 + model[got].order)
			ck_abort_msg(
			    "event %zu: ts %lld order %lld line %llu, want ts %lld order %llu", got,
			    (long long)ev.ts, (long long)order, (unsigned long long)line,
			    (long long)model[got].ts, (unsigned long long)model[got].order);
		got++;
	}
	ck_assert_int_eq(rc, 0);
	ck_assert_uint_eq(got, n);
	ck_assert_uint_eq(cut_sorter_count(s), n);
	if (n > 100) /* a few random events may come in order by chance */
		ck_assert_int_eq(cut_sorter_was_sorted(s), spread == 0);
	unsigned runs = cut_sorter_runs(s);
	cut_sorter_free(s);
	free(model);
	return runs;
}

START_TEST(test_sort_memory)
{
	ck_assert_uint_eq(check_sort(20000, 1000, 0), 0);
	ck_assert_uint_eq(check_sort(5000, 0, 0), 0);
	ck_assert_uint_eq(check_sort(0, 10, 0), 0);
	ck_assert_uint_eq(check_sort(1, 10, 0), 0);
}
END_TEST

START_TEST(test_sort_runs)
{
	/* ~120 bytes an event: 64 KiB of memory spills every few hundred */
	ck_assert_uint_gt(check_sort(20000, 500, 64 << 10), 10);
	ck_assert_uint_gt(check_sort(20000, 0, 64 << 10), 10);
	ck_assert_uint_gt(check_sort(20000, 3, 64 << 10), 10); /* ties across runs */
}
END_TEST

START_TEST(test_sort_many_runs)
{
	/* more runs than the sorter keeps open: they are merged into one on the way */
	ck_assert_uint_gt(check_sort(60000, 100000, 16 << 10), 64);
}
END_TEST

START_TEST(test_escape)
{
	ck_assert_str_eq(cut_esc("cuLaunchKernel"), "cuLaunchKernel");
	ck_assert_str_eq(cut_esc("a\nb\tc\rd\\e"), "a\\nb\\tc\\rd\\\\e");
	ck_assert_str_eq(cut_esc("\x1b[2Jx\x7f"), "\\x1b[2Jx\\x7f");
	ck_assert_str_eq(cut_esc("caf\xc3\xa9"), "caf\xc3\xa9"); /* UTF-8 passes */
	ck_assert_str_eq(cut_esc("\xc3("), "\\xc3(");            /* invalid UTF-8 */
	ck_assert_str_eq(cut_esc("\xc2\x9b"
	                         "1m"),
	                 "\\u{009b}1m"); /* C1 CSI */
	ck_assert_str_eq(cut_esc("ab\xe2\x80\xae"
	                         "cd"),
	                 "ab\\u{202e}cd"); /* RTL override */
	ck_assert_str_eq(cut_esc(NULL), "");
	ck_assert_str_eq(cut_esc(""), "");
}
END_TEST

/* CUT_SORT_MEMORY in MiB: nonsense is the default, a size past what fits is all there is
 * (2^44 MiB wrapped to 0 bytes before). */
START_TEST(test_sort_memory_env)
{
	unsetenv("CUT_SORT_MEMORY");
	ck_assert_uint_eq(cut_sort_memory(), CUT_SORT_MEMORY);
	setenv("CUT_SORT_MEMORY", "64", 1);
	ck_assert_uint_eq(cut_sort_memory(), (size_t)64 << 20);
	setenv("CUT_SORT_MEMORY", "-5", 1);
	ck_assert_uint_eq(cut_sort_memory(), CUT_SORT_MEMORY);
	setenv("CUT_SORT_MEMORY", "lots", 1);
	ck_assert_uint_eq(cut_sort_memory(), CUT_SORT_MEMORY);
	setenv("CUT_SORT_MEMORY", "17592186044416", 1);
	ck_assert_uint_ge(cut_sort_memory(), (size_t)1 << 40);
	setenv("CUT_SORT_MEMORY", "99999999999999999999999", 1);
	ck_assert_uint_ge(cut_sort_memory(), (size_t)1 << 40);
	unsetenv("CUT_SORT_MEMORY");
}
END_TEST

START_TEST(test_csv)
{
	ck_assert_str_eq(cut_csv("cuInit"), "cuInit");
	ck_assert_str_eq(cut_csv("a,b"), "\"a,b\"");
	ck_assert_str_eq(cut_csv("say \"hi\""), "\"say \"\"hi\"\"\"");
	/* control characters escaped as in text reports (issue 23: ESC reached the file) */
	ck_assert_str_eq(cut_csv("two\nlines"), "two\\nlines");
	ck_assert_str_eq(cut_csv("cuEvil\x1b[31mRED"), "cuEvil\\x1b[31mRED");
	ck_assert_str_eq(cut_csv("tab\there,\r"), "\"tab\\there,\\r\"");
	ck_assert_str_eq(cut_csv("del\x7f bell\a c1\xc2\x9b bad\xff"),
	                 "del\\x7f bell\\x07 c1\\u{009b} bad\\xff");
	ck_assert_str_eq(cut_csv("rtl\xe2\x80\xae"), "rtl\\u{202e}");
	ck_assert_str_eq(cut_csv("back\\slash"), "back\\\\slash");
	ck_assert_str_eq(cut_csv("\tTAB"), "\\tTAB"); /* no longer a formula's start */
	ck_assert_str_eq(cut_csv("caf\xc3\xa9"), "caf\xc3\xa9");
	ck_assert_str_eq(cut_csv("=cmd|' /C calc'!A0"), "\"'=cmd|' /C calc'!A0\"");
	ck_assert_str_eq(cut_csv("-2+3"), "\"'-2+3\"");
	ck_assert_str_eq(cut_csv("@SUM(1)"), "\"'@SUM(1)\"");
	ck_assert_str_eq(cut_csv(" padded"), "\" padded\"");
	ck_assert_str_eq(cut_csv(""), "");
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("sort");
	TCase *tc = tcase_create("sort");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_sort_memory);
	tcase_add_test(tc, test_sort_runs);
	tcase_add_test(tc, test_sort_many_runs);
	tcase_add_test(tc, test_escape);
	tcase_add_test(tc, test_csv);
	tcase_add_test(tc, test_sort_memory_env);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return run_suite(suite());
}
