/* setupcal: what a kernel's own set-up adds to the time between the event before it and the event
 * after it, against CUPTI's kernel record, by the kind of kernel. cut times a piece from the END
 * event of the piece before (or a START event) to the END after it, less one stream operation;
 * CUPTI starts a kernel when it runs. On PyTorch, cuBLAS's gemm kernels came out about a
 * microsecond long in a quarter of their pieces, elementwise kernels not (BENCHMARKS). Here
 * kernels that spin a fixed time on %globaltimer, alike but for the size of their parameters and
 * of their dynamic shared memory, are queued on a busy stream with an event after each; for
 * each kind and the kind before it, "extra" is the events' elapsed time less CUPTI's duration
 * (one stream operation plus whatever the device did for the kernel before it ran).
 *
 * build (a GPU machine; there CUPTI=/usr/local/cuda/targets/x86_64-linux):
 *   nvcc -O2 -arch=sm_90 -I$CUPTI/include -o setupcal setupcal.cu -L$CUPTI/lib \
 *        -Xlinker -rpath=$CUPTI/lib -lcupti
 * usage: setupcal [reps]
 * Not part of cut, which never uses CUPTI: the yardstick only. */
#include <cuda_runtime.h>
#include <cupti.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <vector>

#define CK(x) do { cudaError_t r_ = (x); if (r_) { fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(r_)); exit(1); } } while (0)
#define CKP(x) do { CUptiResult r_ = (x); if (r_) { fprintf(stderr, "%s: %d\n", #x, (int)r_); exit(1); } } while (0)

__device__ __forceinline__ unsigned long long now() {
	unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t;
}
__device__ __forceinline__ void spin(unsigned long long ns) {
	unsigned long long t0 = now(); while (now() - t0 < ns) ;
}
struct P1K { unsigned long long w[128]; };
struct P4K { unsigned long long w[500]; };
__global__ void k8(unsigned long long ns) { spin(ns); }
__global__ void k1k(P1K p, unsigned long long ns) { spin(ns + (p.w[127] & 1)); }
__global__ void k4k(P4K p, unsigned long long ns) { spin(ns + (p.w[499] & 1)); }
__global__ void ksm(unsigned long long ns, int used) {
	extern __shared__ char sm[];
	if (used) { sm[threadIdx.x] = 1; __syncthreads(); ns += sm[0] - 1; }
	spin(ns);
}

static std::vector<std::pair<unsigned long long, unsigned long long>> recs; /* start, end */
static void CUPTIAPI req(uint8_t **b, size_t *s, size_t *m) { *b = (uint8_t *)aligned_alloc(8, 32 << 20); *s = 32 << 20; *m = 0; }
static void CUPTIAPI done(CUcontext c, uint32_t sid, uint8_t *b, size_t s, size_t v) {
	CUpti_Activity *r = NULL;
	while (cuptiActivityGetNextRecord(b, v, &r) == CUPTI_SUCCESS)
		if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
			CUpti_ActivityKernel9 *k = (CUpti_ActivityKernel9 *)r;
			unsigned long long s0 = k->start, e0 = k->end; recs.push_back({s0, e0});
		}
	free(b);
}

enum kind { K8, K1K, K4K, SM0, SM64, SM200, TINY, NKIND };
static const char *kname[] = {"8 B params", "1 KB params", "4 KB params", "smem 0 (ksm)", "smem 64 KB", "smem 200 KB", "8 B, 1 block"};

static void launch(cudaStream_t s, int k, unsigned long long ns) {
	static P1K p1; static P4K p4;
	switch (k) {
	case K8: k8<<<132, 128, 0, s>>>(ns); break;
	case K1K: k1k<<<132, 128, 0, s>>>(p1, ns); break;
	case K4K: k4k<<<132, 128, 0, s>>>(p4, ns); break;
	case SM0: ksm<<<132, 128, 0, s>>>(ns, 0); break;
	case SM64: ksm<<<132, 128, 64 << 10, s>>>(ns, 1); break;
	case SM200: ksm<<<132, 128, 200 << 10, s>>>(ns, 1); break;
	case TINY: k8<<<1, 32, 0, s>>>(ns); break;
	}
}

int main(int argc, char **argv) {
	int reps = argc > 1 ? atoi(argv[1]) : 200;
	CKP(cuptiActivityRegisterCallbacks(req, done));
	CKP(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
	CK(cudaFuncSetAttribute(ksm, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 << 10));
	cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	/* each kind after each kind, twice, in a fixed shuffled order */
	std::vector<int> seq;
	for (int a = 0; a < NKIND; a++) for (int b = 0; b < NKIND; b++) { seq.push_back(a); seq.push_back(b); }
	srand(7); for (size_t i = seq.size() - 1; i > 0; i--) std::swap(seq[i], seq[rand() % (i + 1)]);
	int n = (int)seq.size();
	std::vector<cudaEvent_t> ev(n + 1);
	for (auto &e : ev) CK(cudaEventCreate(&e));
	std::vector<std::vector<std::vector<double>>> extra(NKIND, std::vector<std::vector<double>>(NKIND));
	std::vector<float> el(n);
	for (int k = 0; k < NKIND; k++) launch(s, k, 1000); /* load every module */
	CK(cudaStreamSynchronize(s));
	CKP(cuptiActivityFlushAll(1)); /* (their records, not the first round's) */
	for (int rep = 0; rep < reps; rep++) {
		recs.clear();
		k8<<<132, 128, 0, s>>>(300000); /* the stream busy while the rest is queued */
		CK(cudaEventRecord(ev[0], s));
		for (int i = 0; i < n; i++) { launch(s, seq[i], 3000); CK(cudaEventRecord(ev[i + 1], s)); }
		CK(cudaStreamSynchronize(s));
		CKP(cuptiActivityFlushAll(1));
		if ((int)recs.size() != n + 1) { fprintf(stderr, "rep %d: %zu records\n", rep, recs.size()); continue; }
		std::sort(recs.begin(), recs.end());
		for (int i = 0; i < n; i++) {
			float ms; CK(cudaEventElapsedTime(&ms, ev[i], ev[i + 1]));
			double d = (double)(recs[i + 1].second - recs[i + 1].first);
			int prev = i ? seq[i - 1] : K8;
			if (rep > 0) extra[seq[i]][prev].push_back(ms * 1e6 - d);
		}
	}
	printf("extra = events' elapsed time less CUPTI's duration, ns (%d reps)\n", reps - 1);
	printf("%-14s %-14s %5s %7s %7s %7s %7s\n", "kernel", "after", "n", "p10", "p50", "p90", ">p50+400");
	for (int a = 0; a < NKIND; a++) {
		std::vector<double> all;
		for (int b = 0; b < NKIND; b++) {
			auto v = extra[a][b]; if (v.empty()) continue;
			all.insert(all.end(), v.begin(), v.end());
			std::sort(v.begin(), v.end());
			double m = v[v.size() / 2]; int hi = 0; for (double x : v) hi += x > m + 400;
			printf("%-14s %-14s %5zu %7.0f %7.0f %7.0f %6.1f%%\n", kname[a], kname[b], v.size(), v[v.size() / 10], m, v[v.size() * 9 / 10], 100.0 * hi / v.size());
		}
		std::sort(all.begin(), all.end());
		double m = all[all.size() / 2]; int hi = 0; for (double x : all) hi += x > m + 400;
		printf("%-14s %-14s %5zu %7.0f %7.0f %7.0f %6.1f%%\n", kname[a], "(any)", all.size(), all[all.size() / 10], m, all[all.size() * 9 / 10], 100.0 * hi / all.size());
	}
	return 0;
}
