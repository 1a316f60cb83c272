#!/bin/sh
# cutplot's memory is bounded by rows (issue 12): with 600 threads, 512 get rows of their own
# and the other 88 share one row per layer, labelled with their count.
B=${CUT_BUILD:-build}
PATH=$B/bin:$PATH
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
command -v python3 >/dev/null || { echo "needs python3"; exit 77; }
python3 -c '
import json
for i in range(600):
    print(json.dumps({"ts": i * 1000, "dur": 500, "pid": 1, "tid": i + 2, "layer": "api", "name": "cuX", "ret": 0}))
' >"$tmp/t.jsonl"
cutplot -S -T dumb -s 200,1000 "$tmp/t.jsonl" >"$tmp/p.gp" || { echo "FAIL cutplot: exit $?"; exit 1; }
grep -q '"88 other threads api"' "$tmp/p.gp" || { echo "FAIL no row of the 88 other threads"; exit 1; }
[ "$(grep -o '"tid [0-9]* api"' "$tmp/p.gp" | sort -u | wc -l)" -eq 512 ] ||
	{ echo "FAIL $(grep -o '"tid [0-9]* api"' "$tmp/p.gp" | sort -u | wc -l) rows of their own, want 512"; exit 1; }
