"""switch_setup_check.py TRACE PROFILE: how long after its START each kernel of a process
under cuthook -S started, against CUPTI (tests/gpu/switch_setup.sh). The process's kernels are
paired with the profiler's in order (cut's last ones: the profile starts after a warm-up), the
clocks aligned on the median of the ends (which END events time); per kernel, its parameters'
bytes as cut recorded them (args.params), and signed differences of the starts (cut - CUPTI,
ns) of the pieces cut started from their START, by what the device did before: "turn", a gap
of 100 us or more before it on the process's side (beside a busy process, the other's turn),
"queued", a gap under 6 us (its START and the END before it only). A kernel that started later
after its START than the others has a negative difference."""
import json
import sys
from collections import defaultdict

trace, prof = sys.argv[1], sys.argv[2]
ev = [json.loads(l) for l in open(trace)]
cut = sorted((e for e in ev if e.get("layer") == "gpu" and e.get("cat") == "kernel"),
             key=lambda e: e["ts"])
cupti = sorted((e for e in json.load(open(prof))["traceEvents"]
                if e.get("cat") == "kernel" and e["name"] != "cuthook_clock"),
               key=lambda e: e["ts"])
if len(cut) < len(cupti):
    sys.exit(f"switch_setup_check: {len(cut)} kernels in {trace}, {len(cupti)} in {prof}")
cut = cut[len(cut) - len(cupti):]
ends = sorted(a["ts"] + a["dur"] - (b["ts"] + b["dur"]) * 1000 for a, b in zip(cut, cupti))
off = ends[len(ends) // 2]
rows = defaultdict(list)
params = {}
prev_end = None
for a, b in zip(cut, cupti):
    start = b["ts"] * 1000 + off
    gap = start - prev_end if prev_end is not None else None
    prev_end = (b["ts"] + b["dur"]) * 1000 + off
    if gap is None or "start" in a["args"]:
        continue
    how = "turn" if gap >= 100000 else "queued" if gap < 6000 else None
    if how:
        name = b["name"] if len(b["name"]) < 36 else b["name"][:10] + ".." + b["name"][-24:]
        rows[(name, how)].append(a["ts"] - start)
        params[name] = a["args"].get("params")


def q(v, f):
    return v[min(len(v) - 1, int(len(v) * f))]


print(f"{'kernel':<36} {'params':>6} {'after':<6} {'n':>4} {'p10':>7} {'p50':>7} {'p90':>7}")
for (name, how), v in sorted(rows.items(), key=lambda kv: (params[kv[0][0]] or 0, kv[0])):
    v.sort()
    print(f"{name:<36} {params[name] or '-':>6} {how:<6} {len(v):>4} "
          f"{q(v, 0.1):>7} {q(v, 0.5):>7} {q(v, 0.9):>7}")
