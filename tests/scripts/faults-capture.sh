#!/bin/sh
# cutcapture under faults (tests/fixtures/capture-faulty.c misbehaves on purpose): the command
# crashes (SIGSEGV) with a call in flight; it exits before its child; Ctrl-C from a terminal,
# SIGINT to the process group and to cutcapture alone (the command gets it once); a 1 MiB
# ring buffer with the reader running under load; the trace's disk full, its file over the
# size limit, its pipe closed. Each ends with the exit status cutcapture(8) gives, the command
# run to its end, and a trace every line of which CUT_STRICT=1 cutstat reads: header first,
# trailer last (but when the output failed), every loss in lost records and the trailer; the
# crash, the orphan and ^C with the api layer both from uprobes and from libcuthook (the
# default), each losing the call in flight, said.
# capture-*.sh cover SIGTERM, exit 137/127/3, a stopped reader and fork. Needs root with
# BPF and python3; exits 77 when they are missing.
top=${CUT_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
B=${CUT_BUILD:-$top/build}
PATH=$B/bin:$PATH
cap=$B/bin/cutcapture fx=$B/fixtures
t=$(mktemp -d) || exit 2
trap 'rm -rf "$t"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
# until_ok SECONDS CMD...: waits until CMD succeeds, failing after SECONDS (a state, which load
# only delays, not a time that stands for it).
until_ok() {
	_n=$(($1 * 20))
	shift
	while ! "$@"; do
		_n=$((_n - 1))
		[ $_n -gt 0 ] || return 1
		sleep 0.05
	done
}
[ "$(id -u)" -eq 0 ] || { echo "needs root for BPF"; exit 77; }
command -v jq >/dev/null || { echo "needs jq"; exit 77; }
command -v python3 >/dev/null || { echo "needs python3"; exit 77; }
if ! "$cap" -q -l sched -o /dev/null -- true 2>"$t/err"; then
	grep -q "cannot load the BPF programs" "$t/err" && { echo "BPF unavailable: $(cat "$t/err")"; exit 77; }
	fail "cutcapture -- true: $(cat "$t/err")"
fi
ulimit -c 0
faulty=$fx/capture-faulty
# The api layer by uprobes (--uprobes), where the output streams as the command runs; the crash,
# the orphan and ^C also by default (libcuthook preloaded for the api layer: the trace at the
# end).
lib="--uprobes --libcuda $fx/libcuda.so.1"

# valid FILE: header first, trailer last, sorted, read whole by cutstat in strict mode, and
# the trailer's lost count that of the lost records, each saying why.
cat >"$t/valid.py" <<'EOF'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
def no(why):
    print(why)
    sys.exit(1)
if not ev or ev[0]["name"] != "header": no("no header first")
if ev[-1]["name"] != "trailer": no("no trailer last")
if any(a["ts"] > b["ts"] for a, b in zip(ev[:-2], ev[1:-1])): no("not sorted by ts")
lost = [e["args"] for e in ev if e["layer"] == "meta" and e["name"] == "lost"]
if any(a["count"] <= 0 or not a["reason"] or not a.get("layer") for a in lost):
    no("a lost record says not why")
if sum(a["count"] for a in lost) != ev[-1]["args"]["lost"]: no("lost records and trailer disagree")
EOF
valid() {
	python3 "$t/valid.py" "$1" >"$t/valid.out" || fail "$1: $(cat "$t/valid.out")"
	CUT_STRICT=1 cutstat "$1" >/dev/null 2>"$t/stat.err" || fail "$1: cutstat: $(cat "$t/stat.err")"
}
# prefix FILE: a trace cut short by an output failure: whole lines, header first, read by
# cutstat in strict mode, no trailer.
prefix() {
	[ "$(tail -c 1 "$1" | od -An -c | tr -d ' ')" = '\n' ] || fail "$1: the last line is not whole"
	[ "$(head -1 "$1" | jq -r .name)" = header ] || fail "$1: no header first"
	jq -e -s 'all(.[]; .name != "trailer")' "$1" >/dev/null || fail "$1: a trailer"
	CUT_STRICT=1 cutstat "$1" >/dev/null 2>"$t/stat.err" || fail "$1: cutstat: $(cat "$t/stat.err")"
}
api() { jq -r 'select(.layer=="api") | .name' "$1" | sort | uniq -c | awk '{print $2, $1}' | tr '\n' ' '; }
trailer() { tail -1 "$1" | jq -r ".args.$2"; }

for path in uprobes preload; do
	how=$lib
	[ $path = preload ] && how=
	# --- The command crashes: SIGSEGV while another thread is inside cuStreamSynchronize.
	"$cap" -q $how -o "$t/segv.jsonl" -- "$faulty" segv >"$t/out" 2>"$t/err"
	rc=$?
	[ $rc = 139 ] || fail "segv ($path): exit $rc, not 139: $(cat "$t/err")"
	valid "$t/segv.jsonl"
	[ "$(trailer "$t/segv.jsonl" status)" = 139 ] || fail "segv ($path): trailer status $(trailer "$t/segv.jsonl" status)"
	[ "$(api "$t/segv.jsonl")" = "cuCtxGetCurrent 3 cuInit 1 " ] || fail "segv ($path): calls: $(api "$t/segv.jsonl")"
	# The call its thread never returned from is lost, and said so.
	jq -e -s '[.[] | select(.name == "lost")] | length == 1 and .[0].args.count == 1 and
		.[0].args.layer == "api" and (.[0].args.reason | startswith("cuStreamSynchronize in flight"))' \
		"$t/segv.jsonl" >/dev/null || fail "segv ($path): the call in flight is not a lost record"
	grep -q "1 events lost" "$t/err" || fail "segv ($path): no message about the lost call"
	[ "$(cat "$t/out")" = "faulty: out" ] && grep -q "^faulty: err$" "$t/err" || fail "segv ($path): output"

	# --- The parent exits first: its child is followed until it exits, and the capture waits.
	"$cap" -q $how -o "$t/orphan.jsonl" -- "$faulty" orphan 300 >/dev/null 2>"$t/err"
	rc=$?
	[ $rc = 0 ] || fail "orphan ($path): exit $rc: $(cat "$t/err")"
	grep -q "faulty: child done" "$t/err" || fail "orphan ($path): the capture ended before the child"
	valid "$t/orphan.jsonl"
	parent=$(jq -r 'select(.name=="header") | .args.pid' "$t/orphan.jsonl")
	[ "$(jq -r "select(.layer==\"api\" and .pid != $parent) | .name" "$t/orphan.jsonl" | sort | uniq -c |
		awk '{print $2, $1}')" = "cuCtxGetCurrent 5" ] || fail "orphan ($path): the child's calls: $(api "$t/orphan.jsonl")"
	jq -e -s "any(.[]; .name == \"process\" and .args.ppid == $parent)" "$t/orphan.jsonl" >/dev/null ||
		fail "orphan ($path): no process record of the child"
	[ "$(trailer "$t/orphan.jsonl" status)" = 0 ] || fail "orphan ($path): trailer status"
	src=$(head -1 "$t/orphan.jsonl" | jq -r .args.sources.api)
	case $path:$src in uprobes:"uprobes: --uprobes" | preload:preload) ;; *) fail "orphan ($path): api from $src" ;; esac
done
# The same with -p: attached to a shell that becomes the parent once the capture has written
# its header (it has attached).
sh -c "until grep -qs '\"name\":\"header\"' '$t/porphan.jsonl'; do sleep 0.05; done
	exec '$faulty' orphan 400" 2>"$t/porphan.out" &
bg=$!
"$cap" -q -l api $lib -o "$t/porphan.jsonl" -p $bg 2>"$t/err" || fail "-p orphan: exit $?: $(cat "$t/err")"
grep -q "faulty: child done" "$t/porphan.out" || fail "-p orphan: the capture ended before the child"
wait $bg
valid "$t/porphan.jsonl"
[ "$(api "$t/porphan.jsonl")" = "cuCtxGetCurrent 5 cuInit 1 " ] || fail "-p orphan: calls: $(api "$t/porphan.jsonl")"

# --- Ctrl-C on a terminal: cuprog sleeps 60 s inside cuStreamSynchronize; ^C, typed once the
# stand-in says it sleeps there, reaches it and cutcapture, which ends with it: 130, the 15
# calls before, the one in flight lost.
cat >"$t/onterm.py" <<'EOF'
import os, pty, select, signal, sys, time
# onterm.py FILE CMD...: CMD on a new terminal, ^C typed once FILE is there; prints its exit
# status ("hung" after 120 s).
ready, cmd = sys.argv[1], sys.argv[2:]
pid, fd = pty.fork()
if pid == 0:
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    os.execvp(cmd[0], cmd)
start, sent, status = time.time(), False, None
while status is None and time.time() - start < 120:
    if select.select([fd], [], [], 0.05)[0]:
        try:
            os.read(fd, 4096)
        except OSError:
            pass
    if not sent and os.path.exists(ready) and os.path.getsize(ready) > 0:
        os.write(fd, b"\x03")
        sent = True
    w, st = os.waitpid(pid, os.WNOHANG)
    if w == pid:
        status = os.WEXITSTATUS(st) if os.WIFEXITED(st) else -os.WTERMSIG(st)
if status is None:
    os.kill(pid, signal.SIGKILL)
print(status if status is not None else "hung")
EOF
for path in uprobes preload; do
	how=$lib
	[ $path = preload ] && how=
	rm -f "$t/int.sync"
	rc=$(FAKECUDA_SYNC_FILE=$t/int.sync python3 "$t/onterm.py" "$t/int.sync" "$cap" -q $how \
		-o "$t/int.jsonl" -- "$fx/cuprog" link 60000000)
	[ "$rc" = 130 ] || fail "^C ($path): exit $rc, not 130"
	valid "$t/int.jsonl"
	[ "$(trailer "$t/int.jsonl" status)" = 130 ] || fail "^C ($path): trailer status"
	[ "$(jq -r 'select(.layer=="api")' "$t/int.jsonl" | jq -s length)" = 15 ] || fail "^C ($path): not 15 calls"
	jq -e -s 'any(.[]; .name == "lost" and (.args.reason | startswith("cuStreamSynchronize")))' \
		"$t/int.jsonl" >/dev/null || fail "^C ($path): the interrupted call is not a lost record"
done

# SIGINT to the whole process group (as kill -INT -PGID, a job scheduler), then to cutcapture
# alone (as kill(1)): the command, which counts its SIGINTs and exits 10 + the count, gets
# exactly one either way, and its status is cutcapture's.
cat >"$t/group.py" <<'EOF'
import os, signal, subprocess, sys, time
# group.py group|one CMD...: CMD in a process group of its own, SIGINT to the group or to CMD
# alone once it has written "ready" on standard error; prints CMD's exit status.
how, cmd = sys.argv[1], sys.argv[2:]
p = subprocess.Popen(cmd, start_new_session=True, stderr=subprocess.PIPE,
                     preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
for line in p.stderr:
    if b"ready" in line:
        break
(os.killpg if how == "group" else os.kill)(p.pid, signal.SIGINT)
p.stderr.read()
try:
    print(p.wait(timeout=150))
except subprocess.TimeoutExpired:
    p.kill()
    print("hung")
EOF
# (The command waits for its first SIGINT, 120 s at most, then a second for another.)
counter='import signal, sys, time
n = 0
def count(*a):
    global n
    n += 1
signal.signal(signal.SIGINT, count)
print("ready", file=sys.stderr, flush=True)
end = time.time() + 120
while n == 0 and time.time() < end:
    time.sleep(0.01)
end = time.time() + 1.0
while time.time() < end:
    time.sleep(0.01)
sys.exit(10 + n)'
for how in group one; do
	rc=$(python3 "$t/group.py" $how "$cap" -q -l sched -o "$t/$how.jsonl" -- python3 -c "$counter")
	[ "$rc" = 11 ] || fail "SIGINT to $how: exit $rc, not 11 (10 + SIGINTs the command got)"
	valid "$t/$how.jsonl"
	[ "$(trailer "$t/$how.jsonl" status)" = 11 ] || fail "SIGINT to $how: trailer status"
done

# --- A 1 MiB ring buffer, the reader running, four processes calling at once: every call
# written or counted lost, the trace valid.
n=40000
"$cap" -q -b 1 -l api,sched $lib -o "$t/tiny.jsonl" -- sh -c \
	"for i in 1 2 3 4; do '$fx/capture-loop' $n & done; wait" >/dev/null 2>"$t/err" ||
	fail "tiny ring: exit $?: $(cat "$t/err")"
valid "$t/tiny.jsonl"
written=$(trailer "$t/tiny.jsonl" layers.api)
lost=$(grep '"name":"lost"' "$t/tiny.jsonl" | grep '"layer":"api"}' | sed 's/.*"count":\([0-9]*\),.*/\1/' |
	awk '{ n += $1 } END { print n + 0 }')
[ $((written + lost)) = $((4 * n)) ] || fail "tiny ring: $written written + $lost lost != $((4 * n)) calls"
[ "$lost" = 0 ] || grep -q "events lost" "$t/err" || fail "tiny ring: losses not said"

# --- The output fails. A full disk at the end: 2, one line; the command ran to its end.
"$cap" -q $lib -o /dev/full -- "$fx/cuprog" link >"$t/out" 2>"$t/err"
rc=$?
[ $rc = 2 ] || fail "/dev/full: exit $rc, not 2"
[ "$(grep -c "No space left on device" "$t/err")" = 1 ] || fail "/dev/full: message: $(cat "$t/err")"
grep -qx "cuprog: ok" "$t/out" || fail "/dev/full: the command did not run to its end"

# A full disk while the command runs: tracing stops at once, the command goes on untraced to
# its end, then 2. (Without the sched layer, whose sleeping shell would hold the output back
# for a second, records go out as the calls are made; the command goes on until the capture
# has said it stopped.)
timeout 120 "$cap" -q -l api $lib -o /dev/full -- sh -c "'$fx/capture-loop' 100000
	until grep -q 'tracing stopped' '$t/err'; do sleep 0.05; done; echo done" >"$t/out" 2>"$t/err"
rc=$?
[ $rc = 2 ] || fail "/dev/full, running: exit $rc, not 2: $(cat "$t/err")"
grep -q "No space left on device: tracing stopped, waiting for the command, untraced" "$t/err" ||
	fail "/dev/full, running: message: $(cat "$t/err")"
grep -qx done "$t/out" || fail "/dev/full, running: the command did not run to its end"

# A file over the size limit (a disk full for it): cut back to its last whole line, a valid
# trace without trailer. Whether the first write that fails comes while the command runs
# ("tracing stopped") or once it has ended (the last writes: "the trace is incomplete")
# depends on how far the reader lags; the second run makes it the end for sure (its whole
# trace is written at the end: under the 1 MiB buffer, and faster than the 1 s flush).
for calls in 100000 5000; do
	(
		ulimit -f 200
		trap '' XFSZ
		"$cap" -q -l api $lib -o "$t/big.jsonl" -- "$fx/capture-loop" $calls >/dev/null 2>"$t/err"
		echo $? >"$t/rc"
	)
	[ "$(cat "$t/rc")" = 2 ] || fail "file too large ($calls calls): exit $(cat "$t/rc"): $(cat "$t/err")"
	grep -q "File too large: \(tracing stopped\|the trace is incomplete\)" "$t/err" &&
		grep -q "cut back to its last whole line" "$t/err" ||
		fail "file too large ($calls calls): message: $(cat "$t/err")"
	prefix "$t/big.jsonl"
done

# The reader of the pipe goes: 141 (as if killed by SIGPIPE), one line, the command run to its
# end; the reader got the header whole.
{
	timeout 120 "$cap" -q -l api $lib -- sh -c "'$fx/capture-loop' 100000
		until grep -q 'tracing stopped' '$t/err'; do sleep 0.05; done; echo done >&2" 2>"$t/err"
	echo $? >"$t/rc"
} | head -1 >"$t/first"
[ "$(cat "$t/rc")" = 141 ] || fail "closed pipe: exit $(cat "$t/rc"), not 141: $(cat "$t/err")"
grep -q "the trace's reader has gone (Broken pipe): tracing stopped" "$t/err" ||
	fail "closed pipe: message: $(cat "$t/err")"
grep -qx done "$t/err" || fail "closed pipe: the command did not run to its end"
[ "$(jq -r .name "$t/first")" = header ] || fail "closed pipe: the first line is no header"
exit 0
