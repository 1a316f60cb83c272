#!/bin/sh
# cutcapture, stopping: SIGTERM (as from kill(1)) is passed on to the command and the capture
# ends with a complete trace and the command's status; a command that does not end at it is
# left alone until a second SIGTERM, which stops the capture at once. Every wait is for a state
# (the command inside its call, the signal noted), never a sleep. Needs root with BPF; exits
# 77 when that is missing.
. "$(dirname "$0")/lib/capture-setup.sh"
c=
cleanup() {
	[ -n "$c" ] && kill -KILL "$c" 2>/dev/null
	[ -s "$t/got.pid" ] && kill -KILL "$(cat "$t/got.pid")" 2>/dev/null
	[ -s "$t/sync" ] && kill -KILL $(awk '{print $2}' "$t/sync") 2>/dev/null
}
need_bpf
# cuprog sleeps 60 s in cuStreamSynchronize (the stand-in says when it is there); SIGTERM
# ends it and the capture.
FAKECUDA_SYNC_FILE=$t/sync "$cap" -q --libcuda "$fx/libcuda.so.1" -o "$t/term.jsonl" -- \
	"$fx/cuprog" link 60000000 >/dev/null 2>"$t/err" &
c=$!
until_ok 120 test -s "$t/sync" || fail "SIGTERM: cuprog never reached cuStreamSynchronize: $(cat "$t/err")"
kill -TERM "$c"
wait "$c"
rc=$?
c=
[ $rc = 143 ] || fail "SIGTERM: exit $rc, not 143"
cutstat "$t/term.jsonl" >/dev/null || fail "SIGTERM: cutstat"
[ "$(tail -1 "$t/term.jsonl" | jq -r '.name + " " + (.args.status | tostring)')" = "trailer 143" ] ||
	fail "SIGTERM: no trailer with status 143: $(tail -1 "$t/term.jsonl")"
[ "$(jq -r 'select(.layer=="api") | .name' "$t/term.jsonl" | wc -l)" = 15 ] ||
	fail "SIGTERM: not the 15 calls before cuStreamSynchronize"

# A command that does not end at SIGTERM (it notes it, and goes on): the capture passes the
# first on and goes on with it; the second stops the capture alone.
"$cap" -q -l sched -o "$t/ign.jsonl" -- sh -c 'trap "echo got >>\"\$1\"" TERM
	echo $$ >"$1.pid"; while :; do sleep 0.05; done' sh "$t/got" 2>"$t/err" &
c=$!
until_ok 120 test -s "$t/got.pid" || fail "the command never started: $(cat "$t/err")"
kill -TERM "$c"
until_ok 120 test -s "$t/got" || fail "the first SIGTERM was not passed on"
# (a capture that stopped at the first would be gone within the second)
i=0
while [ $i -lt 20 ]; do
	kill -0 "$c" 2>/dev/null || fail "stopped at the first SIGTERM though the command went on"
	sleep 0.05
	i=$((i + 1))
done
kill -TERM "$c"
wait "$c"
rc=$?
c=
[ $rc = 143 ] || fail "second SIGTERM: exit $rc"
[ "$(tail -1 "$t/ign.jsonl" | jq -r .name)" = trailer ] || fail "second SIGTERM: no trailer"
exit 0
