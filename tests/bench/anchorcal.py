#!/usr/bin/env python3
"""anchorcal.py: anchorcal's lines (stdin) as a table, one row a way of dating an event:
the narrowest try of a group (median and p90 over the groups), every try of the group taken
together (the offsets all of them allow), how often a way's narrowest try disagrees with what
every way together allows (a bound that did not hold), and where its narrowest try's middle
lies from the middle of what all ways allow (median, ns)."""
import collections
import statistics
import sys


def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))]


tries = collections.defaultdict(list)  # (group, way) -> [(width, lo, hi, ack)]
for line in sys.stdin:
    f = line.split()
    if len(f) != 7:
        continue
    g, way, _, width, lo, hi, ack = f
    tries[(int(g), way)].append((int(width), float(lo), float(hi), int(ack)))

ways = sorted({w for _, w in tries}, key=["ack", "query", "both", "call", "kern"].index)
groups = sorted({g for g, _ in tries})
every = {}  # group -> (lo, hi) over every way's tries
for g in groups:
    ts = [t for w in ways for t in tries[(g, w)]]
    every[g] = (max(t[1] for t in ts), min(t[2] for t in ts))

print("| way | narrowest, median / p90 | all tries together, median | disagree | "
      "middle - all's middle, median | ack after query, median |")
print("|---|---|---|---|---|---|")
for w in ways:
    narrow, together, off, acks = [], [], [], []
    bad = 0
    for g in groups:
        ts = tries[(g, w)]
        best = min(ts)
        narrow.append(best[0])
        together.append(min(t[2] for t in ts) - max(t[1] for t in ts))
        lo, hi = every[g]
        if best[2] < lo or best[1] > hi:
            bad += 1
        if lo <= hi:
            off.append((best[1] + best[2]) / 2 - (lo + hi) / 2)
        acks += [t[3] for t in ts if t[3]]
    print("| %s | %d / %d | %.0f | %d of %d | %.0f | %s |" % (
        w, statistics.median(narrow), pct(narrow, 0.9), statistics.median(together), bad,
        len(groups), statistics.median(off) if off else float("nan"),
        "%d" % statistics.median(acks) if acks else "-"))
empty = sum(1 for g in groups if every[g][0] > every[g][1])
if "kern" in ways and len(ways) > 1:
    # kern dates the kernel's end, the others the event itself: how much later than the end
    # the event is stamped, by what every group allows (each group: the other ways' tries
    # together against kern's narrowest).
    lo, hi, per = -1e300, 1e300, []
    for g in groups:
        ts = [t for w in ways if w != "kern" for t in tries[(g, w)]]
        L, H = max(t[1] for t in ts), min(t[2] for t in ts)
        k = min(tries[(g, "kern")])
        lo, hi = max(lo, L - k[2]), min(hi, H - k[1])
        per.append((H - k[1]) - (L - k[2]))
    print("\nthe event after the kernel is stamped between %.0f and %.0f ns after the kernel's "
          "end as it reads it (every group; one group alone allows %.0f ns, median)"
          % (lo, hi, statistics.median(per)))
print("\nall ways together: median %.0f ns wide; empty (the ways contradict) in %d of %d groups"
      % (statistics.median(every[g][1] - every[g][0] for g in groups), empty, len(groups)))
