#!/bin/sh
# bench-adversarial.sh [BUILDDIR]: filters on inputs built to be slow (issue 12): the time of
# each at N, 2N and 4N events, so that a quadratic case shows as a time that quadruples when
# the input doubles. Prints a table (seconds, best of 3).
B=${1:-build}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
gen() { # kind n
	python3 - "$1" "$2" <<'PY'
import json, sys
kind, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    if kind == "reverse":      # sorted backwards: one thread
        e = {"ts": (n - i) * 1000, "dur": 500, "pid": 1, "tid": 1, "layer": "api", "name": "cuX", "ret": 0}
    elif kind == "tids4096":   # thread ids that are multiples of 4096
        e = {"ts": i * 1000, "dur": 500, "pid": 1, "tid": (i + 1) * 4096, "layer": "api", "name": "cuX", "ret": 0}
    elif kind == "gpuqueue":   # GPU work queued deep: every piece still running at the next
        e = {"ts": i * 1000, "dur": n * 1000, "pid": 1, "tid": 1, "layer": "gpu", "name": "k", "cat": "kernel", "args": {"stream": hex(i % 4), "device": 0, "corr": i}}
    elif kind == "streams":    # a new stream per launch
        e = {"ts": i * 1000, "dur": 500, "pid": 1, "tid": 1, "layer": "api", "name": "cuLaunchKernel", "ret": 0, "args": {"stream": hex(i + 5)}}
    else:                      # a new thread per call, each syncing its stream
        e = {"ts": i * 1000, "dur": 500, "pid": 1, "tid": i + 2, "layer": "api", "name": "cuStreamSynchronize", "ret": 0, "args": {"stream": hex(i % 64 + 5)}}
    print(json.dumps(e))
PY
}
best() { # command...
	b=
	for r in 1 2 3; do
		s=$(date +%s%N); "$@" >/dev/null 2>&1; e=$(date +%s%N)
		t=$(( (e - s) / 1000000 ))
		[ -z "$b" ] || [ "$t" -lt "$b" ] && b=$t
	done
	printf '%d.%03d' $((b / 1000)) $((b % 1000))
}
n=20000
echo "| input | filter | ${n} | $((2 * n)) | $((4 * n)) |"
echo "|---|---|---|---|---|"
for kind in reverse tids4096 gpuqueue streams threads; do
	for k in 1 2 4; do gen $kind $((k * n)) >"$tmp/$kind.$k"; done
	for tool in cutchrome cutperfetto cutgaps cutstat cutmerge "cutplot -S -T dumb"; do
		row="| $kind | $tool"
		for k in 1 2 4; do row="$row | $(best $B/bin/$tool "$tmp/$kind.$k")"; done
		echo "$row |"
	done
done
