#!/bin/sh
# The runtime's rows of share/data/api-categories.tsv are what share/scripts/gen-rt-categories.sh
# makes of the export list and the rule table (make categories), and name every cuda* export.
top=${CUT_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
"$top/share/scripts/gen-rt-categories.sh" >"$tmp/want" || exit 1
sed -n '/^# CUDA runtime:/,$p' "$top/share/data/api-categories.tsv" | grep -v '^#' >"$tmp/have"
diff -u "$tmp/want" "$tmp/have" >"$tmp/diff" ||
	{ echo "api-categories.tsv's runtime rows are stale: make categories"; head -20 "$tmp/diff"; exit 1; }
n=$(grep -c '^cuda' "$(ls "$top"/share/data/libcudart-*.exports | tail -1)")
[ "$(wc -l <"$tmp/have")" -eq "$n" ] || { echo "$(wc -l <"$tmp/have") runtime rows, $n cuda* exports"; exit 1; }
# A rule table that leaves a function out fails, naming it.
printf 'cudaMalloc\tmemory\n' >"$tmp/rules"
if "$top/share/scripts/gen-rt-categories.sh" "" "$tmp/rules" >/dev/null 2>"$tmp/err"; then
	echo "an incomplete rule table was accepted"; exit 1
fi
grep -q 'cudaArrayGetInfo matches no rule' "$tmp/err" || { echo "unexpected error: $(cat "$tmp/err")"; exit 1; }
echo "$n runtime functions categorised"
