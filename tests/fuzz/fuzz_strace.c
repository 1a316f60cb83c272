/* fuzz_strace: libFuzzer harness for the strace importer. Each input is strace output; every
 * event it produces must be a valid cut event that survives a write/read round trip, and the
 * importer must neither crash nor leak. (Start order follows the lines, whose times mutated
 * input may well run backwards, so it is not checked here.) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event.h"
#include "parse.h"
#include "strace.h"

static void
check_event(const struct cut_event *ev)
{
	static struct cut_parser *p;
	static struct cut_buf b;
	char why[256];
	if (!p)
		p = cut_parser_new();
	buf_reset(&b);
	cut_event_format(&b, ev);
	struct cut_event back;
	if (cut_parse(p, b.s, b.len, &back, CUT_PARSE_AUTO, why, sizeof(why)) != CUT_PARSE_EVENT) {
		fprintf(stderr, "fuzz_strace: produced an unreadable event (%s): %s\n", why, b.s);
		abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cut_strace *s = strace_new();
	const char *p = (const char *)data, *e = p + size;
	char why[256];
	uint64_t lineno = 0, unfinished;
	struct cut_event ev;
	while (p < e) {
		const char *nl = memchr(p, '\n', (size_t)(e - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(e - p);
		strace_feed(s, p, len, ++lineno, why, sizeof(why));
		while (strace_next(s, &ev, &unfinished) == 1)
			check_event(&ev);
		p += len + 1;
	}
	strace_finish(s);
	while (strace_next(s, &ev, &unfinished) == 1)
		check_event(&ev);
	strace_free(s);
	return 0;
}
