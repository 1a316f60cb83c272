#!/bin/sh
# SIGINT and SIGQUIT sent to cuthook's pid by another process (kill -INT, Python's
# Popen.send_signal, a notebook's interrupt) reach the command, as SIGTERM and SIGHUP do
# (issue 23): a program that waits for the signal gets it and ends as it chooses, and cuthook
# with it. (The terminal's, which reach the whole foreground group, are left to the command.)
. "$(dirname "$0")/lib/hook-setup.sh"
command -v env >/dev/null && env --default-signal=INT true 2>/dev/null ||
	{ echo "needs env --default-signal (coreutils 8.31)"; exit 77; }
inc=$(pwd)/tests/fixtures
$CC -std=gnu11 -O1 -Wall -Werror -I"$inc" -o "$tmp/waiter" -x c - -L"$fx" -lcuda -Wl,-rpath,"$fx" <<'EOF2' || exit 1
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
#include "fakecuda.h"
static volatile sig_atomic_t got;
static void on(int sig) { got = sig; }
int main(int argc, char **argv) {
	CUcontext c;
	signal(SIGINT, on);
	signal(SIGQUIT, on);
	cuCtxGetCurrent(&c);
	FILE *f = fopen(argv[1], "w"); /* ready: its handlers are in place */
	if (argc < 2 || !f) return 1;
	fclose(f);
	for (int i = 0; i < 120000 && !got; i++) /* two minutes at most */
		usleep(1000);
	cuCtxGetCurrent(&c);
	printf("got %d\n", got);
	return got ? 3 : 4;
}
EOF2
for sig in INT:2 QUIT:3; do
	num=${sig#*:} sig=${sig%:*}
	rm -f "$tmp/ready"
	# A shell's background job ignores SIGINT and SIGQUIT: given back their default here.
	env --default-signal=INT,QUIT "$B/bin/cuthook" -o "$tmp/t.jsonl" -- "$tmp/waiter" "$tmp/ready" >"$tmp/out" 2>"$tmp/err" &
	pid=$!
	i=0
	while [ ! -e "$tmp/ready" ] && [ $i -lt 6000 ]; do sleep 0.01; i=$((i + 1)); done
	kill -$sig $pid
	wait $pid
	st=$?
	[ $st -eq 3 ] && [ "$(cat "$tmp/out")" = "got $num" ] || bad "SIG$sig to cuthook: exit $st, $(cat "$tmp/out" "$tmp/err")"
	[ "$(grep -c '"name":"cuCtxGetCurrent","cat"' "$tmp/t.jsonl")" -eq 2 ] || bad "SIG$sig: not both calls in the trace: $(cat "$tmp/t.jsonl")"
done
exit $fail
