#!/bin/sh
# libcuthook formats calls whose line depends on nothing but what they read (launches, copies,
# queries) on a thread of its own (capture/hook/async.c). What that thread writes must be what
# the calling thread would have written, whenever and however the program goes on:
# - a host stub registered again under another name (a library loaded again at the same
#   address) after thousands of launches still queued: each launch says the name it had;
# - the same calls, from threads that come and go, give the same events with and without the
#   formatter (CUTHOOK_ASYNC=0), each on its own thread;
# - a loop that outruns the formatter (its ring fills) loses no call;
# - the calls queued at fork are the parent's alone; those queued at _exit, at exit from
#   another thread, at a fatal signal and at exec are written.
# Each run's trailer must say the formatter wrote calls (off_thread), else nothing was tested.
. "$(dirname "$0")/lib/hook-setup.sh"
top=${CUT_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
[ -f "$fx/libcudart.so.13" ] && [ -x "$fx/capture-loop" ] ||
	{ echo "build $B/fixtures first (make test-programs)"; exit 1; }

cat >"$tmp/async.c" <<'C'
#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "fakecuda.h"
#include "fakecudart.h"
static void stub(void) {}
static long n;
static int e;
static void
launches(void)
{
	struct fake_dim3 g = {8, 1, 1}, b = {32, 1, 1};
	for (long i = 0; i < n; i++)
		e |= cudaLaunchKernel((const void *)stub, g, b, NULL, 0, NULL);
}
/* Calls until libcuthook's formatter names itself, which it does once it takes calls (it
 * starts at the first call it could take): runs in which it never got the CPU test nothing.
 * "nowait": the formatter is off. */
static void
wait_formatter(const char *how)
{
	for (int tries = 0; strcmp(how, "nowait") && tries < 200000; tries++) {
		DIR *d = opendir("/proc/self/task");
		struct dirent *de;
		char path[300], comm[32] = "";
		int found = 0;
		while (d && !found && (de = readdir(d))) {
			snprintf(path, sizeof(path), "/proc/self/task/%s/comm", de->d_name);
			FILE *f = fopen(path, "r");
			found = f && fgets(comm, sizeof(comm), f) && !strncmp(comm, "cuthook-fmt", 11);
			if (f)
				fclose(f);
		}
		if (d)
			closedir(d);
		if (found)
			return;
		cudaGetLastError();
		sched_yield();
	}
}
static void *
worker(void *arg)
{
	void *p;
	char host[4096] = {1};
	(void)arg;
	e |= cudaMalloc(&p, sizeof(host));
	e |= cudaMemcpy(p, host, sizeof(host), 1);
	launches();
	e |= cudaDeviceSynchronize();
	e |= cudaMemcpy(host, p, sizeof(host), 2);
	e |= cudaFree(p);
	return NULL;
}
static void *
exiter(void *arg)
{
	(void)arg;
	exit(e ? 1 : 7); /* while main launches */
}
int
main(int argc, char **argv)
{
	static char one[] = "k_before", two[] = "k_after";
	n = atol(argv[2]);
	__cudaRegisterFunction(NULL, (const char *)stub, one, one, -1, NULL, NULL, NULL, NULL, NULL);
	wait_formatter(argc > 3 ? argv[3] : "");
	if (!strcmp(argv[1], "threads")) {
		/* main first, so that the runtime's and driver's set-up calls are its own, then
		 * three waves of four: the later ones take the states the earlier left */
		worker(NULL);
		for (int w = 0; w < 3; w++) {
			pthread_t t[4];
			for (int i = 0; i < 4; i++)
				pthread_create(&t[i], NULL, worker, NULL);
			for (int i = 0; i < 4; i++)
				pthread_join(t[i], NULL);
		}
		return e;
	}
	launches();
	if (!strcmp(argv[1], "rename")) {
		__cudaRegisterFunction(NULL, (const char *)stub, two, two, -1, NULL, NULL, NULL, NULL,
		                       NULL);
		launches();
	} else if (!strcmp(argv[1], "fork")) {
		pid_t p = fork();
		if (p == 0) {
			launches();
			exit(e);
		}
		int st;
		launches();
		if (p < 0 || waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st))
			return 2;
	} else if (!strcmp(argv[1], "_exit")) {
		_exit(e ? 1 : 7);
	} else if (!strcmp(argv[1], "thread-exit")) {
		pthread_t t;
		pthread_create(&t, NULL, exiter, NULL);
		for (;;)
			launches();
	} else if (!strcmp(argv[1], "segv")) {
		raise(SIGSEGV);
	} else if (!strcmp(argv[1], "exec")) {
		execl("/bin/true", "true", (char *)NULL);
		return 3;
	}
	return e;
}
C
$CC -O2 -pthread -I"$top/tests/fixtures" -o "$tmp/async" "$tmp/async.c" -L"$fx" -lcuda \
	-l:libcudart.so.13 -Wl,-rpath,"$fx" || { echo "FAIL cannot build the test program"; exit 1; }

# trailer FILE MEMBER: the member's value in FILE's first trailer (after exec the new image
# writes its own)
trailer() { grep '"name":"trailer"' "$1" | head -1 | sed -n "s/.*\"$2\":\([0-9]*\).*/\1/p"; }
# calls FILE: the api and runtime events written (a lost record's args have a "layer" too)
calls() { grep -c '"layer":"\(api\|runtime\)","name"' "$1"; }
# launches FILE KERNEL [PID]: cudaLaunchKernel events of that kernel (of that process)
launches() {
	grep "\"pid\":${3:-[0-9]*},.*\"layer\":\"runtime\",\"name\":\"cudaLaunchKernel\".*\"kernel\":\"$2\"" "$1" | wc -l
}
off_thread() {
	off=$(trailer "$1" off_thread)
	[ -n "$off" ] && [ "$off" -gt 0 ] || bad "$2: the formatter wrote no call (off_thread: '$off')"
}
hook() { # OUT ARGS...: the program under cuthook, its status in $st
	_o=$1
	shift
	timeout 60 "$B/bin/cuthook" -l api,runtime -o "$_o" -- "$@" >"$tmp/out" 2>&1
	st=$?
}

# A name given again with thousands of launches queued.
N=3000
hook "$tmp/rename.jsonl" "$tmp/async" rename $N
[ $st -eq 0 ] || bad "rename: exit status $st: $(cat "$tmp/out")"
canonical "$tmp/rename.jsonl"
b=$(launches "$tmp/rename.jsonl" k_before) a=$(launches "$tmp/rename.jsonl" k_after)
[ "$b" -eq $N ] && [ "$a" -eq $N ] || bad "rename: $b launches named k_before, $a k_after, not $N each"
# (the stand-in runtime's own driver launches keep the function it loaded: named once)
ts_of() { grep "\"layer\":\"runtime\",\"name\":\"cudaLaunchKernel\".*\"kernel\":\"$1\"" "$tmp/rename.jsonl" | sed 's/^{"ts":\([0-9]*\).*/\1/' | sort -n; }
last_before=$(ts_of k_before | tail -1)
first_after=$(ts_of k_after | head -1)
[ -n "$first_after" ] && [ "$last_before" -lt "$first_after" ] ||
	bad "rename: a launch after the new name said the old one, or one before it the new"
off_thread "$tmp/rename.jsonl" rename

# The same events with and without the formatter: 12 threads that start and end (three waves),
# each allocating, copying, launching; per thread (the calls made waiting for the formatter left
# out) (tid left out) what was called, its result and its args, pointers left
# out (they move from run to run).
shape() {
	grep '"layer":"\(api\|runtime\)","name"' "$1" | grep -v '"name":"cudaGetLastError"' |
		sed 's/^{"ts":[0-9]*,"dur":[0-9]*,"pid":[0-9]*,"tid":\([0-9]*\),/\1 /; s/"0x[0-9a-f]*"/P/g; s/"dptr":[0-9]*/"dptr":P/g' |
		sort | awk '{t = $1; $1 = ""; print t, $0}' >"$1.lines"
	# the lines of each thread, as one sorted block, the blocks sorted: threads compared whole
	awk '{t = $1; $1 = ""; a[t] = a[t] $0 "|"} END {for (t in a) print a[t]}' "$1.lines" | sort
}
CUTHOOK_ASYNC=0 hook "$tmp/sync.jsonl" "$tmp/async" threads 500 nowait
[ $st -eq 0 ] || bad "threads, CUTHOOK_ASYNC=0: exit status $st: $(cat "$tmp/out")"
hook "$tmp/async.jsonl" "$tmp/async" threads 500
[ $st -eq 0 ] || bad "threads: exit status $st: $(cat "$tmp/out")"
canonical "$tmp/async.jsonl"
shape "$tmp/sync.jsonl" >"$tmp/sync.shape"
shape "$tmp/async.jsonl" >"$tmp/async.shape"
[ "$(wc -l <"$tmp/async.shape")" -ge 12 ] || bad "threads: $(wc -l <"$tmp/async.shape") threads with calls, not 12"
cmp -s "$tmp/sync.shape" "$tmp/async.shape" ||
	bad "threads: the threads' events differ with the formatter: $(diff "$tmp/sync.shape" "$tmp/async.shape" | cut -c1-300 | head -4)"
[ "$(trailer "$tmp/sync.jsonl" off_thread)" = "" ] || bad "CUTHOOK_ASYNC=0: the formatter ran"
off_thread "$tmp/async.jsonl" threads

# A loop faster than the formatter: no call lost.
hook "$tmp/loop.jsonl" "$fx/capture-loop" 400000
ev=$(trailer "$tmp/loop.jsonl" events)
lines=$(grep -c '"layer":"api","name":"cuCtxGetCurrent"' "$tmp/loop.jsonl")
[ $st -eq 0 ] && [ "$ev" = 400000 ] && [ "$lines" = 400000 ] && [ "$(trailer "$tmp/loop.jsonl" lost)" = 0 ] ||
	bad "loop: exit $st, $lines calls written, trailer: events $ev, lost $(trailer "$tmp/loop.jsonl" lost)"
off_thread "$tmp/loop.jsonl" loop

# Fork with calls queued: the parent's written by the parent alone.
N=1000 # fewer than wake the formatter (async.c, RING_KICK): queued at fork
hook "$tmp/fork.jsonl" "$tmp/async" fork $N
[ $st -eq 0 ] || bad "fork: exit status $st: $(cat "$tmp/out")"
pids=$(grep '"name":"cudaLaunchKernel"' "$tmp/fork.jsonl" | sed 's/.*"pid":\([0-9]*\),.*/\1/' | sort -u)
set -- $pids
[ $# -eq 2 ] || bad "fork: launches from $# processes, not 2"
for p in $pids; do
	c=$(launches "$tmp/fork.jsonl" k_before $p)
	[ "$c" -eq $((2 * N)) ] || [ "$c" -eq $N ] || bad "fork: process $p wrote $c launches, not $N or $((2 * N))"
	total=$((${total:-0} + c))
done
[ "${total:-0}" -eq $((3 * N)) ] || bad "fork: $total launches written, not $((3 * N)) (the parent's $N before fork written twice?)"

# The ends: every launch queued is written.
N=3000
for how in _exit thread-exit segv exec; do
	hook "$tmp/$how.jsonl" "$tmp/async" $how $N
	c=$(launches "$tmp/$how.jsonl" k_before)
	case $how in
	_exit | thread-exit) [ $st -eq 7 ] || bad "$how: exit status $st, not 7" ;;
	segv) [ $st -ne 0 ] || bad "segv: exit status 0" ;;
	exec) [ $st -eq 0 ] || bad "exec: exit status $st" ;;
	esac
	# thread-exit: the calls main made before exit stopped it, at least the first loop's
	[ "$c" -ge $N ] || bad "$how: $c launches written, not $N"
	if [ $how != segv ]; then
		ev=$(trailer "$tmp/$how.jsonl" events)
		[ "$(calls "$tmp/$how.jsonl")" = "$ev" ] ||
			bad "$how: the trailer counts $ev events, $(calls "$tmp/$how.jsonl") written"
		off_thread "$tmp/$how.jsonl" $how
	fi
done

exit $fail
