/* test_output.c: cutcapture's trace output (capture/output.c) when a write fails part way: a
 * file over its size limit (RLIMIT_FSIZE, SIGXFSZ ignored as cutcapture ignores it) ends at its
 * last whole line, whether the limit fell inside a line, at a line's end, or at the end of a
 * piece already written; an empty file and a write that never failed are not said to be cut. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_main.h"
#include "output.h"

#define LINE "{\"name\":\"cuLaunchKernel\",\"ts\":12345}\n"
#define LINE_LEN (sizeof(LINE) - 1)

static char path[64];
static int fd = -1;
static struct rlimit saved;

static void
open_limited(rlim_t limit)
{
	snprintf(path, sizeof(path), "/tmp/cut-test-output-XXXXXX");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	signal(SIGXFSZ, SIG_IGN);
	ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &saved), 0);
	struct rlimit r = saved;
	r.rlim_cur = limit;
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &r), 0);
	out_open(fd);
}

/* Closes the output; returns the file's size (the limit lifted first, so that the check
 * itself can grow nothing by mistake). */
static off_t
close_limited(int *e, bool *whole)
{
	*e = out_close(whole);
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &saved), 0);
	struct stat st;
	ck_assert_int_eq(fstat(fd, &st), 0);
	close(fd);
	return st.st_size;
}

/* Every byte of the file is whole lines. */
static void
assert_whole_lines(off_t size)
{
	ck_assert_int_eq(size % (off_t)LINE_LEN, 0);
	FILE *f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	char line[256];
	while (fgets(line, sizeof(line), f))
		ck_assert_str_eq(line, LINE);
	fclose(f);
	unlink(path);
}

static void
add_lines(int n)
{
	for (int i = 0; i < n; i++)
		out_add(LINE, LINE_LEN);
}

START_TEST(test_limit_inside_a_line)
{
	open_limited(10 * LINE_LEN + 7);
	add_lines(20);
	int e;
	bool whole;
	off_t size = close_limited(&e, &whole);
	ck_assert_int_eq(e, EFBIG);
	ck_assert(whole);
	ck_assert_int_eq(size, 10 * LINE_LEN);
	assert_whole_lines(size);
}
END_TEST

/* The limit at a line's end: the file took whole lines only, and nothing needs cutting. (A
 * make check once failed on this: under load the limit fell at a line's end and the trace was
 * not said to end at its last whole line.) */
START_TEST(test_limit_at_a_line_end)
{
	open_limited(10 * LINE_LEN);
	add_lines(20);
	int e;
	bool whole;
	off_t size = close_limited(&e, &whole);
	ck_assert_int_eq(e, EFBIG);
	ck_assert(whole);
	ck_assert_int_eq(size, 10 * LINE_LEN);
	assert_whole_lines(size);
}
END_TEST

/* A piece written whole up to the limit, then a piece none of which the file takes. */
START_TEST(test_limit_at_a_piece_end)
{
	open_limited(10 * LINE_LEN);
	add_lines(10);
	ck_assert_int_eq(out_flush(), 0);
	add_lines(3);
	int e;
	bool whole;
	off_t size = close_limited(&e, &whole);
	ck_assert_int_eq(e, EFBIG);
	ck_assert(whole);
	ck_assert_int_eq(size, 10 * LINE_LEN);
	assert_whole_lines(size);
}
END_TEST

/* A limit inside the first line: the file is cut back to nothing and said to be cut; one whose
 * first write took nothing is not. */
START_TEST(test_limit_inside_the_first_line)
{
	open_limited(5);
	add_lines(2);
	int e;
	bool whole;
	off_t size = close_limited(&e, &whole);
	ck_assert_int_eq(e, EFBIG);
	ck_assert(whole);
	ck_assert_int_eq(size, 0);
	unlink(path);
}
END_TEST

START_TEST(test_limit_zero)
{
	open_limited(0);
	add_lines(2);
	int e;
	bool whole;
	off_t size = close_limited(&e, &whole);
	ck_assert_int_eq(e, EFBIG);
	ck_assert(!whole);
	ck_assert_int_eq(size, 0);
	unlink(path);
}
END_TEST

START_TEST(test_no_failure)
{
	open_limited(100 * LINE_LEN);
	add_lines(20);
	ck_assert_int_eq(out_flush(), 0);
	add_lines(20);
	int e;
	bool whole;
	off_t size = close_limited(&e, &whole);
	ck_assert_int_eq(e, 0);
	ck_assert(!whole);
	ck_assert_int_eq(size, 40 * LINE_LEN);
	assert_whole_lines(size);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("output");
	TCase *tc = tcase_create("output");
	tcase_add_test(tc, test_limit_inside_a_line);
	tcase_add_test(tc, test_limit_at_a_line_end);
	tcase_add_test(tc, test_limit_at_a_piece_end);
	tcase_add_test(tc, test_limit_inside_the_first_line);
	tcase_add_test(tc, test_limit_zero);
	tcase_add_test(tc, test_no_failure);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
