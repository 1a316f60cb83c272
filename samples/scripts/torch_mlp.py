#!/usr/bin/env python3
"""PyTorch inference workload for capture validation: a 3-layer MLP, a few forward passes,
host->device copies of the input and device->host copies of the result.

usage: torch_mlp.py [passes] [batch]     (defaults: 20 passes, batch 64)
Prints one line: passes, batch and a checksum of the last output (so runs can be compared).
"""
import sys

import torch

passes = int(sys.argv[1]) if len(sys.argv) > 1 else 20
batch = int(sys.argv[2]) if len(sys.argv) > 2 else 64
torch.manual_seed(0)
dev = torch.device("cuda")
model = torch.nn.Sequential(
    torch.nn.Linear(1024, 4096), torch.nn.ReLU(),
    torch.nn.Linear(4096, 4096), torch.nn.ReLU(),
    torch.nn.Linear(4096, 10),
).to(dev).eval()
x_host = torch.randn(batch, 1024).pin_memory()
with torch.no_grad():
    for _ in range(passes):
        x = x_host.to(dev, non_blocking=True)
        y = model(x)
        out = y.cpu()
torch.cuda.synchronize()
print(f"passes={passes} batch={batch} checksum={out.sum().item():.4f}")
