/* anchorcal: how narrowly the host can date a timing event, the anchor of libcuthook's clock
 * mapping (wait_anchor in gpu_poll.c, gpu_map.c). Four ways, taken in turn within each group,
 * TRIES times each on a non-blocking stream:
 *   ack    the stream waits for a word of host memory, records the event, writes a word back;
 *          the host writes the first at t_w and spins until it sees the second (t_r)
 *   query  the stream waits for the word, records the event; the host spins on cuEventQuery
 *   both   as ack, the host spinning on cuEventQuery (t_r) and then on the word (t_ack)
 *   call   no wait: t_w is read just before cuEventRecord on the idle stream, then as query
 *   kern   libcuthook's clock kernel, one try a launch: its warps (ANCHOR_WARPS, default 8)
 *          poll words of their own, each ANCHOR_STAGGER ns (128) after the one before; the
 *          host writes them and spins until the kernel acks; the latest read that missed the
 *          write and the first that saw it (on the GPU's clock, %globaltimer) against the
 *          host's reads around the write and at the ack bound the clocks' offset, and so the
 *          kernel's end as it reads it; the event after it is taken as stamped at that end
 *          (anchorcal.py says how much later the other ways put it).
 * One line a try: group, way, try, its width t_r - t_w, then t_w - g and t_r - g, where g is the
 * event's time on the group's own GPU clock (from its first event) and host times count from
 * that event's t_w, and t_ack - t_r (both only), all ns. The offset host - gpu lies in
 * [t_w - g, t_r - g] for every try of a group, whatever its way (the group
 * takes about a ms: the clocks' 20 ppm is 20 ns), so anchorcal.py can check that every way's
 * intervals agree and say how narrow each way's narrowest try, and all tries together, are.
 *
 * build (a GPU machine): gcc -O2 -I/usr/local/cuda/include -o anchorcal anchorcal.c -lcuda
 * usage: anchorcal [groups] */
#include <cuda.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../capture/hook/clock_ptx.h" /* the library's kernel */
#define CK(x)                                                                                      \
	do {                                                                                       \
		CUresult r_ = (x);                                                                 \
		if (r_) {                                                                          \
			fprintf(stderr, "%s: %d\n", #x, r_);                                       \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)
enum { TRIES = 32, WAYS = 5, KERN = 4, READY_NS = 20000 };
static const char *names[WAYS] = {"ack", "query", "both", "call", "kern"};

static CUfunction kern;
static unsigned warps = 8, stagger = 128; /* ANCHOR_WARPS, ANCHOR_STAGGER */

static int64_t
now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

struct
try {
	int64_t t_w, t_r, t_ack;
	CUevent e;
};

static void
one(int way, CUstream s, volatile uint32_t *flag, CUdeviceptr flag_d, volatile uint32_t *ack,
    CUdeviceptr ack_d, uint32_t v, struct try *t)
{
	if (way == KERN) {
		/* its words: each warp's flag a line apart from flag + 1024, the ack and ready
		 * words at ack + 64, the times after them */
		volatile uint32_t *kflag = (volatile uint32_t *)((char *)flag + 1024);
		volatile uint32_t *kack = ack + 16, *ready = kack + 1;
		volatile uint64_t *out = (volatile uint64_t *)((char *)kack + 64);
		CUdeviceptr kflag_d = flag_d + 1024, kack_d = ack_d + 64, out_d = kack_d + 64;
		uint32_t n = 1, seq = v - 1;
		uint64_t limit = 10000000;
		void *args[] = {&kflag_d, &kack_d, &out_d, &seq, &n, &limit, &stagger};
		CK(cuLaunchKernel(kern, 1, 1, 1, 32 * warps, 1, 1, 0, s, args, NULL));
		CK(cuEventRecord(t->e, s));
		while ((int32_t)(__atomic_load_n(ready, __ATOMIC_ACQUIRE) - seq) < 0)
			;
		int64_t w0 = now_ns();
		for (unsigned i = 0; i < warps; i++)
			__atomic_store_n(kflag + 16 * i, v, __ATOMIC_SEQ_CST);
		int64_t w1 = now_ns();
		while ((int32_t)(__atomic_load_n(kack, __ATOMIC_ACQUIRE) - v) < 0)
			;
		int64_t r = now_ns();
		CK(cuEventSynchronize(t->e));
		/* off = gpu - host: below the back of a read that saw the word less when it was
		 * written, above the issue of the last that did not (less when it was written)
		 * and the back of the first that did less when the host saw the ack */
		int64_t miss = (int64_t)out[1], hit = (int64_t)out[2], end = (int64_t)out[3];
		int64_t lo = hit - r, hi = hit - w0;
		if (miss && miss - w1 > lo)
			lo = miss - w1;
		t->t_w = end - hi; /* the event, stamped as the kernel ends */
		t->t_r = end - lo;
		t->t_ack = 0;
		if (!hit)
			t->t_r = t->t_w + 1000000000; /* timed out: no bound */
		return;
	}
	if (way != 3) {
		CK(cuStreamWaitValue32(s, flag_d, v, CU_STREAM_WAIT_VALUE_GEQ));
		CK(cuEventRecord(t->e, s));
		if (way == 0 || way == 2)
			CK(cuStreamWriteValue32(s, ack_d, v, CU_STREAM_WRITE_VALUE_DEFAULT));
		int64_t ready = now_ns() + READY_NS; /* the operations fetched */
		while (now_ns() < ready)
			sched_yield();
		t->t_w = now_ns();
		__atomic_store_n(flag, v, __ATOMIC_SEQ_CST);
	} else {
		t->t_w = now_ns();
		CK(cuEventRecord(t->e, s));
	}
	t->t_ack = 0;
	if (way == 0) {
		while ((int32_t)(__atomic_load_n(ack, __ATOMIC_ACQUIRE) - v) < 0)
			;
		t->t_r = now_ns();
		return;
	}
	CUresult r;
	while ((r = cuEventQuery(t->e)) == CUDA_ERROR_NOT_READY)
		;
	CK(r);
	t->t_r = now_ns();
	if (way == 2) {
		while ((int32_t)(__atomic_load_n(ack, __ATOMIC_ACQUIRE) - v) < 0)
			;
		t->t_ack = now_ns();
	}
}

int
main(int argc, char **argv)
{
	int groups = argc > 1 ? atoi(argv[1]) : 200;
	if (getenv("ANCHOR_WARPS"))
		warps = (unsigned)atoi(getenv("ANCHOR_WARPS"));
	if (getenv("ANCHOR_STAGGER"))
		stagger = (unsigned)atoi(getenv("ANCHOR_STAGGER"));
	CUdevice d;
	CUcontext c;
	CUstream s;
	CK(cuInit(0));
	CK(cuDeviceGet(&d, 0));
	CK(cuDevicePrimaryCtxRetain(&c, d));
	CK(cuCtxSetCurrent(c));
	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	void *p;
	CUdeviceptr pd;
	CK(cuMemHostAlloc(&p, 4096, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP));
	CK(cuMemHostGetDevicePointer(&pd, p, 0));
	memset(p, 0, 4096);
	CUmodule m;
	CK(cuModuleLoadData(&m, cut_clock_ptx));
	CK(cuModuleGetFunction(&kern, m, "cuthook_clock"));
	volatile uint32_t *flag = p, *ack = (volatile uint32_t *)((char *)p + 64);
	static struct try t[WAYS][TRIES];
	for (int w = 0; w < WAYS; w++)
		for (int i = 0; i < TRIES; i++)
			CK(cuEventCreate(&t[w][i].e, 0));
	uint32_t v = 0;
	for (int g = 0; g < groups; g++) {
		for (int i = 0; i < TRIES; i++) /* the ways in turn: each sees the same moments */
			for (int w = 0; w < WAYS; w++)
				one(w, s, flag, pd, ack, pd + 64, ++v, &t[w][i]);
		CK(cuStreamSynchronize(s));
		for (int w = 0; w < WAYS; w++)
			for (int i = 0; i < TRIES; i++) {
				float ms;
				CK(cuEventElapsedTime(&ms, t[0][0].e, t[w][i].e));
				double gns = (double)ms * 1e6;
				int64_t base = t[0][0].t_w;
				printf(
				    "%d %s %d %lld %.0f %.0f %lld\n", g, names[w], i,
				    (long long)(t[w][i].t_r - t[w][i].t_w),
				    (double)(t[w][i].t_w - base) - gns,
				    (double)(t[w][i].t_r - base) - gns,
				    (long long)(t[w][i].t_ack ? t[w][i].t_ack - t[w][i].t_r : 0));
			}
	}
	return 0;
}
