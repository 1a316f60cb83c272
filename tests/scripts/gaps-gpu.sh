#!/bin/sh
# cutgaps with the gpu layer: the device part is measured from the GPU's own intervals and says
# so; per stream and per process, busy is the union of the work's intervals, idle the rest of
# the window (first start to last end), and every hole between them one gap (computed here);
# each listed gap is bounded by the work before and after it; a trace without the layer keeps
# the host-side estimate and says so.
. "$(dirname "$0")/lib/hook-setup.sh"
PATH=$B/bin:$PATH
command -v python3 >/dev/null || { echo "needs python3"; exit 77; }
cuthook -o "$tmp/t.jsonl" -- "$fx/gpuprog" 10 >/dev/null || bad "gpuprog: exit $?"
cutgaps -j -t 0 "$tmp/t.jsonl" >"$tmp/g.json" || bad "cutgaps -j: exit $?"
cutgaps "$tmp/t.jsonl" | grep -q 'measured on the GPU' || bad "text: not said measured"
python3 - "$tmp/t.jsonl" "$tmp/g.json" <<'PY' || fail=1
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
out = json.load(open(sys.argv[2]))
n = 0
def bad(m):
    global n; n += 1; print("FAIL", m)
if out.get("device_gaps") != "measured": bad(f"device_gaps {out.get('device_gaps')}")
gpu = [e for e in ev if e["layer"] == "gpu"]
def holes(iv):
    iv = sorted(iv); busy = 0; gaps = []; cs, ce = iv[0]
    for s, e in iv[1:]:
        if s > ce:
            busy += ce - cs; gaps.append((ce, s)); cs, ce = s, e
        else: ce = max(ce, e)
    busy += ce - cs
    return busy, gaps, iv[0][0], max(e for _, e in iv)
groups = {"all": [(e["ts"], e["ts"] + e["dur"]) for e in gpu]}
for e in gpu:
    groups.setdefault(e["args"]["stream"], []).append((e["ts"], e["ts"] + e["dur"]))
rows = {r["stream"]: r for r in out["streams"]}
if set(rows) != set(groups): bad(f"streams {sorted(rows)} != {sorted(groups)}")
for k, iv in groups.items():
    busy, gaps, lo, hi = holes(iv); r = rows.get(k, {})
    want = {"busy_ns": busy, "idle_ns": hi - lo - busy, "gaps": len(gaps), "window_ns": hi - lo}
    for kk, v in want.items():
        if r.get(kk) != v: bad(f"stream {k}: {kk} {r.get(kk)}, want {v}")
    listed = sorted((x["start"], x["end"]) for x in out["gaps"]
                    if x["kind"] == ("process" if k == "all" else "stream") and x["stream"] == k)
    if listed != gaps: bad(f"stream {k}: {len(listed)} gaps listed, {len(gaps)} holes")
sys.exit(1 if n else 0)
PY
cuthook -l api -o "$tmp/n.jsonl" -- "$fx/gpuprog" 3 >/dev/null || bad "-l api: exit $?"
cutgaps -j "$tmp/n.jsonl" | grep -q '"device_gaps": "estimated"' || bad "no gpu layer: not said estimated"
exit $fail
