/* hooklib.h: where libcuthook.so is, for the two programs that preload it: cuthook, and
 * cutcapture for the layers eBPF cannot see. */
#ifndef CUT_CAPTURE_HOOKLIB_H
#define CUT_CAPTURE_HOOKLIB_H

#include <stddef.h>

/*
 * The library: named when not NULL (an option), else $CUTHOOK_LIB, else beside the running
 * program (../lib/cut/ when installed, ../lib/ in a build tree), else CUT_HOOK_LIBDIR. Returns
 * its real path (to free), or NULL with the reason in why (n bytes).
 */
char *cut_hook_library(const char *named, char *why, size_t n);
/*
 * The driver functions libcuthook's gpu layer calls on the program's threads (hook/gpu.c,
 * hook/names.c). Under cutcapture's uprobes, a probe on them would trap on the library's calls
 * too, a microsecond each, between a launch and the event that times its end: cutcapture
 * leaves them unprobed and the library records the program's calls to them (CUTHOOK_SKIP).
 */
#define CUT_HOOK_OWN_CALLS                                                                         \
	"cuCtxGetCurrent", "cuEventCreate", "cuEventRecord", "cuFuncGetName", "cuKernelGetName",   \
	    "cuStreamIsCapturing"

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

/* What a wrapped function is to the gpu layer (libcuthook's hook_gpu_kind[id]; cutcapture leaves
 * the functions whose work it times to the library). */
enum gpu_kind {
	GK_NONE,
	GK_KERNEL,    /* cuLaunchKernel and cuLaunchCooperativeKernel: grid, block, stream */
	GK_KERNEL_EX, /* cuLaunchKernelEx: the same, in a CUlaunchConfig */
	GK_COPY,      /* cuMemcpy* */
	GK_SET,       /* cuMemsetD* */
	GK_GRAPH,     /* cuGraphLaunch */
	GK_ENQUEUE,   /* puts other work on a stream (an event, a wait, a host function) */
	GK_STREAM,    /* creates a stream: the layer notes whether it is non-blocking */
};
/* What the driver function of that name is to the gpu layer. */
enum gpu_kind cut_gpu_kind_of(const char *name);
/* Whether libcuthook's gpu layer times the work the function submits (kernel, copy, memset,
 * graph launch): under cutcapture the library records those calls, not the uprobes, whose
 * return trap would come between a launch and the event that times its end. */
#define CUT_GPU_TIMES(k) ((k) != GK_NONE && (k) != GK_ENQUEUE && (k) != GK_STREAM)
/* Whether, under cutcapture, libcuthook records the program's calls to the driver function of
 * that name and the uprobes leave it alone: one of CUT_HOOK_OWN_CALLS, or (gpu: with the gpu
 * layer) one whose work the layer times. */
int cut_hook_unprobed(const char *name, int gpu);

#endif
