#!/usr/bin/env python3
"""Writes a small synthetic job of 4 ranks (2 hosts) with nvtx, runtime, api, ioctl and gpu
records, in three layouts, and the numbers the DuckDB recipes must give for it, worked out
here from the generator's own events (not by reading the files back).

usage: gen-ranks.py DIR
  DIR/hive/host=nodeN/rank=R/trace.jsonl   no host or rank in the records (rank 3 gzipped)
  DIR/envelope/rankR.jsonl                 host and rank on every record
  DIR/meta/rankR.jsonl                     neither; the header names the host and the
                                           process record the rank
  DIR/expected.json                        per recipe, its rows (see sql-duckdb.sh)
Every rank uses the same pid and tids, as ranks on different machines may. Kernels have the
mangled names real traces have (NCCL's too).
"""
import gzip
import json
import os
import re
import statistics
import sys

RANKS, STEPS, STEP_NS, T0 = 4, 6, 10_000_000, 1_000_000_000
PID, TID2 = 4242, 4243
SLOW = 2  # the straggler: slower forward pass, so it waits least in the all-reduce
# Kernel names as in the samples (samples/ddp-2gpu-hook.jsonl.zst, capture-torch-mlp-gpu...).
NCCL = "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE"
GEMM = "_ZN7cutlass7Kernel2I42cutlass_80_simt_sgemm_128x64_8x5_tn_align1EEvNT_6ParamsE"
RELU = ("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_10AbsFunctorIfEESt5arrayIPcLm2EEEE"
        "viT0_T1_")
API_CAT = {"cuLaunchKernel": "launch", "cuMemcpyHtoDAsync_v2": "transfer",
           "cuStreamSynchronize": "sync", "cuMemsetD8Async": "transfer",
           "cuCtxGetDevice": "query"}


def collective(name):
    """cut-events(5), Names: the identifier is the name, or the n characters after "_Z<n>" or
    "_ZL<n>"; it starts with nccl or rccl and its first run of letters ends in Kernel."""
    m = re.match(r"_ZL?([0-9]+)", name)
    ident = name[m.end():m.end() + int(m.group(1))] if m else name
    return re.match(r"[nr]ccl[A-Za-z]*Kernel(?![A-Za-z])", ident) is not None


def host_of(r):
    return "node%d" % (r // 2)


def rank_events(r):
    """The events of rank r, as dicts in the canonical member order, sorted by ts."""
    ev = []

    def add(ts, layer, name, dur=None, tid=PID, cat=None, **extra):
        e = {"ts": ts}
        if dur is not None:
            e["dur"] = dur
        e.update(pid=PID, tid=tid, layer=layer, name=name)
        if cat:
            e["cat"] = cat
        if layer in ("api", "runtime"):
            e["ret"] = 0
        if extra:
            e["args"] = extra
        ev.append(e)

    corr = 0
    for s in range(STEPS):
        t = T0 + s * STEP_NS
        fwd = 2_000_000 + (500_000 if r == SLOW else 0) + 1_000 * s
        add(t, "nvtx", "step", 9_000_000, cat="range", depth=0)
        add(t + 100_000, "nvtx", "forward", fwd, cat="range", depth=1)
        add(t + 100_000 + fwd + 50_000, "nvtx", "backward", 3_000_000 + 7_000 * r,
            cat="range", depth=1)
        # a launch: runtime call > driver call > ioctl, and the kernel it ran
        corr += 1
        add(t + 200_000, "runtime", "cudaLaunchKernel", 20_000 + 100 * r, cat="launch")
        add(t + 202_000, "api", "cuLaunchKernel", 15_000 + 10 * s, cat="launch",
            corr=corr, stream="0x7")
        add(t + 203_000, "ioctl", "NV_ESC_RM_CONTROL", 3_000 + r, fd=5, dev="nvidiactl")
        gemm = 1_000_000 + 50_000 * r + 100 * s
        add(t + 250_000, "gpu", GEMM, gemm, cat="kernel", corr=corr, stream="0x7", device=0)
        # a copy on a second thread, partly under the kernel
        corr += 1
        add(t + 300_000, "runtime", "cudaMemcpyAsync", 12_000, tid=TID2, cat="transfer")
        add(t + 301_000, "api", "cuMemcpyHtoDAsync_v2", 8_000 + 1_000 * r, tid=TID2,
            cat="transfer", bytes=1 << 20, stream="0x8", corr=corr)
        add(t + 1_100_000 + 1_000 * r, "gpu", "memcpy HtoD", 300_000 + 1_000 * s, tid=TID2,
            cat="memcpy", corr=corr, stream="0x8", device=0, bytes=1 << 20)
        # the all-reduce, overlapping a small compute kernel on another stream
        corr += 1
        add(t + 1_500_000, "api", "cuLaunchKernel", 9_000, cat="launch", corr=corr,
            stream="0x9")
        nccl_at = t + 1_600_000 + 60_000 * r
        nccl = 3_000_000 - (1_200_000 if r == SLOW else 0) + 10 * s + 100 * r
        add(nccl_at, "gpu", NCCL, nccl, cat="kernel", corr=corr, stream="0x9", device=0)
        corr += 1
        add(t + 1_550_000, "api", "cuLaunchKernel", 7_000, cat="launch", corr=corr,
            stream="0x7")
        add(nccl_at + 400_000, "gpu", RELU, 250_000 + 10 * r, cat="kernel", corr=corr,
            stream="0x7", device=0)
        corr += 1
        # starts as the launch before it ends: no gap, and not inside it
        add(t + 1_557_000, "api", "cuMemsetD8Async", 5_000, cat="transfer", corr=corr,
            bytes=4096, stream="0x7")
        add(nccl_at + 3_500_000, "gpu", "memset", 20_000 + r, cat="memset", corr=corr,
            stream="0x7", device=0, bytes=4096)
        add(nccl_at + 3_600_000, "gpu", "graph 0x51", 100_000, cat="graph", stream="0x7",
            device=0)  # neither kernel nor copy: "other" GPU time
        add(t + 2_000_000, "api", "cuCtxGetDevice", None, cat="query")  # untimed
        add(t + 4_500_000, "api", "cuStreamSynchronize", 2_000_000 + 100_000 * r + 10 * s,
            cat="sync", stream="0x7")
        add(t + 4_500_100, "api", "cuCtxGetDevice", 500 + r, cat="query")  # inside the sync
        add(t + 4_600_000, "ioctl", "NV_ESC_RM_CONTROL", 40_000, fd=5, dev="nvidiactl")
    ev.sort(key=lambda e: e["ts"])
    return ev


def fn_table(rows, key="name", count="calls"):
    """cutstat's per-function numbers over rows of (name, dur)."""
    by = {}
    for name, dur in rows:
        by.setdefault(name, []).append(dur)
    whole = sum(sum(d) for d in by.values())
    out = []
    for name, d in by.items():
        out.append({key: name, count: len(d), "total_ns": sum(d), "avg_ns": sum(d) / len(d),
                    "med_ns": statistics.median(d), "min_ns": min(d), "max_ns": max(d),
                    "stddev_ns": statistics.stdev(d) if len(d) > 1 else 0,
                    "time_pct": 100 * sum(d) / whole})
    return sorted(out, key=lambda o: (-o["total_ns"], o[key]))


def union(spans):
    """Length of the union of (start, end) spans, by merging them."""
    total, cur = 0, None
    for a, b in sorted(spans):
        if cur and a <= cur[1]:
            cur[1] = max(cur[1], b)
        else:
            if cur:
                total += cur[1] - cur[0]
            cur = [a, b]
    return total + (cur[1] - cur[0] if cur else 0)


def expected(ranks):
    allev = [(r, e) for r, evs in ranks.items() for e in evs]
    timed = [(r, e) for r, e in allev if "dur" in e]
    exp = {}
    exp["api-functions"] = fn_table((e["name"], e["dur"]) for r, e in timed
                                    if e["layer"] == "api")
    for o in exp["api-functions"]:
        o["category"] = API_CAT[o["name"]]
    exp["runtime-functions"] = fn_table((e["name"], e["dur"]) for r, e in timed
                                        if e["layer"] == "runtime")
    exp["gpu-kernels"] = fn_table(((e["name"], e["dur"]) for r, e in timed
                                   if e["layer"] == "gpu" and e["cat"] == "kernel"),
                                  count="instances")
    copies = {}
    for r, e in timed:
        if e["layer"] == "gpu" and e["cat"] in ("memcpy", "memset"):
            d = "memset" if e["cat"] == "memset" else e["name"].split()[1]
            copies.setdefault(d, []).append((e["dur"], e["args"]["bytes"]))
    exp["gpu-copies"] = [{"dir": d, "count": len(v), "bytes": sum(b for _, b in v),
                          "total_ns": sum(t for t, _ in v),
                          "med_ns": statistics.median(t for t, _ in v),
                          "min_ns": min(t for t, _ in v), "max_ns": max(t for t, _ in v),
                          "gb_per_s": sum(b for _, b in v) / sum(t for t, _ in v)}
                         for d, v in sorted(copies.items())]
    layers = {}
    for r, e in allev:
        n, t = layers.get(e["layer"], (0, 0))
        layers[e["layer"]] = (n + 1, t + e.get("dur", 0))
    exp["layers"] = [{"layer": l, "events": n, "total_ns": t} for l, (n, t) in
                     sorted(layers.items())]
    exp["ranks"], exp["gaps"], exp["straggler-ranks"], exp["stragglers"] = [], [], [], []
    for r, evs in ranks.items():
        gpu = [e for e in evs if e["layer"] == "gpu"]
        span = lambda sel: union((e["ts"], e["ts"] + e["dur"]) for e in gpu if sel(e))
        busy = span(lambda e: True)
        kernel = span(lambda e: e["cat"] == "kernel")
        compute = span(lambda e: e["cat"] == "kernel" and not collective(e["name"]))
        kc = span(lambda e: e["cat"] in ("kernel", "memcpy", "memset"))
        window = max(e["ts"] + e.get("dur", 0) for e in evs) - min(e["ts"] for e in evs)
        total = lambda layer: sum(e.get("dur", 0) for e in evs if e["layer"] == layer)
        exp["ranks"].append({"host": host_of(r), "rank": r, "window_ns": window,
                             "gpu_busy_ns": busy, "compute_ns": compute,
                             "comm_ns": kernel - compute, "memcpy_ns": kc - kernel,
                             "gpu_other_ns": busy - kc, "gpu_idle_ns": window - busy,
                             "gpu_idle_pct": 100 * (window - busy) / window,
                             "api_ns": total("api"), "runtime_ns": total("runtime"),
                             "ioctl_ns": total("ioctl")})
        for tid in (PID, TID2):  # cutgaps' host gaps: outermost calls, time between them
            calls = [e for e in evs if e["layer"] == "api" and e["tid"] == tid and "dur" in e]
            last, first, busy, idle, gaps = None, calls[0]["ts"], 0, 0, 0
            for e in calls:
                if last is not None and e["ts"] < last:
                    continue
                if last is not None and e["ts"] > last:
                    idle, gaps = idle + e["ts"] - last, gaps + 1
                busy, last = busy + e["dur"], e["ts"] + e["dur"]
            exp["gaps"].append({"host": host_of(r), "rank": r, "pid": PID, "tid": tid,
                                "window_ns": last - first, "busy_ns": busy, "idle_ns": idle,
                                "gaps": gaps})
    work = {}
    for r, e in timed:
        if (e["layer"] == "gpu" and e["cat"] == "kernel" and collective(e["name"])) or \
                e["layer"] == "nvtx":
            kind = "nvtx" if e["layer"] == "nvtx" else "collective"
            work.setdefault((kind, e["name"]), {}).setdefault(r, []).append(e["dur"])
    for (kind, name), per in sorted(work.items()):
        totals = {r: sum(d) for r, d in per.items()}
        med = statistics.median(totals.values())
        order = sorted(totals, key=lambda r: (-totals[r], r))
        for place, r in enumerate(order, 1):
            exp["straggler-ranks"].append({
                "kind": kind, "name": name, "rank": r, "count": len(per[r]),
                "total_ns": totals[r], "mean_ns": totals[r] / len(per[r]),
                "median_total_ns": med, "excess_ns": totals[r] - med,
                "excess_pct": 100 * (totals[r] - med) / med, "place": place})
        fast = sorted(totals, key=lambda r: (totals[r], r))[0]
        exp["stragglers"].append({
            "kind": kind, "name": name, "ranks": len(totals), "median_total_ns": med,
            "slowest_rank": order[0], "slowest_total_ns": totals[order[0]],
            "excess_ns": totals[order[0]] - med,
            "excess_pct": 100 * (totals[order[0]] - med) / med, "fastest_rank": fast,
            "fastest_total_ns": totals[fast]})
    exp["stragglers"].sort(key=lambda o: (-o["excess_ns"], o["kind"], o["name"]))
    return exp


def line(e):
    return json.dumps(e, separators=(",", ":")) + "\n"


def write(path, r, evs, envelope, process_rank):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    head = {"ts": T0 - 1000, "pid": PID, "tid": PID, "layer": "meta", "name": "header",
            "args": {"schema": 2, "tool": "gen-ranks", "host": host_of(r), "sorted": True}}
    proc = {"ts": T0 - 1000, "pid": PID, "tid": PID, "layer": "meta", "name": "process",
            "args": {"comm": "train", "rank": r, "world_size": RANKS} if process_rank
            else {"comm": "train"}}
    lost = {"ts": evs[len(evs) // 2]["ts"], "pid": PID, "tid": PID, "layer": "meta", "name": "lost",
            "args": {"count": 5 + r, "reason": "ring buffer full"}}  # cutstat counts 26
    out = []
    for e in [head, proc] + evs[:len(evs) // 2] + [lost] + evs[len(evs) // 2:]:
        if envelope:
            e = dict(list(e.items())[:2 if "dur" in e else 1] + [("host", host_of(r)),
                     ("rank", r)] + list(e.items())[2 if "dur" in e else 1:])
        out.append(line(e))
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "wt") as f:
        f.write("".join(out))


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: gen-ranks.py DIR")
    d = sys.argv[1]
    ranks = {r: rank_events(r) for r in range(RANKS)}
    for r, evs in ranks.items():
        name = "trace.jsonl.gz" if r == 3 else "trace.jsonl"
        write("%s/hive/host=%s/rank=%d/%s" % (d, host_of(r), r, name), r, evs, False, False)
        write("%s/envelope/rank%d.jsonl" % (d, r), r, evs, True, False)
        write("%s/meta/rank%d.jsonl" % (d, r), r, evs, False, True)
    with open(os.path.join(d, "expected.json"), "w") as f:
        json.dump(expected(ranks), f, indent=1)


main()
