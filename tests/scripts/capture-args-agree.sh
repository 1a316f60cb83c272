#!/bin/sh
# Both capture paths decode a driver API call the same way (capture/api/args.def): cuargs calls
# every function of api.def against a stand-in libcuda that exports them all, once through
# cutcapture's uprobes (--uprobes: by default its api layer is libcuthook's too) and once through
# cuthook (LD_PRELOAD); every call's name, result and args
# object, byte for byte, and every symbol record, must be the same in the two traces. Also
# checks that the trace covers every function either old table decoded (121) and every line
# of args.def. Needs root with BPF; exits 77 when that is missing.
. "$(dirname "$0")/lib/capture-setup.sh"
need_bpf
all=$B/fixtures/all
[ -x "$all/cuargs" ] && [ -f "$all/libcuda.so.1" ] || fail "build $all first (make test-programs)"

"$cap" -q -l api --uprobes --libcuda "$all/libcuda.so.1" -o "$t/cap.jsonl" -- "$all/cuargs" \
	>"$t/cap.out" 2>"$t/cap.err" || fail "cutcapture: exit $?: $(cat "$t/cap.err")"
# The api layer alone: the gpu layer's own events would take the stand-in's next handles.
"$B/bin/cuthook" -l api -o "$t/hook.jsonl" -- "$all/cuargs" >"$t/hook.out" 2>"$t/hook.err" ||
	fail "cuthook: exit $?: $(cat "$t/hook.err")"
grep -q '^cuargs: [0-9]* functions$' "$t/cap.out" || fail "cuargs under cutcapture: $(cat "$t/cap.out")"
cmp -s "$t/cap.out" "$t/hook.out" || fail "cuargs printed differently: $(cat "$t/cap.out" "$t/hook.out")"
[ "$(tail -1 "$t/cap.jsonl" | jq .args.lost)" = 0 ] || fail "cutcapture lost events"

# calls TRACE: name, result and the args object as written (the canonical layout: args last),
# one line per API call cuargs made, in order (one thread, one call at a time). The calls the
# stand-in makes itself (cuGetProcAddress calls cuGetProcAddress_v2) are seen by the uprobes
# only: a call inside the one before is left out.
calls() {
	sed -n 's/^{"ts":\([0-9]*\),"dur":\([0-9]*\),"pid":[0-9]*,"tid":[0-9]*,"layer":"api","name":"\([A-Za-z0-9_]*\)","cat":"[a-z]*","ret":\(-\{0,1\}[0-9]*\)\(,"args":\(.*\)\)\{0,1\}}$/\1	\2	\3	\4	\6/p' "$1" |
		awk -F '\t' '$1 >= end { end = $1 + $2; print $3 "\t" $4 "\t" $5 }'
}
# symbols TRACE: the symbol records' args.
symbols() { sed -n 's/.*"layer":"meta","name":"symbol","args":\(.*\)}$/\1/p' "$1"; }

calls "$t/cap.jsonl" >"$t/cap.calls"
calls "$t/hook.jsonl" >"$t/hook.calls"
n=$(wc -l <"$t/cap.calls")
[ "$n" -gt 1000 ] || fail "only $n calls in cutcapture's trace"
[ "$(calls "$t/cap.jsonl" | wc -l)" -ge "$(($(grep -c '"layer":"api"' "$t/cap.jsonl") - 10))" ] ||
	fail "cutcapture: API events not in the canonical layout"
[ "$(wc -l <"$t/hook.calls")" -eq "$(grep -c '"layer":"api"' "$t/hook.jsonl")" ] ||
	fail "cuthook: API events not in the canonical layout"
diff "$t/cap.calls" "$t/hook.calls" >"$t/diff" ||
	fail "the two paths differ (< cutcapture, > cuthook):
$(head -40 "$t/diff")"
symbols "$t/cap.jsonl" >"$t/cap.syms"
symbols "$t/hook.jsonl" >"$t/hook.syms"
[ -s "$t/cap.syms" ] || fail "no symbol records"
diff "$t/cap.syms" "$t/hook.syms" >"$t/diff" ||
	fail "the symbol records differ (< cutcapture, > cuthook):
$(head -20 "$t/diff")"

# Coverage: every line of args.def and every function the two old tables decoded (eBPF's 99,
# the preload path's 69) was called, and says something; and some call failed.
decoded() { awk -F '\t' '$3 != "" { print $1 }' "$t/cap.calls" | sort -u; }
decoded >"$t/decoded"
sed -n 's/^[A-Z0-9]*(\(cu[A-Za-z0-9_]*\)[,)].*/\1/p' "$top/capture/api/args.def" >"$t/want"
for f in cuEventDestroy_v2 cuEventQuery cuEventRecord cuEventRecordWithFlags \
	cuEventSynchronize cuStreamBeginCapture_v2 cuStreamCreate cuStreamDestroy_v2 \
	cuStreamEndCapture cuStreamIsCapturing cuStreamQuery cuStreamSynchronize cuStreamWaitEvent; do
	echo "$f" >>"$t/want"
done
sort -u "$t/want" -o "$t/want"
[ "$(wc -l <"$t/want")" -ge 121 ] || fail "args.def and the role-only functions: $(wc -l <"$t/want"), not 121"
missing=$(comm -23 "$t/want" "$t/decoded" | tr '\n' ' ')
[ -z "$missing" ] || fail "called but decoded by neither path, or not called: $missing"
awk -F '\t' '$2 != 0' "$t/cap.calls" | grep -q . || fail "no failed call"
echo "$(wc -l <"$t/decoded") functions decoded alike ($(wc -l <"$t/want") required), $n calls"
exit 0
