#!/bin/sh
# What cuthook's trace can go to, and what it says when it cannot (issue 23). The program runs
# as without cuthook in every case (its output and status), and cuthook exits 2 saying the
# trace is incomplete, as cutcapture does, when it could not be written whole: -o /dev/full; a
# file size limit (ulimit -f: the library's writes must not kill the program with SIGXFSZ);
# a FIFO whose reader goes away (SIGPIPE). A FIFO is written as a stream, never waited for
# past its reader, and not sorted (said); %p in a directory name is refused before the
# program runs; two %p are one pid, and both files sorted; a static program, which ignores
# LD_PRELOAD, writes nothing: said, exit 2.
. "$(dirname "$0")/lib/hook-setup.sh"
prog=$fx/cuprog
loop=$fx/capture-loop
[ -x "$loop" ] || { echo "no $loop"; exit 1; }
# incomplete NAME STATUS: cuthook exited 2 saying the trace is incomplete, the program ran
# to its end (its line in out).
incomplete() {
	[ "$2" -eq 2 ] && grep -q "^cuthook: writing the trace to .*: the trace is incomplete" "$tmp/err" ||
		bad "$1: exit $2, $(cat "$tmp/err")"
	grep -q "cuprog: ok\|cuCtxGetCurrent" "$tmp/out" || bad "$1: the program did not run to its end: $(cat "$tmp/out" "$tmp/err")"
}

"$B/bin/cuthook" -o /dev/full -- "$prog" link >"$tmp/out" 2>"$tmp/err"
incomplete "-o /dev/full" $?

# ulimit -f counts 512-byte blocks in sh: 64 KiB, far less than 20000 calls write.
(ulimit -f 128 && exec "$B/bin/cuthook" -o "$tmp/limit.jsonl" -- "$loop" 20000) >"$tmp/out" 2>"$tmp/err"
st=$?
incomplete "ulimit -f" $st
grep -q "File too large" "$tmp/err" || bad "ulimit -f: not said: $(cat "$tmp/err")"

# A FIFO: written as it comes, read whole by its reader, the program never waiting on it past
# its end; cuthook says it is not sorted.
mkfifo "$tmp/fifo"
cat "$tmp/fifo" >"$tmp/fifo.out" &
reader=$!
timeout 120 "$B/bin/cuthook" -o "$tmp/fifo" -- "$prog" link >"$tmp/out" 2>"$tmp/err"
st=$?
wait $reader
[ $st -eq 0 ] && grep -q "FIFO.*not sorted" "$tmp/err" || bad "FIFO: exit $st, $(cat "$tmp/err")"
head -1 "$tmp/fifo.out" | grep -q '"name":"header"' && tail -1 "$tmp/fifo.out" | grep -q '"name":"trailer"' ||
	bad "FIFO: the reader did not get a whole trace: $(head -c 200 "$tmp/fifo.out")"
# Its reader goes away after a line: the program runs on (no SIGPIPE), and it is said.
head -c 1 "$tmp/fifo" >/dev/null &
reader=$!
timeout 120 "$B/bin/cuthook" -o "$tmp/fifo" -- "$loop" 20000 >"$tmp/out" 2>"$tmp/err"
st=$?
wait $reader
incomplete "FIFO, its reader gone" $st

# %p in a directory name: refused, nothing run.
"$B/bin/cuthook" -o "$tmp/run%p/t.jsonl" -- sh -c 'echo ran' >"$tmp/out" 2>"$tmp/err"
st=$?
[ $st -eq 2 ] && [ ! -s "$tmp/out" ] && grep -q "directory" "$tmp/err" || bad "%p in a directory: exit $st, $(cat "$tmp/out" "$tmp/err")"
# Two %p: the same pid in both, every file sorted.
mkdir "$tmp/p"
"$B/bin/cuthook" -o "$tmp/p/t.%p.x%p.jsonl" -- sh -c '"$0" link; "$0" link' "$prog" >/dev/null 2>"$tmp/err" ||
	bad "two %p: exit $?: $(cat "$tmp/err")"
[ "$(ls "$tmp/p" | wc -l)" -eq 3 ] || bad "two %p: $(ls "$tmp/p" | tr '\n' ' ')"
for f in "$tmp"/p/*; do
	p=${f##*/t.}
	p=${p%%.*}
	[ "${f##*/}" = "t.$p.x$p.jsonl" ] || bad "two %p: $f"
	head -1 "$f" | grep -q '"sorted":true' || bad "two %p: $f not sorted"
done

# A static program ignores LD_PRELOAD: nothing written, and said.
if printf 'int main(void) { return 0; }\n' | $CC -static -x c - -o "$tmp/static" 2>/dev/null; then
	"$B/bin/cuthook" -o "$tmp/static.jsonl" -- "$tmp/static" 2>"$tmp/err"
	st=$?
	[ $st -eq 2 ] && grep -q "nothing written.*static" "$tmp/err" || bad "static program: exit $st, $(cat "$tmp/err")"
else
	echo "no static linking here: that part skipped"
fi
exit $fail
