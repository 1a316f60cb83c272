#!/bin/sh
# cutchrome on input sorted backwards (issue 12): each slice lies wholly before the ones already
# on its track, so one track holds them all (a lane per slice made the work quadratic), every
# slice is written once and the JSON is valid.
B=${CUT_BUILD:-build}
PATH=$B/bin:$PATH
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
command -v python3 >/dev/null || { echo "needs python3"; exit 77; }
python3 -c '
import json
for i in range(2000, 0, -1):
    print(json.dumps({"ts": i * 1000, "dur": 500, "pid": 1, "tid": 1, "layer": "api", "name": "cuX", "ret": 0}))
' >"$tmp/t.jsonl"
cutchrome "$tmp/t.jsonl" >"$tmp/t.json" 2>"$tmp/err" || { echo "FAIL cutchrome: exit $?"; exit 1; }
python3 - "$tmp/t.json" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
x = [e for e in ev if e["ph"] == "X"]
tracks = {(e["pid"], e["tid"]) for e in x}
if len(x) != 2000 or len(tracks) != 1: sys.exit(f"FAIL {len(x)} slices on {len(tracks)} tracks, want 2000 on 1")
PY
