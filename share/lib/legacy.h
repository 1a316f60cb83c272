/* legacy.h: import of the two older trace formats (bpftrace-style and LD_PRELOAD-style
 * begin/end lines, ts in milliseconds) into cut events. Internal to the parser. */
#ifndef CUT_LEGACY_H
#define CUT_LEGACY_H

#include <jansson.h>

#include "parse.h"

struct legacy;

struct legacy *legacy_new(void);
void legacy_free(struct legacy *lg);
/*
 * Imports one parsed legacy record read at line. A begin is kept until its end arrives:
 * CUT_PARSE_NONE. An end (or a complete record) gives CUT_PARSE_EVENT; when why is
 * non-empty the event was kept despite a problem worth reporting. CUT_PARSE_ERROR with why
 * set when the record is unusable. Strings in *ev stay valid until the next call.
 */
int legacy_import(struct legacy *lg, json_t *o, uint64_t line, struct cut_event *ev, char *why,
                  size_t whylen);
/* Returns each begin that never saw its end as an instant (CUT_PARSE_EVENT, line of its
 * begin in *line), then CUT_PARSE_NONE. */
int legacy_flush(struct legacy *lg, struct cut_event *ev, uint64_t *line);

#endif
