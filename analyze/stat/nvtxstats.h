/* nvtxstats.h: time by NVTX range for cutstat: per (domain, range name) the ranges' count and
 * total, and the time of the runtime calls, driver API calls, ioctls and GPU work inside them
 * (GPU work inside a range: work whose submitting call, the same args.corr, lies in it). */
#ifndef CUT_NVTXSTATS_H
#define CUT_NVTXSTATS_H

#include <stdbool.h>
#include <stdint.h>

#include "event.h"
#include "summary.h"

struct cut_nvtx_range {
	const char *domain; /* "" for the default domain */
	const char *name;
	int64_t count, total;                 /* ranges and the sum of their durations */
	int64_t runtime, api, ioctl, gpu;     /* ns of each layer's events inside */
	int64_t nruntime, napi, nioctl, ngpu; /* and how many */
	int64_t min, max;                     /* the ranges' durations: extremes and */
	struct cut_hist hist;                 /* histogram (summary.h), for cutstat -j */
};

struct cut_nvtx_stats {
	struct cut_nvtx_range *ranges; /* after nvtxstats_finish: by total, longest first */
	size_t nranges;
	int64_t marks;  /* NVTX instants (marks), counted only */
	bool saturated; /* a sum reached INT64_MAX and stayed there: a lower bound */
	bool fold;      /* names of emit_nvtx() counted by their operator (nvtxstats_new) */
	void *priv;
};

/* A new accumulator; fold: ranges named by PyTorch's emit_nvtx() are counted by their
 * operator (cut_nvtx_op_len). Exits (status 2) on no memory. */
struct cut_nvtx_stats *nvtxstats_new(bool fold);
/*
 * Adds an event. Events must come in time order (cuthook's and cutmerge's output is): a range
 * holds the events of its thread (its process, a pid on a host by procs.h, and tid) that start
 * at or after its start and before its end, at any depth; an event inside two ranges of the
 * same (domain, name) counts once for it. Give it every record (meta ones say which process
 * a record is of).
 */
void nvtxstats_add(struct cut_nvtx_stats *s, const struct cut_event *ev);
/* Sorts the table. */
void nvtxstats_finish(struct cut_nvtx_stats *s);
void nvtxstats_free(struct cut_nvtx_stats *s);
/*
 * The length of the operator's name at the start of an NVTX range name as PyTorch's
 * emit_nvtx() writes it: the name less its fields at the end, each ", KEY = VALUE" with KEY
 * seq or op_id and VALUE an integer, or KEY sizes or input_op_ids and VALUE a list in brackets
 * ("aten::addmm, seq = 50, op_id = 366, sizes = [[32, 64], [64]]" gives 11, "aten::addmm").
 * strlen(name) when it ends in no such field or nothing would be left before them. Linear in
 * the length of name.
 */
size_t cut_nvtx_op_len(const char *name);

#endif
