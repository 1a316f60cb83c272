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
 * 3. Switching a device from one process to another takes time that is neither's work: the
 *    device's switch time is the median gap, over at least SWITCH_SEEN_MIN transitions, from
 *    a piece with an exact end to the exact start (its START event's) of another process's
 *    piece submitted before that end, with no work ending or starting in between (that piece
 *    waited for the switch, not for a kernel preempted later).
 *    A piece with an exact start whose latest end before it is another process's ran first
 *    after a switch: its START ran as the device switched in, and its work began later than
 *    a START otherwise says. Against CUPTI on an H100 such pieces came out 0.2 to 1.0 of
 *    their process's stream operation (gap_ns, cut-events(5)) long, 0.8 on average where the
 *    other's kernel was preempted, 0.65 where the other had let go (4,600 pieces); the pieces
 *    after them in the same turn were right. Which end of that a kernel takes is its
 *    parameters' size (args.params): on H200s, kernels alike but for it, first after a switch,
 *    started 0.22-0.43 us after their START with 16 or 32 bytes, 1.1-1.55 us with 272 to 4,016
 *    (a cuBLAS gemm's 736 likewise, in light processes beside a heavy one and a deep one;
 *    tests/gpu/switch_setup.sh), and queued in their own process's turn, 80 and 144 bytes
 *    started as 16 did, 272 and more up to 0.3 us later. So a kernel handed more than
 *    SWITCH_PARAMS_SMALL bytes starts an operation (1.2-1.3 us) later,
 *    one handed fewer a quarter of one, and a piece whose parameters are not known (no
 *    args.params: not a kernel, or an older trace) three quarters (the mean of a light
 *    process's mix: a process's busy time is a sum); the switch time is measured to there.
 *    A piece whose start and end are both exact and that holds another's turn was preempted
 *    if its process had held the device a time slice before that turn (at least
 *    SLICE_HELD_MIN since the latest end of another process's piece, the two switches left
 *    out; with none before it, for how long is not known, and it is taken as preempted): it
 *    keeps its time, as the kernel's span, CUPTI's too, holds the turn. One whose process had
 *    held it less had let go with no kernel running (its START run, its kernel not yet taken
 *    up): its work ran after the turn, and it is taken as one started at its call (rule 1 and
 *    below). So is one whose kernel, launched alike (the same shape) in its process and timed
 *    by the device at both ends holding no other process's piece at least SWITCH_SEEN_MIN
 *    times (its twins), never took half as long as it would have run before the turn (from
 *    its start to the other's piece, less a switch): it would have ended before the device
 *    turned away. The holds of the preempted kernels measure the device's slice (their
 *    median, over SWITCH_SEEN_MIN of them at least): a kernel was preempted that long, less a
 *    switch, after the latest end before it of another process's piece, and a piece started at
 *    its call (or taken so) that ends inside it ran in that turn and starts no earlier than
 *    then. And a piece whose start was not timed (started at its call, taken so, or a bound)
 *    that ends inside another process's piece timed at both ends ran in a turn that kernel was
 *    preempted for, its kernel as its twins did: it starts no earlier than its end less the
 *    longest its twins took. (Where the
 *    other process had the device alone before, its slice runs out anywhere in the wait and
 *    the holds do not place it: on an H100, beside a process whose kernels never let go, the
 *    first launch of a light process's step kept 46-518 us of a 2 us kernel.)
 *    A piece started at its call (or taken so) whose latest end before its own, of any piece on
 *    its device, is another process's starts no earlier than a switch after that end: the
 *    device was that process's until then (a light process's first launch of a step, beside a
 *    heavy one that had just let go, kept the 130 us switch before its 2 us kernel).
 *    Where one process's time meets another's, the side whose piece is a bound (start from
 *    its call or a bound, or end a bound) and runs on across the meeting, or started from its
 *    call at it, loses the switch time next to it: a bound piece that holds another's turn
 *    held the two switches around it, not work (a light process whose START ran before the
 *    turn and whose END was recorded after it).
 *
 * Pieces of one process, of different devices, and pieces no other process's overlap are left
 * as they are. Afterwards no two processes' time overlaps on a device, and applying the rule
 * to what each kept (as pieces timed at both ends) changes nothing.
 */
struct cut_gpu_piece {
	int64_t start, end; /* as recorded; end >= start */
	uint64_t device;    /* the physical device: equal for pieces on one GPU */
	uint64_t proc;      /* the process */
	bool from_call;     /* its start is its call's return (args.start "call"), or its end
	                     * less its twins' (args.start "twins"): an estimate */
	bool start_exact;   /* its start is what the device timed (no args.start) */
	bool end_exact;     /* its end likewise (no args.end) */
	int64_t submit;     /* when its call began (args.submit), or -1 */
	int64_t op_ns;      /* its process's stream operation (its trailer's gap_ns), or 0 */
	int64_t params;     /* its kernel's parameters, bytes (args.params), or 0: not known */
	uint32_t shape; /* its kernel as launched (name, grid, block): pieces of one shape in one
	                   process launched the same kernel alike; 0 where not known */
	/* out: its first moment kept (its end where it kept none), the time it kept, and its
	 * parts kept, in order: (*parts)[first .. first + nparts) of cut_gpu_resolve; its
	 * device's switch time (rule 3), 0 where not measured */
	int64_t resolved, kept;
	size_t first, nparts;
	int64_t switch_ns;
	bool late; /* out: timed at both ends, it holds another's turn it was not preempted for */
};

/* Less than a process holds a device, the switches in and out left out, before another's turn
 * its kernel is preempted for: a tenth of an H100's time slice. There a process whose kernel
 * was preempted had held it 2.1-2.3 ms (2.36-2.6 ms with the switches), and a light one that
 * let go at once 20-30 us (0.3 ms with them). */
#define SLICE_HELD_MIN 250000

/* A kernel handed at most this many bytes of parameters starts a quarter of an operation after
 * a START run as its device switched in, one handed more a whole operation (rule 3): 144 bytes
 * were seen to behave as 16, 272 as 4,016. */
#define SWITCH_PARAMS_SMALL 256

/* Transitions a device's switch time is measured over, at least. */
#define SWITCH_SEEN_MIN 8

struct cut_gpu_span {
	int64_t s, e;
};

/* Applies the rule to the n pieces, in any order; sets each one's out members and *parts (a
 * new array of *nparts, for free(3)). Returns how many pieces lost time. Exits (status 2) on
 * no memory. */
size_t cut_gpu_resolve(struct cut_gpu_piece *p, size_t n, struct cut_gpu_span **parts,
                       size_t *nparts);

#endif
