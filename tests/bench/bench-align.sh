#!/bin/sh
# How well cutmerge puts two hosts on one clock by their collectives, against how many there
# are and how long they span: generated jobs (tests/scripts/lib/gen-hosts.py) of 4 ranks on 2
# hosts, the second host's clock 3 ms ahead and 20 ppm fast, its realtime pair up to 1.5 ms
# off, collective ends within 3 us (a Gaussian jitter per rank), a broadcast whose root ends
# early now and then, and 1 s of start-up with no collective before them. Prints a table: the
# drift fitted (or not: then 0), and the error of the second host's records (ts and
# args.submit) within the collectives' span and in the second before it. Asserts nothing.
# usage: tests/bench/bench-align.sh [seed]
set -eu
seed=${1:-1}
top=$(cd "$(dirname "$0")/../.." && pwd)
B=${CUT_BUILD:-$top/build}
# a machine without the build's dependencies runs the cutmerge built elsewhere
make -s -C "$top" B="$B" "$B/bin/cutmerge" >/dev/null 2>&1 ||
	{ [ -x "$B/bin/cutmerge" ] && echo "(make failed: the cutmerge already built)" >&2; } || exit 1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
echo "| collectives | span s | drift fitted, ppm | drift error, ppm | residual µs | in the span: p50 / p99 / max µs | 1 s before: max µs |"
echo "|---|---|---|---|---|---|---|"
for n in 10 40 200 1000; do
	for span in 0.1 1 10 60; do
		step=$(python3 -c "print($span * 1000 / $n)")
		python3 "$top/tests/scripts/lib/gen-hosts.py" job "$dir/j" --ranks 4 --hosts 2 \
			--steps "$n" --step-ms "$step" --colls 1 --jitter-ns 3000 --lead-ms 1000 \
			--ppm 20 --offset-ms 3 --seed "$seed"
		"$B/bin/cutmerge" "$dir"/j/rank*.jsonl >"$dir/m.jsonl"
		python3 - "$dir/m.jsonl" "$n" <<'PY'
import json, sys
al, ins, before, first = None, [], [], None
ev = [json.loads(l) for l in open(sys.argv[1])]
for e in ev:
    a = e.get("args", {})
    if e["layer"] == "meta" and e["name"] == "align" and a["host"] == "node1":
        al = a
    if e["layer"] == "gpu" and "nccl" in e["name"] and first is None:
        first = a["true_ns"]
for e in ev:
    a = e.get("args", {})
    if e.get("host") != "node1" or "true_ns" not in a:
        continue
    err = [abs(e["ts"] - a["true_ns"])]
    if "true_submit_ns" in a:
        err.append(abs(a["submit"] - a["true_submit_ns"]))
    (ins if a["true_ns"] >= first else before).extend(err)
ins.sort()
q = lambda v, p: v[min(len(v) - 1, int(p * len(v)))] / 1000
fitted = f"{al['drift_ppm']:.3f}" if al.get("drift_fitted") else "no (0)"
print(f"| {sys.argv[2]} | {al['span_ns'] / 1e9:.2f} | {fitted} | {abs(al['drift_ppm'] - 20):.3f} "
      f"| {al['residual_ns'] / 1000:.1f} | {q(ins, .5):.1f} / {q(ins, .99):.1f} / {ins[-1] / 1000:.1f} "
      f"| {max(before) / 1000:.1f} |")
PY
	done
done
