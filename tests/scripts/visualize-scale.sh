#!/bin/sh
# The viewers stay linear where a trace piles things up (issue 23, "quadratic paths"):
# cutperfetto looked for the call of each ioctl through every slice open on the thread, so
# 160,000 identical ioctls inside one call (they nest in each other) took minutes. Timed
# against a same-run baseline of as many ioctls one after the other, with a margin no load
# crosses (10 times the baseline and 5 s: the quadratic path took over 40 times it).
B=${CUT_BUILD:-build}
PATH=$B/bin:$PATH
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
command -v python3 >/dev/null || { echo "needs python3"; exit 77; }
python3 - "$tmp" <<'PY'
import json, sys
n = 160000
with open(sys.argv[1] + "/nested.jsonl", "w") as f:
    f.write(json.dumps({"ts": 1000, "dur": 10**9, "pid": 7, "tid": 7, "layer": "api", "name": "cuX"}) + "\n")
    for i in range(n):
        f.write(json.dumps({"ts": 1500, "dur": 1, "pid": 7, "tid": 7, "layer": "ioctl", "name": "io"}) + "\n")
with open(sys.argv[1] + "/flat.jsonl", "w") as f:
    f.write(json.dumps({"ts": 1000, "dur": 10**9, "pid": 7, "tid": 7, "layer": "api", "name": "cuX"}) + "\n")
    for i in range(n):
        f.write(json.dumps({"ts": 1500 + 2 * i, "dur": 1, "pid": 7, "tid": 7, "layer": "ioctl", "name": "io"}) + "\n")
PY
python3 - "$tmp" <<'PY'
import subprocess, sys, time
tmp = sys.argv[1]
fail = 0
for tool in ("cutperfetto", "cutchrome"):
    t = {}
    for shape in ("flat", "nested"):
        start = time.monotonic()
        p = subprocess.run([tool, "%s/%s.jsonl" % (tmp, shape)], stdout=subprocess.DEVNULL)
        t[shape] = time.monotonic() - start
        if p.returncode:
            print("FAIL %s %s: exit %d" % (tool, shape, p.returncode))
            fail = 1
    print("%s: %.2f s nested, %.2f s one after the other" % (tool, t["nested"], t["flat"]))
    if t["nested"] > 10 * t["flat"] + 5:
        print("FAIL %s: nested ioctls take %.1f times as long" % (tool, t["nested"] / t["flat"]))
        fail = 1
sys.exit(fail)
PY
