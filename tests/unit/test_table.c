/* test_table.c: report tables: one row of cells printed as aligned text, CSV and JSON, the
 * formats' own column orders and names, cells not set, escaping, and the mistakes that abort. */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "table.h"

/* Standard output of the code between capture_begin and capture_end, as a string. */
static FILE *cap;
static int saved = -1;

static void
capture_begin(void)
{
	fflush(stdout);
	cap = tmpfile();
	ck_assert_ptr_nonnull(cap);
	saved = dup(STDOUT_FILENO);
	dup2(fileno(cap), STDOUT_FILENO);
}

static char *
capture_end(void)
{
	static char out[8192];
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	rewind(cap);
	size_t n = fread(out, 1, sizeof(out) - 1, cap);
	out[n] = '\0';
	fclose(cap);
	return out;
}

/* The columns of a function table as cutstat has them: JSON in this order, text with the
 * percentage first and the name last, CSV with the name first. */
static const struct cut_col cols[] = {
    {"name", "fn_name", "Name", CUT_COL_STR, 0, 0, 0},
    {"calls", "calls", "Calls", CUT_COL_INT, 6, 0, 0},
    {"total_ns", "total_ns", "Total", CUT_COL_DUR, 11, 0, 0},
    {"avg_ns", "avg_ns", "Avg", CUT_COL_REAL, 8, 1, 0},
    {"kind", "kind", "Kind", CUT_COL_STR, -6, 0, CUT_COL_GAP | CUT_COL_DASH},
    {NULL, "time_pct", "Time", CUT_COL_PCT, 7, 0, 0},
    {"bytes", NULL, NULL, CUT_COL_INT, 0, 0, 0},
};
static const struct cut_table_def def = {cols, CUT_NCOLS(cols),
                                         "time_pct calls total_ns avg_ns kind name",
                                         "name kind calls total_ns avg_ns time_pct"};

static json_t *
fill(enum cut_fmt fmt)
{
	struct cut_table *t = cut_table_new(&def, fmt);
	cut_table_add(t,
	              CUT_ROW(CUT_S("cuLaunchKernel"), CUT_I(12), CUT_I(1250000), CUT_R(104166.67),
	                      CUT_S("launch"), CUT_R(62.5), CUT_IF(0, CUT_I(0))));
	cut_table_add(t, CUT_ROW(CUT_S("memcpy, \"HtoD\""), CUT_I(3), CUT_I(812), CUT_R(270.666),
	                         CUT_S(""), CUT_R(0.04), CUT_IF(1, CUT_I(4096))));
	return cut_table_end(t);
}

START_TEST(test_text)
{
	capture_begin();
	ck_assert_ptr_null(fill(CUT_FMT_TEXT));
	ck_assert_str_eq(capture_end(),
	                 "   Time  Calls       Total      Avg  Kind   Name\n"
	                 "  62.5%     12    1.250 ms 104166.7  launch cuLaunchKernel\n"
	                 "   0.0%      3      812 ns    270.7  -      memcpy, \"HtoD\"\n");
}
END_TEST

START_TEST(test_csv)
{
	capture_begin();
	ck_assert_ptr_null(fill(CUT_FMT_CSV));
	ck_assert_str_eq(capture_end(), "fn_name,kind,calls,total_ns,avg_ns,time_pct\n"
	                                "cuLaunchKernel,launch,12,1250000,104166.7,62.50\n"
	                                "\"memcpy, \"\"HtoD\"\"\",,3,812,270.7,0.04\n");
}
END_TEST

START_TEST(test_json)
{
	json_t *a = fill(CUT_FMT_JSON);
	char *s = json_dumps(a, JSON_COMPACT);
	ck_assert_str_eq(s, "[{\"name\":\"cuLaunchKernel\",\"calls\":12,\"total_ns\":1250000,"
	                    "\"avg_ns\":104166.67,\"kind\":\"launch\"},"
	                    "{\"name\":\"memcpy, \\\"HtoD\\\"\",\"calls\":3,\"total_ns\":812,"
	                    "\"avg_ns\":270.666,\"kind\":\"\",\"bytes\":4096}]");
	free(s);
	json_decref(a);
}
END_TEST

/* Cells not set: "-" inside a text row, nothing at its end unless the column is null; in JSON
 * left out or null; members of members; a JSON value; a column hidden. */
static const struct cut_col ncols[] = {
    {"a.x", NULL, "x", CUT_COL_INT, 3, 0, 0}, {"b", NULL, "b", CUT_COL_INT, 3, 0, 0},
    {"a.y", NULL, "y", CUT_COL_INT, 3, 0, 0}, {"c", NULL, "c", CUT_COL_INT, 3, 0, CUT_COL_NULL},
    {"d", NULL, "d", CUT_COL_INT, 3, 0, 0},   {"j", NULL, NULL, CUT_COL_JSON, 0, 0, 0},
    {"h", NULL, "h", CUT_COL_INT, 3, 0, 0},
};
static const struct cut_table_def ndef = {ncols, CUT_NCOLS(ncols), NULL, NULL};

static json_t *
fill_unset(enum cut_fmt fmt)
{
	struct cut_table *t = cut_table_new(&ndef, fmt);
	cut_table_hide(t, "h");
	cut_table_add(t, CUT_ROW(CUT_I(1), CUT_IF(0, CUT_I(2)), CUT_I(3), CUT_IF(0, CUT_I(4)),
	                         CUT_IF(0, CUT_I(5)), CUT_J(json_true()), CUT_I(7)));
	cut_table_add(t, CUT_ROW(CUT_IF(0, CUT_I(1)), CUT_I(2)));
	return cut_table_end(t);
}

START_TEST(test_unset)
{
	capture_begin();
	fill_unset(CUT_FMT_TEXT);
	ck_assert_str_eq(capture_end(), "  x   b   y   c   d\n"
	                                "  1   -   3   -\n"
	                                "  -   2   -   -\n");
	json_t *a = fill_unset(CUT_FMT_JSON);
	char *s = json_dumps(a, JSON_COMPACT);
	ck_assert_str_eq(s,
	                 "[{\"a\":{\"x\":1,\"y\":3},\"c\":null,\"j\":true},{\"b\":2,\"c\":null}]");
	free(s);
	json_decref(a);
}
END_TEST

/* Trace strings are escaped in text (a forged line, a terminal escape) unless the column is
 * raw; CSV quotes what a spreadsheet would take for a formula. */
static const struct cut_col scols[] = {
    {"s", "s", "s", CUT_COL_STR, 0, 0, 0},
    {NULL, NULL, "raw", CUT_COL_STR, 0, 0, CUT_COL_RAW | CUT_COL_GAP},
};
static const struct cut_table_def sdef = {scols, CUT_NCOLS(scols), NULL, NULL};

START_TEST(test_escape)
{
	capture_begin();
	struct cut_table *t = cut_table_new(&sdef, CUT_FMT_TEXT);
	cut_table_add(t, CUT_ROW(CUT_S("a\nVerdict: \x1b[2J"), CUT_S("x\\y")));
	cut_table_end(t);
	t = cut_table_new(&sdef, CUT_FMT_CSV);
	cut_table_add(t, CUT_ROW(CUT_S("=1+2")));
	cut_table_end(t);
	ck_assert_str_eq(capture_end(), "s  raw\n"
	                                "a\\nVerdict: \\x1b[2J  x\\y\n"
	                                "s\n"
	                                "\"'=1+2\"\n");
}
END_TEST

/* The header comes once, before the first row, or at the end of a table without rows. */
START_TEST(test_header)
{
	capture_begin();
	cut_table_end(cut_table_new(&sdef, CUT_FMT_CSV));
	struct cut_table *t = cut_table_new(&sdef, CUT_FMT_TEXT);
	cut_table_add(t, CUT_ROW(CUT_S("a")));
	cut_table_add(t, CUT_ROW(CUT_S("b")));
	cut_table_end(t);
	json_t *a = cut_table_end(cut_table_new(&sdef, CUT_FMT_JSON));
	ck_assert_str_eq(capture_end(), "s\ns  raw\na\nb\n");
	ck_assert_int_eq(json_array_size(a), 0);
	json_decref(a);
}
END_TEST

/* A cell of another kind than its column, an order naming no column, and too many columns
 * are mistakes of the program: they abort. */
START_TEST(test_wrong_kind)
{
	struct cut_table *t = cut_table_new(&def, CUT_FMT_JSON);
	cut_table_add(t, CUT_ROW(CUT_S("x"), CUT_R(1.0)));
}
END_TEST

START_TEST(test_bad_order)
{
	static const struct cut_table_def bad = {cols, CUT_NCOLS(cols), "calls nosuch", NULL};
	cut_table_new(&bad, CUT_FMT_TEXT);
}
END_TEST

START_TEST(test_too_wide)
{
	static struct cut_col many[CUT_TABLE_MAX + 1];
	static const struct cut_table_def wide = {many, CUT_NCOLS(many), NULL, NULL};
	cut_table_new(&wide, CUT_FMT_TEXT);
}
END_TEST

/* Text fits the width: a name that ends a row is shortened by cut_name_short's rule to what
 * the cells before it leave, sentences are broken at spaces; width 0 leaves both whole. */
static const struct cut_col wcols[] = {
    {"n", NULL, "n", CUT_COL_INT, 4, 0, 0},
    {"name", NULL, "name", CUT_COL_STR, 0, 0, 0},
};
static const struct cut_table_def wdef = {wcols, CUT_NCOLS(wcols), NULL, NULL};

START_TEST(test_width)
{
	const char *k = "void f<int, std::array<char, 4ul> >(int, float)";
	cut_table_display(30, false);
	capture_begin();
	struct cut_table *t = cut_table_new(&wdef, CUT_FMT_TEXT);
	ck_assert_uint_eq(cut_table_room(t, CUT_ROW(CUT_I(1))), 25);
	cut_table_add(t, CUT_ROW(CUT_I(1), CUT_S(k)));
	cut_table_add(t, CUT_ROW(CUT_I(12345678), CUT_S("short")));
	cut_table_end(t);
	cut_table_say("one two three four five six seven eight nine ten eleven");
	cut_table_say("\nTitle");
	cut_table_display(0, false);
	t = cut_table_new(&wdef, CUT_FMT_TEXT);
	ck_assert_uint_eq(cut_table_room(t, CUT_ROW(CUT_I(1))), 0);
	cut_table_add(t, CUT_ROW(CUT_I(1), CUT_S(k)));
	cut_table_end(t);
	cut_table_say("one two three four five six seven eight nine ten eleven");
	cut_table_display(CUT_TABLE_WIDTH, false);
	ck_assert_str_eq(capture_end(),
	                 "   n name\n"
	                 "   1 void f<…>(…)\n"
	                 "12345678 short\n"
	                 "one two three four five six\n"
	                 "  seven eight nine ten eleven\n"
	                 "\n"
	                 "Title\n"
	                 "   n name\n"
	                 "   1 void f<int, std::array<char, 4ul> >(int, float)\n"
	                 "one two three four five six seven eight nine ten eleven\n");
}
END_TEST

/* Names as a report shows them: demangled, with the mangled one beside where they differ;
 * as the trace has them with mangled set. */
START_TEST(test_names)
{
	const char *m = "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LLv";
	ck_assert_str_eq(cut_table_name(m), "ncclDevKernel_AllReduce_Sum_f32_RING_LL()");
	ck_assert_str_eq(cut_table_mangled(m), m);
	ck_assert_str_eq(cut_table_name("gemm"), "gemm");
	ck_assert_ptr_null(cut_table_mangled("gemm"));
	ck_assert_ptr_null(cut_table_name(NULL));
	cut_table_display(CUT_TABLE_WIDTH, true);
	ck_assert_str_eq(cut_table_name(m), m);
	ck_assert_ptr_null(cut_table_mangled(m));
	cut_table_display(CUT_TABLE_WIDTH, false);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("table");
	TCase *tc = tcase_create("table");
	tcase_add_test(tc, test_text);
	tcase_add_test(tc, test_csv);
	tcase_add_test(tc, test_json);
	tcase_add_test(tc, test_unset);
	tcase_add_test(tc, test_escape);
	tcase_add_test(tc, test_header);
	tcase_add_test(tc, test_width);
	tcase_add_test(tc, test_names);
	tcase_add_test_raise_signal(tc, test_wrong_kind, SIGABRT);
	tcase_add_test_raise_signal(tc, test_bad_order, SIGABRT);
	tcase_add_test_raise_signal(tc, test_too_wide, SIGABRT);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
