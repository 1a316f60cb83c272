/* fuzz_reader: libFuzzer harness for the event reader. Each input is a trace; every line is
 * parsed by the fast path, by jansson alone and by the automatic mix, which must agree, and
 * every event read must survive a write/read round trip. The whole input also goes through
 * cut_reader (via a memfd) to exercise its line framing (and, for input that starts with the
 * magic number of gzip or zstd, its decompression). Any disagreement aborts. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "event.h"
#include "meta.h"
#include "parse.h"
#include "reader.h"
#include "../unit/event_diff.h"

static void
disagree(const char *what, const char *line, size_t len)
{
	fprintf(stderr, "fuzz_reader: %s on: %.*s\n", what, (int)len, line);
	abort();
}

static int
parse_copy(struct cut_parser *p, const char *text, size_t len, enum cut_parse_mode mode,
           struct owned *out)
{
	char why[256];
	char *line = malloc(len + 1);
	memcpy(line, text, len);
	line[len] = '\0';
	struct cut_event ev;
	int rc = cut_parse(p, line, len, &ev, mode, why, sizeof(why));
	if (rc == CUT_PARSE_EVENT)
		own(out, &ev);
	free(line);
	return rc;
}

static void
check_roundtrip(const struct cut_event *ev, const char *line, size_t len)
{
	static struct cut_parser *p;
	static struct cut_buf b;
	struct owned back;
	if (!p)
		p = cut_parser_new();
	buf_reset(&b);
	cut_event_format(&b, ev);
	if (parse_copy(p, b.s, b.len, CUT_PARSE_AUTO, &back) != CUT_PARSE_EVENT)
		disagree("the writer's line does not read back", line, len);
	/* Imported legacy events and extra members come back the same; compare all. */
	if (event_diff(ev, &back.ev))
		disagree("round trip changed the event", line, len);
	disown(&back);
}

/* A meta record read into its struct and written again must read back to the same bytes:
 * writer and reader agree on every key, type and order, whatever the input held. */
static void
check_meta(const struct cut_event *ev, const char *line, size_t len)
{
	static struct cut_parser *p;
	static struct cut_buf once, twice;
	struct cut_meta m;
	struct owned back;
	if (cut_meta_kind(ev) < CUT_META_HEADER || cut_meta_kind(ev) == CUT_META_OTHER)
		return;
	if (!p)
		p = cut_parser_new();
	cut_meta_read(ev, &m);
	buf_reset(&once);
	cut_meta_format(&once, ev, &m);
	cut_meta_release(&m);
	if (parse_copy(p, once.s, once.len, CUT_PARSE_AUTO, &back) != CUT_PARSE_EVENT)
		disagree("a meta record written from what was read does not read back", line, len);
	cut_meta_read(&back.ev, &m);
	buf_reset(&twice);
	cut_meta_format(&twice, &back.ev, &m);
	cut_meta_release(&m);
	if (strcmp(once.s, twice.s) != 0)
		disagree("a meta record changed when written again", line, len);
	disown(&back);
}

static long
count_with_reader(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz", 0);
	if (fd < 0 || write(fd, data, size) != (ssize_t)size)
		abort();
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	struct cut_reader *r = cut_reader_open(path, 0);
	struct cut_event ev;
	long n = 0;
	while (cut_reader_next(r, &ev) > 0)
		n++;
	cut_reader_close(r);
	close(fd);
	return n;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cut_parser *pf = cut_parser_new(), *pj = cut_parser_new(), *pa = cut_parser_new();
	const char *s = (const char *)data, *e = s + size;
	long events = 0;
	if (size >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0)
		s += 3; /* a byte-order mark at the start is no part of the first line (reader.c) */
	while (s < e) {
		const char *nl = memchr(s, '\n', (size_t)(e - s));
		size_t len = nl ? (size_t)(nl - s) : (size_t)(e - s);
		struct owned f, j, a;
		int rf = parse_copy(pf, s, len, CUT_PARSE_FAST, &f);
		int rj = parse_copy(pj, s, len, CUT_PARSE_JANSSON, &j);
		int ra = parse_copy(pa, s, len, CUT_PARSE_AUTO, &a);
		if (rf == CUT_PARSE_EVENT) {
			if (rj != CUT_PARSE_EVENT || event_diff(&f.ev, &j.ev))
				disagree("fast path and jansson differ", s, len);
			disown(&f);
		}
		if (ra != rj)
			disagree("auto and jansson differ in verdict", s, len);
		if (rj == CUT_PARSE_EVENT) {
			if (event_diff(&a.ev, &j.ev))
				disagree("auto and jansson differ", s, len);
			check_roundtrip(&j.ev, s, len);
			check_meta(&j.ev, s, len);
			disown(&j);
			disown(&a);
			events++;
		}
		s += len + 1;
	}
	struct cut_event ev;
	uint64_t line;
	while (cut_parse_flush(pa, &ev, &line) == CUT_PARSE_EVENT)
		events++;
	cut_parser_free(pf);
	cut_parser_free(pj);
	cut_parser_free(pa);
	/* input that starts like gzip or zstd data is read decompressed by cut_reader (what it
	 * reads then is fuzz_inflate's part): only that it does not crash is checked here */
	bool compressed = (size >= 2 && data[0] == 0x1f && data[1] == 0x8b) ||
	                  (size >= 4 && memcmp(data, "\x28\xb5\x2f\xfd", 4) == 0) ||
	                  (size >= 4 && (data[0] & 0xf0) == 0x50 && /* zstd skippable frame */
	                   memcmp(data + 1, "\x2a\x4d\x18", 3) == 0);
	long n = count_with_reader(data, size);
	if (!compressed && n != events)
		disagree("cut_reader and line-by-line parsing count different events", "", 0);
	return 0;
}
