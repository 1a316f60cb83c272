"""torch_gpu_work.py: GPU work of every kind the gpu layer times, recorded by torch.profiler
(CUPTI) in the same run, for tests/gpu/compare.py to hold cut's gpu events against.

usage: python torch_gpu_work.py PROFILE.json [steps]

Each step: matmuls of three sizes (busy stream, kernels back to back), small elementwise ops
with a host pause between them (the stream idles: the start comes from the call), a copy
host-to-device and device-to-host, a memset, work on a second stream that waits on the
first, and a CUDA graph replay (captured once, before profiling: cut must skip the capture).
Prints the wall time of the steps.
"""
import sys
import time

import torch

prof_path = sys.argv[1]
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 20
dev = torch.device("cuda")
a = torch.randn(2048, 2048, device=dev)
b = torch.randn(512, 512, device=dev)
c = torch.randn(128, 128, device=dev)
small = torch.randn(1024, device=dev)
host = torch.randn(1 << 20).pin_memory()
side = torch.cuda.Stream()

# A graph, captured before profiling (the capture itself must not be touched).
g_in = torch.randn(256, 256, device=dev)
torch.cuda.synchronize()
s = torch.cuda.Stream()
s.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(s):
    for _ in range(3):
        g_out = g_in @ g_in
torch.cuda.current_stream().wait_stream(s)
graph = torch.cuda.CUDAGraph()
with torch.cuda.graph(graph):
    g_out = (g_in @ g_in).relu()
torch.cuda.synchronize()


def step():
    x = a @ a
    y = b @ b
    z = c @ c
    for _ in range(4):
        small.add_(1.0)
        time.sleep(0.0002)
    d = host.to(dev, non_blocking=True)
    e = d.to("cpu")
    d.zero_()
    ev = torch.cuda.Event()
    ev.record()
    with torch.cuda.stream(side):
        side.wait_event(ev)
        w = y @ y
    torch.cuda.current_stream().wait_stream(side)
    graph.replay()
    torch.cuda.synchronize()
    return x, z, e, w


for _ in range(3):
    step()
from torch.profiler import ProfilerActivity, profile

with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    t1 = time.perf_counter()
p.export_chrome_trace(prof_path)
print(f"steps {steps} wall {1e3 * (t1 - t0):.1f} ms")
