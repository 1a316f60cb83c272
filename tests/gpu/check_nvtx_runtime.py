"""check_nvtx_runtime.py: cuthook's trace of torch_nvtx_runtime.py against what torch.profiler
recorded in the same run. usage: python check_nvtx_runtime.py MERGED.jsonl PROFILE.json

1. emit_nvtx: inside the NVTX range "emit", the ranges whose message starts "aten::" (one per
   op, "aten::mm, seq = 3, op_id = ..."), counted per op name, must equal the profiler's
   per-op counts (the same steps run again); and every range must lie inside its parent
   (cutmerge's parent), at depth parent's + 1, on the same thread.
2. runtime: inside the range "profiled", cuthook's runtime events per function, against the
   profiler's cuda_runtime events per function (the profiler leaves some functions out:
   only those it recorded are compared).
3. Each aten range holds the runtime and driver calls it caused: how many ranges hold at
   least one runtime call, and how many runtime calls in "emit" have no aten range above.
Prints a table; exits 1 on a mismatch.
"""
import json
import sys
from collections import Counter

trace, prof = sys.argv[1], json.load(open(sys.argv[2]))
ev = [json.loads(l) for l in open(trace) if l.strip()]
byid = {e["id"]: e for e in ev if "id" in e}
nvtx = [e for e in ev if e.get("layer") == "nvtx"]


def window(name):
    r = [e for e in nvtx if e["name"] == name]
    assert len(r) == 1, f"{len(r)} ranges named {name}"
    return r[0]["ts"], r[0]["ts"] + r[0]["dur"]


def inside(e, w):
    return w[0] <= e["ts"] and e["ts"] + e.get("dur", 0) <= w[1]


bad = 0
emit = window("emit")
aten = [e for e in nvtx if e["name"].startswith("aten::") and inside(e, emit)]
got = Counter(e["name"].split(",")[0] for e in aten)
want = Counter(prof["ops"])
print(f"{'aten op':40} {'nvtx':>6} {'profiler':>8}")
for name in sorted(set(got) | set(want)):
    flag = "" if got[name] == want[name] else "  <-- differs"
    bad += bool(flag)
    print(f"{name:40} {got[name]:6} {want[name]:8}{flag}")
nest = 0
for e in aten:
    p = byid.get(e.get("parent"))
    if p and p.get("layer") == "nvtx" and p["name"].startswith("aten::"):
        ok = (p["tid"] == e["tid"] and inside(e, (p["ts"], p["ts"] + p["dur"]))
              and e["args"]["depth"] == p["args"]["depth"] + 1)
        nest += not ok
print(f"aten ranges: {len(aten)}, badly nested: {nest}")
bad += nest > 0

rt_in = [e for e in ev if e.get("layer") == "runtime" and inside(e, emit)]
orphans = sum(1 for e in rt_in
              if not (byid.get(e.get("parent"), {}).get("name", "")).startswith("aten::"))
holders = {e.get("parent") for e in rt_in}
print(f"runtime calls in emit: {len(rt_in)}, with no aten range above: {orphans}; "
      f"aten ranges holding a runtime call: {len([a for a in aten if a['id'] in holders])}")

prof_w = window("profiled")
rt = Counter(e["name"] for e in ev if e.get("layer") == "runtime" and inside(e, prof_w))
print(f"\n{'runtime function':40} {'cuthook':>8} {'profiler':>8}")
for name in sorted(prof["runtime"]):
    flag = "" if rt[name] == prof["runtime"][name] else "  <-- differs"
    bad += bool(flag)
    print(f"{name:40} {rt[name]:8} {prof['runtime'][name]:8}{flag}")
print(f"(cuthook saw {len(set(rt) - set(prof['runtime']))} functions the profiler left out: "
      f"{', '.join(sorted(set(rt) - set(prof['runtime']))[:12])})")
sys.exit(1 if bad else 0)
