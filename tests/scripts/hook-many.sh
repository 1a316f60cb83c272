#!/bin/sh
# cuthook on a trace of many lines (tests/fixtures/capture-faulty.c, many): each thread writes
# its buffer some 100 times over. With 4 threads making 40,000 calls each, every call is in the
# trace once, in whole lines, sorted, the trailer counting them with 0 lost. A crash after the
# calls (SIGSEGV) still has every call in the trace, the header first; a child forked after
# them writes its own calls and none of its parent's; a trace that stops being writable half
# way (a file size limit) loses what it could not write: cuthook says so and exits 2.
top=${CUT_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
B=${CUT_BUILD:-$top/build}
PATH=$B/bin:$PATH
faulty=$B/fixtures/capture-faulty
[ -x "$B/bin/cuthook" ] && [ -x "$faulty" ] || { echo "build $B first (make test-programs)"; exit 1; }
t=$(mktemp -d) || exit 2
trap 'rm -rf "$t"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
ulimit -c 0
N=40000

# calls TRACE [PID]: the cuCtxGetCurrent lines of TRACE (of process PID)
calls() {
	grep "\"pid\":${2:-[0-9]*},\"tid\":[0-9]*,\"layer\":\"api\",\"name\":\"cuCtxGetCurrent\"" "$1" | wc -l
}
# whole TRACE: the last line ends, and cutstat reads every line in strict mode
whole() {
	[ "$(tail -c 1 "$1" | od -An -c | tr -d ' ')" = '\n' ] || bad "$1: the last line is not whole"
	CUT_STRICT=1 cutstat "$1" >/dev/null 2>"$t/stat.err" || bad "$1: cutstat: $(cat "$t/stat.err")"
}
# trailer TRACE: events and lost of its (last) trailer
trailer() {
	grep '"name":"trailer"' "$1" | tail -1 | sed 's/.*"args":{"events":\([0-9]*\),"lost":\([0-9]*\),.*/\1 \2/'
}

tr=$t/many.jsonl
cuthook -o "$tr" -- "$faulty" many $N 4 exit 2>"$t/err"
st=$?
[ $st -eq 0 ] || bad "exit $st: $(cat "$t/err")"
whole "$tr"
[ "$(calls "$tr")" -eq $((4 * N)) ] || bad "$(calls "$tr") calls in the trace, not $((4 * N))"
set -- $(trailer "$tr")
lines=$(grep -vc '"layer":"meta"' "$tr")
[ "$2" = 0 ] && [ "$1" -ge "$lines" ] || bad "trailer says $1 events, $2 lost; $lines in the trace"
grep -q '"sorted":true' "$tr" && cut -d, -f1 "$tr" | sed 's/{"ts"://' | sort -nc 2>/dev/null ||
	bad "the trace is not sorted"

# A crash after the calls: the buffers are written.
cuthook -o "$t/segv.jsonl" -- "$faulty" many $N 4 segv 2>"$t/err"
st=$?
[ $st -eq 139 ] || bad "segv: exit $st, not 139"
whole "$t/segv.jsonl"
[ "$(calls "$t/segv.jsonl")" -eq $((4 * N)) ] || bad "segv: $(calls "$t/segv.jsonl") calls in the trace, not $((4 * N))"
head -1 "$t/segv.jsonl" | grep -q '"name":"header"' || bad "segv: no header first"

# A child forked after the calls: its own calls, none of its parent's lines twice.
cuthook -o "$t/fork.jsonl" -- "$faulty" many $N 2 fork 2>"$t/err"
st=$?
[ $st -eq 0 ] || bad "fork: exit $st: $(cat "$t/err")"
whole "$t/fork.jsonl"
pids=$(grep '"name":"header"' "$t/fork.jsonl" | sed 's/.*"pid":\([0-9]*\),.*/\1/' | sort -u)
[ "$(echo "$pids" | wc -l)" -eq 2 ] || bad "fork: headers of $(echo $pids), not 2 processes"
total=0
for p in $pids; do
	n=$(calls "$t/fork.jsonl" "$p")
	[ "$n" -eq $((2 * N)) ] || [ "$n" -eq $N ] || bad "fork: process $p made $n calls"
	total=$((total + n))
done
[ $total -eq $((3 * N)) ] || bad "fork: $total calls in the trace, not $((3 * N))"

# The file stops taking lines at a few MB (RLIMIT_FSIZE): cuthook says the trace is incomplete.
(ulimit -f 4096 && exec cuthook -o "$t/big.jsonl" -- "$faulty" many $N 4 exit) 2>"$t/err"
st=$?
[ $st -eq 2 ] || bad "file size limit: exit $st, not 2: $(cat "$t/err")"
grep -q '^cuthook: writing the trace to .*: the trace is incomplete' "$t/err" ||
	bad "file size limit: not said: $(cat "$t/err")"
[ "$(calls "$t/big.jsonl")" -lt $((4 * N)) ] || bad "file size limit: every call written"
exit $fail
