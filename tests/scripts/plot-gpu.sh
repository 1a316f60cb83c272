#!/bin/sh
# cutplot with the gpu layer: a timeline row per process and stream of GPU work, and the GPU
# utilisation chart, whose area (each column's share times its width) lies between the union
# of the process's GPU intervals and the sum of their durations, computed here; never over
# 100 %; a trace without the layer says there is none.
. "$(dirname "$0")/lib/hook-setup.sh"
PATH=$B/bin:$PATH
command -v python3 >/dev/null || { echo "needs python3"; exit 77; }
cuthook -o "$tmp/t.jsonl" -- "$fx/gpuprog" 10 >/dev/null || bad "gpuprog: exit $?"
cutplot -S -T dumb -s 160,60 "$tmp/t.jsonl" >"$tmp/tl.gp" || bad "timeline: exit $?"
for s in 0x5010 0x5020 0x5030 0x2; do
	grep -q "GPU stream $s" "$tmp/tl.gp" || bad "timeline: no row for stream $s"
done
cutplot -S -c gpu -T dumb "$tmp/t.jsonl" >"$tmp/gpu.gp" || bad "-c gpu: exit $?"
python3 - "$tmp/t.jsonl" "$tmp/gpu.gp" <<'PY' || fail=1
import json, re, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
gp = open(sys.argv[2]).read()
unit = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[re.search(r'xlabel "time \((\w+)\)"', gp).group(1)]
data = gp.split("$gpu << EOD\n")[1].split("EOD")[0].strip().split("\n\n\n")
if len(data) != 1: sys.exit(f"FAIL {len(data)} processes, want 1")
pts = [tuple(map(float, l.split())) for l in data[0].split("\n") if l.strip()]
dt = pts[1][0] - pts[0][0]
area = sum(u / 100 * dt * unit for _, u in pts)
iv = sorted((e["ts"], e["ts"] + e["dur"]) for e in ev if e["layer"] == "gpu")
union = 0; cs, ce = iv[0]
for s, e in iv[1:]:
    if s > ce: union += ce - cs; cs, ce = s, e
    else: ce = max(ce, e)
union += ce - cs
total = sum(e - s for s, e in iv)
ok = max(u for _, u in pts) <= 100 and union * 0.9 <= area <= total * 1.03
if not ok: sys.exit(f"FAIL area {area:.0f} ns, union {union}, sum {total}, max {max(u for _, u in pts)}")
PY
cuthook -l api -o "$tmp/n.jsonl" -- "$fx/gpuprog" 2 >/dev/null || bad "-l api: exit $?"
cutplot -S -c gpu -T dumb "$tmp/n.jsonl" | grep -q 'no GPU work in the trace' || bad "no layer: not said"
exit $fail
