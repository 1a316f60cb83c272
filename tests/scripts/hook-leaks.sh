#!/bin/sh
# cuthook, the launcher, leaves no memory of its own behind, whichever way it exits: a run, a
# run with %p, a command that cannot be run, and the fatal errors of its options and output.
# LeakSanitizer looks for it only in a build with AddressSanitizer (make check-sanitized runs
# this script there), and counts memory that only a static variable still points to as lost
# (use_globals=0: a compiler may keep such a variable in a register, and a library path or
# output name once lived on that way). What libc keeps by design for the process (the
# environment setenv builds) and cut_esc's reused buffer are not cuthook's to free. Skipped
# in a build without AddressSanitizer.
. "$(dirname "$0")/lib/hook-setup.sh"
grep -q __asan_init "$B/bin/cuthook" 2>/dev/null || {
	echo "$B/bin/cuthook is not built with AddressSanitizer (make check-sanitized runs this)"
	exit 77
}
B=$(cd "$B" && pwd)
# Leaks change no exit status here (exitcode=0): the report is read instead, its stacks
# whole (fast_unwind_on_malloc=0: libc has no frame pointers).
export ASAN_OPTIONS=detect_leaks=1:verify_asan_link_order=0:fast_unwind_on_malloc=0
export LSAN_OPTIONS=use_globals=0:exitcode=0
export CUTHOOK_LIB="$B/lib/libcuthook.so"

# leaks WHAT: the report in $tmp/err, less what is not cuthook's: a leak is cuthook's when a
# frame of its allocation is in cuthook.c or hooklib.c and none is libc's environment or
# cut_esc.
leaks() {
	awk -v what="$1" '
	/leak of/ { flush(); block = $0 "\n"; inleak = 1; next }
	inleak && /^ *#[0-9]/ { block = block $0 "\n"; next }
	inleak { flush() }
	function flush() {
		if (inleak && block ~ /capture\/hook\/cuthook\.c|capture\/hooklib\.c/ &&
		    block !~ /__add_to_environ|tsearch|setenv|cut_esc/) {
			printf "FAIL %s: cuthook leaked:\n%s", what, block
			found = 1
		}
		inleak = 0
		block = ""
	}
	END { flush(); exit found }' "$tmp/err" || fail=1
}

cd "$tmp" || exit 1
mkdir out
# run STATUS ARGS...: cuthook ARGS, which must exit with STATUS, and leave nothing behind.
run() {
	want=$1
	shift
	"$B/bin/cuthook" "$@" 2>err
	rc=$?
	[ $rc = "$want" ] || bad "cuthook $*: exit $rc, want $want: $(head -3 err)"
	leaks "cuthook $*"
}
run 0 -l api -o out/t.jsonl -- true
run 0 -l api -o 'out/t.%p.jsonl' -- true
run 127 -l api -o out/t.jsonl -- "$tmp/no-such-command"
ln -s out/t.jsonl link
run 2 -o "$tmp/no-such-dir/t.jsonl" -- true
run 2 -o link -- true
run 2 -o "$tmp/no-such-dir/t.%p.jsonl" -- true
run 2 -l nosuch -- true
exit $fail
