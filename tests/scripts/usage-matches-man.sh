#!/bin/sh
# Every tool's usage message must be its man page's SYNOPSIS, word for word.
B=${CUT_BUILD:-build}
command -v man >/dev/null 2>&1 || { echo "skip: no man(1) to render the pages"; exit 77; }
norm() { tr -s ' \t\n' ' ' | sed 's/^ //; s/ $//'; }
fail=0 n=0
for page in share/man/*.1 share/man/*.8; do
	[ -f "$page" ] || continue
	tool=$(basename "$page" | sed 's/\.[18]$//')
	[ -x "$B/bin/$tool" ] || continue
	n=$((n + 1))
	synopsis=$(MANWIDTH=300 man -l "$page" 2>/dev/null | sed -n '/^SYNOPSIS/,/^[A-Z]/p' |
		sed '1d;$d' | norm)
	usage=$("$B/bin/$tool" --no-such-option 2>&1 >/dev/null | sed -n '/^usage: /,$p' |
		sed 's/^usage: //' | norm)
	if [ "$synopsis" != "$usage" ]; then
		echo "$tool: usage and man page differ:"
		echo "  usage:    $usage"
		echo "  synopsis: $synopsis"
		fail=1
	fi
done
[ $n -gt 0 ] || { echo "no tool with a man page found in $B/bin"; exit 1; }
exit $fail
