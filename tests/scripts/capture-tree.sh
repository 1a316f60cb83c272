#!/bin/sh
# cutcapture, processes: a forked child is followed, -p attaches to a running process (and
# finds its libcuda in /proc/PID/maps), the exit status is the command's, a command that
# cannot run gives 127, and with the trace on standard output the command's output goes to
# standard error. Needs root with BPF; exits 77 when that is missing.
. "$(dirname "$0")/lib/capture-setup.sh"
bg= c=
cleanup() { [ -n "$bg" ] && kill "$bg" 2>/dev/null; [ -n "$c" ] && kill "$c" 2>/dev/null; }
need_bpf
has() { jq -e -s "any(.[]; $2)" "$1" >/dev/null; }

# fork: the sequence once in each of two processes, the child's process record names its
# parent.
"$cap" -q --libcuda "$fx/libcuda.so.1" -o "$t/fork.jsonl" -- "$fx/cuprog" fork >/dev/null 2>&1 ||
	fail "fork: exit $?"
valid "$t/fork.jsonl"
[ "$(jq -r 'select(.layer=="api") | .pid' "$t/fork.jsonl" | sort | uniq -c | awk '{print $1}' | tr '\n' ' ')" = "18 18 " ] ||
	fail "fork: not 18 calls in each of two processes"
parent=$(jq -r 'select(.name=="header") | .args.pid' "$t/fork.jsonl")
child=$(jq -r "select(.layer==\"api\" and .pid != $parent) | .pid" "$t/fork.jsonl" | head -1)
has "$t/fork.jsonl" ".name == \"process\" and .pid == $child and .args.ppid == $parent" ||
	fail "fork: no process record of the child $child with ppid $parent"
has "$t/fork.jsonl" ".name == \"process\" and .pid == $parent and
	.args.cmdline == \"$fx/cuprog fork\"" || fail "fork: no process record of the command"
[ "$(jq -r 'select(.name=="symbol") | .pid' "$t/fork.jsonl" | sort -u | wc -l)" = 2 ] ||
	fail "fork: symbol records not in both processes"

# -p: cuprog sleeps in cuStreamSynchronize until the capture has attached (the stand-in says
# when it sleeps, and ends the sleep when told); the capture sees the two calls after it (the
# one in flight is not recorded) and ends when cuprog does.
FAKECUDA_SYNC_FILE=$t/sync FAKECUDA_SYNC_UNTIL=$t/go "$fx/cuprog" link 120000000 >/dev/null &
bg=$!
until_ok 120 test -s "$t/sync" || fail "-p: cuprog never reached cuStreamSynchronize"
"$cap" -q -l api -o "$t/pid.jsonl" -p "$bg" 2>"$t/err" &
c=$!
until_ok 120 has_header "$t/pid.jsonl" || fail "-p: never attached: $(cat "$t/err")"
: >"$t/go"
wait "$c" || fail "-p: exit $?: $(cat "$t/err")"
c=
wait "$bg"
bg=
valid "$t/pid.jsonl"
[ "$(jq -r 'select(.layer=="api") | .name' "$t/pid.jsonl" | tr '\n' ' ')" = "cuMemcpyDtoH_v2 cuMemFree_v2 " ] ||
	fail "-p: calls: $(jq -r 'select(.layer=="api") | .name' "$t/pid.jsonl" | tr '\n' ' ')"
has "$t/pid.jsonl" ".name == \"header\" and .args.libcuda == \"$(readlink -f "$fx/libcuda.so.1")\"" ||
	fail "-p: libcuda not found in the process's maps"
has "$t/pid.jsonl" '.name == "process" and (.args.cmdline | endswith("cuprog link 120000000"))' ||
	fail "-p: no process record"

# The exit status is the command's; 128 + the signal that killed it; 127 when it cannot run.
"$cap" -q -l sched -o "$t/st.jsonl" -- sh -c 'exit 3' 2>/dev/null
[ $? = 3 ] || fail "exit status 3 not passed on"
has "$t/st.jsonl" '.name == "trailer" and .args.status == 3' || fail "trailer status 3"
"$cap" -q -l sched -o /dev/null -- sh -c 'kill -KILL $$' 2>/dev/null
[ $? = 137 ] || fail "death by SIGKILL not 137"
"$cap" -q -l sched -o /dev/null -- "$t/no such command" 2>"$t/err"
[ $? = 127 ] || fail "a command that cannot run: not 127"
grep -q "no such command: No such file or directory" "$t/err" || fail "no message for exec: $(cat "$t/err")"

# Trace on standard output: the command's standard output goes to standard error.
"$cap" -q -l api --libcuda "$fx/libcuda.so.1" -- "$fx/cuprog" link >"$t/so.jsonl" 2>"$t/err" ||
	fail "stdout: exit $?"
grep -qx "cuprog: ok" "$t/err" || fail "the command's output is not on standard error"
valid "$t/so.jsonl"
exit 0
