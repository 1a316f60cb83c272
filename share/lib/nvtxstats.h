/* nvtxstats.h: time by NVTX range for cutstat: per (domain, range name) the ranges' count and
 * total, and the time of the runtime calls, driver API calls, ioctls and GPU work inside them
 * (GPU work inside a range: work whose submitting call, the same args.corr, lies in it). */
#ifndef CUT_NVTXSTATS_H
#define CUT_NVTXSTATS_H

#include <stdbool.h>
#include <stdint.h>

#include "event.h"

struct cut_nvtx_range {
	const char *domain; /* "" for the default domain */
	const char *name;
	int64_t count, total;                 /* ranges and the sum of their durations */
	int64_t runtime, api, ioctl, gpu;     /* ns of each layer's events inside */
	int64_t nruntime, napi, nioctl, ngpu; /* and how many */
};

struct cut_nvtx_stats {
	struct cut_nvtx_range *ranges; /* after nvtxstats_finish: by total, longest first */
	size_t nranges;
	int64_t marks;  /* NVTX instants (marks), counted only */
	bool saturated; /* a sum reached INT64_MAX and stayed there: a lower bound */
	void *priv;
};

/* A new accumulator. Exits (status 2) on no memory. */
struct cut_nvtx_stats *nvtxstats_new(void);
/*
 * Adds an event. Events must come in time order (cuthook's and cutmerge's output is): a range
 * holds the events of its thread (pid, tid) that start at or after its start and before its
 * end, at any depth; an event inside two ranges of the same (domain, name) counts once for it.
 */
void nvtxstats_add(struct cut_nvtx_stats *s, const struct cut_event *ev);
/* Sorts the table. */
void nvtxstats_finish(struct cut_nvtx_stats *s);
void nvtxstats_free(struct cut_nvtx_stats *s);

#endif
