"""train_demo.py: the training loop behind make demo's samples (samples/demo-train-*.jsonl.zst).

usage: python train_demo.py [steps] [variant]

A 6-layer MLP (hidden 2048, batch 512) trained with AdamW, each step in an NVTX range "step"
(torch.cuda.nvtx), forward and backward in ranges of their own. Variant "base" is the loop as
it should be; "item" reads the loss back every step (loss.item(), the usual slip: a
synchronising device-to-host copy that stalls the launch queue), so cutdiff of the two shows
what one line costs. The first steps are the warm-up (allocator, cuBLAS handles): cutslice's
-n picks the steady state.
"""
import sys

import torch

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 40
variant = sys.argv[2] if len(sys.argv) > 2 else "base"
dev = torch.device("cuda")
torch.manual_seed(0)

layers = []
for _ in range(6):
    layers += [torch.nn.Linear(2048, 2048), torch.nn.ReLU()]
model = torch.nn.Sequential(*layers, torch.nn.Linear(2048, 10)).to(dev)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
x = torch.randn(512, 2048, device=dev)
y = torch.randint(0, 10, (512,), device=dev)
loss_fn = torch.nn.CrossEntropyLoss()

nvtx = torch.cuda.nvtx
seen = []
for i in range(steps):
    nvtx.range_push("step")
    nvtx.range_push("forward")
    loss = loss_fn(model(x), y)
    nvtx.range_pop()
    nvtx.range_push("backward")
    opt.zero_grad(set_to_none=True)
    loss.backward()
    nvtx.range_pop()
    nvtx.range_push("optimizer")
    opt.step()
    nvtx.range_pop()
    if variant == "item":
        seen.append(loss.item())
    nvtx.range_pop()
torch.cuda.synchronize()
print(f"{variant}: {steps} steps, last loss {loss.item():.4f}")
