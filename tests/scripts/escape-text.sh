#!/bin/sh
# Trace strings are input from the traced program: a function or kernel name with a terminal
# escape sequence, a newline, commas, quotes or a leading '=' must reach neither the terminal
# raw nor forge a report line nor break a CSV row (issue 12): cutstat, cutgaps and cutstat -c
# on such a trace.
B=${CUT_BUILD:-build}
PATH=$B/bin:$PATH
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL $*"; fail=1; }
command -v python3 >/dev/null || { echo "needs python3"; exit 77; }
python3 - "$tmp/t.jsonl" <<'PY'
import json, sys
names = ["cuEvil\x1b[31mRED\x1b[0m", "cuTwo\nVerdict: forged", 'cuComma,"quoted"', "=HYPERLINK(1)"]
with open(sys.argv[1], "w") as f:
    ts = 1000
    for rep in range(3):
        for n in names:
            f.write(json.dumps({"ts": ts, "dur": 500, "pid": 7, "tid": 7, "layer": "api", "name": n, "cat": "launch", "ret": 0}) + "\n")
            ts += 2000
    f.write(json.dumps({"ts": ts, "dur": 900, "pid": 7, "tid": 7, "layer": "gpu", "name": names[0], "cat": "kernel", "args": {"corr": 1, "stream": "0x0", "device": 0, "submit": ts - 10}}) + "\n")
PY
cutstat "$tmp/t.jsonl" >"$tmp/s.txt" || bad "cutstat: exit $?"
cutgaps -t 0 "$tmp/t.jsonl" >"$tmp/g.txt" || bad "cutgaps: exit $?"
cutstat -c "$tmp/t.jsonl" >"$tmp/s.csv" || bad "cutstat -c: exit $?"
for f in s.txt g.txt s.csv; do
	! grep -q "$(printf '\033')" "$tmp/$f" || bad "$f: a raw escape character"
done
[ "$(grep -c '^Verdict' "$tmp/s.txt")" -eq 1 ] || bad "cutstat: a forged report line"
grep -q 'cuTwo\\nVerdict: forged' "$tmp/s.txt" || bad "cutstat: the newline not shown escaped"
python3 - "$tmp/s.csv" <<'PY' || fail=1
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
api = rows[1:rows.index([])] if [] in rows else rows[1:]
names = sorted(r[0] for r in api)
want = sorted(['cuComma,"quoted"', r"cuEvil\x1b[31mRED\x1b[0m", r"cuTwo\nVerdict: forged", "'=HYPERLINK(1)"])
if names != want:
    print("FAIL csv names", names, "want", want); sys.exit(1)
PY
exit $fail
