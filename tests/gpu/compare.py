"""compare.py: cut's gpu events against torch.profiler's (CUPTI) kernels, copies and memsets of
the same run (tests/gpu/torch_gpu_work.py).

usage: python compare.py CUT.jsonl PROFILE.json

Both lists are put in device start order per stream kind; pieces of work are paired in order
within each name (kernels) or kind (copies by direction, memsets), inside the profiled window.
Prints how many were paired, the median and 95th percentile |duration difference|, the same for
the gaps between consecutive work, and the GPU busy share each saw over the window.
"""
import json
import re
import sys
from collections import defaultdict

cut_path, prof_path = sys.argv[1], sys.argv[2]
cut = [json.loads(l) for l in open(cut_path)]
prof = json.load(open(prof_path))
pev = prof["traceEvents"] if isinstance(prof, dict) else prof


def kind_of_prof(e):
    c = e.get("cat", "")
    n = e.get("name", "")
    if c == "kernel" and n.startswith("cuthook_clock"):
        return None, None  # libcuthook's clock kernel: no work of the program
    if c == "kernel":
        return "kernel", n
    if c == "gpu_memcpy":
        d = "HtoD" if "HtoD" in n else "DtoH" if "DtoH" in n else "DtoD" if "DtoD" in n else "?"
        return "memcpy", "memcpy " + d
    if c == "gpu_memset":
        return "memset", "memset"
    return None, None


# The kernels of a graph launch are one piece of work to cut: from the first one's start to
# the last one's end (they share the launch's correlation id).
launcher = {e["args"]["correlation"]: e["name"] for e in pev
            if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {})}
P = []
graphs = defaultdict(list)
for e in pev:
    if e.get("ph") != "X":
        continue
    k, n = kind_of_prof(e)
    if not k:
        continue
    s, d = float(e["ts"]) * 1000, float(e["dur"]) * 1000
    corr = e.get("args", {}).get("correlation")
    if "GraphLaunch" in launcher.get(corr, ""):
        graphs[corr].append((s, s + d))
    else:
        P.append((s, d, k, n))
for v in graphs.values():
    s, e = min(x for x, _ in v), max(y for _, y in v)
    P.append((s, e - s, "graph", "graph"))
C = [(e["ts"], e["dur"], e["cat"], e["name"]) for e in cut if e["layer"] == "gpu"]
P.sort()
C.sort()
if not P or not C:
    sys.exit(f"nothing to compare: {len(P)} profiler, {len(C)} cut")


def key(w):
    return w[2] + (w[3] if w[2] == "memcpy" else "")


# cut saw the warm-up steps too, and names kernels as the driver does (mangled): pair each
# kind's pieces of work in order, from the last back, as many as the profiler saw.
byp = defaultdict(list)
byc = defaultdict(list)
for w in P:
    byp[key(w)].append(w)
for w in C:
    byc[key(w)].append(w)
pairs = []
unmatched = 0
for k, pw in byp.items():
    cw = byc.get(k, [])
    n = min(len(pw), len(cw))
    unmatched += len(pw) - n
    pairs += list(zip(pw[len(pw) - n:], cw[len(cw) - n:]))
def base(name):
    """The function's own name in a demangled one: the last identifier before its template
    or parameter list ("multi_tensor_apply_kernel" of "void at::native::(anonymous
    namespace)::multi_tensor_apply_kernel<...>(...)"), which the mangled name holds too."""
    head = name.replace("(anonymous namespace)", "").split("<")[0].split("(")[0]
    ids = re.findall(r"[A-Za-z_]\w*", head)
    return ids[-1] if ids else name


same = sum(1 for p, c in pairs if p[3] == c[3] or base(p[3]) in c[3])
print(f"pairs whose names agree (mangling aside): {same} of {len(pairs)}")


def q(v, f):
    v = sorted(v)
    return v[min(len(v) - 1, int(len(v) * f))] if v else float("nan")


dd = [abs(p[1] - c[1]) for p, c in pairs]
print(f"pieces of work: profiler {len(P)}, cut {len(C)}, paired {len(pairs)}, profiler's without a pair {unmatched}")
print(f"|duration difference| ns: median {q(dd, 0.5):.0f}, p95 {q(dd, 0.95):.0f}, max {max(dd):.0f}")
byk = defaultdict(list)
for p, c in pairs:
    byk[p[2]].append(c[1] - p[1])
for k, v in sorted(byk.items()):
    print(f"  {k}: n {len(v)}, median signed diff (cut - profiler) {q(v, 0.5):.0f} ns, median |diff| {q([abs(x) for x in v], 0.5):.0f}")
# Gaps between consecutive paired work, on each side's own clock.
pairs.sort(key=lambda pc: pc[0][0])
gp = [abs((pairs[i][0][0] - pairs[i - 1][0][0]) - (pairs[i][1][0] - pairs[i - 1][1][0]))
      for i in range(1, len(pairs))]
print(f"|start-to-start difference| ns: median {q(gp, 0.5):.0f}, p95 {q(gp, 0.95):.0f}")


def busy(ws, lo, hi):
    iv = sorted((max(s, lo), min(s + d, hi)) for s, d, *_ in ws if s + d > lo and s < hi)
    tot = 0
    cs = ce = None
    for s, e in iv:
        if cs is None or s > ce:
            if cs is not None:
                tot += ce - cs
            cs, ce = s, e
        else:
            ce = max(ce, e)
    if cs is not None:
        tot += ce - cs
    return tot / (hi - lo)


lo_p, hi_p = P[0][0], max(s + d for s, d, *_ in P)
cw = [c for _, c in pairs]
lo_c, hi_c = min(c[0] for c in cw), max(c[0] + c[1] for c in cw)
print(f"GPU busy over the window: profiler {100 * busy(P, lo_p, hi_p):.1f} %, cut {100 * busy(cw, lo_c, hi_c):.1f} %")
