#!/bin/sh
# Every tool answers --help (its usage on standard output, nothing on standard error, exit 0:
# the same usage it prints on a bad option, then maybe its options' lines after a blank line)
# and --version ("tool VERSION", exit 0), and a command a capture tool runs keeps its own
# --help.
top=${CUT_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
B=${CUT_BUILD:-$top/build}
t=$(mktemp -d) || exit 2
trap 'rm -rf "$t"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
version=$(sed -n 's/^VERSION = //p' "$top/config.mk")
# every tool the build makes: the TOOLS of each part of the tree
tools=$(sed -n 's/^TOOLS += //p' "$top"/*/module.mk "$top"/*/*/module.mk)
n=0
for tool in $tools; do
	[ -x "$B/bin/$tool" ] || { bad "$tool not built"; continue; }
	n=$((n + 1))
	"$B/bin/$tool" --help >"$t/out" 2>"$t/err"
	rc=$?
	[ $rc = 0 ] || bad "$tool --help: exit $rc"
	[ -s "$t/err" ] && bad "$tool --help: on stderr: $(cat "$t/err")"
	head -1 "$t/out" | grep -q "^usage: $tool " || bad "$tool --help: $(head -1 "$t/out")"
	"$B/bin/$tool" -Z >"$t/out2" 2>"$t/err2"
	rc=$?
	[ $rc = 2 ] || bad "$tool -Z: exit $rc, want 2"
	# the usage, up to the option lines that follow a blank line (cut_std_args_help)
	sed '/^$/,$d' "$t/out" >"$t/usage"
	grep -v ": invalid option" "$t/err2" | cmp -s - "$t/usage" ||
		bad "$tool --help differs from its usage on a bad option: $(diff "$t/usage" "$t/err2")"
	"$B/bin/$tool" --version >"$t/out" 2>"$t/err"
	rc=$?
	[ $rc = 0 ] && [ ! -s "$t/err" ] && [ "$(cat "$t/out")" = "$tool $version" ] ||
		bad "$tool --version: exit $rc: $(cat "$t/out" "$t/err")"
	# a full standard output is an error, not a success
	if [ -w /dev/full ]; then
		"$B/bin/$tool" --version >/dev/full 2>/dev/null
		[ $? = 2 ] || bad "$tool --version >/dev/full: not exit 2"
	fi
done
[ $n -ge 10 ] || bad "only $n tools: $tools"
# the command's own --help is the command's
if [ -x "$B/fixtures/cuprog" ]; then
	"$B/bin/cuthook" -o "$t/h.jsonl" sh -c 'echo "[$1]"' sh --help >"$t/out" 2>&1
	[ "$(cat "$t/out")" = "[--help]" ] || bad "cuthook CMD --help: $(cat "$t/out")"
fi
exit $fail
