/* layer.h: libcuthook's layers, a row each (layer.c), as capture/layers.c has cutcapture's: what
 * the start (life.c), the header (header.c), the end and fork ask of every layer, none of them
 * by name. A layer is a file of its own (wrap.c the api layer's wrappers, rt.c the runtime's,
 * gpu.c and gpu_poll.c the gpu layer, nvtx.c the NVTX tool), its name in CUT_HOOK_LAYERS
 * (hooklib.h) and its row. */
#ifndef HOOK_LAYER_H
#define HOOK_LAYER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event.h"

struct cut_buf;
struct cut_trailer;

struct hook_layer {
	const char *name;     /* as -l, CUTHOOK_LAYERS and CUTHOOK_SKIP name it */
	enum cut_layer layer; /* of its events */
	/* At start, once the environment is read; NULL: nothing to do. */
	void (*init)(void);
	/* Why it is off ("off: ..."), for the header; NULL while it is on. */
	const char *(*off_reason)(void);
	/* The trailer's count of its events is the rest of the threads' events: the api layer's,
	 * counted per thread on its fast path. Any other layer's are hook_layer_events'. */
	bool rest;
	/* The trailer counts its events while it is on even when there are none (else only
	 * when there are some). */
	bool count_on;
	/* Its events are calls, whose ends clock.c measured: the trailer's durations count them. */
	bool calls;
	/* At the end, before the buffers are written out (not from a signal handler that
	 * interrupted the library): what it still has to write is written. NULL: nothing. */
	void (*stop)(void);
	/* At the end (not from a signal handler): its events still open, ending at now, appended
	 * to out as whole lines. Returns how many. NULL: none. */
	uint64_t (*unended)(struct cut_buf *out, int64_t now);
	/* Its members of the trailer. NULL: none. */
	void (*trailer)(struct cut_trailer *t);
	/* Around fork: phase 0 before (takes its locks), 1 in the parent and 2 in the child
	 * after. NULL: nothing to do. */
	void (*fork)(int phase);
};

/* A row for each layer of CUT_HOOK_LAYERS, in its order. */
extern const struct hook_layer hook_layers[];
extern const size_t hook_nlayers;

/* Whether layer l was asked for: CUTHOOK_LAYERS names it, or is unset or empty (all). */
bool hook_layer_wanted(enum cut_layer l);
/* Whether layer l is left to cutcapture's uprobes: CUTHOOK_SKIP names it. */
bool hook_layer_skipped(enum cut_layer l);

/* Why a layer is off, where two layers say the same. */
#define HOOK_OFF_UNWANTED "off: not requested (cuthook -l)"
#define HOOK_OFF_UPROBES "off: recorded by cutcapture's uprobes"

#endif
