/* cut.h: what every tool shares at its edges: the exit statuses, the checked output, and
 * allocation that exits when memory runs out. */
#ifndef CUT_CUT_H
#define CUT_CUT_H

#include <err.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

/* Exit statuses shared by every tool (documented in each man page). */
enum {
	CUT_EXIT_OK = 0,
	CUT_EXIT_BADINPUT = 1, /* some input lines were bad and skipped; output is still complete
	                          for the good ones */
	CUT_EXIT_FATAL = 2,    /* usage error or a failure that stopped the tool */
	CUT_EXIT_LOST = 3,     /* an input, or the rest of one, could not be read (reported);
	                          the output covers what was read */
};

/* Writes b to standard output and empties it: filters that write events collect them in a
 * buffer and write it in large pieces. Exits with CUT_EXIT_FATAL on a write error. */
void cut_write_buf(struct cut_buf *b);
/* Flushes and checks stdout: a full disk is an error. Exits with CUT_EXIT_FATAL on
 * failure; otherwise returns status. */
int cut_finish_output(int status);

/*
 * The options every tool answers, looked for as its first argument only (so that a command
 * a capture tool runs keeps its own): --help prints the tool's usage (its usage function,
 * which prints to standard error and exits with status 2) on standard output instead, and
 * exits with status 0; --version prints "tool version" and exits 0. Call it first in main.
 */
void cut_std_args(int argc, char *argv[], void (*usage)(void));
/* An option as --help lists it: as it is typed ("-j, --json", "-n top") and what it does, in
 * a few words ("print one JSON object"). */
struct cut_opt_help {
	const char *option, *meaning;
};
/*
 * cut_std_args, and --help then lists the options after the usage and a blank line, one a
 * line as grep --help does ("  -j, --json    print one JSON object"), --help and --version
 * last. opts ends with {NULL, NULL}. A tool adopts it by passing its options' lines here
 * instead of calling cut_std_args; tests/scripts/help-options.sh checks them against the man
 * page.
 */
void cut_std_args_help(int argc, char *argv[], void (*usage)(void),
                       const struct cut_opt_help *opts);
/* qsort(3)'s comparison of two int64_t, in ascending order (medians, percentiles, unions). */
static inline int
cut_cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/*
 * An array p of *cap elements of size bytes, grown (doubling, from 16) to hold at least need;
 * the new elements are zeroed and *cap updated. Returns the array, maybe moved. Exits with
 * CUT_EXIT_FATAL when memory runs out (or the size would pass SIZE_MAX).
 */
void *cut_grow(void *p, size_t *cap, size_t need, size_t size);
/* Grows array p (an lvalue) to hold at least n elements, cut_grow's way; cap (a size_t lvalue)
 * is its room. git's ALLOC_GROW: n and cap are evaluated more than once, and only when p must
 * grow is there a call. */
#define CUT_GROW(p, n, cap)                                                                        \
	((size_t)(n) > (cap) ? (void)((p) = cut_grow((p), &(cap), (n), sizeof(*(p)))) : (void)0)

/*
 * malloc, calloc, realloc, strdup and strndup that never return NULL (sbase's ealloc): out of
 * memory, they exit with CUT_EXIT_FATAL saying so. cut_xrealloc takes an element count and
 * size, as reallocarray(3) does: a product past SIZE_MAX is out of memory too. Sizes of 0 get
 * a byte. Inline, so that libcuthook's part of libcut needs no cut.c; the library itself never
 * exits on the program's behalf and checks its own allocations.
 */
__attribute__((noreturn)) static inline void
cut_out_of_memory(void)
{
	errno = ENOMEM; /* also for a size past SIZE_MAX, which no allocator was asked */
	err(CUT_EXIT_FATAL, "out of memory");
}

static inline void *
cut_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		cut_out_of_memory();
	return p;
}

static inline void *
cut_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		cut_out_of_memory();
	return p;
}

static inline void *
cut_xrealloc(void *p, size_t n, size_t size)
{
	n = n ? n : 1;
	size = size ? size : 1;
	if (n > SIZE_MAX / size || !(p = realloc(p, n * size)))
		cut_out_of_memory();
	return p;
}

static inline char *
cut_xstrdup(const char *s)
{
	char *p = strdup(s);
	if (!p)
		cut_out_of_memory();
	return p;
}

static inline char *
cut_xstrndup(const char *s, size_t n)
{
	char *p = strndup(s, n);
	if (!p)
		cut_out_of_memory();
	return p;
}

#endif
