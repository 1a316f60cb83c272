/* drain.h: what comes out of cutcapture's ring buffer and what the loader adds to it, held in
 * time order (order.h) until nothing older can still arrive, then decoded (decode.h). */
#ifndef CUT_CAPTURE_DRAIN_H
#define CUT_CAPTURE_DRAIN_H

#include <stddef.h>
#include <stdint.h>

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
/* Frees what is still queued. */
void drain_free(void);

#endif
