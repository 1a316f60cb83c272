/* event.h: cut's trace event (schema cut-events(5)): its layers, and the canonical writer.
 * Reading is parse.h (one line) and reader.h (files). */
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

#endif
