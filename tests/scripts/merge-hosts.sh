#!/bin/sh
# cutmerge keeps hosts and ranks apart (issue 23): the DDP sample's rank 1 relabelled as
# another host whose trainer has rank 0's pid and tid (every container's does) loses no call
# as a duplicate and lends no call of one host to the other; two cuthook traces of one host
# hold no duplicates of each other; traces naming their host only in the header (schema 1)
# come out with it on every record, so the same pid on two hosts stays two processes.
B=${CUT_BUILD:-build}
PATH=$B/bin:$PATH
command -v python3 >/dev/null || { echo "needs python3"; exit 77; }
command -v zstd >/dev/null || { echo "needs zstd"; exit 77; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL $*"; fail=1; }

zstd -dc samples/ddp-2gpu-hook.jsonl.zst | python3 -c '
import json, sys
r0 = open(sys.argv[1], "w"); r1 = open(sys.argv[2], "w")
for l in sys.stdin:
    e = json.loads(l)
    if e["pid"] in (661, 701):
        r0.write(l)
    elif e["pid"] == 702:
        e["pid"] = 701
        e["tid"] = 701 if e["tid"] == 702 else e["tid"]
        if "host" in e: e["host"] = "vm2"
        if e["layer"] == "meta" and e["name"] == "header": e["args"]["host"] = "vm2"
        r1.write(json.dumps(e, separators=(",", ":")) + "\n")
' "$tmp/r0.jsonl" "$tmp/r1.jsonl"
cutmerge "$tmp/r0.jsonl" "$tmp/r1.jsonl" >"$tmp/m.jsonl" 2>"$tmp/m.err" || bad "cutmerge: exit $?"
grep -q "recorded in both" "$tmp/m.err" && bad "calls taken for duplicates: $(cat "$tmp/m.err")"
python3 - "$tmp/r0.jsonl" "$tmp/r1.jsonl" "$tmp/m.jsonl" <<'PY' || fail=1
import collections, json, sys
def load(p): return [json.loads(l) for l in open(p)]
ins = load(sys.argv[1]) + load(sys.argv[2])
out = load(sys.argv[3])
count = lambda evs: collections.Counter(e["layer"] for e in evs if e["layer"] != "meta")
if count(ins) != count(out):
    sys.exit(f"FAIL events in {dict(count(ins))}, out {dict(count(out))}")
byid = {e["id"]: e for e in out if "id" in e}
nohost = [e for e in out if e["pid"] and "host" not in e]
if nohost:
    sys.exit(f"FAIL {len(nohost)} records without their host, first {nohost[0]}")
wrong = [e for e in out if "parent" in e and byid[e["parent"]]["host"] != e["host"]]
if wrong:
    sys.exit(f"FAIL {len(wrong)} events with a parent on the other host, first {wrong[0]}")
# each rank's runtime calls still hold its driver calls, on its own host
held = collections.Counter(e["host"] for e in out if e["layer"] == "api" and "parent" in e
                           and byid[e["parent"]]["layer"] == "runtime")
if len(held) != 2 or min(held.values()) < 8000:
    sys.exit(f"FAIL driver calls inside runtime calls per host: {dict(held)}")
print("ddp relabelled:", dict(count(out)), "api in runtime per host:", dict(held))
PY

# Two cuthook traces of one host and pid (two containers, two runs): no duplicates.
for h in a b; do
	cat >"$tmp/$h.jsonl" <<J
{"ts":10,"pid":1,"tid":1,"layer":"meta","name":"header","args":{"schema":1,"tool":"cuthook","host":"vm","clock":{"monotonic_ns":10,"realtime_ns":1010}}}
{"ts":100,"dur":1000,"pid":1,"tid":1,"layer":"api","name":"cuMemAlloc_v2","ret":0}
J
done
cutmerge "$tmp/a.jsonl" "$tmp/b.jsonl" >"$tmp/ab.jsonl" 2>"$tmp/ab.err" || bad "same path: exit $?"
[ "$(grep -c '"cuMemAlloc_v2"' "$tmp/ab.jsonl")" = 2 ] || bad "same path: $(cat "$tmp/ab.err")"

# Schema 1, the host in the header only: pid 100 on two hosts.
for h in A B; do
	cat >"$tmp/$h.jsonl" <<J
{"ts":10,"pid":100,"tid":100,"layer":"meta","name":"header","args":{"schema":1,"tool":"cutcapture","host":"$h","clock":{"monotonic_ns":10,"realtime_ns":1010}}}
{"ts":100,"dur":1000,"pid":100,"tid":100,"layer":"api","name":"cuLaunchKernel","ret":0}
{"ts":200,"dur":10,"pid":100,"tid":100,"layer":"ioctl","name":"NV_ESC_RM_CONTROL","ret":0,"args":{"cmd":"0xc020462a"}}
J
done
cutmerge "$tmp/A.jsonl" "$tmp/B.jsonl" >"$tmp/AB.jsonl" || bad "schema 1: exit $?"
python3 - "$tmp/AB.jsonl" <<'PY' || fail=1
import json, sys
out = [json.loads(l) for l in open(sys.argv[1])]
recs = [e for e in out if e["pid"] == 100]
hosts = sorted(e.get("host", "-") for e in recs if e["layer"] == "api")
if hosts != ["A", "B"] or any("host" not in e for e in recs):
    sys.exit(f"FAIL hosts forgotten: {recs}")
byid = {e["id"]: e for e in out if "id" in e}
for e in recs:
    if e["layer"] == "ioctl" and byid[e["parent"]]["host"] != e["host"]:
        sys.exit(f"FAIL an ioctl of {e['host']} in a call of the other host")
    if e["layer"] == "api" and e["nioctl"] != 1:
        sys.exit(f"FAIL {e}")
PY
exit $fail
