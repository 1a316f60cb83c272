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
	int64_t ioctls, ioctl_ns; /* from cutmerge's nioctl/ioctl_ns */
	double med, stddev;       /* valid after stats_finish; stddev is the sample one */
	double avg;               /* valid after stats_finish: exact where total saturated */
	struct cut_hist hist;     /* after stats_finish (summary.h), for summaries that merge */
	/* private */
	double mean, m2;
	__int128 sum; /* total, unsaturated */
	int64_t *durs;
	size_t cap;
};

struct cut_slow_call {
	int64_t ts, dur, pid, tid;
	char *name;
};

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
	enum cut_layer layer; /* whose calls fill fns: CUT_API unless from stats_new_layer */
	bool have_nioctl;
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
};

/* Direction names, indexed by enum cut_xfer_dir ("HtoD", ..., "any", "memset"). */
extern const char *const cut_xfer_names[CUT_X_NDIRS];

/* A new accumulator keeping the ntop longest API calls. Exits (status 2) on no memory. */
struct cut_stats *stats_new(size_t ntop);
/* The same for the calls of another layer (CUT_RUNTIME): fns, categories, api_total and
 * untimed then count that layer's calls instead of the driver API's. */
struct cut_stats *stats_new_layer(size_t ntop, enum cut_layer layer);
/* Adds one event (meta records count lost events, and say which process a record is of:
 * procs.h; other layers their time). */
void stats_add(struct cut_stats *st, const struct cut_event *ev);
/* Computes medians and standard deviations and sorts functions and slow calls. */
void stats_finish(struct cut_stats *st);
void stats_free(struct cut_stats *st);
/* Direction of a transfer call: args "dir" when present, else memset or the direction its
 * flags say (classify.h), else CUT_X_ANY. */
enum cut_xfer_dir stats_xfer_dir(const struct cut_event *ev);

#endif
