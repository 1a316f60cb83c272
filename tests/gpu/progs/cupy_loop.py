"""CuPy: a raw kernel (NVRTC), elementwise and reductions, on a non-blocking stream and the
default one; a pinned-memory copy back."""
import cupy as cp
import numpy as np

add1 = cp.RawKernel(r'''
extern "C" __global__ void add1(float *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1.0f;
}''', "add1")
n = 1 << 20
x = cp.zeros(n, dtype=cp.float32)
for _ in range(100):
    add1(((n + 255) // 256,), (256,), (x, cp.int32(n)))
s = cp.cuda.Stream(non_blocking=True)
with s:
    y = x * 2
    z = float(y.sum())
s.synchronize()
pinned = np.frombuffer(cp.cuda.alloc_pinned_memory(n * 4), np.float32, n)
x.get(out=pinned)
print("cupy ok", z == 200.0 * n and bool((pinned == 100.0).all()))
