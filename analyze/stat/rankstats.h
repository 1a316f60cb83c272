/* rankstats.h: the per-rank view for cutstat, for traces that carry several ranks (a record's
 * rank, else its process's by the rule of procs.h): per rank its records, driver API and
 * runtime time, how long its GPU work kept a GPU busy and its
 * costliest kernel; and per NCCL kernel name (a collective's by cut_is_collective, classify.h)
 * the rank that waited most and the straggler, by the rule of collwait_pick (collwait.h). */
#ifndef CUT_RANKSTATS_H
#define CUT_RANKSTATS_H

#include <stdbool.h>
#include <stdint.h>

#include "event.h"

struct cut_rank_row {
	int64_t rank;
	int64_t events;                 /* records (meta left out) */
	int64_t api_calls, api;         /* timed driver API calls and their total ns */
	int64_t runtime_calls, runtime; /* timed runtime calls and their total ns */
	int64_t work, gpu_busy; /* GPU work and the ns covered by at least one piece of it */
	const char *top_kernel; /* the kernel name with the largest total on the rank; NULL: none */
	int64_t top_total;
};

struct cut_rank_straggler {
	const char *name; /* the NCCL kernel */
	int64_t ranks;    /* ranks that ran it */
	int64_t rank;     /* the one that waited most: the largest total */
	int64_t max, min; /* the largest and smallest total of a rank, ns */
	int64_t least;    /* the straggler: the rank of the smallest total */
};

struct cut_rank_stats {
	struct cut_rank_row *rows; /* after rankstats_finish: by rank */
	size_t nrows;
	struct cut_rank_straggler *nccl; /* after rankstats_finish: by max, largest first */
	size_t nnccl;
	int64_t unranked; /* events (not meta) of processes of no known rank, not in the rows */
	bool saturated;   /* a sum reached INT64_MAX and stayed there: a lower bound */
	void *priv;
};

/* A new accumulator. Exits (status 2) on no memory. */
struct cut_rank_stats *rankstats_new(void);
/* Adds an event; meta records only for what they say of their process's host and rank. */
void rankstats_add(struct cut_rank_stats *s, const struct cut_event *ev);
/* Computes busy times, top kernels and stragglers. */
void rankstats_finish(struct cut_rank_stats *s);
void rankstats_free(struct cut_rank_stats *s);

#endif
