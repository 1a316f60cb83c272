#!/bin/sh
# On a GPU machine: two processes sharing one GPU under one cuthook (the time-slicing view),
# and torch.profiler's output with and without cuthook in the same process.
# usage: tests/gpu/share_gpu.sh [python] [outdir]
py=${1:-python3}
out=${2:-/tmp/share}
B=${CUT_BUILD:-build}
hook=$B/bin/cuthook
[ -x "$B/bin/cuthook-static" ] && hook=$B/bin/cuthook-static
T=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
"$hook" -o "$out/share.jsonl" -- sh -c "$py $T/torch_gpu_work.py $out/p1.json 40 & $py $T/torch_gpu_work.py $out/p2.json 40 & wait"
echo "two processes: rc=$?"
# The profiler's kernel counts and names, plain and under cuthook.
"$py" "$T/torch_gpu_work.py" "$out/plain.json" 20 >/dev/null 2>&1
"$hook" -o "$out/under.jsonl" -- "$py" "$T/torch_gpu_work.py" "$out/under.json" 20 >/dev/null 2>&1
"$py" - "$out/plain.json" "$out/under.json" <<'PY'
import json, sys, collections
def kinds(p):
    ev = json.load(open(p))["traceEvents"]
    return collections.Counter((e.get("cat"), e["name"]) for e in ev if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset", "cuda_runtime", "cuda_driver"))
a, b = kinds(sys.argv[1]), kinds(sys.argv[2])
print("profiler: plain", sum(a.values()), "under cuthook", sum(b.values()), "identical counts" if a == b else "DIFFER")
for k in set(a) | set(b):
    if a[k] != b[k]: print("  ", k, a[k], b[k])
PY
