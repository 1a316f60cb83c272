/* driverapi: a CUDA driver-API program (alloc, copy, launch, sync, free) for capture
 * validation, and the per-call microbenchmark of the overhead tables.
 *
 * Build on a GPU machine:  nvcc -fatbin -o vecadd.fatbin vecadd.cu
 *                          gcc -O2 -I/usr/local/cuda/include -o driverapi driverapi.c -lcuda
 * usage: driverapi [vecadd.fatbin]             one vecAdd round trip (1M floats), prints "ok"
 *        driverapi bench N [vecadd.fatbin]     N calls each of cuCtxGetCurrent, an empty kernel
 *                                              launch (+ sync every 1000) and an 8-byte HtoD
 *                                              copy; prints ns per call for each
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(call)                                                                                \
	do {                                                                                       \
		CUresult rc_ = (call);                                                             \
		if (rc_ != CUDA_SUCCESS) {                                                         \
			const char *s_ = "?";                                                      \
			cuGetErrorString(rc_, &s_);                                                \
			fprintf(stderr, "driverapi: %s: %s\n", #call, s_);                         \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

static double
now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void
vecadd(CUmodule mod)
{
	enum { N = 1 << 20 };
	CUfunction f;
	CUdeviceptr a, b, c;
	CUstream s;
	float *h = malloc(N * sizeof(float));
	int n = N;
	for (int i = 0; i < N; i++)
		h[i] = (float)i;
	CHECK(cuModuleGetFunction(&f, mod, "vecAdd"));
	CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CHECK(cuMemAlloc(&a, N * sizeof(float)));
	CHECK(cuMemAlloc(&b, N * sizeof(float)));
	CHECK(cuMemAlloc(&c, N * sizeof(float)));
	CHECK(cuMemcpyHtoD(a, h, N * sizeof(float)));
	CHECK(cuMemcpyHtoDAsync(b, h, N * sizeof(float), s));
	void *params[] = {&a, &b, &c, &n};
	CHECK(cuLaunchKernel(f, N / 256, 1, 1, 256, 1, 1, 0, s, params, NULL));
	CHECK(cuStreamSynchronize(s));
	CHECK(cuMemcpyDtoH(h, c, N * sizeof(float)));
	for (int i = 0; i < N; i++)
		if (h[i] != 2.0f * (float)i) {
			fprintf(stderr, "driverapi: wrong result at %d\n", i);
			exit(1);
		}
	CHECK(cuMemFree(a));
	CHECK(cuMemFree(b));
	CHECK(cuMemFree(c));
	CHECK(cuStreamDestroy(s));
	free(h);
	printf("ok\n");
}

static void
bench(CUmodule mod, long n)
{
	CUfunction f;
	CUcontext ctx;
	CUdeviceptr d;
	char host[8] = {0};
	CHECK(cuModuleGetFunction(&f, mod, "empty"));
	CHECK(cuMemAlloc(&d, 8));
	double t0 = now_ns();
	for (long i = 0; i < n; i++)
		CHECK(cuCtxGetCurrent(&ctx));
	double t1 = now_ns();
	for (long i = 0; i < n; i++) {
		CHECK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
		if (i % 1000 == 999)
			CHECK(cuCtxSynchronize());
	}
	CHECK(cuCtxSynchronize());
	double t2 = now_ns();
	for (long i = 0; i < n; i++)
		CHECK(cuMemcpyHtoD(d, host, sizeof(host)));
	double t3 = now_ns();
	printf("call\tns_per_call\n");
	printf("cuCtxGetCurrent\t%.1f\n", (t1 - t0) / n);
	printf("cuLaunchKernel_empty\t%.1f\n", (t2 - t1) / n);
	printf("cuMemcpyHtoD_8B\t%.1f\n", (t3 - t2) / n);
	CHECK(cuMemFree(d));
}

int
main(int argc, char *argv[])
{
	int benchmode = argc > 1 && strcmp(argv[1], "bench") == 0;
	long n = benchmode && argc > 2 ? atol(argv[2]) : 0;
	const char *fatbin = argc > (benchmode ? 3 : 1) ? argv[benchmode ? 3 : 1] : "vecadd.fatbin";
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	CHECK(cuInit(0));
	CHECK(cuDeviceGet(&dev, 0));
	CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CHECK(cuCtxSetCurrent(ctx));
	CHECK(cuModuleLoad(&mod, fatbin));
	if (benchmode)
		bench(mod, n > 0 ? n : 100000);
	else
		vecadd(mod);
	CHECK(cuModuleUnload(mod));
	CHECK(cuDevicePrimaryCtxRelease(dev));
	return 0;
}
