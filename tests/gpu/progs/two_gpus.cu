// two_gpus.cu: one process working on two GPUs at once, each kernel dating itself by its GPU's
// %globaltimer (each GPU has its own: check_odd.py fits each apart, by the "@device" of the
// names). 20 rounds after one that loads the kernels: a 5 us kernel on each device, switching
// with cudaSetDevice; a copy from device 0 to device 1 (peer to peer where the two can, else
// through the host, as the runtime does); 200 us on device 0, an event after it, a stream of
// device 1 told to wait for that event, 5 us on it; and both devices' default streams. Prints
// "two_gpus: truth NAME START END" a kernel in the order launched, then "two_gpus: done";
// exits 0 saying so where there are fewer than two GPUs.
#define PROG "two_gpus"
#include "globaltimer.h"

enum { ROUNDS = 21, SLOTS = 512, SHORT_NS = 5000, LONG_NS = 200000, BYTES = 1 << 20 };

#define PROBE(name)                                                                                \
	extern "C" __global__ void name(unsigned long long ns, unsigned long long *out)            \
	{                                                                                          \
		spin(ns, out);                                                                     \
	}
PROBE(k_short)
PROBE(k_long)
PROBE(k_waiter)
PROBE(k_legacy)

static unsigned long long *truth; /* mapped pinned memory both devices write */
static const char *names[SLOTS];
static int nslots;

static unsigned long long *
slot(const char *name)
{
	names[nslots] = name;
	return truth + 2 * nslots++;
}

int
main()
{
	int n = 0;
	CK(cudaGetDeviceCount(&n));
	if (n < 2) {
		std::printf(PROG ": %d GPU here, not two\n" PROG ": done\n", n);
		return 0;
	}
	CK(cudaHostAlloc(&truth, 2 * sizeof(unsigned long long) * SLOTS,
	                 cudaHostAllocMapped | cudaHostAllocPortable));
	cudaStream_t s[2];
	char *buf[2];
	for (int d = 0; d < 2; d++) {
		CK(cudaSetDevice(d));
		CK(cudaStreamCreateWithFlags(&s[d], cudaStreamNonBlocking));
		CK(cudaMalloc(&buf[d], BYTES));
	}
	int peer = 0;
	CK(cudaDeviceCanAccessPeer(&peer, 1, 0));
	if (peer) {
		CK(cudaSetDevice(1));
		CK(cudaDeviceEnablePeerAccess(0, 0));
	}
	cudaEvent_t ev;
	CK(cudaSetDevice(0));
	CK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
	for (int r = 0; r < ROUNDS; r++) {
		for (int d = 0; d < 2; d++) {
			CK(cudaSetDevice(d));
			k_short<<<1, 32, 0, s[d]>>>(SHORT_NS, slot(d ? "k_short@1" : "k_short@0"));
			CK(cudaStreamSynchronize(s[d]));
		}
		CK(cudaMemcpyPeerAsync(buf[1], 1, buf[0], 0, BYTES, s[0]));
		CK(cudaStreamSynchronize(s[0]));
		CK(cudaSetDevice(0));
		k_long<<<1, 32, 0, s[0]>>>(LONG_NS, slot("k_long@0"));
		CK(cudaEventRecord(ev, s[0]));
		CK(cudaSetDevice(1));
		CK(cudaStreamWaitEvent(s[1], ev, 0));
		k_waiter<<<1, 32, 0, s[1]>>>(SHORT_NS, slot("k_waiter@1"));
		CK(cudaStreamSynchronize(s[1]));
		for (int d = 0; d < 2; d++) {
			CK(cudaSetDevice(d));
			k_legacy<<<1, 32>>>(SHORT_NS, slot(d ? "k_legacy@1" : "k_legacy@0"));
		}
		for (int d = 0; d < 2; d++) {
			CK(cudaSetDevice(d));
			CK(cudaDeviceSynchronize());
		}
	}
	for (int i = 0; i < nslots; i++)
		std::printf(PROG ": truth %s %llu %llu\n", names[i], truth[2 * i], truth[2 * i + 1]);
	std::printf(PROG ": done\n");
	return 0;
}
