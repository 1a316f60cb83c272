#!/bin/sh
# bench-gpu-layer.sh BUILDDIR [runs]: on a machine with an NVIDIA GPU and nvcc, what each capture
# mode costs a launch (ns per launch, the fastest of `runs` alternated runs of launchbench):
# plain; cuthook -l api,runtime,nvtx (calls only); cuthook (+ gpu, the default); cuthook -S (an
# event before every submission too). Prints a table; BENCHMARKS.md keeps the results.
set -e
B=${1:?usage: bench-gpu-layer.sh BUILDDIR [runs]}
runs=${2:-3}
hook=$B/bin/cuthook
[ -x "$B/bin/cuthook-static" ] && hook=$B/bin/cuthook-static
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
nvcc -O2 -o "$tmp/lb" "$(dirname "$0")/launchbench.cu"
for r in $(seq "$runs"); do
	"$tmp/lb" | sed 's/^/plain /'
	"$hook" -l api,runtime,nvtx -o "$tmp/a.jsonl" -- "$tmp/lb" | sed 's/^/api /'
	"$hook" -o "$tmp/g.jsonl" -- "$tmp/lb" | sed 's/^/api+gpu /'
	"$hook" -S -o "$tmp/s.jsonl" -- "$tmp/lb" | sed 's/^/api+gpu(-S) /'
done >"$tmp/all"
echo "| pattern | plain | cuthook -l api,runtime,nvtx | cuthook (all layers) | cuthook -S |"
echo "|---|---|---|---|---|"
for p in idle busy two; do
	row="| $p"
	for m in plain api api+gpu 'api+gpu(-S)'; do
		v=$(awk -v m="$m" -v p="$p" '$1 == m && $2 == p { if (!b || $3 < b) b = $3 } END { print b }' "$tmp/all")
		row="$row | $v"
	done
	echo "$row |"
done
tail -1 "$tmp/g.jsonl" | grep -o '"gpu":{[^}]*}' || true
