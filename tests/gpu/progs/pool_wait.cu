// Memory freed on one stream and allocated again on another: a memory pool hands the block
// back and makes the second stream wait for the first (internal dependencies, on by default),
// though no call names that wait. The pool may hold one block only (maxSize), so that every
// round reuses it. Each of 50 rounds: `hold` (200 us) on stream A, cudaFreeAsync of the block on
// A, cudaMallocFromPoolAsync of it on the idle stream B, `after_free` (5 us) on B. Both kernels
// are loaded and run once first. Both write their own %globaltimer start and end; the program
// prints, a character a round, whether after_free began after hold ended (1) or not (0), then
// "done" (check_pool.py holds the trace to the first line).
#define PROG "pool_wait"
#include "globaltimer.h"

enum { ROUNDS = 50, BLOCK = 32 << 20 };

__global__ void
hold(unsigned long long ns, unsigned long long *out)
{
	spin(ns, out);
}

__global__ void
after_free(unsigned long long ns, unsigned long long *out)
{
	spin(ns, out);
}

int
main()
{
	cudaStream_t a, b;
	CK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
	CK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
	unsigned long long *t, h[ROUNDS * 4];
	CK(cudaMalloc(&t, sizeof(h)));
	/* Lazy loading makes a kernel's first launch wait for the device: not this test's wait. */
	hold<<<1, 1, 0, a>>>(1000, t);
	after_free<<<1, 1, 0, b>>>(1000, t + 2);
	CK(cudaDeviceSynchronize());
	cudaMemPoolProps props = {};
	props.allocType = cudaMemAllocationTypePinned;
	props.location.type = cudaMemLocationTypeDevice;
	props.location.id = 0;
	props.maxSize = BLOCK;
	cudaMemPool_t pool;
	CK(cudaMemPoolCreate(&pool, &props));
	void *p;
	CK(cudaMallocFromPoolAsync(&p, BLOCK, pool, a));
	for (int i = 0; i < ROUNDS; i++) {
		hold<<<1, 1, 0, a>>>(200000, t + 4 * i);
		CK(cudaFreeAsync(p, a));
		CK(cudaMallocFromPoolAsync(&p, BLOCK, pool, b));
		after_free<<<1, 1, 0, b>>>(5000, t + 4 * i + 2);
		CK(cudaFreeAsync(p, b));
		CK(cudaMallocFromPoolAsync(&p, BLOCK, pool, a)); /* back to A, after B's work */
		CK(cudaDeviceSynchronize());
	}
	CK(cudaFreeAsync(p, a));
	CK(cudaDeviceSynchronize());
	CK(cudaMemcpy(h, t, sizeof(h), cudaMemcpyDeviceToHost));
	std::printf("pool_wait: waited ");
	for (int i = 0; i < ROUNDS; i++)
		std::putchar(h[4 * i + 2] >= h[4 * i + 1] ? '1' : '0');
	std::printf("\npool_wait: done\n");
	return 0;
}
