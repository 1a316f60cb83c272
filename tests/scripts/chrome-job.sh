#!/bin/sh
# cutchrome on the rank files of a job (issues 13-16): two hosts whose ranks have the same pid
# and tids, each file sorted, their times interleaved. One timeline with no warning: a process
# per rank named "rank N on host: comm", ordered by host then rank (each host's rank, GPU and
# interrupts together), thread tracks of the two hosts apart, interrupts per host, a GPU
# process per uuid ("on host") with a track per process and stream (the
# stream named through NVTX), a flow from each submitting call to its work, the GPU busy
# counter's every value (back to 0 at the end), NVTX start/end ranges with their domain as a
# category, a renamed thread's tracks under its last name, its off-CPU track named after it
# (with its tid) and sorted right after it. Every number is computed here from the input.
B=${CUT_BUILD:-build}
PATH=$B/bin:$PATH
command -v python3 >/dev/null || { echo "needs python3"; exit 77; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
python3 - "$tmp" <<'PY'
import json, sys
d = sys.argv[1]
for rank, host in ((0, "nodeA"), (1, "nodeB")):
    off = 50 * rank
    ev = [
        {"ts": 100, "pid": 100, "tid": 100, "layer": "meta", "name": "header",
         "args": {"schema": 2, "tool": "cuthook", "host": host, "sorted": True,
                  "clock": {"monotonic_ns": 100, "realtime_ns": 1795000000000000100}}},
        {"ts": 100, "pid": 100, "tid": 100, "layer": "meta", "name": "process", "rank": rank,
         "host": host, "args": {"comm": "python3", "cmdline": "python3 train.py", "rank": rank}},
        {"ts": 100, "pid": 100, "tid": 100, "layer": "meta", "name": "thread", "args": {"comm": "python3"}},
        {"ts": 100, "pid": 100, "tid": 101, "layer": "meta", "name": "thread", "args": {"comm": "python3"}},
        {"ts": 100, "pid": 100, "tid": 100, "layer": "meta", "name": "device",
         "args": {"device": 0, "name": "NVIDIA H200", "uuid": "GPU-%s" % host}},
        {"ts": 100, "pid": 100, "tid": 101, "layer": "meta", "name": "symbol",
         "args": {"handle": "0x7", "name": "copies", "kind": "stream", "via": "nvtxNameCuStreamA"}},
    ]
    t = 1000 + off
    corr = 0
    for i in range(40):
        corr += 1
        tid = 100 + i % 2
        st = "0x0" if tid == 100 else "0x7"
        ev.append({"ts": t, "dur": 400, "pid": 100, "tid": tid, "rank": rank, "layer": "api",
                   "name": "cuLaunchKernel", "cat": "launch", "args": {"stream": st, "corr": corr}})
        ev.append({"ts": t + 100, "dur": 100, "pid": 100, "tid": tid, "rank": rank, "layer": "ioctl",
                   "name": "NV_ESC_RM_CONTROL", "args": {"fd": 5}})
        # GPU work: deep queues, so the work of the two streams overlaps
        ev.append({"ts": t + 300 + 37 * i, "dur": 900 + 13 * (i % 5), "pid": 100, "tid": tid,
                   "rank": rank, "layer": "gpu", "name": "k%d" % (i % 3), "cat": "kernel",
                   "args": {"corr": corr, "stream": st, "device": 0, "submit": t}})
        if tid == 101:
            ev.append({"ts": t + 450, "dur": 60, "pid": 100, "tid": 101, "rank": rank,
                       "layer": "sched", "name": "offcpu", "args": {"state": "S", "cpu": 1}})
        if i == 10:
            ev.append({"ts": t + 460, "pid": 100, "tid": 101, "layer": "meta", "name": "thread",
                       "args": {"comm": "pt_autograd_0"}})
            ev.append({"ts": t + 470, "dur": 9000, "pid": 100, "tid": 100, "rank": rank,
                       "layer": "nvtx", "name": "epoch", "cat": "startend",
                       "args": {"domain": "train", "end_tid": 101}})
        ev.append({"ts": t + 480, "dur": 10, "pid": 0, "tid": 0, "layer": "irq",
                   "name": "nvidia", "args": {"irq": 42, "cpu": 1}})
        t += 500
    ev.sort(key=lambda e: e["ts"])
    with open("%s/r%d.jsonl" % (d, rank), "w") as f:
        for e in ev:
            f.write(json.dumps(e, separators=(",", ":")) + "\n")
PY
cutchrome "$tmp/r0.jsonl" "$tmp/r1.jsonl" >"$tmp/t.json" 2>"$tmp/err" || { echo "FAIL cutchrome: exit $?"; exit 1; }
[ -s "$tmp/err" ] && { echo "FAIL cutchrome said: $(cat "$tmp/err")"; exit 1; }
python3 - "$tmp/r0.jsonl" "$tmp/r1.jsonl" "$tmp/t.json" <<'PY' || exit 1
import collections, json, sys
out = json.load(open(sys.argv[3]))
te, base = out["traceEvents"], out["otherData"]["base_ns"]
fail = []
def check(ok, msg):
    if not ok: fail.append(msg)
def ns(us): return round(us * 1000) + base

pname = {e["pid"]: e["args"]["name"] for e in te if e["ph"] == "M" and e["name"] == "process_name"}
psort = {e["pid"]: e["args"]["sort_index"] for e in te if e["ph"] == "M" and e["name"] == "process_sort_index"}
tname = {(e["pid"], e["tid"]): e["args"]["name"] for e in te if e["ph"] == "M" and e["name"] == "thread_name"}
tsort = {(e["pid"], e["tid"]): e["args"]["sort_index"] for e in te if e["ph"] == "M" and e["name"] == "thread_sort_index"}
byname = {v: k for k, v in pname.items()}
check(len(byname) == len(pname), "two processes share a name: %s" % pname)

gpu_intervals = collections.defaultdict(list)
flows_want = 0
for path in sys.argv[1:3]:
    ev = [json.loads(l) for l in open(path)]
    hdr = ev[0]["args"]["host"]
    rank = next(e["rank"] for e in ev if e["name"] == "process")
    proc = "rank %d on %s: python3" % (rank, hdr)
    check(proc in byname, "no process %r: %s" % (proc, sorted(pname.values())))
    if proc not in byname: continue
    jpid = byname[proc]
    # sorted by host, then rank: its host's processes after those of the ranks before it,
    # itself first among them (then the host's GPU and interrupts)
    mine = [p for p, n in pname.items() if n.endswith(" on " + hdr) or (" on %s:" % hdr) in n]
    check(psort.get(jpid) == 3 * rank and sorted(psort.get(p, -1) for p in mine) ==
          list(range(3 * rank, 3 * rank + 3)), "%s: sort indexes %s" % (proc, psort))
    # every host-side slice of the rank, on its own process, at its nanosecond
    want = collections.Counter((e["name"], e["ts"], e["dur"]) for e in ev
                               if e["layer"] in ("api", "ioctl", "sched"))
    got = collections.Counter((e["name"], ns(e["ts"]), round(e["dur"] * 1000)) for e in te
                              if e["ph"] == "X" and e["pid"] == jpid)
    check(want == got, "%s: slices differ: %d in the input, %d out" % (proc, sum(want.values()), sum(got.values())))
    # threads: the renamed one under its last name, its off-CPU track after it
    names = {t: n for (p, t), n in tname.items() if p == jpid}
    api = {n: t for t, n in names.items()}
    # (a thread of another host than the first has a made-up tid: its name says the real one)
    main, worker = ("python3", "pt_autograd_0") if rank == 0 else ("python3 (tid 100)", "pt_autograd_0 (tid 101)")
    check(main in api and worker in api, "%s: threads %s" % (proc, names))
    off = "pt_autograd_0 (tid 101) off-CPU"
    check(off in api, "%s: no track %r: %s" % (proc, off, names))
    if off in api and worker in api:
        check(tsort[(jpid, api[off])] == tsort[(jpid, api[worker])] + 32,
              "%s: the off-CPU track is not sorted after its thread" % proc)
        check(api[off] != 101, "the off-CPU track took the thread's tid")
    tids = {e["tid"] for e in te if e["ph"] == "X" and e["pid"] == jpid}
    check(len(tids) == 3, "%s: %d tracks with slices, want 3 (2 threads, 1 off-CPU)" % (proc, len(tids)))
    if rank > 0:
        check(not tids & {100, 101}, "the second host's threads kept tids of the first: %s" % tids)
    # interrupts per host
    irq = byname.get("interrupts on %s" % hdr)
    check(irq is not None, "no interrupts process for %s" % hdr)
    nirq = sum(1 for e in ev if e["layer"] == "irq")
    check(sum(1 for e in te if e["ph"] == "X" and e["pid"] == irq) == nirq, "%s: interrupts" % hdr)
    # GPU work: its GPU's process, a track per stream, named
    gp = byname.get("GPU GPU-%s (NVIDIA H200) on %s" % (hdr, hdr))
    check(gp is not None, "no GPU process for GPU-%s: %s" % (hdr, sorted(pname.values())))
    work = [e for e in ev if e["layer"] == "gpu"]
    got = collections.Counter((e["name"], ns(e["ts"]), tname.get((e["pid"], e["tid"]))) for e in te
                              if e["ph"] == "X" and e["pid"] == gp)
    want = collections.Counter((e["name"], e["ts"], "pid 100 on %s stream %s%s" % (
        hdr, e["args"]["stream"], ": copies" if e["args"]["stream"] == "0x7" else "")) for e in work)
    check(got == want, "%s: GPU slices or their tracks differ: %s" % (hdr, list((got - want).items())[:3]))
    gpu_intervals[gp] += [(e["ts"], e["ts"] + e["dur"]) for e in work]
    calls = {e["args"]["corr"]: e["ts"] for e in ev if e["layer"] == "api"}
    flows_want += sum(1 for e in work if calls.get(e["args"]["corr"], e["ts"] + 1) <= e["ts"])
    # NVTX start/end ranges: async, their domain a category
    se = [e for e in ev if e["layer"] == "nvtx" and e.get("cat") == "startend"]
    b = [e for e in te if e["ph"] == "b" and e["pid"] == jpid]
    check([(e["name"], e["cat"], ns(e["ts"])) for e in b] == [(e["name"], "nvtx,train", e["ts"]) for e in se],
          "%s: async NVTX ranges %s" % (proc, b))

# The busy counter: the work running on each GPU after every change (ends before starts at
# one time), back to 0.
for gp, iv in gpu_intervals.items():
    changes = sorted([(s, 1) for s, e in iv] + [(e, 0) for s, e in iv])
    want, n = [], 0
    for t, up in changes:
        n += 1 if up else -1
        want.append((t, n))
    got = [(ns(e["ts"]), e["args"]["work"]) for e in te if e["ph"] == "C" and e["pid"] == gp]
    check(got == want, "GPU %s: busy values %s, want %s" % (pname[gp], got[:8], want[:8]))
flows = sum(1 for e in te if e["ph"] == "f" and e["name"] == "submit")
check(flows == flows_want, "%d submit flows, want %d" % (flows, flows_want))
for m in fail[:10]: print("FAIL " + m)
sys.exit(1 if fail else 0)
PY
python3 tests/viewer-check/validate.py "$tmp/t.json" >"$tmp/v" 2>&1 || { echo "FAIL validate.py: $(tail -5 "$tmp/v")"; exit 1; }
exit 0
