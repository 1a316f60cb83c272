#!/bin/sh
# Everything BENCHMARKS.md reports from a GPU machine, in one go (run as root there):
# per-call overhead of both capture paths on the real driver (bench-capture.sh,
# bench-hook.sh), PyTorch inference wall time plain / under cuthook / under cutcapture
# (min/median/max of RUNS), events and losses of each, and the training-step samples.
# usage: tests/bench/bench-gpu.sh BUILDDIR OUTDIR [runs]
#   BUILDDIR holds bin/cutcapture-static, bin/cuthook, lib/libcuthook.so, fixtures/
set -u
B=$(cd "$1" && pwd)
out=$2
runs=${3:-3}
top=$(cd "$(dirname "$0")/../.." && pwd)
py=${PYTHON:-python3}
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
mkdir -p "$out"
cap=$B/bin/cutcapture-static
hook=$B/bin/cuthook

echo "== machine"
nvidia-smi -L 2>/dev/null
echo "driver $(cat /sys/module/nvidia/version 2>/dev/null), kernel $(uname -r), $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
$py -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'

echo "== build driverapi"
(cd "$top/samples/scripts" && nvcc -fatbin -o "$w/vecadd.fatbin" vecadd.cu &&
	gcc -O2 -I/usr/local/cuda/include -o "$w/driverapi" driverapi.c -lcuda) || exit 1
"$w/driverapi" "$w/vecadd.fatbin"

# Warm the page cache so the first timed run is not the one that reads PyTorch from disk.
$py "$top/samples/scripts/torch_mlp.py" >/dev/null

echo "== capture: per-call cost and attach/detach (bench-capture.sh)"
CUTCAPTURE=$cap CUT_BUILD=$B sh "$top/tests/bench/bench-capture.sh" -r 5 -d "$w"
echo "== hook: per-call cost (bench-hook.sh)"
PATH=/usr/local/cuda/bin:$PATH sh "$top/tests/bench/bench-hook.sh" "$B" 1000000

# trailer FILE KEY: a number from a capture's trailer.
trailer() { grep '"name":"trailer"' "$1" | tail -1 | sed -n "s/.*\"$2\":\([0-9]*\).*/\1/p"; }
stats() { sort -n | awk '{v[NR] = $1} END {printf "%.2f %.2f %.2f", v[1], v[int((NR + 1) / 2)], v[NR]}'; }
now() { date +%s.%N; }

echo "== PyTorch inference (torch_mlp.py, 20 passes): wall seconds min/median/max of $runs"
printf '%-12s %8s %8s %8s %8s %6s  %s\n' mode min med max events lost checksum
for mode in plain cuthook cutcapture; do
	: >"$w/times"
	for i in $(seq "$runs"); do
		rm -f "$w/t.jsonl"
		s=$(now)
		case $mode in
		plain) $py "$top/samples/scripts/torch_mlp.py" >"$w/o" ;;
		cuthook) "$hook" -o "$w/t.jsonl" -- $py "$top/samples/scripts/torch_mlp.py" >"$w/o" ;;
		cutcapture) "$cap" -q -o "$w/t.jsonl" -- $py "$top/samples/scripts/torch_mlp.py" >"$w/o" ;;
		esac
		e=$(now)
		awk -v e="$e" -v s="$s" 'BEGIN { printf "%.3f\n", e - s }' >>"$w/times"
	done
	ev=- lost=-
	[ -f "$w/t.jsonl" ] && ev=$(grep -vc '"layer":"meta"' "$w/t.jsonl") && lost=$(trailer "$w/t.jsonl" lost)
	set -- $(stats <"$w/times")
	printf '%-12s %8s %8s %8s %8s %6s  %s\n' $mode $1 $2 $3 "$ev" "${lost:-?}" "$(cat "$w/o")"
	[ -f "$w/t.jsonl" ] && cp "$w/t.jsonl" "$out/mlp-$mode.jsonl"
done

echo "== samples: training steps (torch_train.py 5 steps)"
"$cap" -q -o "$out/capture-torch-train.jsonl" -- $py "$top/samples/scripts/torch_train.py" 5
"$hook" -o "$out/hook-torch-train.jsonl" -- $py "$top/samples/scripts/torch_train.py" 5
ls -la "$out"
