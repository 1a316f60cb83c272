"""torch_copies.py: copies and memsets of every size class, recorded by torch.profiler (CUPTI) in
the same run, for tests/gpu/check_copies.py to hold cut's gpu events against (issue 25: a
pageable 64 MiB copy came out 500x short; short work 3-30x long).

usage: python torch_copies.py PROFILE.json [rounds]
(under cuthook: tests/gpu/gpu-times.sh runs it and check_copies.py)

Each round, for 4 B, 64 KiB and 64 MiB: host-to-device and device-to-host from pageable and from
pinned memory (pinned ones non_blocking, then a synchronize), device-to-device, and a
cudaMemset through the runtime (torch's zero_ is a kernel). A host pause between pieces leaves
the stream idle, as a program doing real work between copies would. Prints one line per kind.
"""
import ctypes
import glob
import os
import sys
import time

import torch

prof_path = sys.argv[1]
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
dev = torch.device("cuda")
sizes = [4, 64 << 10, 64 << 20]

# The runtime torch itself loaded, for cudaMemset (torch has no memset of its own).
rt_path = glob.glob(os.path.join(os.path.dirname(torch.__file__), "..", "nvidia", "cu*", "lib",
                                 "libcudart.so.*"))
rt = ctypes.CDLL(rt_path[0]) if rt_path else None

buf = {}
for n in sizes:
    buf[n] = dict(
        pageable=torch.ones(n, dtype=torch.uint8),
        pinned=torch.ones(n, dtype=torch.uint8).pin_memory(),
        dev=torch.ones(n, dtype=torch.uint8, device=dev),
        dev2=torch.zeros(n, dtype=torch.uint8, device=dev),
    )
torch.cuda.synchronize()


def pause():
    torch.cuda.synchronize()
    time.sleep(0.001)


def round_once():
    for n in sizes:
        b = buf[n]
        b["dev"].copy_(b["pageable"])  # HtoD pageable (synchronous)
        pause()
        b["pageable"].copy_(b["dev"])  # DtoH pageable
        pause()
        b["dev"].copy_(b["pinned"], non_blocking=True)  # HtoD pinned
        pause()
        b["pinned"].copy_(b["dev"], non_blocking=True)  # DtoH pinned
        pause()
        b["dev2"].copy_(b["dev"])  # DtoD
        pause()
        if rt:
            r = rt.cudaMemset(ctypes.c_void_p(b["dev2"].data_ptr()), 0, ctypes.c_size_t(n))
            if r:
                sys.exit(f"cudaMemset: error {r}")
        pause()


round_once()  # warm-up, outside the profile
with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                        torch.profiler.ProfilerActivity.CUDA]) as prof:
    for _ in range(rounds):
        round_once()
prof.export_chrome_trace(prof_path)
print(f"{rounds} rounds of copies and memsets of {sizes} bytes done")
