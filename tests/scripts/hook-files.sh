#!/bin/sh
# cuthook's files (issue 12): no output file follows a symbolic link (-o, and a %p file planted
# before the process that owns it starts); a %p file left by an earlier run with the same pid
# is replaced, not appended to; files are 0644 under a umask of 0; a -o path of 4072-4095 bytes
# works and a longer one is refused clearly; %p leaves no file for a process that never called
# the driver.
. "$(dirname "$0")/lib/hook-setup.sh"
prog=$fx/cuprog
[ -x "$prog" ] || { echo "no $prog"; exit 1; }
api() { grep -c ',"layer":"api","name"' "$1"; }
n=$("$B/bin/cuthook" -o "$tmp/ref.jsonl" -- "$prog" link >/dev/null 2>&1; api "$tmp/ref.jsonl")
[ "$n" -gt 0 ] || bad "cuprog link: no calls traced"

# -o a symbolic link: refused, its target untouched.
echo victim >"$tmp/victim"
ln -s "$tmp/victim" "$tmp/link.jsonl"
"$B/bin/cuthook" -o "$tmp/link.jsonl" -- "$prog" link >/dev/null 2>"$tmp/err"
st=$?
[ $st -eq 2 ] && grep -q "symbolic link" "$tmp/err" && [ "$(wc -l <"$tmp/err")" -eq 1 ] ||
	bad "-o a symbolic link: exit $st, $(cat "$tmp/err")"
[ "$(cat "$tmp/victim")" = victim ] || bad "-o a symbolic link: its target was written"

# %p: a link planted under the name of the process's file (the shell's pid is the program's
# after exec), and a stale file of that pid from an earlier run.
mkdir "$tmp/p"
"$B/bin/cuthook" -o "$tmp/p/t.%p.jsonl" -- sh -c \
	'ln -s "$0" "${1%/*}/t.$$.jsonl"; exec "$2" link' "$tmp/victim" "$tmp/p/x" "$prog" >/dev/null 2>&1 ||
	bad "%p link: exit status $?"
[ "$(cat "$tmp/victim")" = victim ] || bad "%p: a planted link's target was written: $(head -c 200 "$tmp/victim")"
rm -rf "$tmp/p" && mkdir "$tmp/p"
"$B/bin/cuthook" -o "$tmp/p/t.%p.jsonl" -- sh -c \
	'f="${0%/*}/t.$$.jsonl"; echo "{\"stale\":1}" >"$f"; touch -d "1 hour ago" "$f"; exec "$1" link' \
	"$tmp/p/x" "$prog" >/dev/null 2>&1 || bad "%p stale: exit status $?"
f=$(ls "$tmp"/p/t.*.jsonl)
! grep -q stale "$f" || bad "%p: a stale file of the same pid was appended to"
[ "$(api "$f")" -eq "$n" ] && head -1 "$f" | grep -q '"name":"header"' || bad "%p stale: not the run's trace: $(head -c 200 "$f")"

# umask 0: 0644, the %p files and the sorted file included.
rm -rf "$tmp/p" && mkdir "$tmp/p"
(umask 0 && "$B/bin/cuthook" -o "$tmp/m.jsonl" -- "$prog" link && "$B/bin/cuthook" -o "$tmp/p/m.%p.jsonl" -- "$prog" link) >/dev/null 2>&1
for f in "$tmp/m.jsonl" "$tmp"/p/m.*.jsonl; do
	[ "$(stat -c %a "$f")" = 644 ] || bad "umask 0: $f is $(stat -c %a "$f")"
done

# Long paths: up to 4095 bytes the trace is there; past it a clear refusal.
d=$tmp
while [ ${#d} -lt 3900 ]; do d=$d/$(printf '%0100d' 0); done
mkdir -p "$d" || exit 1
for len in 4072 4090 4095; do
	f=$d/$(printf '%0*d' $((len - ${#d} - 7)) 0).jsonl
	[ ${#f} -eq $len ] || { bad "test: path of ${#f} bytes, not $len"; continue; }
	"$B/bin/cuthook" -o "$f" -- "$prog" link >/dev/null 2>"$tmp/err" || bad "$len-byte path: exit status $?: $(cut -c1-100 "$tmp/err")"
	[ "$(api "$f")" -eq "$n" ] || bad "$len-byte path: $(api "$f") calls in the trace, not $n"
done
f=$d/$(printf '%0*d' $((4100 - ${#d} - 7)) 0).jsonl
"$B/bin/cuthook" -o "$f" -- "$prog" link >/dev/null 2>"$tmp/err"
st=$?
[ $st -eq 2 ] && grep -q "too long" "$tmp/err" || bad "4100-byte path: exit $st, $(cut -c1-100 "$tmp/err")"
# With %p: refused when a pid of 7 digits (pid_max is 2^22) would not fit.
f=$d/$(printf '%0*d' $((4092 - ${#d} - 3)) 0).%p
"$B/bin/cuthook" -o "$f" -- "$prog" link >/dev/null 2>"$tmp/err"
st=$?
[ $st -eq 2 ] && grep -q "too long" "$tmp/err" || bad "4092-byte path with %p: exit $st, $(cut -c1-100 "$tmp/err")"

# %p: no file for a process that never called the driver (true), one for the command (the
# root, always) and one for cuprog.
rm -rf "$tmp/p" && mkdir "$tmp/p"
"$B/bin/cuthook" -o "$tmp/p/t.%p.jsonl" -- sh -c '/bin/true; "$0" link; true' "$prog" >/dev/null 2>&1 ||
	bad "%p: exit status $?"
[ "$(ls "$tmp"/p | wc -l)" -eq 2 ] || bad "%p: $(ls "$tmp"/p | wc -l) files, not 2 (the shell's and cuprog's): $(wc -c "$tmp"/p/*)"
for f in "$tmp"/p/*; do [ -s "$f" ] || bad "%p: $f is empty"; done
exit $fail
