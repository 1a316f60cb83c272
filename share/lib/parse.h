/* parse.h: one line of a trace into a cut_event: the fast path for the canonical layout,
 * jansson for everything else, and the import of the two older formats. */
#ifndef CUT_PARSE_H
#define CUT_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "event.h"

struct cut_parser;

enum cut_parse_mode {
	CUT_PARSE_AUTO,    /* fast path, falling back to jansson */
	CUT_PARSE_FAST,    /* fast path only: returns CUT_PARSE_NOT_CANONICAL when it cannot */
	CUT_PARSE_JANSSON, /* jansson only */
};

enum {
	CUT_PARSE_NOT_CANONICAL = -2,
	CUT_PARSE_ERROR = -1,
	CUT_PARSE_NONE = 0, /* blank line, or the begin half of an imported pair */
	CUT_PARSE_EVENT = 1,
};

struct cut_parser *cut_parser_new(void);
void cut_parser_free(struct cut_parser *p);
/*
 * Parses one line (without its newline; a trailing CR is ignored). The line buffer is
 * modified and must stay alive while the event is used. Returns CUT_PARSE_EVENT with *ev
 * filled (when why is then non-empty, the event was kept despite a problem worth
 * reporting), CUT_PARSE_NONE, CUT_PARSE_ERROR with a reason in why (no file or line), or
 * CUT_PARSE_NOT_CANONICAL in CUT_PARSE_FAST mode.
 */
int cut_parse(struct cut_parser *p, char *line, size_t len, struct cut_event *ev,
              enum cut_parse_mode mode, char *why, size_t whylen);
/* After the last line: returns CUT_PARSE_EVENT for each imported begin that never saw its
 * end (kept as an instant, with the line of its begin in *line), then CUT_PARSE_NONE. */
int cut_parse_flush(struct cut_parser *p, struct cut_event *ev, uint64_t *line);

#endif
