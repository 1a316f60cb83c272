// contexts.cu: work in more than one context of one process, each kernel dating itself by
// %globaltimer: the primary context; a context of its own (cuCtxCreate), made current by
// cuCtxPushCurrent around its launches; and a green context holding part of the
// multiprocessors (cuGreenCtxCreate, its stream from cuGreenCtxStreamCreate), pushed the same
// way. 20 rounds after one that loads the kernels: in each, a 5 us kernel in each context, then
// 50 us in the primary one beside 5 us in the green one, at once; then the green context and
// its own destroyed as soon as their last work is done. Prints "contexts: truth NAME
// START END" a kernel in the order launched, then "contexts: done" (check_odd.py); a machine
// without green contexts skips them and says so.
#define PROG "contexts"
#include "globaltimer.h"

enum { ROUNDS = 21, SLOTS = 512, SHORT_NS = 5000, LONG_NS = 50000 };

extern "C" __global__ void
k_primary(unsigned long long ns, unsigned long long *out)
{
	spin(ns, out);
}

extern "C" __global__ void
k_own_ctx(unsigned long long ns, unsigned long long *out)
{
	spin(ns, out);
}

extern "C" __global__ void
k_green(unsigned long long ns, unsigned long long *out)
{
	spin(ns, out);
}

static unsigned long long *host_truth; /* mapped pinned memory every context writes */
static const char *names[SLOTS];
static int nslots;

static unsigned long long *
slot(const char *name)
{
	names[nslots] = name;
	return host_truth + 2 * nslots++;
}

// A kernel by its CUkernel handle, which any context launches (cuLaunchKernel takes one).
static int
launch(CUkernel k, CUstream s, unsigned long long ns, unsigned long long *out)
{
	void *args[] = {&ns, &out};
	CKD(cuLaunchKernel((CUfunction)k, 1, 1, 1, 32, 1, 1, 0, s, args, NULL));
	return 0;
}

int
main()
{
	CK(cudaSetDevice(0));
	CK(cudaHostAlloc(&host_truth, 2 * sizeof(unsigned long long) * SLOTS,
	                 cudaHostAllocMapped | cudaHostAllocPortable));
	CUdevice dev;
	CKD(cuDeviceGet(&dev, 0));
	CUkernel kp, ko, kg;
	CK(cudaGetKernel(&kp, k_primary));
	CK(cudaGetKernel(&ko, k_own_ctx));
	CK(cudaGetKernel(&kg, k_green));
	cudaStream_t sp;
	CK(cudaStreamCreateWithFlags(&sp, cudaStreamNonBlocking));

	CUcontext own;
	CUctxCreateParams params = {};
	CKD(cuCtxCreate(&own, &params, 0, dev));
	CUstream so;
	CKD(cuStreamCreate(&so, CU_STREAM_NON_BLOCKING));
	CUcontext dummy;
	CKD(cuCtxPopCurrent(&dummy));

	CUgreenCtx green = NULL;
	CUcontext gctx = NULL;
	CUstream sg = NULL;
	CUdevResource all, part[1], rest;
	unsigned nparts = 1;
	CUdevResourceDesc desc;
	if (cuDeviceGetDevResource(dev, &all, CU_DEV_RESOURCE_TYPE_SM) == CUDA_SUCCESS &&
	    cuDevSmResourceSplitByCount(part, &nparts, &all, &rest, 0, 16) == CUDA_SUCCESS &&
	    cuDevResourceGenerateDesc(&desc, part, 1) == CUDA_SUCCESS &&
	    cuGreenCtxCreate(&green, desc, dev, CU_GREEN_CTX_DEFAULT_STREAM) == CUDA_SUCCESS) {
		CKD(cuGreenCtxStreamCreate(&sg, green, CU_STREAM_NON_BLOCKING, 0));
		CKD(cuCtxFromGreenCtx(&gctx, green));
	} else
		std::printf(PROG ": no green context here\n");

	unsigned long long *dev_truth;
	CK(cudaHostGetDevicePointer(&dev_truth, host_truth, 0));
	for (int r = 0; r < ROUNDS; r++) {
		/* (the device writes host_truth through dev_truth: the same place) */
		if (launch(kp, sp, SHORT_NS, dev_truth + (slot("k_primary") - host_truth)))
			return 1;
		CK(cudaStreamSynchronize(sp));
		CKD(cuCtxPushCurrent(own));
		if (launch(ko, so, SHORT_NS, dev_truth + (slot("k_own_ctx") - host_truth)))
			return 1;
		CKD(cuStreamSynchronize(so));
		CKD(cuCtxPopCurrent(&dummy));
		if (gctx) {
			CKD(cuCtxPushCurrent(gctx));
			if (launch(kg, sg, SHORT_NS, dev_truth + (slot("k_green") - host_truth)))
				return 1;
			CKD(cuStreamSynchronize(sg));
			CKD(cuCtxPopCurrent(&dummy));
			/* at once: 50 us in the primary context beside 5 us in the green one */
			if (launch(kp, sp, LONG_NS, dev_truth + (slot("k_primary:long") - host_truth)))
				return 1;
			CKD(cuCtxPushCurrent(gctx));
			if (launch(kg, sg, SHORT_NS, dev_truth + (slot("k_green:beside") - host_truth)))
				return 1;
			CKD(cuStreamSynchronize(sg));
			CKD(cuCtxPopCurrent(&dummy));
			CK(cudaStreamSynchronize(sp));
		}
	}
	/* The contexts ended as soon as their last work is done, as a program that is through
	 * with them does: the library's events of each go with it. */
	if (green)
		CKD(cuGreenCtxDestroy(green));
	CKD(cuCtxDestroy(own));
	for (int i = 0; i < nslots; i++)
		std::printf(PROG ": truth %s %llu %llu\n", names[i], host_truth[2 * i],
		            host_truth[2 * i + 1]);
	std::printf(PROG ": done\n");
	return 0;
}
