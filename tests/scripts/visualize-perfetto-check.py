#!/usr/bin/env python3
"""Checks a trace cutperfetto wrote, decoded by protoc into text format, against the cut traces
(JSONL) it was made from, read here independently with the json module.

usage: visualize-perfetto-check.py [--layers a,b,...] [--overlaps N] [--unsorted]
                                   decoded.txt input.jsonl ...

Asserts: the first packet is a clock snapshot, and each machine's sequence starts with its clocks
(BOOTTIME = MONOTONIC, REALTIME from the header's clock pair) and defaults (MONOTONIC
timestamps, incremental state cleared) before any event and names the machine after its host;
every event needs incremental state; every interned name, category and annotation name is
defined on its sequence before use, once; every track is described before use, parents first;
each track's BEGIN/END pairs nest (stable sort by time, as trace processor does); the slices
and instants, per owner (thread, off-CPU, GPU stream, CPU), with name, category, start and
duration to the nanosecond and every argument, are exactly the input's (a C++ name shown
demangled, as c++filt demangles it, with the trace's name as "mangled", and a collective kernel
with "collective", as cut-events(5) says); the flows are exactly
API call -> ioctl (parent id, else nesting) and API call -> GPU work (equal args.corr in a
process); the memory and GPU busy counters take the values computed from the input; the tracks
of each kind, and the names of processes, threads and GPUs, are the input's. Input lines a cut
reader would reject are skipped; --layers adds layers the reader accepts; --unsorted leaves out
flows and counters, which follow the input's order.
Prints one line of counts; exits 1 with a line per problem.
"""
import codecs
import collections
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import names  # noqa: E402

LAYERS = {"api", "ioctl", "kernel", "irq", "sched", "gpu", "meta"}
THREAD_LAYERS = {"api", "runtime", "nvtx", "ioctl", "kernel"}
KNOWN = {"ts", "dur", "host", "rank", "pid", "tid", "layer", "name", "cat", "ret", "id",
         "parent", "pname", "nioctl", "ioctl_ns", "args"}
HEX = re.compile(r"0x[0-9a-fA-F]{1,16}$")
# Pids and tids from here up are made up (the real one is out of a Linux pid's range, or of
# ProcessDescriptor's int32): the track's name ends with the real one, "(pid N)" or "pid N".
SYNTH_ID = 1 << 22
REAL_ID = re.compile(r"^(.*?)(?: \((pid|tid) (\d+)\)|^(pid|tid) (\d+))$")


def real_id(name, what):
    """A made-up id's track name: the name without the real id, and the real id."""
    m = REAL_ID.match(name or "")
    if not m or (m.group(2) or m.group(4)) != what:
        bad("a track with a made-up %s is named %r, without the real one" % (what, name))
        return name, None
    if m.group(4):
        return None, int(m.group(5))
    return m.group(1), int(m.group(3))
SAME_BOOT_NS = 1000000000
problems = []


def bad(msg):
    if len(problems) < 40:
        print("FAIL: " + msg)
    problems.append(msg)


# ---- protoc's text format ----

def scalar(v):
    if v.startswith('"'):
        return codecs.escape_decode(v[1:-1].encode("utf-8"))[0].decode("utf-8")
    if v in ("true", "false"):
        return v == "true"
    for conv in (int, float):
        try:
            return conv(v)
        except ValueError:
            pass
    return v


def parse_text(text):
    root = {}
    stack = [root]
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        if line == "}":
            stack.pop()
        elif line.endswith(" {"):
            d = {}
            stack[-1].setdefault(line[:-2], []).append(d)
            stack.append(d)
        else:
            k, v = line.split(": ", 1)
            stack[-1].setdefault(k, []).append(scalar(v))
    return root.get("packet", [])


def one(d, k, default=None):
    return d.get(k, [default])[-1]


# ---- the input, as a cut reader accepts it ----

def api_categories():
    cats = {}
    top = os.environ.get("CUT_TOP", os.path.join(os.path.dirname(__file__), "../.."))
    for line in open(os.path.join(top, "share/data/api-categories.tsv")):
        if not line.startswith("#") and "\t" in line:
            name, cat = line.rstrip("\n").split("\t")[:2]
            cats[name] = cat
    return cats


CATS = api_categories()


def api_category(name):
    while True:
        if name in CATS:
            return CATS[name]
        m = re.match(r"(.*)(_ptsz|_ptds|_v\d+)$", name)
        if not m:
            return "other"
        name = m.group(1)


def isint(v):
    return isinstance(v, int) and not isinstance(v, bool)


def valid(e):
    if not isinstance(e, dict) or e.get("layer") not in LAYERS:
        return False
    if not all(isint(e.get(k)) and e[k] >= 0 for k in ("ts", "pid", "tid")):
        return False
    if not isinstance(e.get("name"), str) or not e["name"]:
        return False
    return "dur" not in e or (isint(e["dur"]) and e["dur"] >= 0)


def as_int(v):
    if isint(v):
        return v
    if isinstance(v, str) and (v.isdigit() or HEX.match(v)):
        return int(v, 16 if v.startswith("0x") else 10)
    return None


def flat(prefix, v, out):
    if isinstance(v, dict) and v:
        for k, x in v.items():
            flat(prefix + "." + k if prefix else k, x, out)
    elif isinstance(v, list) and v:
        for i, x in enumerate(v):
            flat("%s[%d]" % (prefix, i), x, out)
    elif isinstance(v, bool):
        out.append((prefix, "bool", v))
    elif isint(v):
        out.append((prefix, "int", v))
    elif isinstance(v, float):
        out.append((prefix, "dbl", v))
    elif isinstance(v, str):
        out.append((prefix, "ptr", int(v, 16)) if HEX.match(v) else (prefix, "str", v))
    else:
        out.append((prefix, "json", json.dumps(v, separators=(",", ":"))))


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


def event_args(e):
    out = []
    for k in ("ret", "id", "parent", "nioctl", "ioctl_ns"):
        if k in e:
            out.append((k, "int", e[k]))
    if isinstance(e.get("args"), dict):
        for k, v in e["args"].items():
            flat(k, v, out)
    for k, v in e.items():
        if k not in KNOWN:
            flat(k, v, out)
    return tuple(out)


class Procs:
    """share/lib/procs.h's processes: each a pid on a host, and the host and rank of the
    records that lack them."""

    def __init__(self):
        self.v = []  # [pid, host or None, envelope rank, args.rank]
        self.bypid, self.byhost = {}, {}

    def of(self, e, a):
        host = e["host"] if isinstance(e.get("host"), str) else None
        if host is None and e["layer"] == "meta" and e["name"] == "header" and \
                isinstance(a.get("host"), str) and a["host"]:
            host = a["host"]
        pid = e["pid"]
        if pid not in self.bypid:
            self.bypid[pid] = len(self.v)
            self.v.append([pid, host, -1, -1])
        i = self.bypid[pid]
        if host is not None and self.v[i][1] != host:
            if (host, pid) not in self.byhost:
                if self.v[i][1] is None:  # the first of the pid, met without a host so far
                    self.v[i][1] = host
                else:
                    self.v.append([pid, host, -1, -1])
                    i = len(self.v) - 1
                self.byhost[(host, pid)] = i
            i = self.byhost[(host, pid)]
        p = self.v[i]
        if isint(e.get("rank")) and e["rank"] >= 0 and p[2] < 0:
            p[2] = e["rank"]
        if e["layer"] == "meta" and e["name"] == "process" and p[3] < 0 and \
                isint(a.get("rank")) and a["rank"] >= 0:
            p[3] = a["rank"]
        return i

    def host(self, i):
        return self.v[i][1]

    def rank(self, i):
        return self.v[i][2] if self.v[i][2] >= 0 else self.v[i][3]


class Expected:
    def __init__(self):
        self.machines = []  # [host, clock or None]
        self.slices = collections.Counter()
        self.spans = []  # (owner, name, ts, end, event) per thread, for flows
        self.tracks = collections.defaultdict(set)
        self.names = {}  # owner -> expected name
        self.memory = collections.Counter()
        self.busy = collections.defaultdict(list)
        self.corr = collections.defaultdict(lambda: ([], []))
        self.ioctls = []
        self.lost = 0
        self.devref = {}  # (machine, pid, ordinal) -> uuid, from device records

    def machine(self, host, clock):
        for i, (h, c) in enumerate(self.machines):
            if h == host and (c is None) == (clock is None) and (
                    c is None or abs((clock[1] - clock[0]) - (c[1] - c[0])) < SAME_BOOT_NS):
                return i + 1
        self.machines.append([host, clock])
        return len(self.machines)

    def read(self, path):
        seq, header_host, header_clock = None, "", None
        procs = {}
        live = {}
        events = []
        for line in lines(path):
            try:
                e = json.loads(line)
            except ValueError:
                continue
            if valid(e):
                events.append(e)
        shown = names.demangled({e["name"] for e in events})
        # Processes by share/lib/procs.h's rule, per file: a record without a host is of
        # the first process of its pid, which takes the host of the first record of it that
        # names one (its envelope's, or a header's args.host); its rank is the first rank
        # an envelope gives it, else its process record's args.rank. The timeline puts a
        # process on the machine of the host known when it is first met, else the file's.
        rule = Procs()
        where = {}  # the rule's process -> its machine
        headed = False
        for e in events:
            a = e.get("args") if isinstance(e.get("args"), dict) else {}
            i = rule.of(e, a)
            if e["layer"] == "meta" and e["name"] == "header":
                if not headed and seq is None:
                    c = a.get("clock") if isinstance(a.get("clock"), dict) else {}
                    header_host = a["host"] if isinstance(a.get("host"), str) else ""
                    header_clock = (c["monotonic_ns"], c["realtime_ns"]) if isint(
                        c.get("monotonic_ns")) and isint(c.get("realtime_ns")) else None
                    if header_host:  # else its machine when needed
                        seq = self.machine(header_host, header_clock)
                headed = True
                continue
            if e["layer"] == "meta" and e["name"] not in ("process", "thread", "device", "lost") \
                    and not (e["name"] == "symbol" and a.get("kind") == "stream"):
                continue  # nothing the timeline shows

            def on(host):
                nonlocal seq
                if host is None or host == header_host:
                    if seq is None:
                        seq = self.machine(header_host, header_clock)
                    return seq
                return self.machine(host, header_clock)

            if i not in where:
                where[i] = on(rule.host(i))
            s = where[i]
            srec = on(e["host"]) if isinstance(e.get("host"), str) else s
            pid, tid, ts, lay = e["pid"], e["tid"], e["ts"], e["layer"]
            proc = procs.setdefault((s, pid), {})
            if rule.rank(i) >= 0:
                proc["rank"] = rule.rank(i)
                self.names[("process", s, pid)] = proc
            if lay == "meta":
                self.meta(e, a, s, proc, srec)
                continue
            end = ts + e["dur"] if "dur" in e else None
            cat = e.get("cat") or (api_category(e["name"]) if lay == "api" else lay)
            if lay == "nvtx" and e.get("cat") == "startend" and end is not None:
                dom = a.get("domain") if isinstance(a.get("domain"), str) and a["domain"] else None
                owner = ("async", s, pid, dom)
                self.tracks["async"].add(owner)
            elif lay in ("api", "runtime", "nvtx", "ioctl", "kernel"):
                owner = ("thread", s, pid, tid)
            elif lay == "sched":
                owner = ("offcpu", s, pid, tid)
                self.tracks["offcpu"].add(owner)
            elif lay == "gpu":
                dev = as_int(a.get("device"))
                dev = -1 if dev is None else dev
                st = as_int(a.get("stream"))
                dkey = self.device(s, pid, dev)
                owner = ("stream",) + dkey[1:] + (pid, -1 if st is None else st)
                self.tracks["stream"].add(owner)
                self.tracks["device"].add(dkey)
                if end is not None:  # at one time: ends, starts, then ends of work of no length
                    self.busy[("busy",) + dkey[1:]] += [(ts, 1, 1), (end, 0, 2 if end == ts else 0)]
            else:
                cpu = as_int(a.get("cpu"))
                owner = ("irq", srec, -1 if cpu is None else cpu)
                self.tracks["irq"].add(owner)
                self.tracks["interrupts"].add(srec)
            if owner[0] in ("thread", "offcpu"):
                self.tracks["thread"].add(("thread", s, pid, tid))
            if owner[0] != "irq" and not (owner[0] == "stream" and owner[2] == "uuid"):
                self.tracks["process"].add(("process", s, pid))
            # the name shown, the trace's in "mangled" (unless its args have one), the
            # collective a kernel is (unless they say)
            name, more = e["name"] if "mangled" in a else shown[e["name"]], []
            if name != e["name"]:
                more.append(("mangled", "str", e["name"]))
            if lay == "gpu" and names.collective(e["name"]) and "collective" not in a:
                more.append(("collective", "str", names.collective(e["name"])))
            key = (owner, name, ts, e.get("dur"), cat,
                   tuple(sorted(event_args(e) + tuple(more))))
            self.slices[key] += 1
            if lay == "api" and end is not None:
                self.spans.append((owner, e, end))
            if lay == "ioctl":
                self.ioctls.append((owner, e, end if end is not None else ts))
            if lay in ("api", "gpu") and isint(a.get("corr")):
                self.corr[(s, pid, a["corr"])][lay == "gpu"].append((owner, name, ts))
            if lay == "api":
                self.count_memory(e, a, s, live)

    def meta(self, e, a, s, proc, srec):
        pid, tid = e["pid"], e["tid"]
        if e["name"] == "process":
            self.tracks["process"].add(("process", s, pid))
            for k in ("comm", "name"):
                if isinstance(a.get(k), str) and a[k]:
                    proc["name"] = a[k]
            self.names[("process", s, pid)] = proc
        elif e["name"] == "thread":
            self.tracks["thread"].add(("thread", s, pid, tid))
            self.tracks["process"].add(("process", s, pid))
            n = self.names.setdefault(("thread", s, pid, tid), {})
            for k in ("comm", "name"):
                if isinstance(a.get(k), str) and a[k]:
                    n[k] = a[k]
        elif e["name"] == "device" and isint(a.get("device")):
            # A GPU named by uuid is one for every process that used it.
            if isinstance(a.get("uuid"), str) and a["uuid"]:  # a GPU of the record's host
                self.devref[(s, pid, a["device"])] = (srec, a["uuid"])
            dkey = self.device(s, pid, a["device"])
            self.tracks["device"].add(dkey)
            if dkey[2] != "uuid":
                self.tracks["process"].add(("process", s, pid))
            if isinstance(a.get("name"), str) and a["name"]:
                self.names[dkey] = a["name"]
        elif e["name"] == "lost":
            self.tracks["process"].add(("process", s, pid))
            count = a.get("count", 0) if isint(a.get("count")) else 0
            key = (("process", s, pid), "lost %d events" % count, e["ts"], None, "lost",
                   tuple(sorted(event_args(e))))
            self.slices[key] += 1
            self.lost += 1

    def device(self, s, pid, dev):
        if (s, pid, dev) in self.devref:
            return ("device", self.devref[(s, pid, dev)][0], "uuid", self.devref[(s, pid, dev)][1])
        return ("device", s, pid, dev)

    def count_memory(self, e, a, s, live):
        name = e["name"]
        alloc = name.startswith("cuMemAlloc")
        if (not alloc and not name.startswith("cuMemFree")) or "Host" in name:
            return
        if e.get("ret", 0) != 0 or as_int(a.get("dptr")) is None:
            return
        key = ("memory", s, e["pid"])
        d = live.setdefault(key, {"total": 0})
        dptr = as_int(a["dptr"])
        old = d.pop(dptr, None)
        if old is not None:
            d["total"] -= old
        if alloc and as_int(a.get("bytes")) is not None:
            d[dptr] = as_int(a["bytes"])
            d["total"] += d[dptr]
        elif old is None:
            return
        self.memory[(key, e["ts"] + e.get("dur", 0) if alloc else e["ts"], d["total"])] += 1

    def flows(self):
        by_thread = collections.defaultdict(list)
        for owner, e, end in self.spans:
            by_thread[owner].append((e, end))
        pairs = collections.Counter()
        for owner, i, iend in self.ioctls:
            best = None
            for a, aend in by_thread[owner]:
                if not (a["ts"] <= i["ts"] < aend):
                    continue
                if "parent" in i:
                    if a.get("id") == i["parent"]:
                        best = a
                        break
                elif best is None or a["ts"] > best["ts"]:
                    best = a
            if best is not None:
                ends = ((owner, best["name"], best["ts"]), (owner, i["name"], i["ts"]))
                pairs[tuple(sorted(ends))] += 1
        for (s, pid, corr), (api, gpu) in self.corr.items():
            if len(api) == 1 and len(gpu) == 1:
                pairs[tuple(sorted((api[0], gpu[0])))] += 1
        return pairs

    def busy_values(self):
        out = collections.Counter()
        for key, changes in self.busy.items():
            n = 0
            for t, up, _ in sorted(changes, key=lambda c: (c[0], c[2])):
                n += 1 if up else -1
                out[(key, t, n)] += 1
        return out


# ---- the output ----

def check(packets, exp, want_overlaps, unsorted):
    if not packets or "clock_snapshot" not in packets[0]:
        bad("the first packet is not a clock snapshot")
    seqs = {}
    tracks = {}
    order = []
    for n, p in enumerate(packets):
        seq = one(p, "trusted_packet_sequence_id")
        if seq is None:
            bad("packet %d: no trusted_packet_sequence_id" % n)
            continue
        st = seqs.setdefault(seq, {"interned": {}, "defaults": False, "snapshot": None})
        if one(p, "machine_id", 0) != seq - 1:
            bad("packet %d: machine_id %s on sequence %d" % (n, one(p, "machine_id"), seq))
        if "clock_snapshot" in p:
            if st["snapshot"] is not None or not one(p, "first_packet_on_sequence"):
                bad("packet %d: clock snapshot not first on sequence %d" % (n, seq))
            st["snapshot"] = {c["clock_id"][0]: c["timestamp"][0]
                              for c in p["clock_snapshot"][0]["clocks"]}
        elif st["snapshot"] is None:
            bad("packet %d: sequence %d starts without a clock snapshot" % (n, seq))
        for si in p.get("system_info", []):
            st["machine_name"] = one(si, "machine_name")
        if "trace_packet_defaults" in p:
            if one(p["trace_packet_defaults"][0], "timestamp_clock_id") != 3:
                bad("packet %d: defaults are not CLOCK_MONOTONIC" % n)
            if not one(p, "sequence_flags", 0) & 1:
                bad("packet %d: defaults without SEQ_INCREMENTAL_STATE_CLEARED" % n)
            st["defaults"] = True
        for idata in p.get("interned_data", []):
            for kind in ("event_names", "event_categories", "debug_annotation_names"):
                for entry in idata.get(kind, []):
                    i, s = one(entry, "iid"), one(entry, "name")
                    old = st["interned"].setdefault((kind, i), s)
                    if old != s or i == 0:
                        bad("packet %d: iid %d of %s redefined or invalid" % (n, i, kind))
        for td in p.get("track_descriptor", []):
            uuid = one(td, "uuid")
            parent = one(td, "parent_uuid")
            if parent is not None and parent not in tracks:
                bad("packet %d: track %d's parent %d is not described yet" % (n, uuid, parent))
            tracks.setdefault(uuid, {}).update(td)
        for te in p.get("track_event", []):
            if not st["defaults"] or not one(p, "sequence_flags", 0) & 2:
                bad("packet %d: event without defaults or SEQ_NEEDS_INCREMENTAL_STATE" % n)
            if one(te, "track_uuid") not in tracks:
                bad("packet %d: event on undescribed track %s" % (n, one(te, "track_uuid")))
                continue
            order.append((one(p, "timestamp"), n, seq, te, st["interned"]))

    def resolve(interned, kind, i, n):
        s = interned.get((kind, i))
        if s is None:
            bad("packet %d: %s iid %s used before it was defined" % (n, kind, i))
        return s

    def ann(interned, a, prefix, out, n, named=True):
        name = prefix
        if named:
            key = resolve(interned, "debug_annotation_names", one(a, "name_iid"), n)
            name = prefix + "." + key if prefix else key
        if "dict_entries" in a:
            for d in a["dict_entries"]:
                ann(interned, d, name, out, n)
        elif "array_values" in a:
            for i, d in enumerate(a["array_values"]):
                ann(interned, d, "%s[%d]" % (name, i), out, n, False)
        else:
            for f, t in (("int_value", "int"), ("uint_value", "int"), ("pointer_value", "ptr"),
                         ("string_value", "str"), ("bool_value", "bool"),
                         ("double_value", "dbl"), ("legacy_json_value", "json")):
                if f in a:
                    out.append((name, t, one(a, f)))

    real_pid = {}  # (sequence, made-up pid) -> the real one, filled below

    # Owners of tracks.
    def owner(uuid):
        t = tracks[uuid]
        seq = t["_seq"]
        if "process" in t:
            pid = one(t["process"][0], "pid")
            return ("process", seq, real_pid.get((seq, pid), pid))
        if "thread" in t:
            th = t["thread"][0]
            pid, tid = one(th, "pid"), one(th, "tid")
            if tid >= SYNTH_ID:
                tid = real_id(one(th, "thread_name"), "tid")[1]
            return ("thread", seq, real_pid.get((seq, pid), pid), tid)
        name = one(t, "name", "")
        par = one(t, "parent_uuid")
        m = re.match(r"(.*) overlap \d+$", name)
        if m:
            return owner(par)
        po = owner(par) if par is not None else None
        if name.startswith("off-CPU"):
            return ("offcpu",) + po[1:]
        m = re.match(r"NVTX(?:: (.*))?$", name)
        if m:
            return ("async",) + po[1:3] + (m.group(1),)
        if name == "device memory":
            return ("memory",) + po[1:]
        m = re.match(r"GPU (-?\d+) busy$", name)
        if m:
            return ("busy",) + po[1:]
        m = re.match(r"GPU (-?\d+)(: .*)? \(([^()]*)\)$", name)
        if m and po is None:  # a GPU shared by processes: named with its uuid
            return ("device", seq, "uuid", m.group(3))
        m = re.match(r"GPU (-?\d+)", name)
        if m:
            return ("device",) + po[1:3] + (int(m.group(1)),)
        m = re.match(r"(?:pid (\d+) )?(?:.* \()?(?:stream (0x[0-9a-f]+)|(no stream))\)?$", name)
        if m and po and po[0] == "device":
            pid = int(m.group(1)) if m.group(1) else po[2]
            return ("stream",) + po[1:] + (pid, int(m.group(2), 16) if m.group(2) else -1)
        m = re.match(r"CPU (\d+|unknown)$", name)
        if m:
            return ("irq", seq, int(m.group(1)) if m.group(1) != "unknown" else -1)
        if name == "interrupts":
            return ("interrupts", seq)
        return ("unknown", name)

    # Each track's sequence: that of its first descriptor's packet.
    for p in packets:
        for td in p.get("track_descriptor", []):
            tracks[one(td, "uuid")].setdefault("_seq", one(p, "trusted_packet_sequence_id"))
    # Processes with made-up pids: the real ones, from their names.
    for t in tracks.values():
        if "process" in t and one(t["process"][0], "pid") >= SYNTH_ID:
            real_pid[(t["_seq"], one(t["process"][0], "pid"))] = real_id(
                one(t["process"][0], "process_name"), "pid")[1]

    # Slices: a stable sort by time, then a stack per track, as trace processor reads them.
    order.sort(key=lambda x: (x[0], x[1]))
    stacks = collections.defaultdict(list)
    slices = collections.Counter()
    flows = collections.defaultdict(list)
    counters = collections.Counter()
    for ts, n, seq, te, interned in order:
        uuid = one(te, "track_uuid")
        typ = one(te, "type")
        if typ in ("TYPE_SLICE_BEGIN", "TYPE_INSTANT"):
            args = []
            for a in te.get("debug_annotations", []):
                ann(interned, a, "", args, n)
            s = {"ts": ts, "name": resolve(interned, "event_names", one(te, "name_iid"), n),
                 "cat": resolve(interned, "event_categories", one(te, "category_iids"), n),
                 "args": tuple(sorted(args)),
                 "flows": te.get("flow_ids", []) + te.get("terminating_flow_ids", []),
                 "owner": owner(uuid)}
            if typ == "TYPE_INSTANT":
                slices[(s["owner"], s["name"], ts, None, s["cat"], s["args"])] += 1
                for f in s["flows"]:
                    flows[f].append((s["owner"], s["name"], ts))
            else:
                stacks[uuid].append(s)
        elif typ == "TYPE_SLICE_END":
            if not stacks[uuid]:
                bad("packet %d: END on track %d with no open slice" % (n, uuid))
                continue
            s = stacks[uuid].pop()
            slices[(s["owner"], s["name"], s["ts"], ts - s["ts"], s["cat"], s["args"])] += 1
            for f in s["flows"] + te.get("flow_ids", []) + te.get("terminating_flow_ids", []):
                flows[f].append((s["owner"], s["name"], s["ts"]))
        elif typ == "TYPE_COUNTER":
            counters[(owner(uuid), ts, one(te, "counter_value"))] += 1
    for uuid, st in stacks.items():
        if st:
            bad("track %d: %d slices never ended" % (uuid, len(st)))

    # Clocks of each machine.
    for i, (host, clock) in enumerate(exp.machines):
        snap = seqs.get(i + 1, {}).get("snapshot")
        want = {6: clock[0], 3: clock[0], 1: clock[1]} if clock else {6: 0, 3: 0}
        if snap != want:
            bad("machine %d (%r): clock snapshot %s, want %s" % (i, host, snap, want))
        if seqs.get(i + 1, {}).get("machine_name") != (host or None):
            bad("machine %d named %r, want %r" % (i, seqs.get(i + 1, {}).get("machine_name"), host))
    if len(seqs) != len(exp.machines):
        bad("%d sequences, want one per machine: %d" % (len(seqs), len(exp.machines)))

    # Slices, instants, flows, counters.
    if slices != exp.slices:
        missing, extra = exp.slices - slices, slices - exp.slices
        for k in list(missing)[:5]:
            bad("slice missing: %s" % (k,))
        for k in list(extra)[:5]:
            bad("slice not in the input: %s" % (k,))
    pairs = collections.Counter()
    for f, ends in flows.items():
        if len(ends) == 2:
            pairs[tuple(sorted(ends))] += 1
        elif not (len(ends) == 1 and f >= 1 << 63):
            bad("flow %d joins %d slices" % (f, len(ends)))
    want_pairs = exp.flows()
    if pairs != want_pairs and not unsorted:
        bad("flows: %d, want %d; missing %s; extra %s" % (
            sum(pairs.values()), sum(want_pairs.values()), list(want_pairs - pairs)[:3],
            list(pairs - want_pairs)[:3]))
    mem = collections.Counter({k: v for k, v in counters.items() if k[0][0] == "memory"})
    if mem != exp.memory and not unsorted:
        bad("memory counter: %s, want %s" % (sorted(mem)[:5], sorted(exp.memory)[:5]))
    busy = collections.Counter({k: v for k, v in counters.items() if k[0][0] == "busy"})
    if busy != exp.busy_values() and not unsorted:
        bad("GPU busy counter differs: %d values, want %d" % (
            sum(busy.values()), sum(exp.busy_values().values())))

    # Tracks of each kind, and names.
    kinds = collections.defaultdict(set)
    overlaps = 0
    for uuid, t in tracks.items():
        if uuid == 0:
            if one(t, "process_ordering") != "PROCESS_ORDERING_EXPLICIT":
                bad("the root track does not order processes")
            continue
        if re.search(r" overlap \d+$", one(t, "name", "")):
            overlaps += 1
            continue
        o = owner(uuid)
        kinds[o[0]].add(o if o[0] != "interrupts" else o[1])
        if o[0] == "process" and o in exp.names:
            p = exp.names[o]
            host = exp.machines[o[1] - 1][0]
            want = ("rank %d (%s)" % (p["rank"], host) if host else
                    "rank %d" % p["rank"]) if "rank" in p else \
                "%s (%s)" % (p["name"], host) if p.get("name") and host and \
                len(exp.machines) > 1 else p.get("name")
            got = one(t["process"][0], "process_name")
            if one(t["process"][0], "pid") >= SYNTH_ID:
                got = real_id(got, "pid")[0]
            if got != want:
                bad("process %s named %r, want %r" % (o, got, want))
        if o[0] == "thread" and o in exp.names:
            n = exp.names[o]
            want = n.get("name", n.get("comm"))
            got = one(t["thread"][0], "thread_name")
            if one(t["thread"][0], "tid") >= SYNTH_ID:
                got = real_id(got, "tid")[0]
            if got != want:
                bad("thread %s named %r, want %r" % (o, got, want))
        if o[0] == "device" and o in exp.names and exp.names[o] not in one(t, "name"):
            bad("GPU %s named %r, want its name %r" % (o, one(t, "name"), exp.names[o]))
    # Processes ordered by host then rank once there are ranks or several machines: hosts by
    # their lowest rank (those without after), on a host its ranks by rank, then the rest.
    procs = [(one(t, "sibling_order_rank"), owner(u)) for u, t in tracks.items()
             if u != 0 and "process" in t and owner(u)[0] == "process"]
    ranked = {o: exp.names[o]["rank"] for _, o in procs if "rank" in exp.names.get(o, {})}
    if ranked or len(exp.machines) > 1:
        low = {}
        for o, r in ranked.items():
            low[o[1]] = min(r, low.get(o[1], r))
        if 0 not in tracks or any(r is None for r, _ in procs):
            bad("processes not ordered: %s" % sorted((r, o) for r, o in procs if r is None)[:4])
        else:
            keys = [((0, low[o[1]]) if o[1] in low else (1, o[1]), o[1],
                     (0, ranked[o]) if o in ranked else (1, 0)) for _, o in sorted(procs)]
            for i in range(1, len(keys)):
                if keys[i] < keys[i - 1] or (keys[i] == keys[i - 1] and keys[i][2][0] == 0):
                    bad("processes not by host then rank: %s" % keys)
                    break
    for kind in ("process", "thread", "offcpu", "device", "stream", "irq", "interrupts", "async"):
        if kinds[kind] != exp.tracks[kind]:
            bad("%s tracks: %d, want %d: %s" % (kind, len(kinds[kind]), len(exp.tracks[kind]),
                                                 sorted(kinds[kind] ^ exp.tracks[kind], key=str)[:4]))
    if {k[0] for k in exp.memory} != kinds["memory"]:
        bad("memory counter tracks: %d, want %d" % (
            len(kinds["memory"]), len({k[0] for k in exp.memory})))
    if want_overlaps is not None and overlaps != want_overlaps:
        bad("%d overlap tracks, want %d" % (overlaps, want_overlaps))
    nslices = sum(v for k, v in slices.items() if k[3] is not None)
    print("%d packets, %d machines, %d tracks (%d overlap), %d slices, %d instants (%d lost), "
          "%d flows, %d counter values" % (
              len(packets), len(seqs), len(tracks), overlaps, nslices,
              sum(slices.values()) - nslices, exp.lost, sum(pairs.values()),
              sum(counters.values())))


def main():
    args = sys.argv[1:]
    want_overlaps, unsorted = None, False
    while args and args[0].startswith("--"):
        if args[0] == "--unsorted":
            unsorted = True
            args = args[1:]
            continue
        if args[0] == "--layers":
            LAYERS.update(args[1].split(","))
        elif args[0] == "--overlaps":
            want_overlaps = int(args[1])
        args = args[2:]
    if len(args) < 2:
        sys.exit(__doc__.split("\n\n")[1])
    exp = Expected()
    for path in args[1:]:
        exp.read(path)
    check(parse_text(open(args[0], encoding="utf-8").read()), exp, want_overlaps, unsorted)
    sys.exit(1 if problems else 0)


main()
