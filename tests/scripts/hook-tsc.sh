#!/bin/sh
# cuthook's durations, where calls start and end with TSC reads (capture/hook/clock.c) and where
# they are clock reads (CUTHOOK_TSC=0): on three threads, the stand-in's cuStreamSynchronize sleeps
# from 0.05 to 20 ms (within an anchor's millisecond and past it) between runs of cheap calls. Each
# sleep's duration is at least what was asked and its span lies within clock readings the program
# took around the call (a start from the TSC is put late: never before the program's read); every
# thread's events are in order without overlapping; the trailer says which clock the durations
# came from. Nothing here depends on how fast the machine is.
. "$(dirname "$0")/lib/hook-setup.sh"

cat >"$tmp/sleeps.c" <<'EOF'
/* Prints "R start end" around the run and "S stream us before after" around each sleep, in
 * CLOCK_MONOTONIC ns; streams are distinct, so each line names one event of the trace. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include "fakecuda.h"
static const unsigned sleeps_us[] = {50, 300, 700, 2000, 20000};
static char out[3][512];
static long long now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1000000000LL + t.tv_nsec; }
static void *run(void *arg) {
	int id = (int)(intptr_t)arg, n = 0;
	CUcontext c;
	for (int k = 0; k < 5; k++) {
		for (int i = 0; i < 200; i++)
			cuCtxGetCurrent(&c);
		uintptr_t us = sleeps_us[k] + (unsigned)id;
		long long t0 = now();
		cuStreamSynchronize((CUstream)us);
		long long t1 = now();
		n += snprintf(out[id] + n, sizeof(out[id]) - (size_t)n, "S %#lx %lu %lld %lld\n",
			      (unsigned long)us, (unsigned long)us, t0, t1);
	}
	return NULL;
}
int main(void) {
	long long start = now();
	/* Long enough after start for the TSC's rate to be known at the first call. */
	struct timespec d = {0, 100000000};
	nanosleep(&d, NULL);
	pthread_t th[3];
	for (int i = 0; i < 3; i++)
		pthread_create(&th[i], NULL, run, (void *)(intptr_t)i);
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < 3; i++)
		fputs(out[i], stdout);
	printf("R %lld %lld\n", start, now());
	return 0;
}
EOF
$CC -std=gnu11 -O1 -Wall -Werror -I"$(pwd)/tests/fixtures" -o "$tmp/sleeps" "$tmp/sleeps.c" \
	-L"$fx" -lcuda -Wl,-rpath,"$fx" -pthread || exit 1

# Whether libcuthook should end calls with the TSC here (clock.c's conditions).
tsc=no
grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | grep -qw constant_tsc &&
	grep -m1 '^flags' /proc/cpuinfo | grep -qw nonstop_tsc &&
	grep -Eq 'tsc|kvm-clock' /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null &&
	tsc=yes

# check MODE TRACE OUTPUT: the assertions above (times in ns; 1 us of slack for the ends, far
# above clock.c's bound, far below a wrong rate's error over a millisecond sleep).
check() {
	mode=$1 t=$2 o=$3
	sed -n 's/^{"ts":\([0-9]*\),"dur":\([0-9]*\),"pid":[0-9]*,"tid":\([0-9]*\),"layer":"api","name":"\([A-Za-z0-9_]*\)".*/\3 \1 \2 \4/p' \
		"$t" >"$tmp/ev"
	sed -n 's/^{"ts":\([0-9]*\),"dur":\([0-9]*\),.*"name":"cuStreamSynchronize".*"args":{"stream":"\(0x[0-9a-f]*\)"}}$/\3 \1 \2/p' \
		"$t" >"$tmp/sync"
	[ "$(wc -l <"$tmp/ev")" -eq 3015 ] || bad "$mode: $(wc -l <"$tmp/ev") API events, not 3015"
	[ "$(wc -l <"$tmp/sync")" -eq 15 ] || bad "$mode: $(wc -l <"$tmp/sync") sleeps, not 15"
	awk -v mode="$mode" '
		FILENAME == ARGV[1] { if ($1 == "S") { us[$2] = $3; b[$2] = $4; a[$2] = $5 } else { rs = $2; re = $3 }; next }
		FILENAME == ARGV[2] {
			if (!($1 in b)) { printf "FAIL %s: no sleep of stream %s\n", mode, $1; bad = 1; next }
			want = us[$1] * 1000
			if ($3 < want - 1000) { printf "FAIL %s: stream %s: dur %.0f < %.0f asked\n", mode, $1, $3, want; bad = 1 }
			if ($2 < b[$1]) { printf "FAIL %s: stream %s: ts %.0f before the clock read before the call (%.0f)\n", mode, $1, $2, b[$1]; bad = 1 }
			if ($2 + $3 > a[$1] + 1000) { printf "FAIL %s: stream %s: ends at %.0f, after the clock read after the call (%.0f)\n", mode, $1, $2 + $3, a[$1]; bad = 1 }
			seen++
			next
		}
		{
			if ($2 < rs || $2 + $3 > re + 1000) { printf "FAIL %s: %s at %.0f+%.0f outside the run [%.0f, %.0f]\n", mode, $4, $2, $3, rs, re; bad = 1 }
			if (($1 in end) && $2 < last[$1]) { printf "FAIL %s: thread %s: ts %.0f after %.0f\n", mode, $1, $2, last[$1]; bad = 1 }
			if (($1 in end) && $2 + 1000 < end[$1]) { printf "FAIL %s: thread %s: %s at %.0f starts before the call before it ended (%.0f)\n", mode, $1, $4, $2, end[$1]; bad = 1 }
			last[$1] = $2; end[$1] = $2 + $3
		}
		END { exit bad }' "$o" "$tmp/sync" "$tmp/ev" >"$tmp/fails" || {
		head -10 "$tmp/fails"
		fail=1
	}
	tail -1 "$t" | grep -q '"name":"trailer"' || bad "$mode: no trailer"
	d=$(tail -1 "$t" | sed -n 's/.*"durations":{"tsc":\([0-9]*\),"clock":\([0-9]*\).*/\1 \2/p')
	set -- $d
	[ $# -eq 2 ] && [ $(($1 + $2)) -eq 3015 ] || bad "$mode: the trailer's durations: '$d'"
	case $mode in
	clock) [ "${1:-1}" -eq 0 ] || bad "clock: $1 durations from the TSC with CUTHOOK_TSC=0" ;;
	tsc) if [ $tsc = yes ]; then
		# All but the first and those of the ~30 us after an anchor could not be renewed
		# (all but 1 on an idle machine; a loaded one may miss a few renewals).
		[ "${1:-0}" -ge 2000 ] || bad "tsc: only ${1:-0} of 3015 durations from the TSC"
		tail -1 "$t" | grep -q '"tsc_hz":[1-9]' || bad "tsc: the trailer gives no tsc_hz"
	fi ;;
	esac
}

"$B/bin/cuthook" -o "$tmp/tsc.jsonl" -- "$tmp/sleeps" >"$tmp/tsc.out" || bad "tsc: the program failed"
check tsc "$tmp/tsc.jsonl" "$tmp/tsc.out"
CUTHOOK_TSC=0 "$B/bin/cuthook" -o "$tmp/clock.jsonl" -- "$tmp/sleeps" >"$tmp/clock.out" ||
	bad "clock: the program failed"
check clock "$tmp/clock.jsonl" "$tmp/clock.out"
[ $tsc = yes ] || echo "hook-tsc.sh: no invariant TSC read by the clocksource here: only the clock's durations checked"
exit $fail
