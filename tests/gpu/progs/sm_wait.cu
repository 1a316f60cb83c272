// A kernel on an idle stream while another stream's kernel holds every SM: `fill` (one block of
// 1024 threads and all the shared memory an SM has, on each SM, 200 us) on stream A, then
// `small` (one thread, 5 us) on the idle stream B, 50 times. Both write their own %globaltimer
// start and end; the program prints in how many rounds small began after fill ended and how
// long after fill began (tests/gpu/sm_wait.sh holds cut's times to it: a limit of timing
// without CUPTI, stated in cuthook(1)).
#define PROG "sm_wait"
#include "globaltimer.h"

enum { ROUNDS = 50 };

__global__ void
fill(unsigned long long ns, unsigned long long *out)
{
	extern __shared__ char sh[];
	unsigned long long t0 = gtimer(), t;
	while ((t = gtimer()) - t0 < ns)
		sh[threadIdx.x] = 1;
	if (blockIdx.x == 0 && threadIdx.x == 0) {
		out[0] = t0;
		out[1] = t;
	}
}

__global__ void
small(unsigned long long ns, unsigned long long *out)
{
	unsigned long long t0 = gtimer(), t;
	while ((t = gtimer()) - t0 < ns)
		;
	out[0] = t0;
	out[1] = t;
}

int
main()
{
	cudaStream_t a, b;
	CK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
	CK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
	int sms, smem;
	CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
	CK(cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
	CK(cudaFuncSetAttribute(fill, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
	unsigned long long *t, h[ROUNDS * 4];
	CK(cudaMalloc(&t, sizeof(h)));
	/* Loaded and run once first: a first launch waits for the device. */
	fill<<<sms, 1024, smem, a>>>(1000, t);
	small<<<1, 1, 0, b>>>(1000, t + 2);
	CK(cudaDeviceSynchronize());
	for (int i = 0; i < ROUNDS; i++) {
		fill<<<sms, 1024, smem, a>>>(200000, t + 4 * i);
		small<<<1, 1, 0, b>>>(5000, t + 4 * i + 2);
		CK(cudaDeviceSynchronize());
	}
	CK(cudaMemcpy(h, t, sizeof(h), cudaMemcpyDeviceToHost));
	int after = 0;
	double lag = 0;
	for (int i = 0; i < ROUNDS; i++) {
		after += h[4 * i + 2] >= h[4 * i + 1];
		lag += (double)h[4 * i + 2] - (double)h[4 * i];
	}
	std::printf("sm_wait: small began after fill ended in %d of %d rounds, %.1f us after fill "
	            "began (mean)\n",
	            after, ROUNDS, lag / ROUNDS / 1e3);
	return 0;
}
