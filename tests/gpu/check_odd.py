"""check_odd.py: cut's gpu events of progs/odd_apis.cu (or reset_midway.cu, release_midway.cu,
contexts.cu, two_gpus.cu) against what its kernels read of the GPU's own clock (%globaltimer).

usage: python check_odd.py TRACE.jsonl PROGRAM-OUTPUT [-v]

The program's lines are "PROG: truth NAME START END", a kernel (or a graph launch: its first
kernel's start, its last kernel's end), in the order they were launched (NAME: the kernel's,
then ":case" where one kernel serves several, or "@device" where the program uses more than
one GPU: each has a %globaltimer of its own, fitted apart), then "PROG: done". Each must be in the trace as
often as it ran. The two clocks are put on one line by a fit of the ends cut measured (offset
and rate: %globaltimer runs some ppm off the host's clock, 15 on an H100, which cut's mapping
follows; one offset over a run of a third of a second left 2 us), and each kernel must then
start and end where its own clock says, within TOL: 5 us (a kernel's first instruction comes up
to a microsecond or two after the start an event dates) plus the largest error the trailer
states for the clock mapping. A start marked "bound" may be early by any amount (the work
started no earlier than it), an end marked "bound" late by any amount, a start from the call
late by as long as the call ran (cut-events(5): the driver hands work over inside the call).
The first of each case (round 0, which loads the kernels) is left out, and one piece in 20 of
a case may be off (a kernel that waited on the device for something no event sees); more fail,
as does a case whose starts, not bounds, come more than 3 us late at the median.
The cases that wait for something no launch of theirs names (a host function, another stream's
event, the legacy stream's implicit wait) are what this catches: a start taken from the call
there would be 100-200 us early; so are graphs handed over in parts (a start from the return
up to 32 us late). odd_apis.cu's copies and memsets of each round must be there too. Prints a
table (per case: |dstart| and |dend|, their median and largest; the signed median start of
the starts that are not bounds, + late) and one line (-v: every piece off); exits 1 on any
failure.
"""
import json
import statistics
import sys
from collections import defaultdict

trace, output = sys.argv[1], sys.argv[2]
verbose = "-v" in sys.argv[3:]
truth = defaultdict(list)  # by kernel, in launch order: (case, start, end)
done, prog = False, None
for line in open(output):
    f = line.split()
    if len(f) == 5 and f[1] == "truth" and f[0].endswith(":"):
        prog = f[0]
        truth[f[2].split(":")[0].split("@")[0]].append((f[2], int(f[3]), int(f[4])))
    done = done or (len(f) == 2 and f[0] == prog and f[1] == "done")
bad = []
if not done or not truth:
    bad.append(f"{output}: the program did not finish")

cut = defaultdict(list)
kinds = defaultdict(int)
call_dur = {}
error_ns = 0
for line in open(trace):
    e = json.loads(line)
    a = e.get("args") if isinstance(e.get("args"), dict) else {}
    if e.get("name") == "trailer":
        error_ns = a.get("gpu", {}).get("error_ns", 0)
    if e.get("layer") == "api" and "corr" in a:
        call_dur[a["corr"]] = e.get("dur", 0)
    if e.get("layer") != "gpu":
        continue
    graph = e["name"].startswith("graph")
    kinds[e.get("cat") if e.get("cat") == "kernel" or graph else e["name"]] += 1
    name = "graph" if graph else e["name"]
    if name in truth:
        cut[name].append(e)
tol = 5000 + error_ns

pairs = []  # (case, truth start, truth end, cut event), in each kernel's launch order
for name, t in truth.items():
    c = sorted(cut[name], key=lambda e: e["args"]["corr"])
    if len(c) != len(t):
        bad.append(f"{name}: {len(c)} in the trace, {len(t)} ran")
    pairs += [(tc[0], tc[1], tc[2], e) for tc, e in zip(t, c)]


# A case whose starts (not bounds) come this late at the median is wrong as a rule, not by a
# piece: a graph handed over in parts, timed from its launch's return, came 5-9 us late.
LATE_MEDIAN = 3000


def fit(points):
    """Least squares line through (x, y), without what lies 20 us off their median (an END
    that waited out another context's turn: 284 us in one run, which alone tilted the line a
    thousand ppm), then once more without what lies 3 us off the first line."""
    if points:
        mid = statistics.median(y for _, y in points)
        points = [(x, y) for x, y in points if abs(y - mid) <= 20000] or points
    for _ in range(2):
        n = len(points)
        if n < 2:
            return (points[0][1] if points else 0), 0.0
        mx = sum(x for x, _ in points) / n
        my = sum(y for _, y in points) / n
        sxx = sum((x - mx) ** 2 for x, _ in points)
        b = sum((x - mx) * (y - my) for x, y in points) / sxx if sxx else 0.0
        a = my - b * mx
        points = [(x, y) for x, y in points if abs(y - a - b * x) <= 3000] or points
    return a, b


# cut's time less the GPU's, as a line in the GPU's time (seconds from the first end, for the
# float's sake), over the ends cut measured: a line a GPU (the case's "@device").
def domain(case):
    return case.split("@")[1] if "@" in case else ""


lines = {}
for dom in {domain(p[0]) for p in pairs}:
    mine = [p for p in pairs if domain(p[0]) == dom]
    t_first = min(p[2] for p in mine)
    base = statistics.median([e["ts"] + e["dur"] - te for _, _, te, e in mine if "dur" in e] or [0])
    ends = [((te - t_first) / 1e9, e["ts"] + e["dur"] - te - base) for _, _, te, e in mine
            if "dur" in e and e["args"].get("end") is None and "clamped" not in e["args"]]
    lines[dom] = (t_first, base) + fit(ends)
rate = statistics.median([ln[3] for ln in lines.values()] or [0])


def to_cut(t, case):
    t_first, base, a0, b = lines[domain(case)]
    return t + base + a0 + b * (t - t_first) / 1e9


print(f"{'work':22} {'n':>3} {'|dstart| p50':>12} {'max':>8} {'|dend| p50':>10} {'max':>8} "
      f"{'bounds':>6} {'off':>4} {'dstart p50':>10}   (ns; tolerance {tol}; clocks {rate:+.0f} ns/s apart)")
rows = defaultdict(lambda: {"ds": [], "de": [], "late": [], "bounds": 0, "off": []})
seen = defaultdict(int)
for case, ts, te, e in pairs:
    seen[case] += 1
    if seen[case] == 1:  # round 0, which loaded the kernels
        continue
    a, r = e["args"], rows[case]
    if "dur" not in e:
        r["off"].append(f"{case} #{seen[case] - 1}: no duration ({a.get('end')})")
        continue
    d = e["ts"] - to_cut(ts, case)
    end = e["ts"] + e["dur"] - to_cut(te, case)
    sb, eb = a.get("start") == "bound", a.get("end") == "bound"
    late = tol + (call_dur.get(a.get("corr"), 0) if a.get("start") in ("call", "twins") else 0)
    if d > late or (d < -tol and not sb):
        r["off"].append(f"{case} #{seen[case] - 1}: starts {d / 1e3:+.1f} us from its own clock's"
                        f" start (start {a.get('start', 'event')})")
    if end < -tol or (end > tol and not eb):
        r["off"].append(f"{case} #{seen[case] - 1}: ends {end / 1e3:+.1f} us from its own clock's"
                        f" end (end {a.get('end', 'event')})")
    r["ds"].append(abs(d))
    r["de"].append(abs(end))
    if not sb:
        r["late"].append(d)
    r["bounds"] += sb or eb
offs = []
for case, r in sorted(rows.items()):
    n = len(r["ds"])
    if n:
        signed = f"{statistics.median(r['late']):10.0f}" if r["late"] else f"{'-':>10}"
        print(f"{case:22} {n:3} {statistics.median(r['ds']):12.0f} {max(r['ds']):8.0f} "
              f"{statistics.median(r['de']):10.0f} {max(r['de']):8.0f} {r['bounds']:6} "
              f"{len(r['off']):4} {signed}")
    offs += r["off"]
    if len(r["off"]) > max(1, (n + len(r["off"])) // 20):
        bad.append(f"{len(r['off'])} of {case} off: " + "; ".join(r["off"][:3]))
    if r["late"] and statistics.median(r["late"]) > LATE_MEDIAN:
        bad.append(f"{case} starts a median {statistics.median(r['late']) / 1e3:.1f} us late")

want = {"memset": 2 * len(truth.get("k_plain", [])),
        "memcpy HtoD": len(truth.get("k_plain", []))} if prog == "odd_apis:" else {}
for k, n in want.items():
    if kinds[k] < n:
        bad.append(f"{kinds[k]} {k} pieces, want {n} at least (one a round each)")
print(f"{trace}: {len(pairs)} kernels and graph launches of {len(rows)} kinds against their own "
      f"clocks, {len(offs)} off; {kinds['memset']} memsets, {kinds['memcpy HtoD']} copies HtoD; "
      + ("OK" if not bad else f"FAIL: {len(bad)}: " + "; ".join(bad[:3])))
for o in offs if verbose else []:
    print("  " + o)
sys.exit(1 if bad else 0)
