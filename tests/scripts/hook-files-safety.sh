#!/bin/sh
# cuthook's files are its own (issue 23): -o names a file of another user's: refused, the file
# untouched; a file of the user's is made afresh, 0644 whatever mode it had; the sorted file
# replaces it through share/lib/outfile (0644, no temporary left); a %p file planted before
# its process starts (another user's, mode 0666; a hard link to another file) is removed and
# made afresh, never written or truncated through, and where it cannot be removed (a sticky
# directory, cuthook run by another user) it is not written and cuthook says the trace is
# incomplete. The parts that need another user run as root only.
. "$(dirname "$0")/lib/hook-setup.sh"
prog=$fx/cuprog
api() { grep -c ',"layer":"api","name"' "$1"; }
n=$("$B/bin/cuthook" -o "$tmp/ref.jsonl" -- "$prog" link >/dev/null 2>&1; api "$tmp/ref.jsonl")
[ "$n" -gt 0 ] || bad "cuprog link: no calls traced"
cuthook=$(cd "$B/bin" && pwd)/cuthook

# A file of the user's, mode 0666: made afresh and sorted, 0644, nothing else left beside it.
mkdir "$tmp/own"
echo old >"$tmp/own/t.jsonl"
chmod 666 "$tmp/own/t.jsonl"
ln "$tmp/own/t.jsonl" "$tmp/own/other-name"
"$cuthook" -o "$tmp/own/t.jsonl" -- "$prog" link >/dev/null 2>"$tmp/err" || bad "own file: exit $?: $(cat "$tmp/err")"
[ "$(stat -c %a "$tmp/own/t.jsonl")" = 644 ] || bad "own file 0666: now $(stat -c %a "$tmp/own/t.jsonl")"
[ "$(cat "$tmp/own/other-name")" = old ] || bad "own file: its other name was written: $(head -c 100 "$tmp/own/other-name")"
[ "$(api "$tmp/own/t.jsonl")" -eq "$n" ] && head -1 "$tmp/own/t.jsonl" | grep -q '"sorted":true' ||
	bad "own file: not the sorted trace: $(head -c 200 "$tmp/own/t.jsonl")"
[ "$(ls -A "$tmp/own" | wc -l)" -eq 2 ] || bad "own file: left beside it: $(ls -A "$tmp/own")"

[ "$(id -u)" -eq 0 ] || { echo "the rest needs root (files of another user)"; exit $fail; }
other=65534 # nobody

# -o a file of another user's: refused with a message, untouched.
echo theirs >"$tmp/theirs.jsonl"
chown $other "$tmp/theirs.jsonl"
"$cuthook" -o "$tmp/theirs.jsonl" -- "$prog" link >/dev/null 2>"$tmp/err"
st=$?
[ $st -eq 2 ] && grep -q "owned by another user" "$tmp/err" && [ "$(wc -l <"$tmp/err")" -eq 1 ] ||
	bad "-o another user's file: exit $st, $(cat "$tmp/err")"
[ "$(cat "$tmp/theirs.jsonl")" = theirs ] || bad "-o another user's file: it was written"

# %p: a file of another user's, 0666, planted under the name of the process's file (the
# shell's pid is the program's after exec); and a hard link to a file of the user's.
mkdir "$tmp/p"
"$cuthook" -o "$tmp/p/t.%p.jsonl" -- sh -c \
	'f="$1/t.$$.jsonl"; echo planted >"$f"; chown '$other' "$f"; chmod 666 "$f"; exec "$0" link' \
	"$prog" "$tmp/p" >/dev/null 2>"$tmp/err" || bad "%p planted: exit $?: $(cat "$tmp/err")"
f=$(ls "$tmp"/p/t.*.jsonl)
[ "$(stat -c '%u %a' "$f")" = "$(id -u) 644" ] || bad "%p planted: the file is $(stat -c '%U %a' "$f")"
! grep -q planted "$f" && [ "$(api "$f")" -eq "$n" ] || bad "%p planted: not the run's trace: $(head -c 200 "$f")"
rm -rf "$tmp/p" && mkdir "$tmp/p"
echo victim >"$tmp/victim"
"$cuthook" -o "$tmp/p/t.%p.jsonl" -- sh -c 'ln "$2" "$1/t.$$.jsonl"; exec "$0" link' \
	"$prog" "$tmp/p" "$tmp/victim" >/dev/null 2>"$tmp/err" || bad "%p hard link: exit $?: $(cat "$tmp/err")"
[ "$(cat "$tmp/victim")" = victim ] || bad "%p hard link: the file it names was written: $(head -c 100 "$tmp/victim")"

# Run by another user in a sticky directory, where root's planted file cannot be removed: not
# written, and said.
command -v setpriv >/dev/null || { echo "no setpriv: the last part skipped"; exit $fail; }
chmod 755 "$tmp"
mkdir "$tmp/sticky" && chmod 1777 "$tmp/sticky"
if setpriv --reuid=$other --regid=$other --clear-groups test -x "$cuthook" -a -r "$prog"; then
	setpriv --reuid=$other --regid=$other --clear-groups "$cuthook" -o "$tmp/sticky/t.%p.jsonl" -- \
		sh -c 'echo $$ >"$1/pid"; while [ ! -e "$1/go" ]; do sleep 0.01; done; exec "$0" link' \
		"$prog" "$tmp/sticky" >"$tmp/out" 2>"$tmp/err" &
	job=$!
	i=0
	while [ ! -s "$tmp/sticky/pid" ] && [ $i -lt 6000 ]; do sleep 0.01; i=$((i + 1)); done
	f=$tmp/sticky/t.$(cat "$tmp/sticky/pid").jsonl
	echo planted >"$f"
	chmod 666 "$f"
	touch "$tmp/sticky/go"
	wait $job
	st=$?
	[ "$(cat "$f")" = planted ] || bad "sticky: root's planted file was written: $(head -c 100 "$f")"
	[ $st -eq 2 ] && grep -q "the trace is incomplete" "$tmp/err" && grep -q "cuprog: ok" "$tmp/out" ||
		bad "sticky: exit $st, $(cat "$tmp/out" "$tmp/err")"
else
	echo "user $other cannot run the build: the last part skipped"
fi
exit $fail
