// two_threads.cu: two host threads putting work on one GPU at once, each on a stream of its own,
// every kernel dating itself by %globaltimer (check_odd.py's truth lines): thread A keeps its
// stream busy (bursts of ten 12 us kernels back to back, each burst behind a 4 MiB copy from
// pinned memory on a third stream that it waits for), thread B launches 1-3 us kernels on its
// idle stream, one at a time or in pairs, spaced by the host, many of them while a copy runs
// (the device then dates the process's other events late: cut-events(5) makes such work's
// times bounds).
#define PROG "two_threads"
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <time.h>
#include "globaltimer.h"

extern "C" __global__ void
a_work(unsigned long long ns, unsigned long long *out)
{
	spin(ns, out);
}
extern "C" __global__ void
b_short(unsigned long long ns, unsigned long long *out)
{
	spin(ns, out);
}
extern "C" __global__ void
b_pair(unsigned long long ns, unsigned long long *out)
{
	spin(ns, out);
}

enum {
	ROUNDS = 60,
	A_BURST = 10,
	B_PER_ROUND = 12,
	SLOTS_A = ROUNDS * A_BURST,
	SLOTS_B = ROUNDS * B_PER_ROUND * 2
};
static unsigned long long *ta, *tb;
static const char *nb[SLOTS_B];
static int nbn;
static std::atomic<int> stop{0};

static void
pause_us(int us)
{
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		clock_gettime(CLOCK_MONOTONIC, &t);
	while ((t.tv_sec - t0.tv_sec) * 1000000000LL + t.tv_nsec - t0.tv_nsec < us * 1000LL);
}

static int
thread_a(void)
{
	cudaStream_t s, cs;
	cudaEvent_t ev;
	char *host, *dev;
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CK(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking));
	CK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
	CK(cudaMallocHost(&host, 4 << 20));
	CK(cudaMalloc(&dev, 4 << 20));
	int k = 0;
	for (int r = 0; r < ROUNDS; r++) {
		CK(cudaMemcpyAsync(dev, host, 4 << 20, cudaMemcpyHostToDevice, cs));
		CK(cudaEventRecord(ev, cs));
		CK(cudaStreamWaitEvent(s, ev, 0));
		for (int i = 0; i < A_BURST; i++)
			a_work<<<2, 64, 0, s>>>(12000, ta + 2 * k++);
		CK(cudaStreamSynchronize(s));
		pause_us(150);
	}
	stop = 1;
	return 0;
}

static int
thread_b(void)
{
	cudaStream_t s;
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	for (int r = 0; !stop && nbn + 2 <= SLOTS_B; r++) {
		if (r % 4 == 3) {
			nb[nbn] = "b_pair";
			b_pair<<<1, 32, 0, s>>>(1000, tb + 2 * nbn++);
			nb[nbn] = "b_pair";
			b_pair<<<1, 32, 0, s>>>(3000, tb + 2 * nbn++);
		} else {
			nb[nbn] = "b_short";
			b_short<<<1, 32, 0, s>>>(1000 + 1000 * (r % 3), tb + 2 * nbn++);
		}
		pause_us(30 + 7 * (r % 5));
	}
	CK(cudaStreamSynchronize(s));
	return 0;
}

int
main()
{
	CK(cudaMalloc(&ta, 2 * sizeof(unsigned long long) * SLOTS_A));
	CK(cudaMalloc(&tb, 2 * sizeof(unsigned long long) * SLOTS_B));
	// Round 0 loads the kernels (check_odd.py leaves each kernel's first out).
	a_work<<<1, 32>>>(1000, ta);
	b_short<<<1, 32>>>(1000, tb);
	b_pair<<<1, 32>>>(1000, tb);
	CK(cudaDeviceSynchronize());
	int ra = 0, rb = 0;
	std::thread t1([&] { ra = thread_a(); }), t2([&] { rb = thread_b(); });
	t1.join();
	t2.join();
	if (ra || rb)
		return 1;
	CK(cudaDeviceSynchronize());
	static unsigned long long ha[2 * SLOTS_A], hb[2 * SLOTS_B];
	CK(cudaMemcpy(ha, ta, sizeof(ha), cudaMemcpyDeviceToHost));
	CK(cudaMemcpy(hb, tb, 2 * sizeof(unsigned long long) * nbn, cudaMemcpyDeviceToHost));
	// (the loads' kernels wrote slot 0 of each first: overwritten by round 0's, left out)
	std::printf(PROG ": truth a_work:load 0 0\n");
	for (int i = 0; i < SLOTS_A; i++)
		std::printf(PROG ": truth a_work %llu %llu\n", ha[2 * i], ha[2 * i + 1]);
	std::printf(PROG ": truth b_short:load 0 0\n");
	std::printf(PROG ": truth b_pair:load 0 0\n");
	for (int i = 0; i < nbn; i++)
		std::printf(PROG ": truth %s %llu %llu\n", nb[i], hb[2 * i], hb[2 * i + 1]);
	std::printf(PROG ": done\n");
	return 0;
}
