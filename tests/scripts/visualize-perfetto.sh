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

# Real kernel names, mangled: shown demangled, each with the trace's name as "mangled"; the
# collectives of a case (NCCL's, mangled and not) say so.
run gpu --layers runtime,nvtx -- samples/hook-torch-mlp-gpu.jsonl.zst && clean gpu
grep -q 'name: "void cutlass::Kernel2<' "$tmp/gpu.txt" || bad "gpu: a kernel name not demangled"
grep -q 'name: "_ZN7cutlass' "$tmp/gpu.txt" && bad "gpu: a kernel shown mangled"
run demangled --layers nvtx -- tests/cases/cutperfetto/demangled/input && clean demangled

# The DDP sample, whose runtime and NVTX records carry no host or rank: they are their
# processes' (the host and rank other records of the pid said), a process per rank, on one
# machine.
run ddp --layers runtime,nvtx -- samples/ddp-2gpu-hook.jsonl.zst && clean ddp
procs=$(awk '/trusted_packet_sequence_id:/ { seq = $2 }
	/^    process \{/ { p = 1; next } p && /pid:/ { print "sequence " seq " pid " $2; p = 0 }' "$tmp/ddp.txt" |
	sort -u | tr '\n' ' ')
[ "$procs" = "sequence 1 pid 661 sequence 1 pid 701 sequence 1 pid 702 " ] &&
	grep -q 'process_name: "rank 0 (vm)"' "$tmp/ddp.txt" && grep -q 'process_name: "rank 1 (vm)"' "$tmp/ddp.txt" &&
	[ "$(grep -c 'clock_snapshot {' "$tmp/ddp.txt")" = 1 ] ||
	bad "ddp: not a process per rank on one machine: $procs$(grep 'process_name: ' "$tmp/ddp.txt" | sort -u)"

# Three ranks on two hosts: a machine (sequence, clock snapshot with REALTIME) per host, rank 1
# on machine_id 1 with the same pid as rank 0, GPU work per device and stream with flows from
# its calls, devices named, threads renamed, two overlap tracks (a GPU stream, a CPU).
run ranks --overlaps 2 -- $ranks/r0.jsonl $ranks/r1.jsonl $ranks/r2.jsonl && clean ranks
[ "$(grep -c 'clock_snapshot {' "$tmp/ranks.txt")" = 2 ] || bad "ranks: not two clock snapshots"
grep -q 'process_name: "rank 1 (node2)"' "$tmp/ranks.txt" || bad "ranks: rank 1 not named"
[ "$(sed -n 2p "$tmp/ranks.txt")" = "  clock_snapshot {" ] || bad "ranks: the first packet is not the clock snapshot"

# A rank only on the process record's envelope (cutmerge's), as cutchrome reads it: the process
# is rank 5, before its own args' rank 1.
cat >"$tmp/envrank.jsonl" <<'JSONL'
{"ts":1,"pid":9,"tid":9,"layer":"meta","name":"header","args":{"schema":2,"tool":"hand","host":"h"}}
{"ts":1,"rank":5,"pid":9,"tid":9,"layer":"meta","name":"process","args":{"comm":"train","rank":1}}
{"ts":2,"dur":1,"pid":9,"tid":9,"layer":"api","name":"cuInit"}
JSONL
run envrank "$tmp/envrank.jsonl" && clean envrank
grep -q 'process_name: "rank 5 (h)"' "$tmp/envrank.txt" || bad "envrank: the process is not rank 5"

# Two processes sharing one GPU (its uuid in both device records, under different ordinals) and a
# third process whose device record names no uuid: one track group for the shared GPU with a
# stream track per process, its busy counter over both processes' work (2 while they overlap),
# the third process's GPU under its own process; a stream named through NVTX keeps its handle.
cat >"$tmp/shared.jsonl" <<'JSONL'
{"ts":100,"pid":300,"tid":300,"layer":"meta","name":"header","args":{"schema":2,"tool":"cuthook","host":"gpu1","clock":{"monotonic_ns":100,"realtime_ns":1795000000000000100},"sorted":true}}
{"ts":100,"pid":300,"tid":300,"layer":"meta","name":"device","args":{"device":0,"name":"NVIDIA H100","uuid":"GPU-aaaa"}}
{"ts":100,"pid":400,"tid":400,"layer":"meta","name":"device","args":{"device":1,"name":"NVIDIA H100","uuid":"GPU-aaaa"}}
{"ts":100,"pid":500,"tid":500,"layer":"meta","name":"device","args":{"device":0,"name":"NVIDIA A100"}}
{"ts":100,"pid":400,"tid":400,"layer":"meta","name":"symbol","args":{"handle":"0x7","name":"copies","kind":"stream","via":"nvtxNameCuStreamA"}}
{"ts":1000,"dur":100,"pid":300,"tid":300,"layer":"api","name":"cuLaunchKernel","cat":"launch","args":{"stream":"0x0","corr":1}}
{"ts":1050,"dur":100,"pid":400,"tid":400,"layer":"api","name":"cuLaunchKernel","cat":"launch","args":{"stream":"0x7","corr":1}}
{"ts":1060,"dur":50,"pid":500,"tid":500,"layer":"api","name":"cuLaunchKernel","cat":"launch","args":{"stream":"0x0","corr":1}}
{"ts":1200,"dur":1000,"pid":300,"tid":300,"layer":"gpu","name":"k300","cat":"kernel","args":{"corr":1,"stream":"0x0","device":0,"submit":1000}}
{"ts":1300,"dur":200,"pid":500,"tid":500,"layer":"gpu","name":"k500","cat":"kernel","args":{"corr":1,"stream":"0x0","device":0,"submit":1060}}
{"ts":1700,"dur":1000,"pid":400,"tid":400,"layer":"gpu","name":"k400","cat":"kernel","args":{"corr":1,"stream":"0x7","device":1,"submit":1050}}
JSONL
run shared "$tmp/shared.jsonl" && clean shared
[ "$(grep -c 'name: "GPU 0: NVIDIA H100 (GPU-aaaa)"' "$tmp/shared.txt")" = 1 ] ||
	bad "shared: the shared GPU is not one track named with its uuid"
python3 - "$tmp/shared.txt" <<'PY' || bad "shared: tracks not as planted"
import re, sys
t = open(sys.argv[1]).read()
tracks = {int(u): (n, p) for u, n, p in re.findall(
    r'uuid: (\d+)\n\s+name: "([^"]*)"\n(?:\s+parent_uuid: (\d+))?', t)}
by = {n: (u, p) for u, (n, p) in tracks.items()}
gpu = by["GPU 0: NVIDIA H100 (GPU-aaaa)"]
assert gpu[1] == "", gpu  # no process owns it
for s in ("pid 300 stream 0x0", "pid 400 copies (stream 0x7)"):
    assert by[s][1] == str(gpu[0]), (s, by[s])
busy = [u for u, (n, p) in tracks.items() if n == "GPU 0 busy" and p == str(gpu[0])]
assert len(busy) == 1, busy
vals = re.findall(r'track_uuid: %d\n\s+counter_value: (\d+)' % busy[0], t)
assert vals == ["1", "2", "1", "0"], vals
assert "GPU 0: NVIDIA A100" in by and by["GPU 0: NVIDIA A100"][1] != ""
PY

# The same GPU in two files of one machine that overlap in time: the files are read at once, by
# time, so the busy counter is 2 while both kernels run. Read one file after the other, the first
# file's kernel had ended (at its later call) before the second's began: 1, 0, 1, 0.
head -1 "$tmp/shared.jsonl" >"$tmp/shared-a.jsonl"
head -1 "$tmp/shared.jsonl" >"$tmp/shared-b.jsonl"
grep '"pid":300' "$tmp/shared.jsonl" | sed 1d >>"$tmp/shared-a.jsonl"
echo '{"ts":3000,"dur":10,"pid":300,"tid":300,"layer":"api","name":"cuCtxSynchronize","cat":"sync"}' >>"$tmp/shared-a.jsonl"
grep '"pid":400' "$tmp/shared.jsonl" >>"$tmp/shared-b.jsonl"
run shared2 "$tmp/shared-a.jsonl" "$tmp/shared-b.jsonl" && clean shared2

# GPU work queued deep: 100 pieces on one stream, each overlapping all before it, twice: past
# the lanes scanned, each takes a spill lane (a heap, linear time), the second round the lanes
# the first left free; every track still nests: 99 overlap tracks.
python3 -c '
import json
for r in (0, 1):
    for i in range(100):
        print(json.dumps({"ts": 100000 * r + 10 * i + 1, "dur": 5000, "pid": 1, "tid": 1, "layer": "gpu",
                          "name": "k%d" % i, "cat": "kernel", "args": {"stream": "0x5", "device": 0, "corr": 100 * r + i}}))' >"$tmp/queued.jsonl"
run queued --overlaps 99 -- "$tmp/queued.jsonl" && clean queued

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
[ "$(cutperfetto --help | head -1)" = "usage: cutperfetto [-M] [-o file] [file ...]" ] || bad "--help: $(cutperfetto --help)"
cutperfetto --help | grep -q '^  -o, --output=FILE  *[a-z]' || bad "--help lists no -o: $(cutperfetto --help)"
cutperfetto -x >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] || bad "-x: exit status is not 2"
grep -q '^usage: cutperfetto \[-M\] \[-o file\] \[file \.\.\.\]$' "$tmp/err" || bad "usage line: $(cat "$tmp/err")"
python3 -c '
import pty, subprocess, sys
master, slave = pty.openpty()
p = subprocess.run(["cutperfetto", sys.argv[1]], stdout=slave, stderr=subprocess.PIPE)
sys.exit(0 if p.returncode == 2 and b"terminal" in p.stderr else 1)' $layers ||
	bad "a terminal as standard output: not refused with exit status 2"
cutperfetto "$tmp/no-such-file" >/dev/null 2>"$tmp/err"
[ $? -eq 3 ] && [ "$(wc -l <"$tmp/err")" = 1 ] || bad "missing file: $(cat "$tmp/err")"
exit $fail
