# hook-setup.sh: the start every cuthook test script shares (sourced, not run). Sets B, CC,
# tmp (a scratch directory removed at exit), fx (the fixtures, absolute), fail=0 and bad(),
# which records a failure and goes on, and canonical(); fails when the build is missing.
B=${CUT_BUILD:-build}
CC=${CC:-cc}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() {
	echo "FAIL $*"
	fail=1
}
[ -x "$B/bin/cuthook" ] && [ -f "$B/lib/libcuthook.so" ] && [ -f "$B/fixtures/libcuda.so.1" ] || {
	echo "$(basename "$0"): build $B first (make test-programs)"
	exit 1
}
fx=$(cd "$B/fixtures" && pwd)
# canonical FILE: every line of FILE parses, events on the reader's fast path, and
# cut_event_format writes those back byte for byte (lib/canonical.c); else bad().
canonical() {
	if [ ! -x "$tmp/canonical" ]; then
		_top=${CUT_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
		# a sanitized libcut (make check-sanitized) needs its runtimes linked in
		_san=
		nm "$B/lib/libcut.a" 2>/dev/null | grep -q __asan_init && _san=-fsanitize=address,undefined
		$CC -std=gnu11 -D_GNU_SOURCE $_san -I"$_top/share/lib" -o "$tmp/canonical" \
			"$_top/tests/scripts/lib/canonical.c" "$B/lib/libcut.a" -ljansson -lm ||
			bad "cannot build the canonical-layout checker"
	fi
	"$tmp/canonical" "$1" >"$tmp/canon.out" || bad "$1: $(head -12 "$tmp/canon.out")"
}
