#!/bin/sh
# The viewers on ids of any size and number (issue 23): cutchrome draws 300 GPUs, each on a
# process of its own (it had room for 256, the rest drawn on the first GPU's track); pids and
# tids of 64 bits, 0, or shared by two hosts stay apart and are named as they are; an input
# named twice (stdin, or one file under two names) is refused as cutmerge refuses it.
B=${CUT_BUILD:-build}
PATH=$B/bin:$PATH
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
command -v python3 >/dev/null || { echo "needs python3"; exit 77; }
fail=0
bad() { echo "FAIL $*"; fail=1; }

# 300 GPUs of one process (by ordinal) and 300 of another (by uuid), a piece of work each.
python3 - >"$tmp/gpus.jsonl" <<'PY'
import json
print(json.dumps({"ts": 1, "pid": 8, "tid": 8, "layer": "meta", "name": "header", "args": {"schema": 2, "tool": "hand", "host": "h"}}))
for d in range(300):
    print(json.dumps({"ts": 1, "pid": 9, "tid": 9, "layer": "meta", "name": "device", "args": {"device": d, "uuid": "GPU-%d" % d}}))
for d in range(300):
    for pid in (7, 9):
        print(json.dumps({"ts": 1000 + d, "dur": 10, "pid": pid, "tid": pid, "layer": "gpu", "name": "k%d" % d, "args": {"device": d, "stream": "0x1"}}))
PY
cutchrome "$tmp/gpus.jsonl" >"$tmp/gpus.json" || bad "300 GPUs: exit $?"
python3 - "$tmp/gpus.json" <<'PY' || fail=1
import json, sys
te = json.load(open(sys.argv[1]))["traceEvents"]
names = {e["pid"]: e["args"]["name"] for e in te if e["ph"] == "M" and e["name"] == "process_name"}
bad = 0
seen = {}
for e in te:
    if e["ph"] == "X":
        seen.setdefault(int(e["name"][1:]), set()).add(names.get(e["pid"]))
for d in range(300):
    want = {"GPU pid 7 device %d" % d, "GPU GPU-%d" % d}
    if seen.get(d) != want:
        bad += 1
        if bad < 5:
            print("FAIL work on device %d drawn on %s, want %s" % (d, seen.get(d), want))
gpus = [n for n in names.values() if n.startswith("GPU ")]
if len(gpus) != 600 or len(set(gpus)) != 600:
    print("FAIL %d GPU processes (%d names), want 600" % (len(gpus), len(set(gpus))))
    bad += 1
sys.exit(1 if bad else 0)
PY

# An input named twice: refused with exit 2 and cutmerge's words, nothing written.
printf '{"ts":1,"dur":1,"pid":1,"tid":1,"layer":"api","name":"cuInit"}\n' >"$tmp/one.jsonl"
for args in "- -" "/dev/stdin -" "$tmp/one.jsonl $tmp/../$(basename "$tmp")/one.jsonl"; do
	# shellcheck disable=SC2086
	cutchrome $args <"$tmp/one.jsonl" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ $rc -eq 2 ] || bad "cutchrome $args: exit $rc, want 2"
	grep -q 'are the same input: name each once' "$tmp/err" || bad "cutchrome $args: $(cat "$tmp/err")"
	[ -s "$tmp/out" ] && bad "cutchrome $args: wrote output"
done
exit $fail
