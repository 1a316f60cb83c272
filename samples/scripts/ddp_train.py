# A few data-parallel training steps over NCCL, one process per GPU:
#   torchrun --nproc_per_node=2 ddp_train.py [steps [load_s]]
# load_s: seconds each step first waits for its batch, as a step fed by a slow loader does
# (the collectives then span seconds, what aligning hosts by them needs).
import os, sys, time, torch, torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 5
load_s = float(sys.argv[2]) if len(sys.argv) > 2 else 0.0
dist.init_process_group("nccl")
rank, local = dist.get_rank(), int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local)
torch.manual_seed(0)
model = DDP(torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU(),
                                torch.nn.Linear(4096, 1024)).cuda(), device_ids=[local])
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(256, 1024, device="cuda")
for step in range(steps):
    if load_s:
        with torch.cuda.nvtx.range("load"):
            time.sleep(load_s)
    with torch.cuda.nvtx.range("step"):
        with torch.cuda.nvtx.range("forward"):
            loss = model(x).square().mean()
        with torch.cuda.nvtx.range("backward"):
            opt.zero_grad()
            loss.backward()
        with torch.cuda.nvtx.range("optimizer"):
            opt.step()
torch.cuda.synchronize()
print(f"rank={rank} steps={steps} loss={loss.item():.6f}")
dist.destroy_process_group()
