#!/bin/sh
# A cutcapture killed (SIGKILL: no cleanup of its own) leaves nothing writing (issue 23): the
# libcuthook in its command notices that cutcapture is gone, stops writing into cutcapture's
# directory, and removes its files and the directory; the command runs on, unchanged. One
# that closes the library's descriptors is not taken for cutcapture gone. Needs root with BPF.
. "$(dirname "$0")/lib/capture-setup.sh"
need_bpf
[ -e "$B/lib/libcuthook.so" ] || fail "build libcuthook.so first"
CC=${CC:-cc}
$CC -std=gnu11 -O1 -Wall -Werror -I"$top/tests/fixtures" -o "$t/busy" -x c - -L"$fx" -lcuda \
	-Wl,-rpath,"$fx" <<'EOF2' 2>"$t/err" || fail "cannot build the program: $(cat "$t/err")"
#include <stdio.h>
#include <unistd.h>
#include "fakecuda.h"
/* Calls the driver, ten calls a millisecond, for ten minutes at most. */
int main(void) {
	CUcontext c;
	for (int i = 0; i < 600000; i++) {
		for (int k = 0; k < 10; k++)
			cuCtxGetCurrent(&c);
		usleep(1000);
	}
	puts("done");
	return 0;
}
EOF2
mkdir "$t/tmp"
cleanup() { [ -n "$cmd" ] && kill "$cmd" 2>/dev/null; }
TMPDIR=$t/tmp $cap -q -l api,gpu --hook-api --libcuda "$fx/libcuda.so.1" -o "$t/t.jsonl" -- "$t/busy" \
	>"$t/out" 2>"$t/err" &
capture=$!
# The library's file, once it has written: its name gives the command's pid.
i=0
while [ -z "$(find "$t/tmp" -name 'hook.*.jsonl' -size +100k 2>/dev/null)" ] && [ $i -lt 6000 ]; do
	sleep 0.01
	i=$((i + 1))
done
f=$(find "$t/tmp" -name 'hook.*.jsonl')
[ -n "$f" ] || fail "no file of the library's in $t/tmp: $(ls -R "$t/tmp"; cat "$t/err")"
cmd=${f##*/hook.}
cmd=${cmd%.jsonl}
kill -KILL $capture
wait $capture 2>/dev/null
# Within a minute (the library looks at each write), nothing of cutcapture's is left.
i=0
while [ -n "$(ls -A "$t/tmp")" ] && [ $i -lt 6000 ]; do sleep 0.01; i=$((i + 1)); done
[ -z "$(ls -A "$t/tmp")" ] || fail "left in TMPDIR a minute after cutcapture was killed: $(ls -lR "$t/tmp")"
kill -0 "$cmd" 2>/dev/null || fail "the command did not run on"
kill "$cmd"
cmd=

# A command that closes every descriptor it did not open (as Python's subprocess does in its
# children) does not make cutcapture look gone: the trace has every call.
$CC -std=gnu11 -O1 -Wall -Werror -I"$top/tests/fixtures" -o "$t/closer" -x c - -L"$fx" -lcuda \
	-Wl,-rpath,"$fx" <<'EOF2' 2>"$t/err" || fail "cannot build the program: $(cat "$t/err")"
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "fakecuda.h"
int main(void) {
	CUcontext c;
	for (int i = 0; i < 1000; i++)
		cuCtxGetCurrent(&c);
	syscall(SYS_close_range, 3u, ~0u, 0u);
	for (int i = 0; i < 8; i++) /* the low numbers taken again, by other files */
		open("/dev/null", O_RDONLY);
	for (int i = 0; i < 1000; i++)
		cuCtxGetCurrent(&c);
	return 0;
}
EOF2
TMPDIR=$t/tmp $cap -q -l api,gpu --hook-api --libcuda "$fx/libcuda.so.1" -o "$t/closer.jsonl" -- "$t/closer" \
	>"$t/out" 2>"$t/err" || fail "closer: exit $?: $(cat "$t/err")"
n=$(grep -c '"name":"cuCtxGetCurrent","cat"' "$t/closer.jsonl")
[ "$n" -eq 2000 ] || fail "closer: $n calls in the trace, not 2000: $(cat "$t/err")"
exit 0
