#!/bin/sh
# Processes taking turns on one GPU: three shareprogs (a heavy one whose queue never runs dry
# while the others run, two light ones with a kernel at a time) share the stand-in device time-sliced as an H100
# without MPS (FAKEGPU_SHARED, tests/fixtures/fakeshare.c: a turn until the slice runs out,
# the kernel running then preempted; the truth holds the parts that ran), each under cuthook.
# Recorded, the heavy one's kernels span the light ones' turns, so their work overlaps and the
# heavy one looks busier than it was; cutstat tells their work apart (cut-events(5), GPU work
# on a shared device): each process's busy time within 5 % of the truth and their overlap no
# more than 1 % of the time the device was busy, both for three traces of cuthook -S (the mode
# the README recommends) merged by cutmerge and for one trace of cuthook over all three; with
# -O (their work taken as recorded) the overlap shows, and the heavy one looks busier by it;
# cutturns writes the trace told apart, each process's work covering what cutstat counts.
# From the -S traces cutstat measures the device's switch: within 20 us over the stand-in's.
# The switch is 2 us here, not the H100's 145 us: a preempted kernel keeps the switches around
# the turn it held (as CUPTI's span does), which the truth does not count; the slice is 0.5 ms,
# for turns enough in a short run. A process is held to the truth only where its trace says
# its GPU times are good to 20 us (the trailer's error_ns) and none went untimed: a loaded
# machine widens the clock mapping's error, and an anchor taken while another process has the
# device is late by that process's turn (cuthook's anchors are recorded events too), and
# where none of its pieces' ends is a bound more than 2 ms after its start (its thread was held
# off the CPU between a launch and the END's record: what the trace says is then only that
# the work ended by then, and its busy time is at most what it says); the script runs it all
# again, up to 5 rounds, until a process can be held to it, and skips (77) if none could.
. "$(dirname "$0")/lib/hook-setup.sh"
PATH=$B/bin:$PATH
command -v python3 >/dev/null || { echo "needs python3"; exit 77; }
[ -x "$fx/shareprog" ] || { echo "gpu-shared.sh: build $B first (make test-programs)"; exit 1; }
export FAKEGPU_NS_PER_BLOCK=2000 FAKEGPU_SWITCH_NS=2000 FAKEGPU_SLICE_NS=500000

# Up to 5 rounds, until one has a process good enough to hold to the truth (a condition: a
# loaded machine only makes it come later).
round=0
while :; do
round=$((round + 1))
base=$tmp/$round
mkdir "$base"
# Three traces of cuthook -S, merged.
d=$base/merged
mkdir "$d"
pids=
for k in heavy light light; do
	r=40
	[ $k = heavy ] && r=20 # and on while the light ones run (SHAREPROG_DONE)
	FAKEGPU_SHARED=$d FAKEGPU_TRUTH=$d/truth SHAREPROG_TOGETHER=$d/together:3 \
		SHAREPROG_DONE=$d/done:2 cuthook -S -o "$d/$k.$$.$(date +%N).jsonl" -- "$fx/shareprog" $k $r \
		>>"$d/out" 2>>"$d/err" &
	pids="$pids $!"
done
for p in $pids; do
	wait "$p" || bad "cuthook -S shareprog: exit $?: $(cat "$d/err")"
done
cutmerge "$d"/*.jsonl >"$d/t.jsonl" || bad "cutmerge: exit $?"

# One trace of cuthook over the three, as it records by default.
d=$base/one
mkdir "$d"
FAKEGPU_SHARED=$d FAKEGPU_TRUTH=$d/truth SHAREPROG_TOGETHER=$d/together:3 SHAREPROG_DONE=$d/done:2 \
	cuthook -o "$d/t.jsonl" -- sh -c "'$fx/shareprog' heavy 20 & '$fx/shareprog' light 40 &
'$fx/shareprog' light 40 & wait" >>"$d/out" 2>>"$d/err" ||
	bad "cuthook sh -c shareprog x3: exit $?: $(cat "$d/err")"

checked=0
for d in "$base/merged" "$base/one"; do
	[ "$(grep -c '^shareprog: ok$' "$d/out")" = 3 ] || bad "$d: $(cat "$d/out")"
	cutstat -j "$d/t.jsonl" >"$d/told.json" || bad "cutstat -j: exit $?"
	cutstat -j -O "$d/t.jsonl" >"$d/recorded.json" || bad "cutstat -j -O: exit $?"
	LIB=$(cd "$(dirname "$0")/lib" && pwd) python3 - "$d" <<'PY' >"$d/check" || fail=1
import json, os, sys
sys.path.insert(0, os.environ["LIB"])
from spans import union
d = sys.argv[1]
what = d.rsplit("/", 1)[1]
n = 0
def bad(m):
    global n
    n += 1
    print(f"FAIL {what}: {m}")
truth = {}
for l in open(f"{d}/truth"):
    kind, s, e, how, pid = l.split()
    truth.setdefault(int(pid), []).append((int(s), int(e)))
busy = {p: union(v) for p, v in truth.items()}
if len(busy) != 3:
    bad(f"the truth has {len(busy)} processes")
# The stand-in ran one process's work at a time.
if sum(busy.values()) != union([x for v in truth.values() for x in v]):
    bad("the stand-in's processes ran at once")
told = json.load(open(f"{d}/told.json"))["gpu"]
rec = json.load(open(f"{d}/recorded.json"))["gpu"]
dev, dev_rec = told["devices"], rec["devices"]
if len(dev) != 1 or dev[0].get("processes") != 3:
    bad(f"devices: {dev}")
    sys.exit(1)
got = {p["pid"]: p["busy_ns"] for p in told["processes"]}
got_rec = {p["pid"]: p["busy_ns"] for p in rec["processes"]}
off = lambda x, t: abs(x - t) / t
# Each process's own word on its GPU times (its trailer), and its launches and work timed.
err, launched, timed, loose = {}, {}, {}, {}
for l in open(f"{d}/t.jsonl"):
    e = json.loads(l)
    p = e["pid"]
    if e["layer"] == "meta" and e["name"] == "trailer":
        err[p] = e["args"].get("gpu", {}).get("error_ns", 0)
    elif e["layer"] == "api" and e["name"] == "cuLaunchKernel":
        launched[p] = launched.get(p, 0) + 1
    elif e["layer"] == "gpu":
        timed[p] = timed.get(p, 0) + 1
        if e["args"].get("end") == "bound" and e.get("dur", 0) > 2000000:
            loose[p] = loose.get(p, 0) + 1
held = []
for p, t in busy.items():
    if err.get(p, 0) > 20000 or timed.get(p) != launched.get(p) or loose.get(p):
        print(f"{what}: pid {p} not held to the truth: its GPU times good to {err.get(p)} ns, "
              f"{timed.get(p)} of {launched.get(p)} launches timed, "
              f"{loose.get(p, 0)} ends bounds more than 2 ms on")
        continue
    print(f"{what}: checked pid {p}")
    held.append(p)
    # (A sanitized build, CUT_SANITIZED, runs this for its memory errors: the library slowed
    # down that much times its work no better than a loaded machine does.)
    if off(got.get(p, 0), t) > 0.05 and not os.environ.get("CUT_SANITIZED"):
        bad(f"pid {p}: busy {got.get(p)} ns told apart, the truth {t}")
# The device's switch, measured from the -S traces (cut-events(5), rule 3): the wait of a START
# submitted before another process's end, FAKEGPU_SWITCH_NS and the START's own pick-up; where
# every process's GPU times are good to 20 us (held to the truth above: a loaded machine's
# mapping error is as large as what is measured), and not in a sanitized build, whose slowed
# library leaves fewer than 8 clean waits to measure in 3 runs of 6 (as it did before rule 3's
# latest changes too).
sw, want = dev[0].get("switch_ns"), int(os.environ["FAKEGPU_SWITCH_NS"])
clean_times = not os.environ.get("CUT_SANITIZED")
if what == "merged" and clean_times and len(held) == len(busy) and not (sw and want <= sw <= want + 20000):
    bad(f"switch_ns {sw}, the stand-in's switch {want} ns")
elif what == "merged":
    print(f"{what}: switch measured {sw} ns, the stand-in's {want} ns")
heavy = max(busy, key=busy.get)
# The problem is there: as recorded, the heavy process's kernels held the others' turns (40
# of each's kernels of 128 us) and look longer by them (where its trace has all its work).
if timed.get(heavy) != launched.get(heavy):
    print(f"{what}: the heavy process's recorded work not checked: {timed.get(heavy)} of "
          f"{launched.get(heavy)} launches timed")
elif dev_rec[0]["overlap_ns"] < 1000000 or got_rec[heavy] - busy[heavy] < 1000000:
    bad(f"as recorded (-O) the heavy process is busy {got_rec[heavy]} ns (the truth {busy[heavy]}), "
        f"the overlap {dev_rec[0]['overlap_ns']} ns: the stand-in did not take turns")
if dev[0]["overlap_ns"] > 0.01 * dev[0]["busy_ns"]:
    bad(f"overlap {dev[0]['overlap_ns']} ns of {dev[0]['busy_ns']} told apart")
if dev[0]["overlap_recorded_ns"] != dev_rec[0]["overlap_ns"] or \
        (dev[0]["overlap_recorded_ns"] > 0) != (dev[0].get("resolved", 0) > 0) or \
        told.get("resolved") != dev[0]["resolved"] or "resolved" in rec:
    bad(f"the counts: {dev[0]}, -O {dev_rec[0]}")
print(f"{what}: busy (truth / told apart / recorded) " + ", ".join(
    f"{busy[p] / 1e6:.3f} / {got.get(p, 0) / 1e6:.3f} / {got_rec.get(p, 0) / 1e6:.3f} ms" for p in busy) +
    f"; overlap recorded {dev_rec[0]['overlap_ns'] / 1e6:.3f} ms of {dev_rec[0]['busy_ns'] / 1e6:.3f}")
sys.exit(1 if n else 0)
PY
	cat "$d/check"
	checked=$((checked + $(grep -c ': checked pid' "$d/check")))
	cutstat -w "$d/t.jsonl" | grep -q '^note: on GPU-.* the work of 3 processes overlapped .* pieces lost' ||
		bad "$d: no note of the overlap told apart"
	# The trace told apart (cutturns): from a file and from standard input alike; each
	# process's work covers what cutstat says it was busy, to the ns, none of two processes
	# overlaps, every piece inside its span as recorded and saying what that was where it
	# changed; everything else as it was; cutstat takes it as told apart already (the same busy
	# times), and cutturns again changes nothing.
	cutturns "$d/t.jsonl" >"$d/turns.jsonl" || bad "cutturns: exit $?"
	cutturns <"$d/t.jsonl" | cmp -s - "$d/turns.jsonl" || bad "$d: cutturns from stdin differs"
	cutturns "$d/turns.jsonl" | cmp -s - "$d/turns.jsonl" || bad "$d: cutturns twice differs"
	cutstat -j "$d/turns.jsonl" >"$d/turns.json" || bad "cutstat -j of cutturns: exit $?"
	LIB=$(cd "$(dirname "$0")/lib" && pwd) python3 - "$d" <<'PY' || fail=1
import json, os, sys
sys.path.insert(0, os.environ["LIB"])
from spans import union
d = sys.argv[1]
what = d.rsplit("/", 1)[1]
bad = []
rec = [json.loads(l) for l in open(f"{d}/t.jsonl")]
out = [json.loads(l) for l in open(f"{d}/turns.jsonl")]
span = {(e["pid"], e["args"]["corr"]): (e["ts"], e["ts"] + e["dur"]) for e in rec if e["layer"] == "gpu"}
work = {}
for e in out:
    if e["layer"] != "gpu":
        continue
    a, k = e["args"], (e["pid"], e["args"]["corr"])
    s, t = span[k]
    told = a.get("told")
    if not (s <= e["ts"] and e["ts"] + e["dur"] <= t):
        bad.append(f"corr {k}: {e['ts']}+{e['dur']} outside its span as recorded {s}..{t}")
    if (e["ts"], e["ts"] + e["dur"]) != (s, t) and (not told or (told["ts"], told["ts"] + told["dur"]) != (s, t)):
        bad.append(f"corr {k}: moved without saying so: {a}")
    work.setdefault(e["pid"], []).append((e["ts"], e["ts"] + e["dur"]))
busy = {p: union(v) for p, v in work.items()}
told = {p["pid"]: p["busy_ns"] for p in json.load(open(f"{d}/told.json"))["gpu"]["processes"]}
again = {p["pid"]: p["busy_ns"] for p in json.load(open(f"{d}/turns.json"))["gpu"]["processes"]}
if busy != told or again != told:
    bad.append(f"busy: cutturns {busy}, cutstat {told}, cutstat of cutturns {again}")
if sum(busy.values()) != union([x for v in work.values() for x in v]):
    bad.append("two processes' work overlaps")
key = lambda e: json.dumps(e, sort_keys=True)
other = lambda v: sorted(key(e) for e in v if e["layer"] != "gpu" and e["name"] != "header")
if other(rec) != other(out):
    bad.append("other events changed")
if any(e["args"].get("sorted") is not True for e in out if e["layer"] == "meta" and e["name"] == "header"):
    bad.append("a header does not say the trace is sorted")
if [e["ts"] for e in out] != sorted(e["ts"] for e in out):
    bad.append("not sorted")
moved = sum(1 for e in out if "told" in e.get("args", {}))
print(f"{what}: cutturns moved {moved} pieces; busy {busy}")
for m in bad[:5]:
    print(f"FAIL {what}: cutturns: {m}")
sys.exit(1 if bad else 0)
PY
done
[ $fail = 0 ] && [ $checked = 0 ] && [ $round -lt 5 ] || break
echo "round $round: no process's GPU times good enough to hold to the truth (a loaded machine): again"
done
if [ $fail = 0 ] && [ $checked = 0 ]; then
	echo "no process's GPU times were good enough to hold to the truth in $round rounds (a loaded machine)"
	exit 77
fi
exit $fail
