"""torch_threads.py: GPU work from two threads and three streams, profiled by torch.profiler (CPU
and CUDA: CUPTI) in the same process, for tests/gpu/check_pairs.py to hold cut's gpu events to.

usage: python torch_threads.py PROFILE.json [steps]

Each step of the main thread: two bf16 autocast transformer blocks (cuBLASLt's gemms, one gemm
kernel and grid serving products of K 1,024 and 4,096; flash SDPA; layer norm; gelu), the next
batch (4 MiB) prefetched from pinned memory on a copy stream, a captured MLP graph replayed, an
NVTX range, and every fifth step a pageable read back. Meanwhile a worker thread launches small
gemms and elementwise kernels on a stream of its own, spaced by the host. Written against none
of cut's rules; prints the wall time of the profiled steps."""
import sys, threading, time
import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile

prof_path = sys.argv[1]
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 30
dev = "cuda"
torch.manual_seed(0)
d, h, T, B = 1024, 16, 256, 4
W = [torch.randn(d, 3 * d, device=dev) / 32, torch.randn(d, d, device=dev) / 32,
     torch.randn(d, 4 * d, device=dev) / 32, torch.randn(4 * d, d, device=dev) / 32]


def block(x):
    with torch.autocast("cuda", dtype=torch.bfloat16):
        qkv = x @ W[0]
        q, k, v = qkv.view(B, T, 3, h, d // h).unbind(2)
        a = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2),
                                           v.transpose(1, 2), is_causal=True)
        x = x + a.transpose(1, 2).reshape(B, T, d) @ W[1]
        x = x + F.gelu(F.layer_norm(x, (d,)) @ W[2]) @ W[3]
    return x.float()


host = [torch.randn(B, T, d).pin_memory() for _ in range(2)]
copy_stream = torch.cuda.Stream()
m = torch.nn.Sequential(torch.nn.Linear(512, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512)).to(dev)
static_in = torch.randn(64, 512, device=dev)
s = torch.cuda.Stream()
s.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(s):
    for _ in range(3):
        m(static_in)
torch.cuda.current_stream().wait_stream(s)
g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    static_out = m(static_in)
torch.cuda.synchronize()

stop = threading.Event()


def worker():
    ws = torch.cuda.Stream()
    y = torch.randn(256, 256, device=dev)
    with torch.cuda.stream(ws):
        while not stop.is_set():
            for _ in range(4):
                y = torch.tanh(y @ y * 1e-3)
            ws.synchronize()
            time.sleep(0.0007)


def step(i, nxt):
    torch.cuda.nvtx.range_push(f"step {i}")
    x = nxt
    with torch.cuda.stream(copy_stream):
        nxt = host[i % 2].to(dev, non_blocking=True)
    for _ in range(2):
        x = block(x)
    g.replay()
    torch.cuda.current_stream().wait_stream(copy_stream)
    if i % 5 == 0:
        v = x[0, :8].cpu()  # pageable read back
        float(v.sum())
    torch.cuda.nvtx.range_pop()
    return nxt


th = threading.Thread(target=worker)
th.start()
nxt = host[0].to(dev)
for i in range(3):
    nxt = step(i, nxt)
torch.cuda.synchronize()
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
    t0 = time.perf_counter()
    for i in range(steps):
        nxt = step(i, nxt)
    torch.cuda.synchronize()
    t1 = time.perf_counter()
stop.set()
th.join()
p.export_chrome_trace(prof_path)
print(f"torch_threads: steps {steps} wall {1e3 * (t1 - t0):.1f} ms")
