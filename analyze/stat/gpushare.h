/* gpushare.h: GPU work of processes that time-slice one device, told apart. The one rule
 * cutstat's GPU section applies (cut-events(5), GPU work on a shared device). */
#ifndef CUT_GPUSHARE_H
#define CUT_GPUSHARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The rule. A GPU without MPS runs one process's work at a time; a piece's end is exact (its
 * event runs right after the work) where its start may be early, and a piece may hold
 * another process's turn inside it: an H100 preempts a kernel when its process's time slice
 * runs out, and the kernel's span then holds the other's turn, as CUPTI records it too. So:
 *
 * 1. A piece whose start came from its call (an upper bound on its length: cut-events(5))
 *    starts no earlier than the latest end, before its own, of a piece of another process on
 *    its device: its work waited for that process's turn. Pieces are taken in order of end
 *    (then the later start first, then process, then their order), and a piece moved to no
 *    length no longer counts.
 * 2. Then, at each moment that pieces of several processes cover on one device, the process
 *    whose covering piece ends first ran; the others' pieces lose that moment. A piece that
 *    holds another process's piece keeps its time before and after it; in a chain of
 *    overlapping pieces each keeps the time after the end before it.
 *
 * Pieces of one process, of different devices, and pieces no other process's overlap are left
 * as they are. Afterwards no two processes' time overlaps on a device, and applying the rule
 * to what each kept changes nothing.
 */
struct cut_gpu_piece {
	int64_t start, end; /* as recorded; end >= start */
	uint64_t device;    /* the physical device: equal for pieces on one GPU */
	uint64_t proc;      /* the process */
	bool from_call;     /* its start is its call's return (args.start "call") */
	/* out: its first moment kept (its end where it kept none), the time it kept, and its
	 * parts kept, in order: (*parts)[first .. first + nparts) of cut_gpu_resolve */
	int64_t resolved, kept;
	size_t first, nparts;
};

struct cut_gpu_span {
	int64_t s, e;
};

/* Applies the rule to the n pieces, in any order; sets each one's out members and *parts (a
 * new array of *nparts, for free(3)). Returns how many pieces lost time. Exits (status 2) on
 * no memory. */
size_t cut_gpu_resolve(struct cut_gpu_piece *p, size_t n, struct cut_gpu_span **parts,
                       size_t *nparts);

#endif
