/* decode.h: cutcapture's records (records.h) turned into cut events (cut-events(5)): one
 * function per record kind, and what was written. */
#ifndef CUT_CAPTURE_DECODE_H
#define CUT_CAPTURE_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/types.h>

#include "records.h"
#include "event.h"

/* Record kinds the loader queues itself, beside the BPF side's CC_EV_*. */
enum { EV_LOST = 100, EV_PROC };

/* A "lost" record (EV_LOST); the strings must outlive it. EV_PROC is a struct cc_task. */
struct lost_rec {
	struct cc_hdr h;
	uint64_t count;
	const char *layer;
	const char *reason;
};

/* Per-layer counts of what was written. */
struct decode_counts {
	uint64_t layer[CUT_NLAYERS]; /* by enum cut_layer */
	uint64_t events;             /* all records but the header and trailer */
	uint64_t lost;               /* the sum of the counts of the lost records written */
	uint64_t unfinished;         /* of which calls in flight when their thread ended */
};

/* The names the records refer to by number: driver API functions by cookie (index into
 * funcs) and kernel functions by index. The arrays must outlive the capture. */
void decode_init(const char *const *funcs, size_t nfuncs, const char *const *kfuncs,
                 size_t nkfuncs);
/* What the BPF side must read of the calls of the function of cookie (api/call.h says). All
 * zero for a function without a decoder (only its return code is recorded). */
struct cc_fdesc decode_fdesc(size_t cookie);
/* Writes record h to the output (output.h), preceded by the thread record the first time
 * its thread appears, and followed by the symbol record of a handle it named. */
void decode_record(const struct cc_hdr *h);
/* The layers libcuthook records for the command ("api, runtime, gpu, nvtx"; NULL: none), for
 * the process records of programs whose loader ignores the preload (their "preload" member, and
 * a line on stderr). The string must outlive the capture. */
void decode_preload(const char *layers);
/* What was written so far. */
struct decode_counts decode_counts(void);
/* Frees what decode_init allocated. */
void decode_free(void);

#endif
