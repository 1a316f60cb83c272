/* record.h: cutcapture's records (cutcapture.h) turned into cut events (cut-events(5)):
 * argument decoding, names for handles, threads and devices, and the reorder buffer that
 * writes everything in time order. Used by cutcapture.c only. */
#ifndef CUT_RECORD_H
#define CUT_RECORD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <linux/types.h>

#include "cutcapture.h"

/* Per-layer counts of what was written. */
struct rec_counts {
	uint64_t layer[8];   /* by enum cut_layer */
	uint64_t events;     /* all records but the header and trailer */
	uint64_t lost;       /* the sum of the counts of the lost records written */
	uint64_t unfinished; /* of which calls in flight when their thread ended */
};

/* Sets the output (a file descriptor) and the names the records refer to by number: driver
 * API functions by cookie (index into funcs) and kernel functions by index. The arrays must
 * outlive the capture. */
void rec_init(int fd, const char *const *funcs, size_t nfuncs, const char *const *kfuncs,
              size_t nkfuncs);

/* What the BPF side must do for function name: which arguments to read and when. All zero
 * for a function without a decoder (only its return code is recorded). */
struct cc_fdesc rec_fdesc(const char *name);

/* Devices whose ioctls are traced: every NVIDIA major of /proc/devices, plus those added.
 * dev_scan returns the number found. */
int rec_dev_scan(void);
/* Adds the device file at path (its exact major:minor) as a device of kind (CC_DEV_*).
 * Returns 0, or -1 with errno set when path is not a device. */
int rec_dev_add(const char *path, unsigned kind);
/* The devices for the BPF side; returns how many were copied (at most max). */
size_t rec_devs(struct cc_dev *out, size_t max);

/* The ring buffer's callback: keeps a copy of the record until rec_flush writes it. */
int rec_ring(void *ctx, void *data, size_t size);
/* Queues a "lost" record. */
void rec_lost(uint64_t ts, const char *layer, uint64_t count, const char *reason);
/* Queues a "process" record for a process that existed before the capture started. */
void rec_process(uint64_t ts, uint32_t pid, uint32_t ppid, const char *comm, const char *cmdline);
/*
 * For the scan of threads in flight: thread tid has been off the CPU since off_ts. When it
 * has been so for longer than max_age, the period so far, up to upto, is queued as a span of
 * its own (its "split" argument set) so that the output need not wait for it. Returns the
 * time from which the thread still holds the output back.
 */
uint64_t rec_offcpu_hold(uint32_t tid, uint64_t off_ts, uint32_t state, uint32_t cpu, uint64_t now,
                         uint64_t max_age, uint64_t upto);
/* Writes, in order of ts, every queued record that starts before upto (UINT64_MAX: all). */
void rec_flush(uint64_t upto);
/* Records queued and not yet written. */
size_t rec_pending(void);
/* What was written so far. */
struct rec_counts rec_counts(void);
/* Writes one already formatted line (header, trailer). */
void rec_write_line(const char *line, size_t len);
/* Frees what the records kept. */
void rec_free(void);

#endif
