#!/bin/sh
# cutcapture, driver API layer by uprobes (--uprobes): cuprog's link, dlopen and threads modes
# against the stand-in libcuda, with the exact calls, decoded arguments and handle names
# tests/fixtures/cuprog.c documents; the single-probe fallback with -f; every trace read back by
# cutstat, sorted. (The default, libcuthook's wrappers: capture-default.sh.)
# Needs root with BPF (uprobes, raw tracepoints); exits 77 when that is missing.
. "$(dirname "$0")/lib/capture-setup.sh"
need_bpf

# valid FILE: the shared checks, and nothing lost.
valid_nolost() {
	valid "$1"
	[ "$(tail -1 "$1" | jq .args.lost)" = 0 ] || fail "$1: events lost"
}

# has FILE EXPR: some record of FILE makes EXPR true.
has() { jq -e -s "any(.[]; $2)" "$1" >/dev/null; }

# counts FILE: "name count" for every API function, sorted.
counts() { jq -r 'select(.layer=="api") | .name' "$1" | sort | uniq -c | awk '{print $2, $1}'; }

seq1='cuCtxGetCurrent 3
cuDeviceGet 1
cuDriverGetVersion 1
cuInit 1
cuKernelGetFunction 1
cuLaunchKernel 2
cuLibraryGetKernel 1
cuLibraryLoadData 1
cuMemAlloc_v2 1
cuMemFree_v2 1
cuMemcpyDtoH_v2 1
cuMemcpyHtoD_v2 1
cuModuleGetFunction 1
cuModuleLoadData 1
cuStreamSynchronize 1'

capture() { # capture OUT ARGS...: cutcapture of the stand-in, the api layer by uprobes
	out=$1; shift
	"$cap" -q --uprobes --libcuda "$fx/libcuda.so.1" -o "$out" "$@" >"$t/cap.out" 2>"$t/cap.err" ||
		fail "cutcapture $*: exit $?: $(cat "$t/cap.err")"
}

# link mode: every call, decoded (every layer but the runtime, whose probes of a libcudart found
# here would add to the functions counted below).
capture "$t/link.jsonl" -l api,ioctl,irq,sched,kernel,gpu,nvtx -- "$fx/cuprog" link
valid_nolost "$t/link.jsonl"
[ "$(counts "$t/link.jsonl")" = "$seq1" ] || fail "link: calls differ: $(counts "$t/link.jsonl")"
[ "$(jq -r 'select(.layer=="api" and .ret != 0) | .name' "$t/link.jsonl")" = "" ] ||
	fail "link: a call did not return 0"
# (corr, the link to the GPU work libcuthook timed, is checked in capture-preload.sh)
args() { jq -c "select(.name==\"$2\") | .args | del(.corr)" "$1"; }
[ "$(args "$t/link.jsonl" cuMemAlloc_v2)" = '{"bytes":1048576,"dptr":"0x7000000000"}' ] ||
	fail "cuMemAlloc_v2 args: $(args "$t/link.jsonl" cuMemAlloc_v2)"
has "$t/link.jsonl" '.name == "cuMemcpyHtoD_v2" and .args.bytes == 4096 and
	.args.dir == "HtoD" and .args.dst == "0x7000000000"' || fail "cuMemcpyHtoD_v2 args"
has "$t/link.jsonl" '.name == "cuMemcpyDtoH_v2" and .args.bytes == 4096 and
	.args.dir == "DtoH" and .args.src == "0x7000000000"' || fail "cuMemcpyDtoH_v2 args"
[ "$(args "$t/link.jsonl" cuLaunchKernel)" = '{"func":"0xf0000","kernel":"vecAdd","grid":[64,1,1],"block":[256,1,1],"shmem":0,"stream":"0x5"}
{"func":"0xf0001","kernel":"gemm","grid":[8,4,2],"block":[128,2,1],"shmem":1024,"stream":"0x5"}' ] ||
	fail "cuLaunchKernel args: $(args "$t/link.jsonl" cuLaunchKernel)"
has "$t/link.jsonl" '.name == "cuStreamSynchronize" and .args.stream == "0x7d0" and
	.dur >= 2000000' || fail "cuStreamSynchronize: stream 2000, at least 2 ms"
[ "$(jq -r 'select(.name=="symbol") | [.args.handle, .args.name, .args.kind, .args.via] | @tsv' \
	"$t/link.jsonl")" = "$(printf '0xf0000\tvecAdd\tfunction\tcuModuleGetFunction
0xe0001\tgemm\tkernel\tcuLibraryGetKernel
0xf0001\tgemm\tfunction\tcuKernelGetFunction')" ] || fail "symbol records"
# Every function of api.def the stand-in exports is probed (without libcuthook: with it, the
# functions it records itself are not, capture-preload.sh).
grep -o '^HOOK_API([A-Za-z0-9_]*' capture/api/api.def | cut -c10- >"$t/api-names"
nfun=$(nm -D --defined-only "$B/fixtures/libcuda.so.1" | awk '{ print $3 }' | grep -cxF -f "$t/api-names")
capture "$t/uprobes.jsonl" -l api -- "$fx/cuprog" link
has "$t/uprobes.jsonl" '.name == "header" and .args.schema == 2 and .args.sorted == true and
	.args.layers.api == "on" and .args.probes.functions == '"$nfun"' and
	.args.probes.attached == '"$nfun" || fail "header (want $nfun probes): $(head -1 "$t/uprobes.jsonl")"
has "$t/link.jsonl" '.name == "header" and .args.layers.gpu == "on" and .args.probes.left_to_libcuthook > 0 and
	.args.probes.functions + .args.probes.left_to_libcuthook == '"$nfun" ||
	fail "header (want $nfun probed or left to libcuthook): $(head -1 "$t/link.jsonl")"
has "$t/link.jsonl" '.name == "trailer" and .args.layers.api == 18 and .args.status == 0' || fail "trailer: $(tail -1 "$t/link.jsonl")"
# The thread sleeps 2 ms in cuStreamSynchronize: off the CPU, sleeping, at least that long.
jq -e -s '(map(select(.name=="cuStreamSynchronize"))[0]) as $s |
	any(.[]; .layer == "sched" and .tid == $s.tid and .args.state == "S" and
	.dur >= 1900000 and .ts >= $s.ts and .ts + .dur <= $s.ts + $s.dur)' "$t/link.jsonl" \
	>/dev/null || fail "no off-CPU span inside cuStreamSynchronize"

# dlopen mode, as cudart does it: everything through cuGetProcAddress_v2's pointers.
capture "$t/dlopen.jsonl" -l api -- "$fx/cuprog" dlopen
valid_nolost "$t/dlopen.jsonl"
[ "$(counts "$t/dlopen.jsonl")" = "$(printf '%s\n' "$seq1" 'cuGetProcAddress_v2 15' | sort)" ] ||
	fail "dlopen: calls differ: $(counts "$t/dlopen.jsonl")"
[ "$(jq -r 'select(.name=="cuGetProcAddress_v2") | .args.symbol' "$t/dlopen.jsonl" | sort | tr '\n' ' ')" = \
	"cuCtxGetCurrent cuDeviceGet cuDriverGetVersion cuInit cuKernelGetFunction cuLaunchKernel cuLibraryGetKernel cuLibraryLoadData cuMemAlloc cuMemFree cuMemcpyDtoH cuMemcpyHtoD cuModuleGetFunction cuModuleLoadData cuStreamSynchronize " ] ||
	fail "cuGetProcAddress_v2 symbols"
[ "$(jq -r 'select(.name=="cuLaunchKernel") | .args.kernel' "$t/dlopen.jsonl" | tr '\n' ' ')" = "vecAdd gemm " ] ||
	fail "dlopen: launches not named"

# threads mode: four threads, each with the whole sequence and its own thread record.
capture "$t/threads.jsonl" -l api -- "$fx/cuprog" threads
valid_nolost "$t/threads.jsonl"
[ "$(counts "$t/threads.jsonl")" = "$(printf '%s\n' "$seq1" | awk '{print $1, $2 * 4}')" ] ||
	fail "threads: calls differ: $(counts "$t/threads.jsonl")"
[ "$(jq -r 'select(.layer=="api") | .tid' "$t/threads.jsonl" | sort | uniq -c | awk '{print $1}' | tr '\n' ' ')" = "18 18 18 18 " ] ||
	fail "threads: not 18 calls on each of 4 threads"
[ "$(jq -r 'select(.name=="thread") | .tid' "$t/threads.jsonl" | sort -u | wc -l)" = 4 ] ||
	fail "threads: not 4 thread records"
[ "$(jq -r 'select(.name=="symbol")' "$t/threads.jsonl" | jq -s length)" = 12 ] ||
	fail "threads: not 12 symbol records"

# Four threads asleep 2.5 s in cuStreamSynchronize at once: the output waits for no more
# than a second of it, writing each off-CPU period in contiguous parts (split), and stays
# sorted while the calls in flight hold back everything after their start.
capture "$t/long.jsonl" -l api,sched -- "$fx/cuprog" threads 2500000
valid_nolost "$t/long.jsonl"
jq -e -s '[.[] | select(.name == "cuStreamSynchronize")] | length == 4 and
	all(.[]; .dur >= 2500000000)' "$t/long.jsonl" >/dev/null || fail "long: syncs"
# For each syncing thread: its off-CPU spans inside the sync, some split, back to back,
# covering the sleep.
jq -e -s '. as $all | [.[] | select(.name == "cuStreamSynchronize")] | all(.[];
	. as $s | [$all[] | select(.layer == "sched" and .tid == $s.tid and .ts >= $s.ts and
		.ts + .dur <= $s.ts + $s.dur)] as $o |
	($o | map(select(.args.split == 1)) | length) >= 1 and
	($o | map(.dur) | add) >= 2400000000 and
	([range(1; $o | length) as $i | select($o[$i - 1].args.split == 1) |
		$o[$i].ts == $o[$i - 1].ts + $o[$i - 1].dur] | all))' "$t/long.jsonl" >/dev/null ||
	fail "long: off-CPU periods not written in contiguous parts: $(jq -c -s '. as $all |
		[.[] | select(.name == "cuStreamSynchronize") | . as $s | [$s.tid, $s.ts, $s.dur,
		[$all[] | select(.layer == "sched" and .tid == $s.tid) | [.ts, .dur, .args.split]]]]' \
		"$t/long.jsonl") $(tail -1 "$t/long.jsonl")"
# Periods shorter than --sched-min are left out, the long ones too: none written in part
# (1.5 s asleep, past the second after which a period is written in parts).
capture "$t/min.jsonl" -l api,sched --sched-min 1600000000 -- "$fx/cuprog" threads 1500000
valid_nolost "$t/min.jsonl"
[ "$(jq -s '[.[] | select(.layer == "sched")] | length' "$t/min.jsonl")" = 0 ] ||
	fail "--sched-min: $(jq -c 'select(.layer == "sched")' "$t/min.jsonl" | head -3)"

# Without uprobe_multi: one uprobe per function, here only those -f names.
capture "$t/single.jsonl" -l api --single-probes -f 'cuLaunch*' -f cuMemAlloc_v2 -- "$fx/cuprog" link
valid_nolost "$t/single.jsonl"
[ "$(counts "$t/single.jsonl")" = "cuLaunchKernel 2
cuMemAlloc_v2 1" ] || fail "single probes: $(counts "$t/single.jsonl")"
# cuLaunch*: every one the stand-in exports, and cuMemAlloc_v2.
nl=$(nm -D --defined-only "$B/fixtures/libcuda.so.1" | awk '{ print $3 }' | grep -xF -f "$t/api-names" | grep -c '^cuLaunch')
has "$t/single.jsonl" '.name == "header" and .args.probes.mode == "uprobe" and
	.args.probes.functions == '"$((nl + 1))" || fail "single probes: header: $(head -1 "$t/single.jsonl")"
# Handles named by calls not probed stay unnamed, and that is all.
[ "$(jq -r 'select(.name=="cuLaunchKernel") | .args.kernel // "-"' "$t/single.jsonl" | tr '\n' ' ')" = "- - " ] ||
	fail "single probes: kernel names without their calls"
exit 0
