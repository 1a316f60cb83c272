#!/bin/sh
# bench-preload.sh BUILDDIR [runs] [python] [parts]: on a GPU machine with PyTorch, as root:
# what each capture mode costs a launch-bound PyTorch loop (x.add_(1) on 256 floats, 30,000
# ops: five driver and five runtime calls an op; tests/bench/launchloop.py), in us per op,
# min/median/max of `runs` alternated runs, then the median of the chunks of 1,000 ops run at
# full speed (launchloop.py says why; the table to compare modes by): plain;
# cuthook -l api,runtime,nvtx; cuthook (+ gpu); cutcapture --uprobes with the api layer by uprobes
# only (api, ioctl, irq, sched); the same with the nvtx layer (libcuthook preloaded, no gpu
# layer); cutcapture --uprobes with every layer (libcuthook for gpu and nvtx: the default before
# issue 26); cutcapture's default (api, runtime, gpu, nvtx from libcuthook); the same without the
# gpu layer; and, for the bar cut is measured against, the same loop
# under torch.profiler recording GPU work through CUPTI (activities=[CUDA]), under its default
# activities (CPU and CUDA), and under `nsys profile -t cuda` where nsys is installed. Then each
# cutcapture trailer's counts. Then a GPU-bound training step (an 8-layer MLP, batch 4096,
# forward, backward and AdamW: about 100 kernels of tens of us a step), ms a step, plain, under
# cuthook with and without the gpu layer, cutcapture (its default) and torch.profiler's CUDA
# records: what the layer's one timing event a kernel costs a program the GPU paces; its pieces
# a step by kind and the cuthook trailer's gpu counts (START events). Last, the issue's
# GPU-bound work: 400 products of 4096 x 4096 floats, us a product, plain, cuthook, cutcapture and
# torch.profiler's CUDA records. Prints tables; BENCHMARKS.md keeps the results. parts: which
# of loop, step and mm to run (default all), and split (where a recorded call's cost goes,
# with an experiment build named by CUTHOOK_EXP_LIB: the part's comment below).
#   BUILDDIR holds bin/cutcapture-static, bin/cuthook, lib/libcuthook.so
set -u
B=$(cd "${1:?usage: bench-preload.sh BUILDDIR [runs] [python] [parts]}" && pwd)
runs=${2:-3}
py=${3:-python3}
parts=${4:-loop step mm}
part() { case " $parts " in *" $1 "*) return 0 ;; esac; return 1; }
cap=$B/bin/cutcapture-static
export CUTHOOK_LIB=$B/lib/libcuthook.so
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
# table FILE MODE...: min, median and max of each mode's numbers in FILE
table() {
	f=$1
	shift
	for m; do
		awk -v m="$m" '$1 == m { print $2 }' "$f" | sort -n |
			awk -v m="$m" '{ v[NR] = $1 } END { printf "%-22s %6.2f %6.2f %6.2f\n", m, v[1], v[int((NR + 1) / 2)], v[NR] }'
	done
}
. "$(dirname "$0")/chunks.sh" # fast_table
L=$(cd "$(dirname "$0")" && pwd)/launchloop.py
if part loop; then
echo "us per op, min/median/max of $runs"
# The loop is timed in chunks beside a probe that makes no CUDA call (launchloop.py says why):
# the first table is each run's us an op, the second only the chunks run at full speed.
nsys=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -1)
modes="plain cuthook-api cuthook cutcapture-uprobes cutcapture-nvtx cutcapture-uprobes-all cutcapture cutcapture-nogpu profiler-cuda profiler-all"
[ -n "$nsys" ] && modes="$modes nsys"
# BENCH_MODES: these modes alone (any of the above, and cuthook-api-sync, cuthook-sync,
# cutcapture-sync: the same with every call formatted on its own thread, CUTHOOK_ASYNC=0)
modes=${BENCH_MODES:-$modes}
# loop_mode MODE RUN: one run of the loop under MODE, its line of the table
loop_mode() {
	case $1 in
	*-sync) export CUTHOOK_ASYNC=0 ;;
	*) unset CUTHOOK_ASYNC ;;
	esac
	k=$w/k.$1
	case ${1%-sync} in
	plain) echo "$1 $($py "$L" "$k")" ;;
	cuthook) echo "$1 $("$B/bin/cuthook" -o "$w/h.jsonl" -- $py "$L" "$k")" ;;
	cuthook-api) echo "$1 $("$B/bin/cuthook" -l api,runtime,nvtx -o "$w/ha.jsonl" -- $py "$L" "$k")" ;;
	cutcapture-uprobes) echo "$1 $($cap -q --uprobes -l api,ioctl,irq,sched -o "$w/u.jsonl" -- $py "$L" "$k" 2>/dev/null)" ;;
	cutcapture-nvtx) echo "$1 $($cap -q --uprobes -l api,ioctl,irq,sched,nvtx -o "$w/n.jsonl" -- $py "$L" "$k" 2>/dev/null)" ;;
	cutcapture-uprobes-all) echo "$1 $($cap -q --uprobes -o "$w/ua.jsonl" -- $py "$L" "$k" 2>/dev/null)" ;;
	cutcapture) echo "$1 $($cap -q -o "$w/c.jsonl" -- $py "$L" "$k" 2>/dev/null)" ;;
	cutcapture-nogpu) echo "$1 $($cap -q -l api,runtime,nvtx,ioctl,irq,sched,kernel -o "$w/a.jsonl" -- $py "$L" "$k" 2>/dev/null)" ;;
	profiler-cuda) echo "$1 $($py "$L" "$k" cuda)" ;;
	profiler-all) echo "$1 $($py "$L" "$k" all)" ;;
	nsys) echo "$1 $("$nsys" profile -t cuda -o "$w/ns$2" -- $py "$L" "$k" 2>/dev/null | grep -E "^[0-9]+\.[0-9]+$" | tail -1)" ;;
	esac
	unset CUTHOOK_ASYNC
}
for r in $(seq "$runs"); do
	for m in $modes; do
		loop_mode "$m" "$r"
	done
done >"$w/loop"
table "$w/loop" $modes
echo
fast_table "$w/k" $modes
for f in c a; do
	[ -f "$w/$f.jsonl" ] || continue
	tail -1 "$w/$f.jsonl" | grep -o '"layers":{[^}]*}\|"lost":[0-9]*\|"gpu":{[^}]*}\|"preload":{[^}]*}\|"off_thread":[0-9]*' | tr '\n' ' '
	echo
done
fi

if part step; then
cat >"$w/step.py" <<'PY'
import contextlib, sys, time, torch
from torch.profiler import ProfilerActivity, profile
prof = profile(activities=[ProfilerActivity.CUDA]) if len(sys.argv) > 1 else contextlib.nullcontext()
torch.manual_seed(0)
m = torch.nn.Sequential(*[torch.nn.Sequential(torch.nn.Linear(1024, 1024), torch.nn.GELU())
                          for _ in range(8)]).cuda()
opt = torch.optim.AdamW(m.parameters(), lr=1e-4)
x = torch.randn(4096, 1024, device="cuda")
def step():
    opt.zero_grad(set_to_none=True)
    m(x).square().mean().backward()
    opt.step()
with prof:
    for _ in range(10):
        step()
    torch.cuda.synchronize()
    n = 100
    t0 = time.perf_counter()
    for _ in range(n):
        step()
    torch.cuda.synchronize()
    t = time.perf_counter() - t0
print(f"{1e3 * t / n:.3f}")
PY
echo
echo "GPU-bound training step, ms a step, min/median/max of $runs"
for r in $(seq "$runs"); do
	echo "plain $($py "$w/step.py")"
	echo "cuthook-api $("$B/bin/cuthook" -l api,runtime,nvtx -o "$w/sa.jsonl" -- $py "$w/step.py")"
	echo "cuthook $("$B/bin/cuthook" -o "$w/sh.jsonl" -- $py "$w/step.py")"
	echo "cutcapture $($cap -q -o "$w/sc.jsonl" -- $py "$w/step.py" 2>/dev/null)"
	echo "profiler-cuda $($py "$w/step.py" cuda)"
done >"$w/step"
table "$w/step" plain cuthook-api cuthook cutcapture profiler-cuda
printf 'gpu events a step: '
grep -c '"layer":"gpu"' "$w/sh.jsonl" | awk '{ printf "%.0f\n", $1 / 110 }'
printf 'of them, by kind: '
grep '"layer":"gpu"' "$w/sh.jsonl" | grep -o '"cat":"[a-z]*"' | sort | uniq -c |
	awk '{ printf "%s %.1f  ", $2, $1 / 110 } END { print "" }'
printf 'cuthook trailer: '
tail -1 "$w/sh.jsonl" | grep -o '"gpu":{[^}]*}'
fi

# The issue's GPU-bound work: 400 matrix products of 4096 x 4096 floats (a few ms each), s.
if part mm; then
cat >"$w/mm.py" <<'PY'
import contextlib, sys, time, torch
from torch.profiler import ProfilerActivity, profile
prof = profile(activities=[ProfilerActivity.CUDA]) if len(sys.argv) > 1 else contextlib.nullcontext()
torch.manual_seed(0)
a = torch.randn(4096, 4096, device="cuda")
b = torch.randn(4096, 4096, device="cuda")
with prof:
    for _ in range(20):
        c = a @ b
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(400):
        c = a @ b
    torch.cuda.synchronize()
    t = time.perf_counter() - t0
print(f"{1e6 * t / 400:.2f}")
PY
echo
echo "400 x 4096^2 matmul, us a product, min/median/max of $runs"
for r in $(seq "$runs"); do
	echo "plain $($py "$w/mm.py")"
	echo "cuthook $("$B/bin/cuthook" -o "$w/mh.jsonl" -- $py "$w/mm.py")"
	echo "cutcapture $($cap -q -o "$w/mc.jsonl" -- $py "$w/mm.py" 2>/dev/null)"
	echo "profiler-cuda $($py "$w/mm.py" cuda)"
done >"$w/mm"
table "$w/mm" plain cuthook cutcapture profiler-cuda
fi
# Where a recorded call's cost goes (parts "split", not run by default): the loop plain and
# under cuthook -l api,runtime with a library built with tests/bench/exp-split.patch (named by
# CUTHOOK_EXP_LIB), as it is (full), recording nothing but the call counts (bare: the wrappers'
# clock reads, in-flight notes and counting) and formatting every line but writing none
# (nowrite); full speed chunks as above. How to build it: the patch's header.
if part split; then
	: "${CUTHOOK_EXP_LIB:?split: CUTHOOK_EXP_LIB names a libcuthook.so built with exp-split.patch}"
	echo
	for r in $(seq "$runs"); do
		$py "$L" "$w/s.plain" >/dev/null
		for e in full:0 bare:1 nowrite:2; do
			CUTHOOK_LIB=$CUTHOOK_EXP_LIB CUTHOOK_EXP=${e#*:} "$B/bin/cuthook" -l api,runtime \
				-o "$w/s.jsonl" -- $py "$L" "$w/s.${e%:*}" >/dev/null
		done
	done
	fast_table "$w/s" plain full bare nowrite
fi
