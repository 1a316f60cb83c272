#!/bin/sh
# cuthook never changes the program (issue 12), with small programs built here against the
# stand-in libcuda: the signal dispositions a program sees, before and after its first driver
# call, are those of a plain run, and SIGINT then kills it as it would (its calls still in the
# trace); Python installs its own SIGINT handler and Ctrl-C gives KeyboardInterrupt and runs
# `finally`; exit() or _exit() from a signal handler that interrupts calls never hangs, and
# every call the program made is in the trace or counted lost; calls made before execve() are
# written, the new image's after them.
. "$(dirname "$0")/lib/hook-setup.sh"
inc=$(pwd)/tests/fixtures
$CC -std=gnu11 -O1 -Wall -Werror -I"$inc" -o "$tmp/sig" -x c - -L"$fx" -lcuda -Wl,-rpath,"$fx" <<'EOF' || exit 1
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>
#include "fakecuda.h"
static void dispositions(const char *when) {
	printf("%s:", when);
	for (int s = 1; s < 32; s++) {
		struct sigaction sa;
		if (sigaction(s, NULL, &sa) == 0)
			printf(" %d=%s/%x", s, sa.sa_handler == SIG_DFL ? "dfl" : sa.sa_handler == SIG_IGN ? "ign" : "handler",
			       (unsigned)sa.sa_flags);
	}
	void (*old)(int) = signal(SIGTERM, SIG_DFL);
	printf(" signal(SIGTERM)=%s\n", old == SIG_DFL ? "dfl" : old == SIG_IGN ? "ign" : "handler");
	fflush(stdout);
}
static volatile long made, limit;
static int use_exit;
static void on_alarm(int sig) {
	CUcontext c;
	(void)sig;
	cuCtxGetCurrent(&c); /* a call from a signal handler */
	__atomic_add_fetch(&made, 1, __ATOMIC_RELAXED);
	if (made >= limit) {
		/* async-signal-safe: the interrupted code may be in malloc */
		char b[32], *p = b + sizeof(b);
		long v = made;
		*--p = '\n';
		do *--p = (char)('0' + v % 10); while ((v /= 10));
		if (write(1, "made ", 5) != 5 || write(1, p, (size_t)(b + sizeof(b) - p)) < 0) _exit(9);
		if (use_exit) exit(5);
		_exit(6);
	}
}
int main(int argc, char **argv) {
	CUcontext c;
	if (strcmp(argv[1], "disp") == 0) {
		/* Started in the background (nohup, a batch runner), SIGINT comes ignored and
		 * raise() would not end the program: what is compared is that cuthook changes no
		 * disposition, whatever they were at the start. */
		if (signal(SIGINT, SIG_DFL) == SIG_ERR)
			return 8;
		dispositions("start");
		cuInit(0);
		cuCtxGetCurrent(&c);
		dispositions("after");
		raise(SIGINT);
		puts("not reached");
	} else if (strcmp(argv[1], "exit") == 0 || strcmp(argv[1], "_exit") == 0) {
		/* A timer's handler makes calls, then ends the program from inside a call. */
		use_exit = strcmp(argv[1], "exit") == 0;
		limit = atol(argv[2]);
		signal(SIGALRM, on_alarm);
		struct itimerval it = {{0, 50}, {0, 50}};
		setitimer(ITIMER_REAL, &it, NULL);
		cuInit(0);
		__atomic_add_fetch(&made, 1, __ATOMIC_RELAXED);
		for (;;) {
			cuCtxGetCurrent(&c);
			__atomic_add_fetch(&made, 1, __ATOMIC_RELAXED);
		}
	} else if (strcmp(argv[1], "exec") == 0) {
		cuInit(0);
		cuCtxGetCurrent(&c);
		cuCtxGetCurrent(&c);
		execl(argv[0], argv[0], "after", (char *)NULL);
		return 1;
	} else if (strcmp(argv[1], "after") == 0) {
		cuCtxGetCurrent(&c);
	}
	return 0;
}
EOF
hook() { out=$1; shift; "$B/bin/cuthook" -o "$out" -- "$@"; }
api() { grep -c ',"layer":"api","name"' "$1"; }
trailer() { tail -1 "$1" | grep '"name":"trailer"' | sed -n "s/.*\"$2\":\([0-9]*\).*/\1/p"; }

# Dispositions, before any call and after the first ones, then SIGINT.
"$tmp/sig" disp >"$tmp/plain.out" 2>/dev/null
st=$?
hook "$tmp/disp.jsonl" "$tmp/sig" disp >"$tmp/hook.out" 2>/dev/null
hst=$?
[ $st -eq 130 ] && [ $hst -eq 130 ] || bad "disp: exit status $hst under cuthook, $st plain (130: SIGINT)"
cmp -s "$tmp/plain.out" "$tmp/hook.out" ||
	bad "disp: the program sees other dispositions: $(diff "$tmp/plain.out" "$tmp/hook.out" | tail -2)"
[ "$(api "$tmp/disp.jsonl")" -eq 2 ] || bad "disp: the calls before SIGINT are not in the trace"

# Python: its SIGINT handler is installed, Ctrl-C raises KeyboardInterrupt, finally runs.
if command -v python3 >/dev/null 2>&1; then
	cat >"$tmp/int.py" <<EOF
import ctypes, os, signal, sys, time
cuda = ctypes.CDLL("$fx/libcuda.so.1")
cuda.cuInit(0)
print("handler", signal.getsignal(signal.SIGINT) is signal.default_int_handler)
try:
    try:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)
    finally:
        print("finally")
except KeyboardInterrupt:
    print("KeyboardInterrupt")
cuda.cuInit(0)
sys.exit(3)
EOF
	python3 "$tmp/int.py" >"$tmp/plain.out" 2>&1
	st=$?
	hook "$tmp/py.jsonl" python3 "$tmp/int.py" >"$tmp/hook.out" 2>&1
	hst=$?
	[ $st -eq 3 ] && [ $hst -eq 3 ] || bad "python: exit status $hst under cuthook, $st plain (3)"
	cmp -s "$tmp/plain.out" "$tmp/hook.out" || bad "python: output differs: $(tr '\n' ' ' <"$tmp/hook.out")"
	[ "$(api "$tmp/py.jsonl")" -eq 2 ] && [ "$(trailer "$tmp/py.jsonl" events)" = 2 ] ||
		bad "python: not both calls in the trace, with its trailer"
else
	echo "no python3: the Python case is not run"
fi

# exit() and _exit() from a signal handler that interrupts calls: never a hang; every call made
# is an event or counted lost (the one interrupted for good may be either).
i=0
while [ $i -lt 12 ]; do
	for how in exit _exit; do
		want=6
		[ $how = exit ] && want=5
		timeout 20 "$B/bin/cuthook" -o "$tmp/x.jsonl" -- "$tmp/sig" $how 200 >"$tmp/x.out" 2>&1
		st=$?
		[ $st -eq $want ] || { bad "$how from a signal handler: exit status $st (124: it hung), not $want"; break 2; }
		made=$(sed -n 's/^made //p' "$tmp/x.out")
		ev=$(trailer "$tmp/x.jsonl" events)
		lost=$(trailer "$tmp/x.jsonl" lost)
		[ -n "$ev" ] && [ $((ev + lost)) -ge "$made" ] && [ $((ev + lost)) -le $((made + 1)) ] ||
			{ bad "$how from a signal handler: $made calls made, trailer: $(tail -1 "$tmp/x.jsonl" | cut -c1-160)"; break 2; }
		[ "$(api "$tmp/x.jsonl")" -eq "$ev" ] || bad "$how: $(api "$tmp/x.jsonl") events written, the trailer says $ev"
	done
	i=$((i + 1))
done

# execve: the calls before it are written (with their trailer), then the new image's.
for out in "$tmp/exec.jsonl" "$tmp/exec.%p.jsonl"; do
	rm -f "$tmp"/exec.*
	hook "$out" "$tmp/sig" exec || bad "exec: exit status $?"
	f=$(ls "$tmp"/exec.*jsonl)
	[ "$(api "$f")" -eq 4 ] || bad "exec ($out): $(api "$f") calls in the trace, not 4"
	[ "$(grep -c '"name":"header"' "$f")" -eq 2 ] && [ "$(grep -c '"name":"trailer"' "$f")" -eq 2 ] ||
		bad "exec ($out): not a header and a trailer for each image"
	CUT_STRICT=1 "$B/bin/cutstat" "$f" >/dev/null 2>"$tmp/err" || bad "exec: $(head -2 "$tmp/err")"
done
exit $fail
