/* clockcal: libcuthook's clock kernel (capture/hook/gpu_kernel.c) on a GPU machine.
 *   load   how long loading its module takes, idle and beside a 100 ms kernel on another
 *          stream (and the longest launch another thread made meanwhile), and how long a
 *          library's (cuLibraryLoadData) first launch takes beside one
 *   polls  per way of polling (warps, ns apart): ANCHORS anchors as gpu_poll.c takes them
 *          (the kernel, an event after it, and a second kernel whose start bounds the
 *          event), each of 8 tries: the narrowest try and all 8 together (ns wide), and how
 *          much the event's stamp after the kernel's end moves between consecutive anchors
 *          (the event's elapsed time less the kernel ends' difference)
 * The clock kernel is the library's own (capture/hook/clock_ptx.h), a spinning one beside it.
 *
 * build (a GPU machine): gcc -O2 -I/usr/local/cuda/include -o clockcal clockcal.c -lcuda -lpthread
 * usage: clockcal [anchors] */
#include <cuda.h>
#include <pthread.h>
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
			fprintf(stderr, "clockcal: %s: %d\n", #x, r_);                             \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

/* A kernel that spins for p_ns of its clock. */
static const char spin_ptx[] = ".version 6.0\n"
                               ".target sm_50\n"
                               ".address_size 64\n"
                               ".visible .entry cuthook_spin(.param .u64 p_ns)\n"
                               "{\n"
                               "    .reg .pred %p<2>;\n"
                               "    .reg .b64 %rd<6>;\n"
                               "    ld.param.u64 %rd1, [p_ns];\n"
                               "    mov.u64 %rd2, %globaltimer;\n"
                               "SPIN:\n"
                               "    mov.u64 %rd3, %globaltimer;\n"
                               "    sub.u64 %rd4, %rd3, %rd2;\n"
                               "    setp.lt.u64 %p1, %rd4, %rd1;\n"
                               "    @%p1 bra SPIN;\n"
                               "    ret;\n"
                               "}\n";

enum { TRIES = 8, KFLAGS = 0, KACK = 2048, KOUT = 2176, KOUT2 = 3072 };
static CUcontext ctx;
static CUfunction clockk, spin;
static CUstream s, s2;
static char *words;
static CUdeviceptr words_d;
static uint32_t seq;

static int64_t
now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int
cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static void
row(const char *what, int64_t *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp);
	printf("  %-30s min %6lld p10 %6lld p50 %6lld p90 %6lld max %6lld\n", what, (long long)v[0],
	       (long long)v[n / 10], (long long)v[n / 2], (long long)v[n * 9 / 10],
	       (long long)v[n - 1]);
}

static void
run_spin(CUstream st, uint64_t ns)
{
	void *args[] = {&ns};
	CK(cuLaunchKernel(spin, 1, 1, 1, 1, 1, 1, 0, st, args, NULL));
}

static volatile int other_stop;
static int64_t other_max;

static void *
other_thread(void *arg)
{
	CUstream s3;
	(void)arg;
	CK(cuCtxSetCurrent(ctx));
	CK(cuStreamCreate(&s3, CU_STREAM_NON_BLOCKING));
	while (!other_stop) {
		int64_t t = now_ns();
		run_spin(s3, 0);
		if ((t = now_ns() - t) > other_max)
			other_max = t;
	}
	return NULL;
}

static void
load(void)
{
	CUmodule m, ms;
	CUlibrary lib;
	CUkernel k;
	pthread_t t;
	int64_t t0 = now_ns();
	CK(cuModuleLoadData(&m, cut_clock_ptx));
	int64_t t1 = now_ns();
	CK(cuModuleGetFunction(&clockk, m, "cuthook_clock"));
	CK(cuModuleLoadData(&ms, spin_ptx));
	CK(cuModuleGetFunction(&spin, ms, "cuthook_spin"));
	printf(
	    "load: the module %.3f ms idle (the first time on a machine, the driver compiles it)\n",
	    (double)(t1 - t0) / 1e6);
	run_spin(s2, 100000000);
	pthread_create(&t, NULL, other_thread, NULL);
	t0 = now_ns();
	while (now_ns() < t0 + 5000000) /* the other thread launching */
		;
	t0 = now_ns();
	CK(cuModuleLoadData(&m, cut_clock_ptx));
	t1 = now_ns();
	other_stop = 1;
	pthread_join(t, NULL);
	printf("load: beside a 100 ms kernel %.3f ms; another thread's longest launch meanwhile "
	       "%.3f ms\n",
	       (double)(t1 - t0) / 1e6, (double)other_max / 1e6);
	CK(cuCtxSynchronize());
	run_spin(s2, 100000000);
	t0 = now_ns();
	CK(cuLibraryLoadData(&lib, spin_ptx, NULL, NULL, 0, NULL, NULL, 0));
	CK(cuLibraryGetKernel(&k, lib, "cuthook_spin"));
	t1 = now_ns();
	uint64_t ns = 0;
	void *args[] = {&ns};
	CK(cuLaunchKernel((CUfunction)k, 1, 1, 1, 1, 1, 1, 0, s, args, NULL));
	int64_t t2 = now_ns();
	printf("load: a library beside a 100 ms kernel %.3f ms, its first launch %.3f ms\n",
	       (double)(t1 - t0) / 1e6, (double)(t2 - t1) / 1e6);
	CK(cuCtxSynchronize());
}

/* One anchor: the clock kernel, e, a second kernel; the narrowest try and all together (ns
 * wide), the kernel's end and how long after it the second began. */
static void
anchor(unsigned warps, unsigned stagger, CUevent e, int64_t *narrow, int64_t *together,
       int64_t *end, int64_t *gap)
{
	volatile uint32_t *ack = (volatile uint32_t *)(words + KACK), *ready = ack + 1;
	volatile uint64_t *out = (volatile uint64_t *)(words + KOUT);
	volatile uint64_t *out2 = (volatile uint64_t *)(words + KOUT2);
	CUdeviceptr fd = words_d + KFLAGS, ad = words_d + KACK, od = words_d + KOUT,
	            od2 = words_d + KOUT2;
	uint32_t v0 = ++seq, n = TRIES, none = 0;
	seq += TRIES;
	uint32_t v2 = ++seq;
	uint64_t limit = 2000000;
	void *a1[] = {&fd, &ad, &od, &v0, &n, &limit, &stagger};
	void *a2[] = {&fd, &ad, &od2, &v2, &none, &limit, &stagger};
	CK(cuLaunchKernel(clockk, 1, 1, 1, 32 * warps, 1, 1, 0, s, a1, NULL));
	CK(cuEventRecord(e, s));
	CK(cuLaunchKernel(clockk, 1, 1, 1, 32, 1, 1, 0, s, a2, NULL));
	while ((int32_t)(*ready - v0) < 0)
		;
	int64_t lo = INT64_MIN, hi = INT64_MAX;
	*narrow = INT64_MAX;
	for (int i = 0; i < TRIES; i++) {
		uint32_t v = v0 + 1 + (uint32_t)i;
		int64_t w0 = now_ns();
		for (unsigned w = 0; w < warps; w++)
			__atomic_store_n((volatile uint32_t *)(words + KFLAGS + 64 * w), v,
			                 __ATOMIC_SEQ_CST);
		int64_t w1 = now_ns();
		while ((int32_t)(__atomic_load_n(ack, __ATOMIC_ACQUIRE) - v) < 0)
			;
		int64_t r = now_ns();
		int64_t miss = (int64_t)out[1 + 2 * i], hit = (int64_t)out[2 + 2 * i];
		int64_t l = hit - r, h = hit - w0;
		if (miss && miss - w1 > l)
			l = miss - w1;
		if (h - l < *narrow)
			*narrow = h - l;
		if (l > lo)
			lo = l;
		if (h < hi)
			hi = h;
	}
	while ((int32_t)(*ready - v2) < 0)
		;
	CK(cuEventSynchronize(e));
	*together = hi - lo;
	*end = (int64_t)out[1 + 2 * TRIES];
	*gap = (int64_t)out2[0] - *end;
}

static void
polls(unsigned warps, unsigned stagger, int n)
{
	int64_t *narrow = calloc((size_t)n, 8), *together = calloc((size_t)n, 8),
	        *gap = calloc((size_t)n, 8), *moved = calloc((size_t)n, 8), end, end0 = 0;
	CUevent e, e0 = NULL;
	for (int i = 0; i < n; i++) {
		CK(cuEventCreate(&e, 0));
		anchor(warps, stagger, e, &narrow[i], &together[i], &end, &gap[i]);
		if (e0) {
			float ms;
			CK(cuEventElapsedTime(&ms, e0, e));
			moved[i - 1] = (int64_t)((double)ms * 1e6 + 0.5) - (end - end0);
			CK(cuEventDestroy(e0));
		}
		e0 = e;
		end0 = end;
		for (int64_t t = now_ns() + 200000; now_ns() < t;)
			sched_yield();
	}
	CK(cuEventDestroy(e0));
	printf("polls: %u warps %u ns apart, %d anchors (ns)\n", warps, stagger, n);
	row("narrowest try of 8", narrow, n);
	row("8 tries together", together, n);
	row("kernel end to the next start", gap, n);
	row("the event's delay, moved", moved, n - 1);
	free(narrow), free(together), free(gap), free(moved);
}

int
main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 200;
	CUdevice d;
	void *p;
	CK(cuInit(0));
	CK(cuDeviceGet(&d, 0));
	CK(cuDevicePrimaryCtxRetain(&ctx, d));
	CK(cuCtxSetCurrent(ctx));
	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CK(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
	CK(cuMemHostAlloc(&p, 4096, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP));
	CK(cuMemHostGetDevicePointer(&words_d, p, 0));
	memset(p, 0, 4096);
	words = p;
	load();
	static const unsigned ways[][2] = {{1, 0}, {2, 512}, {4, 256}, {8, 128}, {16, 64}, {8, 0}};
	for (size_t i = 0; i < sizeof(ways) / sizeof(ways[0]); i++)
		polls(ways[i][0], ways[i][1], n);
	return 0;
}
