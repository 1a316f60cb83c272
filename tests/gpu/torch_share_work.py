"""torch_share_work.py: one of several processes that take turns on one GPU (no MPS), its GPU
work recorded by torch.profiler (CUPTI) from the first piece to the last, so that cut's gpu
events of the whole process can be held against it (tests/gpu/share_busy.sh).

usage: python torch_share_work.py PROFILE.json KIND STEPS [BARRIER N]

KIND is what a step does:
  heavy  four matmuls of 2048 x 2048 back to back, then waits for them: its queue runs dry
         once a step, when the GPU turns to the others (an H100 switches then);
  deep   one such matmul, waiting only every 50th: its queue never runs dry, so its time
         slice runs out with the others waiting, and the kernel running is preempted for
         their turn;
  light  a 256 x 256 matmul and four small elementwise ops, a host pause of 0.3 ms before
         each op: its work mostly comes while another process has the GPU and waits for it.
BARRIER N: once the profiler runs (its start takes a varying fraction of a second), appends a
line to the file BARRIER and waits (120 s at most) until it has N lines, so that the
processes' steps overlap. Every piece of GPU work of the process is inside the profile: its
tensors are made there. Prints the wall time of the steps.
"""
import os
import sys
import time

import torch
from torch.profiler import ProfilerActivity, profile

prof_path, kind, steps = sys.argv[1], sys.argv[2], int(sys.argv[3])
if kind not in ("heavy", "deep", "light"):
    sys.exit(f"torch_share_work: unknown kind {kind}")
dev = torch.device("cuda")
torch.cuda.init()
torch.cuda.synchronize()


def barrier():
    if len(sys.argv) < 6:
        return
    path, n = sys.argv[4], int(sys.argv[5])
    with open(path, "a") as f:
        f.write(f"{os.getpid()}\n")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        with open(path) as f:
            if sum(1 for _ in f) >= n:
                return
        time.sleep(0.001)
    sys.exit(f"torch_share_work: {path}: never {n} lines")


with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
    a = torch.randn(2048, 2048, device=dev)
    c = torch.randn(256, 256, device=dev)
    small = torch.randn(1024, device=dev)
    torch.cuda.synchronize()
    barrier()
    t0 = time.perf_counter()
    for i in range(steps):
        if kind == "heavy":
            for _ in range(4):
                x = a @ a
            torch.cuda.synchronize()
        elif kind == "deep":
            x = a @ a
            if i % 50 == 49:
                torch.cuda.synchronize()
        else:
            y = c @ c
            for _ in range(4):
                time.sleep(0.0003)
                small.add_(1.0)
            torch.cuda.synchronize()
    torch.cuda.synchronize()
    t1 = time.perf_counter()
p.export_chrome_trace(prof_path)
print(f"{kind}: steps {steps} wall {1e3 * (t1 - t0):.1f} ms")
