/* gpustats.h: the numbers of the gpu layer (cut-events(5), GPU work) that cutstat reports, in
 * the style of nsys stats' cuda_gpu_kern_sum and cuda_gpu_mem_time_sum: per kernel (or copy
 * direction, memset, graph) its instances and time; copies by direction with bytes and the
 * device-side bandwidth; how busy each device, stream and process kept the GPU (the union of
 * its work's intervals, not their sum; a process is a pid on a host, by the rule of procs.h), and
 * how long processes' work overlapped on a device; and the launch latency, submit to start.
 * Where processes shared a device, every number is of their work as gpushare.h tells it
 * apart, unless as_recorded. */
#ifndef CUT_GPUSTATS_H
#define CUT_GPUSTATS_H

#include <stdbool.h>
#include <stdint.h>

#include "event.h"
#include "summary.h"

struct cut_gpu_name {
	const char *name;
	const char *cat; /* kernel, memcpy, memset, graph */
	int64_t count, total, min, max, bytes;
	/* Bandwidth from what is measured: the bytes and time of the pieces whose start and end
	 * are (cut-events(5): args.start or args.end "bound" are left out, counted in bounded). */
	int64_t bw_bytes, bw_time, bounded;
	double med, stddev;
	double avg;           /* exact where total saturated */
	struct cut_hist hist; /* summary.h */
};

/* How busy one device, stream or process kept the GPU. */
struct cut_gpu_busy {
	/* "GPU-uuid" or "pid P device D"; "pid P device D stream S"; "pid P": with " on HOST"
	 * after the pid when the processes are on several hosts (cut_procs_label) */
	const char *key;
	int64_t proc;     /* the process (procs.h); -1 for a device shared by processes */
	int64_t pid;      /* 0 for a device shared by processes */
	const char *host; /* the process's host, NULL when none is known (or shared) */
	int64_t rank;     /* the process's rank, -1 when none is known (or shared) */
	int64_t work;     /* pieces of work */
	int64_t busy;     /* ns covered by at least one piece */
	int64_t first, last;
	/* A device's only: the processes whose work ran on it, and how long their work overlapped
	 * (each process's busy on it, summed, less the device's own), as told apart (gpushare.h:
	 * none unless as_recorded) and as recorded; the pieces whose start the rule moved, and
	 * by how long in all; the time its switches from one process to another took (gpushare.h,
	 * rule 3), 0 where not measured. */
	int64_t procs, overlap, overlap_recorded, resolved, resolved_ns, switch_ns;
};

/* A piece of work as gpustats_finish kept it (cutturns): the time it kept and its parts kept,
 * told_parts[first .. first + nparts), in order (none where it kept nothing: resolved is then
 * its end). shared: its device was used by several processes, and the parts are told apart. */
struct cut_gpu_told {
	int64_t kept, resolved;
	size_t first, nparts;
	bool shared;
};
struct cut_gpu_told_part {
	int64_t s, e;
};

struct cut_gpu_stats {
	/* Set before gpustats_finish: the work of processes sharing a device is taken as
	 * recorded (MPS runs them at once), not told apart by gpushare.h's rule. */
	bool as_recorded;
	/* Set before gpustats_finish: told[i] is the i-th piece of work added (gpu events with a
	 * duration of 0 or more, in the order added) as kept; ntold of them. */
	bool want_told;
	struct cut_gpu_told *told;
	size_t ntold;
	struct cut_gpu_told_part *told_parts;
	size_t ntold_parts;
	bool told_earlier; /* some piece kept a moment before its start as recorded */
	/* Some piece carried args.told (cutturns wrote the trace): the work was told apart
	 * already, and is taken as recorded. */
	bool told_before;
	int64_t count, total;          /* pieces of work and the sum of their durations */
	/* Of them, those whose start or end is only a bound (args.start or args.end "bound": the
	 * work ran inside its span, perhaps for less of it), and the sum of their durations. */
	int64_t bounded, bounded_ns;
	int64_t resolved, resolved_ns; /* pieces whose start the rule moved, and by how long */
	struct cut_gpu_name *names;    /* after gpustats_finish: by total, longest first */
	size_t nnames;
	struct cut_gpu_busy *devices, *streams, *procs; /* after gpustats_finish */
	size_t ndevices, nstreams, nprocs;
	int64_t lat_count; /* work with a submit time */
	double lat_med, lat_p90, lat_p99;
	int64_t lat_min, lat_max;
	bool saturated; /* a sum reached INT64_MAX and stayed there: a lower bound */
	void *priv;
};

/* A new accumulator. Exits (status 2) on no memory. */
struct cut_gpu_stats *gpustats_new(void);
/* Adds an event: gpu work, and device records (which name a device by its uuid); every other
 * record for what it says of its process's host and rank (procs.h): give it all of them. */
void gpustats_add(struct cut_gpu_stats *g, const struct cut_event *ev);
/* Tells apart the work of processes sharing a device, computes medians, busy times and
 * latencies; sorts the tables. */
void gpustats_finish(struct cut_gpu_stats *g);
void gpustats_free(struct cut_gpu_stats *g);

#endif
