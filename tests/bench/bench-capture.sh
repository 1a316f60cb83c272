#!/bin/sh
# cutcapture's cost: per traced call (plain, bare counting probes, full records) and the
# time to attach and detach the API probes. Prints tables; asserts nothing. Runs as root.
#
# usage: tests/bench/bench-capture.sh [-n calls] [-r runs] [-d dir]
#   Always: a generated library of 682 cu* functions (each starting with a push, as all but
#   a few of libcuda's do) and a loop calling one of them.
#   With -d dir holding driverapi and vecadd.fatbin (samples/scripts, built on a GPU
#   machine): `driverapi bench` against the real libcuda, and attach/detach of all of it.
#   CUTCAPTURE names the binary (default $CUT_BUILD/bin/cutcapture).
set -eu
n=200000 runs=3 dir=
while getopts n:r:d: o; do
	case $o in
	n) n=$OPTARG ;;
	r) runs=$OPTARG ;;
	d) dir=$OPTARG ;;
	*) echo "usage: bench-capture.sh [-n calls] [-r runs] [-d dir]" >&2; exit 2 ;;
	esac
done
top=$(cd "$(dirname "$0")/../.." && pwd)
B=${CUT_BUILD:-$top/build}
cap=${CUTCAPTURE:-$B/bin/cutcapture}
CC=${CC:-cc}
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT

median() { sort -n | awk '{v[NR] = $1} END {print NR ? v[int((NR + 1) / 2)] : "-"}'; }
# Table cell for a column of numbers: "median (min-max)", integers.
spread() { sort -n | awk '{v[NR] = int($1)} END {if (NR) printf "%d (%d-%d)", v[int((NR + 1) / 2)], v[1], v[NR]; else print "-"}'; }
# trailer FILE KEY: a number from the trailer.
trailer() { tail -1 "$1" | sed -n "s/.*\"$2\":\([0-9]*\).*/\1/p"; }

echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); kernel $(uname -r)"
echo "$runs runs each: median (min-max); ns per call; attach and detach of the API probes in ms"
echo

# ---- the generated library ----
{
	echo '#include <stdint.h>'
	i=0
	while [ $i -lt 682 ]; do
		echo "int cuBench$i(void **p) { *p = (void *)(uintptr_t)$i; return 0; }"
		i=$((i + 1))
	done
} >"$t/lib.c"
cat >"$t/loop.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
int cuBench0(void **p);
int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000;
	void *p;
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++)
		cuBench0(&p);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.0f\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n);
	return 0;
}
EOF
# -O0 keeps the frame-pointer push every function of libcuda starts with; no endbr64
# (Ubuntu's default), which the kernel single-steps at several us a hit.
$CC -O0 -fcf-protection=none -fPIC -shared -o "$t/libcuda.so.1" "$t/lib.c"
$CC -O2 -o "$t/loop" "$t/loop.c" "$t/libcuda.so.1" -Wl,-rpath,"$t"

loop_ns() { # MODE: plain, bare or full; every run's figure, one a line
	r=0
	while [ $r -lt "$runs" ]; do
		case $1 in
		plain) "$t/loop" "$n" ;;
		bare) "$cap" -q --bench-bare -l api --libcuda "$t/libcuda.so.1" -o "$t/o.jsonl" -- "$t/loop" "$n" ;;
		full) "$cap" -q -l api --uprobes --libcuda "$t/libcuda.so.1" -o "$t/o.jsonl" -- "$t/loop" "$n" ;;
		esac
		r=$((r + 1))
	done >"$t/loop.$1"
}
loop_ns plain
loop_ns bare
loop_ns full
plain=$(median <"$t/loop.plain") full=$(median <"$t/loop.full")
lost=$(trailer "$t/o.jsonl" lost)
echo "| generated library, $n calls | plain | bare probes | full records | full - plain (medians) |"
echo "|---|---|---|---|---|"
echo "| cuBench0 | $(spread <"$t/loop.plain") | $(spread <"$t/loop.bare") | $(spread <"$t/loop.full") | $((full - plain)) |"
echo "(full: $lost events lost in the last run)"
echo

attach() { # LIB [OPTIONS]: "attach|detach|wall" in ms, each "median (min-max)"
	lib=$1
	shift
	r=0
	while [ $r -lt "$runs" ]; do
		s=$(date +%s%N)
		"$cap" -q -l api --uprobes --libcuda "$lib" "$@" -o "$t/a.jsonl" -- true
		e=$(date +%s%N)
		echo "$(($(trailer "$t/a.jsonl" attach_ns) / 1000000)) $(($(trailer "$t/a.jsonl" detach_ns) / 1000000)) $(((e - s) / 1000000))"
		r=$((r + 1))
	done >"$t/att"
	echo "$(cut -d' ' -f1 "$t/att" | spread)|$(cut -d' ' -f2 "$t/att" | spread)|$(cut -d' ' -f3 "$t/att" | spread)"
}
row() { # PROBES FUNCTIONS "attach|detach|wall"
	echo "| $1 | $2 | $(echo "$3" | sed 's/|/ | /g') |"
}
echo "| probes | functions | attach | detach | whole run of \`true\` |"
echo "|---|---|---|---|---|"
row uprobe_multi "682 (generated)" "$(attach "$t/libcuda.so.1")"
row "single uprobes" "10 (generated)" "$(attach "$t/libcuda.so.1" --single-probes -f 'cuBench?')"
if [ -n "$dir" ]; then
	real=$(ldconfig -p | awk '/libcuda.so.1 .*x86-64/ {print $NF; exit}')
	nf=$("$cap" -q -l api --uprobes -o "$t/a.jsonl" -- true && sed -n 's/.*"functions":\([0-9]*\).*/\1/p' "$t/a.jsonl" | head -1)
	row uprobe_multi "$nf ($real)" "$(attach "$real")"
fi
echo

[ -n "$dir" ] || exit 0
# ---- the real driver: driverapi bench ----
bench() { # MODE: the three ns-per-call figures
	case $1 in
	plain) "$dir/driverapi" bench "$n" "$dir/vecadd.fatbin" ;;
	bare) "$cap" -q --bench-bare -l api -o "$t/d.jsonl" -- "$dir/driverapi" bench "$n" "$dir/vecadd.fatbin" ;;
	full) "$cap" -q -l api --uprobes -o "$t/d.jsonl" -- "$dir/driverapi" bench "$n" "$dir/vecadd.fatbin" ;;
	esac | awk 'NR > 1 {printf "%s ", $2} END {print ""}'
}
for m in plain bare full; do
	r=0
	while [ $r -lt "$runs" ]; do bench $m; r=$((r + 1)); done >"$t/$m"
done
lost=$(trailer "$t/d.jsonl" lost)
echo "| driverapi bench $n (real libcuda) | plain | bare probes | full records | full - plain (medians) |"
echo "|---|---|---|---|---|"
col=1
for call in cuCtxGetCurrent cuLaunchKernel_empty cuMemcpyHtoD_8B; do
	p=$(cut -d' ' -f$col "$t/plain" | median | cut -d. -f1)
	f=$(cut -d' ' -f$col "$t/full" | median | cut -d. -f1)
	echo "| $call | $(cut -d' ' -f$col "$t/plain" | spread) | $(cut -d' ' -f$col "$t/bare" | spread) | $(cut -d' ' -f$col "$t/full" | spread) | $((f - p)) |"
	col=$((col + 1))
done
echo "(full: $lost events lost in the last run)"
