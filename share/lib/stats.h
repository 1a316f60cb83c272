/* stats.h: the numbers cutstat reports (and cutplot charts), accumulated in one pass:
 * per driver function, per category, per layer, transfers, and the slowest calls. */
#ifndef CUT_STATS_H
#define CUT_STATS_H

#include <stdbool.h>
#include <stdint.h>

#include "classify.h"
#include "event.h"
#include "heap.h"
#include "procs.h"
#include "summary.h"

enum cut_xfer_dir {
	CUT_X_HTOD,
	CUT_X_DTOH,
	CUT_X_DTOD,
	CUT_X_HTOH,
	CUT_X_ANY,
	CUT_X_MEMSET,
	CUT_X_NDIRS
};

struct cut_fn_stat {
	char *name;
	enum cut_category cat;
	int64_t calls, total, min, max;
	int64_t ioctls, ioctl_ns; /* cutmerge's nioctl/ioctl_ns, or counted here (stats_ioctl) */
	double med, stddev;       /* valid after stats_finish; stddev is the sample one */
	double avg;               /* valid after stats_finish: exact where total saturated */
	struct cut_hist hist;     /* after stats_finish (summary.h), for summaries that merge */
	/* private */
	double mean, m2;
	__int128 sum;                     /* total, unsaturated */
	int64_t own_ioctls, own_ioctl_ns; /* counted here: kept apart until stats_finish */
	int64_t *durs;
	size_t cap;
};

struct cut_slow_call {
	int64_t ts, dur, pid, tid;
	char *name;
};

#define STATS_MAX_UNRECORDED 64

struct cut_stats {
	struct cut_fn_stat
	    *fns; /* after stats_finish: nfns entries, by total time, longest first */
	size_t nfns;
	int64_t cat_calls[CUT_NCATS], cat_total[CUT_NCATS];
	int64_t layer_events[CUT_NLAYERS], layer_total[CUT_NLAYERS];
	/* distinct threads, (process, tid), with timed events of the layer: a process is a pid on
	 * a host (procs.h) */
	int64_t layer_threads[CUT_NLAYERS];
	int64_t xfer_calls[CUT_X_NDIRS], xfer_bytes[CUT_X_NDIRS], xfer_time[CUT_X_NDIRS];
	int64_t first, last;  /* first start and last end of any non-meta event; first < 0: none */
	int64_t api_total;    /* sum of API call durations */
	int64_t untimed;      /* API events without a duration (not in the tables) */
	int64_t lost;         /* events the capture reported lost (meta "lost" records) */
	/* The objects whose linked-in runtime's calls the runtime layer lacks (the trailers'
	 * runtimes_unrecorded), each once, in the order met, the first STATS_MAX_UNRECORDED */
	char **unrecorded;
	size_t nunrecorded;
	enum cut_layer layer; /* whose calls fill fns: CUT_API unless from stats_new_layer */
	bool have_nioctl;     /* the calls' ioctls are counted: by cutmerge, or here */
	/* The trace came out of order, so the ioctls of calls cutmerge had not counted could not
	 * be counted here (cutmerge sorts it): set by stats_finish. */
	bool ioctls_unsorted;
	bool saturated;             /* a sum reached INT64_MAX and stayed there: a lower bound */
	double cat_avg[CUT_NCATS];  /* after stats_finish: a category's average call, exact */
	struct cut_slow_call *slow; /* after stats_finish: nslow entries, longest first */
	size_t nslow, ntop;
	/* private */
	struct cut_heap slowest; /* the ntop longest calls so far, the shortest of them on top */
	struct cut_strtab *index;
	size_t fncap;
	struct cut_idmap *seen[CUT_NLAYERS]; /* (process, tid) per layer */
	struct cut_procs *procs;
	__int128 cat_sum[CUT_NCATS];
	struct cut_calls *open; /* the calls open on each thread, for stats_ioctl */
	int64_t last_ts;        /* of the latest event: whether the trace is in order */
	int64_t ioctls_seen;    /* ioctl events given to stats_ioctl */
	bool unsorted, counted_here;
};

/* Direction names, indexed by enum cut_xfer_dir ("HtoD", ..., "any", "memset"). */
extern const char *const cut_xfer_names[CUT_X_NDIRS];

/* A new accumulator keeping the ntop longest API calls. Exits (status 2) on no memory. */
struct cut_stats *stats_new(size_t ntop);
/* The same for the calls of another layer (CUT_RUNTIME): fns, categories, api_total and
 * untimed then count that layer's calls instead of the driver API's. */
struct cut_stats *stats_new_layer(size_t ntop, enum cut_layer layer);
/* Adds one event (meta records count lost events, and say which process a record is of:
 * procs.h; other layers their time). An ioctl counts in the calls around it as stats_ioctl
 * says. */
void stats_add(struct cut_stats *st, const struct cut_event *ev);
/*
 * Counts ioctl ev (layer ioctl; others are ignored) in the innermost call of st's layer around
 * it on its thread, as cutmerge does (cut-events(5): nioctl), for the calls that came without
 * cutmerge's count (a trace straight from cutcapture): the ioctls of each function and the
 * time in them then read the same with or without cutmerge. stats_add does it for st's own
 * ioctl events; a stats of the runtime layer, fed only runtime calls, gets its ioctls here.
 * Needs each input in ts order (cutcapture's is): out of order, nothing is counted
 * here (ioctls_unsorted).
 */
void stats_ioctl(struct cut_stats *st, const struct cut_event *ev);
/* The events that follow are of another input (the next file): each input is in order of its
 * own, as traces of several processes given one after another are. */
void stats_next_input(struct cut_stats *st);
/* Computes medians and standard deviations and sorts functions and slow calls. */
void stats_finish(struct cut_stats *st);
void stats_free(struct cut_stats *st);
/* Direction of a transfer call: args "dir" when present, else memset or the direction its
 * flags say (classify.h), else CUT_X_ANY. */
enum cut_xfer_dir stats_xfer_dir(const struct cut_event *ev);

#endif
