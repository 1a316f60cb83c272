/* order.h: cutcapture's reorder buffer. Records from the ring buffer arrive out of order (per
 * CPU, and a call is recorded at its return): they are held until nothing older can still
 * arrive, then handed out by start time, ties in order of arrival. An off-CPU period too long
 * to wait for is handed out in parts. No I/O: Check suite tests/unit/test_order.c. */
#ifndef CUT_CAPTURE_ORDER_H
#define CUT_CAPTURE_ORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/types.h>

#include "heap.h"
#include "records.h"

/* An off-CPU period already handed out up to upto. ended: the period is over (the thread was
 * seen off the CPU again since, or at the end is no longer off since off_ts), but its record
 * may still be in the ring. */
struct order_split {
	uint32_t tid;
	bool ended;
	uint64_t off_ts, upto;
};

/* All zero is an empty buffer. */
struct order {
	struct cut_heap heap; /* the records held, on (ts, order of arrival) */
	uint64_t seq;
	struct order_split *splits;
	size_t nsplits, capsplits;
};

/* Holds rec (allocated with malloc; the buffer owns it from now). Exits with status 2 when
 * memory runs out. */
void order_push(struct order *o, struct cc_hdr *rec);
/* Takes out the earliest record that starts before upto, or returns NULL when none does. The
 * caller frees it. */
struct cc_hdr *order_pop(struct order *o, uint64_t upto);
/* Records held. */
size_t order_pending(const struct order *o);
/*
 * For an off-CPU record (CC_EV_SCHED) from the ring, before order_push: when the start of its
 * period was handed out already in parts (order_offcpu_hold), rec is cut to the rest.
 */
void order_offcpu_arrived(struct order *o, struct cc_hdr *rec);
/*
 * For the scan of threads in flight: thread tid has been off the CPU since off_ts, and it is
 * now now. Returns the time from which the thread still holds the output back. Once the
 * period (or the part of it not handed out yet) has lasted max_age, its part up to upto is due
 * as a span of its own: then *part is set to the part's start, the caller pushes a record for
 * [*part, upto), and upto is returned. Otherwise *part is 0 (a period never starts at 0:
 * off_ts is a clock reading, 0 in cc_thread meaning "on the CPU").
 */
uint64_t order_offcpu_hold(struct order *o, uint32_t tid, uint64_t off_ts, uint64_t now,
                           uint64_t max_age, uint64_t upto, uint64_t *part);
/*
 * First thing in each scan of the threads in flight: forgets the periods that ended unseen
 * before the last scan and returns how many. Their records were in the ring when the ring was
 * read after that scan and have not come: the rest of each period is lost.
 */
size_t order_offcpu_sweep(struct order *o);
/*
 * At the end, before the ring is read for the last time: every period handed out in part
 * whose thread still_off (given arg) does not say is off the CPU since off_ts has ended, and its
 * record must come in that last read; order_offcpu_sweep then counts those that did not.
 */
void order_offcpu_end(struct order *o, bool (*still_off)(uint32_t tid, uint64_t off_ts, void *arg),
                      void *arg);
/* Frees the records held and the buffer. */
void order_free(struct order *o);

#endif
