#!/usr/bin/env python3
"""PyTorch training workload: forward, backward and an Adam step on a small MLP.

usage: torch_train.py [steps] [batch]     (defaults: 10 steps, batch 64)
"""
import sys

import torch

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 10
batch = int(sys.argv[2]) if len(sys.argv) > 2 else 64
torch.manual_seed(0)
dev = torch.device("cuda")
model = torch.nn.Sequential(
    torch.nn.Linear(1024, 2048), torch.nn.ReLU(), torch.nn.Linear(2048, 10)).to(dev)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
loss_fn = torch.nn.CrossEntropyLoss()
for _ in range(steps):
    x = torch.randn(batch, 1024).to(dev)
    target = torch.randint(0, 10, (batch,)).to(dev)
    opt.zero_grad()
    loss = loss_fn(model(x), target)
    loss.backward()
    opt.step()
print(f"steps={steps} batch={batch} loss={loss.item():.4f}")
