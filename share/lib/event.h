/* event.h: cut's trace event (schema cut-events(5)): its layers, and the canonical writer.
 * Reading is parse.h (one line) and reader.h (files). */
#ifndef CUT_EVENT_H
#define CUT_EVENT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "buf.h"

/* Version of the event schema this library writes (header record "schema"). Readers take
 * traces of every version up to it; version 1 is version 2 without host, rank and the nvtx,
 * runtime and gpu records. */
#define CUT_SCHEMA_VERSION 2

/*
 * The layers, from the framework down: the one list every tool takes them from. A row is
 * X(enum suffix, name in the trace, rank, label in reports). The rank says what holds what on
 * a thread (cut-events(5)): NVTX ranges (3) hold runtime calls (2), which hold driver API
 * calls (1), which hold ioctls, driver functions and off-CPU time (0); gpu work and
 * interrupts hold nothing (0); meta records are not events of a thread (-1).
 */
#define CUT_LAYERS(X)                                                                              \
	X(NVTX, "nvtx", 3, "NVTX")          /* an NVTX range or mark */                            \
	X(RUNTIME, "runtime", 2, "runtime") /* a CUDA runtime API call (libcudart) */              \
	X(API, "api", 1, "driver API")      /* a CUDA driver API call (libcuda) */                 \
	X(IOCTL, "ioctl", 0, "ioctl")       /* an ioctl, open, close, mmap on an NVIDIA file */    \
	X(KERNEL, "kernel", 0, "kernel")    /* a function inside the kernel driver */              \
	X(IRQ, "irq", 0, "irq")             /* an interrupt handler */                             \
	X(SCHED, "sched", 0, "off-CPU")     /* a thread off the CPU */                             \
	X(GPU, "gpu", 0, "GPU")             /* work on the device, timed there */                  \
	X(META, "meta", -1, "meta")         /* header, trailer, lost, symbol, process... */

enum cut_layer {
#define CUT_LAYER_ENUM(e, name, rank, label) CUT_##e,
	CUT_LAYERS(CUT_LAYER_ENUM)
#undef CUT_LAYER_ENUM
	    CUT_NLAYERS
};

/* Bits of cut_event.has: which optional fields are present. */
enum {
	CUT_HAS_DUR = 1 << 0,
	CUT_HAS_RET = 1 << 1,
	CUT_HAS_ID = 1 << 2,
	CUT_HAS_PARENT = 1 << 3,
	CUT_HAS_NIOCTL = 1 << 4, /* nioctl and ioctl_ns */
	CUT_HAS_RANK = 1 << 5,
};

/*
 * One event. Strings are NUL-terminated and belong to the reader: they stay valid until the
 * next cut_reader_next() on the same reader. Fields appear in the canonical line in the order
 * declared here. A new field must be reset in cut_event_init too.
 */
struct cut_event {
	int64_t ts;       /* start, ns of CLOCK_MONOTONIC */
	int64_t dur;      /* ns; valid when has & CUT_HAS_DUR, else an instant */
	const char *host; /* host name of a distributed job's records; NULL when absent */
	int64_t rank;     /* rank in the job (0 or more); valid when has & CUT_HAS_RANK */
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

/* Name of a layer in the trace ("api", "ioctl", ...); "?" for a value out of range. */
const char *cut_layer_name(enum cut_layer l);
/* Layer for a name, or -1 when unknown. */
int cut_layer_from_name(const char *s);
/* How reports name a layer ("driver API", "off-CPU", ...); "?" for a value out of range. */
const char *cut_layer_label(enum cut_layer l);
/* Rank of a layer in the stack of calls on a thread (CUT_LAYERS): 3 for nvtx down to 0, and
 * -1 for meta and values out of range. Inline: the merge asks it of every event. */
static inline int
cut_layer_rank(enum cut_layer l)
{
	switch (l) {
#define CUT_LAYER_RANK(e, name, rank, label)                                                       \
	case CUT_##e: return rank;
		CUT_LAYERS(CUT_LAYER_RANK)
#undef CUT_LAYER_RANK
	default: return -1;
	}
}
/* Category of an event: its "cat" when present; else for driver API calls their row of the
 * category table ("other" when absent), for runtime calls their row when the table has one,
 * else the layer name. Never NULL. */
const char *cut_event_category(const struct cut_event *ev);
/* End of a span (ts + dur), or ts for an instant. */
static inline int64_t
cut_event_end(const struct cut_event *ev)
{
	return ev->has & CUT_HAS_DUR ? ev->ts + ev->dur : ev->ts;
}
/* Resets *ev to an empty event (no optional fields). Inline, and a store per field: the
 * parser starts every line with it, and zeroing the whole struct compiles to a rep stos
 * whose start-up alone cost a tenth of the fast path's time. */
static inline void
cut_event_init(struct cut_event *ev)
{
	ev->ts = ev->dur = ev->rank = ev->pid = ev->tid = 0;
	ev->layer = (enum cut_layer)0;
	ev->host = ev->name = ev->cat = ev->pname = ev->args = ev->extra = NULL;
	ev->ret = ev->id = ev->parent = ev->nioctl = ev->ioctl_ns = 0;
	ev->has = 0;
}

/*
 * Appends the canonical one-line form of ev (without newline) to b. The same event always
 * gives the same bytes; the reader's fast path parses exactly this layout.
 */
void cut_event_format(struct cut_buf *b, const struct cut_event *ev);
/* Writes ev as one canonical line. Returns 0, or -1 when the stream reports an error. */
int cut_event_write(FILE *f, const struct cut_event *ev);

#endif
