#!/bin/sh
# cutperfetto: every output is decoded by protoc against Perfetto's own perfetto_trace.proto
# (tests/fixtures/perfetto) and checked against its input by visualize-perfetto-check.py (clock
# snapshots first, sequence flags, interning, tracks, BEGIN/END nesting, every slice, flow and
# counter value computed from the JSONL), on hand-built, captured, merged, generated, multi-rank,
# late, long-argument, unsorted, truncated and invalid traces; then -o, determinism, a terminal,
# --help, --version, usage.
command -v protoc >/dev/null || { echo "protoc not installed (apt-get install protobuf-compiler)"; exit 77; }
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }
command -v cutperfetto >/dev/null || { echo "cutperfetto not built"; exit 1; }
proto=tests/fixtures/perfetto/perfetto_trace.proto
check=tests/scripts/visualize-perfetto-check.py
ranks=tests/cases/cutperfetto/ranks
layers=tests/cases/cutchrome/layers/input
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# run NAME [check options --] input...: cutperfetto, protoc, the check; the exit status of
# cutperfetto in $tmp/NAME.rc, its messages in $tmp/NAME.err, the check's counts printed.
run() {
	name=$1
	shift
	opts=
	case " $* " in *" -- "*)
		while [ "$1" != -- ]; do opts="$opts $1"; shift; done
		shift ;;
	esac
	cutperfetto "$@" >"$tmp/$name.pb" 2>"$tmp/$name.err"
	echo $? >"$tmp/$name.rc"
	protoc --decode=perfetto.protos.Trace $proto <"$tmp/$name.pb" >"$tmp/$name.txt" ||
		{ bad "$name: protoc cannot decode the output"; return; }
	# shellcheck disable=SC2086
	printf '%-10s ' "$name:"
	python3 $check $opts "$tmp/$name.txt" "$@" || bad "$name: check"
}
clean() { # clean NAME: exit status 0 and nothing said
	[ "$(cat "$tmp/$1.rc")" = 0 ] || bad "$1: exit $(cat "$tmp/$1.rc")"
	[ -s "$tmp/$1.err" ] && bad "$1: unexpected messages: $(cat "$tmp/$1.err")"
}

# Sorted traces: every layer by hand, two real captures, one merged, a generated one.
python3 tests/bench/gentrace.py 2 3 >"$tmp/gen.jsonl"
cutmerge samples/capture-torch-mlp.jsonl >"$tmp/merged.jsonl" 2>/dev/null
run layers $layers && clean layers
run capture samples/capture-torch-mlp.jsonl && clean capture
run hook samples/hook-torch-mlp.jsonl && clean hook
run merged "$tmp/merged.jsonl" && clean merged
run gen "$tmp/gen.jsonl" && clean gen
# cutmerge's parent ids and the nesting give the same flows: one per ioctl inside a call.
n=$(grep '"layer":"ioctl"' "$tmp/merged.jsonl" | grep -c '"parent"')
grep -cE '^ *(terminating_)?flow_ids:' "$tmp/merged.txt" | grep -qx $((2 * n)) || bad "merged: flows are not 2 x $n ioctls with a parent"
[ "$n" -gt 600 ] || bad "merged: only $n ioctls with a parent"

# Three ranks on two hosts: a machine (sequence, clock snapshot with REALTIME) per host, rank 1
# on machine_id 1 with the same pid as rank 0, GPU work per device and stream with flows from
# its calls, devices named, threads renamed, two overlap tracks (a GPU stream, a CPU).
run ranks --overlaps 2 -- $ranks/r0.jsonl $ranks/r1.jsonl $ranks/r2.jsonl && clean ranks
[ "$(grep -c 'clock_snapshot {' "$tmp/ranks.txt")" = 2 ] || bad "ranks: not two clock snapshots"
grep -q 'process_name: "rank 1 (node2)"' "$tmp/ranks.txt" || bad "ranks: rank 1 not named"
[ "$(sed -n 2p "$tmp/ranks.txt")" = "  clock_snapshot {" ] || bad "ranks: the first packet is not the clock snapshot"

# A host up for 200 days: timestamps past 2^53 ns stay exact.
python3 -c '
import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    e["ts"] += 17280000000000000
    print(json.dumps(e))' $layers >"$tmp/late.jsonl"
run late "$tmp/late.jsonl" && clean late
grep -q 'timestamp: 17280000000001100$' "$tmp/late.txt" || bad "late: timestamps not exact"

# Arguments so long that the lengths of the messages around them take 2 to 4 bytes.
python3 -c '
import json
print(json.dumps({"ts": 1000, "dur": 100, "pid": 1, "tid": 1, "layer": "api", "name": "cuLong",
                  "args": {"s": "x" * 200, "t": "y" * 20000, "u": ["z" * 130] * 3,
                           "v": {"w": "q" * 70000}}}))
print(json.dumps({"ts": 1050, "dur": 10, "pid": 1, "tid": 1, "layer": "ioctl", "name": "io",
                  "args": {"big": "b" * 2000000}}))' >"$tmp/long.jsonl"
run long "$tmp/long.jsonl" && clean long

# Unsorted: the same slices, on more tracks, with one warning naming the line.
awk 'NR % 2 == 0' "$tmp/gen.jsonl" >"$tmp/shuf.jsonl"
awk 'NR % 2 == 1' "$tmp/gen.jsonl" >>"$tmp/shuf.jsonl"
run unsorted --unsorted -- "$tmp/shuf.jsonl"
[ "$(cat "$tmp/unsorted.rc")" = 0 ] || bad "unsorted: exit $(cat "$tmp/unsorted.rc")"
[ "$(wc -l <"$tmp/unsorted.err")" = 1 ] &&
	grep -q "^cutperfetto: $tmp/shuf.jsonl:[0-9]*: input not sorted by time" "$tmp/unsorted.err" ||
	bad "unsorted: not one warning with file:line: $(cat "$tmp/unsorted.err")"

# Truncated in the middle of a line, and a line of invalid JSON: a valid trace of the good
# lines, one message each with file:line, exit 1.
head -c 3000 $layers >"$tmp/trunc.jsonl"
run truncated "$tmp/trunc.jsonl"
[ "$(cat "$tmp/truncated.rc")" = 1 ] || bad "truncated: exit $(cat "$tmp/truncated.rc")"
[ "$(wc -l <"$tmp/truncated.err")" = 1 ] && grep -q "^cutperfetto: $tmp/trunc.jsonl:25: " "$tmp/truncated.err" ||
	bad "truncated: $(cat "$tmp/truncated.err")"
sed '5s/.*/{"ts":1100,"dur":200,"pid":77/' $layers >"$tmp/invalid.jsonl"
run invalid "$tmp/invalid.jsonl"
[ "$(cat "$tmp/invalid.rc")" = 1 ] || bad "invalid: exit $(cat "$tmp/invalid.rc")"
[ "$(wc -l <"$tmp/invalid.err")" = 1 ] && grep -q "^cutperfetto: $tmp/invalid.jsonl:5: " "$tmp/invalid.err" ||
	bad "invalid: $(cat "$tmp/invalid.err")"

# Empty input: an empty trace. -o writes the same bytes as standard output, every time.
cutperfetto </dev/null >"$tmp/empty.pb" || bad "empty: exit $?"
[ -s "$tmp/empty.pb" ] && bad "empty input: output not empty"
cutperfetto -o "$tmp/o.pb" $ranks/r0.jsonl $ranks/r1.jsonl $ranks/r2.jsonl || bad "-o: exit $?"
cmp -s "$tmp/o.pb" "$tmp/ranks.pb" || bad "-o: not the bytes of standard output"
cutperfetto --output="$tmp/o2.pb" samples/capture-torch-mlp.jsonl || bad "--output: exit $?"
cmp -s "$tmp/o2.pb" "$tmp/capture.pb" || bad "two runs differ"

# Options.
[ "$(cutperfetto --version)" = "cutperfetto $(sed -n 's/^VERSION = //p' config.mk)" ] ||
	bad "--version: $(cutperfetto --version)"
[ "$(cutperfetto --help)" = "usage: cutperfetto [-o file] [file ...]" ] || bad "--help: $(cutperfetto --help)"
cutperfetto -x >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] || bad "-x: exit status is not 2"
grep -q '^usage: cutperfetto \[-o file\] \[file \.\.\.\]$' "$tmp/err" || bad "usage line: $(cat "$tmp/err")"
python3 -c '
import pty, subprocess, sys
master, slave = pty.openpty()
p = subprocess.run(["cutperfetto", sys.argv[1]], stdout=slave, stderr=subprocess.PIPE)
sys.exit(0 if p.returncode == 2 and b"terminal" in p.stderr else 1)' $layers ||
	bad "a terminal as standard output: not refused with exit status 2"
cutperfetto "$tmp/no-such-file" >/dev/null 2>"$tmp/err"
[ $? -eq 3 ] && [ "$(wc -l <"$tmp/err")" = 1 ] || bad "missing file: $(cat "$tmp/err")"
exit $fail
