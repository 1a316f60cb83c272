"""torch.compile(mode="reduce-overhead"): Inductor's Triton kernels captured into CUDA graphs
(cudaStreamBeginCapture on a side stream) and replayed; torch.profiler over the replays when
asked (PROFILE.json), and no GPU work after them (compare.py pairs the last work it saw)."""
import sys
import torch

model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.GELU(), torch.nn.Linear(512, 256)).cuda()
f = torch.compile(model, mode="reduce-overhead")
x = torch.randn(64, 256, device="cuda")
with torch.no_grad():
    for _ in range(5):
        y = f(x)
    ok = float(y.float().abs().sum()) > 0
    torch.cuda.synchronize()
    prof = None
    if len(sys.argv) > 1:
        prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA])
        prof.__enter__()
    for _ in range(20):
        y = f(x)
    torch.cuda.synchronize()
    if prof:
        prof.__exit__(None, None, None)
        prof.export_chrome_trace(sys.argv[1])
print("compile ok", ok)
