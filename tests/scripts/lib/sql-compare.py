#!/usr/bin/env python3
"""Checks the rows of cut's DuckDB recipes (JSON Lines from share/sql/run.js) against a
reference: cutstat -j, cutgaps -j, or the expected.json of gen-ranks.py.

usage: sql-compare.py cutstat CUTSTAT.json ROWS.jsonl
       sql-compare.py cutgaps CUTGAPS.json ROWS.jsonl
       sql-compare.py expected EXPECTED.json ROWS.jsonl
Integers must be equal and integers; other numbers equal to 1e-9 (relative). Prints each
difference; exits 1 if there is one.
"""
import json
import math
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


def main():
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
