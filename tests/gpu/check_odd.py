"""check_odd.py: cut's gpu events of progs/odd_apis.cu against what its kernels read of the
GPU's own clock (%globaltimer).

usage: python check_odd.py TRACE.jsonl PROGRAM-OUTPUT [-v]

Each kernel the program launched (and each graph launch: from its first kernel's start to its
last kernel's end) must be in the trace as often as the program says it ran, and each must
start and end where its own clock says, the clocks aligned by the median offset over every
pair (round 0, which loads the kernels, left out): within TOL (5 us, a kernel's first instruction coming up to a microsecond or two after
the start an event dates, plus the largest error the trailer states for the clock mapping). A
start marked "bound" may be early by any amount (the work started no earlier than it), an end
marked "bound" late by any amount. The cases that wait for something no launch of theirs
names (a host function, another stream's event, the legacy stream's implicit wait) are what
this catches: a start taken from the call would be 100-200 us early. The copies and memsets
of each round must be there too. Prints a table and one line; exits 1 on any failure.
"""
import json
import statistics
import sys
from collections import defaultdict

trace, output = sys.argv[1], sys.argv[2]
truth = defaultdict(list)  # by kernel, in launch order: (case, start, end)
done = False
for line in open(output):
    f = line.split()
    if line.startswith("odd_apis: truth ") and len(f) == 5:
        truth[f[2].split(":")[0]].append((f[2], int(f[3]), int(f[4])))
    done = done or line.startswith("odd_apis: done")
rounds = len(truth.get("k_plain", []))
bad = []
if not done or not rounds:
    bad.append(f"{output}: the program did not finish ({rounds} rounds)")

cut = defaultdict(list)
kinds = defaultdict(int)
error_ns = 0
for n, line in enumerate(open(trace), 1):
    e = json.loads(line)
    if e.get("name") == "trailer":
        error_ns = e["args"].get("gpu", {}).get("error_ns", 0)
    if e.get("layer") != "gpu":
        continue
    kinds[e["name"] if e.get("cat") != "kernel" and not e["name"].startswith("graph") else e.get("cat")] += 1
    name = "graph" if e["name"].startswith("graph") else e["name"]
    if name in truth:
        cut[name].append(e)
tol = 5000 + error_ns

pairs = {}
for name, t in truth.items():
    c = sorted(cut[name], key=lambda e: e["args"]["corr"])
    if len(c) != len(t):
        bad.append(f"{name}: {len(c)} in the trace, {len(t)} ran")
    pairs[name] = list(zip(t, c))
offs = [c["ts"] - t[1] for p in pairs.values() for t, c in p
        if c["args"].get("start") != "bound" and "dur" in c]
off = statistics.median(offs) if offs else 0

print(f"{'work':22} {'n':>3} {'|dstart| p50':>12} {'max':>8} {'|dend| p50':>10} {'max':>8} "
      f"{'bounds':>6}   (ns; tolerance {tol})")
rows = defaultdict(lambda: ([], [], [0]))  # by case: |dstart|, |dend|, bounds
seen = defaultdict(int)
for name in sorted(pairs):
    for i, (t, c) in enumerate(pairs[name]):
        case, a = t[0], c["args"]
        seen[case] += 1
        if seen[case] == 1:  # round 0, which loaded the kernels
            continue
        if "dur" not in c:
            bad.append(f"{case} #{i}: no duration ({a.get('end')})")
            continue
        d = c["ts"] - off - t[1]
        end = c["ts"] + c["dur"] - off - t[2]
        sb, eb = a.get("start") == "bound", a.get("end") == "bound"
        if d > tol or (d < -tol and not sb):
            bad.append(f"{case} #{i}: starts {d / 1e3:+.1f} us from its own clock's start"
                       f" (start {a.get('start', 'event')})")
        if end < -tol or (end > tol and not eb):
            bad.append(f"{case} #{i}: ends {end / 1e3:+.1f} us from its own clock's end"
                       f" (end {a.get('end', 'event')})")
        rows[case][0].append(abs(d))
        rows[case][1].append(abs(end))
        rows[case][2][0] += sb or eb
for case, (ds, de, nb) in sorted(rows.items()):
    print(f"{case:22} {len(ds):3} {statistics.median(ds):12.0f} {max(ds):8.0f} "
          f"{statistics.median(de):10.0f} {max(de):8.0f} {nb[0]:6}")

want = {"memset": 2 * rounds, "memcpy HtoD": rounds}
for k, n in want.items():
    if kinds[k] < n:
        bad.append(f"{kinds[k]} {k} pieces, want {n} at least (one a round each)")
print(f"{trace}: {sum(len(p) for p in pairs.values())} kernels and graph launches of "
      f"{len(pairs)} kinds over {rounds} rounds against their own clocks, "
      f"{kinds['memset']} memsets, {kinds['memcpy HtoD']} copies HtoD; "
      + ("OK" if not bad else f"FAIL: {len(bad)}: " + "; ".join(bad[:4])))
for b in bad[4:] if "-v" in sys.argv[3:] else []:
    print("  " + b)
sys.exit(1 if bad else 0)
