#!/usr/bin/env python3
"""Writes a synthetic cut trace (canonical layout) of about SIZE megabytes to stdout.

It mimics a PyTorch run: many cheap queries, launches with grid/block args, copies with
bytes, syncs, and NVIDIA ioctls inside some calls, on a few threads. Deterministic (seeded).
usage: gentrace.py [megabytes] [seed]
"""
import random
import sys

mb = float(sys.argv[1]) if len(sys.argv) > 1 else 200
rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 1)
out = sys.stdout
calls = [
    ("cuCtxGetDevice_v2", "query", 300, 40),
    ("cuDeviceGetAttribute", "query", 250, 30),
    ("cuLaunchKernel", "launch", 4200, 80),
    ("cuLaunchKernelEx", "launch", 4500, 20),
    ("cuMemcpyHtoDAsync_v2", "transfer", 5800, 24),
    ("cuMemcpyDtoHAsync_v2", "transfer", 6100, 20),
    ("cuStreamSynchronize", "sync", 90000, 44),
    ("cuMemAlloc_v2", "memory", 30000, 9),
    ("cuStreamIsCapturing", "query", 200, 50),
]
weights = [c[3] for c in calls]
ts = 1_000_000_000
pid = 4242
target = int(mb * 1e6)
written = 0
lines = []
out.write('{"ts":%d,"pid":%d,"tid":%d,"layer":"meta","name":"header","args":{"schema":1,"tool":"gentrace"}}\n' % (ts, pid, pid))
while written < target:
    name, cat, mean, _ = rng.choices(calls, weights)[0]
    tid = pid + rng.randrange(3)
    dur = max(50, int(rng.expovariate(1 / mean)))
    if cat == "launch":
        args = '{"func":"0x%x","grid":[%d,1,1],"block":[256,1,1],"shmem":0,"stream":"0x%x"}' % (
            0x55550000 + rng.randrange(64) * 16, rng.randrange(1, 4096), 0x7f0000 + rng.randrange(4))
    elif cat == "transfer":
        args = '{"bytes":%d,"stream":"0x7f0000"}' % rng.choice([8, 4096, 1 << 20, 4 << 20])
    elif cat == "memory":
        args = '{"bytes":%d,"dptr":"0x%x"}' % (rng.choice([1 << 20, 1 << 24]), 0x7f1200000000 + rng.randrange(1 << 30))
    else:
        args = None
    line = '{"ts":%d,"dur":%d,"pid":%d,"tid":%d,"layer":"api","name":"%s","cat":"%s","ret":0' % (
        ts, dur, pid, tid, name, cat)
    line += (',"args":' + args if args else '') + '}\n'
    out.write(line)
    written += len(line)
    if cat in ("memory", "sync") and rng.random() < 0.5:
        line = '{"ts":%d,"dur":%d,"pid":%d,"tid":%d,"layer":"ioctl","name":"NV_ESC_RM_CONTROL","ret":0,"args":{"fd":5,"cmd":"0xc020462a","ctrl":"0x20800a4c"}}\n' % (
            ts + 10, dur // 3, pid, tid)
        out.write(line)
        written += len(line)
    ts += dur + rng.randrange(100, 2000)
