#!/bin/sh
# cutstat's GPU section against numbers computed here from the same trace (a capture of the
# stand-in device, with two processes' work put on one GPU): per name the instances, total,
# min, max, median and bytes; how busy each device, stream and process kept the GPU (the
# union of intervals, the shared GPU once) and how long processes' work overlapped on it (with
# a note, for two at once); the launch latency; the same table in -c; the
# verdict from the GPU's timeline; the pieces whose start or end is only a bound, counted (the
# data-driven case cutstat/gpu-bounds holds its note); and a trace without the layer says so.
. "$(dirname "$0")/lib/hook-setup.sh"
PATH=$B/bin:$PATH
command -v python3 >/dev/null || { echo "needs python3"; exit 77; }

cuthook -o "$tmp/a.jsonl" -- "$fx/gpuprog" 10 >/dev/null || bad "gpuprog a: exit $?"
cuthook -o "$tmp/b.jsonl" -- "$fx/gpuprog" 5 >/dev/null || bad "gpuprog b: exit $?"
cutmerge "$tmp/a.jsonl" "$tmp/b.jsonl" >"$tmp/t.jsonl" || bad "cutmerge: exit $?"
cutstat -j "$tmp/t.jsonl" >"$tmp/s.json" || bad "cutstat -j: exit $?"
cutstat -c "$tmp/t.jsonl" >"$tmp/s.csv" || bad "cutstat -c: exit $?"
cutstat "$tmp/t.jsonl" >"$tmp/s.txt" || bad "cutstat: exit $?"

# Two processes at once on the stand-in's GPU, which runs both at once where a real one takes
# turns: their overlap, as computed here, in -j as recorded and none once told apart (the
# pieces that lost time counted), and a note in the text that says so; with -O (MPS) as
# recorded.
# They start their rounds together (GPUPROG_TOGETHER), each queueing about 100 ms of work
# (kernels of 0.16-1.3 ms), so that their work overlaps however loaded the machine is (two
# processes merely started together may run one after the other).
GPUPROG_TOGETHER=$tmp/together:2 FAKEGPU_NS_PER_BLOCK=20000 cuthook -o "$tmp/two.jsonl" -- \
	sh -c "'$fx/gpuprog' 40 & '$fx/gpuprog' 40 & wait" >/dev/null ||
	bad "two at once: exit $?"
cutstat -j "$tmp/two.jsonl" >"$tmp/two.json" || bad "cutstat -j (two at once): exit $?"
cutstat -j -O "$tmp/two.jsonl" >"$tmp/twoO.json" || bad "cutstat -j -O (two at once): exit $?"

python3 - "$tmp/t.jsonl" "$tmp/s.json" "$tmp/s.csv" "$tmp/two.jsonl" "$tmp/two.json" "$tmp/twoO.json" <<'PY' || fail=1
import json, sys, statistics, csv
ev = [json.loads(l) for l in open(sys.argv[1])]
st = json.load(open(sys.argv[2]))
n = 0
def bad(m):
    global n; n += 1; print("FAIL", m)
gpu = [e for e in ev if e["layer"] == "gpu"]
names = {}
for e in gpu:
    names.setdefault(e["name"], []).append(e)
got = {x["name"]: x for x in st["gpu"]["names"]}
if set(got) != set(names): bad(f"names {sorted(got)} != {sorted(names)}")
for k, v in names.items():
    d = [e["dur"] for e in v]; g = got.get(k, {})
    want = {"instances": len(d), "total_ns": sum(d), "min_ns": min(d), "max_ns": max(d), "med_ns": statistics.median(d)}
    b = sum(e["args"].get("bytes", 0) for e in v)
    if b: want["bytes"] = b
    for kk, vv in want.items():
        if g.get(kk) != vv: bad(f"{k}: {kk} {g.get(kk)}, want {vv}")
if st["gpu"]["work"] != len(gpu): bad("work count")
# Pieces whose start or end is only a bound, and their time: the busy times count their spans.
bd = [e["dur"] for e in gpu if "bound" in (e["args"].get("start"), e["args"].get("end"))]
if (st["gpu"]["bounded"], st["gpu"]["bounded_ns"]) != (len(bd), sum(bd)):
    bad(f"bounded {st['gpu']['bounded']} ({st['gpu']['bounded_ns']} ns), want {len(bd)} ({sum(bd)})")
def union(iv):
    iv = sorted(iv); t = 0; cs = ce = None
    for s, e in iv:
        if cs is None or s > ce:
            if cs is not None: t += ce - cs
            cs, ce = s, e
        else: ce = max(ce, e)
    return t + (ce - cs if cs is not None else 0)
iv = [(e["ts"], e["ts"] + e["dur"]) for e in gpu]
dev = st["gpu"]["devices"]
# Both processes ran on the stand-in's one GPU (one uuid): one device, their union.
if len(dev) != 1 or dev[0]["busy_ns"] != union(iv) or dev[0]["work"] != len(gpu): bad(f"devices {dev}")
# Their work overlapped by what each process's busy, summed, passes the device's: none here,
# one process after the other; some where two ran at once.
def overlap(gpu):
    each = sum(union([(e["ts"], e["ts"] + e["dur"]) for e in gpu if e["pid"] == p]) for p in {e["pid"] for e in gpu})
    return each - union([(e["ts"], e["ts"] + e["dur"]) for e in gpu])
if dev and (dev[0].get("processes") != 2 or dev[0].get("overlap_ns") != overlap(gpu) or overlap(gpu)): bad(f"overlap: {dev}")
two = [e for e in map(json.loads, open(sys.argv[4])) if e["layer"] == "gpu"]
dev2 = json.load(open(sys.argv[5]))["gpu"]["devices"]
if len({e["pid"] for e in two}) != 2 or overlap(two) <= 0 or len(dev2) != 1 or \
        dev2[0].get("overlap_recorded_ns") != overlap(two) or dev2[0].get("overlap_ns") != 0 or \
        dev2[0].get("resolved", 0) <= 0 or dev2[0]["busy_ns"] > union([(e["ts"], e["ts"] + e["dur"]) for e in two]):
    bad(f"two at once: overlap {dev2}, want {overlap(two)} as recorded, none told apart")
dev2 = json.load(open(sys.argv[6]))["gpu"]["devices"]
if len(dev2) != 1 or dev2[0].get("overlap_ns") != overlap(two) or "resolved" in json.load(open(sys.argv[6]))["gpu"]:
    bad(f"two at once, -O: overlap {dev2}, want {overlap(two)}")
for p in {e["pid"] for e in gpu}:
    mine = [(e["ts"], e["ts"] + e["dur"]) for e in gpu if e["pid"] == p]
    row = [x for x in st["gpu"]["processes"] if x["key"] == f"pid {p}"]
    if not row or row[0]["busy_ns"] != union(mine): bad(f"process {p}: {row}")
streams = {}
for e in gpu:
    streams.setdefault((e["pid"], e["args"]["stream"]), []).append((e["ts"], e["ts"] + e["dur"]))
if len(st["gpu"]["streams"]) != len(streams): bad("stream count")
for (p, s), v in streams.items():
    row = [x for x in st["gpu"]["streams"] if x["key"] == f"pid {p} device 0 stream {s}"]
    if not row or row[0]["busy_ns"] != union(v): bad(f"stream {p} {s}: {row}")
lat = sorted(e["ts"] - e["args"]["submit"] for e in gpu)
L = st["gpu"]["launch_latency"]
if L["count"] != len(lat) or L["min_ns"] != lat[0] or L["max_ns"] != lat[-1]: bad(f"latency {L}")
if not st["verdict"].startswith(("sync-bound", "launch-bound", "idle", "GPU-bound")): bad(st["verdict"])
rows = list(csv.reader(open(sys.argv[3])))
i = [j for j, r in enumerate(rows) if r and r[0] == "gpu_name"]
if not i: bad("no gpu table in -c")
else:
    t = {r[0]: r for r in rows[i[0] + 1:] if r}
    for k, v in names.items():
        if k not in t or int(t[k][2]) != len(v) or int(t[k][3]) != sum(e["dur"] for e in v): bad(f"csv {k}: {t.get(k)}")
sys.exit(1 if n else 0)
PY
grep -q '^GPU work (timed on the device' "$tmp/s.txt" || bad "no GPU section in the text"
cutstat -w "$tmp/two.jsonl" | grep -q '^note: on GPU-.* the work of 2 processes overlapped .* as recorded: .* pieces lost' ||
	bad "two at once: no note of the overlap"
cutstat -w -O "$tmp/two.jsonl" | grep -q '^note: on GPU-.* the work of 2 processes overlapped .*, taken as recorded (-O' ||
	bad "two at once, -O: no note of the overlap"
# (Other notes may be there: under load a copy's end can be a bound, which the GB/s note says.)
grep -q '^note: on ' "$tmp/s.txt" && bad "a note of overlap where the processes ran one after the other"
# Without the layer: said in one line, the verdict from the driver API.
cuthook -l api -o "$tmp/n.jsonl" -- "$fx/gpuprog" 3 >/dev/null || bad "-l api: exit $?"
cutstat "$tmp/n.jsonl" >"$tmp/n.txt" || bad "cutstat (no gpu): exit $?"
grep -q '^GPU work: none in the trace' "$tmp/n.txt" || bad "no-gpu line missing"
cutstat -j "$tmp/n.jsonl" | python3 -c 'import json,sys; sys.exit("gpu" in json.load(sys.stdin))' ||
	bad "cutstat -j: a gpu member without the layer"
exit $fail
