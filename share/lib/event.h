/* event.h: cut's trace event (schema cut-events(5)), the reader every tool uses, and the
 * canonical writer. */
#ifndef CUT_EVENT_H
#define CUT_EVENT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "buf.h"

/* Version of the event schema this library reads and writes (header record "schema"). */
#define CUT_SCHEMA_VERSION 1

enum cut_layer {
	CUT_API,    /* a CUDA driver API call */
	CUT_IOCTL,  /* an ioctl (or open/close/mmap) on an NVIDIA device file */
	CUT_KERNEL, /* a function inside the kernel driver */
	CUT_IRQ,    /* an interrupt handler */
	CUT_SCHED,  /* a thread off the CPU */
	CUT_GPU,    /* device-side activity */
	CUT_META,   /* header, symbol, lost and trailer records */
	CUT_NLAYERS
};

/* Bits of cut_event.has: which optional fields are present. */
enum {
	CUT_HAS_DUR = 1 << 0,
	CUT_HAS_RET = 1 << 1,
	CUT_HAS_ID = 1 << 2,
	CUT_HAS_PARENT = 1 << 3,
	CUT_HAS_NIOCTL = 1 << 4, /* nioctl and ioctl_ns */
};

/*
 * One event. Strings are NUL-terminated and belong to the reader: they stay valid until the
 * next cut_reader_next() on the same reader. Fields appear in the canonical line in the order
 * declared here.
 */
struct cut_event {
	int64_t ts;       /* start, ns of CLOCK_MONOTONIC */
	int64_t dur;      /* ns; valid when has & CUT_HAS_DUR, else an instant */
	int64_t pid, tid; /* 0 when not attributed to a process (irq) */
	enum cut_layer layer;
	const char *name;
	const char *cat;   /* category; NULL when absent (see cut_event_category) */
	int64_t ret;       /* return value or status */
	int64_t id;        /* unique id of this event within a trace */
	int64_t parent;    /* id of the enclosing API call (set by cutmerge) */
	const char *pname; /* name of the enclosing API call; NULL when absent */
	int64_t nioctl;    /* ioctls made inside this call */
	int64_t ioctl_ns;  /* ns spent inside those ioctls */
	const char *args;  /* compact JSON object text "{...}"; NULL when absent */
	const char *extra; /* unknown top-level members as JSON text "\"k\":v,..."; NULL if none */
	unsigned has;      /* CUT_HAS_* */
};

/* Name of a layer ("api", "ioctl", ...). */
const char *cut_layer_name(enum cut_layer l);
/* Layer for a name, or -1 when unknown. */
int cut_layer_from_name(const char *s);
/* Category of an event: its "cat" when present, else the driver API table for API calls,
 * else the layer name. Never NULL. */
const char *cut_event_category(const struct cut_event *ev);
/* End of a span (ts + dur), or ts for an instant. */
static inline int64_t
cut_event_end(const struct cut_event *ev)
{
	return ev->has & CUT_HAS_DUR ? ev->ts + ev->dur : ev->ts;
}
/* Resets *ev to an empty event (no optional fields). */
void cut_event_init(struct cut_event *ev);

/*
 * Appends the canonical one-line form of ev (without newline) to b. The same event always
 * gives the same bytes; the reader's fast path parses exactly this layout.
 */
void cut_event_format(struct cut_buf *b, const struct cut_event *ev);
/* Writes ev as one canonical line. Returns 0, or -1 when the stream reports an error. */
int cut_event_write(FILE *f, const struct cut_event *ev);

/* Line parser: the fast path for the canonical layout with jansson for everything else,
 * plus the import of the older bpftrace- and LD_PRELOAD-style formats. */
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

/* The reader: a file or stdin, line numbers, and the one error policy of all tools. */
struct cut_reader;

enum {
	CUT_READ_STRICT = 1 << 0, /* stop at the first bad line (also: CUT_STRICT=1 in env) */
};

/*
 * Opens path for reading; NULL or "-" means standard input. Returns NULL with errno set
 * when the file cannot be opened (the caller reports it).
 */
struct cut_reader *cut_reader_open(const char *path, unsigned flags);
/*
 * Reads the next event. A bad line is reported on stderr as "prog: file:line: reason",
 * counted and skipped. Returns 1 with *ev filled, 0 at end of input, -1 when reading must
 * stop (strict mode after a bad line, or a read error, both already reported).
 */
int cut_reader_next(struct cut_reader *r, struct cut_event *ev);
/* Reports a problem at the line of the last event returned, in the reader's format, and
 * counts it as a bad line. */
void cut_reader_warn(struct cut_reader *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Name used in messages ("<stdin>" for standard input). */
const char *cut_reader_path(const struct cut_reader *r);
/* Line number of the last event returned (1-based). */
uint64_t cut_reader_line(const struct cut_reader *r);
/* Bad lines seen so far. */
uint64_t cut_reader_errors(const struct cut_reader *r);
/* Bytes read so far. */
uint64_t cut_reader_bytes(const struct cut_reader *r);
/* Closes the reader. Returns its count of bad lines. */
uint64_t cut_reader_close(struct cut_reader *r);

/* What cut_read_all calls for each event; r is its reader, for cut_reader_warn. */
typedef void cut_event_fn(struct cut_reader *r, struct cut_event *ev, void *arg);
/*
 * The input loop of a filter: reads every event of the nfiles files in turn (standard input
 * when nfiles is 0; "-" names it too) and calls fn(reader, event, arg) for each. Exits with
 * CUT_EXIT_FATAL, saying why, when a file cannot be opened. fn may change the event; its
 * strings belong to the reader. Returns CUT_EXIT_OK, or
 * CUT_EXIT_BADINPUT when bad lines were reported (in strict mode reading stops at the first).
 */
int cut_read_all(int nfiles, char *const files[], cut_event_fn *fn, void *arg);

/* Exit statuses shared by every tool (documented in each man page). */
enum {
	CUT_EXIT_OK = 0,
	CUT_EXIT_BADINPUT = 1, /* some input lines were bad and skipped; output is still complete
	                          for the good ones */
	CUT_EXIT_FATAL = 2,    /* usage error or a failure that stopped the tool */
};

/* Writes b to standard output and empties it: filters that write events collect them in a
 * buffer and write it in large pieces. Exits with CUT_EXIT_FATAL on a write error. */
void cut_write_buf(struct cut_buf *b);
/* Flushes and checks stdout: a full disk is an error. Exits with CUT_EXIT_FATAL on
 * failure; otherwise returns status. */
int cut_finish_output(int status);

#endif
