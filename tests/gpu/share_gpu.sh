#!/bin/sh
# On a GPU machine: two processes sharing one GPU under one cuthook (the time-slicing view),
# each with torch.profiler (CUPTI) in it, once as cuthook records by default and once with -S
# (an event before every submission: a start held up by the other process is measured, not
# taken from the call); each process's gpu events against its own profiler's (compare.py), and
# how long each side says the two processes' work overlapped on the GPU (a GPU time-slices
# between processes: their kernels do not run at once). Then torch.profiler's output with and
# without cuthook in the same process.
# usage: tests/gpu/share_gpu.sh [python] [outdir]
py=${1:-python3}
out=${2:-/tmp/share}
B=${CUT_BUILD:-build}
hook=$B/bin/cuthook
[ -x "$B/bin/cuthook-static" ] && hook=$B/bin/cuthook-static
T=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
for mode in default S; do
	flag=
	[ $mode = S ] && flag=-S
	"$hook" $flag -o "$out/share.$mode.jsonl" -- sh -c \
		"$py $T/torch_gpu_work.py $out/p1.$mode.json 40 & $py $T/torch_gpu_work.py $out/p2.$mode.json 40 & wait"
	echo "== two processes, cuthook $flag: rc=$?"
	SPANS=$T/../scripts/lib "$py" - "$out/share.$mode.jsonl" "$out/p1.$mode.json" "$out/p2.$mode.json" <<'PY' >"$out/pairs.$mode"
import json, os, sys
sys.path.insert(0, os.environ["SPANS"])
from spans import overlap as overlap_of, union
def overlap(byproc):
    return overlap_of(list(byproc.values()))
trace = sys.argv[1]
ev = [json.loads(l) for l in open(trace)]
cut = {}
for e in ev:
    if e.get("layer") == "gpu":
        cut.setdefault(e["pid"], []).append((e["ts"], e["ts"] + e["dur"]))
for pid in cut:
    with open(f"{trace[:-6]}.{pid}.jsonl", "w") as f:
        for e in ev:
            if e.get("pid") == pid:
                f.write(json.dumps(e) + "\n")
prof = {}
for p in sys.argv[2:]:
    pev = json.load(open(p))["traceEvents"]
    pid = next(e["pid"] for e in pev if e.get("cat") == "cuda_runtime")
    prof[pid] = [(float(e["ts"]) * 1e3, (float(e["ts"]) + float(e["dur"])) * 1e3)
                 for e in pev if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    print(f"{trace[:-6]}.{pid}.jsonl {p}")
print(f"overlap on the GPU: cut {overlap(cut) / 1e6:.2f} ms of {union([x for v in cut.values() for x in v]) / 1e6:.2f} ms busy; "
      f"the profilers {overlap(prof) / 1e6:.2f} ms of {union([x for v in prof.values() for x in v]) / 1e6:.2f} ms", file=sys.stderr)
PY
	while read -r t p; do
		echo "-- $(basename "$t") against $(basename "$p")"
		"$py" "$T/compare.py" "$t" "$p"
	done <"$out/pairs.$mode"
done
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
