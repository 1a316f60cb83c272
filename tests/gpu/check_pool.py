"""check_pool.py: cut's gpu events of progs/pool_wait.cu against what its kernels read of the
GPU's own clock.

usage: python check_pool.py TRACE.jsonl PROGRAM-OUTPUT

Each round, `after_free` on stream B waited for `hold` on stream A or not, as the program says
(a wait no call names: the memory pool's); cut must say the same: after_free starting no
earlier than hold's end where it waited, and lasting its 5 us (not the wait) in every round,
each within the error the trailer states for the clock mapping (2 us at least). The first of
each kernel (the program's warm-up) is left out. Prints one line; exits 1 on any failure.
"""
import json
import sys

trace, output = sys.argv[1], sys.argv[2]
flags = None
for line in open(output):
    if line.startswith("pool_wait: waited "):
        flags = line.split()[-1]
if flags is None:
    print(f"FAIL {output}: no 'pool_wait: waited' line")
    sys.exit(1)
work = {"hold": [], "after_free": []}
tol = 2000
for line in open(trace):
    e = json.loads(line)
    if e.get("name") == "trailer":
        tol = max(tol, e["args"].get("gpu", {}).get("error_ns", 0))
    if e.get("layer") != "gpu":
        continue
    for k in work:
        if k in e["name"]:
            work[k].append(e)
bad = []
for k in work:
    work[k] = sorted(work[k], key=lambda e: e["args"]["corr"])[1:]
if not (len(work["hold"]) == len(work["after_free"]) == len(flags)):
    bad.append(f"{len(work['hold'])} hold and {len(work['after_free'])} after_free for {len(flags)} rounds")
for i, (h, a, f) in enumerate(zip(work["hold"], work["after_free"], flags)):
    waited = a["ts"] >= h["ts"] + h["dur"] - tol
    if waited != (f == "1"):
        bad.append(f"round {i}: the GPU {'waited' if f == '1' else 'did not wait'}, cut says "
                   f"after_free began {(a['ts'] - h['ts'] - h['dur']) / 1e3:.1f} us after hold ended")
    if abs(a["dur"] - 5000) > tol:
        bad.append(f"round {i}: after_free lasted {a['dur'] / 1e3:.1f} us, not 5")
print(f"{trace}: {flags.count('1')} of {len(flags)} rounds waited for the pool (error bound {tol} ns); "
      + ("OK" if not bad else f"FAIL: {len(bad)}: " + "; ".join(bad[:3])))
sys.exit(1 if bad else 0)
