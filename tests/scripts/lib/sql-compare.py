#!/usr/bin/env python3
"""Checks the rows of cut's DuckDB recipes (JSON Lines from share/sql/run.js) against a
reference: cutstat -j, cutgaps -j, or the expected.json of gen-ranks.py.

usage: sql-compare.py cutstat CUTSTAT.json ROWS.jsonl
       sql-compare.py cutgaps CUTGAPS.json ROWS.jsonl
       sql-compare.py expected EXPECTED.json ROWS.jsonl
       sql-compare.py collectives TRACE.jsonl ROWS.jsonl CUTGAPS.json CUTSTAT.json
Integers must be equal and integers; other numbers equal to 1e-9 (relative). Prints each
difference; exits 1 if there is one. "collectives" counts a trace's collective kernels per
rank by its own reading of the rule of cut-events(5), Names, and checks the ranks,
straggler-ranks and stragglers rows, cutgaps -j's rank_waits and cutstat -j's nccl_waits
against it.
"""
import json
import math
import re
import sys

bad = []


def same(a, b):
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if isinstance(a, int) and isinstance(b, int):
            return a == b
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
    return a == b


def check(what, want, got, keys=None):
    """want: the reference row; got: the recipe's; keys: which members (default: want's)."""
    for k in keys or want:
        if k not in got:
            bad.append("%s: no %s in %s" % (what, k, got))
        elif not same(want[k], got[k]):
            bad.append("%s: %s is %r, want %r" % (what, k, got[k], want[k]))


def table(what, want, got, key, keys=None, ordered=True):
    """Rows of a table, matched by key; in the same order when ordered."""
    if ordered and [w[key] for w in want] != [g[key] for g in got]:
        bad.append("%s: rows %s, want %s" % (what, [g[key] for g in got], [w[key] for w in want]))
    by = {g[key]: g for g in got}
    if len(by) != len(got) or len(want) != len(got):
        bad.append("%s: %d rows, want %d" % (what, len(got), len(want)))
    for w in want:
        if w[key] in by:
            check("%s %s" % (what, w[key]), w, by[w[key]], keys)
        else:
            bad.append("%s: no row %s" % (what, w[key]))


def rows(path):
    out = {}
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            out.setdefault(r.pop("recipe"), []).append(r)
    return out


def vs_cutstat(st, got):
    fns = got.get("api-functions", [])
    table("api-functions", st["functions"], fns, "name")
    api_ns = st["api_ns"]
    for f in st["functions"]:  # cutstat -j has no time_pct; its text and -c print it
        g = next((g for g in fns if g["name"] == f["name"]), None)
        if g and not same(g["time_pct"], 100 * f["total_ns"] / api_ns):
            bad.append("api-functions %s: time_pct %r" % (f["name"], g["time_pct"]))
    if "runtime" in st:  # the runtime layer's table, its ioctls included
        table("runtime-functions", st["runtime"], got.get("runtime-functions", []), "name")
    table("api-categories", st["categories"], got.get("api-categories", []), "category")
    table("api-transfers", st["transfers"], got.get("api-transfers", []), "dir")
    layers = got.get("layers", [])
    # cutstat counts the layers it knows; a build that knows fewer than the trace has
    # (nvtx, runtime before they land) reports the others as bad lines and leaves them out
    # of every number, the traced time included.
    known = {s["layer"] for s in st["layers"]}
    table("layers", st["layers"], [l for l in layers if l["layer"] in known], "layer")
    whole = ["api_ns", "lost", "untimed"]
    if known == {l["layer"] for l in layers}:
        whole.append("traced_ns")
    for l in layers[:1]:
        check("layers (whole trace)", st, l, whole)


def vs_cutgaps(gp, got):
    want = []
    for t in gp["threads"]:
        long = [g["length_ns"] for g in gp["gaps"] if g["kind"] == "thread" and g["tid"] == t["tid"]]
        want.append(dict(t, long_gaps=len(long), long_idle_ns=sum(long)))
    table("gaps", sorted(want, key=lambda t: (t["pid"], t["tid"])), got.get("gaps", []), "tid")


def vs_expected(exp, got):
    keyed = {"api-functions": "name", "runtime-functions": "name", "gpu-kernels": "name",
             "gpu-copies": "dir", "layers": "layer"}
    for recipe, want in exp.items():
        g = got.get(recipe, [])
        if recipe in keyed:
            table(recipe, want, g, keyed[recipe], ordered=recipe != "layers")
        else:  # ranks, gaps, straggler rows: in order
            if len(g) != len(want):
                bad.append("%s: %d rows, want %d" % (recipe, len(g), len(want)))
            for i, (w, r) in enumerate(zip(want, g)):
                check("%s row %d" % (recipe, i + 1), w, r)


def collective(name):
    """cut-events(5), Names: the identifier is the name, or the n characters after "_Z<n>" or
    "_ZL<n>"; it starts with nccl or rccl and its first run of letters ends in Kernel."""
    m = re.match(r"_ZL?([0-9]+)", name)
    ident = name[m.end():m.end() + int(m.group(1))] if m else name
    return re.match(r"[nr]ccl[A-Za-z]*Kernel(?![A-Za-z])", ident) is not None


def union(spans):
    total, end = 0, None
    for a, b in sorted(spans):
        if end is None or a > end:
            total, end = total + b - a, b
        elif b > end:
            total, end = total + b - end, b
    return total


def vs_trace(trace, got, gaps, stat):
    kernels = {}  # rank -> [(ts, end, name, collective)]
    with open(trace) as f:
        for line in f:
            e = json.loads(line)
            if e.get("layer") == "gpu" and e.get("cat") == "kernel" and "dur" in e:
                kernels.setdefault(e.get("rank"), []).append(
                    (e["ts"], e["ts"] + e["dur"], e["name"], collective(e["name"])))
    per = {}  # (name, rank) -> (count, total)
    for r, ks in kernels.items():
        for a, b, n, c in ks:
            if c:
                k, t = per.get((n, r), (0, 0))
                per[(n, r)] = (k + 1, t + b - a)
    count = {r: sum(k for (n, q), (k, t) in per.items() if q == r) for r in kernels}
    if len([r for r in count if count[r]]) < 2:
        bad.append("%s: collective kernels on %d ranks, want 2 or more" % (trace, len(count)))
    for row in got.get("ranks", []):
        r = row["rank"]
        if r not in kernels:
            continue
        ks = kernels[r]
        compute = union((a, b) for a, b, n, c in ks if not c)
        comm = union((a, b) for a, b, n, c in ks) - compute
        check("ranks rank %s" % r, {"compute_ns": compute, "comm_ns": comm}, row)
        if count[r] and not row["comm_ns"] > 0:
            bad.append("ranks rank %s: comm_ns %r with %d collectives" % (r, row["comm_ns"], count[r]))
    rows = {(g["name"], g["rank"]): (g["count"], g["total_ns"])
            for g in got.get("straggler-ranks", []) if g["kind"] == "collective"}
    if rows != per:
        bad.append("straggler-ranks: collectives %s, want %s" % (sorted(rows.items()), sorted(per.items())))
    names = {n for n, r in per}
    got_names = {g["name"] for g in got.get("stragglers", []) if g["kind"] == "collective"}
    if got_names != names:
        bad.append("stragglers: collectives %s, want %s" % (sorted(got_names), sorted(names)))
    for w in gaps["rank_waits"]["ranks"]:
        if w["collectives"] + w["unmatched"] != count.get(w["rank"], 0):
            bad.append("cutgaps rank %s: %d collectives and %d unmatched, want %d kernels" % (
                w["rank"], w["collectives"], w["unmatched"], count.get(w["rank"], 0)))
    if {w["rank"] for w in gaps["rank_waits"]["ranks"]} != {r for r in count if count[r]}:
        bad.append("cutgaps: ranks %s" % [w["rank"] for w in gaps["rank_waits"]["ranks"]])
    want = sorted((len([r for (m, r) in per if m == n]), max(t for (m, r), (k, t) in per.items() if m == n),
                   min(t for (m, r), (k, t) in per.items() if m == n)) for n in names)
    got_waits = sorted((w["ranks"], w["max_ns"], w["min_ns"]) for w in stat["ranks"]["nccl_waits"])
    if got_waits != want:
        bad.append("cutstat nccl_waits (ranks, max, min) %s, want %s" % (got_waits, want))


def main():
    if len(sys.argv) == 6 and sys.argv[1] == "collectives":
        with open(sys.argv[4]) as g, open(sys.argv[5]) as s:
            vs_trace(sys.argv[2], rows(sys.argv[3]), json.load(g), json.load(s))
        for b in bad[:40]:
            print("%s: %s" % (sys.argv[2], b))
        sys.exit(1 if bad else 0)
    if len(sys.argv) != 4 or sys.argv[1] not in ("cutstat", "cutgaps", "expected"):
        sys.exit(__doc__.split("\n\n")[1])
    with open(sys.argv[2]) as f:
        ref = json.load(f)
    got = rows(sys.argv[3])
    {"cutstat": vs_cutstat, "cutgaps": vs_cutgaps, "expected": vs_expected}[sys.argv[1]](ref, got)
    for b in bad[:40]:
        print("%s: %s" % (sys.argv[3], b))
    sys.exit(1 if bad else 0)


main()
