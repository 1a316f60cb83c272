/* layers.h: cutcapture's layers, one row each in layers.c's table: its name (-l, the header
 * and the trailer), its switch and its counter of records lost on the BPF side (records.h),
 * its programs, the kernel features it needs (probed before load), its settings, how it
 * attaches and detaches, and why it is off when it is. */
#ifndef CUT_CAPTURE_LAYERS_H
#define CUT_CAPTURE_LAYERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/types.h>

#include "buf.h"
#include "event.h"
#include "records.h"

struct cutcapture_bpf;

/* What the layers are asked to do (the options). */
struct layer_opts {
	unsigned layers;             /* CC_L_* bits asked for (-l) */
	const char *libcuda;         /* --libcuda, or NULL to find it */
	const char *libcudart;       /* --libcudart, or NULL to find it (runtime layer) */
	pid_t pid;                   /* -p: the process whose libcuda is probed; 0 */
	const char *const *patterns; /* -f: the driver API functions probed (fnmatch) */
	int npatterns;
	int (*unprobed)(const char *name, int gpu); /* functions libcuthook records instead... */
	int unprobed_gpu;                           /* ...its argument gpu */
	const char *kfuncs[CC_MAX_KFUNCS];          /* -k: the kernel layer's functions */
	int nkfuncs;
	const char *devs[8];   /* --ioctl-dev, --uvm-dev: device files added... */
	unsigned dev_kinds[8]; /* ...as CC_DEV_RM or CC_DEV_UVM */
	int ndevs;
	const char *uprobes_why; /* why api and runtime are the uprobes' ("-p", "static"...) */
	unsigned quiet;          /* CC_L_* bits on by default only: off without a line on stderr */
	bool single;             /* --single-probes: one uprobe per function */
	bool bare;               /* --bench-bare */
	uint64_t sched_min;      /* --sched-min */
	const char *irq_prefix;  /* --irq-prefix */
	unsigned long ring_mb;   /* -b */
};

/* The CC_L_* bits of a comma-separated list of layer names, or -1 (saying which name is
 * unknown). gpu and nvtx are known and skipped: libcuthook records them (preload.h). */
int layers_parse(const char *s);
/* Whether layer bit (CC_L_*) is on: asked for and not turned off since. */
bool layers_on(unsigned bit);
/* Probes, per layer, what it needs and the kernel can do (devices, libcuda and its functions,
 * uprobe_multi, kernel functions), turning off the layers that cannot work and saying why.
 * Exits with status 2 on a bad --ioctl-dev/--uvm-dev. o must outlive the capture. */
void layers_probe(const struct layer_opts *o);
/* Opens the BPF object, writes each layer's settings, keeps the programs of the layers on and
 * loads it; the kernel layer falls back from fentry to kprobes. Returns NULL with errno set
 * when it cannot be loaded. */
struct cutcapture_bpf *layers_load(void);
/* Attaches the process-tree tracepoints (the processes followed) and the signal tracepoint.
 * Returns 0, or -1 saying why. */
int layers_attach_tree(struct cutcapture_bpf *skel);
/* Attaches every layer that is on, in table order. A layer that cannot attach is turned off
 * and says why; the capture goes on without it. */
void layers_attach(struct cutcapture_bpf *skel);
/* Detaches the api layer (timed, for the trailer) and the process tree: what is in flight
 * returns no more. */
void layers_detach_api_tree(struct cutcapture_bpf *skel);
/* Detaches every layer and the process tree, keeping the signal tracepoint (the command may
 * still need a signal passed on): nothing more is traced. */
void layers_detach_all(struct cutcapture_bpf *skel);
/* Frees what the layers kept (their links included); call before destroying skel. */
void layers_free(void);

/* The layer a BPF counter (CC_C_*) of records lost belongs to. */
const char *layers_counter_name(unsigned counter);
/* The driver API functions probed, then the runtime's, by cookie: for decode_init. */
const char *const *layers_api_functions(size_t *n);
/* The kernel layer's functions, by index. */
const char *const *layers_kernel_functions(size_t *n);
/* The libcuda probed (as found), or NULL. */
const char *layers_libcuda(void);
/* The libcudart probed (runtime layer, as found), or NULL. */
const char *layers_libcudart(void);
/* The header's "layers" (meta.h): "on" or "off: why" for each layer cutcapture has, by enum
 * cut_layer (static strings), and its "sources" for those on: "ebpf", or for api and runtime
 * "uprobes: " and why (layer_opts.uprobes_why); and its "probes" member (how the api layer
 * attached). */
void layers_header(const char *out[CUT_NLAYERS], const char *sources[CUT_NLAYERS]);
void layers_probes(struct cut_buf *b);
/* The trailer's "layers": events written per layer, meta records included (per_layer and out
 * by enum cut_layer). */
void layers_trailer(int64_t out[CUT_NLAYERS], const uint64_t *per_layer);
/* Nanoseconds attaching and detaching the api layer took. */
uint64_t layers_attach_ns(void);
uint64_t layers_detach_ns(void);

#endif
