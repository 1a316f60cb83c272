/* hooklib.h: where libcuthook.so is, for the two programs that preload it: cuthook, and
 * cutcapture for the layers eBPF cannot see. */
#ifndef CUT_CAPTURE_HOOKLIB_H
#define CUT_CAPTURE_HOOKLIB_H

#include <stddef.h>
#include <stdint.h>

#include "event.h"

/*
 * The library: named when not NULL (an option), else $CUTHOOK_LIB, else beside the running
 * program (../lib/cut/ when installed, ../lib/ in a build tree), else CUT_HOOK_LIBDIR. Returns
 * its real path (to free), or NULL with the reason in why (n bytes): none found, or the file
 * named or found is not libcuthook (an ELF shared object of this machine that defines
 * cuthook_mark_thread), which the dynamic linker would refuse in every process.
 */
char *cut_hook_library(const char *named, char *why, size_t n);
/*
 * The driver functions libcuthook's gpu layer calls on the program's threads (hook/gpu.c:
 * submissions, a context's device and end, a graph's nodes, a kernel's parameters;
 * hook/handles.c). Under
 * cutcapture's uprobes, a probe on them would trap on the library's calls too, a microsecond
 * each, between a launch and the event that times its end: cutcapture leaves them unprobed and
 * the library records the program's calls to them (CUTHOOK_SKIP; cutcapture(8) lists them,
 * tests/scripts/own-calls-documented.sh holds the two the same).
 */
#define CUT_HOOK_OWN_CALLS                                                                         \
	"cuCtxFromGreenCtx", "cuCtxGetCurrent", "cuCtxGetDevice", "cuCtxPopCurrent_v2",            \
	    "cuCtxPushCurrent_v2", "cuDevicePrimaryCtxGetState",                                   \
	    "cuDevicePrimaryCtxRelease", "cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRetain", \
	    "cuEventCreate", "cuEventRecord", "cuFuncGetName", "cuFuncGetParamInfo",                \
	    "cuGraphGetEdges", "cuGraphGetEdges_v2", "cuGraphGetNodes", "cuGraphNodeGetType",       \
	    "cuKernelGetName", "cuKernelGetParamInfo", "cuStreamGetCtx", "cuStreamIsCapturing"

/*
 * The layers libcuthook records, X(name, enum cut_layer, only) each, in the order messages
 * list them. only: eBPF cannot see the layer, so cutcapture takes it from the library alone;
 * the others come from the library too unless they are the uprobes' (-p, --uprobes, a static or
 * setuid program: cutcapture.c's choose_call_path). cuthook's and cutcapture's -l,
 * CUTHOOK_LAYERS and CUTHOOK_SKIP name them so, and the library has a row for each
 * (hook/layer.c: a layer missing there does not build).
 */
#define CUT_HOOK_LAYERS(X)                                                                         \
	X(api, CUT_API, 0)                                                                         \
	X(gpu, CUT_GPU, 1)                                                                         \
	X(nvtx, CUT_NVTX, 1)                                                                       \
	X(runtime, CUT_RUNTIME, 0)
/* Their names, for messages: "api, gpu, nvtx, runtime". */
#define CUT_HOOK_NAME_(name, layer, only) ", " #name
#define CUT_HOOK_LAYER_NAMES (CUT_HOOK_LAYERS(CUT_HOOK_NAME_) + 2)
/* Sets of them as bits (1u << enum cut_layer): every one, and those only the library records. */
#define CUT_HOOK_BIT_(name, layer, only) | 1u << (layer)
#define CUT_HOOK_ALL (0u CUT_HOOK_LAYERS(CUT_HOOK_BIT_))
#define CUT_HOOK_ONLY_(name, layer, only) | ((only) ? 1u << (layer) : 0u)
#define CUT_HOOK_ONLY (0u CUT_HOOK_LAYERS(CUT_HOOK_ONLY_))
/* The library's layer named by the n bytes at name (an enum cut_layer), or -1. */
int cut_hook_layer(const char *name, size_t n);
/* The library's layers a comma-separated list names (NULL: none), as bits. */
unsigned cut_hook_layers_in(const char *list);
/* The names of the library's layers in bits, in CUT_HOOK_LAYERS' order, sep between them, into
 * buf (n bytes, cut short if need be). Returns buf. */
char *cut_hook_layer_join(char *buf, size_t n, unsigned bits, const char *sep);
/* Whether word is one of the comma-separated list's (NULL: none): a layer in -l or
 * CUTHOOK_LAYERS. */
int cut_hook_listed(const char *list, const char *word);
/*
 * The environment of a command run with library lib preloaded, writing to out (CUTHOOK_OUTPUT,
 * %p for each process's pid): LD_PRELOAD (after what is there), the library as the NVTX tool
 * when nvtx (a tool named already in NVTX_INJECTION64_PATH is chained to, through
 * CUT_NVTX_NEXT, not replaced), CUTHOOK_LAYERS when layers is not NULL. Returns 0, or -1 with
 * errno set.
 */
int cut_hook_setenv(const char *lib, const char *out, const char *layers, int nvtx);

/*
 * What libcuthook's processes tell the program that preloaded them (cuthook, cutcapture): a
 * page they share with it, a memfd of the launcher's that each process maps from
 * /proc/PID/fd/FD (CUTHOOK_STATUS="PID:FD:START", START the launcher's start in clock ticks
 * after boot, so that a later process given its pid is not taken for it). Counts are updated
 * with atomics.
 */
#define CUT_HOOK_STATUS_MAGIC 0x6375746873746174ull /* "cuthstat" */
struct cut_hook_status {
	uint64_t magic;
	uint64_t processes;   /* processes that started recording */
	uint64_t failures;    /* opens and writes of the output that failed */
	uint64_t lost;        /* events lost to them that no trailer written counts */
	uint64_t no_trailer;  /* processes that wrote no trailer for want of a writable output */
	int32_t error;        /* errno of the first failure (0: none) */
	int32_t stop_if_gone; /* the launcher's files are its own: stop writing once it is gone */
};
/* Launcher: makes the page and sets CUTHOOK_STATUS for the command. Returns the page, or NULL
 * with errno set. */
struct cut_hook_status *cut_hook_status_new(int stop_if_gone);
/* The launcher, as a process of the library's knows it. */
struct cut_hook_launcher {
	int pid;
	uint64_t start;    /* clock ticks after boot */
	int pidfd;         /* -1 where pidfd_open(2) is missing */
	uint64_t dev, ino; /* of pidfd: the program may close it and reuse its number */
};
/* Library: the launcher's page named by CUTHOOK_STATUS, or NULL (none, gone, or not
 * mappable); *l then names the launcher, its pidfd out of the way of the program's own low
 * descriptors. */
struct cut_hook_status *cut_hook_status_attach(struct cut_hook_launcher *l);
/* Whether the launcher still runs: its pidfd says so, or, where that is gone, whether its pid
 * is still the process that started at its start. Async-signal-safe. */
int cut_hook_launcher_alive(const struct cut_hook_launcher *l);
/* The first failure's errno: stored once. */
void cut_hook_status_error(struct cut_hook_status *s, int error);

/* The pid in file name name that pattern (a file name with one or more "%p") gives, each %p
 * the same digits; -1 when name is not one of pattern's. Async-signal-safe. */
long cut_hook_pid_of(const char *name, const char *pattern);

/* What a wrapped function is to the gpu layer (libcuthook's hook_gpu_kind[id]; cutcapture leaves
 * the functions whose work it times to the library). */
enum gpu_kind {
	GK_NONE,
	GK_KERNEL,    /* kernel: cuLaunchKernel, cuLaunchCooperativeKernel: grid, block, stream */
	GK_KERNEL_EX, /* kernel,launch-config: cuLaunchKernelEx: the same, in a CUlaunchConfig */
	GK_COPY,      /* copy: cuMemcpy* */
	GK_SET,       /* memset: cuMemsetD* */
	GK_GRAPH,     /* graph: cuGraphLaunch */
	GK_ENQUEUE,   /* enqueue: other work on a stream (an event, a wait, a host function) */
	GK_STREAM,    /* creates-stream: the layer notes whether it is non-blocking */
	GK_CONTEXT,   /* creates-context: the layer loads its clock kernel into a new context */
	GK_INSTANTIATE, /* instantiates-graph: the layer notes how the graph will be handed over */
	GK_CTX_END,     /* destroys-context, resets-context, releases-primary: the layer writes the
	                 * context's work (a release's where it ends the context) */
};
/* What the driver function of that name is to the gpu layer, from its flags in
 * share/data/api-categories.tsv (classify.h). */
enum gpu_kind cut_gpu_kind_of(const char *name);
/* Whether libcuthook's gpu layer times the work the function submits (kernel, copy, memset,
 * graph launch): under cutcapture the library records those calls, not the uprobes, whose
 * return trap would come between a launch and the event that times its end. */
#define CUT_GPU_TIMES(k)                                                                           \
	((k) != GK_NONE && (k) != GK_ENQUEUE && (k) != GK_STREAM && (k) != GK_CONTEXT &&           \
	 (k) != GK_INSTANTIATE && (k) != GK_CTX_END)
/* Whether, under cutcapture, libcuthook records the program's calls to the driver function of
 * that name and the uprobes leave it alone: one of CUT_HOOK_OWN_CALLS, or (gpu: with the gpu
 * layer) one whose work the layer times. */
int cut_hook_unprobed(const char *name, int gpu);

#endif
