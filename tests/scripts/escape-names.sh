#!/bin/sh
# A file name is input too (issue 23): one holding an escape sequence and a newline must
# reach no filter's messages raw (a name could clear the screen and forge a report line).
# Each filter reads such a file with a bad line, such a file that does not exist, and one
# whose compressed data is cut short; cutmerge and cutioctl -m two of them.
B=${CUT_BUILD:-build}
PATH=$B/bin:$PATH
command -v gzip >/dev/null || { echo "needs gzip"; exit 77; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL $*"; fail=1; }
esc=$(printf '\033')
name=$(printf 'x\033[2J\nverdict: all good\033]0;t\007.jsonl')
bad="$tmp/bad$name"
{ cat samples/demo.jsonl; echo 'not json'; } >"$bad"
gzip -c samples/demo.jsonl | head -c 300 >"$tmp/cut$name"
# tool args...: its messages on the three files, checked
check() {
	"$@" "$bad" >/dev/null 2>"$tmp/err1"
	"$@" "$tmp/missing$name" >/dev/null 2>"$tmp/err2"
	"$@" "$tmp/cut$name" >/dev/null 2>"$tmp/err3"
	for e in 1 2 3; do
		[ -s "$tmp/err$e" ] || bad "$*: nothing said ($e)"
		! grep -q "$esc" "$tmp/err$e" || bad "$* ($e): a raw escape character"
		! grep -q '^verdict' "$tmp/err$e" || bad "$* ($e): a forged line: $(cat "$tmp/err$e")"
		grep -q 'x\\x1b\[2J\\nverdict' "$tmp/err$e" || bad "$* ($e): not escaped: $(cat "$tmp/err$e")"
	done
}
check cutstat
check cutgaps
check cutioctl
check cutioctl -m
check cutioctl -s
check cutmerge
check cutchrome
check cutperfetto
check cutplot -T dumb
# two inputs: the duplicates' line names both
cp tests/cases/cutmerge/dedup/hook.jsonl "$tmp/h$name"
cp tests/cases/cutmerge/dedup/cap.jsonl "$tmp/c$name"
cutmerge "$tmp/h$name" "$tmp/c$name" >/dev/null 2>"$tmp/err" || bad "cutmerge two: exit $?"
grep -q 'recorded in both' "$tmp/err" || bad "cutmerge two: no duplicates line: $(cat "$tmp/err")"
! grep -q "$esc" "$tmp/err" || bad "cutmerge two: a raw escape character"
! grep -q '^verdict' "$tmp/err" || bad "cutmerge two: a forged line"
exit $fail
