// globaltimer.h: what the programs here that check cut's times by the GPU's own clock share:
// the clock (%globaltimer, ns, the clock CUDA's events read), a spin that writes when it began
// and ended, and checks of runtime and driver calls that make main return 1 with the call and
// its error (PROG names the program).
#ifndef GLOBALTIMER_H
#define GLOBALTIMER_H
#include <cstdio>
#include <cuda.h>
#include <cuda_runtime.h>

__device__ static inline unsigned long long
gtimer()
{
	unsigned long long t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

// Spins ns by the clock; block 0's first thread writes when it began and ended at out[0..1].
__device__ static void
spin(unsigned long long ns, unsigned long long *out)
{
	unsigned long long t0 = gtimer(), t;
	while ((t = gtimer()) - t0 < ns)
		;
	if (blockIdx.x == 0 && threadIdx.x == 0) {
		out[0] = t0;
		out[1] = t;
	}
}

#define CK(x)                                                                                      \
	do {                                                                                       \
		cudaError_t e_ = (x);                                                              \
		if (e_ != cudaSuccess) {                                                           \
			std::fprintf(stderr, PROG ": %s: %s\n", #x, cudaGetErrorString(e_));       \
			return 1;                                                                  \
		}                                                                                  \
	} while (0)
#define CKD(x)                                                                                     \
	do {                                                                                       \
		CUresult r_ = (x);                                                                 \
		if (r_ != CUDA_SUCCESS) {                                                          \
			const char *s_ = "?";                                                      \
			cuGetErrorString(r_, &s_);                                                 \
			std::fprintf(stderr, PROG ": %s: %s\n", #x, s_);                           \
			return 1;                                                                  \
		}                                                                                  \
	} while (0)
#endif
