/* launchends: a launch-bound loop of 1.5 us kernels on the legacy stream, each writing when it
 * began and ended by the GPU's own clock (%globaltimer), the host spinning GAP ns (default
 * 10,000) after each launch; at the end one "launchends: truth k START END" line a kernel, as
 * tests/gpu/check_odd.py reads them. Under cuthook, how many kernels were done inside their
 * launch call (their END ran as it was recorded: "end": "bound") and how far each piece is
 * from the kernel's own clock (which reads its start some 0.5-0.9 us late):
 *   cuthook -o t.jsonl -- ./launchends 10000 > t.out
 *   python3 tests/gpu/check_odd.py t.jsonl t.out
 * build (a GPU machine): nvcc -O2 -arch=sm_90 -o launchends launchends.cu */
#define PROG "launchends"
#include <stdlib.h>
#include <time.h>
#include "../gpu/progs/globaltimer.h"

extern "C" __global__ void
k(unsigned long long ns, unsigned long long *out)
{
	spin(ns, out);
}

static long long
now()
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

int
main(int argc, char **argv)
{
	const int n = 2000;
	long long gap = argc > 1 ? atoll(argv[1]) : 10000;
	unsigned long long *d, *h = (unsigned long long *)malloc(16 * n);
	if (!h)
		return 1;
	CK(cudaMalloc(&d, 16 * n));
	for (int i = 0; i < n; i++) {
		k<<<1, 32>>>(1500, d + 2 * i);
		long long t = now();
		while (now() - t < gap)
			;
	}
	CK(cudaDeviceSynchronize());
	CK(cudaMemcpy(h, d, 16 * n, cudaMemcpyDeviceToHost));
	for (int i = 0; i < n; i++)
		printf(PROG ": truth k %llu %llu\n", h[2 * i], h[2 * i + 1]);
	printf(PROG ": done\n");
	return 0;
}
