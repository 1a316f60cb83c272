#!/bin/sh
# cuthook under faults (tests/fixtures/capture-faulty.c): the traced program's standard output,
# standard error and exit status are those of a plain run when it crashes (SIGSEGV: 139) and
# when it exits before its child; when its trace cannot be written (a full disk, a directory
# that goes away) its output is, and cuthook says so and exits 2; a directory that is not there
# is refused before it runs; what was written of the trace is whole lines that
# CUT_STRICT=1 cutstat reads.
# A process killed by a signal still writes its header first; a child forked after its parent
# made calls writes its own pid and tid.
top=${CUT_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
B=${CUT_BUILD:-$top/build}
PATH=$B/bin:$PATH
faulty=$B/fixtures/capture-faulty
[ -x "$B/bin/cuthook" ] && [ -x "$faulty" ] || { echo "build $B first (make test-programs)"; exit 1; }
[ -w /dev/full ] || { echo "no /dev/full"; exit 77; }
t=$(mktemp -d) || exit 2
trap 'rm -rf "$t"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
ulimit -c 0

# run NAME TRACE ARGS...: capture-faulty ARGS plain, then under cuthook -o TRACE: the same
# standard output, standard error and exit status (the shell's 128 + signal for a crash).
# Children left running are waited for through their last line, "faulty: child done".
settle() {
	case "$*" in
	*orphan*)
		i=0
		while ! grep -q "child done" "$1" && [ $i -lt 2400 ]; do sleep 0.05; i=$((i + 1)); done ;;
	esac
}
run() {
	name=$1 trace=$2
	shift 2
	"$faulty" "$@" >"$t/plain.out" 2>"$t/plain.err"
	plain=$?
	settle "$t/plain.err" "$@"
	cuthook -o "$trace" -- "$faulty" "$@" >"$t/hook.out" 2>"$t/hook.err"
	st=$?
	settle "$t/hook.err" "$@"
	[ $st -eq $plain ] || bad "$name: exit status $st, plain $plain"
	cmp -s "$t/plain.out" "$t/hook.out" || bad "$name: standard output differs: $(cat "$t/hook.out")"
	cmp -s "$t/plain.err" "$t/hook.err" || bad "$name: standard error differs: $(cat "$t/hook.err")"
}
# whole TRACE: every line whole and read by cutstat in strict mode.
whole() {
	[ ! -s "$1" ] || [ "$(tail -c 1 "$1" | od -An -c | tr -d ' ')" = '\n' ] || bad "$1: the last line is not whole"
	CUT_STRICT=1 cutstat "$1" >/dev/null 2>"$t/stat.err" || bad "$1: cutstat: $(cat "$t/stat.err")"
}

# The trace cannot be written: the program runs as plain (its output, its status said), and
# cuthook says the trace is incomplete and exits 2, as cutcapture does (issue 23).
unwritable() {
	name=$1
	[ "$st" -eq 2 ] || bad "$name: exit status $st, not 2"
	cmp -s "$t/plain.out" "$t/hook.out" || bad "$name: standard output differs: $(cat "$t/hook.out")"
	grep -v '^cuthook: ' "$t/hook.err" | cmp -s "$t/plain.err" - || bad "$name: standard error differs: $(cat "$t/hook.err")"
	grep -q '^cuthook: writing the trace to .*: the trace is incomplete' "$t/hook.err" &&
		grep -q '^cuthook: the command exited with status 7$' "$t/hook.err" ||
		bad "$name: not said: $(cat "$t/hook.err")"
}
"$faulty" exit 7 >"$t/plain.out" 2>"$t/plain.err"
[ $? -eq 7 ] || bad "capture-faulty exit 7 exits $?"
cuthook -o /dev/full -- "$faulty" exit 7 >"$t/hook.out" 2>"$t/hook.err"
st=$?
unwritable "-o /dev/full"
mkdir "$t/gone"
# The directory goes away before the program's first call.
cuthook -o "$t/gone/t.jsonl" -- sh -c "rm -rf '$t/gone'; exec '$faulty' exit 7" >"$t/hook.out" 2>"$t/hook.err"
st=$?
unwritable "directory removed"
# A file that cannot be created, %p or not, is a usage error (cuthook(1)): nothing runs.
for f in t.jsonl t.%p.jsonl; do
	cuthook -o "$t/no/such/dir/$f" -- "$faulty" exit 7 >"$t/hook.out" 2>"$t/hook.err"
	st=$?
	[ $st -eq 2 ] && [ ! -s "$t/hook.out" ] && [ "$(wc -l <"$t/hook.err")" -eq 1 ] &&
		grep -q "$f" "$t/hook.err" || bad "no directory ($f): exit $st, $(cat "$t/hook.err")"
done

# The program crashes with a call in flight on another thread: 139, the calls made before
# it in the trace, in whole lines, and the call in flight as lost.
run "segv" "$t/segv.jsonl" segv
[ $plain -eq 139 ] || bad "capture-faulty segv exits $plain"
whole "$t/segv.jsonl"
[ "$(grep -c '"layer":"api","name"' "$t/segv.jsonl")" -eq 4 ] || bad "segv: not the 4 calls made before the crash"
# The call in flight never returns: lost, said at its start, as cutcapture's uprobes say it.
[ "$(grep '"name":"lost"' "$t/segv.jsonl" | grep -c '"count":1,"reason":"cuStreamSynchronize in flight when process [0-9]* ended (thread [0-9]*)","layer":"api"')" -eq 1 ] ||
	bad "segv: the call in flight is not one lost record: $(grep '"name":"lost"' "$t/segv.jsonl")"
# cuthook(1): each process writes its header and process record before its first event. On
# a death by signal the buffered lines are written without them.
head -1 "$t/segv.jsonl" | grep -q '"name":"header"' ||
	bad "segv: the trace has no header first (first line: $(head -1 "$t/segv.jsonl" | cut -c1-100))"
grep -q '"name":"process"' "$t/segv.jsonl" || bad "segv: the trace has no process record"

# The parent exits at once, its child makes its calls 200 ms later: both traced, each with its
# header and trailer; the program's output as plain.
run "orphan" "$t/orphan.jsonl" orphan 200
i=0
while [ "$(grep -c '"name":"trailer"' "$t/orphan.jsonl")" -lt 2 ] && [ $i -lt 2400 ]; do sleep 0.05; i=$((i + 1)); done
whole "$t/orphan.jsonl"
[ "$(grep -c '"name":"header"' "$t/orphan.jsonl")" -eq 2 ] && [ "$(grep -c '"name":"trailer"' "$t/orphan.jsonl")" -eq 2 ] ||
	bad "orphan: not a header and a trailer for each process"
calls() { grep "\"layer\":\"api\",\"name\":\"$1\"" "$t/orphan.jsonl"; }
[ "$(calls cuCtxGetCurrent | wc -l)" -eq 5 ] && [ "$(calls cuInit | wc -l)" -eq 1 ] ||
	bad "orphan: calls: $(grep -c '"layer":"api"' "$t/orphan.jsonl")"
# The child's calls are its own: its pid, not its parent's.
pid_of() { sed 's/.*"pid":\([0-9]*\),.*/\1/' | sort -u; }
parent=$(calls cuInit | pid_of)
child=$(calls cuCtxGetCurrent | pid_of)
[ "$child" != "$parent" ] && grep -q "\"pid\":$child,\"tid\":$child,\"layer\":\"meta\",\"name\":\"header\"" "$t/orphan.jsonl" ||
	bad "fork after a call: the child's calls carry its parent's pid and tid ($child; headers of $(grep '"name":"header"' "$t/orphan.jsonl" | pid_of | tr '\n' ' '))"
exit $fail
