// param_kernels.cu: kernels alike but for the bytes of parameters they are handed (16 to
// 4,016), each spinning a set number of cycles, for tests/gpu/switch_setup.sh: how long after
// its START a kernel starts, first after another process's turn and queued in its own.
// Built to a cubin (nvcc -arch=sm_90 -cubin) and launched by switch_setup.py.
#include <stdint.h>

__device__ __forceinline__ void
spin(long long cyc)
{
	long long t0 = clock64();
	while (clock64() - t0 < cyc)
		;
}

#define PARAMS_KERNEL(N)                                                                           \
	struct P##N {                                                                              \
		char b[N];                                                                         \
	};                                                                                         \
	extern "C" __global__ void ks_p##N(int *out, long long cyc, P##N p)                        \
	{                                                                                          \
		spin(cyc);                                                                         \
		if (!threadIdx.x && !blockIdx.x)                                                   \
			out[1] += p.b[N - 1];                                                      \
	}
PARAMS_KERNEL(64)
PARAMS_KERNEL(128)
PARAMS_KERNEL(256)
PARAMS_KERNEL(384)
PARAMS_KERNEL(512)
PARAMS_KERNEL(1024)
PARAMS_KERNEL(4000)

extern "C" __global__ void
ks_small(int *out, long long cyc)
{
	spin(cyc);
	if (!threadIdx.x && !blockIdx.x)
		out[0]++;
}

extern "C" __global__ void
ks_wait(int *out, long long cyc)
{
	spin(cyc);
	if (!threadIdx.x && !blockIdx.x)
		out[2]++;
}
