"""check_trace.py: what must hold of any trace cut writes of a real program, whatever it is.

usage: python check_trace.py TRACE.jsonl [--sorted] [--died]

Every line parses; a header comes first and a trailer last (--died: the program died of a
signal, and libcuthook writes no trailer then; cuthook(1)); the trailer's counts equal what
the trace holds and nothing was lost; every gpu event is linked by args.corr to the API call of
its process that submitted it and starts no earlier than that call; no duration is negative;
with --sorted, timestamps never go back. Prints one summary line; exits 1 on any failure.
"""
import collections
import json
import sys

path = sys.argv[1]
want_sorted = "--sorted" in sys.argv[2:]
died = "--died" in sys.argv[2:]
bad = []
events = []
for n, line in enumerate(open(path), 1):
    try:
        events.append(json.loads(line))
    except ValueError as e:
        bad.append(f"{path}:{n}: not JSON: {e}")
if not events:
    print(f"{path}: empty")
    sys.exit(1)
heads = [e for e in events if e.get("layer") == "meta" and e.get("name") == "header"]
trailers = [e for e in events if e.get("layer") == "meta" and e.get("name") == "trailer"]
if events[0].get("name") != "header":
    bad.append("first line is not a header")
if not trailers and not died:
    bad.append("no trailer")
layers = collections.Counter(e.get("layer") for e in events if e.get("layer") != "meta")
lost = sum(t["args"].get("lost", 0) for t in trailers)
if lost:
    bad.append(f"lost {lost}")
lost_records = [e for e in events if e.get("name") == "lost"]
if lost_records:
    bad.append(f"{len(lost_records)} lost records: {lost_records[0]['args']}")
# trailers of one file (one per process): their layer counts add up to what is there
tl = collections.Counter()
for t in trailers:
    for k, v in t["args"].get("layers", {}).items():
        tl[k] += v
for k in (set(tl) | set(layers)) if trailers else ():
    if k == "meta":
        continue
    if tl[k] != layers[k]:
        bad.append(f"layer {k}: trailer says {tl[k]}, trace holds {layers[k]}")
calls = {}
for e in events:
    c = (e.get("args") or {}).get("corr")
    if e.get("layer") in ("api", "runtime") and c is not None:
        calls.setdefault((e.get("pid"), c), e)
gpu = [e for e in events if e.get("layer") == "gpu"]
unlinked = [g for g in gpu if (g.get("pid"), g["args"].get("corr")) not in calls]
early = [g for g in gpu if (g.get("pid"), g["args"].get("corr")) in calls and
         g["ts"] < calls[(g.get("pid"), g["args"]["corr"])]["ts"]]
neg = [e for e in events if e.get("dur", 0) < 0]
if unlinked:
    bad.append(f"{len(unlinked)} gpu events not linked to a call, e.g. {unlinked[0]}")
if early:
    bad.append(f"{len(early)} gpu events start before their call, e.g. {early[0]['name']}")
if neg:
    bad.append(f"{len(neg)} negative durations")
if want_sorted:
    ts = [e["ts"] for e in events if "ts" in e]
    back = sum(1 for a, b in zip(ts, ts[1:]) if b < a)
    if back:
        bad.append(f"{back} timestamps go back")
g = {}
for t in trailers:
    for k, v in (t["args"].get("gpu") or {}).items():
        if isinstance(v, int) and k in ("timed", "untimed", "capture_skips", "starts"):
            g[k] = g.get(k, 0) + v
cats = collections.Counter(e.get("cat") for e in gpu)
print(f"{path}: {len(events)} lines, layers {dict(layers)}, gpu {dict(cats)}, trailer gpu {g}, "
      f"processes {len(trailers)}: {'OK' if not bad else 'FAIL'}")
for b in bad[:10]:
    print("  " + b)
sys.exit(1 if bad else 0)
