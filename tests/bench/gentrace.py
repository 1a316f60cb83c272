#!/usr/bin/env python3
"""Writes a synthetic cut trace (canonical layout) of about SIZE megabytes to stdout.

It mimics a PyTorch run: many cheap queries, launches with grid/block args, copies with
bytes, syncs, and NVIDIA ioctls inside some calls, on a few threads. Deterministic (seeded).
usage: gentrace.py [-g] [-r rank] [-n records] [megabytes] [seed]
  -r rank     one rank of a job: host ("node<rank/8>") and rank on every record, and a
              process record naming the rank (seed the ranks differently for different data)
  -g          also the layers above and below the driver: a runtime call around each driver
              call, the GPU work of launches and copies (some of it NCCL all-reduces), and an
              NVTX range around every 64 calls
  -n records  stop after about this many records instead of after SIZE megabytes
Without options the output is the same as before they existed.
"""
import getopt
import random
import sys

opts, args = getopt.getopt(sys.argv[1:], "gr:n:")
opts = dict(opts)
gpu = "-g" in opts
rank = int(opts["-r"]) if "-r" in opts else None
nrecords = int(opts["-n"]) if "-n" in opts else None
mb = float(args[0]) if len(args) > 0 else 200
rng = random.Random(int(args[1]) if len(args) > 1 else 1)
out = sys.stdout
calls = [
    ("cuCtxGetDevice_v2", "query", 300, 40),
    ("cuDeviceGetAttribute", "query", 250, 30),
    ("cuLaunchKernel", "launch", 4200, 80),
    ("cuLaunchKernelEx", "launch", 4500, 20),
    ("cuMemcpyHtoDAsync_v2", "transfer", 5800, 24),
    ("cuMemcpyDtoHAsync_v2", "transfer", 6100, 20),
    ("cuStreamSynchronize", "sync", 90000, 44),
    ("cuMemAlloc_v2", "memory", 30000, 9),
    ("cuStreamIsCapturing", "query", 200, 50),
]
runtime = {"query": "cudaGetDevice", "launch": "cudaLaunchKernel", "transfer": "cudaMemcpyAsync",
           "sync": "cudaStreamSynchronize", "memory": "cudaMalloc"}
kernels = ["sm90_xmma_gemm_f16f16_f32", "vectorized_elementwise_kernel", "reduce_kernel",
           "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "softmax_warp_forward"]
weights = [c[3] for c in calls]
ts = 1_000_000_000
pid = 4242
target = int(mb * 1e6)
written = records = 0
env = '"host":"node%d","rank":%d,' % (rank // 8, rank) if rank is not None else ""
step = []  # with -g: the records of the current NVTX range, written when it ends


def emit(line):
    global written, records
    written += len(line)
    records += 1
    if gpu:
        step.append(line)
    else:
        out.write(line)


def end_step(end):
    """Writes the NVTX range around the records held back, then them."""
    global records
    if step:
        records += 1
        start = int(step[0][6:step[0].index(",")])
        out.write('{"ts":%d,"dur":%d,%s"pid":%d,"tid":%d,"layer":"nvtx","name":"step",'
                  '"cat":"range","args":{"depth":0}}\n' % (start, end - start, env, pid, pid))
        out.writelines(step)
        step.clear()


def done():
    return records >= nrecords if nrecords is not None else written >= target


if rank is None:
    out.write('{"ts":%d,"pid":%d,"tid":%d,"layer":"meta","name":"header","args":{"schema":1,"tool":"gentrace"}}\n' % (ts, pid, pid))
else:
    out.write('{"ts":%d,%s"pid":%d,"tid":%d,"layer":"meta","name":"header","args":{"schema":2,"tool":"gentrace","host":"node%d"}}\n' % (ts, env, pid, pid, rank // 8))
    out.write('{"ts":%d,%s"pid":%d,"tid":%d,"layer":"meta","name":"process","args":{"comm":"python3","rank":%d}}\n' % (ts, env, pid, pid, rank))
records = 1 if rank is None else 2
ncalls = corr = 0
while not done():
    name, cat, mean, _ = rng.choices(calls, weights)[0]
    tid = pid + rng.randrange(3)
    dur = max(50, int(rng.expovariate(1 / mean)))
    if cat == "launch":
        args = '{"func":"0x%x","grid":[%d,1,1],"block":[256,1,1],"shmem":0,"stream":"0x%x"}' % (
            0x55550000 + rng.randrange(64) * 16, rng.randrange(1, 4096), 0x7f0000 + rng.randrange(4))
    elif cat == "transfer":
        args = '{"bytes":%d,"stream":"0x7f0000"}' % rng.choice([8, 4096, 1 << 20, 4 << 20])
    elif cat == "memory":
        args = '{"bytes":%d,"dptr":"0x%x"}' % (rng.choice([1 << 20, 1 << 24]), 0x7f1200000000 + rng.randrange(1 << 30))
    else:
        args = None
    at = ts
    if gpu and cat in runtime:  # the runtime call starts first and ends last
        emit('{"ts":%d,"dur":%d,%s"pid":%d,"tid":%d,"layer":"runtime","name":"%s","cat":"%s","ret":0}\n' % (
            ts, dur + 400, env, pid, tid, runtime[cat], cat))
        at = ts + 200
    line = '{"ts":%d,"dur":%d,%s"pid":%d,"tid":%d,"layer":"api","name":"%s","cat":"%s","ret":0' % (
        at, dur, env, pid, tid, name, cat)
    line += (',"args":' + args if args else '') + '}\n'
    emit(line)
    if cat in ("memory", "sync") and rng.random() < 0.5:
        emit('{"ts":%d,"dur":%d,%s"pid":%d,"tid":%d,"layer":"ioctl","name":"NV_ESC_RM_CONTROL","ret":0,"args":{"fd":5,"cmd":"0xc020462a","ctrl":"0x20800a4c"}}\n' % (
            at + 10, dur // 3, env, pid, tid))
    if gpu and cat in ("launch", "transfer"):  # its work, starting as the call returns
        corr += 1
        if cat == "launch":
            kname, kcat = rng.choice(kernels), "kernel"
            kargs = '"stream":"0x7f0000","device":0'
        else:
            kname, kcat = "memcpy " + ("HtoD" if "HtoD" in name else "DtoH"), "memcpy"
            kargs = '"stream":"0x7f0000","device":0,"bytes":%d' % rng.choice([4096, 1 << 20])
        emit('{"ts":%d,"dur":%d,%s"pid":%d,"tid":%d,"layer":"gpu","name":"%s","cat":"%s","args":{"corr":%d,%s,"submit":%d}}\n' % (
            at + dur + 50, int(rng.expovariate(1 / 20000)) + 1000, env, pid, tid, kname, kcat,
            corr, kargs, at))
    ts += dur + (400 if gpu else 0) + rng.randrange(100, 2000)
    ncalls += 1
    if gpu and ncalls % 64 == 0:
        end_step(ts - 50)
end_step(ts)
