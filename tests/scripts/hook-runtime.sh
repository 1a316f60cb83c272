#!/bin/sh
# cuthook's runtime layer on the stand-in libcudart (tests/fixtures/fakecudart.c): rtprog's
# calls through references versioned @libcudart.so.13 and through dlopen(RTLD_LOCAL) + dlsym,
# from three threads: exact counts per function, decoded arguments, launches named by
# __cudaRegisterFunction, results of every return type intact, lines in the canonical layout (with
# a rank too), and, after cutmerge, each driver call the runtime made inside the runtime call that
# made it; a runtime linked into a library or the program named in the trailer as unrecorded.
. "$(dirname "$0")/lib/hook-setup.sh"
[ -f "$fx/rtprog" ] && [ -f "$fx/libcudart.so.13" ] || { echo "build $B/fixtures/rtprog first"; exit 1; }
command -v jq >/dev/null || { echo "needs jq"; exit 77; }
T=3 L=4

# The program's references are versioned, as PyTorch's are: interposing them is the point.
readelf --dyn-syms -W "$fx/rtprog" | grep -q ' UND cudaMalloc@libcudart.so.13' ||
	bad "rtprog does not refer to cudaMalloc@libcudart.so.13"

# layer TRACE LAYER: "name<TAB>args" per event of LAYER.
layer() {
	sed -n 's/^{"ts":[0-9]*,"dur":[0-9]*,"pid":[0-9]*,"tid":[0-9]*,"layer":"'"$2"'","name":"\([A-Za-z0-9_]*\)".*"cat":"[a-z]*"\(,"ret":0\)\{0,1\}\(,"args":\(.*\)\)\{0,1\}}$/\1	\4/p' "$1"
}

for mode in linked dlopen; do
	flag=
	[ $mode = dlopen ] && flag=-d
	t=$tmp/$mode.jsonl
	out=$(CUTHOOK_OUTPUT=$t LD_PRELOAD="$B/lib/libcuthook.so" "$fx/rtprog" $flag $T $L 2>&1)
	rc=$?
	[ $rc -eq 0 ] && [ -z "$out" ] || bad "$mode: rtprog under libcuthook: exit $rc: $out"
	layer "$t" runtime | cut -f1 | sort | uniq -c | awk '{ print $2, $1 }' >"$tmp/got"
	printf '%s\n' "cudaCreateChannelDesc 1" "cudaFree $T" "cudaGetErrorString 1" \
		"cudaLaunchKernel $((T * L))" "cudaMalloc $T" "cudaMemcpy $((2 * T))" \
		"cudaStreamSynchronize $T" >"$tmp/want"
	diff "$tmp/want" "$tmp/got" >/dev/null || bad "$mode: runtime calls per function: $(diff "$tmp/want" "$tmp/got" | tr '\n' ' ')"
	# The header says the library recorded each layer that is on, and none that is off.
	head -1 "$t" | jq -e '.args as $a | [$a.layers | to_entries[] | select(.value == "on") | .key] |
		sort == ($a.sources | keys) and all(.[]; $a.sources[.] == "preload") and
		($a.sources.runtime == "preload")' >/dev/null ||
		bad "$mode: header sources: $(head -1 "$t" | jq -c '.args | {layers, sources}')"
	# Written as the api layer's calls are, without cut_event_format: the same bytes.
	canonical "$t"
	# The trailer counts them as runtime events.
	n=$(grep -c '"layer":"runtime"' "$t")
	tail -1 "$t" | jq -e ".name == \"trailer\" and .args.layers.runtime == $n" >/dev/null ||
		bad "$mode: the trailer does not count $n runtime events: $(tail -1 "$t" | cut -c1-200)"
	# No ret where the function returns no cudaError_t.
	grep '"name":"cudaCreateChannelDesc"\|"name":"cudaGetErrorString"' "$t" | grep -q '"ret"' &&
		bad "$mode: a ret on a function that returns none"
	layer "$t" runtime >"$tmp/args"
	x='0x[0-9a-f]*'
	for want in \
		"cudaMalloc	{\"bytes\":256,\"dptr\":\"0x70000[0-9a-f]*\"}	$T" \
		"cudaMemcpy	{\"bytes\":256,\"dir\":\"HtoD\",\"dst\":\"$x\",\"src\":\"$x\"}	$T" \
		"cudaMemcpy	{\"bytes\":256,\"dir\":\"DtoH\",\"dst\":\"$x\",\"src\":\"$x\"}	$T" \
		"cudaLaunchKernel	{\"func\":\"$x\",\"kernel\":\"_Z4axpyfPfS_\",\"grid\":\[64,2,1\],\"block\":\[256,1,1\],\"shmem\":128,\"stream\":\"0x5\"}	$((T * L / 2))" \
		"cudaLaunchKernel	{\"func\":\"$x\",\"kernel\":\"_Z5scalePf\",\"grid\":\[64,2,1\],\"block\":\[256,1,1\],\"shmem\":128,\"stream\":\"0x5\"}	$((T * L / 2))" \
		"cudaStreamSynchronize	{\"stream\":\"0x0\"}	$T" \
		"cudaFree	{\"dptr\":\"0x70000[0-9a-f]*\"}	$T"; do
		k=${want##*	}
		want=${want%	*}
		n=$(grep -c "^$want\$" "$tmp/args")
		[ "$n" -eq "$k" ] || bad "$mode: $n calls (not $k) with: $want"
	done
	n=$(grep '"name":"symbol"' "$t" | grep -c '"kind":"function","via":"__cudaRegisterFunction"')
	# Three stubs registered, one launched by its stub (scale by its kernel handle, which the
	# driver named): a record for it, with its first use.
	[ "$n" -eq 1 ] || bad "$mode: $n symbol records from __cudaRegisterFunction, not 1"
	grep -q '"name":"_Z6unusedv"' "$t" && bad "$mode: a symbol record for a stub never launched"
	grep -q '__cudaRegisterFunction"' "$t" | grep -v symbol && bad "$mode: __cudaRegisterFunction is an event"
	# Driver calls inside runtime calls, once merged: each has its runtime call as parent.
	cutmerge "$t" >"$tmp/m.jsonl" || bad "$mode: cutmerge failed"
	for pair in cuMemAlloc_v2:cudaMalloc:$T cuLaunchKernel:cudaLaunchKernel:$((T * L)) \
		cuMemcpyHtoD_v2:cudaMemcpy:$T cuMemcpyDtoH_v2:cudaMemcpy:$T \
		cuStreamSynchronize:cudaStreamSynchronize:$T cuMemFree_v2:cudaFree:$T; do
		api=${pair%%:*} rest=${pair#*:}
		rt=${rest%%:*} k=${rest#*:}
		n=$(grep "\"layer\":\"api\",\"name\":\"$api\"" "$tmp/m.jsonl" | grep -c "\"pname\":\"$rt\"")
		[ "$n" -eq "$k" ] || bad "$mode: $n $api calls inside $rt, not $k"
	done
	# Runtime calls are outermost here: no parent.
	n=$(grep '"layer":"runtime"' "$tmp/m.jsonl" | grep -c '"parent"')
	[ "$n" -eq 0 ] || bad "$mode: $n runtime calls with a parent"
	# Its runtime is libcudart.so's, which the layer records: none named as unrecorded.
	grep -q runtimes_unrecorded "$t" && bad "$mode: $(tail -1 "$t" | grep -o '"runtimes_unrecorded":[^]]*]')"
done

# A runtime linked into another object (libblasish.so, as into cuBLAS; the program itself, as
# nvcc links it by default) is its own: its calls are not in the layer, its driver calls are,
# and the trailer names the object, as cutstat's note does.
t=$tmp/mixed.jsonl
CUTHOOK_OUTPUT=$t LD_PRELOAD="$B/lib/libcuthook.so" "$fx/rtmixed" 2 || bad "rtmixed under libcuthook: exit $?"
[ "$(layer "$t" runtime | cut -f1 | sort | uniq -c | awk '{ printf "%s %s,", $2, $1 }')" = \
	"cudaFree 1,cudaMalloc 1," ] || bad "rtmixed: runtime calls: $(layer "$t" runtime | cut -f1 | tr '\n' ' ')"
[ "$(grep -c '"layer":"api","name":"cuMemAlloc_v2"' "$t")" -eq 3 ] || bad "rtmixed: not 3 cuMemAlloc_v2"
tail -1 "$t" | jq -e '.args.runtimes_unrecorded == ["libblasish.so"]' >/dev/null ||
	bad "rtmixed: the trailer: $(tail -1 "$t" | cut -c1-300)"
cutstat "$t" | grep -qx 'note: the runtime layer lacks the calls of the CUDA runtime linked into libblasish.so (their driver calls are in the api layer)' ||
	bad "rtmixed: cutstat says nothing of libblasish.so: $(cutstat "$t" | head -3)"
cutstat -j "$t" | jq -e '.runtimes_unrecorded == ["libblasish.so"]' >/dev/null ||
	bad "rtmixed: cutstat -j: no runtimes_unrecorded"
t=$tmp/static.jsonl
CUTHOOK_OUTPUT=$t LD_PRELOAD="$B/lib/libcuthook.so" "$fx/rtprog-static" 1 2 >/dev/null 2>&1 ||
	bad "rtprog-static under libcuthook: exit $?"
tail -1 "$t" | jq -e '.args.runtimes_unrecorded == ["rtprog-static"]' >/dev/null ||
	bad "rtprog-static: the trailer: $(tail -1 "$t" | cut -c1-300)"

# In a distributed job, runtime calls carry the host and rank, as API calls do, canonically.
RANK=3 WORLD_SIZE=4 CUTHOOK_OUTPUT=$tmp/rank.jsonl LD_PRELOAD="$B/lib/libcuthook.so" "$fx/rtprog" 1 2 \
	>/dev/null 2>&1 || bad "rtprog (RANK=3) under libcuthook: exit $?"
canonical "$tmp/rank.jsonl"
[ "$(grep -c '"rank":3,"pid":[0-9]*,"tid":[0-9]*,"layer":"runtime"' "$tmp/rank.jsonl")" -gt 0 ] &&
	[ "$(grep '"layer":"runtime"' "$tmp/rank.jsonl" | grep -vc '"rank":3,')" -eq 0 ] ||
	bad "RANK=3: runtime calls without the rank"
exit $fail
