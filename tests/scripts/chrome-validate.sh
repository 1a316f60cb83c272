#!/bin/sh
# cutchrome's output held to the Trace Event Format's rules by tests/viewer-check/validate.py
# (issue 15): JSON shape, durations, nesting per track, every flow bound to the slices
# catapult and Perfetto bind it to, names for every process and thread, numeric counters, and
# every slice at its source event's nanosecond, on traces of every layer: a capture with
# ioctls and off-CPU time, GPU work, NVTX ranges and the runtime layer, a 2-GPU DDP job, two
# processes sharing a GPU, graphs and side streams with the runtime layer,
# three rank files of two hosts, hand-built layers, the job of chrome-job.sh.
B=${CUT_BUILD:-build}
PATH=$B/bin:$PATH
command -v python3 >/dev/null || { echo "needs python3"; exit 77; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
v=tests/viewer-check/validate.py
ranks=tests/cases/cutperfetto/ranks
# [-r] name command...: cutchrome's output of the command's trace, validated (-r: by the rules
# only, for traces of GPU work alone, which the source check does not find under GPU pids)
check() {
	src=--source
	[ "$1" = -r ] && { src=; shift; }
	name=$1
	shift
	"$@" >"$tmp/$name.jsonl" 2>/dev/null
	cutchrome "$tmp/$name.jsonl" >"$tmp/$name.json" 2>"$tmp/$name.err" ||
		{ echo "FAIL $name: cutchrome exit $?: $(head -2 "$tmp/$name.err")"; fail=1; return; }
	if python3 $v ${src:+$src "$tmp/$name.jsonl"} "$tmp/$name.json" >"$tmp/$name.v" 2>&1; then
		echo "$name: $(grep -E '^  (slices|flows|counter_samples):' "$tmp/$name.v" | tr -s ' \n' ' ')"
	else
		echo "FAIL $name: $(grep -v '^  ' "$tmp/$name.v" | head -5)"
		fail=1
	fi
}
check capture cutmerge samples/capture-torch-train.jsonl
check gpu cutmerge samples/hook-torch-mlp-gpu.jsonl.zst
check nvtx cutmerge samples/hook-torch-nvtx-runtime.jsonl.zst
check ddp cutmerge samples/ddp-2gpu-hook.jsonl.zst
check share cutmerge samples/hook-share-2proc.jsonl.zst
check work cutmerge samples/hook-torch-gpu-work.jsonl.zst
check layers cat tests/cases/cutchrome/layers/input
# GPU work queued deep (each piece overlaps all before it, twice): past the lanes scanned, the
# spill lanes; 100 tracks, each nesting.
check -r queued python3 -c '
import json
for r in (0, 1):
    for i in range(100):
        print(json.dumps({"ts": 100000 * r + 10 * i + 1, "dur": 5000, "pid": 1, "tid": 1, "layer": "gpu",
                          "name": "k%d" % i, "cat": "kernel", "args": {"stream": "0x5", "device": 0, "corr": 100 * r + i}}))'
n=$(python3 -c 'import json, sys; print(len({e["tid"] for e in json.load(open(sys.argv[1]))["traceEvents"] if e["ph"] == "X"}))' "$tmp/queued.json")
[ "$n" = 100 ] || { echo "FAIL queued: $n tracks, want 100"; fail=1; }
# Several inputs at once: the source check needs one file, so only the rules here.
cutchrome $ranks/r0.jsonl $ranks/r1.jsonl $ranks/r2.jsonl >"$tmp/ranks.json" || { echo "FAIL ranks: exit $?"; fail=1; }
python3 $v "$tmp/ranks.json" >"$tmp/ranks.v" 2>&1 || { echo "FAIL ranks: $(grep -v '^  ' "$tmp/ranks.v" | head -5)"; fail=1; }
exit $fail
