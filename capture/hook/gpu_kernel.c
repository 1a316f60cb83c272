/* gpu_kernel.c: the gpu layer's clock kernel. Events give GPU times only against each other;
 * a kernel can read the clock they read (%globaltimer) and dates it against the host's far more
 * narrowly than an event can be: a host write of a word the kernel polls, its first read to see
 * it and its last not to, come within 1.3-1.4 us of each other on an H100, where a round trip
 * through a stream's wait, event and write back takes 4.3 (tests/bench/anchorcal.c). So
 * gpu_poll.c anchors the clock mapping with it (gpu_map.c's gpu_kernel_anchor) where it can.
 *
 * The kernel, cuthook_clock(flags, words, out, seq, n, limit, stagger), one block of warps: thread
 * 0 writes the clock to out[0] and seq to words[1] (ready); then for each of n tries
 * (v = seq + 1 + i) every warp waits stagger x its number of ns and polls its own flag (at flags
 * + 64 bytes x warp: reads of one line from several warps are merged into one) until it is v or
 * more, noting when it issued the last read that missed and when the first that saw it came back;
 * thread 0 writes the latest miss and the earliest hit to out[1 + 2i] and out[2 + 2i], then v
 * to words[0] (ack); as it ends, the clock again to out[1 + 2n]. A try not seen within limit ns
 * of the kernel's start writes a hit of 0, and so do the rest: the kernel never waits longer
 * (a host thread that stopped cannot hold the device).
 *
 * Loading a module waits for every stream of the context with the context's lock held (so did a
 * cuModuleLoadData beside a 100 ms kernel on an H100, and every launch of another thread
 * meanwhile; a library's first launch in the context waited alike): loaded later, it would make
 * the program's threads wait for its work, and for good if that work waited for one of them.
 * So it is loaded as the context is made, with no work yet, from a thread of the library's own
 * (its calls are no events, and cutcapture's probes leave it out). PTX, compiled by the driver
 * for whatever device (once: the driver caches it, ~/.nv/ComputeCache): 30-130 ms the first
 * time on an H100, 0.15-2 ms after. */
#include <pthread.h>

#include "clock_ptx.h"
#include "gpu.h"
#include "hook.h"

struct load {
	void *ctx;
	void *fn; /* the kernel, or NULL */
};

static void *
load_main(void *arg)
{
	struct load *l = arg;
	void *module = NULL;
	hook_mark_thread(1); /* first: none of this thread's calls is the program's */
	hook_guard = 1;
	if (gpu_api.ctx_set_current(l->ctx) != 0 ||
	    gpu_api.module_load_data(&module, cut_clock_ptx) != 0 ||
	    gpu_api.module_get_function(&l->fn, module, "cuthook_clock") != 0)
		l->fn = NULL;
	return NULL;
}

void *
gpu_kernel_load(void *ctx)
{
	struct load l = {ctx, NULL};
	pthread_t t;
	if (!gpu_api.module_load_data || !gpu_api.module_get_function || !gpu_api.launch_kernel)
		return NULL;
	bool made = hook_own_thread(&t, 256 * 1024, false, load_main, &l) == 0;
	if (made)
		pthread_join(t, NULL);
	return made ? l.fn : NULL;
}
