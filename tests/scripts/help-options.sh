#!/bin/sh
# --help lists each option with a line saying what it does (cut_std_args_help), and the list is
# the man page's: every option of an .It line of the page has its line in --help, and every
# option --help lists is in the page, for every tool with a man page: each must list them.
top=${CUT_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
B=${CUT_BUILD:-$top/build}
t=$(mktemp -d) || exit 2
trap 'rm -rf "$t"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
n=0
for page in "$top"/share/man/*.1 "$top"/share/man/*.8; do
	tool=$(basename "$page" | sed 's/\.[18]$//')
	[ -x "$B/bin/$tool" ] || continue
	"$B/bin/$tool" --help >"$t/help" 2>&1 || { bad "$tool --help: exit $?"; continue; }
	# the option lines: after the usage and a blank line, "  -x, --long ...  meaning"
	sed '1,/^$/d' "$t/help" >"$t/lines"
	if ! grep -q '^  -' "$t/lines"; then
		bad "$tool --help lists no options"
		continue
	fi
	n=$((n + 1))
	grep -v '^  -' "$t/lines" | grep . >/dev/null && bad "$tool --help: $(grep -v '^  -' "$t/lines")"
	awk '{ if (!/^  -[^ ].*  +[^ ]/) print "no meaning: " $0 }' "$t/lines" >"$t/nomeaning"
	[ -s "$t/nomeaning" ] && bad "$tool --help: $(cat "$t/nomeaning")"
	# the options --help names: the words of each line's first column that start with -
	sed 's/^  //; s/   *.*//' "$t/lines" | tr ',' '\n' | sed 's/^ *//; s/[ =].*//' | grep '^-' |
		sort -u >"$t/help-opts"
	# the page's: each ".It Fl x" is -x, each "Fl Fl name" --name
	grep '^\.It Fl' "$page" | sed 's/ Ns / /g' | awk '{
		for (i = 2; i <= NF; i++)
			if ($i == "Fl" && $(i + 1) == "Fl") { print "--" $(i + 2); i += 2 }
			else if ($i == "Fl") { print "-" $(i + 1); i++ }
	}' | sort -u >"$t/page-opts"
	for o in $(cat "$t/page-opts"); do
		grep -qx -- "$o" "$t/help-opts" || bad "$tool: $o is in the man page, not in --help"
	done
	for o in $(cat "$t/help-opts"); do
		case $o in --help | --version) continue ;; esac
		grep -qx -- "$o" "$t/page-opts" || bad "$tool: $o is in --help, not in the man page"
	done
done
[ $n -ge 4 ] || bad "only $n tools list their options"
exit $fail
