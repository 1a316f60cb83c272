"""launchloop.py CHUNKS [cuda|all]: a launch-bound PyTorch loop (x.add_(1) on 256 floats, about
five driver and five runtime calls an op), 30 chunks of 1,000 ops after 2,000 to warm up, under
torch.profiler's CUDA (or CPU and CUDA) activities when asked. Prints us per op over the chunks
and appends one line a chunk to CHUNKS: its us per op and the slower of the two probes around
it, ms.

The probe makes no CUDA call (a Python loop and a SHA-256 of 200 KB, about 1 ms): on the GPU
machines' virtual CPUs a process runs at two speeds, switching every few tens of ms (plain 7.5
against 10.7 us an op on one H100 VM, the probe 0.87 against 1.4 ms with it), which neither
pinning the process to cores nor a fixed address layout or hash seed took out. The chunks whose
probes ran at full speed are where modes can be told apart (bench-preload.sh, bench-split.sh);
a capture mode's own work stays in its chunks, as the probe makes no call it records."""
import contextlib
import hashlib
import sys
import time

import torch
from torch.profiler import ProfilerActivity, profile

acts = {"cuda": [ProfilerActivity.CUDA],
        "all": [ProfilerActivity.CPU, ProfilerActivity.CUDA]}
prof = profile(activities=acts[sys.argv[2]]) if len(sys.argv) > 2 else contextlib.nullcontext()
block = bytes(200000)


def probe():
    t0 = time.perf_counter()
    s = 0
    for i in range(20000):
        s += i
    hashlib.sha256(block).digest()
    return time.perf_counter() - t0


x = torch.zeros(256, device="cuda")
rows, total = [], 0.0
with prof:
    for _ in range(2000):
        x.add_(1)
    torch.cuda.synchronize()
    for c in range(30):
        p1 = probe()
        t0 = time.perf_counter()
        for _ in range(1000):
            x.add_(1)
        torch.cuda.synchronize()
        t = time.perf_counter() - t0
        p2 = probe()
        total += t
        rows.append(f"{1e3 * t:.4f} {1e3 * max(p1, p2):.4f}\n")
with open(sys.argv[1], "a") as f:
    f.write("".join(rows))
print(f"{1e6 * total / 30000:.2f}")
