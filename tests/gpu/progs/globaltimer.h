// globaltimer.h: what the programs here that check cut's times by the GPU's own clock share:
// the clock (%globaltimer, ns, the clock CUDA's events read) and a check of runtime calls that
// makes main return 1 with the call and its error (PROG names the program).
#ifndef GLOBALTIMER_H
#define GLOBALTIMER_H
#include <cstdio>
#include <cuda_runtime.h>

__device__ static inline unsigned long long
gtimer()
{
	unsigned long long t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

#define CK(x)                                                                                      \
	do {                                                                                       \
		cudaError_t e_ = (x);                                                              \
		if (e_ != cudaSuccess) {                                                           \
			std::fprintf(stderr, PROG ": %s: %s\n", #x, cudaGetErrorString(e_));       \
			return 1;                                                                  \
		}                                                                                  \
	} while (0)
#endif
