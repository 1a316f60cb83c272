#!/bin/sh
# cutcapture's arguments and output file (issue 12): every argument is checked before -o is
# truncated (a mistyped -p leaves the last trace as it was); -p of a zombie, of cutcapture's own
# ancestor or of itself is refused at once; -o never follows a symbolic link; the trace is 0644
# under a umask of 0. Needs root with BPF for the last part; exits 77 without root.
. "$(dirname "$0")/lib/capture-setup.sh"
z=
cleanup() { [ -n "$z" ] && kill -KILL "$z" 2>/dev/null; }

echo '{"previous":"trace"}' >"$t/old.jsonl"
cp "$t/old.jsonl" "$t/keep"
# A pid that is not there.
timeout 20 "$cap" -q -o "$t/old.jsonl" -p 4194303 >/dev/null 2>"$t/err"
rc=$?
[ $rc = 2 ] && grep -q "no such process" "$t/err" || fail "-p of no process: exit $rc, $(cat "$t/err")"
cmp -s "$t/old.jsonl" "$t/keep" || fail "-p of no process: -o was truncated"
# Its own ancestor (this shell), and itself.
timeout 20 "$cap" -q -o "$t/old.jsonl" -p $$ >/dev/null 2>"$t/err"
rc=$?
[ $rc = 2 ] && grep -q "ancestor of cutcapture" "$t/err" || fail "-p of an ancestor: exit $rc (124: it never ended), $(cat "$t/err")"
cmp -s "$t/old.jsonl" "$t/keep" || fail "-p of an ancestor: -o was truncated"
# A zombie: a child its parent (sleep, after exec) never reaps.
sh -c 'true & exec sleep 300' &
z=$!
until_ok 120 pgrep -P "$z" >/dev/null || fail "test: no child made"
zp=$(pgrep -P "$z")
zombie() { [ "$(awk '{print $3}' "/proc/$zp/stat" 2>/dev/null)" = Z ]; }
until_ok 120 zombie || fail "test: no zombie made"
timeout 20 "$cap" -q -o "$t/old.jsonl" -p "$zp" >/dev/null 2>"$t/err"
rc=$?
[ $rc = 2 ] && grep -q "zombie" "$t/err" || fail "-p of a zombie: exit $rc (124: it never ended), $(cat "$t/err")"
cmp -s "$t/old.jsonl" "$t/keep" || fail "-p of a zombie: -o was truncated"
kill -KILL "$z"
z=

need_bpf
# -o a symbolic link: refused, its target untouched.
ln -s "$t/keep" "$t/link.jsonl"
"$cap" -q -l sched -o "$t/link.jsonl" -- true >/dev/null 2>"$t/err"
rc=$?
[ $rc = 2 ] && grep -q "symbolic link" "$t/err" || fail "-o a symbolic link: exit $rc, $(cat "$t/err")"
cmp -s "$t/old.jsonl" "$t/keep" || fail "-o a symbolic link: its target was written"
# umask 0: 0644.
(umask 0 && "$cap" -q -l sched -o "$t/new.jsonl" -- true) || fail "umask 0: exit $?"
[ "$(stat -c %a "$t/new.jsonl")" = 644 ] || fail "umask 0: the trace is $(stat -c %a "$t/new.jsonl")"
exit 0
