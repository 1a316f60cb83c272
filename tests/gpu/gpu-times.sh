#!/bin/sh
# On a GPU machine with PyTorch: the gpu layer's times against CUPTI (torch.profiler) in the
# same process. Kernels (torch_gpu_work.py, check_times.py: issue 26, item 3: |dstart| and
# |ddur| p50/p90/max per kind of start, the trailer's mapping error), with the clock anchored
# by the clock kernel (the default), by round trips through host memory
# (CUTHOOK_GPU_ANCHORS=wait) and by events' brackets (=event) in the same run; then the
# kernels of a program whose two threads and three streams put work on the GPU in any order,
# batches copied beside it (torch_threads.py, check_pairs.py: paired by name and time); then
# copies and memsets of 4 B, 64 KiB and 64 MiB, pageable and pinned, both ways, and device to device
# (torch_copies.py, check_copies.py: issue 25, a pageable 64 MiB copy came out 500 times
# short). Prints the tables BENCHMARKS.md reports; exits 1 when a check failed or, with the
# default anchors, a target was missed.
# usage: tests/gpu/gpu-times.sh BUILDDIR [python] [rounds]
#   BUILDDIR holds bin/cuthook (or bin/cuthook-static) and lib/libcuthook.so
set -u
B=$(cd "${1:?usage: gpu-times.sh BUILDDIR [python] [rounds]}" && pwd)
py=${2:-python3}
rounds=${3:-5}
T=$(cd "$(dirname "$0")" && pwd)
hook=$B/bin/cuthook
[ -x "$B/bin/cuthook-static" ] && hook=$B/bin/cuthook-static
export CUTHOOK_LIB=$B/lib/libcuthook.so
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
rc=0
echo "== machine: $(nvidia-smi -L 2>/dev/null | head -1); driver $(cat /sys/module/nvidia/version 2>/dev/null)"

for anchors in kernel wait event; do
	echo "== kernels against CUPTI, anchors $anchors (torch_gpu_work.py, 20 steps)"
	CUTHOOK_GPU_ANCHORS=$anchors "$hook" -o "$w/work.$anchors.jsonl" -- \
		$py "$T/torch_gpu_work.py" "$w/work.$anchors.prof.json" 20 || rc=1
	$py "$T/check_times.py" "$w/work.$anchors.jsonl" "$w/work.$anchors.prof.json" "anchors $anchors" ||
		{ [ $anchors = kernel ] && rc=1; }
done

echo "== kernels of two threads and three streams against CUPTI (torch_threads.py, 30 steps)"
"$hook" -o "$w/threads.jsonl" -- $py "$T/torch_threads.py" "$w/threads.prof.json" 30 || rc=1
$py "$T/check_pairs.py" "$w/threads.jsonl" "$w/threads.prof.json" "two threads" || rc=1

echo "== copies and memsets against CUPTI ($rounds rounds)"
"$hook" -o "$w/copies.jsonl" -- $py "$T/torch_copies.py" "$w/copies.prof.json" "$rounds" || rc=1
tail -1 "$w/copies.jsonl" | grep -o '"gpu":{[^}]*}'
$py "$T/check_copies.py" "$w/copies.jsonl" "$w/copies.prof.json" || rc=1
exit $rc
