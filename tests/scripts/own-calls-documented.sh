#!/bin/sh
# cutcapture(8) names every driver function the library calls on the program's threads, which
# cutcapture leaves unprobed beside it (CUT_HOOK_OWN_CALLS in capture/hooklib.h): the two lists
# must be the same, so that a function the library starts calling cannot go unsaid.
top=${CUT_TOP:-.}
code=$(sed -n '/^#define CUT_HOOK_OWN_CALLS/,/^$/p' "$top/capture/hooklib.h" |
	grep -o '"cu[A-Za-z0-9_]*"' | tr -d '"' | sort)
page=$(awk '/the driver functions the library calls on the program.s threads/ { on = 1; next }
	on && /^\.Fn / { print $2; next }
	on && /^\.Po/ { next }
	on { exit }' "$top/share/man/cutcapture.8" | sort)
[ -n "$code" ] || { echo "FAIL no CUT_HOOK_OWN_CALLS in capture/hooklib.h"; exit 1; }
[ -n "$page" ] || { echo "FAIL no list of the library's own calls in cutcapture(8)"; exit 1; }
if [ "$code" != "$page" ]; then
	echo "FAIL cutcapture(8) and CUT_HOOK_OWN_CALLS differ:"
	t=$(mktemp) || exit 1
	echo "$code" >"$t"
	echo "$page" | diff "$t" - | sed -n 's/^</  only in the code:/p; s/^>/  only in the page:/p'
	rm -f "$t"
	exit 1
fi
