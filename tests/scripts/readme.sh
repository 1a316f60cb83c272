#!/bin/sh
# The README is the five-minute page (issue 27): at most 250 lines; it keeps the two set-up
# commands .ci/run and a newcomer start from; every file it links or names under share/,
# samples/ or tests/ is there, its pictures are PNG images; and every tool built, and every
# man page, has its line pointing to its page.
top=${CUT_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
B=${CUT_BUILD:-$top/build}
readme=$top/README.md
fail=0
bad() { echo "README: $*"; fail=1; }
n=$(wc -l <"$readme")
[ "$n" -le 250 ] || bad "$n lines, more than 250: move reference detail to the man pages"
grep -q '^make demo ' "$readme" || bad "no 'make demo' line"
grep -q '^make check ' "$readme" || bad "no 'make check' line"
# Markdown links and pictures: ](target)
for f in $(grep -o '](\([^)]*\))' "$readme" | sed 's/^](//; s/)$//' | grep -v '^https\?:'); do
	[ -e "$top/$f" ] || bad "links $f, which is not there"
	case $f in
	*.png) head -c 8 "$top/$f" | od -An -c | grep -q 'P   N   G' || bad "$f is not a PNG image" ;;
	esac
done
grep -q '!\[[^]]*\](share/doc/timeline.png)' "$readme" || bad "does not show share/doc/timeline.png"
grep -q '!\[[^]]*\](share/doc/overview.png)' "$readme" || bad "does not show share/doc/overview.png"
# Paths in backquotes under share/, samples/, tests/ (globs allowed) name what is there.
for p in $(grep -o '`\(share\|samples\|tests\)/[^` ]*`' "$readme" | tr -d '`' | sort -u); do
	# (globbed in $top, whose path may have a space)
	(cd "$top" && set -- $p && [ -e "$1" ]) || bad "names $p, which is not there"
done
# Every man page is linked, and every tool built has its page linked.
for page in "$top"/share/man/*.[1-8]; do
	rel=share/man/$(basename "$page")
	grep -q "]($rel)" "$readme" || bad "no line linking $rel"
done
[ -d "$B/bin" ] || bad "no $B/bin: build first"
for tool in "$B"/bin/*; do
	t=$(basename "$tool")
	case $t in *-static) continue ;; esac
	grep -q "](share/man/$t\.[1-8])" "$readme" || bad "$t has no line linking its man page"
done
exit $fail
