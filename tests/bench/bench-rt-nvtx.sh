#!/bin/sh
# Per-call cost of libcuthook's runtime and NVTX layers on the stand-ins: a cheap runtime call
# (cudaGetLastError), a runtime launch (cudaLaunchKernel, which makes a driver cuLaunchKernel,
# recorded too) and an NVTX push/pop pair, plain and under cuthook; prints a table.
# usage: tests/bench/bench-rt-nvtx.sh [builddir] [calls]
# Each figure is the fastest of 5 runs, in nanoseconds per call (per pair for NVTX).
B=${1:-build}
N=${2:-200000}
top=$(cd "$(dirname "$0")/../.." && pwd)
B=$(cd "$top" && cd "$B" && pwd) || exit 2
[ -x "$B/bin/cuthook" ] && [ -f "$B/fixtures/libcudart.so.13" ] || {
	echo "bench-rt-nvtx.sh: build first: make B=${1:-build} test-programs" >&2
	exit 2
}
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
CC=${CC:-cc}

cat >"$tmp/rtbench.c" <<'EOS'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "fakecudart.h"
#include "nvtx3/nvToolsExt.h"
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
static void stub(void) {}
int main(int argc, char **argv) {
	long n = atol(argv[1]);
	const char *what = argv[2];
	__cudaRegisterFunction(NULL, (const char *)stub, (char *)"k", "_Z1kv", -1, NULL, NULL, NULL, NULL, NULL);
	struct fake_dim3 g = {1, 1, 1}, b = {32, 1, 1};
	cudaLaunchKernel((const void *)stub, g, b, NULL, 0, NULL);
	nvtxRangePushA("warm"); nvtxRangePop();
	struct timespec ts = {0, 30000000}; nanosleep(&ts, NULL); /* past the TSC's calibration */
	double t0 = now();
	if (!strcmp(what, "err"))
		for (long i = 0; i < n; i++) cudaGetLastError();
	else if (!strcmp(what, "launch"))
		for (long i = 0; i < n; i++) cudaLaunchKernel((const void *)stub, g, b, NULL, 0, NULL);
	else
		for (long i = 0; i < n; i++) { nvtxRangePushA("r"); nvtxRangePop(); }
	printf("%.1f\n", (now() - t0) / n);
	return 0;
}
EOS
$CC -O2 -I"$top/tests/fixtures" -o "$tmp/rtbench" "$tmp/rtbench.c" -L"$B/fixtures" \
	-l:libcudart.so.13 -Wl,-rpath,"$B/fixtures" -ldl -pthread || exit 2

best() { # best CMD...: the fastest of 5 runs
	for i in 1 2 3 4 5; do "$@"; done | sort -n | head -1
}
printf '| %-34s | %8s | %8s |\n' "call (stand-ins)" plain cuthook
printf '|%s|%s|%s|\n' "------------------------------------" "----------" "----------"
for w in err:cudaGetLastError launch:"cudaLaunchKernel (+ cuLaunchKernel)" nvtx:"nvtxRangePushA + nvtxRangePop"; do
	k=${w%%:*} label=${w#*:}
	plain=$(best env -u NVTX_INJECTION64_PATH "$tmp/rtbench" "$N" "$k")
	hook=$(best "$B/bin/cuthook" -l api,runtime,nvtx -o "$tmp/t.jsonl" -- "$tmp/rtbench" "$N" "$k")
	printf '| %-34s | %8s | %8s |\n' "$label" "$plain" "$hook"
done
