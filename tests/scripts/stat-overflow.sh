#!/bin/sh
# cutstat's sums saturate instead of wrapping (issue 12): four calls of 2^62 ns total
# INT64_MAX, not 0, and the verdict still names them; the GPU section's sums too.
B=${CUT_BUILD:-build}
PATH=$B/bin:$PATH
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
command -v python3 >/dev/null || { echo "needs python3"; exit 77; }
python3 -c '
import json
for i in range(4):
    print(json.dumps({"ts": 1000 + i, "dur": 2**62, "pid": 1, "tid": 1, "layer": "api", "name": "cuLaunchKernel", "ret": 0}))
    print(json.dumps({"ts": 1000 + i, "dur": 2**62, "pid": 1, "tid": 1, "layer": "gpu", "name": "k", "cat": "kernel", "args": {"stream": "0x0", "device": 0}}))
' >"$tmp/t.jsonl"
cutstat -j "$tmp/t.jsonl" >"$tmp/s.json" || { echo "FAIL cutstat: exit $?"; exit 1; }
python3 - "$tmp/s.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
M = 2**63 - 1
ok = s["api_ns"] == M and s["functions"][0]["total_ns"] == M and s["gpu"]["total_ns"] == M \
    and s["gpu"]["names"][0]["total_ns"] == M
if not ok: sys.exit(f"FAIL sums: api {s['api_ns']}, function {s['functions'][0]['total_ns']}, gpu {s['gpu']['total_ns']}")
PY
