#!/bin/sh
# On a GPU machine with PyTorch: the nvtx and runtime layers of cuthook against torch.profiler
# in the same run (tests/gpu/torch_nvtx_runtime.py, check_nvtx_runtime.py), then cutstat's
# breakdown by phase. usage: tests/gpu/nvtx-runtime.sh [python] [steps]
set -eu
py=${1:-/opt/torch/.venv/bin/python}
steps=${2:-5}
B=${CUT_BUILD:-build}
d=$(mktemp -d)
"$B/bin/cuthook" -o "$d/t.jsonl" -- "$py" tests/gpu/torch_nvtx_runtime.py "$d/prof.json" "$steps"
tail -1 "$d/t.jsonl" | cut -c1-300
"$B/bin/cutmerge" "$d/t.jsonl" >"$d/m.jsonl"
"$py" tests/gpu/check_nvtx_runtime.py "$d/m.jsonl" "$d/prof.json" && echo "nvtx-runtime: OK" ||
	echo "nvtx-runtime: MISMATCH (above)"
"$B/bin/cutstat" "$d/m.jsonl" | head -60
echo "trace: $d/t.jsonl"
