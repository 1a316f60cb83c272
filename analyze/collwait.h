/* collwait.h: GPU time each rank of a distributed job spent inside NCCL collective kernels
 * waiting for the last rank to arrive (the gpu layer): instances of a collective matched across
 * ranks, each rank's wait in an instance attributed to the rank that arrived last. */
#ifndef CUT_COLLWAIT_H
#define CUT_COLLWAIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event.h"

/*
 * The rule. An NCCL kernel is GPU work (layer gpu, cat kernel) whose name is a collective's
 * by cut_is_collective (classify.h: ncclDevKernel_*, ncclKernel_*, mangled or not). Its rank is the
 * event's own rank, else its process's by the rule of procs.h. The participants are
 * the ranks that ran any NCCL kernel. The k-th kernel of a name on a rank, in start order, is
 * matched with the k-th of that name on every other participant: an instance. For k beyond the
 * count of some participant the kernels are unmatched (a trace cut off, or a collective of a
 * sub-communicator): counted, never used. In an instance, the last rank to arrive is the one whose
 * kernel started latest (the lowest rank of equal starts); every other rank waited for it from its
 * own start to that latest start, unless its kernel had ended by then: then it did not wait (a role
 * that need not wait, as a broadcast's root may, or clocks of two hosts that disagree) and is
 * counted early.
 */

struct cut_collwait_rank {
	int64_t rank;
	int64_t collectives; /* instances it took part in */
	int64_t in_ns;       /* its kernels' total duration in them */
	int64_t wait_ns;     /* of which waiting for the last rank */
	int64_t last;        /* instances it arrived last at */
	int64_t early;       /* instances its kernel ended before the last rank's started */
	int64_t unmatched;   /* its NCCL kernels in no instance */
	int64_t streams;     /* distinct streams its NCCL kernels ran on */
	int64_t most;        /* the rank it waited for longest in total; -1 when none */
};

/* Instances where rank waited (more than 0 ns) for waited_for, which arrived last. */
struct cut_collwait_pair {
	int64_t rank, waited_for;
	int64_t count, wait_ns;
};

struct cut_collwait {
	struct cut_collwait_rank *ranks; /* after collwait_finish: the participants, by rank */
	size_t nranks;
	struct cut_collwait_pair *pairs; /* after collwait_finish: by rank, then waited_for */
	size_t npairs;
	int64_t most, straggler; /* by collwait_pick over the ranks' in_ns; -1: fewer than 2 */
	int64_t instances;       /* matched */
	int64_t unmatched;       /* NCCL kernels in no instance, all ranks */
	int64_t unranked;        /* NCCL kernels of no known rank, left out */
	bool saturated;          /* a sum reached INT64_MAX and stayed there: a lower bound */
	void *priv;
};

/*
 * The one rule for "waited most" and "straggler" in a collective, used by cutstat's per-rank
 * view, its job view (summaries of one rank each) and cutgaps: every rank does the same work in
 * a collective and waits inside its kernel for the last rank to arrive, so the rank whose
 * instances took longest in total waited most, and the one whose took least arrived last: the
 * straggler the others waited for. Totals, not medians: waits add up, and a few long ones are
 * time lost as much as many short ones. Ties go to the lowest rank (then the first given).
 */
struct cut_coll_total {
	int64_t rank, total; /* a rank and its total ns inside the collective's kernels */
};
/* Picks by the rule among the n >= 1 totals of v: *most and *least get their indices. */
void collwait_pick(const struct cut_coll_total *v, size_t n, size_t *most, size_t *least);

/* A new accumulator. Exits (status 2) on no memory. */
struct cut_collwait *collwait_new(void);
/* Takes an event: NCCL kernels are kept (32 bytes each, to the end: the participants are known
 * only then); every other record for what it says of its process's rank (procs.h): give it
 * all of them. Events may come in any order. */
void collwait_add(struct cut_collwait *w, const struct cut_event *ev);
/* Matches the instances and fills ranks, pairs and the counts. Call once. */
void collwait_finish(struct cut_collwait *w);
void collwait_free(struct cut_collwait *w);

#endif
