// reset_midway.cu: a program that resets its device twice (cudaDeviceReset: the primary
// context, its events, streams and memory go) and goes on working. Three phases of 50 5-us
// kernels, a synchronize every 10, on a non-blocking stream (phase 0: k_before_reset) or by
// turns on it and the legacy stream (phases 1 and 2: k_after_reset), each kernel dating itself
// by %globaltimer; a cudaDeviceReset after each phase. Prints "reset_midway: truth NAME START
// END" a kernel in the order they were launched, then "reset_midway: done" (check_odd.py).
#define PROG "reset_midway"
#include "globaltimer.h"

enum { PHASES = 3, KERNELS = 50, NS = 5000 };

extern "C" __global__ void
k_before_reset(unsigned long long ns, unsigned long long *out)
{
	spin(ns, out);
}

extern "C" __global__ void
k_after_reset(unsigned long long ns, unsigned long long *out)
{
	spin(ns, out);
}

int
main()
{
	static unsigned long long h[PHASES][2 * KERNELS];
	for (int phase = 0; phase < PHASES; phase++) {
		unsigned long long *d;
		cudaStream_t s;
		CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
		CK(cudaMalloc(&d, sizeof(h[phase])));
		for (int i = 0; i < KERNELS; i++) {
			if (phase == 0)
				k_before_reset<<<1, 32, 0, s>>>(NS, d + 2 * i);
			else
				k_after_reset<<<1, 32, 0, i & 1 ? s : 0>>>(NS, d + 2 * i);
			if (i % 10 == 9)
				CK(cudaDeviceSynchronize());
		}
		CK(cudaMemcpy(h[phase], d, sizeof(h[phase]), cudaMemcpyDeviceToHost));
		CK(cudaDeviceReset());
	}
	for (int phase = 0; phase < PHASES; phase++)
		for (int i = 0; i < KERNELS; i++)
			std::printf(PROG ": truth %s %llu %llu\n",
			            phase ? "k_after_reset" : "k_before_reset", h[phase][2 * i],
			            h[phase][2 * i + 1]);
	std::printf(PROG ": done\n");
	return 0;
}
