// launchbench: what cut's capture costs a launch-bound and a GPU-bound program on a real GPU
// (tests/bench/bench-gpu-layer.sh runs it plain and under each capture mode).
//
// usage: launchbench
// Prints, for each pattern, the best of 5 batches of 20000 launches, in ns per launch:
//   idle   empty kernels through cudaLaunchKernel: the GPU outruns the host, the stream idles
//   busy   2 us spin kernels: the host outruns the GPU, the stream stays busy
//   two    empty kernels on two streams in turn
#include <cuda_runtime.h>
#include <stdio.h>
#include <time.h>

__global__ void empty(void) {}
__global__ void spin(long long cycles)
{
	long long t0 = clock64();
	while (clock64() - t0 < cycles)
		;
}

static double
now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

enum { N = 20000 };

int
main(void)
{
	cudaStream_t s[2];
	cudaStreamCreate(&s[0]);
	cudaStreamCreate(&s[1]);
	int khz;
	cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0);
	long long two_us = (long long)khz * 2 / 1000; /* cycles in 2 us (the rate is in kHz) */
	const char *names[] = {"idle", "busy", "two"};
	for (int p = 0; p < 3; p++) {
		double best = 1e30;
		for (int rep = 0; rep < 6; rep++) {
			cudaDeviceSynchronize();
			double t0 = now();
			for (int i = 0; i < N; i++) {
				if (p == 1)
					spin<<<1, 1, 0, s[0]>>>(two_us);
				else
					empty<<<1, 1, 0, s[p == 2 ? i & 1 : 0]>>>();
			}
			cudaDeviceSynchronize();
			double t = (now() - t0) / N;
			if (rep && t < best) /* the first batch warms up */
				best = t;
		}
		printf("%s %.0f\n", names[p], best);
	}
	return cudaGetLastError() != cudaSuccess;
}
