/* timeline.h: the one model of cut traces that the timeline writers share (cutchrome's Trace
 * Event JSON, cutperfetto's protobuf), as bpftrace keeps one value model under its text and JSON
 * outputs. Events go in, read from every input at once and merged by time; machines, processes,
 * threads and their off-CPU time, NVTX start/end ranges, interrupts, GPUs and their streams come
 * out as tracks; each slice on a lane of its track where it nests, its end, flows from a call to
 * its ioctls and GPU work, the counters of device memory and GPU work running, lost records and
 * names from the meta records, through the callbacks of a struct tl_sink. A new output format
 * is one more sink. */
#ifndef CUT_TIMELINE_H
#define CUT_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event.h"

/* The kinds of tracks, each under its parent (struct tl_track). */
enum tl_kind {
	TL_PROCESS, /* a process of a machine */
	TL_THREAD,  /* its thread: API calls, ioctls, driver functions, push/pop ranges, marks */
	TL_OFFCPU,  /* a thread's time off the CPU (sched) */
	TL_NVTX,    /* a process's NVTX start/end ranges of one domain */
	TL_IRQS,    /* a machine's interrupts */
	TL_IRQ,     /* those of one CPU */
	TL_GPU,     /* a GPU: one of a machine by uuid, else a process's by ordinal */
	TL_STREAM,  /* a process's stream on a GPU, or its work there without a stream */
};

/* A host, and with TL_BOOTS one boot of it (the offset between the clocks of its header). */
struct tl_machine {
	const char *host;   /* "" when unknown */
	bool clock;         /* its header read both clocks at one instant: */
	int64_t mono, real; /* CLOCK_MONOTONIC and CLOCK_REALTIME then */
	size_t index;       /* in order of appearance, from 0 */
	int64_t rank;       /* the lowest rank of its processes so far, -1: none (TL_RANKED) */
	/* private */
	struct tl_machine *same; /* the next machine of its host */
};

struct tl_lane;

/* A track. Strings are NULL until a record gives them, and stay valid until tl_free. */
struct tl_track {
	enum tl_kind kind;
	size_t order; /* of creation, from 0: writers keep their own data in arrays by it */
	struct tl_machine *m;
	/* THREAD, NVTX and a GPU by ordinal: their process; OFFCPU: its thread; IRQ: the IRQS;
	 * STREAM: its GPU; else NULL */
	struct tl_track *parent;
	int64_t pid; /* the input's; -1 for IRQS, IRQ and a GPU by uuid */
	/* THREAD, OFFCPU: the tid; IRQ: the CPU, -1 when unknown; GPU: the ordinal (of the first
	 * record that named its uuid); STREAM: the handle */
	int64_t key;
	const char *domain;      /* NVTX: the domain, NULL for the default one */
	const char *label;       /* PROCESS, THREAD: the latest record's (cut_task_label) */
	const char *comm, *nvtx; /* THREAD: the latest comm and NVTX name given; STREAM: nvtx */
	const char *cmdline;     /* PROCESS */
	const char *tool;        /* PROCESS: the tool of the trace it wrote, once it lost events */
	const char *uuid;        /* GPU: NULL for one by ordinal */
	const char *name;        /* GPU: the latest name given */
	int64_t rank;            /* PROCESS: in a distributed job, else -1 */
	bool nostream;           /* STREAM: work without a stream */
	struct tl_lane *lanes;   /* as tl_lane.next */
	/* private */
	struct tl_track *same; /* STREAM: the next track of the process's stream on another GPU */
	int64_t value;         /* PROCESS: device memory allocated; GPU: work running */
	void *spill;           /* lanes past the scanned ones (a heap) */
	void *busy;            /* GPU, TL_COMPLETE: the ends of the work running (a heap) */
	size_t nlanes;
};

/* A slice on a lane, from its start until it ends. */
struct tl_open {
	int64_t ts, end;
	uint64_t user; /* the sink's; 0 when placed */
	/* private */
	struct tl_track *gpu; /* GPU work: its GPU */
};

/* One output track of a tl_track, on which its slices nest: the track's own (index 0), then
 * overlaps, as many as slices that overlap without nesting need. */
struct tl_lane {
	struct tl_track *t;
	size_t index;   /* 0, then in order of creation */
	unsigned epoch; /* the part of the output it was last scanned in (tl_cut) */
	uint64_t user;  /* the sink's */
	/* The next: the SCAN_LANES lanes the placement scans, then the other overlaps, newest
	 * first. */
	struct tl_lane *next;
	/* private */
	int64_t last, lo, floor, until;
	struct tl_open *stack; /* the slices open on it, outermost first */
	size_t depth, cap;
};

/* The call an ioctl was made in, which a flow can start from. */
struct tl_call {
	struct tl_lane *lane; /* where it was placed */
	int64_t ts;
	enum cut_layer layer;
	struct tl_open *open; /* its slice while it is open on that lane, else NULL */
};

/* Bits of tl_sink.flags. */
enum {
	/* The sink writes a slice whole at its start (its duration with it): no slice ends; lanes
	 * are freed as placement passes them, a slice wholly before all of a lane's may go there
	 * (input sorted backwards), and a GPU's busy counter falls when its next work comes or at
	 * tl_flush. Without it the sink writes starts and ends, each end as time passes it. */
	TL_COMPLETE = 1,
	/* Two boots of a host (clocks whose offset differs by a second or more, or a header with
	 * and one without) are two machines: the sink writes a clock per machine. */
	TL_BOOTS = 2,
};

/* Bits of what tl_sink.track says of a track. */
enum {
	TL_MADE = 1,    /* just made, before its parent (for numbering) */
	TL_NEW = 2,     /* made, with its parent and the names known so far */
	TL_LABEL = 4,   /* its label changed */
	TL_NAMED = 8,   /* a name shown changed: label, comm, nvtx, cmdline, tool, GPU name */
	TL_RANKED = 16, /* its rank changed (and maybe its machine's) */
};

/* A writer: what it is, and callbacks (any may be NULL) that receive the model, in the order
 * of the events. */
struct tl_sink {
	unsigned flags;
	/* The layers whose calls begin flows to the ioctls made in them: bits 1u << layer. */
	unsigned calls;
	void *arg;
	/* An event at ts other than a meta record comes next; false stops the reading. */
	bool (*at)(void *arg, int64_t ts);
	void (*machine)(void *arg, struct tl_machine *m);
	void (*track)(void *arg, struct tl_track *t, unsigned what);
	void (*lane)(void *arg, struct tl_lane *l);
	/* A slice or instant ev on lane l: o its entry while open (NULL for an instant, and for a
	 * slice placed wholly before a lane's others), call the call an ioctl was made in. */
	void (*slice)(void *arg, struct tl_lane *l, struct tl_open *o, const struct cut_event *ev,
	              const struct tl_call *call);
	void (*slice_end)(void *arg, struct tl_lane *l, struct tl_open *o);
	/* A value of a counter at ts: a PROCESS's device memory allocated, a GPU's work running. */
	void (*counter)(void *arg, struct tl_track *t, int64_t ts, int64_t value);
	/* A flow from the call at ts on lane from, which submitted GPU work ev, to that work on
	 * lane to. */
	void (*flow)(void *arg, struct tl_lane *from, int64_t ts, struct tl_lane *to,
	             const struct cut_event *ev);
	/* A lost record ev of process p: count events lost. */
	void (*lost)(void *arg, struct tl_track *p, const struct cut_event *ev, int64_t count);
};

struct tl;

/* A timeline writing to sink (copied). Exits with status 2 when memory runs out. */
struct tl *tl_new(const struct tl_sink *sink);
void tl_free(struct tl *tl);

/*
 * Reads the named files (standard input when argc is 0) at once, merged by time, into the
 * model and the sink, until they end or the sink's at() says stop. Returns the exit status of
 * the reading (CUT_EXIT_OK, _BADINPUT, _LOST), having reported each problem.
 */
int tl_run(struct tl *tl, int argc, char *argv[]);

/* Ends what is still open: the slices' ends are written, without TL_COMPLETE, and the GPUs'
 * busy counters fall to 0 with it. Call it before the output ends. */
void tl_flush(struct tl *tl);
/* Begins a new part of the output (TL_COMPLETE, after tl_flush): lanes start empty, and no
 * flow starts from a call of an earlier part. */
void tl_cut(struct tl *tl);
/* The part of the output being written: tl_lane.epoch of the lanes it scanned. */
unsigned tl_epoch(const struct tl *tl);
/* The number of machines so far. */
size_t tl_machines(const struct tl *tl);

/* The track of a kind above t's (TL_PROCESS, TL_THREAD...), or NULL. */
struct tl_track *tl_up(struct tl_track *t, enum tl_kind kind);

#endif
