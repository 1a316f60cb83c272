#!/bin/sh
# On a GPU machine with PyTorch, as root: cutcapture's gpu and nvtx layers (libcuthook preloaded
# into the command) against torch.profiler in the same run, the trace's links and bounds, NVTX
# and runtime against the profiler, then the launch-bound loop's cost per op under each capture
# mode (tests/bench/bench-preload.sh). Prints what BENCHMARKS.md reports; writes the traces to OUTDIR.
# usage: tests/gpu/capture-preload.sh BUILDDIR OUTDIR [python] [runs]
#   BUILDDIR holds bin/cutcapture-static, bin/cuthook, bin/cutmerge, bin/cutstat, lib/libcuthook.so
set -u
B=$(cd "$1" && pwd)
out=$2
py=${3:-python3}
runs=${4:-3}
top=$(cd "$(dirname "$0")/../.." && pwd)
cap=$B/bin/cutcapture-static
mkdir -p "$out"
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
export CUTHOOK_LIB=$B/lib/libcuthook.so
rt=$($py -c 'import glob, os, torch; print(glob.glob(os.path.join(os.path.dirname(torch.__file__), "..", "nvidia", "cu*", "lib", "libcudart.so.*"))[0])')
echo "== machine: $(nvidia-smi -L 2>/dev/null | head -1); driver $(cat /sys/module/nvidia/version); runtime $rt"

echo "== GPU work under cutcapture (default layers + runtime) with torch.profiler active"
$cap -q --libcudart "$rt" -o "$out/work.jsonl" -- $py "$top/tests/gpu/torch_gpu_work.py" "$out/prof.json" 20 ||
	echo "cutcapture: exit $?"
head -1 "$out/work.jsonl" | cut -c1-600
tail -1 "$out/work.jsonl"
$py "$top/tests/gpu/compare.py" "$out/work.jsonl" "$out/prof.json"
$py - "$out/work.jsonl" <<'PY'
import collections, json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
calls = {}
for e in ev:
    c = (e.get("args") or {}).get("corr")
    if e["layer"] == "api" and c is not None:
        calls[(e["pid"], c)] = e
gpu = [e for e in ev if e["layer"] == "gpu"]
linked = [calls.get((g["pid"], g["args"]["corr"])) for g in gpu]
early = [(g["name"], c["ts"] - g["ts"]) for g, c in zip(gpu, linked) if c and g["ts"] < c["ts"]]
ts = [e["ts"] for e in ev[1:-1]]
print(f"gpu events {len(gpu)}, linked to a call {sum(1 for c in linked if c)}, starting before their call {len(early)} {early[:5]}")
print("sorted:", all(a <= b for a, b in zip(ts, ts[1:])))
print("layers:", dict(collections.Counter(e["layer"] for e in ev)))
tids = {e["tid"] for e in ev if e["layer"] == "api"}
print("api threads:", len(tids), "ioctl threads outside them:", len({e["tid"] for e in ev if e["layer"] == "ioctl"} - tids))
PY
"$B/bin/cutstat" "$out/work.jsonl" | sed -n '1,12p'

echo "== NVTX (emit_nvtx) and the runtime under cutcapture"
$cap -q --libcudart "$rt" -o "$out/nvtx.jsonl" -- $py "$top/tests/gpu/torch_nvtx_runtime.py" "$out/nprof.json" 5 ||
	echo "cutcapture: exit $?"
tail -1 "$out/nvtx.jsonl" | cut -c1-400
"$B/bin/cutmerge" "$out/nvtx.jsonl" >"$w/m.jsonl"
$py "$top/tests/gpu/check_nvtx_runtime.py" "$w/m.jsonl" "$out/nprof.json" && echo "nvtx-runtime: OK" ||
	echo "nvtx-runtime: MISMATCH (above)"

echo "== launch-bound loop (tests/bench/bench-preload.sh)"
sh "$top/tests/bench/bench-preload.sh" "$B" "$runs" "$py"
