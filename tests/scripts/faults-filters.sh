#!/bin/sh
# Output faults of every filter: a full disk (> /dev/full), a closed standard output, a file
# over the size limit (cutchrome -o) end with exit status 2 and one line naming the error; a
# closed pipe ends the filter at once, killed by SIGPIPE and silent, or, with SIGPIPE
# ignored, with status 2 and one line; the reader of the pipe got whole lines.
top=${CUT_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
B=${CUT_BUILD:-$top/build}
PATH=$B/bin:$PATH
command -v python3 >/dev/null || { echo "needs python3"; exit 77; }
[ -w /dev/full ] || { echo "no /dev/full"; exit 77; }
t=$(mktemp -d) || exit 2
trap 'rm -rf "$t"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

python3 "$top/tests/bench/gentrace.py" 1 5 >"$t/gen.jsonl"
cp "$t/gen.jsonl" "$t/gen2.jsonl"
strace=$top/tests/cases/cutioctl/strace/strace.txt

# Every filter and the ways it writes (cutchrome -m without -o warns: not here).
cat >"$t/cmds" <<EOF
cutstat $t/gen.jsonl
cutstat -j $t/gen.jsonl
cutstat -c $t/gen.jsonl
cutmerge $t/gen.jsonl
cutmerge -A $t/gen.jsonl $t/gen2.jsonl
cutioctl $t/gen.jsonl
cutioctl -c $t/gen.jsonl
cutioctl -j $t/gen.jsonl
cutioctl -s $strace
cutioctl -l
cutgaps $t/gen.jsonl
cutgaps -j $t/gen.jsonl
cutchrome $t/gen.jsonl
cutperfetto $t/gen.jsonl
cutplot -S $t/gen.jsonl
EOF

# errors FILE: the lines of FILE but the warnings a filter gives on good input.
errors() { grep -v 'left out 1 ioctls on files that are not NVIDIA devices\|calls were recorded in both' "$1"; }

# closed MODE CMD...: runs CMD with standard output a pipe whose reader is already gone and
# SIGPIPE at its default (dfl) or ignored (ign); prints the exit status (negative: signal).
cat >"$t/closed.py" <<'EOF'
import os, signal, subprocess, sys
mode, cmd = sys.argv[1], sys.argv[2:]
r, w = os.pipe()
os.close(r)
def pre():
    signal.signal(signal.SIGPIPE, signal.SIG_IGN if mode == "ign" else signal.SIG_DFL)
try:
    p = subprocess.run(cmd, stdout=w, stderr=open(os.environ["ERR"], "w"), preexec_fn=pre,
                       timeout=60)
    print(p.returncode)
except subprocess.TimeoutExpired:
    print("timeout")
EOF

while read -r cmd; do
	# A full disk.
	# shellcheck disable=SC2086
	$cmd >/dev/full 2>"$t/err"
	rc=$?
	errors "$t/err" >"$t/e"
	[ $rc -eq 2 ] || bad "$cmd > /dev/full: exit $rc, not 2"
	[ "$(wc -l <"$t/e")" -eq 1 ] && grep -q "No space left on device" "$t/e" ||
		bad "$cmd > /dev/full: not one line saying the disk is full: $(cat "$t/err")"
	# No standard output at all.
	# shellcheck disable=SC2086
	$cmd >&- 2>"$t/err"
	rc=$?
	errors "$t/err" >"$t/e"
	[ $rc -eq 2 ] && [ "$(wc -l <"$t/e")" -eq 1 ] || bad "$cmd >&-: exit $rc: $(cat "$t/err")"
	# A closed pipe: killed by SIGPIPE, nothing said.
	# shellcheck disable=SC2086
	rc=$(ERR=$t/err python3 "$t/closed.py" dfl $cmd)
	errors "$t/err" >"$t/e"
	[ "$rc" = -13 ] || bad "$cmd | (closed): $rc, not killed by SIGPIPE: $(cat "$t/err")"
	[ -s "$t/e" ] && bad "$cmd | (closed): said: $(cat "$t/e")"
	# The same with SIGPIPE ignored (as some launchers leave it): 2 and one line.
	# shellcheck disable=SC2086
	rc=$(ERR=$t/err python3 "$t/closed.py" ign $cmd)
	errors "$t/err" >"$t/e"
	[ "$rc" = 2 ] || bad "$cmd | (closed, SIGPIPE ignored): exit $rc, not 2"
	[ "$(wc -l <"$t/e")" -eq 1 ] && grep -q "Broken pipe" "$t/e" ||
		bad "$cmd | (closed, SIGPIPE ignored): not one line: $(cat "$t/err")"
done <"$t/cmds"

# A pipe its reader closes after the first line: that line is whole, nothing is said.
for cmd in "cutmerge $t/gen.jsonl" "cutioctl $t/gen.jsonl" "cutchrome $t/gen.jsonl" \
	"cutplot -S $t/gen.jsonl" "cutstat $t/gen.jsonl"; do
	# shellcheck disable=SC2086
	first=$($cmd 2>"$t/err" | head -1)
	[ -n "$first" ] || bad "$cmd | head -1: no first line"
	case $cmd in
	cutmerge* | cutioctl*)
		printf '%s\n' "$first" | python3 -c 'import json,sys; json.loads(sys.stdin.read())' ||
			bad "$cmd | head -1: the first line is not whole: $first" ;;
	esac
	[ -s "$t/err" ] && bad "$cmd | head -1: said: $(cat "$t/err")"
done

# cutchrome -o: a part file over the size limit (a full disk for that file) ends it with 2 and
# one line naming the file.
(
	ulimit -f 64
	trap '' XFSZ
	cutchrome -m 2000 -o "$t/part" "$t/gen.jsonl" >"$t/names" 2>"$t/err"
	echo $? >"$t/rc"
)
[ "$(cat "$t/rc")" = 2 ] || bad "cutchrome -o, file too large: exit $(cat "$t/rc")"
[ "$(wc -l <"$t/err")" -eq 1 ] && grep -q "$t/part-001.json: .*File too large" "$t/err" ||
	bad "cutchrome -o, file too large: $(cat "$t/err")"
cutchrome -o "$t/no/such/dir/p" "$t/gen.jsonl" >/dev/null 2>"$t/err"
rc=$?
[ $rc -eq 2 ] && [ "$(wc -l <"$t/err")" -eq 1 ] || bad "cutchrome -o into no directory: exit $rc: $(cat "$t/err")"
# cutperfetto -o: a full disk and a missing directory, one line naming the file.
for o in /dev/full "$t/no/such/dir/t.pftrace"; do
	cutperfetto -o "$o" "$t/gen.jsonl" >/dev/null 2>"$t/err"
	rc=$?
	[ $rc -eq 2 ] && [ "$(wc -l <"$t/err")" -eq 1 ] && grep -q "$o" "$t/err" ||
		bad "cutperfetto -o $o: exit $rc: $(cat "$t/err")"
done
exit $fail
