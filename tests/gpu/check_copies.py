"""check_copies.py: cut's copies and memsets against CUPTI's (torch.profiler) from the same run of
tests/gpu/torch_copies.py. Prints a table for BENCHMARKS.md and exits 1 when a rule of
cut-events(5) is broken.

usage: python check_copies.py CUT.jsonl PROFILE.json

Pieces are paired in device start order within (kind, direction, bytes), the last ones of cut's
(its trace also holds the warm-up round) against the profiler's. Per class and memory: CUPTI's
median duration, cut's, their ratio, the median |start difference| (less the median offset
between the two clocks, over the pairs whose end cut measured), and how many of cut's pieces say their start or end is
only a bound (args.start, args.end "bound"). Rules checked on every piece of the trace: none
starts before its submitting call began, none has a duration of 0 unless it says a bound or was
clamped, a bound holds against CUPTI (the work started no earlier than a start that is a bound,
ended no later than an end that is one, within 2 us), and every 64 MiB copy lasts what CUPTI
says within 5 % (issue 25: a pageable one came out 500 times short), bound or not, and the
trailer's mapping error where its start came from its call (a host time, its end a GPU one).
"""
import json
import statistics
import sys
from collections import defaultdict

cut_path, prof_path = sys.argv[1], sys.argv[2]
cut = [json.loads(line) for line in open(cut_path)]
prof = json.load(open(prof_path))
pev = prof["traceEvents"] if isinstance(prof, dict) else prof
BOUND_SLACK = 2000  # ns: the two clocks' mapping errors


def direction(name):
    for d in ("HtoD", "DtoH", "DtoD", "HtoH", "PtoP"):
        if d in name:
            return d
    return "?"


P = defaultdict(list)  # (cat, dir, bytes) -> [(start ns, dur ns, memory)]
for e in pev:
    if e.get("ph") != "X" or e.get("cat") not in ("gpu_memcpy", "gpu_memset"):
        continue
    a = e.get("args", {})
    n = int(a.get("bytes", -1))
    cat = "memcpy" if e["cat"] == "gpu_memcpy" else "memset"
    d = direction(e["name"]) if cat == "memcpy" else "-"
    mem = "pageable" if "Pageable" in e["name"] else "pinned" if "Pinned" in e["name"] else ""
    P[(cat, d, n)].append((float(e["ts"]) * 1000, float(e["dur"]) * 1000, mem))

calls = {}
for e in cut:
    c = (e.get("args") or {}).get("corr")
    if e.get("layer") in ("api", "runtime") and c is not None:
        calls.setdefault((e["pid"], c), e)
C = defaultdict(list)
bad = []
mapping_err = max((e["args"].get("gpu", {}).get("error_ns", 0) for e in cut
                   if e.get("layer") == "meta" and e.get("name") == "trailer"), default=0)
unknown = 0
for e in cut:
    if e.get("layer") != "gpu" or e.get("cat") not in ("memcpy", "memset"):
        continue
    a = e.get("args") or {}
    if "dur" not in e:  # never timed: the process ended first
        unknown += 1
        continue
    sb, eb = a.get("start") == "bound", a.get("end") == "bound"
    d = direction(e["name"]) if e["cat"] == "memcpy" else "-"
    C[(e["cat"], d, int(a.get("bytes", -1)))].append((e["ts"], e["dur"], sb, eb, a.get("start") == "call"))
    call = calls.get((e["pid"], a.get("corr")))
    if call and e["ts"] < call["ts"]:
        bad.append(f"{e['name']} {a.get('bytes')} B starts {call['ts'] - e['ts']} ns before its call")
    if e["dur"] == 0 and not (sb or eb or "clamped" in a):
        bad.append(f"{e['name']} {a.get('bytes')} B has a duration of 0 and says nothing of it")

# Pairs, and the offset between the clocks over all of them.
pairs = {}
for key in P:
    p = sorted(P[key])
    c = sorted(C.get(key, []))[-len(p):]
    if not c:
        bad.append(f"{key}: cut has none of the profiler's {len(p)}")
        continue
    pairs[key] = (p[-len(c):], c)
allpairs = [(pp, cc) for p, c in pairs.values() for pp, cc in zip(p, c)]
# The offset from the ends cut measured (not bounds): a start that is a bound is early by the
# time its call took to hand the work over, by design, and most short copies' are (over every
# pair's start, the offset came out some us early, and bounds that held looked 2-3 us late).
measured = [(pp, cc) for pp, cc in allpairs if not cc[3]] or allpairs
offset = statistics.median(cc[0] + cc[1] - pp[0] - pp[1] for pp, cc in measured) if measured else 0
print(f"clock offset cut - CUPTI (median over the {len(measured)} pairs whose end cut measured): "
      f"{offset / 1e3:.1f} us; over every pair's start "
      f"{statistics.median(cc[0] - pp[0] for pp, cc in allpairs) / 1e3 if allpairs else 0:.1f} us; "
      f"copies and memsets cut never timed: {unknown}")
print(f"{'class':<30} {'n':>3} {'CUPTI med':>12} {'cut med':>12} {'cut/CUPTI':>9} "
      f"{'|dstart| med':>12} {'start bd':>8} {'end bd':>6}")
for key in sorted(pairs, key=lambda k: (k[0], k[1], k[2])):
    p, c = pairs[key]
    # One class may hold two memories (pageable and pinned, in turn within a round): each.
    for mem in sorted(set(m for _, _, m in p)):
        idx = [i for i, x in enumerate(p) if x[2] == mem]
        pd = [p[i][1] for i in idx]
        cd = [c[i][1] for i in idx]
        ds = [abs(c[i][0] - offset - p[i][0]) for i in idx]
        nsb = sum(1 for i in idx if c[i][2])
        neb = sum(1 for i in idx if c[i][3])
        pm, cm = statistics.median(pd), statistics.median(cd)
        label = f"{key[0]} {key[1]} {key[2]} B {mem}".strip()
        print(f"{label:<30} {len(idx):>3} {pm:>10.0f}ns {cm:>10.0f}ns {cm / pm if pm else 0:>9.2f} "
              f"{statistics.median(ds):>10.0f}ns {nsb:>8} {neb:>6}")
        for i in idx:
            ps, pe, cs, ce = p[i][0], p[i][0] + p[i][1], c[i][0] - offset, c[i][0] - offset + c[i][1]
            if c[i][2] and cs > ps + BOUND_SLACK:
                bad.append(f"{label}: a start that is a bound, {cs - ps:.0f} ns after CUPTI's")
            if c[i][3] and ce < pe - BOUND_SLACK:
                bad.append(f"{label}: an end that is a bound, {pe - ce:.0f} ns before CUPTI's")
            # A start from the call is a host time and the end a GPU time: the mapping's
            # error (the trailer's) is in the duration too.
            tol = 0.05 * p[i][1] + (mapping_err if c[i][4] else 0)
            if key[2] >= 64 << 20 and abs(c[i][1] - p[i][1]) > tol:
                bad.append(f"{label}: {c[i][1]} ns against CUPTI's {p[i][1]:.0f} (over 5 %"
                           f"{' and the mapping error' if c[i][4] else ''})")
for b in bad[:20]:
    print("FAIL", b)
sys.exit(1 if bad else 0)
