#!/bin/sh
# cutgaps and cutstat take time in proportion to their input (issue 23): each shape below, four
# times larger, must cost at most 8 times the CPU time of the smaller one in the same run (a
# linear path costs 4, a quadratic one 16). The shapes are those that were quadratic: cutgaps'
# snapshot of every thread at every sync (threads x syncs), a context sync going over every
# stream of every process (streams x syncs, processes x syncs), the rank of a process found by
# going over all of them, every rank gone over for each NCCL kernel name; cutstat's device
# records looked up one by one (uuid_of) and every process's device compared with every device,
# and every NVTX range open on a thread gone over at each of its events. And memory: cutstat kept
# a histogram of all 512 buckets (4 KB) for every function and kernel name, 8 KB a name that
# is both; 80,000 names must take less than 2 KB each.
top=${CUT_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
B=${CUT_BUILD:-$top/build}
PATH=$B/bin:$PATH
command -v python3 >/dev/null || { echo "needs python3"; exit 77; }
python3 - <<'PY'
import json, resource, subprocess, sys, tempfile

def gen(kind, n, path):
    ev = []
    w = ev.append
    if kind == "threads":  # n threads of one process, each a launch and a sync
        for i in range(n):
            ts = 1000 + 100 * i
            w({"ts": ts, "dur": 10, "pid": 7, "tid": 100 + i, "layer": "api", "name": "cuLaunchKernel", "ret": 0, "args": {"stream": "0x1"}})
            w({"ts": ts + 20, "dur": 50, "pid": 7, "tid": 100 + i, "layer": "api", "name": "cuStreamSynchronize", "ret": 0, "args": {"stream": "0x1"}})
    elif kind == "streams":  # n streams launched once, then n context syncs
        for i in range(n):
            w({"ts": 1000 + 20 * i, "dur": 10, "pid": 7, "tid": 7, "layer": "api", "name": "cuLaunchKernel", "ret": 0, "args": {"stream": hex(0x100 + i)}})
        for i in range(n):
            ts = 1000 + 20 * n + 50 * i
            w({"ts": ts, "dur": 10, "pid": 7, "tid": 7, "layer": "api", "name": "cuLaunchKernel", "ret": 0, "args": {"stream": "0x1"}})
            w({"ts": ts + 20, "dur": 10, "pid": 7, "tid": 7, "layer": "api", "name": "cuCtxSynchronize", "ret": 0})
    elif kind == "processes":  # n processes, a launch and a context sync each
        for i in range(n):
            ts = 1000 + 50 * i
            w({"ts": ts, "dur": 10, "pid": 1000 + i, "tid": 1000 + i, "layer": "api", "name": "cuLaunchKernel", "ret": 0, "args": {"stream": "0x1"}})
            w({"ts": ts + 20, "dur": 10, "pid": 1000 + i, "tid": 1000 + i, "layer": "api", "name": "cuCtxSynchronize", "ret": 0})
    elif kind == "owners":  # n processes of n hosts with NCCL kernels and no rank
        for i in range(n):
            w({"ts": 1000 + 10 * i, "dur": 5, "host": "h%d" % i, "pid": 1000 + i, "tid": 1, "layer": "gpu", "name": "ncclKernel", "cat": "kernel", "args": {"stream": "0x1"}})
    elif kind == "ranks":  # n ranks, an NCCL kernel of its own name each
        for i in range(n):
            w({"ts": 1000 + 10 * i, "dur": 5, "rank": i, "pid": 1000 + i, "tid": 1, "layer": "gpu", "name": "ncclKernel%d" % i, "cat": "kernel", "args": {"stream": "0x1"}})
    elif kind == "devices":  # n processes, a device record and a kernel each
        for i in range(n):
            w({"ts": 1000 + i, "pid": 1000 + i, "tid": 1000 + i, "layer": "meta", "name": "device", "args": {"device": 0, "uuid": "GPU-%08d" % (i % 8)}})
        for i in range(n):
            w({"ts": 100000 + 10 * i, "dur": 5, "pid": 1000 + i, "tid": 1000 + i, "layer": "gpu", "name": "k", "cat": "kernel", "args": {"stream": "0x1", "device": 0}})
    elif kind == "nvtx":  # n nested ranges of one name, then n calls inside them
        for i in range(n):
            w({"ts": 1000 + i, "dur": 10 * n + 100000 - 2 * i, "pid": 7, "tid": 7, "layer": "nvtx", "name": "r", "cat": "range"})
        for i in range(n):
            w({"ts": 1000 + n + 5 * i, "dur": 2, "pid": 7, "tid": 7, "layer": "api", "name": "cuLaunchKernel", "ret": 0, "args": {"corr": i}})
            w({"ts": 1002 + n + 5 * i, "dur": 2, "pid": 7, "tid": 7, "layer": "gpu", "name": "k", "cat": "kernel", "args": {"corr": i, "stream": "0x1", "device": 0}})
    ev.sort(key=lambda e: e["ts"])
    with open(path, "w") as f:
        for e in ev:
            f.write(json.dumps(e, separators=(",", ":")) + "\n")

def cpu(tool, path):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run([tool, path], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode:
        sys.exit(f"FAIL: {tool} {path}: exit {p.returncode}: {p.stderr[:300]!r}")
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime

cases = [("cutgaps", "threads", 5000), ("cutgaps", "streams", 5000), ("cutgaps", "processes", 5000),
         ("cutgaps", "owners", 10000), ("cutgaps", "ranks", 10000), ("cutstat", "devices", 5000),
         ("cutstat", "ranks", 5000), ("cutstat", "nvtx", 5000)]
fail = 0
with tempfile.TemporaryDirectory() as d:
    for tool, kind, n in cases:
        gen(kind, n, f"{d}/small.jsonl")
        gen(kind, 4 * n, f"{d}/large.jsonl")
        small = cpu(tool, f"{d}/small.jsonl")
        large = cpu(tool, f"{d}/large.jsonl")
        if large > 8 * max(small, 0.05):
            print(f"FAIL: {tool} on {kind}: {4 * n} took {large:.2f} s of CPU, {n} {small:.2f} s")
            fail = 1
sys.exit(fail)
PY
[ $? -eq 0 ] || exit 1
python3 - <<'PY'
import json, resource, subprocess, sys, tempfile
with tempfile.NamedTemporaryFile("w", suffix=".jsonl") as f:
    for i in range(40000):
        f.write(json.dumps({"ts": 1000 + 10 * i, "dur": 5, "pid": 7, "tid": 7, "layer": "api", "name": f"cuFunction{i}", "ret": 0}) + "\n")
        f.write(json.dumps({"ts": 1002 + 10 * i, "dur": 5, "pid": 7, "tid": 7, "layer": "gpu", "name": f"kernel{i}", "cat": "kernel",
                            "args": {"stream": "0x1", "device": 0}}) + "\n")
    f.flush()
    p = subprocess.run(["cutstat", f.name], stdout=subprocess.DEVNULL)
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    if p.returncode or rss > 80000 * 2048:
        sys.exit(f"FAIL: 80,000 names: exit {p.returncode}, {rss / 1e6:.0f} MB")
PY
