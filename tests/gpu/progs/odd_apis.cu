// odd_apis.cu: the ways of putting work on a GPU that the PyTorch scripts cut was built against
// do not use, each kernel dating itself by the GPU's own clock (%globaltimer, the clock CUDA's
// events read) so that check_odd.py can hold cut's gpu events to it. Each case runs ROUNDS
// times, after one round that loads its kernels (lazy loading makes a first launch wait):
//
//   plain      a kernel on a non-blocking stream (the clocks' offset is taken over every case)
//   coop       cudaLaunchCooperativeKernel, two blocks
//   cluster    cudaLaunchKernelEx with a cluster of two blocks (sm_90)
//   extra      cuLaunchKernel with its arguments in one buffer (CU_LAUNCH_PARAM_BUFFER_POINTER)
//   hostfunc   a kernel, a host function that spins 100 us, a kernel: the second waits for it
//   crosswait  200 us on stream A, an event, stream B told to wait for it, 5 us on idle B
//   legacy     200 us on a blocking stream, then 5 us on the legacy stream (which waits for it
//              unasked), and the other way round
//   pdl        a kernel that lets the next start early (programmatic dependent launch) and
//              one launched to
//   managed    a kernel touching managed memory the host wrote (page faults), then prefetched
//   vmm        memory made with cuMemCreate/cuMemMap, a memset and a kernel on it
//   copy2d     cudaMemcpy2DAsync and cudaMemset2DAsync, then a kernel on the same stream
//   graph      captured graphs launched each round, on an idle stream: two kernels alone, with
//              a branch on another stream beside the first, or with a host function, a memset,
//              both, a copy or an event recorded between them
//
// Prints "odd_apis: truth NAME START END" a kernel in the order they were launched (NAME: the
// kernel's, then ":case" where one kernel serves two; graph: START of its first kernel, END of
// its last), then "odd_apis: done".
#define PROG "odd_apis"
#include "globaltimer.h"

#include <cooperative_groups.h>
#include <cstdlib>
#include <cstring>
#include <time.h>

enum { ROUNDS = 20, SLOTS = 4096, SHORT_NS = 5000, LONG_NS = 200000, MANAGED = 16 << 20 };

#define PROBE(name)                                                                                \
	extern "C" __global__ void name(unsigned long long ns, unsigned long long *out)            \
	{                                                                                          \
		spin(ns, out);                                                                     \
	}
PROBE(k_plain)
PROBE(k_coop)
PROBE(k_cluster)
PROBE(k_extra)
PROBE(k_before_host)
PROBE(k_after_host)
PROBE(k_long)
PROBE(k_waiter)
PROBE(k_blocking)
PROBE(k_legacy)
PROBE(k_legacy_long)
PROBE(k_after_legacy)
PROBE(k_vmm)
PROBE(k_after_copy)

// Lets the kernel launched after it begin at once, then runs on.
extern "C" __global__ void
k_pdl_first(unsigned long long ns, unsigned long long *out)
{
	cudaTriggerProgrammaticLaunchCompletion();
	spin(ns, out);
}

extern "C" __global__ void
k_pdl_second(unsigned long long ns, unsigned long long *out)
{
	spin(ns, out);
}

extern "C" __global__ void
k_managed(char *p, size_t n, unsigned long long *out)
{
	unsigned long long t0 = gtimer();
	for (size_t i = (size_t)threadIdx.x * 4096; i < n; i += (size_t)blockDim.x * 4096)
		p[i]++;
	__syncthreads();
	if (threadIdx.x == 0) {
		out[0] = t0;
		out[1] = gtimer();
	}
}

// A graph replays the arguments it was captured with: its kernels find their round in *round
// and write their times at out[6 * round]: the first kernel's, the last's, a side branch's.
extern "C" __global__ void
k_graph_first(unsigned long long ns, unsigned long long *out, unsigned *round)
{
	spin(ns, out + 6 * *round);
}

extern "C" __global__ void
k_graph_side(unsigned long long ns, unsigned long long *out, unsigned *round)
{
	spin(ns, out + 6 * *round + 4);
}

extern "C" __global__ void
k_graph_last(unsigned long long ns, unsigned long long *out, unsigned *round)
{
	spin(ns, out + 6 * *round + 2);
	if (threadIdx.x == 0)
		++*round;
}

static unsigned long long *truth;  /* device: SLOTS pairs */
static const char *slot_name[SLOTS];
static unsigned nslots;

static unsigned long long *
slot(const char *name)
{
	if (nslots == SLOTS)
		std::abort();
	slot_name[nslots] = name;
	return truth + 2 * nslots++;
}

static void CUDART_CB
spin_host(void *)
{
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		clock_gettime(CLOCK_MONOTONIC, &t);
	while ((t.tv_sec - t0.tv_sec) * 1000000000LL + t.tv_nsec - t0.tv_nsec < 100000);
}

static void CUDART_CB
nothing(void *)
{
}

static cudaStream_t s_nb, s_a, s_b, s_blk;
static cudaEvent_t ev;
static char *managed, *pinned, *dev2d;
static size_t pitch;
static CUdeviceptr vmm;
static size_t vmm_size;

static int
setup_vmm(void)
{
	CUmemAllocationProp prop = {};
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = 0;
	CKD(cuMemGetAllocationGranularity(&vmm_size, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
	CUmemGenericAllocationHandle h;
	CKD(cuMemCreate(&h, vmm_size, &prop, 0));
	CKD(cuMemAddressReserve(&vmm, vmm_size, 0, 0, 0));
	CKD(cuMemMap(vmm, vmm_size, 0, h, 0));
	CKD(cuMemRelease(h)); /* the mapping holds it */
	CUmemAccessDesc access = {};
	access.location = prop.location;
	access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	CKD(cuMemSetAccess(vmm, vmm_size, &access, 1));
	return 0;
}

enum {
	GRAPH_KERNELS,
	GRAPH_BRANCHES,
	GRAPH_HOST,
	GRAPH_MEMSET,
	GRAPH_HOST_MEMSET,
	GRAPH_MEMCPY,
	GRAPH_EVENT,
	NGRAPHS
};
static const char *graph_name[NGRAPHS] = {"graph:kernels", "graph:branches", "graph:host",
                                          "graph:memset", "graph:host+memset", "graph:memcpy",
                                          "graph:event"};
static cudaEvent_t ev_external;
static struct {
	cudaGraphExec_t exec;
	unsigned long long *truth; /* 6 a round */
	unsigned *round;
} graphs[NGRAPHS];

// Captured on s_nb: the first kernel, then nothing (kernels), or a side branch on s_b beside it
// (branches), a host function, a memset, both, a copy from pinned memory, or an event recorded
// as a node of the graph (cudaEventRecordExternal), then the last kernel.
static int
setup_graph(int which)
{
	unsigned long long *out;
	unsigned *round;
	cudaGraph_t g;
	CK(cudaMalloc(&out, 6 * sizeof(unsigned long long) * (ROUNDS + 1)));
	CK(cudaMalloc(&round, sizeof(unsigned)));
	CK(cudaMemset(round, 0, sizeof(unsigned)));
	CK(cudaStreamBeginCapture(s_nb, cudaStreamCaptureModeGlobal));
	if (which == GRAPH_BRANCHES) {
		CK(cudaEventRecord(ev, s_nb));
		CK(cudaStreamWaitEvent(s_b, ev, 0));
		k_graph_side<<<1, 32, 0, s_b>>>(SHORT_NS, out, round);
	}
	k_graph_first<<<1, 32, 0, s_nb>>>(SHORT_NS, out, round);
	if (which == GRAPH_HOST || which == GRAPH_HOST_MEMSET)
		CK(cudaLaunchHostFunc(s_nb, nothing, NULL));
	if (which == GRAPH_MEMSET || which == GRAPH_HOST_MEMSET)
		CK(cudaMemsetAsync(dev2d, 1, 4096, s_nb));
	if (which == GRAPH_MEMCPY)
		CK(cudaMemcpyAsync(dev2d, pinned, 4096, cudaMemcpyHostToDevice, s_nb));
	if (which == GRAPH_EVENT)
		CK(cudaEventRecordWithFlags(ev_external, s_nb, cudaEventRecordExternal));
	if (which == GRAPH_BRANCHES) {
		CK(cudaEventRecord(ev, s_b));
		CK(cudaStreamWaitEvent(s_nb, ev, 0));
	}
	k_graph_last<<<1, 32, 0, s_nb>>>(SHORT_NS, out, round);
	CK(cudaStreamEndCapture(s_nb, &g));
	CK(cudaGraphInstantiate(&graphs[which].exec, g, 0));
	CK(cudaGraphDestroy(g));
	graphs[which].truth = out;
	graphs[which].round = round;
	return 0;
}

static int
setup(void)
{
	CK(cudaMalloc(&truth, 2 * sizeof(unsigned long long) * SLOTS));
	CK(cudaStreamCreateWithFlags(&s_nb, cudaStreamNonBlocking));
	int lo, hi;
	CK(cudaDeviceGetStreamPriorityRange(&lo, &hi));
	CK(cudaStreamCreateWithPriority(&s_a, cudaStreamNonBlocking, hi));
	CK(cudaStreamCreateWithFlags(&s_b, cudaStreamNonBlocking));
	CK(cudaStreamCreate(&s_blk)); /* blocking: it and the legacy stream wait for each other */
	CK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
	CK(cudaEventCreateWithFlags(&ev_external, cudaEventDisableTiming));
	CK(cudaMallocManaged(&managed, MANAGED));
	CK(cudaMallocHost(&pinned, 1 << 20));
	CK(cudaMallocPitch(&dev2d, &pitch, 1024, 256));
	if (setup_vmm())
		return 1;
	for (int i = 0; i < NGRAPHS; i++)
		if (setup_graph(i))
			return 1;
	return 0;
}

static int
round_of_launches(CUfunction extra_fn)
{
	k_plain<<<1, 32, 0, s_nb>>>(SHORT_NS, slot("k_plain"));

	unsigned long long ns = SHORT_NS, *out = slot("k_coop");
	void *args[] = {&ns, &out};
	CK(cudaLaunchCooperativeKernel((void *)k_coop, 2, 32, args, 0, s_nb));

	cudaLaunchConfig_t cfg = {};
	cudaLaunchAttribute attr[1];
	cfg.gridDim = 2;
	cfg.blockDim = 32;
	cfg.stream = s_nb;
	attr[0].id = cudaLaunchAttributeClusterDimension;
	attr[0].val.clusterDim.x = 2;
	attr[0].val.clusterDim.y = 1;
	attr[0].val.clusterDim.z = 1;
	cfg.attrs = attr;
	cfg.numAttrs = 1;
	CK(cudaLaunchKernelEx(&cfg, k_cluster, (unsigned long long)SHORT_NS, slot("k_cluster")));

	struct {
		unsigned long long ns, *out;
	} buf = {SHORT_NS, slot("k_extra")};
	size_t size = sizeof(buf);
	void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
	                 CU_LAUNCH_PARAM_END};
	CKD(cuLaunchKernel(extra_fn, 1, 1, 1, 32, 1, 1, 0, (CUstream)s_nb, NULL, extra));
	CK(cudaStreamSynchronize(s_nb));

	k_before_host<<<1, 32, 0, s_nb>>>(SHORT_NS, slot("k_before_host"));
	CK(cudaLaunchHostFunc(s_nb, spin_host, NULL));
	k_after_host<<<1, 32, 0, s_nb>>>(SHORT_NS, slot("k_after_host"));
	CK(cudaStreamSynchronize(s_nb));

	k_long<<<1, 32, 0, s_a>>>(LONG_NS, slot("k_long"));
	CK(cudaEventRecord(ev, s_a));
	CK(cudaStreamWaitEvent(s_b, ev, 0));
	k_waiter<<<1, 32, 0, s_b>>>(SHORT_NS, slot("k_waiter"));
	CK(cudaStreamSynchronize(s_b));

	k_blocking<<<1, 32, 0, s_blk>>>(LONG_NS, slot("k_blocking"));
	k_legacy<<<1, 32, 0, 0>>>(SHORT_NS, slot("k_legacy"));
	CK(cudaDeviceSynchronize());
	k_legacy_long<<<1, 32, 0, 0>>>(LONG_NS, slot("k_legacy_long"));
	k_after_legacy<<<1, 32, 0, s_blk>>>(SHORT_NS, slot("k_after_legacy"));
	CK(cudaDeviceSynchronize());

	k_pdl_first<<<1, 32, 0, s_nb>>>(50000, slot("k_pdl_first"));
	cudaLaunchAttribute pdl[1];
	pdl[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
	pdl[0].val.programmaticStreamSerializationAllowed = 1;
	cfg.gridDim = 1;
	cfg.attrs = pdl;
	CK(cudaLaunchKernelEx(&cfg, k_pdl_second, (unsigned long long)SHORT_NS, slot("k_pdl_second")));
	CK(cudaStreamSynchronize(s_nb));

	std::memset(managed, 1, MANAGED); /* back to the host: the kernel faults it in */
	k_managed<<<1, 256, 0, s_nb>>>(managed, MANAGED, slot("k_managed:faults"));
	CK(cudaStreamSynchronize(s_nb));
	std::memset(managed, 2, MANAGED);
	cudaMemLocation here = {};
	here.type = cudaMemLocationTypeDevice;
	here.id = 0;
	CK(cudaMemPrefetchAsync(managed, MANAGED, here, 0, s_nb));
	k_managed<<<1, 256, 0, s_nb>>>(managed, MANAGED, slot("k_managed:prefetched"));
	CK(cudaStreamSynchronize(s_nb));

	CK(cudaMemsetAsync((void *)vmm, 3, vmm_size, s_nb));
	k_vmm<<<1, 32, 0, s_nb>>>(SHORT_NS, slot("k_vmm"));

	CK(cudaMemcpy2DAsync(dev2d, pitch, pinned, 1024, 1024, 256, cudaMemcpyHostToDevice, s_nb));
	CK(cudaMemset2DAsync(dev2d, pitch, 0, 1024, 256, s_nb));
	k_after_copy<<<1, 32, 0, s_nb>>>(SHORT_NS, slot("k_after_copy"));

	for (int i = 0; i < NGRAPHS; i++) {
		CK(cudaGraphLaunch(graphs[i].exec, s_nb));
		CK(cudaStreamSynchronize(s_nb));
	}
	return 0;
}

int
main()
{
	CK(cudaSetDevice(0));
	if (setup())
		return 1;
	CUfunction extra_fn;
	CK(cudaGetFuncBySymbol(&extra_fn, (const void *)k_extra));
	for (int r = 0; r <= ROUNDS; r++) /* round 0 loads the kernels */
		if (round_of_launches(extra_fn))
			return 1;
	CK(cudaGetLastError());
	static unsigned long long host[2 * SLOTS], g[NGRAPHS][6 * (ROUNDS + 1)];
	CK(cudaMemcpy(host, truth, 2 * sizeof(unsigned long long) * nslots, cudaMemcpyDeviceToHost));
	for (int i = 0; i < NGRAPHS; i++)
		CK(cudaMemcpy(g[i], graphs[i].truth, sizeof(g[i]), cudaMemcpyDeviceToHost));
	for (unsigned i = 0; i < nslots; i++)
		std::printf(PROG ": truth %s %llu %llu\n", slot_name[i], host[2 * i], host[2 * i + 1]);
	for (int r = 0; r <= ROUNDS; r++) /* launch order: each round launches every graph */
		for (int i = 0; i < NGRAPHS; i++) {
			unsigned long long *t = g[i] + 6 * r, start = t[0];
			if (i == GRAPH_BRANCHES && t[4] < start)
				start = t[4];
			std::printf(PROG ": truth %s %llu %llu\n", graph_name[i], start, t[3]);
		}
	std::printf(PROG ": done\n");
	return 0;
}
