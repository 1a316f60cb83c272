#!/bin/sh
# cutchrome on a real 2-GPU DDP capture (samples/ddp-2gpu-hook.jsonl.zst, read compressed):
# a process per rank named by rank and host, a process per physical GPU (its uuid, as the
# device records give it), and the launcher; a flow from the calls to the GPU work.
B=${CUT_BUILD:-build}
PATH=$B/bin:$PATH
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
command -v python3 >/dev/null || { echo "needs python3"; exit 77; }
f=samples/ddp-2gpu-hook.jsonl.zst
cutchrome "$f" >"$tmp/t.json" || { echo "FAIL cutchrome: exit $?"; exit 1; }
cutmerge "$f" >"$tmp/t.jsonl" || { echo "FAIL cutmerge: exit $?"; exit 1; }
python3 - "$tmp/t.jsonl" "$tmp/t.json" <<'PY'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
out = json.load(open(sys.argv[2]))["traceEvents"]
names = sorted(e["args"]["name"] for e in out if e["ph"] == "M" and e["name"] == "process_name")
ranks = sorted({(e["rank"], e["host"]) for e in ev if e["layer"] == "meta" and e["name"] == "process" and "rank" in e})
uuids = sorted({e["args"]["uuid"] for e in ev if e["layer"] == "meta" and e["name"] == "device"})
for r, h in ranks:
    if not any(n.startswith(f"rank {r} on {h}: ") for n in names): sys.exit(f"FAIL no process for rank {r}: {names}")
for u in uuids:
    if not any(n.startswith(f"GPU {u}") for n in names): sys.exit(f"FAIL no process for GPU {u}: {names}")
if len(ranks) != 2 or len(uuids) != 2: sys.exit(f"FAIL the sample has {ranks} {uuids}")
gpu = sum(1 for e in ev if e["layer"] == "gpu")
flows = sum(1 for e in out if e["ph"] == "f" and e["name"] == "submit")
if flows != gpu: sys.exit(f"FAIL {flows} submit flows, {gpu} pieces of GPU work")
PY
