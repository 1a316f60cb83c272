/* drain.h: the capture loop. What comes out of cutcapture's ring buffer and what the loader
 * adds to it is held in time order (order.h) until nothing older can still arrive (the calls,
 * system calls and off-CPU periods in flight, from the BPF thread table), then decoded
 * (decode.h); the BPF side's counters become lost records. */
#ifndef CUT_CAPTURE_DRAIN_H
#define CUT_CAPTURE_DRAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/types.h>

#include "records.h"

struct cutcapture_bpf;
struct ring_buffer;
struct target;

struct drain {
	struct cutcapture_bpf *skel;
	struct ring_buffer *rb;
	const char *out_name;            /* the trace's file, for messages */
	bool quiet;                      /* no progress line */
	bool untraced;                   /* the trace could not be written: the probes are gone */
	bool detaching;                  /* returns without entries are expected from now on */
	uint64_t sched_min;              /* --sched-min: shorter off-CPU periods leave no record */
	uint64_t counters[CC_NCOUNTERS]; /* the BPF side's, summed over CPUs */
	uint64_t lost, unmatched;
	uint64_t start, last_scan, last_count, last_progress, last_events, last_flush;
	bool progress_tty;
	int ncpu;
	struct cc_thread *vals; /* a batch of the thread table */
	__u32 *keys;
};

/* Opens the ring buffer of skel. Returns 0, or -1 saying why. */
int drain_open(struct drain *d, struct cutcapture_bpf *skel);
/* Takes records until the traced processes are done (target.h) or a signal ends the capture,
 * writing them as they can no longer be preceded. When the trace cannot be written, every
 * probe comes off and, with a command, the loop waits for it untraced. */
void drain_run(struct drain *d, struct target *t);
/* After drain_run: detaches the api layer and the process tree, takes everything left and
 * writes it; calls in flight are counted lost. */
void drain_finish(struct drain *d);
/* The progress line on standard error (every second on a terminal, else every 10 s; the last
 * one at the end). */
void drain_progress(struct drain *d, uint64_t now, bool last);
/* Frees the ring buffer and what is still queued. */
void drain_close(struct drain *d);

/* The ring buffer's callback: keeps a copy of the record until drain_flush writes it. */
int drain_ring(void *ctx, void *data, size_t size);
/* Queues a "lost" record; layer and reason must outlive the capture. */
void drain_lost(uint64_t ts, const char *layer, uint64_t count, const char *reason);
/* Queues a "process" record for a process that existed before the capture started. */
void drain_process(uint64_t ts, uint32_t pid, uint32_t ppid, const char *comm, const char *cmdline);
/*
 * For the scan of threads in flight: thread tid has been off the CPU since off_ts. When it
 * has been so for longer than max_age, the period so far, up to upto, is queued as a span of
 * its own (its "split" argument set) so that the output need not wait for it. Returns the
 * time from which the thread still holds the output back.
 */
uint64_t drain_offcpu_hold(uint32_t tid, uint64_t off_ts, uint32_t state, uint32_t cpu,
                           uint64_t now, uint64_t max_age, uint64_t upto);
/* Writes, in order of ts, every queued record that starts before upto (UINT64_MAX: all). */
void drain_flush(uint64_t upto);
/* Records queued and not yet written. */
size_t drain_pending(void);

#endif
