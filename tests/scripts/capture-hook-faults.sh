#!/bin/sh
# cutcapture and the libcuthook it preloads, when things go wrong (issue 23). --hook naming a
# file that is not libcuthook (none there, not ELF, an ELF library without the library's
# marker) fails at once with one line and exit 2, nothing run, rather than having the dynamic
# linker complain in every process. Under a file size limit (ulimit -f) neither cutcapture
# nor the command is killed by SIGXFSZ: the command runs to its end, what the library could
# not write is said and counted in a lost record and the trailer, and the exit status is 2.
# Needs root with BPF.
. "$(dirname "$0")/lib/capture-setup.sh"
need_bpf
[ -e "$B/lib/libcuthook.so" ] || fail "build libcuthook.so first"
lib="--libcuda $fx/libcuda.so.1"

echo "not a library" >"$t/text"
for wrong in "$t/none.so" "$t/text" "$fx/libcuda.so.1"; do
	$cap -q -l api,gpu $lib --hook "$wrong" -o "$t/w.jsonl" -- sh -c "echo ran >'$t/ran'" >"$t/out" 2>"$t/err"
	st=$?
	[ $st -eq 2 ] && [ "$(wc -l <"$t/err")" -eq 1 ] && grep -q -- "--hook $wrong" "$t/err" ||
		fail "--hook $wrong: exit $st, $(cat "$t/err")"
	[ ! -e "$t/ran" ] || fail "--hook $wrong: the command ran"
done

# 256 KiB (512-byte blocks): the library's records of 100000 calls are some 10 MB.
(ulimit -f 512 && exec $cap -q -l api,gpu --hook-api $lib -o "$t/limit.jsonl" -- "$fx/capture-loop" 100000) \
	>"$t/out" 2>"$t/err"
st=$?
[ $st -eq 2 ] || fail "ulimit -f: exit $st, $(cat "$t/err")"
grep -q "^cuCtxGetCurrent" "$t/out" || fail "ulimit -f: the command did not run to its end: $(cat "$t/out" "$t/err")"
grep -q "libcuthook could not write its records: File too large" "$t/err" || fail "ulimit -f: not said: $(cat "$t/err")"
# The trace itself, within the limit: the lost record and the trailer count what was lost.
(ulimit -f 512 && exec $cap -q -l api,gpu --hook-api $lib -o "$t/limit2.jsonl" -- sh -c \
	"(ulimit -f 64 && exec '$fx/capture-loop' 100000)") >"$t/out" 2>"$t/err"
st=$?
[ $st -eq 2 ] && grep -q "^cuCtxGetCurrent" "$t/out" || fail "ulimit -f on the command: exit $st, $(cat "$t/out" "$t/err")"
valid "$t/limit2.jsonl"
lost=$(jq -s '[.[] | select(.name == "lost" and (.args.reason | test("could not write")))] | map(.args.count) | add' "$t/limit2.jsonl")
[ "${lost:-null}" != null ] && [ "$lost" -gt 0 ] && [ "$(tail -1 "$t/limit2.jsonl" | jq .args.lost)" -ge "$lost" ] ||
	fail "ulimit -f: lost record $lost, trailer lost $(tail -1 "$t/limit2.jsonl" | jq .args.lost)"
exit 0
