#!/bin/sh
# demo.sh BUILDDIR: what `make demo` runs once the tools are built, on two real traces of one
# PyTorch training loop (samples/demo-train-*.jsonl.zst: cuthook on an H100, every user-space
# layer, the GPU's own timeline, an NVTX range a step; samples/README.md says how they were
# made). "base" is the loop as it should be; "item" reads the loss back every step. It shows
# the GPU tables, the steady state cut out with cutslice, the per-step view, what changed
# between the two runs (cutdiff), and writes the timeline and the chart.
B=${1:-build}
bin=$B/bin
out=$B/demo
base=samples/demo-train-base.jsonl.zst
item=samples/demo-train-item.jsonl.zst
mkdir -p "$out" || exit 2

if [ -t 1 ]; then
	say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
else
	say() { printf '\n== %s\n' "$*"; }
fi
# The paragraph of cutstat's text that starts with $1, at most $2 lines of it.
section() { awk -v t="$1" -v n="${2:-1000}" 'index($0, t) == 1 { p = 1 } p && !NF { exit } p && n-- > 0'; }
run() { "$bin/$@" || { echo "demo: $1 failed (exit $?)" >&2; exit 1; }; }

say "cutslice -r step -n 6..40 $base  (the steady state: steps 1-5 are the warm-up)"
run cutslice -r step -n 6..40 "$base" >"$out/base.jsonl"
run cutslice -r step -n 6..40 "$item" >"$out/item.jsonl"
echo "kept $(grep -c '"layer":"gpu"' "$out/base.jsonl") pieces of GPU work of 35 steps" \
	"into $out/base.jsonl (and $out/item.jsonl)"

say "cutstat  (GPU work timed on the device, without CUPTI)"
run cutstat "$out/base.jsonl" >"$out/stat.txt"
section "GPU work" 8 <"$out/stat.txt"
echo
section "GPU busy" 3 <"$out/stat.txt"
echo
section "Verdict" <"$out/stat.txt"

say "cutstat -s step  (a row per step, its GPU busy share, the outliers)"
run cutstat -s step "$out/base.jsonl" >"$out/steps.txt"
section "Steps:" 8 <"$out/steps.txt"
echo "  ..."
section "Steps per process" <"$out/steps.txt"

say "cutdiff base item  (the same loop reading loss.item() every step)"
"$bin/cutdiff" "$out/base.jsonl" "$out/item.jsonl" >"$out/diff.txt"
st=$?
[ $st -eq 0 ] || [ $st -eq 4 ] || { echo "demo: cutdiff failed (exit $st)" >&2; exit 1; }
sed -n '4,12p' "$out/diff.txt"

say "the timeline and the chart"
run cutchrome "$base" >"$out/trace.json"
run cutplot -c all -o "$out/overview.png" "$out/base.jsonl"
echo "wrote $out/trace.json (open it in https://ui.perfetto.dev)"
echo "  and $out/overview.png; every tool's man page: man -l share/man/<tool>.1"
