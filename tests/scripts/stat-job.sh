#!/bin/sh
# cutstat -j summaries merge into the job (issues 15, 16): given one summary per rank, cutstat
# prints per function and kernel the total over ranks (the sum of the ranks' totals), the calls,
# the extremes, quantiles within the stated 4.4 % of the exact ones (computed here from the
# ranks' traces together), each rank's total, and per collective kernel the straggler: the
# rank whose instances were shortest (it arrived last).
B=${CUT_BUILD:-build}
PATH=$B/bin:$PATH
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
command -v python3 >/dev/null || { echo "needs python3"; exit 77; }
python3 - "$tmp" <<'PY'
import json, random, sys
random.seed(5)
# rank 1 reaches every all-reduce 300 us late: rank 0's kernels wait (long), rank 1's do not.
for rank in range(3):
    with open(f"{sys.argv[1]}/r{rank}.jsonl", "w") as f:
        ts = 1000
        for i in range(200 + 50 * rank):
            d = random.randint(1000, 90000)
            f.write(json.dumps({"ts": ts, "dur": d, "rank": rank, "pid": 10 + rank, "tid": 10 + rank, "layer": "api", "name": "cuLaunchKernel", "ret": 0}) + "\n")
            if i % 5 == 0:
                k = 20000 if rank == 1 else 320000 + random.randint(0, 5000)
                f.write(json.dumps({"ts": ts + 10, "dur": k, "rank": rank, "pid": 10 + rank, "tid": 10 + rank, "layer": "gpu", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "cat": "kernel", "args": {"stream": "0x1", "device": rank}}) + "\n")
            ts += 100000 + d
PY
for r in 0 1 2; do cutstat -j "$tmp/r$r.jsonl" >"$tmp/s$r.json" || { echo "FAIL cutstat -j r$r"; exit 1; }; done
cutstat -j "$tmp/s0.json" "$tmp/s1.json" "$tmp/s2.json" >"$tmp/job.json" || { echo "FAIL job -j: exit $?"; exit 1; }
cutstat "$tmp/s0.json" "$tmp/s1.json" "$tmp/s2.json" >"$tmp/job.txt" || { echo "FAIL job: exit $?"; exit 1; }
python3 - "$tmp" <<'PY'
import json, statistics, sys
d = sys.argv[1]
job = json.load(open(f"{d}/job.json"))["job"]
ev = [json.loads(l) for r in range(3) for l in open(f"{d}/r{r}.jsonl")]
n = 0
def bad(m):
    global n; n += 1; print("FAIL", m)
for key, layer, name in (("functions", "api", "cuLaunchKernel"), ("kernels", "gpu", "ncclDevKernel_AllReduce_Sum_f32_RING_LL")):
    mine = [e for e in ev if e["layer"] == layer]
    got = [x for x in job[key] if x["name"] == name]
    if len(got) != 1: bad(f"{key}: {name} missing"); continue
    g = got[0]; durs = [e["dur"] for e in mine]
    if g["calls"] != len(durs) or g["total_ns"] != sum(durs) or g["min_ns"] != min(durs) or g["max_ns"] != max(durs):
        bad(f"{name}: {g}")
    for r in range(3):
        want = sum(e["dur"] for e in mine if e["rank"] == r)
        if g["per_summary_ns"].get(f"rank {r}") != want: bad(f"{name}: rank {r} {g['per_summary_ns']}, want {want}")
    exact = statistics.median_low(durs)
    if abs(g["med_ns"] - exact) > 0.044 * exact + 1: bad(f"{name}: median {g['med_ns']} vs exact {exact}")
st = job["stragglers"]
if len(st) != 1 or st[0]["straggler"] != "rank 1": bad(f"stragglers {st}")
sys.exit(1 if n else 0)
PY
[ $? -eq 0 ] || exit 1
grep -q '^Stragglers' "$tmp/job.txt" && grep -q '^Job: 3 summaries: rank 0 rank 1 rank 2' "$tmp/job.txt" ||
	{ echo "FAIL job text: $(head -3 "$tmp/job.txt")"; exit 1; }
cutstat "$tmp/s0.json" "$tmp/r1.jsonl" 2>/dev/null; [ $? -eq 2 ] || { echo "FAIL mixing a summary and a trace: not refused"; exit 1; }
