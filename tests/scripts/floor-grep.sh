#!/bin/sh
# Containers and allocation come from share/lib (README's Layout, HACKING): outside it no
# realloc( (cut_xrealloc, CUT_GROW), no err(..., "out of memory") (cut_x*, cut_out_of_memory)
# and no heap written by hand (a parent's index, "(i - 1) / 2": heap.h). The exception is
# libcuthook (capture/hook/), which never exits on the program's behalf and so checks its own
# allocations; its lock-free tables (hook/handles.c, hook/gpu.c) say why they are its own.
top=${CUT_TOP:-.}
cd "$top" || exit 2
files=$(find analyze filters visualize capture -name '*.[ch]' ! -path 'capture/hook/*' \
	! -name vmlinux.h | sort)
[ -n "$files" ] || { echo "no sources found under $top"; exit 1; }
fail=0
# Comments are left out: a line whose first word opens or continues one.
code() { grep -nE "$1" $files | grep -vE '^[^:]+:[0-9]+:[[:space:]]*(/\*|\*)'; }
if out=$(code '(^|[^_[:alnum:]])realloc[[:space:]]*\('); then
	echo "realloc outside share/lib (use cut_xrealloc or CUT_GROW):"
	echo "$out"
	fail=1
fi
if out=$(code 'err[x]?[[:space:]]*\(.*"out of memory"'); then
	echo "an out-of-memory message written by hand (use cut_x* or cut_out_of_memory):"
	echo "$out"
	fail=1
fi
# The parent of i in an array heap; a product such as n * (n - 1) / 2 is not one.
if out=$(grep -nE '\([[:space:]]*[[:alnum:]_]+[[:space:]]*-[[:space:]]*1[[:space:]]*\)[[:space:]]*/[[:space:]]*2' \
	$files capture/hook/*.c | grep -vE '\*[[:space:]]*\([[:space:]]*[[:alnum:]_]+[[:space:]]*-[[:space:]]*1[[:space:]]*\)'); then
	echo "a heap written by hand (use share/lib/heap.h):"
	echo "$out"
	fail=1
fi
exit $fail
