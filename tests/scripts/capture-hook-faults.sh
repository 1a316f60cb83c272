#!/bin/sh
# cutcapture and the libcuthook it preloads, when things go wrong (issue 23). --hook naming a
# file that is not libcuthook (none there, not ELF, an ELF library without the library's
# marker) fails at once with one line and exit 2, nothing run, rather than having the dynamic
# linker complain in every process. Needs root with BPF.
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

exit 0
