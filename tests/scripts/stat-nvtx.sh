#!/bin/sh
# cutstat's NVTX and runtime tables against numbers computed here, by another route, from the
# same real trace (PyTorch emit_nvtx on an H200): per (domain, range) the count and total, and
# the runtime, driver API, ioctl and GPU time inside (an event of the range's thread starting
# in it, once per range name; GPU work by the args.corr of its submitting call); per runtime
# function calls, total, min and max; the same in -c; and the text names the sections. On the
# 2-rank DDP sample, the per-rank view: each rank's records, API and runtime calls and time
# (its 16,000 runtime and NVTX records without a rank counted under their process's), GPU busy
# (the union of its work), top kernel, and per NCCL kernel the rank with the largest total and
# the straggler, the smallest. The NVTX checks run twice: by default emit_nvtx's names are folded to their
# operator (", seq = N", ", op_id = N", ", sizes = [...]" dropped: one row per op, its count
# and total the sums of its ranges'), with --nvtx-full they stay whole.
top=${CUT_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
B=${CUT_BUILD:-$top/build}
PATH=$B/bin:$PATH
command -v python3 >/dev/null || { echo "needs python3"; exit 77; }
command -v zstd >/dev/null || { echo "needs zstd"; exit 77; }
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

in=$top/samples/hook-torch-nvtx-runtime.jsonl.zst
zstd -dc "$in" >"$tmp/t.jsonl" || bad "zstd: exit $?"
cutstat "$in" >"$tmp/s.txt" || bad "cutstat: exit $?"
for mode in fold full; do
opt=
[ $mode = full ] && opt=--nvtx-full
cutstat -j $opt "$in" >"$tmp/s.json" || bad "cutstat -j $opt: exit $?"
cutstat -c $opt "$in" >"$tmp/s.csv" || bad "cutstat -c $opt: exit $?"

python3 - "$tmp/t.jsonl" "$tmp/s.json" "$tmp/s.csv" $mode <<'PY' || fail=1
import json, sys, csv, bisect, collections, re
ev = [json.loads(l) for l in open(sys.argv[1])]
st = json.load(open(sys.argv[2]))
fold = sys.argv[4] == "fold"
n = 0
def bad(m):
    global n; n += 1; print("FAIL", sys.argv[4], m)
FIELDS = r"(?:, (?:seq|op_id) = -?[0-9]+|, (?:sizes|input_op_ids) = \[[^=]*\])+$"
def op(name):
    m = re.match("(.+?)" + FIELDS, name)
    return m.group(1) if fold and m else name
key = lambda e: (e.get("args", {}).get("domain", ""), op(e["name"]))
ranges = [e for e in ev if e["layer"] == "nvtx" and "dur" in e]
# Per thread, the timed runtime/api/ioctl events by start.
calls = collections.defaultdict(list)
for e in ev:
    if e["layer"] in ("runtime", "api", "ioctl") and "dur" in e and e.get("tid"):
        calls[(e["pid"], e["tid"])].append(e)
for v in calls.values():
    v.sort(key=lambda e: e["ts"])
starts = {k: [e["ts"] for e in v] for k, v in calls.items()}
# Which range names each event is in (a set: nested ranges of one name count it once).
inside = collections.defaultdict(set)
for r in ranges:
    th = (r["pid"], r["tid"])
    if th not in calls: continue
    lo = bisect.bisect_left(starts[th], r["ts"])
    hi = bisect.bisect_left(starts[th], r["ts"] + r["dur"])
    for e in calls[th][lo:hi]:
        inside[id(e)].add(key(r))
want = collections.defaultdict(lambda: collections.Counter())
for r in ranges:
    want[key(r)]["count"] += 1; want[key(r)]["total_ns"] += r["dur"]
bycorr = {}
for th, v in calls.items():
    for e in v:
        for k in inside.get(id(e), ()):
            want[k][e["layer"] + "_ns"] += e["dur"]
            want[k]["runtime_calls" if e["layer"] == "runtime" else "api_calls" if e["layer"] == "api" else "ioctls"] += 1
        c = e.get("args", {}).get("corr")
        if c is not None and e["layer"] in ("api", "runtime") and id(e) in inside:
            bycorr[(e["pid"], c)] = inside[id(e)]
for g in ev:
    if g["layer"] == "gpu" and "dur" in g:
        for k in bycorr.get((g["pid"], g.get("args", {}).get("corr")), ()):
            want[k]["gpu_ns"] += g["dur"]; want[k]["gpu_work"] += 1
got = {(x["domain"], x["name"]): x for x in st.get("nvtx", [])}
if not got or set(got) != set(want): bad(f"ranges: {len(got)} in cutstat, {len(want)} here")
fields = ["count", "total_ns", "runtime_ns", "runtime_calls", "api_ns", "api_calls",
          "ioctl_ns", "ioctls", "gpu_ns", "gpu_work"]
for k, w in want.items():
    for f in fields:
        if k in got and got[k][f] != w[f]: bad(f"{k} {f}: {got[k][f]} != {w[f]}")
tot = sorted(x["total_ns"] for x in st["nvtx"])[::-1]
if [x["total_ns"] for x in st["nvtx"]] != tot: bad("nvtx not by total")
if not any(w["gpu_ns"] for w in want.values()): bad("no GPU time inside any range")
# The runtime table.
rt = collections.defaultdict(list)
for e in ev:
    if e["layer"] == "runtime" and "dur" in e: rt[e["name"]].append(e["dur"])
gr = {x["name"]: x for x in st.get("runtime", [])}
if set(gr) != set(rt): bad(f"runtime names {sorted(set(gr) ^ set(rt))}")
for k, v in rt.items():
    x = gr.get(k)
    if x and (x["calls"], x["total_ns"], x["min_ns"], x["max_ns"]) != (len(v), sum(v), min(v), max(v)):
        bad(f"runtime {k}: {x}")
# -c: the runtime and nvtx tables after blank lines, with the same numbers.
rows = list(csv.reader(open(sys.argv[3])))
heads = {r[0]: i for i, r in enumerate(rows) if r and i and not rows[i - 1]}
if "runtime_name" not in heads or "nvtx_domain" not in heads: bad(f"csv tables: {list(heads)}")
else:
    i = heads["runtime_name"] + 1
    while i < len(rows) and rows[i]:
        r = rows[i]; i += 1
        if r[0] not in rt or int(r[2]) != len(rt[r[0]]) or int(r[3]) != sum(rt[r[0]]): bad(f"csv runtime {r}")
    i = heads["nvtx_domain"] + 1; seen = 0
    while i < len(rows) and rows[i]:
        r = rows[i]; i += 1; seen += 1
        w = want.get((r[0], r[1]))
        if w is None or [int(x) for x in r[2:12]] != [w[f] for f in fields]: bad(f"csv nvtx {r}")
    if seen != len(want): bad(f"csv nvtx rows {seen} != {len(want)}")
# Folded, no name is left with emit_nvtx's fields: the 450 ranges of ops are 43 rows.
named = [e["name"] for e in ranges if re.search(FIELDS, e["name"])]
if len(named) != 450: bad(f"{len(named)} ranges of ops in the sample")
left = [x["name"] for x in st["nvtx"] if re.search(FIELDS, x["name"])]
if fold and (left or len(st["nvtx"]) != 48): bad(f"{len(st['nvtx'])} rows, not folded: {left[:3]}")
if not fold and len(left) != 450: bad(f"{len(left)} rows with fields")
sys.exit(1 if n else 0)
PY
done
in=$top/samples/ddp-2gpu-hook.jsonl.zst
zstd -dc "$in" >"$tmp/d.jsonl" || bad "zstd ddp: exit $?"
# -M: kernel names as the trace has them, as the events here have them
cutstat -j -M "$in" >"$tmp/d.json" || bad "cutstat -j ddp: exit $?"
cutstat -c -M "$in" >"$tmp/d.csv" || bad "cutstat -c ddp: exit $?"
python3 - "$tmp/d.jsonl" "$tmp/d.json" "$tmp/d.csv" <<'PY' || fail=1
import json, sys, csv, collections
ev = [json.loads(l) for l in open(sys.argv[1])]
st = json.load(open(sys.argv[2]))
n = 0
def bad(m):
    global n; n += 1; print("FAIL", m)
# A record without a rank has its process's (cut-events(5), Labels): the sample is of one host,
# so a process is a pid; its rank is the first a record of it carries, else its process
# record's args.rank.
if {e["host"] for e in ev if "host" in e} - {"vm"}: bad("the sample is not of one host")
prank = {}
for e in ev:
    if "rank" in e: prank.setdefault(e["pid"], e["rank"])
for e in ev:
    if e["layer"] == "meta" and e["name"] == "process" and "rank" in e.get("args", {}):
        prank.setdefault(e["pid"], e["args"]["rank"])
for e in ev:
    if "rank" not in e and e["pid"] in prank: e["rank"] = prank[e["pid"]]
ranked = [e for e in ev if e["layer"] != "meta" and "rank" in e]
ranks = sorted({e["rank"] for e in ranked})
want = {}
kern = collections.defaultdict(collections.Counter)
for r in ranks:
    mine = [e for e in ranked if e["rank"] == r]
    api = [e["dur"] for e in mine if e["layer"] == "api" and "dur" in e]
    rt = [e["dur"] for e in mine if e["layer"] == "runtime" and "dur" in e]
    work = sorted((e["ts"], e["ts"] + e["dur"]) for e in mine if e["layer"] == "gpu" and "dur" in e)
    busy, end = 0, None
    for a, b in work:
        if end is None or a >= end: busy += b - a; end = b
        elif b > end: busy += b - end; end = b
    for e in mine:
        if e["layer"] == "gpu" and e.get("cat") == "kernel": kern[r][e["name"]] += e["dur"]
    top = min(kern[r].items(), key=lambda kv: (-kv[1], kv[0]))
    want[r] = {"rank": r, "events": len(mine), "api_calls": len(api), "api_ns": sum(api),
               "runtime_calls": len(rt), "runtime_ns": sum(rt), "gpu_work": len(work),
               "gpu_busy_ns": busy, "top_kernel": top[0], "top_kernel_ns": top[1]}
# The fallback matters here: the runtime and NVTX records carry no rank of their own.
if sum(1 for e in ranked if e["layer"] in ("runtime", "nvtx")) < 16000: bad("no records took their process's rank")
rk = st.get("ranks", {})
if len(ranks) < 2 or [x["rank"] for x in rk.get("rows", [])] != ranks: bad(f"ranks {ranks}: {rk.get('rows')}")
for x in rk.get("rows", []):
    if x != want.get(x["rank"]): bad(f"rank {x['rank']}: {x} != {want.get(x['rank'])}")
if rk.get("unranked") != sum(1 for e in ev if e["layer"] != "meta" and "rank" not in e): bad(f"unranked {rk.get('unranked')}")
nccl = {k for r in ranks for k in kern[r] if "nccl" in k.lower()}
got = {x["kernel"]: x for x in rk.get("nccl_waits", [])}
if not nccl or set(got) != nccl: bad(f"nccl kernels {sorted(nccl)} != {sorted(got)}")
for k in nccl:
    per = {r: kern[r][k] for r in ranks if k in kern[r]}
    slow = min(per, key=lambda r: (-per[r], r))
    least = min(per, key=lambda r: (per[r], r))
    w = {"kernel": k, "ranks": len(per), "rank": slow, "max_ns": per[slow], "min_ns": per[least], "straggler": least}
    if got.get(k) != w: bad(f"straggler {k}: {got.get(k)} != {w}")
rows = list(csv.reader(open(sys.argv[3])))
heads = {r[0]: i for i, r in enumerate(rows) if r and i and not rows[i - 1]}
if "rank" not in heads or "nccl_waited_most_rank" not in heads: bad(f"csv tables: {list(heads)}")
else:
    for r in rows[heads["rank"] + 1:heads["rank"] + 1 + len(ranks)]:
        w = want[int(r[0])]
        f = ("events", "api_calls", "api_ns", "runtime_calls", "runtime_ns", "gpu_work", "gpu_busy_ns", "top_kernel_ns")
        if [int(x) for x in r[1:9]] != [w[k] for k in f] or r[9] != w["top_kernel"]: bad(f"csv rank {r}")
sys.exit(1 if n else 0)
PY
cutstat "$in" | grep -q '^NCCL waits' || bad "no NCCL waits in the text"

grep -q '^NVTX ranges' "$tmp/s.txt" || bad "no NVTX section in the text"
grep -q '^Runtime API functions' "$tmp/s.txt" || bad "no runtime section in the text"
exit $fail
