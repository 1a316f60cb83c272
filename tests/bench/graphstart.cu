/* graphstart: how long after its launch call returns work handed to an idle stream starts, by
 * the GPU's own clock (%globaltimer): a kernel, and a graph of 1 and of 5 kernels (a chain
 * captured from a stream) whose first kernel writes the time it ran, by the bytes of that
 * kernel's parameters (16 B to 4 KB). The host's and the GPU's clocks are put on one line
 * once, at the start, by the best bracket of host clock reads around a read of a pinned word
 * that a spinning kernel keeps writing the time to: the figures compare with each other (the
 * line drifts some ppm over the run, which ends by saying how far); their level is good to
 * that bracket where the machine's pinned memory is read fresh, and may be off by far more
 * where it is not (one H200 VM read values some 280 us old: every figure that far up).
 * cut takes a kernel's start from its call's return plus the events' pick-up time and a
 * kernel's set-up (capture/hook/gpu.h); this says whether a graph is set up as a kernel is and
 * what the parameters add (BENCHMARKS, "Graph launches started from their call").
 *
 * build (a GPU machine): nvcc -O2 -arch=sm_90 -o graphstart graphstart.cu -lcuda
 * usage: graphstart */
#define PROG "graphstart"
#include <algorithm>
#include <time.h>
#include <unistd.h>
#include <vector>
#include "../gpu/progs/globaltimer.h"

static long long
now()
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

template <int N> struct pad {
	unsigned long long w[N];
};
template <int N>
__global__ void
k_first(unsigned long long *out, pad<N> p)
{
	if (blockIdx.x == 0 && threadIdx.x == 0)
		*out = gtimer() + (p.w[N - 1] == 777 ? 1 : 0);
}
__global__ void
k_noop(unsigned long long *out)
{
	if (blockIdx.x == 0 && threadIdx.x == 0 && out[1] == 12345)
		out[2] = 1;
}
__global__ void
k_clock(volatile unsigned long long *p, unsigned long long ns)
{
	unsigned long long t0 = gtimer(), t;
	while ((t = gtimer()) - t0 < ns)
		*p = t;
}

static volatile unsigned long long *hp;
static unsigned long long *dp;

// offset: gpu - host, from the best bracket of 20,000 reads while k_clock writes
static long long
calibrate()
{
	k_clock<<<1, 1>>>((unsigned long long *)dp, 5000000);
	usleep(1000);
	long long best = 1LL << 62, off = 0;
	for (int i = 0; i < 20000; i++) {
		long long a = now();
		unsigned long long g = *hp;
		long long b = now();
		if (b - a < best) {
			best = b - a;
			off = (long long)g - (a + b) / 2;
		}
	}
	cudaDeviceSynchronize();
	fprintf(stderr, "calibrate: bracket %lld ns\n", best);
	return off;
}

int
main()
{
	cudaFree(0);
	CK(cudaHostAlloc((void **)&hp, 64, cudaHostAllocMapped));
	CK(cudaHostGetDevicePointer((void **)&dp, (void *)hp, 0));
	unsigned long long *out;
	CK(cudaMalloc(&out, 64));
	cudaStream_t s;
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	long long off0 = calibrate();
	int ns[] = {0, 1, 5};
	/* the first kernel's parameters: its out pointer and its pad, by pv */
	const size_t params[] = {sizeof(out) + sizeof(pad<1>), sizeof(out) + sizeof(pad<33>),
	                         sizeof(out) + sizeof(pad<91>), sizeof(out) + sizeof(pad<500>)};
	printf("%6s %6s %8s %10s %10s\n", "nodes", "params", "trials", "call p50", "start-ret p50");
	for (int pv = 0; pv < 4; pv++)
		for (int n : ns) {
			int grid = 1;
			cudaGraph_t g = nullptr;
			cudaGraphExec_t exec = nullptr;
			size_t pb = params[pv];
			auto launch_first = [&](cudaStream_t st) {
				if (pv == 0)
					k_first<1><<<grid, 256, 0, st>>>(out, pad<1>{});
				else if (pv == 1)
					k_first<33><<<grid, 256, 0, st>>>(out, pad<33>{});
				else if (pv == 2)
					k_first<91><<<grid, 256, 0, st>>>(out, pad<91>{});
				else
					k_first<500><<<grid, 256, 0, st>>>(out, pad<500>{});
			};
			if (n > 0) {
				CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
				launch_first(s);
				for (int i = 1; i < n; i++)
					k_noop<<<grid, 256, 0, s>>>(out);
				CK(cudaStreamEndCapture(s, &g));
				CK(cudaGraphInstantiate(&exec, g, 0));
			}
			std::vector<long long> d, c;
			for (int t = 0; t < 60; t++) {
				CK(cudaStreamSynchronize(s));
				usleep(300);
				long long a = now();
				if (n > 0)
					CK(cudaGraphLaunch(exec, s));
				else
					launch_first(s);
				long long b = now();
				CK(cudaStreamSynchronize(s));
				unsigned long long gs;
				CK(cudaMemcpy(&gs, out, 8, cudaMemcpyDeviceToHost));
				if (t < 5)
					continue;
				d.push_back((long long)gs - off0 - b);
				c.push_back(b - a);
			}
			if (exec) {
				CK(cudaGraphExecDestroy(exec));
				CK(cudaGraphDestroy(g));
			}
			std::sort(d.begin(), d.end());
			std::sort(c.begin(), c.end());
			printf("%6d %6zu %8zu %10lld %10lld  (p10 %lld p90 %lld)\n", n, pb,
			       d.size(), c[c.size() / 2], d[d.size() / 2], d[d.size() / 10],
			       d[d.size() * 9 / 10]);
		}
	long long off1 = calibrate();
	printf("offset drift over the run: %lld ns\n", off1 - off0);
	return 0;
}
