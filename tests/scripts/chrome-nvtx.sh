#!/bin/sh
# cutchrome and NVTX (issue 14): push/pop ranges are slices of their thread's track, nesting
# the calls made inside them; start/end ranges, which need not nest and may end on another
# thread, are async slices of their process ("b"/"e" pairs): as many as the trace has, each
# pair with its own id, from the range's start to its end. The viewer's rules hold.
. "$(dirname "$0")/lib/hook-setup.sh"
PATH=$B/bin:$PATH
command -v python3 >/dev/null || { echo "needs python3"; exit 77; }
[ -f "$fx/nvtxprog" ] || { echo "build $B/fixtures/nvtxprog first"; exit 1; }
cuthook -o "$tmp/t.jsonl" -- "$fx/nvtxprog" 3 >/dev/null 2>&1 || bad "cuthook nvtxprog: exit $?"
cutchrome "$tmp/t.jsonl" >"$tmp/t.json" || bad "cutchrome: exit $?"
python3 - "$tmp/t.jsonl" "$tmp/t.json" <<'PY' || fail=1
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
out = json.load(open(sys.argv[2]))
base = out["otherData"]["base_ns"]
te = out["traceEvents"]
se = sorted((e["ts"], e["ts"] + e["dur"], e["name"]) for e in ev if e["layer"] == "nvtx" and e.get("cat") == "startend" and "dur" in e)
pp = sum(1 for e in ev if e["layer"] == "nvtx" and e.get("cat") == "range" and "dur" in e)
b = {e["id"]: e for e in te if e["ph"] == "b"}
en = {e["id"]: e for e in te if e["ph"] == "e"}
if not se: sys.exit("FAIL the program made no start/end ranges: the test would prove nothing")
if set(b) != set(en) or len(b) != len(se): sys.exit(f"FAIL {len(b)} b, {len(en)} e for {len(se)} start/end ranges")
got = sorted((round(b[i]["ts"] * 1000) + base, round(en[i]["ts"] * 1000) + base, b[i]["name"]) for i in b)
if got != se: sys.exit(f"FAIL async slices {got[:3]} != ranges {se[:3]}")
x = sum(1 for e in te if e["ph"] == "X" and e.get("cat") == "range")
if x != pp: sys.exit(f"FAIL {x} push/pop slices for {pp} ranges")
PY
python3 tests/viewer-check/validate.py "$tmp/t.json" >"$tmp/v" 2>&1 || bad "validate.py: $(tail -3 "$tmp/v")"
exit $fail
