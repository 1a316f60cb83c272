#!/bin/sh
# gen-rt-categories.sh: the cuda* rows of api-categories.tsv, from the runtime's export list and
# the rules of share/data/runtime-categories.rules (first match, on the name without its
# _ptds/_ptsz suffix). Fails, naming them, when an export matches no rule.
#   share/scripts/gen-rt-categories.sh [exports [rules]]
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
exports=${1:-$(ls "$top"/share/data/libcudart-*.exports | tail -1)}
rules=${2:-$top/share/data/runtime-categories.rules}
grep '^cuda' "$exports" | LC_ALL=C sort -u | while read -r name; do
	base=${name%_ptds}
	base=${base%_ptsz}
	cat=
	while IFS='	' read -r pat c; do
		case $pat in '#'* | '') continue ;; esac
		# shellcheck disable=SC2254
		case $base in $pat) cat=$c; break ;; esac
	done <"$rules"
	if [ -z "$cat" ]; then
		echo "gen-rt-categories.sh: $name matches no rule of $rules" >&2
		exit 1
	fi
	printf '%s\t%s\n' "$name" "$cat"
done
