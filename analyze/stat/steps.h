/* steps.h: cutstat -s: per instance of an NVTX range (a training step), per process, where its
 * time went, as HTA's per-iteration breakdown: its duration, how much of it the process's GPU
 * work covered, how much its threads spent in CUDA calls and in synchronising ones, the kernel
 * that took most of it; and per process the median and spread of the durations and the steps
 * that stand out. */
#ifndef CUT_STEPS_H
#define CUT_STEPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event.h"

/*
 * The instances: NVTX records (layer nvtx) with a dur whose cat is not "mark", of any domain,
 * on any thread, whose name is the range's exactly; numbered from 1 in each process (a pid on
 * a host, procs.h) in order of their start, of equal starts in the trace's order; a range
 * nested in another of its name counts too (the rule of cutslice -r -n). The window of an
 * instance is [ts, ts + dur). In it, of the instance's process:
 *   gpu_busy  the time covered by at least one piece of its GPU work (layer gpu), clipped to
 *             the window: the union, not the sum;
 *   calls     the time at least one of its threads was inside a runtime or driver API call
 *             (the union of their spans, so a runtime call and the driver calls inside it
 *             count once);
 *   sync      the same for the calls of the sync category (cutstat's table for the driver
 *             API, the runtime table or the record's cat for the runtime);
 *   top       the kernel name whose pieces covered most of the window (each piece clipped to
 *             it, summed per name; of equal totals, the name first in strcmp order).
 * Per process, over its instances' durations: the median, p10 and p90 (quantiles by linear
 * interpolation between the sorted durations: the q-quantile of n is at (n - 1) q, as
 * numpy.percentile and Python's statistics.quantiles(method="inclusive") compute them), the
 * spread, p90 - p10 (the width of the middle 80%), and the outliers: the instances longer than
 * p90 + spread.
 */
struct cut_step {
	size_t proc;       /* the process, an index of procs.h's order */
	const char *host;  /* NULL when none is known */
	int64_t pid, rank; /* rank -1 when none is known */
	int64_t n;         /* the instance's number in its process, from 1 */
	int64_t ts, dur;
	int64_t gpu_busy, calls, sync;
	const char *top; /* NULL: no kernel ran in the window */
	int64_t top_ns;
	bool outlier;
};

struct cut_step_proc {
	size_t proc;
	const char *host;
	int64_t pid, rank;
	int64_t steps;
	double med, p10, p90, spread, threshold; /* threshold: p90 + spread */
	int64_t outliers;
};

struct cut_steps {
	const char *range;
	struct cut_step *steps; /* after steps_finish: by process (in the order met), then n */
	size_t nsteps;
	struct cut_step_proc *procs; /* after steps_finish: the processes with instances */
	size_t nprocs;
	size_t nhosts; /* hosts the trace's processes are on */
	void *priv;
};

/* A new accumulator for the instances of the NVTX range named range (copied). Exits (status
 * 2) on no memory. */
struct cut_steps *steps_new(const char *range);
/* Adds an event: every record, for its process (procs.h); the calls, GPU work and instances
 * are kept (16 bytes each, 24 for a kernel) to the end, in any order. */
void steps_add(struct cut_steps *s, const struct cut_event *ev);
/* Numbers the instances and fills steps and procs. Call once. */
void steps_finish(struct cut_steps *s);
void steps_free(struct cut_steps *s);
/* The q-quantile (0 <= q <= 1) of the n >= 1 sorted values of v, by the rule above. */
double steps_quantile(const int64_t *v, size_t n, double q);

#endif
