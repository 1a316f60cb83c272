/* gapcal: how long one stream operation takes on the GPU, which libcuthook's gpu layer takes off
 * each piece's ends (gap_ns, calibrate_gap in gpu_poll.c): the differences between 17 timing
 * events recorded back to back on a non-blocking stream, 200 times each of three ways: free
 * (recorded at once), held by a host function until all are queued (as the library does), held
 * by a stream wait on a word of host memory. One line a chain: the way, its 16 differences (ns),
 * and after "|" their mean. Run it in several processes, one after another: on an H100 each
 * process's operation was its own (1,306, 1,228 and 1,252 ns), each steady to 2 ns (BENCHMARKS).
 *
 * build (a GPU machine): gcc -O2 -I/usr/local/cuda/include -o gapcal gapcal.c -lcuda
 * usage: gapcal */
#include <cuda.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define CK(x) do { CUresult r_ = (x); if (r_) { fprintf(stderr, "%s: %d\n", #x, r_); exit(1); } } while (0)
enum { N = 17, REPS = 200 };
static volatile int open_;
static void CUDA_CB hold(void *a) { (void)a; while (!open_) sched_yield(); }
int main(void)
{
	CUdevice d; CUcontext c; CUstream s; CUevent ev[N];
	CK(cuInit(0)); CK(cuDeviceGet(&d, 0)); CK(cuDevicePrimaryCtxRetain(&c, d)); CK(cuCtxSetCurrent(c));
	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	for (int i = 0; i < N; i++) CK(cuEventCreate(&ev[i], 0));
	volatile unsigned *w; CUdeviceptr wd;
	CK(cuMemHostAlloc((void **)&w, 64, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP));
	CK(cuMemHostGetDevicePointer(&wd, (void *)w, 0));
	*w = 0;
	unsigned seq = 0;
	const char *names[] = {"free", "hostfn", "wait"};
	for (int way = 0; way < 3; way++)
		for (int rep = 0; rep < REPS; rep++) {
			if (way == 1) { open_ = 0; CK(cuLaunchHostFunc(s, hold, NULL)); }
			if (way == 2) CK(cuStreamWaitValue32(s, wd, ++seq, CU_STREAM_WAIT_VALUE_GEQ));
			for (int i = 0; i < N; i++) CK(cuEventRecord(ev[i], s));
			if (way == 1) open_ = 1;
			if (way == 2) __atomic_store_n(w, seq, __ATOMIC_SEQ_CST);
			CK(cuEventSynchronize(ev[N - 1]));
			printf("%s", names[way]);
			for (int i = 1; i < N; i++) { float ms; CK(cuEventElapsedTime(&ms, ev[i - 1], ev[i])); printf(" %.0f", ms * 1e6); }
			float tot; CK(cuEventElapsedTime(&tot, ev[0], ev[N - 1]));
			printf(" | %.1f\n", tot * 1e6 / (N - 1));
		}
	return 0;
}
