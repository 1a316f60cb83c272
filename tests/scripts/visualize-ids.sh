#!/bin/sh
# The viewers on ids of any size and number (issue 23): cutchrome draws 300 GPUs, each on a
# process of its own (it had room for 256, the rest drawn on the first GPU's track); pids and
# tids of 64 bits, 0, or shared by two hosts stay apart and are named as they are; an input
# named twice (stdin, or one file under two names) is refused as cutmerge refuses it; cutplot
# draws a line per process in its GPU chart, however many.
B=${CUT_BUILD:-build}
PATH=$B/bin:$PATH
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
command -v python3 >/dev/null || { echo "needs python3"; exit 77; }
fail=0
bad() { echo "FAIL $*"; fail=1; }

# 300 GPUs of one process (by ordinal) and 300 of another (by uuid), a piece of work each.
python3 - >"$tmp/gpus.jsonl" <<'PY'
import json
print(json.dumps({"ts": 1, "pid": 8, "tid": 8, "layer": "meta", "name": "header", "args": {"schema": 2, "tool": "hand", "host": "h"}}))
for d in range(300):
    print(json.dumps({"ts": 1, "pid": 9, "tid": 9, "layer": "meta", "name": "device", "args": {"device": d, "uuid": "GPU-%d" % d}}))
for d in range(300):
    for pid in (7, 9):
        print(json.dumps({"ts": 1000 + d, "dur": 10, "pid": pid, "tid": pid, "layer": "gpu", "name": "k%d" % d, "args": {"device": d, "stream": "0x1"}}))
PY
cutchrome "$tmp/gpus.jsonl" >"$tmp/gpus.json" || bad "300 GPUs: exit $?"
python3 - "$tmp/gpus.json" <<'PY' || fail=1
import json, sys
te = json.load(open(sys.argv[1]))["traceEvents"]
names = {e["pid"]: e["args"]["name"] for e in te if e["ph"] == "M" and e["name"] == "process_name"}
bad = 0
seen = {}
for e in te:
    if e["ph"] == "X":
        seen.setdefault(int(e["name"][1:]), set()).add(names.get(e["pid"]))
for d in range(300):
    want = {"GPU pid 7 device %d" % d, "GPU GPU-%d" % d}
    if seen.get(d) != want:
        bad += 1
        if bad < 5:
            print("FAIL work on device %d drawn on %s, want %s" % (d, seen.get(d), want))
gpus = [n for n in names.values() if n.startswith("GPU ")]
if len(gpus) != 600 or len(set(gpus)) != 600:
    print("FAIL %d GPU processes (%d names), want 600" % (len(gpus), len(set(gpus))))
    bad += 1
sys.exit(1 if bad else 0)
PY

# An input named twice: refused with exit 2 and cutmerge's words, nothing written.
printf '{"ts":1,"dur":1,"pid":1,"tid":1,"layer":"api","name":"cuInit"}\n' >"$tmp/one.jsonl"
for args in "- -" "/dev/stdin -" "$tmp/one.jsonl $tmp/../$(basename "$tmp")/one.jsonl"; do
	# shellcheck disable=SC2086
	cutchrome $args <"$tmp/one.jsonl" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ $rc -eq 2 ] || bad "cutchrome $args: exit $rc, want 2"
	grep -q 'are the same input: name each once' "$tmp/err" || bad "cutchrome $args: $(cat "$tmp/err")"
	[ -s "$tmp/out" ] && bad "cutchrome $args: wrote output"
done

# cutperfetto: the same traces, decoded by protoc and checked against their input by
# visualize-perfetto-check.py (which reads a made-up id's real one from its track's name):
# pids out of ProcessDescriptor's int32 were written cut to 32 bits, 4294967303 as 7, the
# process of pid 7. A stream named through NVTX after its work ran on two GPUs: both tracks
# renamed; a stream of handle 0xffffffffffffffff is not work without a stream.
if command -v protoc >/dev/null; then
	cat >"$tmp/streams.jsonl" <<'EOF'
{"ts":1000,"dur":10,"pid":5,"tid":5,"layer":"gpu","name":"k","args":{"device":0,"stream":"0x7"}}
{"ts":1000,"dur":10,"pid":5,"tid":5,"layer":"gpu","name":"k","args":{"device":1,"stream":"0x7"}}
{"ts":1000,"dur":10,"pid":5,"tid":5,"layer":"gpu","name":"k","args":{"device":1,"stream":"0xffffffffffffffff"}}
{"ts":1000,"dur":10,"pid":5,"tid":5,"layer":"gpu","name":"k","args":{"device":1}}
{"ts":1100,"pid":5,"tid":5,"layer":"meta","name":"symbol","args":{"handle":"0x7","name":"copies","kind":"stream"}}
EOF
	for f in tests/cases/cutperfetto/ids/input "$tmp/gpus.jsonl" "$tmp/streams.jsonl"; do
		cutperfetto "$f" >"$tmp/p.pb" 2>"$tmp/err" || bad "cutperfetto $f: exit $?: $(cat "$tmp/err")"
		protoc --decode=perfetto.protos.Trace tests/fixtures/perfetto/perfetto_trace.proto \
			<"$tmp/p.pb" >"$tmp/p.txt" || bad "cutperfetto $f: protoc cannot decode it"
		python3 tests/scripts/visualize-perfetto-check.py "$tmp/p.txt" "$f" >"$tmp/check" ||
			bad "cutperfetto $f: $(cat "$tmp/check")"
	done
	[ "$(grep -c 'name: "copies (stream 0x7)"' "$tmp/p.txt")" = 2 ] ||
		bad "cutperfetto: the stream named after its work: $(grep 'name: ".*stream' "$tmp/p.txt")"
	[ "$(grep -c 'name: "no stream"' "$tmp/p.txt")" = 1 ] ||
		bad "cutperfetto: stream 0xffffffffffffffff taken for no stream"
else
	echo "protoc not installed: cutperfetto's outputs not decoded"
fi
for args in "- -" "/dev/stdin -"; do
	# shellcheck disable=SC2086
	cutperfetto $args <"$tmp/one.jsonl" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ $rc -eq 2 ] || bad "cutperfetto $args: exit $rc, want 2"
	grep -q 'are the same input: name each once' "$tmp/err" || bad "cutperfetto $args: $(cat "$tmp/err")"
done
# cutplot: the GPU chart has a line per process, however many (it kept the first 64): 101
# here, each busy 100 % while its work runs; two hosts' pid 7 are two lines, the pid 7 that
# names no host one with a's (the first host named of it: share/lib/procs.h), on the host
# known when it was first met (none), as the timeline writers draw it.
python3 - >"$tmp/procs.jsonl" <<'PY'
import json
for p in range(1, 101):
    print(json.dumps({"ts": 1000, "dur": 1000, "pid": p, "tid": p, "layer": "gpu", "name": "k", "args": {"stream": "0x1"}}))
for h in ("a", "b"):
    print(json.dumps({"ts": 1000, "dur": 1000, "host": h, "pid": 7, "tid": 7, "layer": "gpu", "name": "k", "args": {"stream": "0x1"}}))
PY
cutplot -S -T dumb -c gpu "$tmp/procs.jsonl" >"$tmp/gpu.gp" || bad "cutplot -c gpu: exit $?"
n=$(grep -o 'title "pid [0-9]*[^"]*"' "$tmp/gpu.gp" | sort -u | wc -l)
[ "$n" = 101 ] || bad "cutplot -c gpu: $n processes, want 101"
grep -q 'title "pid 7 on "' "$tmp/gpu.gp" && grep -q 'title "pid 7 on b"' "$tmp/gpu.gp" &&
	! grep -q 'title "pid 7 on a"' "$tmp/gpu.gp" ||
	bad "cutplot -c gpu: the hosts' pid 7 not apart"
for args in "- -" "/dev/stdin -"; do
	# shellcheck disable=SC2086
	cutplot -S $args <"$tmp/one.jsonl" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ $rc -eq 2 ] || bad "cutplot $args: exit $rc, want 2"
	grep -q 'are the same input: name each once' "$tmp/err" || bad "cutplot $args: $(cat "$tmp/err")"
done
# Two files whose headers name two hosts, pid 100 in each: two processes in every viewer.
for h in x y; do
	printf '{"ts":1,"pid":100,"tid":100,"layer":"meta","name":"header","args":{"schema":1,"tool":"cutcapture","host":"%s"}}\n{"ts":10,"dur":5,"pid":100,"tid":100,"layer":"api","name":"cuInit"}\n' $h >"$tmp/h$h.jsonl"
done
n=$(cutchrome "$tmp/hx.jsonl" "$tmp/hy.jsonl" | grep -c '"process_name".*"pid 100 on [xy]"')
[ "$n" = 2 ] || bad "cutchrome, two hosts' pid 100: $n processes, want 2"
cutplot -S -T dumb "$tmp/hx.jsonl" "$tmp/hy.jsonl" | grep -q '"tid 100 on x api" 2, "tid 100 on y api" 1' ||
	bad "cutplot, two hosts' pid 100: not two rows"
if command -v protoc >/dev/null; then
	cutperfetto "$tmp/hx.jsonl" "$tmp/hy.jsonl" |
		protoc --decode=perfetto.protos.Trace tests/fixtures/perfetto/perfetto_trace.proto >"$tmp/p.txt"
	python3 tests/scripts/visualize-perfetto-check.py "$tmp/p.txt" "$tmp/hx.jsonl" "$tmp/hy.jsonl" >"$tmp/check" ||
		bad "cutperfetto, two hosts' pid 100: $(cat "$tmp/check")"
fi
# An envelope's host of "" is a host without a name, as cutmerge reads it, not the input's:
# pid 7 of "" and pid 7 of host a are two processes, on two machines (cutperfetto took the
# first for the second).
printf '%s\n' '{"ts":1,"pid":7,"tid":7,"layer":"meta","name":"header","args":{"schema":2,"tool":"hand","host":"a"}}' \
	'{"ts":2,"dur":1,"host":"","pid":7,"tid":7,"layer":"api","name":"cuInit"}' \
	'{"ts":3,"dur":1,"pid":7,"tid":7,"layer":"api","name":"cuInit"}' >"$tmp/nohost.jsonl"
n=$(cutchrome "$tmp/nohost.jsonl" | grep -c '"process_name".*"pid 7\( on a\)*"')
[ "$n" = 2 ] || bad "cutchrome, pid 7 of host \"\" and of a: $n processes, want 2"
if command -v protoc >/dev/null; then
	cutperfetto "$tmp/nohost.jsonl" |
		protoc --decode=perfetto.protos.Trace tests/fixtures/perfetto/perfetto_trace.proto >"$tmp/p.txt"
	[ "$(grep -c 'clock_snapshot {' "$tmp/p.txt")" = 2 ] ||
		bad "cutperfetto, pid 7 of host \"\" and of a: not two machines"
	python3 tests/scripts/visualize-perfetto-check.py "$tmp/p.txt" "$tmp/nohost.jsonl" >"$tmp/check" ||
		bad "cutperfetto, pid 7 of host \"\" and of a: $(cat "$tmp/check")"
fi
# Long names, whole and valid UTF-8 (cutperfetto cut them to 511 bytes inside a character,
# which protobuf readers refuse, and hosts, uuids and NVTX domains to 255 or 127, so that two
# long ones sharing a start were one machine, GPU or track): two hosts whose names differ
# after 300 bytes, a 800-byte process name, a long uuid and domain.
python3 - "$tmp" <<'PY'
import json, sys
for h in ("1", "2"):
    with open("%s/long%s.jsonl" % (sys.argv[1], h), "w", encoding="utf-8") as f:
        for e in ({"ts": 1, "pid": 5, "tid": 5, "layer": "meta", "name": "header", "args": {"schema": 2, "tool": "hand", "host": "h" * 300 + h}},
                  {"ts": 1, "pid": 5, "tid": 5, "layer": "meta", "name": "process", "args": {"comm": "é" * 400 + h}},
                  {"ts": 1, "pid": 5, "tid": 6, "layer": "meta", "name": "thread", "args": {"comm": "€" * 200 + h}},
                  {"ts": 1, "pid": 5, "tid": 5, "layer": "meta", "name": "device", "args": {"device": 0, "uuid": "GPU-" + "é" * 300 + h, "name": "H100"}},
                  {"ts": 10, "dur": 5, "pid": 5, "tid": 6, "layer": "api", "name": "cuInit"},
                  {"ts": 10, "dur": 5, "pid": 5, "tid": 5, "layer": "gpu", "name": "k", "args": {"device": 0, "stream": "0x1"}},
                  {"ts": 11, "dur": 5, "pid": 5, "tid": 5, "layer": "nvtx", "name": "r", "cat": "startend", "args": {"domain": "d" * 300 + h}},
                  {"ts": 12, "dur": 5, "pid": 5, "tid": 5, "layer": "nvtx", "name": "r", "cat": "startend", "args": {"domain": "d" * 300 + "x"}}):
            f.write(json.dumps(e, ensure_ascii=False) + "\n")
PY
if command -v protoc >/dev/null; then
	cutperfetto "$tmp/long1.jsonl" "$tmp/long2.jsonl" >"$tmp/p.pb" || bad "cutperfetto, long names: exit $?"
	protoc --decode=perfetto.protos.Trace tests/fixtures/perfetto/perfetto_trace.proto \
		<"$tmp/p.pb" >"$tmp/p.txt" 2>"$tmp/err" && ! [ -s "$tmp/err" ] ||
		bad "cutperfetto, long names: protoc: $(head -c 300 "$tmp/err")"
	python3 tests/scripts/visualize-perfetto-check.py --layers nvtx "$tmp/p.txt" "$tmp/long1.jsonl" "$tmp/long2.jsonl" >"$tmp/check" 2>&1 ||
		bad "cutperfetto, long names: $(head -c 600 "$tmp/check")"
fi
# Two processes of one host with a thread of the same tid (a trace made by hand, or of hosts
# without names): the first keeps the tid, the second gets a made-up one, as viewers take a
# tid for one thread of one process.
printf '{"ts":10,"dur":5,"pid":5,"tid":77,"layer":"api","name":"a"}\n{"ts":11,"dur":5,"pid":6,"tid":77,"layer":"api","name":"b"}\n' >"$tmp/tids.jsonl"
cutchrome "$tmp/tids.jsonl" | grep -q '"name":"b","pid":6,"tid":4194304' ||
	bad "cutchrome: two processes' tid 77: $(cutchrome "$tmp/tids.jsonl" | grep '"X"')"
if command -v protoc >/dev/null; then
	cutperfetto "$tmp/tids.jsonl" | protoc --decode=perfetto.protos.Trace \
		tests/fixtures/perfetto/perfetto_trace.proto >"$tmp/p.txt"
	[ "$(grep -c 'tid: 77$' "$tmp/p.txt")" = 1 ] || bad "cutperfetto: two processes' tid 77 kept"
	python3 tests/scripts/visualize-perfetto-check.py "$tmp/p.txt" "$tmp/tids.jsonl" >"$tmp/check" ||
		bad "cutperfetto, two processes' tid 77: $(cat "$tmp/check")"
fi
exit $fail
