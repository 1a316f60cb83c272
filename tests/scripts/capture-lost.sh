#!/bin/sh
# cutcapture, a full ring buffer: with the reader stopped and a 1 MiB buffer, 20000 calls (the
# api layer by uprobes)
# cannot all fit. Every call must be either written or counted lost, in lost records and in
# the trailer, and the trace must stay valid. Needs root with BPF; exits 77 when missing.
. "$(dirname "$0")/lib/capture-setup.sh"
c=
cleanup() { [ -n "$c" ] && kill -CONT "$c" 2>/dev/null; }
need_bpf

# The command says it runs (cutcapture starts it once attached), then waits for "go"; the
# reader is stopped before that, and the loop's 20000 calls all made (it says so at its end)
# before the reader resumes.
"$cap" -q -b 1 -l api --uprobes --libcuda "$fx/libcuda.so.1" -o "$t/lost.jsonl" -- \
	sh -c 'echo running >"$1/ready"; while [ ! -e "$1/go" ]; do sleep 0.05; done
		exec "$0" 20000 >"$1/loop.out"' "$fx/capture-loop" "$t" >/dev/null 2>"$t/err" &
c=$!
until_ok 120 test -s "$t/ready" || fail "the command never started: $(cat "$t/err")"
kill -STOP "$c"
: >"$t/go"
until_ok 300 grep -qs cuCtxGetCurrent "$t/loop.out" || fail "the loop never ended"
kill -CONT "$c"
wait "$c" || fail "exit $?: $(cat "$t/err")"
c=
grep -q "events lost" "$t/err" || fail "no message about lost events: $(cat "$t/err")"
cutstat "$t/lost.jsonl" >/dev/null 2>&1 || fail "cutstat"
api=$(jq -r 'select(.name=="trailer") | .args.layers.api' "$t/lost.jsonl")
lost=$(jq -r 'select(.name=="trailer") | .args.lost' "$t/lost.jsonl")
records=$(jq -s '[.[] | select(.name=="lost") | .args.count] | add // 0' "$t/lost.jsonl")
apilost=$(jq -s '[.[] | select(.name=="lost" and .args.layer=="api") | .args.count] | add // 0' "$t/lost.jsonl")
[ "$apilost" -gt 0 ] || fail "nothing lost with the reader stopped (api $api)"
[ "$records" = "$lost" ] || fail "lost records say $records, the trailer $lost"
[ $((api + apilost)) = 20000 ] || fail "api $api + lost $apilost != 20000 calls"
jq -e -s 'any(.[]; .name == "lost" and .args.reason == "ring buffer full")' "$t/lost.jsonl" \
	>/dev/null || fail "no lost record saying why"
exit 0
