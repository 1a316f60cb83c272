// release_midway.cu: a program of the driver API alone that ends its device's primary context by
// giving back the last reference to it (cuDevicePrimaryCtxRelease: the driver resets the context
// then, its events, streams and memory going with it) and takes it again, twice. Three phases of
// 50 5-us kernels on a non-blocking stream, a cuCtxSynchronize every 10; halfway through each, a
// second reference taken and given back with kernels in flight (which ends nothing); each kernel
// dating itself by %globaltimer. The kernels come from a fatbin of this file (argv[1]), so no
// runtime holds a reference of its own. Prints "release_midway: truth NAME START END" a kernel
// in the order they were launched, then "release_midway: done" (check_odd.py).
// usage: release_midway FATBIN
#define PROG "release_midway"
#include "globaltimer.h"

enum { PHASES = 3, KERNELS = 50, NS = 5000 };

extern "C" __global__ void
k_before_release(unsigned long long ns, unsigned long long *out)
{
	spin(ns, out);
}

int
main(int argc, char **argv)
{
	static unsigned long long h[PHASES][2 * KERNELS];
	if (argc != 2) {
		std::fprintf(stderr, "usage: " PROG " FATBIN\n");
		return 2;
	}
	CUdevice dev;
	CKD(cuInit(0));
	CKD(cuDeviceGet(&dev, 0));
	for (int phase = 0; phase < PHASES; phase++) {
		CUcontext ctx, again;
		CUmodule m;
		CUfunction f;
		CUstream s;
		CUdeviceptr d;
		CKD(cuDevicePrimaryCtxRetain(&ctx, dev));
		CKD(cuCtxSetCurrent(ctx));
		CKD(cuModuleLoad(&m, argv[1]));
		CKD(cuModuleGetFunction(&f, m, "k_before_release"));
		CKD(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
		CKD(cuMemAlloc(&d, sizeof(h[phase])));
		for (int i = 0; i < KERNELS; i++) {
			unsigned long long ns = NS;
			CUdeviceptr out = d + 2 * i * sizeof(unsigned long long);
			void *params[] = {&ns, &out};
			CKD(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, params, NULL));
			if (i == KERNELS / 2) { /* not the last reference: the context goes on */
				CKD(cuDevicePrimaryCtxRetain(&again, dev));
				CKD(cuDevicePrimaryCtxRelease(dev));
			}
			if (i % 10 == 9)
				CKD(cuCtxSynchronize());
		}
		CKD(cuMemcpyDtoH(h[phase], d, sizeof(h[phase])));
		CKD(cuDevicePrimaryCtxRelease(dev)); /* the last: the context ends */
	}
	for (int phase = 0; phase < PHASES; phase++)
		for (int i = 0; i < KERNELS; i++)
			std::printf(PROG ": truth k_before_release %llu %llu\n", h[phase][2 * i],
			            h[phase][2 * i + 1]);
	std::printf(PROG ": done\n");
	return 0;
}
