#!/bin/sh
# bench-gpu-layer.sh BUILDDIR [runs]: on a machine with an NVIDIA GPU and nvcc, what the gpu
# layer costs a launch and the driver's floor beneath it, on the same machine (GPU machines of
# one kind differ by 50 % in what a driver call costs: compare only numbers of one run):
# 1. evcost, and evcost on the legacy stream: what a timing event costs the calling thread and
#    the stream by itself, against the other ways of stamping a stream (no cut involved);
# 2. launchbench under each capture mode, ns per launch, the fastest of `runs` alternated runs:
#    plain; cuthook -l api,runtime,nvtx (calls only); cuthook (+ gpu, the default); cuthook -S
#    (an event before every submission too); then what the gpu layer adds over the calls alone;
# 3. where CUPTI is installed ($CUPTI, else under /usr/local/cuda), launchbench under CUPTI's
#    activity API (cuptiinject.c: the bar cut is measured against, not part of cut): kernels,
#    copies and memsets only, and with every API call too; and what kernels alone add.
# Prints tables; BENCHMARKS.md keeps the results.
set -e
B=${1:?usage: bench-gpu-layer.sh BUILDDIR [runs]}
runs=${2:-3}
hook=$B/bin/cuthook
[ -x "$B/bin/cuthook-static" ] && hook=$B/bin/cuthook-static
here=$(dirname "$0")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
nvcc -O2 -o "$tmp/lb" "$here/launchbench.cu"
nvcc -O2 -o "$tmp/evcost" "$here/evcost.cu" -lcuda
cupti=
for d in ${CUPTI:-} /usr/local/cuda/extras/CUPTI /usr/local/cuda; do
	if [ -f "$d/include/cupti.h" ] && [ -d "$d/lib64" ]; then
		cupti=$d
		break
	fi
done
if [ -n "$cupti" ]; then
	cc -shared -fPIC -O2 -I"$cupti/include" -I/usr/local/cuda/include -o "$tmp/cupti.so" \
		"$here/cuptiinject.c" -L"$cupti/lib64" -Wl,-rpath,"$cupti/lib64" -lcupti
else
	echo "no CUPTI (set CUPTI=dir): its columns are left empty"
fi
"$tmp/evcost"
"$tmp/evcost" legacy
for r in $(seq "$runs"); do
	"$tmp/lb" | sed 's/^/plain /'
	"$hook" -l api,runtime,nvtx -o "$tmp/a.jsonl" -- "$tmp/lb" | sed 's/^/api /'
	"$hook" -o "$tmp/g.jsonl" -- "$tmp/lb" | sed 's/^/api+gpu /'
	"$hook" -S -o "$tmp/s.jsonl" -- "$tmp/lb" | sed 's/^/api+gpu(-S) /'
	if [ -n "$cupti" ]; then
		CUDA_INJECTION64_PATH=$tmp/cupti.so CUPTI_BENCH=kernels "$tmp/lb" 2>>"$tmp/cupti.log" |
			sed 's/^/cupti /'
		CUDA_INJECTION64_PATH=$tmp/cupti.so CUPTI_BENCH=api "$tmp/lb" 2>>"$tmp/cupti.log" |
			sed 's/^/cupti+api /'
	fi
done >"$tmp/all"
echo
echo "| pattern | plain | cuthook -l api,runtime,nvtx | cuthook (all layers) | cuthook -S | CUPTI kernels | CUPTI + API | gpu layer adds | CUPTI kernels add |"
echo "|---|---|---|---|---|---|---|---|---|"
for p in idle busy two; do
	row="| $p"
	for m in plain api api+gpu 'api+gpu(-S)' cupti cupti+api; do
		v=$(awk -v m="$m" -v p="$p" '$1 == m && $2 == p { if (!b || $3 < b) b = $3 } END { print b }' "$tmp/all")
		row="$row | $v"
		eval "v_$(echo "$m" | tr -c 'a-z\n' '_')=$v"
	done
	[ -n "$v_api_gpu" ] && [ -n "$v_api" ] && row="$row | $((v_api_gpu - v_api))" || row="$row | ?"
	[ -n "$v_cupti" ] && [ -n "$v_plain" ] && row="$row | $((v_cupti - v_plain))" || row="$row | ?"
	echo "$row |"
done
tail -1 "$tmp/g.jsonl" | grep -o '"gpu":{[^}]*}' || true
[ ! -f "$tmp/cupti.log" ] || sort "$tmp/cupti.log" | uniq -c
