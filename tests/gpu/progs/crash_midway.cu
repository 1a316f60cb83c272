// Launches 300 kernels that keep the GPU busy, then dies of SIGSEGV with work still queued:
// the trace must keep every call made and say what it could not time.
#include <csignal>
#include <cstdio>

__global__ void
spin(long long cycles)
{
	long long t0 = clock64();
	while (clock64() - t0 < cycles)
		;
}

int
main()
{
	for (int i = 0; i < 300; i++)
		spin<<<1, 1>>>(200000);
	std::fflush(stdout);
	std::raise(SIGSEGV);
	return 0;
}
