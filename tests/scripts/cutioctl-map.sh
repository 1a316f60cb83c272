#!/bin/sh
# cutioctl -m, the API -> ioctl map, against an oracle that knows nothing of parent chains:
# generated threads of runtime calls holding driver calls (some nested) holding ioctls drawn
# from a real capture, with ioctls and driver calls outside any call. Each call's sequence is
# found by time (the ioctls of its thread that start inside it), its names from cutioctl's
# annotate mode; the map must equal the oracle's exactly, on the trace as generated (by time)
# and after cutmerge (by parent), in JSON, and its text must say the same counts.
top=${CUT_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
B=${CUT_BUILD:-$top/build}
PATH=$B/bin:$PATH
command -v python3 >/dev/null || { echo "needs python3"; exit 77; }
t=$(mktemp -d) || exit 2
trap 'rm -rf "$t"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# the pool: one ioctl of each distinct request of a real capture, named by cutioctl
grep '"layer":"ioctl"' "$top/samples/capture-driverapi.jsonl" | python3 -c '
import json, sys
seen = set()
for l in sys.stdin:
    e = json.loads(l); a = e.get("args", {})
    k = (e["name"], a.get("ctrl"), a.get("class"), a.get("xfer"))
    if k not in seen:
        seen.add(k); print(l, end="")' >"$t/pool.jsonl"
cutioctl "$t/pool.jsonl" >"$t/named.jsonl" || bad "cutioctl annotate of the pool"

cat >"$t/gen.py" <<'EOF'
import json, random, sys
pool = [json.loads(l) for l in open(sys.argv[1])]
named = [json.loads(l) for l in open(sys.argv[2])]
labels = []
for e in named:
    a = e.get("args", {})
    labels.append(" ".join([e["name"]] + [a[k] for k in ("xfer_name", "ctrl_name", "class_name") if k in a]))
rnd = random.Random(int(sys.argv[3]))
events, calls = [], []
fns = ["cuMemAlloc_v2", "cuMemFree_v2", "cuLaunchKernel", "cuStreamSynchronize", "cuCtxSynchronize"]
rts = ["cudaMalloc", "cudaFree", "cudaLaunchKernel", "cudaDeviceSynchronize"]
# a few request kinds per function, so that sequences repeat
kinds = {f: [[rnd.randrange(len(pool)) for _ in range(rnd.randrange(0, 5))] for _ in range(3)] for f in fns}
def ioctls(tid, pid, t, idxs):
    for i in idxs:
        d = rnd.randrange(1, 50)
        e = dict(ts=t, dur=d, pid=pid, tid=tid, layer="ioctl", name=pool[i]["name"], ret=0, args=pool[i]["args"])
        events.append((e, labels[i]))
        t += d + rnd.randrange(1, 5)
    return t
def api(tid, pid, t, depth=0):
    f = rnd.choice(fns)
    e = dict(ts=t, pid=pid, tid=tid, layer="api", name=f, ret=0)
    events.append((e, None))
    t += 1
    t = ioctls(tid, pid, t, rnd.choice(kinds[f]))
    if depth == 0 and rnd.random() < 0.2:  # a driver call inside a driver call
        t = api(tid, pid, t, 1) + 1
    t += rnd.randrange(1, 20)
    e["dur"] = t - e["ts"]
    return t + 1
for th in range(4):
    pid, tid = 100 + th % 2, 1000 + th
    t = 10 * th
    for _ in range(int(sys.argv[4])):
        r = rnd.random()
        if r < 0.5:
            e = dict(ts=t, pid=pid, tid=tid, layer="runtime", name=rnd.choice(rts), ret=0)
            events.append((e, None))
            t += 1
            for _ in range(rnd.randrange(0, 3)):
                t = api(tid, pid, t)
            if rnd.random() < 0.3:  # an ioctl of the runtime call itself
                t = ioctls(tid, pid, t, [rnd.randrange(len(pool))])
            t += 2
            e["dur"] = t - e["ts"]
            t += 3
        elif r < 0.9:
            t = api(tid, pid, t)
        else:  # an ioctl outside any call
            t = ioctls(tid, pid, t, [rnd.randrange(len(pool))]) + 1
events.sort(key=lambda x: x[0]["ts"])
with open(sys.argv[5], "w") as out:
    for e, _ in events:
        out.write(json.dumps(e, separators=(",", ":")) + "\n")
# the oracle: by time, on each thread
rows = {}
spans = [(e, l) for e, l in events]
for c, _ in spans:
    if c["layer"] not in ("api", "runtime"):
        continue
    seq = [(e["ts"], l, e["dur"]) for e, l in spans
           if e["layer"] == "ioctl" and e["tid"] == c["tid"] and c["ts"] <= e["ts"] < c["ts"] + c["dur"]]
    seq.sort()
    k = (c["layer"], c["name"], tuple(s[1] for s in seq))
    r = rows.setdefault(k, [0, 0, 0])
    r[0] += 1; r[1] += c["dur"]; r[2] += sum(s[2] for s in seq)
json.dump(sorted([list(k[:2]) + [list(k[2])] + v for k, v in rows.items()]), open(sys.argv[6], "w"))
EOF
python3 "$t/gen.py" "$t/pool.jsonl" "$t/named.jsonl" 7 300 "$t/trace.jsonl" "$t/oracle.json" ||
	bad "generator"

# the map's JSON as the oracle's rows
cat >"$t/rows.py" <<'EOF'
import json, sys
d = json.load(sys.stdin)
rows = []
for f in d["functions"]:
    n = t = 0
    for s in f["sequences"]:
        rows.append([f["layer"], f["name"], s["ioctls"], s["calls"], s["total_ns"], s["ioctl_ns"]])
        n += s["calls"]; t += s["total_ns"]
    assert n == f["calls"] and t == f["total_ns"], f["name"]
json.dump(sorted(rows), sys.stdout)
EOF
cutioctl -m -j "$t/trace.jsonl" >"$t/map.json"
echo $? >"$t/rc"
[ "$(cat "$t/rc")" = 0 ] || bad "cutioctl -m -j exit $(cat "$t/rc")"
python3 "$t/rows.py" <"$t/map.json" >"$t/rows.json" || bad "map JSON unreadable"
cmp -s "$t/rows.json" "$t/oracle.json" || bad "map by time differs from the oracle"
n=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$t/oracle.json")
[ "$n" -gt 20 ] || bad "only $n distinct sequences generated"

# after cutmerge: the parent chains give the same map
cutmerge "$t/trace.jsonl" >"$t/merged.jsonl" || bad "cutmerge"
grep -q '"parent"' "$t/merged.jsonl" || bad "cutmerge wrote no parent"
cutioctl -m -j "$t/merged.jsonl" | python3 "$t/rows.py" >"$t/rows2.json" || bad "merged map"
cmp -s "$t/rows2.json" "$t/oracle.json" || bad "map by parent differs from the oracle"

# text: each sequence line's calls, and each function's, sum to the same as the JSON's
cutioctl -m "$t/merged.jsonl" >"$t/map.txt" || bad "cutioctl -m exit"
python3 - "$t/map.txt" "$t/map.json" <<'EOF' || bad "text map disagrees with JSON"
import json, re, sys
d = json.load(open(sys.argv[2]))
fns = {}
cur = None
for l in open(sys.argv[1]):
    m = re.match(r"^(\S+) \((driver API|runtime)\): (\d+) calls?, ([0-9.]+) s, (\d+) sequences?$", l)
    if m:
        cur = m.group(1); fns[cur] = [int(m.group(3)), int(m.group(5)), 0]
        continue
    m = re.match(r"^ +(\d+) +[0-9.]+ +[0-9.]+ ", l)
    if m and cur:
        fns[cur][2] += int(m.group(1))
want = {f["name"]: [f["calls"], len(f["sequences"]), f["calls"]] for f in d["functions"]}
assert fns == want, (fns, want)
EOF

# repeats are counted in the text, written out in the JSON
printf '%s\n' \
	'{"ts":1,"dur":100,"pid":1,"tid":1,"layer":"api","name":"cuX"}' \
	'{"ts":2,"dur":1,"pid":1,"tid":1,"layer":"ioctl","name":"close","args":{"fd":3}}' \
	'{"ts":4,"dur":1,"pid":1,"tid":1,"layer":"ioctl","name":"close","args":{"fd":3}}' \
	'{"ts":6,"dur":1,"pid":1,"tid":1,"layer":"ioctl","name":"close","args":{"fd":3}}' \
	'{"ts":8,"dur":1,"pid":1,"tid":1,"layer":"ioctl","name":"mmap","args":{"fd":3}}' >"$t/rep.jsonl"
cutioctl -m "$t/rep.jsonl" | grep -q ' close x3, mmap$' || bad "repeats not counted in text"
cutioctl -m -j "$t/rep.jsonl" | grep -q '"ioctls":\["close","close","close","mmap"\]' ||
	bad "repeats not written out in JSON"
cutioctl -m -c "$t/rep.jsonl" >/dev/null 2>&1
[ $? = 2 ] || bad "-m with -c not refused"
exit $fail
