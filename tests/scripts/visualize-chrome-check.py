#!/usr/bin/env python3
"""Checks cutchrome's output against its input the way Perfetto's JSON importer reads it.

usage: visualize-chrome-check.py INPUT.jsonl OUTPUT.json [OUTPUT.json ...]

Several outputs are the parts of one split trace. Output timestamps count from otherData's
base_ns. Checks: every output parses; on every
track (pid, tid) the slices nest once sorted as Perfetto sorts JSON events (by ts; at equal
ts longer X first, then other phases in file order); every span and instant of the input
appears exactly once with its arguments, named as cut-events(5) says (a C++ name demangled, as
c++filt does, the trace's name in args.mangled; a collective kernel's args.collective); every flow starts on a driver API call and ends on
an ioctl of that call (its parent id, or inside it in time on the same thread), or ends on the
GPU work the call submitted (the same args.corr); the device
memory counter ends at allocations minus frees; each lost record has a marker; every track
and process used is named. Prints one line per problem and exits 1 if there was any.
"""
import collections
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import names  # noqa: E402

problems = []


def problem(msg):
    if len(problems) < 50:
        print(msg)
    problems.append(msg)


def ns(us):
    return int(round(us * 1000))


def lines(path):
    """The lines of a trace, decompressed as the tools read it."""
    with open(path, "rb") as f:
        magic = f.read(4)
    if magic[:2] == b"\x1f\x8b" or magic == b"\x28\xb5\x2f\xfd":
        cmd = ["gzip", "-dc", path] if magic[:2] == b"\x1f\x8b" else ["zstd", "-dc", path]
        out = subprocess.run(cmd, capture_output=True, check=False).stdout
        return out.decode("utf-8", errors="replace").splitlines()
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read().splitlines()


def read_input(path):
    events = []
    for line in lines(path):
        try:
            ev = json.loads(line)
        except ValueError:
            continue  # bad lines are the reader's business: cutchrome skips them
        if isinstance(ev, dict) and "ts" in ev and "layer" in ev:
            events.append(ev)
    return events


def check_file(path, shown, spans, flows_by_id, named, tracks, counters, lost):
    with open(path) as f:
        doc = json.load(f)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    base = doc.get("otherData", {}).get("base_ns", 0) if isinstance(doc, dict) else 0
    key = {"X": lambda e: -ns(e["dur"])}
    order = sorted(range(len(events)), key=lambda i: (
        ns(events[i].get("ts", 0)),
        key[events[i]["ph"]](events[i]) if events[i]["ph"] == "X" else 0,
        i))
    stacks = collections.defaultdict(list)
    pending = collections.defaultdict(list)
    asyncs = {}
    for i in order:
        e = events[i]
        ph, track = e["ph"], (e.get("pid"), e.get("tid"))
        if ph in ("X", "i") and e.get("s", "t") == "t":
            start = ns(e["ts"]) + base
            end = start + (ns(e["dur"]) if ph == "X" else 0)
            st = stacks[track]
            while st and st[-1][1] <= start:
                st.pop()
            if st and end > st[-1][1]:
                problem("%s: %s at %d..%d on track %s overlaps %s ending at %d" % (
                    path, e["name"], start, end, track, st[-1][2]["name"], st[-1][1]))
            st.append((start, end, e))
            tracks.add(track)
            # an input's name: the output's, or args.mangled when that is what was shown
            # demangled
            m = e.get("args", {}).get("mangled")
            name = m if m is not None and shown.get(m) == e["name"] != m else e["name"]
            spans[(name, start, ns(e["dur"]) if ph == "X" else None)].append(e)
            for fid in pending.pop(track, []):
                flows_by_id[fid]["in"] = e
        elif ph in ("b", "e"):  # NVTX start/end ranges: async slices of their process
            if ph == "b":
                asyncs[(e["pid"], e.get("id"))] = e
            elif (e["pid"], e.get("id")) in asyncs:
                b = asyncs.pop((e["pid"], e.get("id")))
                m = b.get("args", {}).get("mangled")
                name = m if m is not None and shown.get(m) == b["name"] != m else b["name"]
                spans[(name, ns(b["ts"]) + base, ns(e["ts"]) - ns(b["ts"]))].append(b)
            else:
                problem("%s: an async end %s without its begin" % (path, e))
        elif ph == "s":
            st = stacks[track]
            flows_by_id[(path, e["id"])]["out"] = st[-1][2] if st else None
            flows_by_id[(path, e["id"])]["name"] = e["name"]
        elif ph == "f":
            fid = (path, e["id"])
            flows_by_id[fid]["f"] = True
            if e.get("bp") == "e":
                flows_by_id[fid]["in"] = stacks[track][-1][2] if stacks[track] else None
            else:
                pending[track].append(fid)
        elif ph == "M":
            if e["name"] == "thread_name":
                named.add((e["pid"], e["tid"]))
            elif e["name"] == "process_name":
                named.add(e["pid"])
        elif ph == "C":
            tracks.add((e["pid"], e["tid"]))
        elif ph == "i" and e.get("s") == "g":
            lost.append(e)
    for e in events:  # in file order: the running total as cutchrome computed it
        if e["ph"] == "C" and e["name"] == "device memory":
            counters[e["pid"]].append((ns(e["ts"]) + base, e["args"]["allocated"]))
    for fid, fl in flows_by_id.items():
        if fid[0] == path and (fl.get("out") is None or fl.get("in") is None):
            problem("%s: flow %s binds to no slice (%s)" % (path, fid[1], fl))


def main():
    inp, outs = sys.argv[1], sys.argv[2:]
    events = read_input(inp)
    spans = collections.defaultdict(list)
    flows = collections.defaultdict(dict)
    named, tracks, lost = set(), set(), []
    counters = collections.defaultdict(list)
    shown = names.demangled({ev["name"] for ev in events})
    for path in outs:
        check_file(path, shown, spans, flows, named, tracks, counters, lost)

    # Every span and instant exactly once, with its arguments, under the name it is shown by.
    want = collections.Counter()
    for ev in events:
        if ev["layer"] == "meta":
            continue
        k = (ev["name"], ev["ts"], ev.get("dur"))
        want[k] += 1
        a = ev.get("args") or {}
        name = ev["name"] if "mangled" in a else shown[ev["name"]]  # the trace's own kept
        coll = a.get("collective", names.collective(ev["name"]) if ev["layer"] == "gpu" else None)
        for out in spans.get(k, []):
            args = out.get("args", {})
            if all(args.get(a) == v for a, v in (ev.get("args") or {}).items()) and \
                    out["name"] == name and args.get("collective") == coll and \
                    ("mangled" in args) == (name != ev["name"] or "mangled" in a):
                break
        else:
            if k in spans:
                problem("%s at %d: arguments %s, shown as %r (collective %s), not in any output "
                        "slice: %s" % (k[0], k[1], ev.get("args"), name, coll,
                                       spans[k][0]))
    got = collections.Counter({k: len(v) for k, v in spans.items()})
    for k in set(want) | set(got):
        if want[k] != got[k]:
            problem("%s at %s dur %s: %d in the input, %d in the output" % (k[0], k[1], k[2], want[k], got[k]))

    # Flows: from an API call to an ioctl made inside it, or to the GPU work it submitted (the
    # same args.corr; the GPU is a process of its own).
    for fid, fl in flows.items():
        out, into = fl.get("out"), fl.get("in")
        if not out or not into:
            continue
        if fl.get("name") == "submit":
            corr = out.get("args", {}).get("corr")
            if not out["name"].startswith("cu") or into.get("args", {}).get("corr") != corr or \
                    corr is None or ns(into["ts"]) < ns(out["ts"]):
                problem("flow %s goes from %s to %s, not from a call to the work it submitted" %
                        (fid[1], out["name"], into["name"]))
            continue
        if not out["name"].startswith("cu") or into.get("cat") != "ioctl":
            problem("flow %s goes from %s to %s, not from an API call to an ioctl" % (fid[1], out["name"], into["name"]))
        elif "parent" in into.get("args", {}):
            if out["args"].get("id") != into["args"]["parent"]:
                problem("flow %s: ioctl of parent %s bound to call id %s" % (fid[1], into["args"]["parent"], out["args"].get("id")))
        elif not (ns(out["ts"]) <= ns(into["ts"]) and ns(into["ts"]) + ns(into["dur"]) <= ns(out["ts"]) + ns(out["dur"])):
            problem("flow %s: %s is not inside %s" % (fid[1], into["name"], out["name"]))
        if out.get("pid") != into.get("pid"):
            problem("flow %s crosses processes" % fid[1])

    # Device memory: successful allocations minus frees, per process.
    live, total = {}, collections.Counter()
    for ev in (e for e in events if e["layer"] == "api"):
        name, args = ev["name"], ev.get("args") or {}
        if "Host" in name or ev.get("ret", 0) != 0 or "dptr" not in args:
            continue
        key = (ev["pid"], int(args["dptr"], 16) if isinstance(args["dptr"], str) else args["dptr"])
        if name.startswith("cuMemFree") or name.startswith("cuMemAlloc"):
            total[ev["pid"]] -= live.pop(key, 0)
        if name.startswith("cuMemAlloc") and "bytes" in args:
            live[key] = args["bytes"]
            total[ev["pid"]] += args["bytes"]
    for pid, n in total.items():
        series = counters.get(pid) if 0 < pid < 1 << 22 else None
        if series is None:
            continue
        last = series[-1][1]  # the running total after the last event read
        if last != n:
            problem("device memory of pid %d ends at %d, expected %d" % (pid, last, n))

    nlost = sum(1 for e in events if e["layer"] == "meta" and e["name"] == "lost")
    if len(lost) != nlost:
        problem("%d lost records, %d markers" % (nlost, len(lost)))
    for t in tracks:
        if t not in named or t[0] not in named:
            problem("track %s has no thread_name or process_name" % (t,))
    if problems:
        print("%d problems" % len(problems))
        sys.exit(1)


main()
