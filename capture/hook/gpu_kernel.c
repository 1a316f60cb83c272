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
 * for whatever device (once: the driver caches it, ~/.nv/ComputeCache): 30-125 ms the first
 * time on an H100, 0.15-2 ms after. */
#include <pthread.h>
#include <signal.h>

#include "gpu.h"
#include "hook.h"

static const char anchor_ptx[] =
    ".version 6.0\n"
    ".target sm_50\n"
    ".address_size 64\n"
    ".visible .entry cuthook_clock(.param .u64 p_flag, .param .u64 p_words, .param .u64 p_out,\n"
    "    .param .u32 p_seq, .param .u32 p_n, .param .u64 p_limit, .param .u32 p_stagger)\n"
    "{\n"
    "    .reg .pred %p<8>;\n"
    "    .reg .b32 %r<16>;\n"
    "    .reg .b64 %rd<24>;\n"
    "    .shared .align 8 .u64 s_lo;\n"
    "    .shared .align 8 .u64 s_hi;\n"
    "    ld.param.u64 %rd1, [p_flag];\n"
    "    ld.param.u64 %rd2, [p_words];\n"
    "    ld.param.u64 %rd3, [p_out];\n"
    "    ld.param.u32 %r1, [p_seq];\n"
    "    ld.param.u32 %r2, [p_n];\n"
    "    ld.param.u64 %rd4, [p_limit];\n"
    "    ld.param.u32 %r10, [p_stagger];\n"
    "    mov.u64 %rd22, %globaltimer;\n"
    "    mov.u32 %r11, %tid.x;\n"
    "    shr.u32 %r12, %r11, 5;\n"
    "    mul.wide.u32 %rd20, %r12, %r10;\n"
    "    mul.wide.u32 %rd21, %r12, 64;\n"
    "    add.u64 %rd1, %rd1, %rd21;\n"
    "    setp.eq.u32 %p5, %r11, 0;\n"
    "    @!%p5 bra START;\n"
    "    mov.u64 %rd6, 0;\n"
    "    st.shared.u64 [s_lo], %rd6;\n"
    "    mov.u64 %rd6, -1;\n"
    "    st.shared.u64 [s_hi], %rd6;\n"
    "    mov.u64 %rd6, %globaltimer;\n"
    "    st.volatile.global.u64 [%rd3], %rd6;\n"
    "    membar.sys;\n"
    "    st.volatile.global.u32 [%rd2+4], %r1;\n"
    "START:\n"
    "    bar.sync 0;\n"
    "    mov.u32 %r3, 0;\n"
    "LOOP:\n"
    "    setp.ge.u32 %p1, %r3, %r2;\n"
    "    @%p1 bra DONE;\n"
    "    add.u32 %r4, %r1, %r3;\n"
    "    add.u32 %r4, %r4, 1;\n"
    "    mov.u64 %rd5, %globaltimer;\n"
    "STAG:\n"
    "    mov.u64 %rd6, %globaltimer;\n"
    "    sub.u64 %rd7, %rd6, %rd5;\n"
    "    setp.lt.u64 %p2, %rd7, %rd20;\n"
    "    @%p2 bra STAG;\n"
    "    mov.u64 %rd10, 0;\n"
    "POLL:\n"
    "    mov.u64 %rd11, %globaltimer;\n"
    "    ld.volatile.global.u32 %r5, [%rd1];\n"
    "    sub.u32 %r6, %r5, %r4;\n"
    "    setp.ge.s32 %p3, %r6, 0;\n"
    "    @%p3 bra HIT;\n"
    "    mov.u64 %rd12, %globaltimer;\n"
    "    mov.u64 %rd10, %rd11;\n"
    "    sub.u64 %rd7, %rd12, %rd22;\n"
    "    setp.lt.u64 %p4, %rd7, %rd4;\n"
    "    @%p4 bra POLL;\n"
    "    mov.u64 %rd12, 0;\n"
    "    bra MERGE;\n"
    "HIT:\n"
    "    mov.u64 %rd12, %globaltimer;\n"
    "MERGE:\n"
    "    atom.shared.max.u64 %rd13, [s_lo], %rd10;\n"
    "    atom.shared.min.u64 %rd13, [s_hi], %rd12;\n"
    "    bar.sync 0;\n"
    "    @!%p5 bra NEXT;\n"
    "    ld.shared.u64 %rd14, [s_lo];\n"
    "    ld.shared.u64 %rd15, [s_hi];\n"
    "    shl.b32 %r7, %r3, 1;\n"
    "    add.u32 %r7, %r7, 1;\n"
    "    mul.wide.u32 %rd8, %r7, 8;\n"
    "    add.u64 %rd9, %rd3, %rd8;\n"
    "    st.volatile.global.u64 [%rd9], %rd14;\n"
    "    st.volatile.global.u64 [%rd9+8], %rd15;\n"
    "    membar.sys;\n"
    "    st.volatile.global.u32 [%rd2], %r4;\n"
    "    mov.u64 %rd6, 0;\n"
    "    st.shared.u64 [s_lo], %rd6;\n"
    "    mov.u64 %rd6, -1;\n"
    "    st.shared.u64 [s_hi], %rd6;\n"
    "NEXT:\n"
    "    bar.sync 0;\n"
    "    add.u32 %r3, %r3, 1;\n"
    "    bra LOOP;\n"
    "DONE:\n"
    "    @!%p5 bra EXIT;\n"
    "    shl.b32 %r7, %r2, 1;\n"
    "    add.u32 %r7, %r7, 1;\n"
    "    mul.wide.u32 %rd8, %r7, 8;\n"
    "    add.u64 %rd9, %rd3, %rd8;\n"
    "    mov.u64 %rd6, %globaltimer;\n"
    "    st.volatile.global.u64 [%rd9], %rd6;\n"
    "EXIT:\n"
    "    ret;\n"
    "}\n";

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
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	if (gpu_api.ctx_set_current(l->ctx) != 0 ||
	    gpu_api.module_load_data(&module, anchor_ptx) != 0 ||
	    gpu_api.module_get_function(&l->fn, module, "cuthook_clock") != 0)
		l->fn = NULL;
	return NULL;
}

void *
gpu_kernel_load(void *ctx)
{
	struct load l = {ctx, NULL};
	pthread_attr_t at;
	pthread_t t;
	if (!gpu_api.module_load_data || !gpu_api.module_get_function || !gpu_api.launch_kernel)
		return NULL;
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 256 * 1024);
	bool made = pthread_create(&t, &at, load_main, &l) == 0;
	pthread_attr_destroy(&at);
	if (made)
		pthread_join(t, NULL);
	return made ? l.fn : NULL;
}
