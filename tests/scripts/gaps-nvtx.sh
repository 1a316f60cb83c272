#!/bin/sh
# cutgaps names, for each gap, the innermost NVTX range open on the thread that ended it when
# it ended (issue 14): checked for every gap of a real PyTorch trace with emit_nvtx
# (samples/hook-torch-nvtx-runtime.jsonl.zst) against a brute-force search over all its ranges,
# and on a small trace whose answer is known; text says it too.
B=${CUT_BUILD:-build}
PATH=$B/bin:$PATH
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
command -v python3 >/dev/null || { echo "needs python3"; exit 77; }
cutmerge samples/hook-torch-nvtx-runtime.jsonl.zst >"$tmp/t.jsonl" || { echo "FAIL cutmerge"; exit 1; }
cutgaps -j -t 0 "$tmp/t.jsonl" >"$tmp/g.json" || { echo "FAIL cutgaps: exit $?"; exit 1; }
python3 - "$tmp/t.jsonl" "$tmp/g.json" <<'PY' || exit 1
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
gaps = json.load(open(sys.argv[2]))["gaps"]
ranges = {}
for e in ev:
    if e["layer"] == "nvtx" and "dur" in e:
        ranges.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"], e["name"]))
n = named = 0
for gp in gaps:
    tid = gp["after"]["tid"]
    best = None
    for s, e, name in ranges.get((gp["pid"], tid), []):
        if s <= gp["end"] < e and (best is None or s > best[0] or (s == best[0] and e < best[1])):
            best = (s, e, name)
    want = best[2] if best else None
    if gp.get("nvtx_range") != want:
        n += 1
        if n < 5: print("FAIL gap", gp["kind"], gp["start"], gp["end"], "named", gp.get("nvtx_range"), "want", want)
    named += want is not None
if n: sys.exit(f"FAIL {n} of {len(gaps)} gaps named wrong")
if named < 100: sys.exit(f"FAIL only {named} gaps in a range: the test would prove little")
PY
python3 -c '
import json
ev = [("step", 0, 10000, "nvtx"), ("fwd", 1000, 3000, "nvtx"),
      ("cuA", 0, 100, "api"), ("cuB", 2000, 100, "api"), ("cuC", 6000, 100, "api"), ("cuD", 12000, 100, "api")]
for name, ts, dur, layer in sorted(ev, key=lambda x: x[1]):
    print(json.dumps({"ts": ts, "dur": dur, "pid": 1, "tid": 1, "layer": layer, "name": name}))
' >"$tmp/s.jsonl"
cutgaps -t 0 "$tmp/s.jsonl" >"$tmp/s.txt" || { echo "FAIL cutgaps small: exit $?"; exit 1; }
grep -q 'cuA -> cuB:.*; in NVTX range fwd$' "$tmp/s.txt" &&
	grep -q 'cuB -> cuC:.*; in NVTX range step$' "$tmp/s.txt" &&
	grep 'cuC -> cuD:' "$tmp/s.txt" | grep -vq 'NVTX' || { echo "FAIL small trace: $(grep -- '->' "$tmp/s.txt")"; exit 1; }
