#!/bin/sh
# The one collective rule (cut-events(5), Names; cut_is_collective in share/lib/classify.c) in
# cutstat's per-rank view, its job view over per-rank summaries, and cutgaps' rank waits, on
# a 2-rank trace whose kernels include NCCL's, mangled and not, and kernels that hold "nccl"
# but are not NCCL's (PyTorch's c10d::nccl_extension, an API's name, upper case): every count
# and total against the rule as written again here.
top=${CUT_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
B=${CUT_BUILD:-$top/build}
PATH=$B/bin:$PATH
command -v python3 >/dev/null || { echo "needs python3"; exit 77; }
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

python3 - "$tmp" <<'PY' || bad "writing the trace"
import json, sys
d = sys.argv[1]
ev = []
names = [
    "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE",
    "ncclDevKernel_Broadcast_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
    "_Z30ncclSymkDevKernel_AllGather_LL21ncclSymkDevWorkArgs4K",
    "_ZN4c10d14nccl_extension14lsa_get_kernelEPPvimS1_m",
    "_ZN4c10d14nccl_extension27nccl_wait_for_signal_kernelEPPvim",
    "ncclAllReduce",
    "NCCLKernel_AllReduce",
]
for r in (0, 1):
    with open("%s/rank%d.jsonl" % (d, r), "w") as f:
        ts = 1000
        for step in range(3):
            for i, n in enumerate(names):
                dur = 100 + 10 * i + 37 * r + step
                e = {"ts": ts + 13 * r, "dur": dur, "rank": r, "pid": 100 + r, "tid": 1,
                     "layer": "gpu", "name": n, "cat": "kernel", "args": {"stream": "0x1"}}
                f.write(json.dumps(e) + "\n")
                ev.append(e)
                ts += 1000
with open(d + "/job.jsonl", "w") as f:  # both ranks, in time order
    for e in sorted(ev, key=lambda e: e["ts"]):
        f.write(json.dumps(e) + "\n")
PY
cutstat -j "$tmp/job.jsonl" >"$tmp/stat.json" || bad "cutstat -j: exit $?"
cutgaps -j "$tmp/job.jsonl" >"$tmp/gaps.json" || bad "cutgaps -j: exit $?"
cutstat -j "$tmp/rank0.jsonl" >"$tmp/s0.json" && cutstat -j "$tmp/rank1.jsonl" >"$tmp/s1.json" &&
	cutstat -j "$tmp/s0.json" "$tmp/s1.json" >"$tmp/jobview.json" || bad "cutstat -j summaries: exit $?"

python3 - "$tmp" <<'PY' || fail=1
import json, re, sys
d = sys.argv[1]
def collective(name):
    m = re.match(r"_ZL?([0-9]+)", name)
    ident = name[m.end():m.end() + int(m.group(1))] if m else name
    return re.match(r"[nr]ccl[A-Za-z]*Kernel(?![A-Za-z])", ident) is not None
per = {}  # name -> {rank: total}
count = {}
for r in (0, 1):
    for line in open("%s/rank%d.jsonl" % (d, r)):
        e = json.loads(line)
        if collective(e["name"]):
            per.setdefault(e["name"], {}).setdefault(r, 0)
            per[e["name"]][r] += e["dur"]
            count[r] = count.get(r, 0) + 1
want = sorted((len(t), max(t.values()), min(t.values())) for t in per.values())
n = 0
def bad(m):
    global n; n += 1; print("FAIL:", m)
if len(per) != 3:
    bad("the rule here finds %d collectives, want 3" % len(per))
st = json.load(open(d + "/stat.json"))
got = sorted((w["ranks"], w["max_ns"], w["min_ns"]) for w in st["ranks"]["nccl_waits"])
if got != want:
    bad("cutstat nccl_waits (ranks, max, min): %s, want %s" % (got, want))
job = json.load(open(d + "/jobview.json"))["job"]
got = sorted((s["summaries"], s["most_waiting_total_ns"], s["its_total_ns"])
             for s in job["stragglers"])
if got != want:
    bad("cutstat job stragglers (ranks, max, min): %s, want %s" % (got, want))
gp = json.load(open(d + "/gaps.json"))["rank_waits"]
for w in gp["ranks"]:
    if w["collectives"] + w["unmatched"] != count[w["rank"]]:
        bad("cutgaps rank %d: %d collectives, %d unmatched, want %d kernels" % (
            w["rank"], w["collectives"], w["unmatched"], count[w["rank"]]))
if gp["instances"] != sum(count.values()) // 2:
    bad("cutgaps: %d instances, want %d" % (gp["instances"], sum(count.values()) // 2))
sys.exit(1 if n else 0)
PY
[ $fail -eq 0 ] || exit 1
echo "cutstat, its job view and cutgaps find the collectives by the one rule"
