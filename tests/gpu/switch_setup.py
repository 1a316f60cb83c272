"""switch_setup.py CUBIN PROFILE STEPS: param_kernels.cu's kernels (16 to 4,016 bytes of
parameters, 2 us each) and torch's 256x256 matmul and a small add, each launched after a host
pause of 0.3 ms (so that beside a heavy process many run first in a turn of their own), then
each queued behind a 30 us kernel; their GPU work recorded by torch.profiler (CUPTI) for
tests/gpu/switch_setup.sh. The kernels are launched through libcuda (cuLaunchKernel), which
cut records as any other launch."""
import ctypes
import sys
import time

import torch
from torch.profiler import ProfilerActivity, profile

cubin, prof_path, steps = sys.argv[1], sys.argv[2], int(sys.argv[3])
torch.cuda.init()
out = torch.zeros(64, dtype=torch.int32, device="cuda")
c = torch.randn(256, 256, device="cuda")
small = torch.randn(1024, device="cuda")
torch.cuda.synchronize()
cu = ctypes.CDLL("libcuda.so.1")
mod = ctypes.c_void_p()
if cu.cuModuleLoadData(ctypes.byref(mod), open(cubin, "rb").read()) != 0:
    sys.exit(f"switch_setup: {cubin}: cuModuleLoadData failed")


def function(name):
    f = ctypes.c_void_p()
    if cu.cuModuleGetFunction(ctypes.byref(f), mod, name.encode()) != 0:
        sys.exit(f"switch_setup: {cubin}: no {name}")
    return f


def params(*values):
    return (ctypes.c_void_p * len(values))(
        *[ctypes.cast(ctypes.byref(v), ctypes.c_void_p) for v in values])


outp = ctypes.c_void_p(out.data_ptr())
spin = ctypes.c_longlong(4000)  # cycles: about 2 us
blobs = {n: (ctypes.c_char * n)() for n in (64, 128, 256, 384, 512, 1024, 4000)}
kernels = [(function("ks_small"), params(outp, spin))]
kernels += [(function(f"ks_p{n}"), params(outp, spin, b)) for n, b in blobs.items()]
wait = (function("ks_wait"), params(outp, ctypes.c_longlong(60000)))


def launch(k):
    if cu.cuLaunchKernel(k[0], 1, 1, 1, 128, 1, 1, 0, None, k[1], None) != 0:
        sys.exit("switch_setup: cuLaunchKernel failed")


for k in kernels + [wait]:  # loaded and resident before the profile
    launch(k)
torch.cuda.synchronize()
with profile(activities=[ProfilerActivity.CUDA]) as p:
    for i in range(steps):
        for k in kernels:
            time.sleep(0.0003)
            launch(k)
        time.sleep(0.0003)
        y = c @ c
        time.sleep(0.0003)
        small.add_(1.0)
        torch.cuda.synchronize()
        for k in kernels:
            launch(wait)
            launch(k)
        launch(wait)
        y = c @ c
        launch(wait)
        small.add_(1.0)
        torch.cuda.synchronize()
p.export_chrome_trace(prof_path)
print(f"switch_setup: steps {steps}")
