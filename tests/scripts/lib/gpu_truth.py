"""gpu_truth.py: a trace's gpu events against the stand-in device's truth (tests/fixtures/fakegpu.c,
FAKEGPU_TRUTH: "kind start end busy|idle" a piece of work, in submission order), for gpu-hook.sh
and capture-preload.sh.

Work that started when what its stream waited for was done (the truth says "busy") has its start
and end from events, read in multiples of 32 ns: its duration is exact, but for the mapping of
the device's clock onto the host's, which the layer states the error of (cuthook(1)): a float of
ms for the time since the anchor (its 2^-24), the rate's error over the duration (no more than
twice the trailer's error_ns a second), and a new anchor between the work before and this one,
which moves the end but not the start (the change of the mapping's offset). Load widens each;
a wrong start rule is microseconds off, whatever the load.

Work on an idle stream (the first of a round, or any after its thread was preempted between
submissions), and work whose start the layer took from its call ("start": "call"), started when
its call returned: its start, against the truth's less the stand-in's pick-up delay (launch +
gap), is good to the time the thread took to return, which a loaded machine stretches for some
calls but not for most: the median is held to 1 us, against microseconds for a wrong rule.
"""

PICKUP_NS = 4000 + 1216  # FAKEGPU_LAUNCH_NS and FAKEGPU_GAP_NS, which the scripts set


def check(ev, truth_path, bad, what="", kinds=None):
    """Checks the gpu events of the trace ev (its records, header first, trailer last) against
    the truth; calls bad(message) for each failure. kinds: the truth's kinds whose durations
    are checked (default all). Returns the number of pieces on a busy stream and on an idle
    one."""
    truth = [l.split() for l in open(truth_path)]
    gpu = sorted((e for e in ev if e["layer"] == "gpu"), key=lambda e: e["args"]["corr"])
    if len(truth) != len(gpu):
        bad(f"{what}truth has {len(truth)} pieces of work, the trace {len(gpu)}")
        return 0, 0  # no pairs to compare
    g = ev[-1]["args"].get("gpu", {})
    span = ev[-1]["ts"] - ev[0]["ts"]  # no anchor is older than the trace
    rate_err = 2 * g.get("error_ns", 0) / 1e9
    prev = {}  # stream -> the mapping's offset at its last piece's end
    busy, idle, off = 0, [], []
    for w, t in zip(gpu, truth):
        kind, ts, te, how = t[0], int(t[1]), int(t[2]), t[3]
        if kind != w["cat"]:
            bad(f"{what}corr {w['args']['corr']}: truth {kind}, trace {w['cat']}")
        s = w["args"]["stream"]
        offs = w["ts"] + w["dur"] - te
        if how == "busy" and w["args"].get("start") != "call":
            if kinds is None or kind in kinds:
                busy += 1
                err = w["dur"] - (te - ts)
                tol = 70 + 2 * span / 2**24 + (te - ts) * rate_err
                if abs(err) > tol and not (s in prev and abs(err - (offs - prev[s])) <= tol):
                    off.append(f"{w['name']} (corr {w['args']['corr']}) {err:+d} ns")
        else:
            idle.append(abs(w["ts"] - (ts - PICKUP_NS)))
        prev[s] = offs
    if len(off) > max(1, busy // 20):
        bad(f"{what}{len(off)} of {busy} durations off the truth beyond the mapping's error: {', '.join(off[:5])}")
    idle.sort()
    if idle and idle[len(idle) // 2] > 1000:
        bad(f"{what}starts of work on an idle stream off its call's return: median {idle[len(idle) // 2]} ns")
    return busy, len(idle)
