#!/bin/sh
# cutcapture, usage and refusals: bad options give the usage text and exit 2, as does a
# user who is not root; a missing libcuda turns the api layer off with one line saying so
# and the header saying why. Runs as root (for the last part); exits 77 otherwise.
. "$(dirname "$0")/lib/capture-setup.sh"

# The usage text is the manual's SYNOPSIS.
syn=$(sed -n '/^\.Sh SYNOPSIS/,/^\.Sh DESCRIPTION/p' "$top/share/man/cutcapture.8" |
	grep -v '^\.Sh' | grep -c .)
[ "$syn" -gt 0 ] || fail "no SYNOPSIS in cutcapture.8"
for args in "" "-x" "-l bogus -- true" "-p 1 -- true" "-b 3 -- true"; do
	# shellcheck disable=SC2086
	"$cap" $args >/dev/null 2>"$t/err"
	rc=$?
	[ $rc = 2 ] || fail "cutcapture $args: exit $rc, not 2"
	grep -q "usage: cutcapture\|cutcapture: -b 3" "$t/err" || fail "cutcapture $args: $(cat "$t/err")"
done

# Options that contradict each other: --hook-api (the default's old spelling) asks for the
# library, --uprobes, -f, --bench-bare and -p for the uprobes.
for args in "--hook-api --uprobes -- true" "--hook-api -f cuInit -- true" \
	"--hook-api --bench-bare -- true" "--hook-api -p 1"; do
	# shellcheck disable=SC2086
	"$cap" $args >/dev/null 2>"$t/err"
	rc=$?
	[ $rc = 2 ] && [ "$(wc -l <"$t/err")" = 1 ] || fail "cutcapture $args: exit $rc: $(cat "$t/err")"
done
# --help says every layer is on by default, as cuthook's -l.
"$cap" --help 2>&1 | grep -q -- "-l layers .*api, ioctl, irq, sched, kernel, runtime, gpu, nvtx (all)" ||
	fail "--help: -l: $("$cap" --help 2>&1 | grep -- '-l layers')"

# Not root: a clear refusal.
if command -v setpriv >/dev/null; then
	setpriv --reuid=65534 --regid=65534 --clear-groups "$cap" -- true >/dev/null 2>"$t/err"
	rc=$?
	[ $rc = 2 ] || fail "not root: exit $rc"
	grep -q "must be run as root" "$t/err" || fail "not root: $(cat "$t/err")"
fi

# No libcuda: the layer is off, said once, and the capture goes on.
if ! "$cap" -q -l api,sched --uprobes --libcuda "$t/nowhere/libcuda.so.1" -o "$t/off.jsonl" -- true 2>"$t/err"; then
	grep -q "cannot load the BPF programs" "$t/err" && { echo "BPF unavailable"; exit 77; }
	fail "no libcuda: exit $?: $(cat "$t/err")"
fi
[ "$(grep -c "api layer off" "$t/err")" = 1 ] || fail "no libcuda: message: $(cat "$t/err")"
jq -e -s 'any(.[]; .name == "header" and (.args.layers.api | startswith("off: ")) and
	.args.layers.sched == "on" and .args.layers.ioctl == "off: not asked for (-l)")' \
	"$t/off.jsonl" >/dev/null || fail "no libcuda: header: $(head -1 "$t/off.jsonl")"

# A kernel function no BTF knows: the kernel layer is off (whatever the kernel allows
# besides), said once, and the capture goes on.
"$cap" -q -l kernel,sched -k cut_no_such_function -o "$t/k.jsonl" -- true 2>"$t/err" ||
	fail "kernel layer: exit $?: $(cat "$t/err")"
[ "$(grep -c "kernel layer off: fentry: no BTF for cut_no_such_function" "$t/err")" = 1 ] ||
	fail "kernel layer: message: $(cat "$t/err")"
jq -e -s 'any(.[]; .name == "header" and
	(.args.layers.kernel | startswith("off: fentry: no BTF for cut_no_such_function")))' \
	"$t/k.jsonl" >/dev/null || fail "kernel layer: header: $(head -1 "$t/k.jsonl")"
exit 0
