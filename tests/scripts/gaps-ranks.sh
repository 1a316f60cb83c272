#!/bin/sh
# cutgaps' GPU time waiting for other ranks on the real 2-GPU DDP sample, against numbers
# computed here from the same input by another route: the NCCL kernels grouped per (name,
# rank) and paired by position in start order, the last rank's start, each other rank's wait
# (or early end); per rank and per pair every count and total; the text names the section.
top=${CUT_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
B=${CUT_BUILD:-$top/build}
PATH=$B/bin:$PATH
command -v python3 >/dev/null || { echo "needs python3"; exit 77; }
command -v zstd >/dev/null || { echo "needs zstd"; exit 77; }
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

in=$top/samples/ddp-2gpu-hook.jsonl.zst
[ -f "$in" ] || { echo "no sample $in"; exit 77; }
zstd -dc "$in" >"$tmp/t.jsonl" || bad "zstd: exit $?"
cutgaps -j "$in" >"$tmp/g.json" || bad "cutgaps -j: exit $?"
cutgaps "$in" >"$tmp/g.txt" || bad "cutgaps: exit $?"
grep -q '^GPU time waiting for other ranks' "$tmp/g.txt" || bad "text: no section"
grep -q '13.553 ms' "$tmp/g.txt" || bad "text: not rank 0's 13.553 ms waiting"

python3 - "$tmp/t.jsonl" "$tmp/g.json" <<'PY' || fail=1
import json, sys
from collections import defaultdict
n = 0
def bad(m):
    global n; n += 1; print("FAIL", m)
out = json.load(open(sys.argv[2])).get("rank_waits")
if out is None:
    print("FAIL no rank_waits"); sys.exit(1)
meta_rank, seqs, streams = {}, defaultdict(list), defaultdict(set)
ev = [json.loads(l) for l in open(sys.argv[1])]
for e in ev:
    if e["layer"] == "meta" and e["name"] == "process" and "rank" in e.get("args", {}):
        meta_rank[(e.get("host"), e["pid"])] = e["args"]["rank"]
unranked = 0
for e in ev:
    if e["layer"] != "gpu" or e.get("cat") != "kernel" or "nccl" not in e["name"].lower():
        continue
    r = e.get("rank", meta_rank.get((e.get("host"), e["pid"])))
    if r is None: unranked += 1; continue
    seqs[(e["name"], r)].append((e["ts"], e["dur"]))
    streams[r].add(e["args"]["stream"])
ranks = sorted({r for _, r in seqs})
names = sorted({nm for nm, _ in seqs})
row = {r: dict(rank=r, collectives=0, in_ns=0, wait_ns=0, last=0, early=0, unmatched=0,
               streams=len(streams[r])) for r in ranks}
pairs = defaultdict(lambda: [0, 0])
inst = unm = 0
for nm in names:
    per = {r: sorted(seqs.get((nm, r), [])) for r in ranks}
    k = min(len(v) for v in per.values())
    for r in ranks:
        row[r]["unmatched"] += len(per[r]) - k; unm += len(per[r]) - k
    for i in range(k):
        starts = {r: per[r][i] for r in ranks}
        at = max(s for s, _ in starts.values())
        last = min(r for r in ranks if starts[r][0] == at)
        inst += 1; row[last]["last"] += 1
        for r, (s, d) in starts.items():
            row[r]["collectives"] += 1; row[r]["in_ns"] += d
            if r == last: continue
            if s + d <= at: row[r]["early"] += 1; continue
            if at > s:
                row[r]["wait_ns"] += at - s
                pairs[(r, last)][0] += 1; pairs[(r, last)][1] += at - s
for r in ranks:
    most = [w for (a, w), _ in sorted(pairs.items(), key=lambda kv: (-kv[1][1], kv[0][1])) if a == r]
    row[r]["waited_most_for"] = most[0] if most else None
want = dict(instances=inst, unmatched=unm, unranked=unranked)
for k, v in want.items():
    if out.get(k) != v: bad(f"{k} {out.get(k)}, want {v}")
got = {x["rank"]: x for x in out["ranks"]}
if sorted(got) != ranks: bad(f"ranks {sorted(got)} != {ranks}")
for r in ranks:
    for k, v in row[r].items():
        if got.get(r, {}).get(k) != v: bad(f"rank {r}: {k} {got.get(r, {}).get(k)}, want {v}")
gp = {(x["rank"], x["waited_for"]): [x["count"], x["wait_ns"]] for x in out["pairs"]}
if gp != dict(pairs): bad(f"pairs {gp} != {dict(pairs)}")
if len(ranks) != 2 or inst != 44: bad(f"the sample: {len(ranks)} ranks, {inst} collectives")
sys.exit(1 if n else 0)
PY
exit $fail
