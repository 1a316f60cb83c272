/* drvcost: what the driver's own calls cost that libcuthook's gpu layer makes for each launch
 * (cuStreamIsCapturing, cuCtxGetCurrent, cuEventRecord) and on its completion thread
 * (cuEventQuery, cuEventElapsedTime), in ns per call, three rounds of 200,000 calls each, on
 * an idle non-blocking stream: the floor under the layer's cost (BENCHMARKS.md).
 *
 * build (a GPU machine): gcc -O2 -I/usr/local/cuda/include -o drvcost drvcost.c -lcuda
 * usage: drvcost */
#include <cuda.h>
#include <stdio.h>
#include <time.h>
static double
now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}
int
main(void)
{
	CUdevice d;
	CUcontext c;
	CUstream s;
	CUevent e[4096];
	CUmodule m;
	cuInit(0);
	cuDeviceGet(&d, 0);
	cuDevicePrimaryCtxRetain(&c, d);
	cuCtxSetCurrent(c);
	cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
	for (int i = 0; i < 4096; i++)
		cuEventCreate(&e[i], 0);
	int N = 200000;
	double t0;
	CUstreamCaptureStatus st;
	CUcontext cc;
	int cap;
	for (int rep = 0; rep < 3; rep++) {
		t0 = now();
		for (int i = 0; i < N; i++)
			cuStreamIsCapturing(s, &st);
		printf("cuStreamIsCapturing %.1f\n", (now() - t0) / N);
		t0 = now();
		for (int i = 0; i < N; i++)
			cuCtxGetCurrent(&cc);
		printf("cuCtxGetCurrent %.1f\n", (now() - t0) / N);
		t0 = now();
		for (int i = 0; i < N; i++) {
			cuEventRecord(e[i & 4095], s);
			if ((i & 4095) == 4095)
				cuStreamSynchronize(s);
		}
		cuStreamSynchronize(s);
		printf("cuEventRecord %.1f\n", (now() - t0) / N);
		t0 = now();
		for (int i = 0; i < N; i++)
			cuEventQuery(e[i & 4095]);
		printf("cuEventQuery %.1f\n", (now() - t0) / N);
		float ms;
		t0 = now();
		for (int i = 0; i < N; i++)
			cuEventElapsedTime(&ms, e[0], e[1]);
		printf("cuEventElapsedTime %.1f\n", (now() - t0) / N);
	}
	return 0;
}
