"""share_busy.py: per process of a shared GPU, its busy time by CUPTI (its own torch.profiler)
against cut's, told apart (cutstat) and as recorded (cutstat -O), and how long the processes'
work overlapped by each (tests/gpu/share_busy.sh).

usage: python share_busy.py TITLE MERGED.jsonl TOLD.json RECORDED.json PROFILE.json...

Busy is the time covered by at least one piece of a process's work (kernels, copies,
memsets): the union of its intervals, CUPTI's over its profile (which holds all its work),
cut's over its trace. The overlap is the processes' busy times, summed, less the union of
all their work: how long two ran at once, which a GPU without MPS never does. Prints a table
and, last, "target: ..." saying whether every process came within 5 % of CUPTI and the
overlap told apart within 1 % of the time the GPU was busy.
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts", "lib"))
from spans import overlap, union  # noqa: E402

title, merged, told_path, rec_path = sys.argv[1:5]
profiles = sys.argv[5:]


# CUPTI: each profile's process and its work (ns; all profiles share the host's clock).
cupti, kinds = {}, {}
for path in profiles:
    ev = json.load(open(path))["traceEvents"]
    pid = next(e["pid"] for e in ev if e.get("cat") == "cuda_runtime")
    cupti[pid] = [(float(e["ts"]) * 1e3, (float(e["ts"]) + float(e["dur"])) * 1e3)
                  for e in ev if e.get("ph") == "X"
                  and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")
                  and not e.get("name", "").startswith("cuthook_clock")]  # libcuthook's own
    kinds[pid] = path.rsplit(".", 2)[-2] if path.count(".") >= 2 else "?"
# cut: the trailers' word on each process's GPU times, and its work as recorded.
stated, cut = {}, {}
for line in open(merged):
    e = json.loads(line)
    if e["layer"] == "gpu":
        cut.setdefault(e["pid"], []).append((e["ts"], e["ts"] + e["dur"]))
    elif e["layer"] == "meta" and e["name"] == "trailer" and "gpu" in e.get("args", {}):
        stated[e["pid"]] = e["args"]["gpu"].get("error_ns", 0)
told = json.load(open(told_path)).get("gpu", {})
rec = json.load(open(rec_path)).get("gpu", {})
busy_told = {p["pid"]: p["busy_ns"] for p in told.get("processes", [])}
busy_rec = {p["pid"]: p["busy_ns"] for p in rec.get("processes", [])}


def pct(x, ref):
    return f"{100 * (x - ref) / ref:+7.1f} %" if ref else "     -  "


print(f"== {title}")
print(f"{'pid':>8} {'kind':<6} {'CUPTI ms':>10} {'cut told ms':>12} {'vs CUPTI':>10} "
      f"{'recorded ms':>12} {'vs CUPTI':>10} {'pieces':>13} {'error_ns':>10}")
ok = True
for pid in sorted(cupti):
    c = union(cupti[pid])
    t, r = busy_told.get(pid, 0), busy_rec.get(pid, 0)
    ok = ok and c > 0 and abs(t - c) <= 0.05 * c
    print(f"{pid:>8} {kinds[pid]:<6} {c / 1e6:>10.3f} {t / 1e6:>12.3f} {pct(t, c):>10} "
          f"{r / 1e6:>12.3f} {pct(r, c):>10} {len(cupti[pid]):>6}/{len(cut.get(pid, [])):<6} "
          f"{stated.get(pid, '-'):>10}")
shared = union([x for v in cupti.values() for x in v])
dev = (told.get("devices") or [{}])[0]
ov_told, ov_rec = dev.get("overlap_ns", 0), dev.get("overlap_recorded_ns", 0)
print(f"overlap: CUPTI {overlap(list(cupti.values())) / 1e6:.3f} ms of {shared / 1e6:.3f} ms "
      f"busy; cut as recorded {ov_rec / 1e6:.3f} ms, told apart {ov_told / 1e6:.3f} ms of "
      f"{dev.get('busy_ns', 0) / 1e6:.3f} ms ({dev.get('resolved', 0)} pieces lost "
      f"{dev.get('resolved_ns', 0) / 1e6:.3f} ms)")
ok = ok and ov_told <= 0.01 * max(dev.get("busy_ns", 0), 1)
print(f"target: {'met' if ok else 'NOT met'} (each process within 5 % of CUPTI, overlap told "
      f"apart within 1 % of the busy time)")
