"""torch_nvtx_runtime.py: the NVTX and runtime layers against PyTorch's own view, run under
cuthook (tests/gpu/nvtx-runtime.sh runs it and checks the trace with check_nvtx_runtime.py).

usage: python torch_nvtx_runtime.py OUT.json [steps]

Phase 1, inside torch.cuda.nvtx.range("emit"): `steps` steps of a small model under
torch.autograd.profiler.emit_nvtx() (one NVTX range per ATen op, nested as the ops call
each other). Phase 2, inside torch.cuda.nvtx.range("profiled"): the same steps under
torch.profiler (CUPTI), which records its own ATen ops and cuda* runtime calls. Writes to
OUT.json the profiler's count of each ATen op and of each runtime function (category
cuda_runtime), for the checker to compare with cuthook's nvtx ranges in phase 1 and its
runtime events in phase 2.
"""
import json
import sys
from collections import Counter

import torch

out = sys.argv[1]
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 5
dev = torch.device("cuda")
torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10)).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(64, 256, device=dev)
y = torch.randint(0, 10, (64,), device=dev)


def step():
    opt.zero_grad(set_to_none=True)
    with torch.cuda.nvtx.range("forward"):
        loss = torch.nn.functional.cross_entropy(model(x), y)
    with torch.cuda.nvtx.range("backward"):
        loss.backward()
    with torch.cuda.nvtx.range("optimizer"):
        opt.step()
    return loss


# Warm up outside both phases: lazy loading, cuBLAS handles, allocator.
for _ in range(3):
    step()
torch.cuda.synchronize()

with torch.cuda.nvtx.range("emit"):
    with torch.autograd.profiler.emit_nvtx():
        for _ in range(steps):
            step()
    torch.cuda.synchronize()

with torch.cuda.nvtx.range("profiled"):
    with torch.profiler.profile(
            activities=[torch.profiler.ProfilerActivity.CPU,
                        torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            step()
        torch.cuda.synchronize()

ops, runtime = Counter(), Counter()
for e in prof.profiler.kineto_results.events():
    name = e.name()
    if name.startswith("aten::"):
        ops[name] += 1
    elif name.startswith("cuda") and e.device_type() == torch.autograd.DeviceType.CPU:
        runtime[name] += 1
json.dump({"steps": steps, "ops": ops, "runtime": runtime}, open(out, "w"), indent=1)
print("steps", steps, "aten ops", sum(ops.values()), "runtime calls", sum(runtime.values()))
