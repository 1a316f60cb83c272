#!/bin/sh
# What libcuthook's call layers cost per call, api against runtime, on the stand-ins
# (tests/fixtures/fakecuda.c, fakecudart.c): cheap calls that do next to nothing themselves,
# pairs with nothing decoded (cuCtxGetCurrent, cudaGetLastError), one out value decoded
# (cuDriverGetVersion, cudaGetDeviceCount) and an argument in (cuDeviceGet, cudaSetDevice), each
# timed plain and under cuthook -l api,runtime in the same run; prints a table of ns per call and
# what the layer adds. The stand-in runtime's functions call no driver function, so every row
# times one recorded call. As root with BPF, also under cutcapture -l api,runtime: by default
# (the same library) and with --uprobes.
# usage: tests/bench/bench-layers.sh [builddir] [calls]
# Each figure is the fastest of 5 runs, in nanoseconds per call. Where valgrind is installed, the
# instructions cuthook adds per call too (callgrind: the difference between 120,000 and 20,000
# calls, plain subtracted): a count that load on the machine does not change.
B=${1:-build}
N=${2:-300000}
top=$(cd "$(dirname "$0")/../.." && pwd)
B=$(cd "$top" && cd "$B" && pwd) || exit 2
for f in bin/cuthook lib/libcuthook.so fixtures/libcuda.so.1 fixtures/libcudart.so.13; do
	[ -e "$B/$f" ] || {
		echo "bench-layers.sh: build first: make B=${1:-build} all test-programs" >&2
		exit 2
	}
done
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
CC=${CC:-cc}

cat >"$tmp/layerbench.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "fakecuda.h"
#include "fakecudart.h"
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
int main(int argc, char **argv) {
	long n = atol(argv[1]);
	const char *w = argv[2];
	int v;
	CUdevice d;
	CUcontext c;
	cuInit(0);
	/* Past cuthook's TSC calibration (~15 ms from start), as a real program's calls are. */
	struct timespec warm = {0, 50000000}; nanosleep(&warm, NULL);
	for (long i = 0; i < 1000; i++) { cuCtxGetCurrent(&c); cudaGetDeviceCount(&v); }
	double t0 = now();
	if (!strcmp(w, "cuCtxGetCurrent")) for (long i = 0; i < n; i++) cuCtxGetCurrent(&c);
	else if (!strcmp(w, "cuDriverGetVersion")) for (long i = 0; i < n; i++) cuDriverGetVersion(&v);
	else if (!strcmp(w, "cuDeviceGet")) for (long i = 0; i < n; i++) cuDeviceGet(&d, 0);
	else if (!strcmp(w, "cudaGetLastError")) for (long i = 0; i < n; i++) cudaGetLastError();
	else if (!strcmp(w, "cudaGetDeviceCount")) for (long i = 0; i < n; i++) cudaGetDeviceCount(&v);
	else if (!strcmp(w, "cudaSetDevice")) for (long i = 0; i < n; i++) cudaSetDevice(0);
	else return 2;
	printf("%.1f\n", (now() - t0) / n);
	return 0;
}
EOF
$CC -O2 -I"$top/tests/fixtures" -o "$tmp/layerbench" "$tmp/layerbench.c" -L"$B/fixtures" \
	-lcuda -l:libcudart.so.13 -Wl,-rpath,"$B/fixtures" -ldl -pthread || exit 2

best() { # best CMD...: the fastest of 5 runs
	for i in 1 2 3 4 5; do "$@" || echo fail; done | sort -n | head -1
}
# instr VAR=VALUE...: user instructions per call of $call in the environment given (callgrind),
# 120,000 calls less 20,000.
instr() {
	for _n in 20000 120000; do
		env "$@" valgrind --tool=callgrind --callgrind-out-file=/dev/null "$tmp/layerbench" \
			$_n "$call" 2>&1 >/dev/null | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
	done | { read -r _a && read -r _b && echo $(((_b - _a) / 100000)); }
}
vg=
command -v valgrind >/dev/null && vg=1
root=
[ "$(id -u)" -eq 0 ] && [ -x "$B/bin/cutcapture" ] &&
	"$B/bin/cutcapture" -q -l sched -o /dev/null -- true 2>/dev/null && root=1
printf '| %-7s | %-18s | %7s | %7s | %7s |' layer call plain cuthook adds
[ -n "$vg" ] && printf ' %12s |' "instr adds"
[ -n "$root" ] && printf ' %10s | %10s |' cutcapture --uprobes
printf '\n|---------|--------------------|---------|---------|---------|'
[ -n "$vg" ] && printf '%s' '--------------|'
[ -n "$root" ] && printf '%s' '------------|------------|'
printf '\n'
for c in api:cuCtxGetCurrent runtime:cudaGetLastError api:cuDriverGetVersion \
	runtime:cudaGetDeviceCount api:cuDeviceGet runtime:cudaSetDevice; do
	layer=${c%%:*} call=${c#*:}
	plain=$(best "$tmp/layerbench" "$N" "$call")
	hook=$(best "$B/bin/cuthook" -l api,runtime -o "$tmp/t.jsonl" -- "$tmp/layerbench" "$N" "$call")
	grep -c "\"layer\":\"$layer\",\"name\":\"$call\"" "$tmp/t.jsonl" >"$tmp/n"
	[ "$(cat "$tmp/n")" -ge "$N" ] || echo "bench-layers.sh: cuthook recorded $(cat "$tmp/n") $call calls, not $N" >&2
	printf '| %-7s | %-18s | %7s | %7s | %7s |' "$layer" "$call" "$plain" "$hook" \
		"$(echo "$hook $plain" | awk '{ printf "%.1f", $1 - $2 }')"
	if [ -n "$vg" ]; then
		ip=$(instr NONE=)
		ih=$(instr CUTHOOK_LAYERS=api,runtime CUTHOOK_OUTPUT="$tmp/v.jsonl" \
			LD_PRELOAD="$B/lib/libcuthook.so")
		printf ' %12s |' "$((ih - ip))"
	fi
	if [ -n "$root" ]; then
		cc=$(best "$B/bin/cutcapture" -q -l api,runtime -o "$tmp/c.jsonl" -- "$tmp/layerbench" "$N" "$call")
		up=$(best "$B/bin/cutcapture" -q -l api,runtime --uprobes --libcuda "$B/fixtures/libcuda.so.1" \
			--libcudart "$B/fixtures/libcudart.so.13" -o "$tmp/c.jsonl" -- "$tmp/layerbench" "$N" "$call")
		printf ' %10s | %10s |' "$cc" "$up"
	fi
	printf '\n'
done
echo "plain: the stand-in alone; cuthook: -l api,runtime; adds: cuthook - plain (what a recorded call costs)."
[ -n "$vg" ] && echo "instr adds: user instructions cuthook adds per call (callgrind)."
[ -n "$root" ] && echo "cutcapture: -l api,runtime, its default (the library) and --uprobes (a uprobe pair a call)."
exit 0
