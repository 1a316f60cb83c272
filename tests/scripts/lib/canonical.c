/* canonical.c: checks that a trace's lines are in the canonical layout (tests/scripts/lib/
 * hook-setup.sh's canonical()): every line parses, events on the reader's fast path, and
 * cut_event_format writes those back byte for byte (cuthook writes calls without it, for speed).
 * usage: canonical FILE; exit 0 when every line is canonical, else 1, saying which. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "event.h"
#include "parse.h"
int main(int argc, char **argv) {
	FILE *f = argc > 1 ? fopen(argv[1], "r") : NULL;
	struct cut_parser *p = cut_parser_new();
	char *line = NULL, *copy, why[256];
	size_t cap = 0, n = 0, bad = 0;
	ssize_t len;
	while (f && (len = getline(&line, &cap, f)) > 0) {
		struct cut_event ev;
		struct cut_buf b = {0};
		n++;
		line[--len] = '\0';
		copy = strdup(line);
		/* Meta records come from cut_event_format itself; the header's 19-digit clock
		 * is beyond the fast path. */
		enum cut_parse_mode mode = strstr(line, "\"layer\":\"meta\"") ? CUT_PARSE_AUTO : CUT_PARSE_FAST;
		if (cut_parse(p, copy, (size_t)len, &ev, mode, why, sizeof(why)) != CUT_PARSE_EVENT) {
			if (bad++ < 5)
				printf("line %zu: not canonical: %.120s\n", n, line);
		} else {
			cut_event_format(&b, &ev);
			if (mode == CUT_PARSE_FAST && strcmp(b.s, line) != 0 && bad++ < 5)
				printf("line %zu:\n  cuthook:   %.200s\n  canonical: %.200s\n", n, line, b.s);
		}
		buf_free(&b);
		free(copy);
	}
	return f && n && !bad ? 0 : 1;
}
