#!/bin/sh
# Labels that hold: a process is a pid on a host, and a record without a host or a rank takes
# its process's (cutstat(1), Processes, hosts and ranks). A generated trace of two hosts whose
# ranks have the same pid, with the rank only in the process records (or the header's
# envelope) and a third process whose runtime and NVTX records carry neither host nor rank while
# its driver calls and GPU work carry both, as samples/ddp-2gpu-hook does; numbers worked out
# here from the generator's own events: cutstat -j's device, stream, process and per-rank rows,
# cutgaps -j's threads and streams, and (with node and DuckDB) the ranks recipe of share/sql.
# Then the DDP sample: per rank the records, runtime calls and GPU work, counted here with the
# fallback, against cutstat and the recipe.
top=${CUT_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
B=${CUT_BUILD:-$top/build}
PATH=$B/bin:$PATH
command -v python3 >/dev/null || { echo "needs python3"; exit 77; }
command -v zstd >/dev/null || { echo "needs zstd"; exit 77; }
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

python3 - "$tmp" <<'PY' || bad "generating the trace"
import json, sys
out = sys.argv[1]
ev, want = [], {}
def add(**e):
    ev.append(e)
# Host a and host b each run rank r as pid 100; host c runs pid 300 (rank 2), whose runtime
# and NVTX records lack host and rank. GPU work: per process, overlapping pieces on a stream.
procs = [("a", 100, 0), ("b", 100, 1), ("c", 300, 2)]
for i, (h, pid, r) in enumerate(procs):
    t0 = 1_000_000 + i * 1000
    env = {"host": h, "pid": pid, "tid": pid}
    if h == "c":
        add(ts=t0, host=h, rank=r, pid=pid, tid=pid, layer="meta", name="header",
            args={"schema": 2, "tool": "cuthook", "host": h})
    else:
        add(ts=t0, **env, layer="meta", name="process", args={"comm": "train", "rank": r})
    n = 3 + i  # a different number of everything per process
    w = {"events": 0, "api_calls": 0, "runtime_calls": 0, "runtime_ns": 0, "gpu_work": 0,
         "busy": 0}
    for k in range(n):
        ts = t0 + 10_000 * (k + 1)
        rt = {"ts": ts, "dur": 900 + k, "pid": pid, "tid": pid, "layer": "runtime",
              "name": "cudaLaunchKernel", "ret": 0}
        nv = {"ts": ts - 10, "dur": 5000, "pid": pid, "tid": pid, "layer": "nvtx",
              "name": "step", "cat": "range"}
        if h != "c":
            rt.update(host=h); nv.update(host=h)
        ev.extend([nv, rt])
        api = dict(ts=ts + 100, dur=500, host=h, pid=pid, tid=pid, layer="api",
                   name="cuLaunchKernel", ret=0, args={"stream": "0x10"})
        if h == "c":
            api["rank"] = r
        ev.append(api)
        for s, d in ((ts + 200, 3000 + 100 * i), (ts + 1000, 500)):  # the second inside
            g = dict(ts=s, dur=d, host=h, pid=pid, tid=pid, layer="gpu", name="k%d" % i,
                     cat="kernel", args={"stream": "0x10", "device": 0})
            if h == "c":
                g["rank"] = r
            ev.append(g)
        w["events"] += 5; w["api_calls"] += 1; w["runtime_calls"] += 1
        w["runtime_ns"] += 900 + k; w["gpu_work"] += 2; w["busy"] += 3000 + 100 * i
    want[r] = dict(w, host=h, pid=pid)
# Canonical member order, then by time (the header first: it starts its process).
order = ["ts", "dur", "host", "rank", "pid", "tid", "layer", "name", "cat", "ret", "args"]
ev.sort(key=lambda e: (e["ts"], e["layer"] != "meta"))
with open(out + "/t.jsonl", "w") as f:
    for e in ev:
        f.write(json.dumps({k: e[k] for k in order if k in e}, separators=(",", ":")) + "\n")
json.dump(want, open(out + "/want.json", "w"))
PY

cutstat -j "$tmp/t.jsonl" >"$tmp/s.json" || bad "cutstat -j: exit $?"
cutstat "$tmp/t.jsonl" >"$tmp/s.txt" || bad "cutstat: exit $?"
cutgaps -j -t 1 "$tmp/t.jsonl" >"$tmp/g.json" || bad "cutgaps -j: exit $?"
python3 - "$tmp/want.json" "$tmp/s.json" "$tmp/g.json" "$tmp/s.txt" <<'PY' || fail=1
import json, sys
want = {int(k): v for k, v in json.load(open(sys.argv[1])).items()}
st, gp, text = json.load(open(sys.argv[2])), json.load(open(sys.argv[3])), open(sys.argv[4]).read()
n = 0
def bad(m):
    global n; n += 1; print("FAIL", m)
label = lambda w: "pid %d on %s" % (w["pid"], w["host"])
for what, suffix in (("processes", ""), ("devices", " device 0"), ("streams", " device 0 stream 0x10")):
    rows = {x["key"]: x for x in st["gpu"][what]}
    for r, w in want.items():
        x = rows.get(label(w) + suffix)
        if not x or (x["work"], x["busy_ns"], x["pid"], x["host"], x["rank"]) != (w["gpu_work"], w["busy"], w["pid"], w["host"], r):
            bad(f"cutstat {what} of rank {r}: {x}")
    if len(rows) != len(want): bad(f"cutstat {what}: {sorted(rows)}")
    if (label(want[0]) + suffix) not in text: bad(f"text has no {label(want[0]) + suffix}")
rows = {x["rank"]: x for x in st.get("ranks", {}).get("rows", [])}
for r, w in want.items():
    x = rows.get(r, {})
    got = {k: x.get(k) for k in ("events", "api_calls", "runtime_calls", "runtime_ns", "gpu_work")}
    exp = {k: w[k] for k in got}
    if got != exp or x.get("gpu_busy_ns") != w["busy"]: bad(f"cutstat rank {r}: {x} != {exp}")
if st.get("ranks", {}).get("unranked") != 0: bad(f"unranked {st.get('ranks', {}).get('unranked')}")
for r, w in want.items():
    th = [t for t in gp["threads"] if (t.get("host"), t["pid"]) == (w["host"], w["pid"])]
    if len(th) != 1 or th[0].get("rank") != r: bad(f"cutgaps threads of rank {r}: {th}")
    s = [x for x in gp["streams"] if (x.get("host"), x["pid"], x["stream"]) == (w["host"], w["pid"], "0x10")]
    if len(s) != 1 or s[0]["busy_ns"] != w["busy"] or s[0].get("rank") != r: bad(f"cutgaps stream of rank {r}: {s}")
sys.exit(1 if n else 0)
PY

# A trace of one rank that only its process record names: the -j summary says that rank, so
# that the job view labels it (cutstat(1), Many ranks).
cat >"$tmp/one.jsonl" <<'EOF'
{"ts":1,"pid":5,"tid":5,"layer":"meta","name":"process","args":{"comm":"train","rank":3}}
{"ts":2,"dur":10,"pid":5,"tid":5,"layer":"api","name":"cuLaunchKernel","ret":0}
EOF
cutstat -j "$tmp/one.jsonl" | python3 -c 'import json, sys; sys.exit(json.load(sys.stdin)["summary"].get("rank") != 3)' ||
	bad "the summary of a rank named only by its process record has no rank"

# The DDP sample: 16,472 runtime and NVTX records carry no host or rank.
in=$top/samples/ddp-2gpu-hook.jsonl.zst
zstd -dc "$in" >"$tmp/d.jsonl" || bad "zstd: exit $?"
cutstat -j "$in" >"$tmp/d.json" || bad "cutstat -j ddp: exit $?"
python3 - "$tmp/d.jsonl" "$tmp/d.json" >"$tmp/d.want" <<'PY' || fail=1
import json, sys, collections
ev = [json.loads(l) for l in open(sys.argv[1])]
st = json.load(open(sys.argv[2]))
n = 0
def bad(m):
    global n; n += 1; print("FAIL", m, file=sys.stderr)
# The fallback, by pid (one host): a process's rank is the first its records carry, else its
# process record's args.rank.
if {e["host"] for e in ev if "host" in e} != {"vm"}: bad("not one host")
first = {}
for e in ev:
    if "rank" in e: first.setdefault(e["pid"], e["rank"])
    elif e["layer"] == "meta" and e["name"] == "process" and "rank" in e["args"]:
        first.setdefault(e["pid"], e["args"]["rank"])
lacking = [e for e in ev if e["layer"] in ("runtime", "nvtx") and "rank" not in e]
if len(lacking) != 16472: bad(f"{len(lacking)} runtime and NVTX records without a rank, not 16472")
if sum(e["pid"] in first for e in lacking) != 16471: bad("the ranks' records without one")  # torchrun's has none
per = collections.defaultdict(collections.Counter)
for e in ev:
    r = e.get("rank", first.get(e["pid"]))
    if e["layer"] == "meta" or r is None: continue
    per[r]["events"] += 1
    if "dur" in e and e["layer"] == "runtime":
        per[r]["runtime_calls"] += 1; per[r]["runtime_ns"] += e["dur"]
    if "dur" in e and e["layer"] == "gpu": per[r]["gpu_work"] += 1
rows = {x["rank"]: x for x in st["ranks"]["rows"]}
if sorted(rows) != sorted(per): bad(f"ranks {sorted(rows)}")
for r, w in per.items():
    got = {k: rows.get(r, {}).get(k) for k in w}
    if got != dict(w): bad(f"rank {r}: {got} != {dict(w)}")
for r, w in per.items():  # for the recipe below
    print(json.dumps({"rank": r, "runtime_ns": w["runtime_ns"]}))
sys.exit(1 if n else 0)
PY

# The DuckDB views apply the same rule (share/sql/events.sql): per (host, rank) the recipe's
# runtime time and GPU busy time, on both traces.
if command -v node >/dev/null && command -v npm >/dev/null &&
	modules=$("$top/share/scripts/duckdb-node.sh" 2>/dev/null); then
	export NODE_PATH="$modules" CUT_DATADIR="$top/share/data"
	node "$top/share/sql/run.js" "$tmp/t.jsonl" "$top/share/sql/ranks.sql" >"$tmp/t.rows" ||
		bad "run.js on the generated trace"
	node "$top/share/sql/run.js" "$in" "$top/share/sql/ranks.sql" >"$tmp/d.rows" ||
		bad "run.js on the DDP sample"
	python3 - "$tmp/want.json" "$tmp/t.rows" "$tmp/d.want" "$tmp/d.rows" <<'PY' || fail=1
import json, sys
want = {int(k): v for k, v in json.load(open(sys.argv[1])).items()}
rows = [json.loads(l) for l in open(sys.argv[2])]
n = 0
def bad(m):
    global n; n += 1; print("FAIL", m)
got = {(x["host"], x["rank"]): x for x in rows}
if len(got) != len(want): bad(f"recipe ranks: {sorted(got, key=str)}")
for r, w in want.items():
    x = got.get((w["host"], r))
    if not x or (x["runtime_ns"], x["gpu_busy_ns"]) != (w["runtime_ns"], w["busy"]): bad(f"recipe rank {r}: {x}")
dwant = {x["rank"]: x for x in map(json.loads, open(sys.argv[3]))}
drows = {x["rank"]: x for x in map(json.loads, open(sys.argv[4])) if x["rank"] is not None}
for r, w in dwant.items():
    if drows.get(r, {}).get("runtime_ns") != w["runtime_ns"]: bad(f"recipe DDP rank {r}: {drows.get(r)}")
sys.exit(1 if n else 0)
PY
else
	echo "note: node, npm or DuckDB missing: share/sql not checked"
fi
[ $fail -eq 0 ] || exit 1
echo "hosts, pids and ranks hold in cutstat, cutgaps and share/sql"
