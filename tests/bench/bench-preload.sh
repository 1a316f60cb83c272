#!/bin/sh
# bench-preload.sh BUILDDIR [runs] [python] [parts]: on a GPU machine with PyTorch, as root:
# what each capture mode costs a launch-bound PyTorch loop (x.add_(1) on 256 floats, 30,000
# ops: about five driver calls an op), in us per op, min/median/max of `runs` alternated runs: plain;
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
# of loop, step and mm to run (default all).
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
if part loop; then
echo "us per op, min/median/max of $runs"
cat >"$w/loop.py" <<'PY'
import contextlib, sys, time, torch
from torch.profiler import ProfilerActivity, profile
acts = {"cuda": [ProfilerActivity.CUDA],
        "all": [ProfilerActivity.CPU, ProfilerActivity.CUDA]}
prof = profile(activities=acts[sys.argv[1]]) if len(sys.argv) > 1 else contextlib.nullcontext()
x = torch.zeros(256, device="cuda")
with prof:
    for _ in range(2000):
        x.add_(1)
    torch.cuda.synchronize()
    n = 30000
    t0 = time.perf_counter()
    for _ in range(n):
        x.add_(1)
    torch.cuda.synchronize()
    t = time.perf_counter() - t0
print(f"{1e6 * t / n:.2f}")
PY
nsys=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -1)
modes="plain cuthook-api cuthook cutcapture-uprobes cutcapture-nvtx cutcapture-uprobes-all cutcapture cutcapture-nogpu profiler-cuda profiler-all"
[ -n "$nsys" ] && modes="$modes nsys"
for r in $(seq "$runs"); do
	echo "plain $($py "$w/loop.py")"
	echo "cuthook $("$B/bin/cuthook" -o "$w/h.jsonl" -- $py "$w/loop.py")"
	echo "cuthook-api $("$B/bin/cuthook" -l api,runtime,nvtx -o "$w/ha.jsonl" -- $py "$w/loop.py")"
	echo "cutcapture-uprobes $($cap -q --uprobes -l api,ioctl,irq,sched -o "$w/u.jsonl" -- $py "$w/loop.py" 2>/dev/null)"
	echo "cutcapture-nvtx $($cap -q --uprobes -l api,ioctl,irq,sched,nvtx -o "$w/n.jsonl" -- $py "$w/loop.py" 2>/dev/null)"
	echo "cutcapture-uprobes-all $($cap -q --uprobes -o "$w/ua.jsonl" -- $py "$w/loop.py" 2>/dev/null)"
	echo "cutcapture $($cap -q -o "$w/c.jsonl" -- $py "$w/loop.py" 2>/dev/null)"
	echo "cutcapture-nogpu $($cap -q -l api,runtime,nvtx,ioctl,irq,sched,kernel -o "$w/a.jsonl" -- $py "$w/loop.py" 2>/dev/null)"
	echo "profiler-cuda $($py "$w/loop.py" cuda)"
	echo "profiler-all $($py "$w/loop.py" all)"
	[ -n "$nsys" ] && echo "nsys $("$nsys" profile -t cuda -o "$w/ns$r" -- $py "$w/loop.py" 2>/dev/null | grep -E "^[0-9]+\.[0-9]+$" | tail -1)"
done >"$w/loop"
table "$w/loop" $modes
for f in c a; do
	tail -1 "$w/$f.jsonl" | grep -o '"layers":{[^}]*}\|"lost":[0-9]*\|"gpu":{[^}]*}\|"preload":{[^}]*}' | tr '\n' ' '
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
