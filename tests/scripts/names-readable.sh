#!/bin/sh
# Names as people read them, in lines a terminal holds. On every sample and on traces whose
# kernels have long mangled names (2.3 KB CUTLASS names among them): no mangled symbol (_Z...)
# in any text cutstat, its job view or cutgaps prints, and every line within 160 columns (a
# column a UTF-8 character); -w prints the demangled names whole, -M the mangled ones; -j
# carries each name whole and demangled, with the mangled one beside it where they differ.
top=${CUT_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
B=${CUT_BUILD:-$top/build}
PATH=$B/bin:$PATH
command -v python3 >/dev/null || { echo "needs python3"; exit 77; }
command -v zstd >/dev/null || { echo "needs zstd"; exit 77; }
t=$(mktemp -d) || exit 2
trap 'rm -rf "$t"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# Every line of a text output (file $1, said as $2) fits 160 columns and names no symbol.
check_text() {
	python3 - "$1" "$2" <<'PY' || fail=1
import re, sys
n = 0
for i, line in enumerate(open(sys.argv[1], encoding="utf-8", errors="replace"), 1):
    line = line.rstrip("\n")
    if len(line) > 160:
        n += 1; print(f"FAIL: {sys.argv[2]}:{i}: {len(line)} columns: {line[:80]}...")
    if re.search(r"(^|[^A-Za-z0-9_])_Z[A-Za-z0-9_]", line):
        n += 1; print(f"FAIL: {sys.argv[2]}:{i}: a mangled name: {line[:120]}")
    if n > 5: break
sys.exit(1 if n else 0)
PY
}

# A trace whose kernels, NVTX ranges and collectives carry the longest mangled names of the
# samples, on two ranks, for the per-rank view, the NCCL waits and the job view.
zstd -dc "$top/samples/capture-torch-mlp-gpu.jsonl.zst" "$top/samples/ddp-2gpu-hook.jsonl.zst" |
	python3 -c '
import json, sys
names = set()
for l in sys.stdin:
    e = json.loads(l)
    if e.get("layer") == "gpu" and e.get("name", "").startswith("_Z"): names.add(e["name"])
names = sorted(names, key=len, reverse=True)[:6]
nccl = "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE"
out = open(sys.argv[1], "w")
ts = 1000
for rank in (0, 1):
    for k, name in enumerate(names + [nccl] * 3):
        pid = 10 + rank
        ts += 1000
        def put(**e):
            out.write(json.dumps(dict(rank=rank, pid=pid, tid=pid, **e)) + "\n")
        put(ts=ts, dur=900, layer="nvtx", name=name, cat="range", args={"depth": 0})
        put(ts=ts + 10, dur=100, layer="api", name="cuLaunchKernel", ret=0,
            args={"corr": k + 1, "stream": "0x1"})
        put(ts=ts + 200, dur=300 + 100 * rank + k, layer="gpu", name=name, cat="kernel",
            args={"corr": k + 1, "stream": "0x1", "device": 0})
' "$t/long.jsonl" || bad "no trace of long names"
grep -c '"_Z' "$t/long.jsonl" >/dev/null || bad "the trace has no mangled names"

inputs="$top/samples/*.jsonl $top/samples/*.jsonl.zst $t/long.jsonl"
for f in $inputs; do
	case $f in *profiler.json.zst) continue ;; esac
	b=$(basename "$f")
	cutstat "$f" >"$t/s.txt" 2>/dev/null
	check_text "$t/s.txt" "cutstat $b"
	cutgaps -t 10us "$f" >"$t/g.txt" 2>/dev/null
	check_text "$t/g.txt" "cutgaps -t 10us $b"
done
# the job view, from a summary per rank
for r in 0 1; do
	grep "\"rank\": $r" "$t/long.jsonl" | cutstat -j >"$t/r$r.json" || bad "cutstat -j rank $r"
done
cutstat "$t/r0.json" "$t/r1.json" >"$t/job.txt" || bad "the job view: exit $?"
check_text "$t/job.txt" "the job view"
grep -q '^Stragglers' "$t/job.txt" || bad "the job view names no straggler"

# -w: names whole (a line past 160 columns, the longest demangled name in it); -M: mangled
cutstat -w "$t/long.jsonl" >"$t/w.txt"
cutstat -M -w "$t/long.jsonl" >"$t/m.txt"
cutstat -j "$t/long.jsonl" >"$t/s.json"
cutstat -c "$t/long.jsonl" >"$t/s.csv"
cutstat -j -M "$t/long.jsonl" >"$t/m.json"
cutstat -n 0 "$t/long.jsonl" >"$t/d.txt"
python3 - "$t" <<'PY' || fail=1
import csv, json, sys
d = sys.argv[1]
n = 0
def bad(m):
    global n; n += 1; print("FAIL:", m)
st = json.load(open(d + "/s.json"))
names = st["gpu"]["names"]
longest = max((x for x in names if "mangled" in x), key=lambda x: len(x["name"]), default=None)
if not longest or len(longest["name"]) < 1000: bad(f"no long demangled name in -j: {longest}")
for x in names:
    if x["name"].startswith("_Z") or "…" in x["name"]: bad(f"-j name not demangled whole: {x['name'][:80]}")
    if "mangled" in x and (not x["mangled"].startswith("_Z") or x["mangled"] == x["name"]): bad(f"mangled {x}")
if not any("mangled" in x for x in names): bad("no mangled member in -j")
w = open(d + "/w.txt", encoding="utf-8").read()
if longest and longest["name"] not in w: bad("-w does not print the longest name whole")
if not any(len(l) > 160 for l in w.splitlines()): bad("-w has no line past 160 columns")
nv = st["nvtx"]
if any(x["name"].startswith("_Z") or ("mangled" in x) != x.get("mangled", "").startswith("_Z") for x in nv) or not any("mangled" in x for x in nv): bad(f"nvtx names {[x['name'][:40] for x in nv]}")
default = open(d + "/d.txt", encoding="utf-8").read()
if longest and longest["name"] in default: bad("the default prints a 1000-column name whole")
m = open(d + "/m.txt", encoding="utf-8").read()
if longest and longest["mangled"] not in m: bad("-M does not print the mangled name")
mj = json.load(open(d + "/m.json"))
if any(not x["name"].startswith("_Z") or "mangled" in x for x in mj["gpu"]["names"]): bad("-j -M: names not as the trace has them")
ranks = st["ranks"]
if not all(r.get("top_kernel_mangled", "").startswith("_Z") and not r["top_kernel"].startswith("_Z") for r in ranks["rows"]): bad(f"ranks {ranks['rows']}")
if not ranks["nccl_waits"] or any(not w["kernel"].startswith("ncclDevKernel_AllReduce") or not w["kernel_mangled"].startswith("_Z") for w in ranks["nccl_waits"]): bad(f"nccl_waits {ranks['nccl_waits']}")
if not st["verdict"] or "_Z" in st["verdict"] or "…" in st["verdict"]: bad(f"verdict {st['verdict'][:100]}")
rows = list(csv.reader(open(d + "/s.csv")))
head = next((r for r in rows if r and r[0] == "gpu_name"), None)
if not head or head[-1] != "mangled": bad(f"csv gpu header {head}")
else:
    i = rows.index(head) + 1
    if not rows[i][-1].startswith("_Z") or rows[i][0].startswith("_Z"): bad(f"csv gpu row {rows[i][:1]} {rows[i][-1][:40]}")
sys.exit(1 if n else 0)
PY
# cutgaps: -w and -M as cutstat's
cutgaps -w -t 0 "$t/long.jsonl" | grep -qF "$(python3 -c 'import json,sys; print(max((x["name"] for x in json.load(open(sys.argv[1]))["gpu"]["names"]), key=len)[:200])' "$t/s.json")" ||
	bad "cutgaps -w does not print a long name whole"
cutgaps -M -t 0 "$t/long.jsonl" | grep -q '_Z' || bad "cutgaps -M prints no mangled name"
exit $fail
