#!/bin/sh
# An input named twice that can be read only once (standard input, a pipe, a FIFO) is refused
# the same way by every tool that reads through the shared reader (issue 23: `cutchrome - -`
# split standard input between two readers): exit 2 and one line naming both. A regular file
# named twice is read twice by the analysers, but the tools that merge their inputs into one
# timeline (cutmerge, cutplot; cutchrome and cutperfetto have their own test) refuse it: its
# events would all be duplicates.
B=${CUT_BUILD:-build}
PATH=$B/bin:$PATH
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL $*"; fail=1; }
t=samples/demo.jsonl
mkfifo "$tmp/fifo" || { echo "needs mkfifo"; exit 77; }
# tool, and its arguments before the inputs
for tool in cutstat cutgaps cutioctl "cutplot -T dumb" cutmerge; do
	name=${tool%% *}
	pairs='- -|- /dev/stdin|'"$tmp/fifo $tmp/fifo"
	# cutstat opens its named inputs to look for job summaries first: not a FIFO twice
	[ "$name" = cutstat ] && pairs='- -|- /dev/stdin'
	IFS='|'
	set -- $pairs
	IFS=' '
	for pair; do
		# a pipe on standard input; a writer for the FIFO, let go of at the end
		cat "$t" >"$tmp/fifo" &
		writer=$!
		# shellcheck disable=SC2086 # the tool's options and the pair are words
		out=$(cat "$t" | $tool $pair 2>&1 >/dev/null)
		rc=$?
		cat "$tmp/fifo" >/dev/null
		wait $writer
		want="$name: ${pair% *} and ${pair#* } are the same input: name each once"
		[ "$rc" = 2 ] && [ "$out" = "$want" ] || bad "$tool $pair: exit $rc: $out"
	done
	# a regular file twice: read twice, or refused by a tool that merges a timeline
	# shellcheck disable=SC2086
	$tool "$t" "$t" >/dev/null 2>"$tmp/err"
	rc=$?
	if [ "$name" = cutmerge ] || [ "$name" = cutplot ]; then
		[ "$rc" = 2 ] || bad "$name $t $t: exit $rc"
	else
		! grep -q "same input" "$tmp/err" || bad "$tool $t $t: $(cat "$tmp/err")"
	fi
done
exit $fail
