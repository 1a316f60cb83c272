#!/bin/sh
# Every man page (share/man: the tools', cut-events(5), cut(7)) renders at 80 columns without a
# warning from groff: no line that cannot be broken, no unknown macro or misplaced argument.
top=${CUT_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
command -v man >/dev/null 2>&1 || { echo "skip: no man(1) to render the pages"; exit 77; }
man --help 2>&1 | grep -q -- --warnings || { echo "skip: man(1) has no --warnings (not man-db)"; exit 77; }
t=$(mktemp) || exit 2
trap 'rm -f "$t"' EXIT
fail=0 n=0
for page in "$top"/share/man/*.[1-8]; do
	n=$((n + 1))
	MANWIDTH=80 man --warnings -l "$page" 2>"$t" >/dev/null || { echo "$page: man failed"; fail=1; }
	if [ -s "$t" ]; then
		echo "$page:"
		sed 's/^/  /' "$t"
		fail=1
	fi
done
[ $n -gt 0 ] || { echo "no man page found in $top/share/man"; exit 1; }
exit $fail
