# hook-setup.sh: the start every cuthook test script shares (sourced, not run). Sets B, CC,
# tmp (a scratch directory removed at exit), fx (the fixtures, absolute), fail=0 and bad(),
# which records a failure and goes on; fails when the build is missing.
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
