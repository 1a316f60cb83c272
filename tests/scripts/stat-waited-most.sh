#!/bin/sh
# One rule for "waited most" and "straggler" (issue 23): on the 2-GPU DDP sample cutstat's
# per-rank view (totals) and its job view (medians, before) named opposite ranks for the
# all-reduce, and cutgaps a third measure. Now the per-rank view, the job view of one summary
# per rank and cutgaps name the same ranks (collwait_pick: the most and the least time inside
# the collective's kernels in total).
top=${CUT_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
B=${CUT_BUILD:-$top/build}
PATH=$B/bin:$PATH
for c in python3 zstd; do command -v $c >/dev/null || { echo "needs $c"; exit 77; }; done
t=$(mktemp -d) || exit 2
trap 'rm -rf "$t"' EXIT
fail=0
for s in hook capture-gpu; do
	zstd -q -dc "$top/samples/ddp-2gpu-$s.jsonl.zst" >"$t/$s.jsonl" || exit 2
	# one file per rank (meta records without a rank go to both)
	python3 - "$t/$s" <<'PY'
import json, sys
p = sys.argv[1]
out = [open(f"{p}.r{r}.jsonl", "w") for r in (0, 1)]
for line in open(f"{p}.jsonl"):
    r = json.loads(line).get("rank")
    for k in ((0, 1) if r is None else (r,)):
        out[k].write(line)
PY
	for r in 0 1; do cutstat -j "$t/$s.r$r.jsonl" >"$t/$s.s$r.json" || { echo "FAIL cutstat -j $s r$r"; exit 1; }; done
	cutstat -j "$t/$s.s0.json" "$t/$s.s1.json" >"$t/$s.job.json" || { echo "FAIL job $s"; exit 1; }
	cutstat -j "$t/$s.jsonl" >"$t/$s.one.json" || { echo "FAIL cutstat $s"; exit 1; }
	cutgaps -j "$t/$s.jsonl" >"$t/$s.gaps.json" || { echo "FAIL cutgaps $s"; exit 1; }
	python3 - "$t/$s" <<'PY' || fail=1
import json, sys
p = sys.argv[1]
job = {k["kernel"]: k for k in json.load(open(f"{p}.job.json"))["job"]["stragglers"]}
one = {k["kernel"]: k for k in json.load(open(f"{p}.one.json"))["ranks"]["nccl_waits"]}
gaps = json.load(open(f"{p}.gaps.json"))["rank_waits"]
bad = 0
if set(job) != set(one) or len(one) < 3:
    print(f"FAIL {p}: kernels {sorted(job)} / {sorted(one)}"); bad = 1
for name, o in one.items():
    j = job.get(name)
    if j and (j["most_waiting"] != f"rank {o['rank']}" or j["straggler"] != f"rank {o['straggler']}"
              or j["most_waiting_total_ns"] != o["max_ns"] or j["its_total_ns"] != o["min_ns"]):
        print(f"FAIL {p}: {name}: job view {j}, per-rank view {o}"); bad = 1
# cutgaps over all NCCL kernels: the rank with the most time in them, by the same rule
tot = {}
for name, o in one.items():
    tot[o["rank"]] = tot.get(o["rank"], 0) + o["max_ns"]
    tot[o["straggler"]] = tot.get(o["straggler"], 0) + o["min_ns"]
in_ns = {r["rank"]: r["in_ns"] for r in gaps["ranks"]}
if in_ns != tot or gaps["waited_most"] != max(sorted(tot), key=lambda r: tot[r]) or \
        gaps["straggler"] != min(sorted(tot), key=lambda r: tot[r]):
    print(f"FAIL {p}: cutgaps {gaps.get('waited_most')} {gaps.get('straggler')} {in_ns}, per-rank totals {tot}"); bad = 1
sys.exit(bad)
PY
done
exit $fail
