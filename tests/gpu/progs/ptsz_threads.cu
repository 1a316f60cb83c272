// Four threads, each on its per-thread default stream (built with --default-stream per-thread:
// the _ptsz/_ptds entry points), launching kernels and async copies from pinned memory, one of
// them on a stream it creates; then a device-wide synchronisation. Exits 0 when the sums agree.
#include <cstdio>
#include <thread>
#include <vector>

__global__ void
inc(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] += 1.0f;
}

static void
work(int id, float *out)
{
	const int n = 1 << 16;
	float *d, *h;
	cudaMalloc(&d, n * sizeof(float));
	cudaMallocHost(&h, n * sizeof(float));
	cudaMemsetAsync(d, 0, n * sizeof(float), 0);
	cudaStream_t own = 0;
	if (id == 3)
		cudaStreamCreateWithFlags(&own, cudaStreamNonBlocking);
	for (int k = 0; k < 200; k++)
		inc<<<n / 256, 256, 0, own>>>(d, n);
	cudaMemcpyAsync(h, d, n * sizeof(float), cudaMemcpyDeviceToHost, own);
	cudaStreamSynchronize(own);
	out[id] = h[0] + h[n - 1];
	cudaFreeHost(h);
	cudaFree(d);
	if (own)
		cudaStreamDestroy(own);
}

int
main()
{
	float out[4] = {0};
	std::vector<std::thread> ts;
	for (int i = 0; i < 4; i++)
		ts.emplace_back(work, i, out);
	for (auto &t : ts)
		t.join();
	cudaDeviceSynchronize();
	for (int i = 0; i < 4; i++)
		if (out[i] != 400.0f) {
			printf("ptsz: thread %d got %g\n", i, out[i]);
			return 1;
		}
	printf("ptsz ok\n");
	return 0;
}
