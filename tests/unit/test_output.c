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

/* What closing the output said and left. */
struct closed {
	int e;      /* the errno out_close returned */
	bool whole; /* it said the file ends at its last whole line */
	off_t size;
};

/* Writes n lines under a file size limit, in one piece, or in two where more >= 0 (the n
 * lines flushed, then more), and closes the output. */
static struct closed
write_limited(rlim_t limit, int n, int more)
{
	struct closed c;
	open_limited(limit);
	for (int i = 0; i < n; i++)
		out_add(LINE, LINE_LEN);
	if (more >= 0) {
		ck_assert_int_eq(out_flush(), 0);
		for (int i = 0; i < more; i++)
			out_add(LINE, LINE_LEN);
	}
	c.size = close_limited(&c.e, &c.whole);
	return c;
}

/* The output ended with errno e, said whole or not, with lines whole lines in the file. */
static void
closed_as(struct closed c, int e, bool whole, int lines)
{
	ck_assert_int_eq(c.e, e);
	ck_assert_int_eq(c.whole, whole);
	ck_assert_int_eq(c.size, lines * (off_t)LINE_LEN);
	assert_whole_lines(c.size);
}

START_TEST(test_limit_inside_a_line)
{
	closed_as(write_limited(10 * LINE_LEN + 7, 20, -1), EFBIG, true, 10);
}
END_TEST

/* The limit at a line's end: the file took whole lines only, and nothing needs cutting. (A
 * make check once failed on this: under load the limit fell at a line's end and the trace was
 * not said to end at its last whole line.) */
START_TEST(test_limit_at_a_line_end)
{
	closed_as(write_limited(10 * LINE_LEN, 20, -1), EFBIG, true, 10);
}
END_TEST

/* A piece written whole up to the limit, then a piece none of which the file takes. */
START_TEST(test_limit_at_a_piece_end)
{
	closed_as(write_limited(10 * LINE_LEN, 10, 3), EFBIG, true, 10);
}
END_TEST

/* A limit inside the first line: the file is cut back to nothing and said to be cut; one whose
 * first write took nothing is not. */
START_TEST(test_limit_inside_the_first_line)
{
	closed_as(write_limited(5, 2, -1), EFBIG, true, 0);
}
END_TEST

START_TEST(test_limit_zero)
{
	closed_as(write_limited(0, 2, -1), EFBIG, false, 0);
}
END_TEST

START_TEST(test_no_failure)
{
	closed_as(write_limited(100 * LINE_LEN, 20, 20), 0, false, 40);
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
