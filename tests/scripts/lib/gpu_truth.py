"""gpu_truth.py: a trace's gpu events against the stand-in device's truth (tests/fixtures/fakegpu.c,
FAKEGPU_TRUTH: "kind start end busy|late|idle" a piece of work, in submission order), for gpu-hook.sh
and capture-preload.sh.

Work that started when what its stream waited for was done (the truth says "busy") has its start
and end from events, read in multiples of 32 ns: its duration is exact, but for the mapping of
the device's clock onto the host's, which the layer states the error of (cuthook(1)): a float of
ms for the time since the anchor (its 2^-24), the rate's error over the duration (no more than
twice the trailer's error_ns a second), and a new anchor between the work before and this one,
which moves the end but not the start (the change of the mapping's offset). Load widens each;
a wrong start rule is microseconds off, whatever the load.

Work on an idle stream (the first of a round, or any after its thread was preempted between
submissions), and work whose start the layer took from its call ("start": "call") or from its
twins ("start": "twins": a call that ran on after handing its work over), started the
device's pick-up time after its call returned: its start, against the truth's through the
mapping's offset (measured over the pieces whose end is measured), is good to the time the
thread took to return from handing the work over, which the call's duration bounds, late, and
(a kernel's) to the ninth of the call the layer takes to lie after the hand-over, early (a loaded
machine stretches it: in one clean .ci/run on an overloaded machine most were, and the
median start came out 2.2 us late). What a start is off by beyond its call's duration, the
median of ten or more, is held to half the stand-in's pick-up time (FAKEGPU_LAUNCH_NS), which a
wrong rule misses by the whole of it and more, or to twice the mapping's median error or its
largest (the trailer's error_ns) where that is more (the start carries the mapping's error when
the pick-up time was sampled, the ends it is held through the mapping's later).

Work the truth says started when the work before it ended, whose call returned well before that
(beyond the mapping's error and a microsecond), was queued behind it: it must not start from its
call. A sanitized build (CUT_SANITIZED), run for its memory errors, is not held to that: so
slowed, the library reads its times late enough for one such piece in a few runs to come out from
its call (2 of 8 runs of gpu-hook.sh, before and after the session that saw it), which it says.

A start or an end that is only a bound ("bound") must hold: the work started no earlier, ended no
later, than it says, but for the mapping's error. A start from its call is held as above even
where the end is a bound (short work on an idle stream ends about when its END would run
anyway). A piece moved to keep the order of its stream or call ("clamped": the mapping moved
under it, as a loaded machine's wide anchors make it) is held to nothing more.
"""
import os
import re


# Starts the layer took from the submitting call: its return, or its end less its twins'.
FROM_CALL = ("call", "twins")


def _gpu_h(name):
    """A number #defined in capture/hook/gpu.h (the layer's constants, not copies of them)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../capture/hook/gpu.h")
    m = re.search(rf"^#define {name} (\d+)", open(path).read(), re.M)
    if not m:
        raise SystemExit(f"gpu_truth: no {name} in {path}")
    return int(m.group(1))


HANDOVER_PART, HANDOVER_MAX = _gpu_h("GPU_KERNEL_HANDOVER_PART"), _gpu_h("GPU_KERNEL_HANDOVER_MAX_NS")


def early(w, call):
    """How early a kernel's start from its call may be: the part of the call the layer takes to
    lie after the hand-over (GPU_KERNEL_HANDOVER_*), which a call held before the hand-over (a
    loaded machine's preemption) spent before it instead."""
    return min(call.get("dur", 0) // HANDOVER_PART, HANDOVER_MAX) if w["cat"] == "kernel" else 0


# The truth's work that started when what its stream waited for was done: on time, or late
# (FAKEGPU_LATE_NS).
BUSY = ("busy", "late")

# Starts on an idle stream a median is held over, at least: the median of a few (a run of a
# mode has two or three) is one stretched return on a loaded machine (2.1 and 2.8 us off in
# loaded clean .ci/runs). gpu-hook.sh's first run holds twenty and more.
MIN_IDLE = 10

# Durations of work on a busy stream a check must have held, at least, to say anything of them:
# gpuprog's 20 rounds give 79 (quiet, and beside 8 busy loops a core); a loaded CI machine that
# held calls past the work before them (their starts then rightly from the call) left 57.
MIN_BUSY = 20


def paired(ev, truth_path):
    """The trace's gpu events in submission order (corr), the truth's lines beside them, and
    the mapping's offset from the truth: the median over the pieces whose end is measured."""
    gpu = sorted((e for e in ev if e["layer"] == "gpu"), key=lambda e: e["args"]["corr"])
    truth = [l.split() for l in open(truth_path)]
    offs = sorted(w["ts"] + w["dur"] - int(t[2]) for w, t in zip(gpu, truth)
                  if w["args"].get("end") is None)
    return gpu, truth, offs[len(offs) // 2] if offs else 0


def deviations(gpu, truth, said, mid, calls):
    """How far each piece of gpu (in submission order, beside the truth's lines) not said to be
    moved or bounded starts from the truth, the mapping's offset mid taken off: a start taken
    from its call may be late by up to the call's duration (calls: corr -> call), the time the
    thread took to return from handing the work over, which a loaded machine stretches."""
    out = []
    for w, t in zip(gpu, truth):
        if said(w):
            continue
        d = w["ts"] - int(t[1]) - mid
        c = calls.get(w["args"]["corr"]) if w["args"].get("start") in FROM_CALL else None
        out.append(max(0, -d - early(w, c), d - c.get("dur", 0)) if c else abs(d))
    return out


def check(ev, truth_path, bad, what="", kinds=None, idle_kinds=None):
    """Checks the gpu events of the trace ev (its records, header first, trailer last) against
    the truth; calls bad(message) for each failure. kinds: the truth's kinds whose durations
    are checked (default all); idle_kinds: those whose starts on an idle stream are held to
    the truth's (default all). Returns the number of pieces on a busy stream and on an idle
    one."""
    gpu, truth, off = paired(ev, truth_path)
    if len(truth) != len(gpu):
        bad(f"{what}truth has {len(truth)} pieces of work, the trace {len(gpu)}")
        return 0, 0  # no pairs to compare
    g = ev[-1]["args"].get("gpu", {})
    span = ev[-1]["ts"] - ev[0]["ts"]  # no anchor is older than the trace
    rate_err = 2 * g.get("error_ns", 0) / 1e9
    # (off: bounds and starts from calls are held to the truth through it.)
    tol = max(140, 2 * g.get("error_ns_median", 0))
    prev = {}  # stream -> the mapping's offset at its last piece's end
    call_dur = {e["args"]["corr"]: e.get("dur", 0) for e in ev
                if e["layer"] in ("api", "runtime") and isinstance(e.get("args"), dict)
                and "corr" in e["args"]}
    # When each driver call returned (host ns, as the truth's times are).
    call_ret = {e["args"]["corr"]: e["ts"] + e.get("dur", 0) for e in ev
                if e["layer"] == "api" and isinstance(e.get("args"), dict) and "corr" in e["args"]}
    # How long before a busy piece's start its call must have returned for the layer to have
    # seen its stream still busy: the mapping's error, with room (a call a loaded machine
    # preempted before it returned can return after the work before ended, and the layer then
    # rightly takes the start from it).
    queued_margin = 2 * g.get("error_ns", 0) + 1000
    busy, idle, off_truth, wrong_bounds, not_queued = 0, [], [], [], []
    for w, t in zip(gpu, truth):
        kind, ts, te, how = t[0], int(t[1]), int(t[2]), t[3]
        if kind != w["cat"]:
            bad(f"{what}corr {w['args']['corr']}: truth {kind}, trace {w['cat']}")
        s = w["args"]["stream"]
        a = w["args"]
        offs_w = w["ts"] + w["dur"] - te
        # A bound holds: the work started no earlier than a start that is one, ended no later
        # than an end that is one.
        if a.get("start") == "bound" and w["ts"] - off > ts + tol:
            wrong_bounds.append(f"{w['name']} (corr {a['corr']}) starts {w['ts'] - off - ts:+d} ns after the truth")
        if a.get("end") == "bound" and w["ts"] + w["dur"] - off < te - tol:
            wrong_bounds.append(f"{w['name']} (corr {a['corr']}) ends {w['ts'] + w['dur'] - off - te:+d} ns before the truth")
        # Work handed over while the work before it still ran starts when that ends: a start
        # from its call there is the wrong rule (a GPU shared with other processes makes such
        # starts the others' whole turn early).
        ret = call_ret.get(a["corr"])
        if (how in BUSY and a.get("start") in FROM_CALL and "clamped" not in a and ret is not None
                and ret < ts - queued_margin and (kinds is None or kind in kinds)):
            not_queued.append(f"{w['name']} (corr {a['corr']}) returned {ts - ret} ns before it started")
        if a.get("start") == "bound" or "clamped" in a:
            pass  # a bound, held above; or moved, as it says (the mapping moved)
        elif how in BUSY and a.get("start") not in FROM_CALL:
            if a.get("end") != "bound" and (kinds is None or kind in kinds):
                busy += 1
                err = w["dur"] - (te - ts)
                tol_d = 70 + 2 * span / 2**24 + (te - ts) * rate_err
                if abs(err) > tol_d and not (s in prev and abs(err - (offs_w - prev[s])) <= tol_d):
                    off_truth.append(f"{w['name']} (corr {a['corr']}) {err:+d} ns")
        else:
            if idle_kinds is None or kind in idle_kinds:
                # late by up to the call's return (cut-events(5): from its call), early by no
                # more than early()
                err = w["ts"] - off - ts
                dur = call_dur.get(a["corr"], 0)
                idle.append(max(0, -err - early(w, {"dur": dur}), err - dur))
        prev[s] = offs_w
    if len(off_truth) > max(1, busy // 20):
        bad(f"{what}{len(off_truth)} of {busy} durations off the truth beyond the mapping's error: {', '.join(off_truth[:5])}")
    if not_queued and os.environ.get("CUT_SANITIZED"):
        print(f"note: {what}{len(not_queued)} pieces queued behind busy work start from their call "
              f"(a sanitized build is not held to it): {', '.join(not_queued[:5])}")
    elif not_queued:
        bad(f"{what}{len(not_queued)} pieces queued behind busy work start from their call: {', '.join(not_queued[:5])}")
    if len(wrong_bounds) > max(1, len(gpu) // 20):
        bad(f"{what}{len(wrong_bounds)} bounds the truth breaks: {', '.join(wrong_bounds[:5])}")
    idle.sort()
    # (Half the device's pick-up time: a rule that left it out, or took the start from the
    # START before the call, would be off by it and more. Or the mapping's median error: such
    # a start carries the mapping's error at the pick-up samples' time, up to a second before
    # the piece, and off the mapping's at the ends measured: two errors, each within the
    # trailer's: twice the median. In a clean .ci/run beside two busy loops a core, the median
    # start came out 4,977 ns off; here beside four, the ends' median offset +3.6 us and the
    # idle pieces' starts -2.6, with error_ns_median 19.5 us; and 4,017 ns beside two, over
    # a median error that one error alone did not cover. Or the mapping's largest error, the
    # trailer's error_ns: the pick-up samples may have been read where the mapping was at its
    # worst (make check once had a median 3,211 ns off past twice a median error below 1.6 us;
    # where the mapping is good, as on a quiet machine, the line stays half the pick-up). A rule
    # that leaves the pick-up out is held by gpu-hook.sh's slow pick-up case, whose 20 us no
    # load hides.)
    line = max(int(os.environ.get("FAKEGPU_LAUNCH_NS", 4000)) / 2, 2 * g.get("error_ns_median", 0),
               g.get("error_ns", 0))
    if len(idle) >= MIN_IDLE and idle[len(idle) // 2] > line:
        bad(f"{what}starts of work on an idle stream off its call's return: median {idle[len(idle) // 2]} ns beyond the call")
    return busy, len(idle)
