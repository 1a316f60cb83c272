#!/usr/bin/env python3
"""Jobs whose ranks ran on hosts with clocks of known offset and drift, for cutmerge's
alignment of hosts by their collectives (tests/scripts/merge-align.sh,
tests/bench/bench-align.sh).

usage: gen-hosts.py job DIR [--ranks 8] [--hosts 4] [--steps 200] [--step-ms 50]
                            [--colls 3] [--jitter-ns 1500] [--lead-ms 500] [--seed 1]
                            [--ppm PPM] [--offset-ms MS]
  A data-parallel job: ranks on hosts node0.. (ranks / hosts each), every step a forward
  and backward pass (runtime and driver calls, GPU kernels) of a length that varies per rank,
  then --colls all-reduces (NCCL kernels that start when their rank gets there and end
  together, within --jitter-ns, as a ring does), now and then a broadcast whose root ends
  early (an end that does not match: what the fit must leave out). Before the first step,
  --lead-ms of start-up with no collective. One file per rank, DIR/rankR.jsonl, on its
  host's clock (node0's is the truth; the others run ahead and fast or slow, and their
  realtime pair is off by up to 1.5 ms, as NTP leaves it); every record's args.true_ns is
  where it truly was, and GPU work's args.true_submit_ns its submit's. DIR/hosts.json: the
  clocks (random, or every host but node0 --offset-ms ahead and --ppm fast).

usage: gen-hosts.py rehost TRACE DIR [--rank 1] [--host vm2] [--offset-ms 3] [--ppm 20]
                                     [--pair-ms 1.5]
  A real trace of one host split in two: DIR/a.jsonl every record but the rank's (those of
  no rank too), DIR/b.jsonl the rank's, as if it ran on another host: its clock offset-ms
  ahead and ppm fast from the trace's first record, its realtime pair pair-ms off, its host
  renamed (a header of its own when it had none). DIR/truth.txt: per record of b.jsonl, in
  its order, its true ts and its true args.submit ("-" when none).
"""
import argparse
import json
import os
import random
import re
import sys

REAL0 = 1_795_000_000_000_000_000  # a realtime clock reading, ns
NCCL_AR = "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE"
NCCL_BC = "_Z31ncclDevKernel_Broadcast_RING_LL24ncclDevKernelArgsStorageILm4096EE"


def dumps(e):
    return json.dumps(e, separators=(",", ":"))


class Clock:
    """A host's clock: it reads t0 + offset + (t - t0) * (1 + ppm / 1e6) at true time t."""

    def __init__(self, offset_ns, ppm, t0, pair_err_ns):
        self.offset, self.ppm, self.t0, self.pair_err = offset_ns, ppm, t0, pair_err_ns

    def __call__(self, t):
        return self.t0 + self.offset + round((t - self.t0) * (1 + self.ppm / 1e6))


def job(a):
    rnd = random.Random(a.seed)
    per = a.ranks // a.hosts
    t0 = 5_000_000_000
    clocks = [Clock(0, 0, t0, 0)]
    for h in range(1, a.hosts):
        off = rnd.choice([-1, 1]) * rnd.randint(100_000, 5_000_000)
        ppm = rnd.uniform(-40, 40)
        clocks.append(Clock(off if a.offset_ms is None else round(a.offset_ms * 1e6),
                            ppm if a.ppm is None else a.ppm, t0,
                            rnd.randint(-1_500_000, 1_500_000)))
    os.makedirs(a.dir, exist_ok=True)
    recs = [[] for _ in range(a.ranks)]
    pid = 4242  # every rank's trainer has the same pid, as containers give them
    corr = [0] * a.ranks

    def rec(r, ts, dur, layer, name, cat=None, args=None, submit=None):
        e = {"ts": ts, "dur": dur, "host": f"node{r // per}", "rank": r, "pid": pid,
             "tid": pid, "layer": layer, "name": name}
        if cat:
            e["cat"] = cat
        if layer in ("api", "runtime"):
            e["ret"] = 0
        e["args"] = dict(args or {})
        if submit is not None:
            e["args"]["submit"] = submit
        recs[r].append(e)

    def launch(r, t, kname, gstart, gdur):
        corr[r] += 1
        rec(r, t, 4000, "runtime", "cudaLaunchKernel", "launch", {"kernel": kname})
        rec(r, t + 500, 3000, "api", "cuLaunchKernel", "launch",
            {"kernel": kname, "corr": corr[r]})
        rec(r, gstart, gdur, "gpu", kname, "kernel",
            {"corr": corr[r], "stream": "0x7", "device": r % per}, submit=t + 500)

    # start-up: module loading and allocations, no collective
    for r in range(a.ranks):
        t = t0 + rnd.randint(0, 2_000_000)
        while t < t0 + a.lead_ms * 1_000_000:
            rec(r, t, rnd.randint(1000, 80_000), "api", "cuModuleGetFunction", "module")
            t += rnd.randint(200_000, 3_000_000)
    start = [t0 + a.lead_ms * 1_000_000] * a.ranks
    gpu_free = list(start)
    for s in range(a.steps):
        arrive = []
        for r in range(a.ranks):
            t = start[r]
            work = a.step_ms * 1_000_000 * rnd.uniform(0.6, 0.8)
            for k in range(8):  # forward and backward kernels
                g0 = max(gpu_free[r], t + 8000)
                gd = int(work / 8 * rnd.uniform(0.8, 1.2))
                launch(r, t, f"_Z6kernel{k}Pf", g0, gd)
                gpu_free[r] = g0 + gd
                t += rnd.randint(20_000, 60_000)
            arrive.append(t)
        for c in range(a.colls):
            bcast = s % 50 == 7 and c == 0
            name = NCCL_BC if bcast else NCCL_AR
            starts = [max(gpu_free[r], arrive[r] + 8000) + rnd.randint(0, 300_000)
                      for r in range(a.ranks)]
            end = max(starts) + rnd.randint(70_000, 90_000)
            for r in range(a.ranks):
                e = end + round(rnd.gauss(0, a.jitter_ns))
                if bcast and r == 0:  # the root is done once its data left
                    e = starts[r] + rnd.randint(3000, 6000)
                e = max(e, starts[r] + 1000)
                launch(r, arrive[r], name, starts[r], e - starts[r])
                gpu_free[r] = e
                arrive[r] += 12_000
        for r in range(a.ranks):
            start[r] = max(gpu_free[r], arrive[r]) + rnd.randint(100_000, 2_000_000)
    hosts = []
    for h, c in enumerate(clocks):
        hosts.append({"host": f"node{h}", "offset_ns": c.offset, "ppm": c.ppm, "t0": c.t0,
                      "pair_error_ns": c.pair_err})
    for r in range(a.ranks):
        c = clocks[r // per]
        ev = sorted(recs[r], key=lambda e: e["ts"])
        first = min(e["ts"] for e in ev) - 1000
        with open(os.path.join(a.dir, f"rank{r}.jsonl"), "w") as f:
            hdr = {"ts": c(first), "host": f"node{r // per}", "rank": r, "pid": pid,
                   "tid": pid, "layer": "meta", "name": "header",
                   "args": {"schema": 2, "tool": "cuthook", "host": f"node{r // per}",
                            "clock": {"monotonic_ns": c(first),
                                      "realtime_ns": REAL0 + first + c.pair_err},
                            "sorted": True, "true_ns": first}}
            f.write(dumps(hdr) + "\n")
            for e in ev:
                e["args"]["true_ns"] = e["ts"]
                end = e["ts"] + e["dur"]
                e["ts"] = c(e["ts"])
                e["dur"] = c(end) - e["ts"]
                if "submit" in e["args"]:
                    e["args"]["true_submit_ns"] = e["args"]["submit"]
                    e["args"]["submit"] = c(e["args"]["submit"])
                f.write(dumps(e) + "\n")
    with open(os.path.join(a.dir, "hosts.json"), "w") as f:
        json.dump(hosts, f, indent=1)


TS = re.compile(r'^\{"ts":(-?\d+)[,}]')


def rehost(a):
    lines = open(a.trace).read().splitlines() if a.trace != "-" else sys.stdin.read().splitlines()
    # Only the lines that may be the rank's are parsed (the others are copied as they are),
    # and the start is read off each line's head (a record's ts comes first): a third of
    # the time.
    key = f'"rank":{a.rank}'
    t0, mine, rest, src = None, [], [], None
    for l in lines:
        m = TS.match(l)
        e = json.loads(l) if not m or key in l or src is None and '"header"' in l else None
        ts = int(m.group(1)) if m else e["ts"]
        t0 = ts if t0 is None or ts < t0 else t0
        if e is not None and src is None and e["layer"] == "meta" and e["name"] == "header":
            src = e
        if e is not None and e.get("rank") == a.rank:
            mine.append(e)
        else:
            rest.append(l)
    c = Clock(round(a.offset_ms * 1e6), a.ppm, t0, round(a.pair_ms * 1e6))
    os.makedirs(a.dir, exist_ok=True)
    if not (mine[0]["layer"] == "meta" and mine[0]["name"] == "header"):
        hdr = json.loads(dumps(src))  # a header of its own, at its first record
        hdr.update(ts=mine[0]["ts"], host=a.host, rank=a.rank, pid=mine[0]["pid"],
                   tid=mine[0]["pid"])
        hdr["args"]["clock"] = {"monotonic_ns": mine[0]["ts"],
                                "realtime_ns": src["args"]["clock"]["realtime_ns"] +
                                mine[0]["ts"] - src["args"]["clock"]["monotonic_ns"]}
        mine.insert(0, hdr)
    with open(os.path.join(a.dir, "a.jsonl"), "w") as f:
        f.write("\n".join(rest) + "\n")
    with open(os.path.join(a.dir, "b.jsonl"), "w") as f, \
            open(os.path.join(a.dir, "truth.txt"), "w") as tr:
        for e in mine:
            sub = e.get("args", {}).get("submit") if e["layer"] == "gpu" else None
            tr.write(f"{e['ts']} {sub if sub is not None else '-'}\n")
            if "host" in e:
                e["host"] = a.host
            if e["layer"] == "meta" and e["name"] == "header":
                e["args"]["host"] = a.host
                clk = e["args"].get("clock")
                if clk:
                    clk["realtime_ns"] += c.pair_err
                    clk["monotonic_ns"] = c(clk["monotonic_ns"])
            end = e["ts"] + e.get("dur", 0)
            e["ts"] = c(e["ts"])
            if "dur" in e:
                e["dur"] = c(end) - e["ts"]
            if sub is not None:
                e["args"]["submit"] = c(sub)
            f.write(dumps(e) + "\n")


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    j = sub.add_parser("job")
    j.add_argument("dir")
    j.add_argument("--ranks", type=int, default=8)
    j.add_argument("--hosts", type=int, default=4)
    j.add_argument("--steps", type=int, default=200)
    j.add_argument("--step-ms", type=float, default=50)
    j.add_argument("--colls", type=int, default=3)
    j.add_argument("--jitter-ns", type=float, default=1500)
    j.add_argument("--lead-ms", type=int, default=500)
    j.add_argument("--seed", type=int, default=1)
    j.add_argument("--ppm", type=float)
    j.add_argument("--offset-ms", type=float)
    r = sub.add_parser("rehost")
    r.add_argument("trace")
    r.add_argument("dir")
    r.add_argument("--rank", type=int, default=1)
    r.add_argument("--host", default="vm2")
    r.add_argument("--offset-ms", type=float, default=3)
    r.add_argument("--ppm", type=float, default=20)
    r.add_argument("--pair-ms", type=float, default=1.5)
    a = p.parse_args()
    job(a) if a.cmd == "job" else rehost(a)


if __name__ == "__main__":
    main()
