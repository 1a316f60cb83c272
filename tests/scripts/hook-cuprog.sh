#!/bin/sh
# cuthook on the stand-in libcuda: cuprog's calls through normal linking, through dlopen +
# cuGetProcAddress_v2 (as cudart makes them), from four threads and across fork: exact counts
# per function, decoded arguments, named launches, the coverage audit; the program's output and
# exit status untouched; the trace read by the shared reader.
. "$(dirname "$0")/lib/hook-setup.sh"

# api TRACE: "pid<TAB>name<TAB>args" per API event (the canonical layout is known exactly).
api() {
	sed -n 's/^{"ts":[0-9]*,"dur":[0-9]*,"pid":\([0-9]*\),"tid":[0-9]*,"layer":"api","name":"\([A-Za-z0-9_]*\)".*"ret":0\(,"args":\(.*\)\)\{0,1\}}$/\1	\2	\4/p' "$1"
}

# counts TRACE: "name count" per API function, sorted.
counts() {
	api "$1" | cut -f2 | sort | uniq -c | awk '{ print $2, $1 }'
}

# One sequence of cuprog, times K, plus EXTRA lines ("name count").
expected() {
	{
		printf '%s\n' "cuCtxGetCurrent 3" "cuDeviceGet 1" "cuDriverGetVersion 1" "cuInit 1" \
			"cuKernelGetFunction 1" "cuLaunchKernel 2" "cuLibraryGetKernel 1" \
			"cuLibraryLoadData 1" "cuMemAlloc_v2 1" "cuMemFree_v2 1" "cuMemcpyDtoH_v2 1" \
			"cuMemcpyHtoD_v2 1" "cuModuleGetFunction 1" "cuModuleLoadData 1" \
			"cuStreamSynchronize 1" | awk -v k="$1" '{ print $1, $2 * k }'
		[ -n "$2" ] && printf '%s\n' "$2"
	} | sort
}

# The arguments of every call of one sequence, for one pid (K sequences of it).
check_args() {
	t=$1 pid=$2 k=$3
	api "$t" | awk -F '\t' -v pid="$pid" '$1 == pid { print $2 "\t" $3 }' >"$tmp/args"
	x='0x[0-9a-f]*'
	c='\(,"corr":[0-9]*\)\{0,1\}' # the gpu layer's link to the work (not in a forked child)
	for want in \
		"cuMemAlloc_v2	{\"bytes\":1048576,\"dptr\":\"$x\"}" \
		"cuMemcpyHtoD_v2	{\"bytes\":4096,\"dir\":\"HtoD\",\"dst\":\"$x\",\"src\":\"$x\"$c}" \
		"cuLaunchKernel	{\"func\":\"$x\",\"kernel\":\"vecAdd\",\"grid\":\[64,1,1\],\"block\":\[256,1,1\],\"shmem\":0,\"stream\":\"0x5\"$c}" \
		"cuLaunchKernel	{\"func\":\"$x\",\"kernel\":\"gemm\",\"grid\":\[8,4,2\],\"block\":\[128,2,1\],\"shmem\":1024,\"stream\":\"0x5\"$c}" \
		"cuStreamSynchronize	{\"stream\":\"0x64\"}" \
		"cuMemcpyDtoH_v2	{\"bytes\":4096,\"dir\":\"DtoH\",\"dst\":\"$x\",\"src\":\"$x\"$c}" \
		"cuMemFree_v2	{\"dptr\":\"$x\"}" \
		"cuModuleGetFunction	{\"func\":\"$x\",\"module\":\"0xa0\",\"name\":\"vecAdd\"}" \
		"cuKernelGetFunction	{\"func\":\"$x\",\"kernel\":\"gemm\",\"handle\":\"$x\"}" \
		"cuLibraryGetKernel	{\"kernel\":\"$x\",\"library\":\"0xb0\",\"name\":\"gemm\"}" \
		"cuInit	"; do
		n=$(grep -c "^$want\$" "$tmp/args")
		[ "$n" -eq "$k" ] || bad "$mode: pid $pid: $n calls (not $k) with: $want"
	done
	# The pointer cuMemAlloc_v2 returned is the one the copies and cuMemFree_v2 use.
	d=$(sed -n 's/^cuMemAlloc_v2	.*"dptr":"\(0x[0-9a-f]*\)".*/\1/p' "$tmp/args" | head -1)
	[ "$k" -gt 1 ] || [ "$(grep -c "\"$d\"" "$tmp/args")" -eq 4 ] ||
		bad "$mode: device pointer $d not followed through the copies and the free"
	# Symbol records name the handles the launches use.
	for want in '"name":"vecAdd","kind":"function","via":"cuModuleGetFunction"' \
		'"name":"gemm","kind":"kernel","via":"cuLibraryGetKernel"' \
		'"name":"gemm","kind":"function","via":"cuKernelGetFunction"'; do
		n=$(grep "\"pid\":$pid," "$t" | grep '"layer":"meta","name":"symbol"' | grep -c "$want")
		[ "$n" -eq "$k" ] || bad "$mode: pid $pid: $n symbol records (not $k) with $want"
	done
}

# run MODE: cuprog under cuthook; output and status must match a plain run.
run() {
	mode=$1
	"$B/fixtures/cuprog" "$mode" 100 >"$tmp/plain.out" 2>"$tmp/plain.err"
	plain=$?
	"$B/bin/cuthook" -o "$tmp/$mode.jsonl" -- "$B/fixtures/cuprog" "$mode" 100 \
		>"$tmp/hook.out" 2>"$tmp/hook.err"
	st=$?
	[ "$st" -eq "$plain" ] && [ "$st" -eq 0 ] || bad "$mode: exit status $st, plain $plain"
	[ "$(cat "$tmp/hook.out")" = "cuprog: ok" ] || bad "$mode: stdout: $(cat "$tmp/hook.out")"
	cmp -s "$tmp/plain.err" "$tmp/hook.err" || bad "$mode: stderr differs: $(cat "$tmp/hook.err")"
	CUT_STRICT=1 cutstat "$tmp/$mode.jsonl" >"$tmp/stat.out" 2>&1 ||
		bad "$mode: cutstat fails on the trace: $(head -3 "$tmp/stat.out")"
	head -1 "$tmp/$mode.jsonl" | grep -q '"layer":"meta","name":"header","args":{"schema":2,"tool":"cuthook"' ||
		bad "$mode: the first line is no header"
	tail -1 "$tmp/$mode.jsonl" | grep -q '"layer":"meta","name":"trailer"' ||
		bad "$mode: the last line is no trailer"
}

# Every line canonical: API events on the reader's fast path, as cut_event_format writes them
# (cuthook writes them without it, for speed).
# Normal linking.
run link
canonical "$tmp/link.jsonl"
t=$tmp/link.jsonl
counts "$t" >"$tmp/got"
expected 1 | diff -u - "$tmp/got" >"$tmp/diff" || bad "link: counts differ: $(cat "$tmp/diff")"
check_args "$t" "$(api "$t" | head -1 | cut -f1)" 1
grep -q '"obtained":{"link":15,"dlsym":0,"cuGetProcAddress":0},"called":15,' "$t" ||
	bad "link: the audit does not say 15 entry points came by linking"
grep -q '{"name":"cuLaunchKernel","via":\["link"\],"calls":2}' "$t" ||
	bad "link: audit entry of cuLaunchKernel"

# dlopen + dlsym(handle, "cuGetProcAddress_v2") + the pointers it returns, as cudart does.
run dlopen
t=$tmp/dlopen.jsonl
canonical "$t"
counts "$t" >"$tmp/got"
expected 1 "cuGetProcAddress_v2 15" | diff -u - "$tmp/got" >"$tmp/diff" ||
	bad "dlopen: counts differ: $(cat "$tmp/diff")"
check_args "$t" "$(api "$t" | head -1 | cut -f1)" 1
grep -q '"args":{"symbol":"cuMemAlloc","version":13000,"flags":0,"fn":"0x[0-9a-f]*"}' "$t" ||
	bad "dlopen: cuGetProcAddress_v2's arguments"
grep -q '"obtained":{"link":0,"dlsym":1,"cuGetProcAddress":15},"called":16,' "$t" ||
	bad "dlopen: the audit does not say 15 entry points came from cuGetProcAddress_v2"
grep -q '{"name":"cuMemAlloc_v2","via":\["cuGetProcAddress_v2"\],"symbol":"cuMemAlloc","version":13000,"flags":0,"calls":1}' "$t" ||
	bad "dlopen: audit entry of cuMemAlloc_v2"
grep -q '{"name":"cuGetProcAddress_v2","via":\["dlsym"\],"calls":15}' "$t" ||
	bad "dlopen: audit entry of cuGetProcAddress_v2"

# Four threads at once: four tids, each with a whole sequence and a thread record.
run threads
t=$tmp/threads.jsonl
canonical "$t"
counts "$t" >"$tmp/got"
expected 4 | diff -u - "$tmp/got" >"$tmp/diff" || bad "threads: counts differ: $(cat "$tmp/diff")"
check_args "$t" "$(api "$t" | head -1 | cut -f1)" 4
for tid in $(sed -n 's/.*"tid":\([0-9]*\),"layer":"api".*/\1/p' "$t" | sort -u); do
	n=$(grep -c "\"tid\":$tid,\"layer\":\"api\"" "$t")
	[ "$n" -eq 18 ] || bad "threads: thread $tid has $n events, not 18"
done
n=$(sed -n 's/.*"tid":\([0-9]*\),"layer":"api".*/\1/p' "$t" | sort -u | wc -l)
[ "$n" -eq 4 ] || bad "threads: $n threads, not 4"
[ "$(grep -c '"name":"thread","args":{"comm":"cuprog"}' "$t")" -eq 4 ] || bad "threads: thread records"

# Across fork: parent and child each write their own header, events and trailer.
run fork
t=$tmp/fork.jsonl
canonical "$t"
counts "$t" >"$tmp/got"
expected 2 | diff -u - "$tmp/got" >"$tmp/diff" || bad "fork: counts differ: $(cat "$tmp/diff")"
pids=$(api "$t" | cut -f1 | sort -u)
[ "$(echo "$pids" | wc -l)" -eq 2 ] || bad "fork: events of $(echo "$pids" | wc -l) processes"
for pid in $pids; do
	check_args "$t" "$pid" 1
	for rec in header process trailer; do
		[ "$(grep -c "\"pid\":$pid,\"tid\":[0-9]*,\"layer\":\"meta\",\"name\":\"$rec\"" "$t")" -eq 1 ] ||
			bad "fork: pid $pid: not one $rec record"
	done
	# 18 calls; the parent's 4 submissions are timed too (no CUDA after fork in the child).
	grep "\"pid\":$pid,.*\"name\":\"trailer\"" "$t" |
		grep -q '"lost":0,"layers":{"api":18[,}]' ||
		bad "fork: pid $pid: trailer does not count 18 calls"
done
set -- $pids
grep "\"pid\":$1,.*\"name\":\"process\"" "$t" | grep -q "\"ppid\":$2}" ||
	grep "\"pid\":$2,.*\"name\":\"process\"" "$t" | grep -q "\"ppid\":$1}" ||
	bad "fork: the child's process record does not name its parent"
# Every line whole: as many lines as records.
[ "$(grep -c '^{"ts":[0-9]*,.*}$' "$t")" -eq "$(wc -l <"$t")" ] || bad "fork: broken lines"

# With %p in the name, each process writes a file of its own.
"$B/bin/cuthook" -o "$tmp/each.%p.jsonl" -- "$B/fixtures/cuprog" fork 100 >/dev/null ||
	bad "%p: cuprog failed"
n=$(ls "$tmp"/each.*.jsonl 2>/dev/null | wc -l)
[ "$n" -eq 2 ] || bad "%p: $n files, not 2"
for f in "$tmp"/each.*.jsonl; do
	[ "$(grep -c '"layer":"api"' "$f")" -eq 18 ] || bad "%p: $f does not hold 18 events"
done

# The exit status is the command's, signals included; cuthook's own failures are its own.
"$B/bin/cuthook" -o "$tmp/x.jsonl" -- sh -c 'exit 3'
[ $? -eq 3 ] || bad "exit status 3 not passed on"
sh -c "\"$B/bin/cuthook\" -o \"$tmp/x.jsonl\" -- sh -c 'kill -TERM \$\$'" 2>/dev/null
[ $? -eq 143 ] || bad "death by SIGTERM not passed on"
"$B/bin/cuthook" -o "$tmp/x.jsonl" -- "$tmp/no such program" 2>/dev/null
[ $? -eq 127 ] || bad "a missing command does not give 127"
"$B/bin/cuthook" -o "$tmp/x.jsonl" 2>"$tmp/err"
[ $? -eq 2 ] && grep -q '^usage: cuthook' "$tmp/err" || bad "no command: not a usage error"
# An LD_PRELOAD already set is kept, ours appended.
LD_PRELOAD=libc.so.6 "$B/bin/cuthook" -o "$tmp/x.jsonl" -- sh -c 'echo "$LD_PRELOAD"' >"$tmp/pre"
grep -q '^libc.so.6:/.*/libcuthook.so$' "$tmp/pre" || bad "LD_PRELOAD: $(cat "$tmp/pre")"

exit $fail
