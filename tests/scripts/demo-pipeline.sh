#!/bin/sh
# The pipelines of the README on the bundled sample, with whatever tools are built: each must
# succeed and produce output; JSON output must parse.
B=${CUT_BUILD:-build}
sample=samples/demo.jsonl
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail() { echo "demo pipeline: $*"; exit 1; }
"$B/bin/cutstat" "$sample" >"$tmp/stat" || fail "cutstat failed"
grep -q '^Verdict: ' "$tmp/stat" || fail "cutstat printed no verdict"
"$B/bin/cutstat" -j <"$sample" | python3 -m json.tool >/dev/null || fail "cutstat -j is not JSON"
if [ -x "$B/bin/cutmerge" ]; then
	"$B/bin/cutmerge" "$sample" | "$B/bin/cutstat" >/dev/null || fail "cutmerge | cutstat failed"
fi
if [ -x "$B/bin/cutgaps" ]; then
	"$B/bin/cutgaps" <"$sample" >"$tmp/gaps" || fail "cutgaps failed"
fi
if [ -x "$B/bin/cutioctl" ]; then
	"$B/bin/cutioctl" <"$sample" >/dev/null || fail "cutioctl failed"
fi
if [ -x "$B/bin/cutchrome" ]; then
	"$B/bin/cutchrome" <"$sample" >"$tmp/trace.json" || fail "cutchrome failed"
	python3 -m json.tool "$tmp/trace.json" >/dev/null || fail "cutchrome output is not JSON"
fi
if [ -x "$B/bin/cutslice" ]; then
	"$B/bin/cutslice" -t 1ms.. "$sample" | "$B/bin/cutstat" >/dev/null || fail "cutslice | cutstat failed"
fi
if [ -x "$B/bin/cutdiff" ]; then
	"$B/bin/cutdiff" "$sample" "$sample" >/dev/null || fail "cutdiff of a trace with itself: exit $?"
fi
if [ -x "$B/bin/cutioctl" ] && [ -x "$B/bin/cutmerge" ]; then
	"$B/bin/cutmerge" "$sample" | "$B/bin/cutioctl" -m >"$tmp/map" || fail "cutmerge | cutioctl -m failed"
	[ -s "$tmp/map" ] || fail "cutioctl -m wrote nothing"
fi
if [ -x "$B/bin/cutplot" ]; then
	"$B/bin/cutplot" -S -c all "$sample" >"$tmp/plot.gp" || fail "cutplot -S -c all failed"
	[ -s "$tmp/plot.gp" ] || fail "cutplot -S wrote no script"
fi
if [ -x "$B/bin/cutperfetto" ]; then
	"$B/bin/cutmerge" "$sample" | "$B/bin/cutperfetto" >"$tmp/t.pftrace" || fail "cutperfetto failed"
	[ -s "$tmp/t.pftrace" ] || fail "cutperfetto wrote nothing"
fi
exit 0
