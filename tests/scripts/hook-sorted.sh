#!/bin/sh
# cuthook leaves a sorted trace, whatever order the threads and processes wrote their lines in
# (a thread's buffer is written when it fills or the thread ends: seconds late): header first
# with "sorted": true, trailer last, ts never decreasing, nothing lost; every filter then takes
# it with no flag, beside cutcapture's trace of the same run (cutmerge: no line out of order,
# every call recognised as a duplicate). Per-process files (%p) are each sorted; a file a
# process still writes when the command ends is left unsorted, its header saying so.
. "$(dirname "$0")/lib/hook-setup.sh"
PATH=$B/bin:$PATH
command -v jq >/dev/null || { echo "needs jq"; exit 77; }

# sorted FILE: header first saying sorted, trailer last, ts never decreasing.
sorted() {
	[ "$(head -1 "$1" | jq -r '.name + " " + (.args.sorted | tostring)')" = "header true" ] ||
		bad "$1: first line is not a header saying sorted: $(head -1 "$1" | cut -c1-200)"
	[ "$(tail -1 "$1" | jq -r .name)" = trailer ] || bad "$1: no trailer last"
	jq -e -s '[.[].ts] as $t | $t == ($t | sort)' "$1" >/dev/null || bad "$1: not sorted by ts"
}
calls() { grep -c '"layer":"api"' "$1"; }

# The raw file (the library alone, no launcher): the second thread's lines come first.
LD_PRELOAD=$B/lib/libcuthook.so CUTHOOK_OUTPUT=$tmp/raw.jsonl "$fx/cuprog" late >/dev/null ||
	bad "cuprog late: exit $?"
jq -e -s '[.[] | select(.layer == "api") | .ts] as $t | $t != ($t | sort)' "$tmp/raw.jsonl" \
	>/dev/null || bad "the fixture did not write out of order: the test would prove nothing"

cuthook -o "$tmp/h.jsonl" -- "$fx/cuprog" late >"$tmp/out" 2>"$tmp/err" || bad "cuthook: exit $?"
[ "$(cat "$tmp/out")" = "cuprog: ok" ] && [ ! -s "$tmp/err" ] || bad "output changed: $(cat "$tmp/out" "$tmp/err")"
sorted "$tmp/h.jsonl"
[ "$(calls "$tmp/h.jsonl")" = "$(calls "$tmp/raw.jsonl")" ] ||
	bad "calls: $(calls "$tmp/h.jsonl") sorted, $(calls "$tmp/raw.jsonl") raw"
[ "$(calls "$tmp/h.jsonl")" = 36 ] || bad "calls: $(calls "$tmp/h.jsonl"), want 2 x 18"
for tool in "cutstat" "cutgaps" "cutchrome" "cutmerge" "cutplot -S" "cutioctl" "cutperfetto -o $tmp/p.pf"; do
	$tool "$tmp/h.jsonl" >/dev/null 2>"$tmp/err" || bad "$tool: exit $?: $(cat "$tmp/err")"
	[ ! -s "$tmp/err" ] || bad "$tool: $(cat "$tmp/err")"
done

# Per-process files: each sorted.
cuthook -o "$tmp/p.%p.jsonl" -- "$fx/cuprog" fork >/dev/null || bad "cuthook %p: exit $?"
n=0
for f in "$tmp"/p.*.jsonl; do
	n=$((n + 1))
	sorted "$f"
done
[ $n = 2 ] || bad "%p: $n files, want 2"

# Beside cutcapture's trace of the same run by uprobes (root, BPF): merged with no flag.
if [ "$(id -u)" -eq 0 ] && cutcapture -q -l api --uprobes --libcuda "$fx/libcuda.so.1" -o "$tmp/c.jsonl" -- \
	cuthook -o "$tmp/hc.jsonl" -- "$fx/cuprog" late >/dev/null 2>"$tmp/err"; then
	sorted "$tmp/hc.jsonl"
	cutmerge "$tmp/hc.jsonl" "$tmp/c.jsonl" >"$tmp/m.jsonl" 2>"$tmp/err" || bad "cutmerge: exit $?: $(cat "$tmp/err")"
	[ "$(tail -1 "$tmp/m.jsonl" | jq .args.unsorted)" = 0 ] || bad "cutmerge: lines out of order"
	[ "$(tail -1 "$tmp/m.jsonl" | jq .args.duplicates)" = 36 ] ||
		bad "cutmerge: $(tail -1 "$tmp/m.jsonl" | jq .args.duplicates) duplicates, want 36"
else
	echo "note: cutcapture not run here (needs root and BPF): $(cat "$tmp/err")"
fi
exit $fail
