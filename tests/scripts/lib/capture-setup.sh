# capture-setup.sh: the start every cutcapture test script shares (sourced, not run).
# Sets top, B, cap (the tool), fx (the fixtures), t (a scratch directory removed at exit,
# after the script's own cleanup(), which it may redefine), fail(), valid(), until_ok(),
# has_header() and need_bpf; exits
# 77 when this machine cannot run the test (not root, no jq).
top=${CUT_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
B=${CUT_BUILD:-$top/build}
cap=$B/bin/cutcapture fx=$B/fixtures
t=$(mktemp -d) || exit 2
cleanup() { :; }
trap 'cleanup; rm -rf "$t"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "needs root for BPF"; exit 77; }
command -v jq >/dev/null || { echo "needs jq"; exit 77; }

# need_bpf: exits 77 when BPF programs cannot be loaded here, fails on any other error.
need_bpf() {
	if ! "$cap" -q -l sched -o /dev/null -- true 2>"$t/err"; then
		grep -q "cannot load the BPF programs" "$t/err" && { echo "BPF unavailable: $(cat "$t/err")"; exit 77; }
		fail "cutcapture -- true: $(cat "$t/err")"
	fi
}

# until_ok SECONDS CMD...: waits until CMD succeeds, failing (status 1) after SECONDS. Tests
# wait for a state (a file, a line, a count), which a loaded machine only makes come later,
# never for a time that stands for it.
until_ok() {
	_n=$(($1 * 20))
	shift
	while ! "$@"; do
		_n=$((_n - 1))
		[ $_n -gt 0 ] || return 1
		sleep 0.05
	done
}
# has_header FILE: cutcapture has written the header (it does once attached, flushed within a
# second): the probes are in place.
has_header() { [ -f "$1" ] && [ "$(wc -l <"$1")" -ge 1 ] && head -1 "$1" | grep -q '"name":"header"'; }

# valid FILE: header first, trailer last, ts never decreasing, every line read by cutstat.
valid() {
	[ "$(head -1 "$1" | jq -r .name)" = header ] || fail "$1: no header first"
	[ "$(tail -1 "$1" | jq -r .name)" = trailer ] || fail "$1: no trailer last"
	jq -e -s '[.[].ts] as $t | $t == ($t | sort)' "$1" >/dev/null || fail "$1: not sorted by ts"
	cutstat "$1" >/dev/null 2>"$t/stat.err" || fail "$1: cutstat: $(cat "$t/stat.err")"
}
