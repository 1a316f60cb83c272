/* gpushare.h: GPU work of processes that time-slice one device, told apart. The one rule that
 * cutstat's GPU section and cutmerge apply (cut-events(5), GPU work on a shared device). */
#ifndef CUT_GPUSHARE_H
#define CUT_GPUSHARE_H

#include <stddef.h>
#include <stdint.h>

/*
 * The rule. A GPU without MPS runs one process's work at a time, switching processes between
 * pieces of work (on an H100, never inside a kernel shorter than its time slice: CUPTI saw
 * none), and a piece's end is exact (its event runs right after the work) where its start may
 * be early: a start taken from the submitting call, or from an event recorded before the
 * work, comes before a switch to another process that the work then waited out. So where
 * pieces of two processes overlap on one device, the one that ended first ran, and the other
 * started after it: each piece's start moves to the latest end, before its own, of a piece of
 * another process on its device that overlaps it. Pieces are taken in order of end (then the
 * later start first, then process, then their order in the array), and a piece moved to no
 * length is no longer evidence. A piece nested in another's span thus cuts the container's
 * start to the nested one's end, a chain of three moves each start to the end before it,
 * pieces of one process or of two devices are left as they are. The result has no two
 * pieces of different processes on one device overlapping, and resolving it again changes
 * nothing.
 */
struct cut_gpu_piece {
	int64_t start, end; /* as recorded; end >= start */
	uint64_t device;    /* the physical device: equal for pieces on one GPU */
	uint64_t proc;      /* the process */
	int64_t resolved;   /* out: the start the rule gives it, start <= resolved <= end */
};

/* Applies the rule to the n pieces (in any order), setting each one's resolved start; returns
 * how many moved. Exits (status 2) on no memory. */
size_t cut_gpu_resolve(struct cut_gpu_piece *p, size_t n);

#endif
