#!/bin/sh
# cutstat counts the ioctls inside each driver and runtime call itself where the trace did not
# go through cutmerge (a trace straight from cutcapture): its report, the verdict's share of
# driver API time inside NVIDIA ioctls included, is the one of the trace through cutmerge,
# as text and as CSV. Out of order, it counts none and says to sort the trace with cutmerge;
# a trace without the ioctl layer has no Ioctls columns.
top=${CUT_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
B=${CUT_BUILD:-$top/build}
PATH=$B/bin:$PATH
command -v zstd >/dev/null || { echo "needs zstd"; exit 77; }
t=$(mktemp -d) || exit 2
trap 'rm -rf "$t"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

for s in capture-torch-train.jsonl capture-torch-mlp-gpu.jsonl.zst ddp-2gpu-load-capture.jsonl.zst; do
	in=$top/samples/$s
	cutstat -n 5 "$in" >"$t/own.txt" || bad "$s: cutstat exit $?"
	cutmerge "$in" | cutstat -n 5 >"$t/merged.txt" || bad "$s: cutmerge | cutstat exit $?"
	cmp -s "$t/own.txt" "$t/merged.txt" || bad "$s: not the report of the merged trace: $(diff "$t/own.txt" "$t/merged.txt" | head -5)"
	grep -q 'Ioctls   InIoctl(ns)' "$t/own.txt" || bad "$s: no Ioctls column"
	grep -q 'inside' "$t/own.txt" || bad "$s: the verdict says nothing of the ioctls"
	# (every driver call's ioctls: more than none)
	awk '/^Driver API functions/ {on = 1; next} on && /^$/ {on = 0} on && $9 ~ /^[0-9]+$/ {n += $9} END {exit !(n > 0)}' \
		"$t/own.txt" || bad "$s: no ioctl counted in any call"
	cutstat -c "$in" >"$t/own.csv" || bad "$s: cutstat -c exit $?"
	cutmerge "$in" | cutstat -c >"$t/merged.csv" || bad "$s: cutmerge | cutstat -c exit $?"
	cmp -s "$t/own.csv" "$t/merged.csv" || bad "$s: CSV not the merged trace's"
	head -1 "$t/own.csv" | grep -q ',ioctls,ioctl_ns$' || bad "$s: CSV without ioctls: $(head -1 "$t/own.csv")"
done

# Out of order: the header, then the lines reversed.
in=$top/samples/capture-torch-train.jsonl
{ head -1 "$in"; sed 1d "$in" | tac; } >"$t/rev.jsonl"
cutstat "$t/rev.jsonl" >"$t/rev.txt" || bad "reversed: exit $?"
grep -q '^note: the trace is out of order, so the ioctls inside each call are not counted' "$t/rev.txt" ||
	bad "reversed: no note"
grep -q 'Ioctls' "$t/rev.txt" && bad "reversed: Ioctls column of counts not made"
cutstat -j "$t/rev.jsonl" | grep -q '"ioctls_unsorted": true' || bad "reversed: -j does not say so"
cutstat -c "$t/rev.jsonl" 2>"$t/rev.err" >/dev/null || bad "reversed -c: exit $?"
grep -q 'out of order' "$t/rev.err" || bad "reversed -c: no warning"
cutmerge "$t/rev.jsonl" 2>/dev/null | cutstat >"$t/sorted.txt" || bad "reversed, merged: exit $?"
grep -q 'out of order' "$t/sorted.txt" && bad "reversed, merged: still out of order"
grep -q 'Ioctls   InIoctl(ns)' "$t/sorted.txt" || bad "reversed, merged: no Ioctls column"

# No ioctl layer (cuthook's trace, through cutmerge or not): no columns of zeros.
cutstat "$top/samples/hook-torch-train.jsonl" >"$t/hook.txt" || bad "hook: exit $?"
cutmerge "$top/samples/hook-torch-train.jsonl" | cutstat >"$t/hook-merged.txt" ||
	bad "hook, merged: exit $?"
for f in hook hook-merged; do
	grep -q 'Driver API functions' "$t/$f.txt" || bad "$f: no function table"
	grep -q 'Ioctls' "$t/$f.txt" && bad "$f: Ioctls columns without ioctls"
done
exit $fail
