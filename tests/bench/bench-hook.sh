#!/bin/sh
# Per-call cost of libcuthook: each call timed plain, under bare LD_PRELOAD wrappers that keep
# nothing (bare: two clock reads, the floor of a tracer that reads the clock at both ends;
# bare1: a clock read and a TSC read, the floor of cuthook's way, see capture/hook/clock.c),
# and under cuthook with its call layers alone (-l api,runtime,nvtx) and with every layer (the
# gpu layer too: one timing event a launch); prints a table: the calls' overhead, and what the
# gpu layer adds on top of it.
# usage: tests/bench/bench-hook.sh [builddir] [calls]
# Uses the stand-in libcuda of the build; on a GPU machine (nvcc and libcuda present) also
# samples/scripts/driverapi.c's `bench` mode on the real driver. Each figure is the fastest of
# 5 runs, in nanoseconds per call.
B=${1:-build}
N=${2:-1000000}
top=$(cd "$(dirname "$0")/../.." && pwd)
B=$(cd "$top" && cd "$B" && pwd) || exit 2
[ -x "$B/bin/cuthook" ] && [ -f "$B/lib/libcuthook.so" ] && [ -f "$B/fixtures/libcuda.so.1" ] || {
	echo "bench-hook.sh: build first: make B=${1:-build} test-programs" >&2
	exit 2
}
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
CC=${CC:-cc}

# A driver-API loop against the stand-in: link-time calls, a call through a pointer from
# cuGetProcAddress (as cudart makes them), a decoded copy and a named launch.
cat >"$tmp/hookbench.c" <<'EOF'
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "fakecuda.h"
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
int main(int argc, char **argv) {
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	CUcontext c; CUmodule m; CUfunction f; char h[8];
	CUresult (*gpa)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
	*(void **)&gpa = dlsym(dlopen("libcuda.so.1", RTLD_NOW), "cuGetProcAddress_v2");
	CUresult (*cur)(CUcontext *) = NULL;
	gpa("cuCtxGetCurrent", (void **)&cur, 13000, 0, NULL);
	cuModuleLoadData(&m, "x"); cuModuleGetFunction(&f, m, "bench");
	/* A real program's calls start later (cuInit alone takes ~0.1 s on a GPU): by then
	 * cuthook knows the TSC's rate, which takes it ~15 ms from start. */
	struct timespec warm = {0, 50000000}; nanosleep(&warm, NULL);
	for (long i = 0; i < 1000; i++) cuCtxGetCurrent(&c);
	double t0 = now(); for (long i = 0; i < n; i++) cuCtxGetCurrent(&c);
	double t1 = now(); for (long i = 0; i < n; i++) cur(&c);
	double t2 = now(); for (long i = 0; i < n; i++) cuMemcpyHtoD_v2(0x1000, h, 8);
	double t3 = now(); for (long i = 0; i < n; i++) cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, 0, NULL, NULL);
	double t4 = now();
	printf("call\tns_per_call\ncuCtxGetCurrent\t%.1f\ncuCtxGetCurrent_via_cuGetProcAddress\t%.1f\n"
	       "cuMemcpyHtoD_8B\t%.1f\ncuLaunchKernel\t%.1f\n",
	       (t1 - t0) / n, (t2 - t1) / n, (t3 - t2) / n, (t4 - t3) / n);
	return 0;
}
EOF
# The floor: a wrapper of cuCtxGetCurrent that reads CLOCK_MONOTONIC twice and keeps nothing.
cat >"$tmp/bare.c" <<'EOF'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <time.h>
typedef int (*fn)(void *);
volatile long sink;
__attribute__((visibility("default"))) int cuCtxGetCurrent(void *c) {
	static fn real;
	if (!real) real = (fn)dlsym(RTLD_NEXT, "cuCtxGetCurrent");
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	int r = real(c);
	clock_gettime(CLOCK_MONOTONIC, &b);
	sink += b.tv_nsec - a.tv_nsec;
	return r;
}
EOF
# cuthook's floor: a clock read at entry and, on x86-64, a TSC read at the return.
cat >"$tmp/bare1.c" <<'EOF'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <time.h>
typedef int (*fn)(void *);
volatile long sink;
__attribute__((visibility("default"))) int cuCtxGetCurrent(void *c) {
	static fn real;
	if (!real) real = (fn)dlsym(RTLD_NEXT, "cuCtxGetCurrent");
	struct timespec a;
	clock_gettime(CLOCK_MONOTONIC, &a);
	int r = real(c);
#ifdef __x86_64__
	sink += (long)__builtin_ia32_rdtsc() - a.tv_nsec;
#else
	struct timespec b;
	clock_gettime(CLOCK_MONOTONIC, &b);
	sink += b.tv_nsec - a.tv_nsec;
#endif
	return r;
}
EOF
$CC -O2 -I"$top/tests/fixtures" -o "$tmp/hookbench" "$tmp/hookbench.c" -L"$B/fixtures" -lcuda \
	-Wl,-rpath,"$B/fixtures" -ldl || exit 2
$CC -O2 -fPIC -shared -o "$tmp/bare.so" "$tmp/bare.c" -ldl || exit 2
$CC -O2 -fPIC -shared -o "$tmp/bare1.so" "$tmp/bare1.c" -ldl || exit 2

# best PROGRAM ARGS...: per call, the fastest of 5 runs ("call<TAB>ns" lines).
best() {
	for i in 1 2 3 4 5; do "$@" | sed 1d; done |
		awk -F '\t' '!($1 in m) || $2 < m[$1] { m[$1] = $2; if (!($1 in o)) o[$1] = n++ }
		END { for (k in o) print o[k] "\t" k "\t" m[k] }' | sort -n | cut -f2-
}

# measure LABEL PROGRAM ARGS...: one table block for a driver.
measure() {
	label=$1
	shift
	best "$@" >"$tmp/plain"
	best env LD_PRELOAD="$tmp/bare.so" "$@" >"$tmp/bare"
	best env LD_PRELOAD="$tmp/bare1.so" "$@" >"$tmp/bare1"
	best "$B/bin/cuthook" -l api,runtime,nvtx -o "$tmp/trace.jsonl" -- "$@" >"$tmp/hook"
	events=$(grep -c '"layer":"api"' "$tmp/trace.jsonl")
	durs=$(tail -1 "$tmp/trace.jsonl" | grep -o '"durations":{[^}]*}')
	best "$B/bin/cuthook" -o "$tmp/all.jsonl" -- "$@" >"$tmp/all"
	gpu=$(grep -c '"layer":"gpu"' "$tmp/all.jsonl")
	awk -F '\t' -v l="$label" 'FILENAME == ARGV[1] { bare[$1] = $2; next }
		FILENAME == ARGV[2] { bare1[$1] = $2; next }
		FILENAME == ARGV[3] { hook[$1] = $2; next }
		FILENAME == ARGV[4] { all[$1] = $2; next }
		{ b = $1 == "cuCtxGetCurrent" ? sprintf("%.1f", bare[$1]) : "-"
		  b1 = $1 == "cuCtxGetCurrent" ? sprintf("%.1f", bare1[$1]) : "-"
		  printf "%-12s %-38s %8.1f %8s %8s %8.1f %9.1f %8.1f %9.1f\n", l, $1, $2, b, b1, hook[$1],
		      hook[$1] - $2, all[$1], all[$1] - hook[$1] }' \
		"$tmp/bare" "$tmp/bare1" "$tmp/hook" "$tmp/all" "$tmp/plain"
	echo "$label: last cuthook run wrote $events API events; $durs; with every layer, $gpu gpu events"
}

printf '%-12s %-38s %8s %8s %8s %8s %9s %8s %9s\n' driver call plain bare bare1 cuthook overhead '+gpu' 'gpu adds'
measure stand-in "$tmp/hookbench" "$N"

# The real driver, where there is one (a toolkit without a driver links against its stub
# libcuda, so the program is run once first).
if command -v nvcc >/dev/null 2>&1 && [ -f /usr/local/cuda/include/cuda.h ] &&
	(cd "$tmp" && nvcc -fatbin -o vecadd.fatbin "$top/samples/scripts/vecadd.cu" &&
		$CC -O2 -I/usr/local/cuda/include -o driverapi "$top/samples/scripts/driverapi.c" \
			-lcuda && ./driverapi bench 10 vecadd.fatbin) >"$tmp/build.log" 2>&1; then
	measure libcuda "$tmp/driverapi" bench "$N" "$tmp/vecadd.fatbin"
else
	echo "libcuda: skipped (no nvcc, cuda.h or GPU driver here)"
fi
echo "bare: a wrapper that reads CLOCK_MONOTONIC twice; bare1: once, and the TSC at the return."
echo "cuthook reads the clock at entry and, once it knows the TSC's rate, the TSC at the return."
echo "cuthook: -l api,runtime,nvtx (the calls); +gpu: every layer; gpu adds: the difference."
