#!/bin/sh
# The viewers stay linear where a trace piles things up (issue 23, "quadratic paths"):
# cutperfetto looked for the call of each ioctl through every slice open on the thread, so
# 160,000 identical ioctls inside one call (they nest in each other) took minutes. Timed
# against a same-run baseline of as many ioctls one after the other, with a margin no load
# crosses (10 times the baseline and 5 s: the quadratic path took over 40 times it). And its
# memory for a merge of many hosts: each machine kept a byte per name of the whole trace, so
# 1,000 hosts that each used one of 200,000 names took 200 MB more than one host does
# (measured: peak resident memory against the one-host trace, margin 3 times and 60 MB).
B=${CUT_BUILD:-build}
PATH=$B/bin:$PATH
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
command -v python3 >/dev/null || { echo "needs python3"; exit 77; }
fail=0
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
python3 - "$tmp" <<'PY' || fail=1
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
python3 - "$tmp" <<'PY' || fail=1
import json, os, subprocess, sys
tmp = sys.argv[1]
names = 200000
for shape, hosts in (("onehost", 1), ("hosts", 1000)):
    with open("%s/%s.jsonl" % (tmp, shape), "w") as f:
        for i in range(names):
            f.write('{"ts":%d,"dur":1,"pid":7,"tid":7,"layer":"api","name":"n%d"}\n' % (1000 + i, i))
        for h in range(hosts):
            f.write('{"ts":%d,"dur":1,"host":"h%d","pid":7,"tid":7,"layer":"api","name":"n%d"}\n'
                    % (names + 2000 + h, h, names - 1))
rss = {}
for shape in ("onehost", "hosts"):
    p = subprocess.Popen(["cutperfetto", "%s/%s.jsonl" % (tmp, shape)], stdout=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = status
    rss[shape] = ru.ru_maxrss / 1024  # MB
    if status:
        sys.exit("FAIL cutperfetto %s: status %d" % (shape, status))
print("cutperfetto: %.0f MB for 1,000 hosts, %.0f MB for one" % (rss["hosts"], rss["onehost"]))
if rss["hosts"] > 3 * rss["onehost"] + 60:
    sys.exit("FAIL cutperfetto: 1,000 hosts take %.0f MB, one %.0f MB" % (rss["hosts"], rss["onehost"]))
PY
exit $fail
