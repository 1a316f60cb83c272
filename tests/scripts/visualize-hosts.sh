#!/bin/sh
# A job of two hosts on one timeline (issue 28): each host's trace (a launcher and two ranks of
# the same pids on both, a GPU per rank by uuid, collectives), merged by cutmerge onto one clock,
# then drawn by cutchrome and cutperfetto grouped by host, then rank: hosts by their lowest rank
# (node2 starts first, but node1 has rank 0), ranks numbered across hosts (node1 has ranks 0
# and 2), then each host's other processes, then (cutchrome) its GPUs.
B=${CUT_BUILD:-build}
PATH=$B/bin:$PATH
here=$(dirname "$0")
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
command -v python3 >/dev/null || { echo "needs python3"; exit 77; }
fail=0
bad() { echo "FAIL $*"; fail=1; }

for node in node1 node2; do
	python3 - $node >"$tmp/$node.jsonl" <<'PY'
import json, sys
node = sys.argv[1]
t0 = 5000 if node == "node1" else 4000  # node2 starts 1 us earlier, on its own clock
ranks = [0, 2] if node == "node1" else [1, 3]
out = []
head = {"schema": 2, "tool": "cuthook", "host": node, "sorted": True,
        "clock": {"monotonic_ns": t0, "realtime_ns": 1795000000000000000 + t0}}
out.append(dict(ts=t0, pid=100, tid=100, layer="meta", name="header", args=head))
out.append(dict(ts=t0, pid=100, tid=100, layer="meta", name="process", args={"comm": "torchrun"}))
out.append(dict(ts=t0 + 10, dur=5, pid=100, tid=100, layer="runtime", name="cudaGetDeviceCount",
                cat="device", ret=0))
for i, rank in enumerate(ranks):
    pid, t = 200 + i, t0 + 100 + i * 10
    out.append(dict(ts=t, pid=pid, tid=pid, layer="meta", name="header", args=head))
    out.append(dict(ts=t, pid=pid, tid=pid, layer="meta", name="process",
                    args={"comm": "python", "rank": rank}))
    out.append(dict(ts=t, pid=pid, tid=pid, layer="meta", name="device",
                    args={"device": i, "name": "H100", "uuid": "GPU-%s-%d" % (node, i)}))
for k in range(3):
    for i, rank in enumerate(ranks):
        pid, t, corr = 200 + i, t0 + 1000 + k * 1000 + i * 10, k * 10 + i + 1
        out.append(dict(ts=t, dur=50, pid=pid, tid=pid, layer="runtime", name="cudaLaunchKernel",
                        cat="launch", ret=0))
        out.append(dict(ts=t + 5, dur=40, pid=pid, tid=pid, layer="api", name="cuLaunchKernel",
                        cat="launch", ret=0, args={"corr": corr}))
        out.append(dict(ts=t + 100, dur=300, pid=pid, tid=pid, layer="gpu",
                        name="_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LLv", cat="kernel",
                        args={"corr": corr, "device": i, "stream": "0x5"}))
for e in sorted(out, key=lambda e: e["ts"]):
    print(json.dumps(e, separators=(",", ":")))
PY
done
cutmerge "$tmp/node2.jsonl" "$tmp/node1.jsonl" >"$tmp/job.jsonl" 2>"$tmp/merge.err" ||
	bad "cutmerge: exit $?: $(cat "$tmp/merge.err")"

# cutchrome: the processes by process_sort_index, named with their hosts; the collectives of
# ranks 0 and 1 at one time (the clocks aligned).
cutchrome "$tmp/job.jsonl" >"$tmp/job.json" 2>"$tmp/err" || bad "cutchrome: exit $?"
[ -s "$tmp/err" ] && bad "cutchrome: $(cat "$tmp/err")"
python3 - "$tmp/job.json" <<'PY' || fail=1
import json, sys
te = json.load(open(sys.argv[1]))["traceEvents"]
names = {e["pid"]: e["args"]["name"] for e in te if e["ph"] == "M" and e["name"] == "process_name"}
order = {e["pid"]: e["args"]["sort_index"] for e in te
         if e["ph"] == "M" and e["name"] == "process_sort_index"}
want = ["rank 0 on node1: python", "rank 2 on node1: python", "torchrun on node1",
        "GPU GPU-node1-0 (H100) on node1", "GPU GPU-node1-1 (H100) on node1",
        "rank 1 on node2: python", "rank 3 on node2: python", "torchrun on node2",
        "GPU GPU-node2-0 (H100) on node2", "GPU GPU-node2-1 (H100) on node2"]
if set(names) != set(order) or len(set(order.values())) != len(order):
    print("FAIL cutchrome: sort indexes %s for processes %s" % (order, names))
    sys.exit(1)
got = [names[p] for p in sorted(order, key=order.get)]
if got != want:
    print("FAIL cutchrome: processes in the order %s, want %s" % (got, want))
    sys.exit(1)
first = {}
for e in te:
    if e["ph"] == "X" and e.get("cat") == "kernel":
        first.setdefault(names[e["pid"]], e["ts"])
if first["GPU GPU-node1-0 (H100) on node1"] != first["GPU GPU-node2-0 (H100) on node2"]:
    print("FAIL cutchrome: the first collective of ranks 0 and 1 apart: %s" % first)
    sys.exit(1)
PY

# cutperfetto: every track and slice where the input says (visualize-perfetto-check.py checks
# the order by host then rank too), and the processes' order written out.
cutperfetto "$tmp/job.jsonl" >"$tmp/job.pb" 2>"$tmp/err" || bad "cutperfetto: exit $?"
[ -s "$tmp/err" ] && bad "cutperfetto: $(cat "$tmp/err")"
if command -v protoc >/dev/null; then
	protoc -I"$here/../fixtures/perfetto" --decode=perfetto.protos.Trace perfetto_trace.proto \
		<"$tmp/job.pb" >"$tmp/job.txt" || bad "cutperfetto: protoc cannot decode the output"
	python3 "$here/visualize-perfetto-check.py" --layers runtime "$tmp/job.txt" "$tmp/job.jsonl" ||
		bad "cutperfetto: check"
	python3 - "$tmp/job.txt" <<'PY' || fail=1
import re, sys
last = {}  # a track's latest descriptor wins
for p in open(sys.argv[1]).read().split("packet {")[1:]:
    m = re.search(r"track_descriptor \{\s+uuid: (\d+)(.*)", p, re.S)
    if m and "process {" in m.group(2):
        name = re.search(r'process_name: "([^"]*)"', m.group(2))
        rank = re.search(r"sibling_order_rank: (\d+)", m.group(2))
        last[m.group(1)] = (int(rank.group(1)) if rank else -1, name.group(1) if name else "")
got = [n for _, n in sorted(last.values())]
want = ["rank 0 (node1)", "rank 2 (node1)", "torchrun (node1)",
        "rank 1 (node2)", "rank 3 (node2)", "torchrun (node2)"]
if got != want or len({r for r, _ in last.values()}) != len(last):
    print("FAIL cutperfetto: processes in the order %s, want %s" % (sorted(last.values()), want))
    sys.exit(1)
PY
else
	echo "protoc not installed: cutperfetto's output not decoded"
fi
exit $fail
