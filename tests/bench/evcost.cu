// evcost: what timing a launch costs on a real GPU, by each way of stamping the stream with
// the GPU's own clock, measured apart from libcuthook (BENCHMARKS.md, "The gpu layer's cost").
//
//   host   the calling thread's time in each call, on an idle stream with the GPU idle (a
//          pause after each, so nothing backs up): what the program's thread pays
//   gpu    the stream's time per step when the GPU runs the steps back to back (all queued
//          behind a long kernel first): what a GPU-bound program pays
//   loop   ns per launch of a launch loop, host-bound (empty kernels) and GPU-bound (2 us
//          kernels), with each way of stamping
//   stamp  how far each way's time is from the kernel's own end (%globaltimer written by the
//          kernel as it finishes): spread (p50/p90/p99 of |deviation from the median|)
//
// Ways of stamping: ev (a timing event on the stream: what libcuthook's gpu layer records after
// each launch), nt (an event without timing: no timestamp), side (an event without timing on
// the stream, waited for by a private stream that records the timing event: the stream itself
// carries only the cheap one), evblk (a timing event made with CU_EVENT_BLOCKING_SYNC), ev/2 (a
// timing event after every other launch only), wv (no event: cuStreamWriteValue32 of a
// sequence number into pinned host memory, which a spinning host thread stamps with
// CLOCK_MONOTONIC when it sees it; the stream carries a memory write, the host does the timing).
//
// build: nvcc -O2 -o evcost evcost.cu -lcuda
// usage: evcost [legacy]   (legacy: the legacy default stream, as PyTorch uses, not a created one)
#include <cuda.h>
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CK(x)                                                                                      \
	do {                                                                                       \
		CUresult r_ = (x);                                                                 \
		if (r_ != CUDA_SUCCESS) {                                                          \
			fprintf(stderr, "%s:%d: %s: %d\n", __FILE__, __LINE__, #x, (int)r_);       \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

__device__ static unsigned long long
gtimer(void)
{
	unsigned long long t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

__global__ void
empty(void)
{
}
__global__ void
spin(unsigned long long ns, unsigned long long *out)
{
	unsigned long long t0 = gtimer(), t;
	while ((t = gtimer()) - t0 < ns)
		;
	if (out)
		*out = t;
}

static double
now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static int
cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double
pct(double *v, int n, double p)
{
	qsort(v, n, sizeof(*v), cmpd);
	return v[(int)(p * (n - 1))];
}

static CUfunction f_empty, f_spin;
static CUstream S, P;
static CUevent *ev_t, *ev_n, *ev_p; /* timing, no timing, private stream's timing */
enum { NEV = 8192 };

static void
launch(CUfunction f, unsigned long long ns, unsigned long long *out)
{
	void *args[] = {&ns, &out};
	CK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, S, f == f_spin ? args : NULL, NULL));
}

enum way { W_NONE, W_EV, W_NT, W_SIDE, W_EVB, W_EV2, W_WV, W_NWAYS };
static const char *way_name[] = {"none", "ev", "nt", "side", "evblk", "ev/2", "wv"};
static CUevent *ev_b;              /* timing, blocking sync */
static volatile unsigned *wv_host; /* NEV slots of pinned host memory the stream writes */
static CUdeviceptr wv_dev;         /* the same, as the device sees it */
static unsigned wv_seq;            /* the last sequence number written */

/* Stamps the stream after a launch, the i-th time, the way w. */
static void
stamp(enum way w, int i)
{
	switch (w) {
	case W_EV: CK(cuEventRecord(ev_t[i % NEV], S)); break;
	case W_NT: CK(cuEventRecord(ev_n[i % NEV], S)); break;
	case W_SIDE:
		CK(cuEventRecord(ev_n[i % NEV], S));
		CK(cuStreamWaitEvent(P, ev_n[i % NEV], 0));
		CK(cuEventRecord(ev_p[i % NEV], P));
		break;
	case W_EVB: CK(cuEventRecord(ev_b[i % NEV], S)); break;
	case W_EV2:
		if (i & 1)
			CK(cuEventRecord(ev_t[i % NEV], S));
		break;
	case W_WV:
		CK(cuStreamWriteValue32(S, wv_dev + (i % NEV) * sizeof(unsigned), ++wv_seq,
		                        CU_STREAM_WRITE_VALUE_DEFAULT));
		break;
	default: break;
	}
}

/* One step of the loops: a launch (a 2 us kernel when busy, else an empty one), stamped. */
static void
step(bool busy, enum way w, int i)
{
	if (busy)
		launch(f_spin, 2000, NULL);
	else
		launch(f_empty, 0, NULL);
	stamp(w, i);
}

static void
sync_all(void)
{
	CK(cuStreamSynchronize(S));
	CK(cuStreamSynchronize(P));
}

static void
pause_ns(double ns)
{
	double t = now();
	while (now() - t < ns)
		;
}

/* host: the thread's time in launch + stamp, one at a time on an idle GPU. */
static void
host_costs(void)
{
	enum { N = 4000 };
	static double v[N];
	printf("\n== host: ns in the calls, idle GPU (p50 / p90 / mean of %d)\n", N);
	for (int w = 0; w < W_NWAYS; w++) {
		double sum = 0;
		for (int i = 0; i < N; i++) {
			double t0 = now();
			launch(f_empty, 0, NULL);
			stamp((enum way)w, i);
			v[i] = now() - t0;
			sum += v[i];
			pause_ns(20000);
		}
		sync_all();
		printf("launch+%-5s %7.0f %7.0f %7.0f\n", way_name[w], pct(v, N, 0.5),
		       pct(v, N, 0.9), sum / N);
	}
	/* the queries the layer makes before a launch */
	{
		double sum = 0;
		CUstreamCaptureStatus cs;
		CUcontext cc;
		for (int i = 0; i < N; i++) {
			double t0 = now();
			CK(cuStreamIsCapturing(S, &cs));
			CK(cuCtxGetCurrent(&cc));
			v[i] = now() - t0;
			sum += v[i];
		}
		printf("%-12s %7.0f %7.0f %7.0f\n", "iscap+ctx", pct(v, N, 0.5), pct(v, N, 0.9),
		       sum / N);
	}
	/* the stamp alone, no launch */
	for (int w = 1; w < W_NWAYS; w++) {
		double sum = 0;
		for (int i = 0; i < N; i++) {
			double t0 = now();
			stamp((enum way)w, i);
			v[i] = now() - t0;
			sum += v[i];
			pause_ns(10000);
		}
		sync_all();
		printf("%-12s %7.0f %7.0f %7.0f\n", way_name[w], pct(v, N, 0.5), pct(v, N, 0.9),
		       sum / N);
	}
}

/* gpu: the stream's time per step with every step queued before the GPU reaches them. */
static void
gpu_costs(void)
{
	enum { N = 1500 };
	CUevent a, b;
	CK(cuEventCreate(&a, 0));
	CK(cuEventCreate(&b, 0));
	printf("\n== gpu: ns of the stream's time per step, steps back to back (%d steps)\n", N);
	const char *kinds[] = {"empty", "spin2us"};
	for (int k = 0; k < 2; k++)
		for (int w = 0; w < W_NWAYS; w++) {
			double best = 1e30;
			for (int rep = 0; rep < 3; rep++) {
				launch(f_spin, 40000000ull, NULL); /* 40 ms: the host queues all */
				CK(cuEventRecord(a, S));
				for (int i = 0; i < N; i++)
					step(k, (enum way)w, i);
				CK(cuEventRecord(b, S));
				sync_all();
				float ms;
				CK(cuEventElapsedTime(&ms, a, b));
				if (ms * 1e6 / N < best)
					best = ms * 1e6 / N;
			}
			printf("%-8s +%-5s %7.0f\n", kinds[k], way_name[w], best);
		}
	/* stamps alone, back to back */
	for (int w = 1; w < W_NWAYS; w++) {
		launch(f_spin, 40000000ull, NULL);
		CK(cuEventRecord(a, S));
		for (int i = 0; i < N; i++)
			stamp((enum way)w, i);
		CK(cuEventRecord(b, S));
		sync_all();
		float ms;
		CK(cuEventElapsedTime(&ms, a, b));
		printf("%-8s only  %7.0f\n", way_name[w], ms * 1e6 / N);
	}
}

/* loop: a launch loop's ns per launch, the stream idling (empty) or busy (2 us kernels). */
static void
loops(void)
{
	enum { N = 20000 };
	printf("\n== loop: ns per launch, best of 5 batches of %d\n", N);
	for (int k = 0; k < 2; k++)
		for (int w = 0; w < W_NWAYS; w++) {
			double best = 1e30;
			for (int rep = 0; rep < 6; rep++) {
				sync_all();
				double t0 = now();
				for (int i = 0; i < N; i++)
					step(k, (enum way)w, i);
				sync_all();
				double t = (now() - t0) / N;
				if (rep && t < best)
					best = t;
			}
			printf("%-5s +%-5s %7.0f\n", k ? "busy" : "idle", way_name[w], best);
		}
}

/* wv's host side: a thread spinning on the slots, stamping each sequence number as it lands. */
static double wv_seen[NEV];
static volatile int wv_want; /* slots to watch, from slot 0; 0: stop */
static unsigned wv_first;    /* the sequence number slot 0 will get */

static void *
wv_spinner(void *unused)
{
	(void)unused;
	int n = wv_want;
	for (int i = 0; i < n; i++) {
		while (wv_host[i] != wv_first + (unsigned)i)
			;
		wv_seen[i] = now();
	}
	return NULL;
}

/* stamp: each way's time against the kernel's own end, kernels of 3 to 30 us, spaced out
 * (idle stream) or back to back. wv's are host times, so only their differences from kernel
 * 0's are held against the kernels' (as are the events'). */
static void
accuracy(void)
{
	enum { N = 400 };
	unsigned long long *d_end, h_end[N];
	CK(cuMemAlloc((CUdeviceptr *)&d_end, N * sizeof(*d_end)));
	CUevent ref_s, ref_p;
	CK(cuEventCreate(&ref_s, 0));
	CK(cuEventCreate(&ref_p, 0));
	static double dev[N], abs_[N];
	printf("\n== stamp: ns from the kernel's own end, p50 of (stamp - end) and p50/p90/p99 "
	       "of |deviation from that|, %d kernels\n",
	       N);
	for (int queued = 0; queued < 2; queued++)
		for (int w = W_EV; w < W_NWAYS; w++) {
			if (w == W_NT || w == W_EVB || w == W_EV2)
				continue;
			sync_all();
			pthread_t spinner;
			if (w == W_WV) {
				wv_want = N;
				wv_first = wv_seq + 1;
				if (pthread_create(&spinner, NULL, wv_spinner, NULL) != 0) {
					fprintf(stderr, "evcost: pthread_create failed\n");
					exit(1);
				}
			}
			if (queued)
				launch(f_spin, 20000000ull, NULL);
			CK(cuEventRecord(ref_s, S));
			CK(cuStreamWaitEvent(P, ref_s, 0));
			CK(cuEventRecord(ref_p, P));
			/* the reference's own globaltimer time: a kernel right after it */
			for (int i = 0; i < N; i++) {
				unsigned long long ns = 3000 + (i % 10) * 3000;
				launch(f_spin, ns, d_end + i);
				stamp((enum way)w, i);
				if (!queued)
					pause_ns(60000);
			}
			sync_all();
			if (w == W_WV)
				pthread_join(spinner, NULL);
			CK(cuMemcpyDtoH(h_end, (CUdeviceptr)d_end, sizeof(h_end)));
			CUevent ref = w == W_SIDE ? ref_p : ref_s;
			for (int i = 0; i < N; i++) {
				if (w == W_WV) {
					dev[i] = (wv_seen[i] - wv_seen[0]) -
					         (double)(h_end[i] - h_end[0]);
					continue;
				}
				float ms;
				CUevent e = w == W_SIDE ? ev_p[i] : ev_t[i];
				CK(cuEventElapsedTime(&ms, ref, e));
				/* both relative to kernel 0's end */
				float ms0;
				CK(cuEventElapsedTime(&ms0, ref, w == W_SIDE ? ev_p[0] : ev_t[0]));
				dev[i] = (ms - ms0) * 1e6 - (double)(h_end[i] - h_end[0]);
			}
			double med = pct(dev, N, 0.5);
			for (int i = 0; i < N; i++)
				abs_[i] = dev[i] > med ? dev[i] - med : med - dev[i];
			printf("%-6s %-5s offset-from-k0 p50 %6.0f  spread %5.0f %5.0f %5.0f\n",
			       queued ? "queued" : "idle", way_name[w], med, pct(abs_, N, 0.5),
			       pct(abs_, N, 0.9), pct(abs_, N, 0.99));
		}
	CK(cuMemFree((CUdeviceptr)d_end));
}

int
main(int argc, char **argv)
{
	bool legacy = argc > 1 && strcmp(argv[1], "legacy") == 0;
	CUdevice d;
	CUcontext c;
	CK(cuInit(0));
	CK(cuDeviceGet(&d, 0));
	CK(cuDevicePrimaryCtxRetain(&c, d));
	CK(cuCtxSetCurrent(c));
	char name[128];
	CK(cuDeviceGetName(name, sizeof(name), d));
	int drv;
	CK(cuDriverGetVersion(&drv));
	printf("device %s, driver API %d\n", name, drv);
	if (cudaGetFuncBySymbol((cudaFunction_t *)&f_empty, (const void *)empty) != cudaSuccess ||
	    cudaGetFuncBySymbol((cudaFunction_t *)&f_spin, (const void *)spin) != cudaSuccess) {
		fprintf(stderr, "evcost: cudaGetFuncBySymbol failed\n");
		return 1;
	}
	CK(cuStreamCreate(&S, CU_STREAM_NON_BLOCKING));
	CK(cuStreamCreate(&P, CU_STREAM_NON_BLOCKING));
	if (legacy) /* the stream PyTorch launches on by default */
		S = CU_STREAM_LEGACY;
	printf("stream %s\n", legacy ? "legacy" : "non-blocking");
	ev_t = (CUevent *)calloc(NEV, sizeof(CUevent));
	ev_n = (CUevent *)calloc(NEV, sizeof(CUevent));
	ev_p = (CUevent *)calloc(NEV, sizeof(CUevent));
	ev_b = (CUevent *)calloc(NEV, sizeof(CUevent));
	for (int i = 0; i < NEV; i++) {
		CK(cuEventCreate(&ev_t[i], 0));
		CK(cuEventCreate(&ev_n[i], CU_EVENT_DISABLE_TIMING));
		CK(cuEventCreate(&ev_p[i], 0));
		CK(cuEventCreate(&ev_b[i], CU_EVENT_BLOCKING_SYNC));
	}
	int memops = 0;
	CK(cuDeviceGetAttribute(&memops, CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1, d));
	printf("stream memory operations: %s\n", memops ? "yes" : "no");
	void *wv;
	CK(cuMemHostAlloc(&wv, NEV * sizeof(unsigned), CU_MEMHOSTALLOC_DEVICEMAP));
	memset(wv, 0, NEV * sizeof(unsigned));
	wv_host = (volatile unsigned *)wv;
	CK(cuMemHostGetDevicePointer(&wv_dev, wv, 0));
	/* warm up */
	for (int i = 0; i < 2000; i++) {
		launch(f_empty, 0, NULL);
		stamp(W_SIDE, i);
		stamp(W_EV, i);
	}
	sync_all();
	host_costs();
	gpu_costs();
	loops();
	accuracy();
	return 0;
}
