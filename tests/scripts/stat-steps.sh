#!/bin/sh
# cutstat -s: per instance of an NVTX range (a training step), per process, against numbers
# worked out here by another route from the same events: on both real DDP samples (20 steps of
# each of 2 ranks), each step's number, start and duration, the GPU busy time (the union of the
# process's GPU work clipped to the step), the time in runtime or driver calls and in
# synchronising ones (unions over the process's threads), the kernel that covered most of the
# step; per process the median, p10, p90 (statistics.quantiles, "inclusive"), spread and the
# outliers beyond p90 + spread; the same numbers in -c; and cutslice -r step -n 7 holds the
# steps numbered 7. Then a generated job of two ranks with
# a slow step planted in rank 1 (and none in rank 0): the outlier must be that step, named in
# JSON, CSV and text, and no other.
top=${CUT_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
B=${CUT_BUILD:-$top/build}
PATH=$B/bin:$PATH
command -v python3 >/dev/null || { echo "needs python3"; exit 77; }
command -v zstd >/dev/null || { echo "needs zstd"; exit 77; }
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

for f in ddp-2gpu-hook ddp-2gpu-capture-gpu; do
	in=$top/samples/$f.jsonl.zst
	zstd -dc "$in" >"$tmp/t.jsonl" || bad "zstd $f: exit $?"
	cutstat -j -M -s step "$in" >"$tmp/s.json" || bad "cutstat -j -s step $f: exit $?"
	cutstat -c -M -s step "$in" >"$tmp/s.csv" || bad "cutstat -c -s step $f: exit $?"
	# cutslice -r step -n 7 holds the step cutstat numbers 7, in every process
	cutslice -r step -n 7 "$in" | grep '"name":"slice"' >"$tmp/slice" || bad "cutslice $f"
	python3 - "$tmp/slice" "$tmp/s.json" <<'PY' || bad "$f: cutslice's step 7 is not cutstat's"
import json, sys
w = json.load(open(sys.argv[1]))["args"]["windows"]
rows = json.load(open(sys.argv[2]))["steps"]["rows"]
a = sorted((x["pid"], x["from_ns"], x["to_ns"]) for x in w)
b = sorted((r["pid"], r["ts"], r["ts"] + r["dur_ns"]) for r in rows if r["step"] == 7)
sys.exit(0 if a == b and len(a) == 2 else 1)
PY
	python3 - "$tmp/t.jsonl" "$tmp/s.json" "$tmp/s.csv" "$top/share/data/api-categories.tsv" "$f" <<'PY' || fail=1
import collections, csv, json, re, statistics, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
st = json.load(open(sys.argv[2]))["steps"]
name = sys.argv[5]
n = 0
def bad(m):
    global n; n += 1; print("FAIL", name, m)
table = {}
for line in open(sys.argv[4]):
    if line.strip() and not line.startswith("#"):
        k, v = line.rstrip("\n").split("\t")[:2]; table[k] = v
def api_cat(fn):
    for _ in range(4):
        if fn in table: return table[fn]
        fn = re.sub(r"(_ptsz|_ptds|_v[0-9]+)$" if len(fn) > 5 else r"_v[0-9]+$", "", fn)
    return "other"
def is_sync(e):
    if e["layer"] == "runtime": return (e.get("cat") or table.get(e["name"], "runtime")) == "sync"
    return api_cat(e["name"]) == "sync"
# The samples are of one host each; a record without a rank has its process's (procs.h).
if len({e["host"] for e in ev if "host" in e}) > 1: bad("a sample of several hosts")
rank = {}
for e in ev:
    if "rank" in e: rank.setdefault(e["pid"], e["rank"])
for e in ev:
    if e["layer"] == "meta" and e["name"] == "process" and "rank" in e.get("args", {}): rank.setdefault(e["pid"], e["args"]["rank"])
def union(spans):
    out = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1]: out[-1][1] = max(out[-1][1], b)
        else: out.append([a, b])
    return out
def inside(u, a, b):
    return sum(max(0, min(y, b) - max(x, a)) for x, y in u)
by = collections.defaultdict(lambda: collections.defaultdict(list))
for i, e in enumerate(ev):
    if e["layer"] == "meta" or "dur" not in e: continue
    p, span = e["pid"], (e["ts"], e["ts"] + e["dur"])
    if e["layer"] in ("runtime", "api"):
        by[p]["calls"].append(span)
        if is_sync(e): by[p]["sync"].append(span)
    elif e["layer"] == "gpu":
        by[p]["gpu"].append(span)
        if e.get("cat") == "kernel": by[p]["k"].append(span + (e["name"],))
    elif e["layer"] == "nvtx" and e["name"] == "step" and e.get("cat") != "mark":
        by[p]["inst"].append((e["ts"], i, e["dur"]))
met = {}
for i, e in enumerate(ev): met.setdefault(e["pid"], i)
want, summ = [], []
for p in sorted(by, key=lambda p: met[p]):  # processes in the order met
    inst = sorted(by[p]["inst"])
    if not inst: continue
    u = {k: union(by[p][k]) for k in ("calls", "sync", "gpu")}
    durs = []
    for k, (ts, _, dur) in enumerate(inst, 1):
        a, b = ts, ts + dur
        per = collections.Counter()
        for x, y, nm in by[p]["k"]:
            if min(y, b) > max(x, a): per[nm] += min(y, b) - max(x, a)
        top = min(per.items(), key=lambda kv: (-kv[1], kv[0])) if per else (None, None)
        want.append({"pid": p, "rank": rank.get(p), "step": k, "ts": ts, "dur_ns": dur,
                     "gpu_busy_ns": inside(u["gpu"], a, b), "calls_ns": inside(u["calls"], a, b),
                     "sync_ns": inside(u["sync"], a, b), "top_kernel": top[0], "top_kernel_ns": top[1]})
        durs.append(dur)
    dec = statistics.quantiles(durs, n=10, method="inclusive")
    med, p10, p90 = statistics.median(durs), dec[0], dec[8]
    out = [k for k, d in enumerate(durs, 1) if d > p90 + (p90 - p10)]
    for w in want[-len(durs):]: w["outlier"] = w["step"] in out
    summ.append({"pid": p, "steps": len(durs), "med_ns": med, "p10_ns": p10, "p90_ns": p90,
                 "spread_ns": p90 - p10, "threshold_ns": 2 * p90 - p10, "outlier_steps": out})
if len(want) != 40 or len(summ) != 2: bad(f"{len(want)} steps of {len(summ)} processes, not 40 of 2")
if st["range"] != "step" or len(st["rows"]) != len(want): bad(f"{len(st['rows'])} rows")
for g, w in zip(st["rows"], want):
    for k, v in w.items():
        if g.get(k) != v: bad(f"pid {w['pid']} step {w['step']} {k}: {g.get(k)} != {v}")
    if abs(g["gpu_busy_pct"] - 100 * w["gpu_busy_ns"] / w["dur_ns"]) > 1e-9: bad(f"step {w['step']} gpu_busy_pct")
close = lambda a, b: abs(a - b) <= 1e-6 * max(1, abs(b))
if len(st["processes"]) != len(summ): bad("processes")
for g, w in zip(st["processes"], summ):
    for k, v in w.items():
        if k == "outlier_steps" or k in ("pid", "steps"):
            if g.get(k) != v: bad(f"pid {w['pid']} {k}: {g.get(k)} != {v}")
        elif not close(g[k], v): bad(f"pid {w['pid']} {k}: {g[k]} != {v}")
    if g["rank"] != rank.get(w["pid"]) or g["outliers"] != len(w["outlier_steps"]): bad(f"pid {w['pid']} rank or outliers")
if not any(w["sync_ns"] for w in want) or not any(w["top_kernel"] for w in want): bad("no sync time or no kernel in any step")
# -c: the same rows, after the NVTX table
rows = list(csv.reader(open(sys.argv[3])))
heads = [i for i, r in enumerate(rows) if r and r[0] == "range" and (i == 0 or not rows[i - 1])]
if len(heads) != 2: bad(f"csv: {len(heads)} step tables")
else:
    h = rows[heads[0]]
    body = rows[heads[0] + 1:heads[0] + 1 + len(want)]
    for r, w in zip(body, want):
        r = dict(zip(h, r))
        if [int(r[k]) for k in ("pid", "step", "ts", "dur_ns", "gpu_busy_ns", "calls_ns", "sync_ns", "outlier")] != \
           [w[k] for k in ("pid", "step", "ts", "dur_ns", "gpu_busy_ns", "calls_ns", "sync_ns", "outlier")]:
            bad(f"csv step {r}")
    h = rows[heads[1]]
    for r, w in zip(rows[heads[1] + 1:], summ):
        r = dict(zip(h, r))
        if int(r["steps"]) != w["steps"] or r["outlier_steps"] != ", ".join(map(str, w["outlier_steps"])):
            bad(f"csv summary {r}")
sys.exit(1 if n else 0)
PY
done

# A job of 2 ranks, 12 steps each of 10 ms (+-2%), GPU work in each; rank 1's step 7 takes
# 25 ms (a planted stall: host code, no GPU work, in the middle of the step).
python3 - "$tmp/job.jsonl" <<'PY' || bad "generating the job"
import json, random, sys
random.seed(7)
ev = []
for r in (0, 1):
    pid = 500 + r
    ev.append({"ts": 0, "host": "h", "rank": r, "pid": pid, "tid": pid, "layer": "meta", "name": "process", "args": {"comm": "train", "rank": r}})
    t = 1_000_000
    for k in range(1, 13):
        dur = 10_000_000 + random.randint(-200_000, 200_000) + (15_000_000 if (r, k) == (1, 7) else 0)
        ev.append({"ts": t, "dur": dur, "pid": pid, "tid": pid, "layer": "nvtx", "name": "step", "cat": "range", "args": {"depth": 0}})
        ev.append({"ts": t + 1000, "dur": 20_000, "host": "h", "rank": r, "pid": pid, "tid": pid, "layer": "api", "name": "cuLaunchKernel", "ret": 0, "args": {"stream": "0x7"}})
        ev.append({"ts": t + 30_000, "dur": 6_000_000, "host": "h", "rank": r, "pid": pid, "tid": pid, "layer": "gpu", "name": "gemm", "cat": "kernel", "args": {"stream": "0x7", "device": r}})
        ev.append({"ts": t + dur - 500_000, "dur": 400_000, "host": "h", "rank": r, "pid": pid, "tid": pid, "layer": "api", "name": "cuStreamSynchronize", "ret": 0, "args": {"stream": "0x7"}})
        t += dur + 100_000
order = ["ts", "dur", "host", "rank", "pid", "tid", "layer", "name", "cat", "ret", "args"]
ev.sort(key=lambda e: (e["ts"], e["layer"] != "meta"))
with open(sys.argv[1], "w") as f:
    for e in ev: f.write(json.dumps({k: e[k] for k in order if k in e}, separators=(",", ":")) + "\n")
PY
cutstat -j -s step "$tmp/job.jsonl" >"$tmp/job.json" || bad "cutstat -j on the job: exit $?"
cutstat -s step "$tmp/job.jsonl" >"$tmp/job.txt" || bad "cutstat on the job: exit $?"
cutstat -c -s step "$tmp/job.jsonl" >"$tmp/job.csv" || bad "cutstat -c on the job: exit $?"
python3 - "$tmp/job.json" "$tmp/job.csv" <<'PY' || fail=1
import csv, json, sys
st = json.load(open(sys.argv[1]))["steps"]
n = 0
def bad(m):
    global n; n += 1; print("FAIL planted step:", m)
out = [(x["rank"], x["step"]) for x in st["rows"] if x["outlier"]]
if out != [(1, 7)]: bad(f"outliers {out}")
pr = {x["rank"]: x["outlier_steps"] for x in st["processes"]}
if pr != {0: [], 1: [7]}: bad(f"per process {pr}")
rows = list(csv.reader(open(sys.argv[2])))
h = next(i for i, r in enumerate(rows) if r and r[0] == "range")
got = [(r[3], r[4]) for r in rows[h + 1:] if r and r[0] == "step" and len(r) == len(rows[h]) and dict(zip(rows[h], r))["outlier"] == "1"]
if got != [("1", "7")]: bad(f"CSV outliers {got}")
sys.exit(1 if n else 0)
PY
grep -Eq '^ +501 +1 +7 +outlier ' "$tmp/job.txt" || bad "the text does not mark rank 1's step 7"
grep -Eq '^ +501 +1 +12 .* 7$' "$tmp/job.txt" || bad "the text's summary does not name step 7"
[ "$(grep -Ec '^ +[0-9]+ +[0-9]+ +[0-9]+ +outlier ' "$tmp/job.txt")" = 1 ] || bad "the text marks other steps"
[ $fail -eq 0 ] || exit 1
echo "cutstat -s agrees with the steps counted here, and names the planted slow step"
