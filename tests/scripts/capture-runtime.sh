#!/bin/sh
# cutcapture's runtime layer by uprobes (--uprobes) on the stand-in libcudart's cuda* functions
# (rt.def's),
# for rtprog's three threads: exact counts per function, and the same events as cuthook's,
# name, result and args object byte for byte, with the same symbol records from
# __cudaRegisterFunction (both runs without address randomisation, so pointers agree); once
# merged, driver calls inside the runtime calls that made them. And by default, for a program
# with the runtime linked in, from uprobes on the program, which the trailer then does not name
# among the runtimes unrecorded (a library's it does). Needs root with BPF.
. "$(dirname "$0")/lib/capture-setup.sh"
need_bpf
[ -x "$fx/rtprog" ] && [ -f "$fx/libcudart.so.13" ] || fail "build $fx/rtprog first (make test-programs)"
command -v setarch >/dev/null || { echo "needs setarch"; exit 77; }
T=3 L=4
norand="setarch $(uname -m) -R"

$cap -q -l api,runtime --uprobes --libcuda "$fx/libcuda.so.1" --libcudart "$fx/libcudart.so.13" \
	-o "$t/cap.jsonl" -- $norand "$fx/rtprog" $T $L 2>"$t/cap.err" ||
	fail "cutcapture: exit $?: $(cat "$t/cap.err")"
[ -s "$t/cap.err" ] && fail "cutcapture said: $(cat "$t/cap.err")"
valid "$t/cap.jsonl"
"$B/bin/cuthook" -l api,runtime -o "$t/hook.jsonl" -- $norand "$fx/rtprog" $T $L 2>"$t/hook.err" ||
	fail "cuthook: exit $?: $(cat "$t/hook.err")"
[ "$(head -1 "$t/cap.jsonl" | jq -r .args.layers.runtime)" = on ] || fail "runtime layer not on"
[ "$(head -1 "$t/cap.jsonl" | jq -r .args.libcudart)" = "$fx/libcudart.so.13" ] ||
	fail "header: libcudart is $(head -1 "$t/cap.jsonl" | jq -r .args.libcudart)"

# calls TRACE: "name<TAB>ret-and-args" per runtime event, sorted (threads interleave); the
# threads' stack buffers are "stack" (libcuthook in the process moves the threads' stacks).
calls() {
	sed -n 's/^{"ts":[0-9]*,"dur":[0-9]*,"pid":[0-9]*,"tid":[0-9]*,"layer":"runtime","name":"\([A-Za-z0-9_]*\)","cat":"[a-z]*"\(.*\)}$/\1	\2/p' "$1" |
		sed 's/"0x7fff[0-9a-f]\{8\}"/"stack"/g' | sort
}
calls "$t/cap.jsonl" >"$t/cap.calls"
calls "$t/hook.jsonl" >"$t/hook.calls"
cut -f1 "$t/cap.calls" | uniq -c | awk '{ print $2, $1 }' >"$t/got"
printf '%s\n' "cudaCreateChannelDesc 1" "cudaFree $T" "cudaGetErrorString 1" \
	"cudaLaunchKernel $((T * L))" "cudaMalloc $T" "cudaMemcpy $((2 * T))" \
	"cudaStreamSynchronize $T" >"$t/want"
diff "$t/want" "$t/got" >/dev/null || fail "runtime calls per function: $(diff "$t/want" "$t/got" | tr '\n' ' ')"
[ "$(grep -c '"kernel":"_Z4axpyfPfS_"' "$t/cap.calls")" -eq $((T * L / 2)) ] ||
	fail "launches not named after __cudaRegisterFunction"
# scale is launched by its kernel handle through __cudaLaunchKernel, as CUDA 13's host stubs do:
# decoded the same, named by the driver's name of the handle.
[ "$(grep -c '"kernel":"_Z5scalePf","grid":\[64,2,1\]' "$t/cap.calls")" -eq $((T * L / 2)) ] ||
	fail "launches through __cudaLaunchKernel not decoded"
diff "$t/cap.calls" "$t/hook.calls" >"$t/diff" || fail "the two paths differ (< cutcapture, > cuthook):
$(head -20 "$t/diff")"
syms() { grep '"name":"symbol"' "$1" | grep '__cudaRegisterFunction' | sed 's/.*"args"://' | sort; }
[ "$(syms "$t/cap.jsonl" | wc -l)" -eq 1 ] || fail "not 1 symbol record from __cudaRegisterFunction"
! grep -q '"name":"_Z6unusedv"' "$t/cap.jsonl" || fail "a symbol record for a stub never launched"
[ "$(syms "$t/cap.jsonl")" = "$(syms "$t/hook.jsonl")" ] || fail "the symbol records differ"
cutmerge "$t/cap.jsonl" >"$t/m.jsonl" || fail "cutmerge failed"
n=$(grep '"layer":"api","name":"cuLaunchKernel"' "$t/m.jsonl" | grep -c '"pname":"cudaLaunchKernel"')
[ "$n" -eq $((T * L)) ] || fail "$n cuLaunchKernel inside cudaLaunchKernel, not $((T * L))"

# The runtime linked into the program (nvcc's default; rtprog-static): by default the library
# records the driver calls that runtime makes, and uprobes on the program its runtime calls,
# which no preloaded library sees; the header says so. The same calls per function, each
# driver launch inside the runtime launch that made it.
[ -x "$fx/rtprog-static" ] || fail "build $fx/rtprog-static first (make test-programs)"
$cap -q -l api,runtime -o "$t/static.jsonl" -- "$fx/rtprog-static" $T $L 2>"$t/static.err" ||
	fail "cutcapture rtprog-static: exit $?: $(cat "$t/static.err")"
valid "$t/static.jsonl"
h=$(head -1 "$t/static.jsonl" | jq -c '[.args.layers.runtime, .args.sources.runtime, .args.sources.api]')
[ "$h" = '["on","uprobes: libcudart linked in","preload"]' ] || fail "rtprog-static's header: $h"
grep -q "has libcudart linked in" "$t/static.err" || fail "cutcapture did not say why: $(cat "$t/static.err")"
calls "$t/static.jsonl" | cut -f1 | uniq -c | awk '{ print $2, $1 }' >"$t/got"
diff "$t/want" "$t/got" >/dev/null ||
	fail "rtprog-static's runtime calls per function: $(diff "$t/want" "$t/got" | tr '\n' ' ')"
cutmerge "$t/static.jsonl" >"$t/m.jsonl" || fail "cutmerge rtprog-static failed"
n=$(grep '"layer":"api","name":"cuLaunchKernel"' "$t/m.jsonl" | grep -c '"pname":"cudaLaunchKernel"')
[ "$n" -eq $((T * L)) ] || fail "rtprog-static: $n cuLaunchKernel inside cudaLaunchKernel, not $((T * L))"
# The uprobes record that runtime: the trailer does not name it among those unrecorded, as the
# library's own trailer does; a runtime linked into a library (rtmixed's libblasish.so) it names.
grep -q runtimes_unrecorded "$t/static.jsonl" &&
	fail "rtprog-static: $(tail -1 "$t/static.jsonl" | grep -o '"runtimes_unrecorded":[^]]*]')"
$cap -q -l api,runtime -o "$t/mixed.jsonl" -- "$fx/rtmixed" 2 2>"$t/mixed.err" ||
	fail "cutcapture rtmixed: exit $?: $(cat "$t/mixed.err")"
tail -1 "$t/mixed.jsonl" | jq -e '.args.runtimes_unrecorded == ["libblasish.so"]' >/dev/null ||
	fail "rtmixed: the trailer: $(tail -1 "$t/mixed.jsonl" | cut -c1-300)"
# With --uprobes too, the program is where its runtime is probed (no libcudart is loaded).
$cap -q -l api,runtime --uprobes --libcuda "$fx/libcuda.so.1" -o "$t/static-up.jsonl" -- \
	"$fx/rtprog-static" $T $L 2>"$t/static-up.err" ||
	fail "cutcapture --uprobes rtprog-static: exit $?: $(cat "$t/static-up.err")"
calls "$t/static-up.jsonl" | cut -f1 | uniq -c | awk '{ print $2, $1 }' >"$t/got"
diff "$t/want" "$t/got" >/dev/null ||
	fail "rtprog-static --uprobes: runtime calls per function: $(diff "$t/want" "$t/got" | tr '\n' ' ')"
exit 0
