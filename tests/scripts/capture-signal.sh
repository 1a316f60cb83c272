#!/bin/sh
# cutcapture, stopping: SIGTERM (as from kill(1)) is passed on to the command and the capture
# ends with a complete trace and the command's status; a command that ignores it is left
# alone until a second SIGTERM, which stops the capture at once. Needs root with BPF; exits
# 77 when that is missing.
. "$(dirname "$0")/lib/capture-setup.sh"
c=
cleanup() { [ -n "$c" ] && kill -KILL "$c" 2>/dev/null; }
need_bpf
# started WORD: waits until the command has said WORD on standard error.
started() {
	i=0
	while ! grep -q "$1" "$t/err" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
}

# cuprog sleeps 5 s in cuStreamSynchronize; SIGTERM ends it and the capture.
"$cap" -q --libcuda "$fx/libcuda.so.1" -o "$t/term.jsonl" -- \
	sh -c 'echo started >&2; exec "$0" link 5000000' "$fx/cuprog" >/dev/null 2>"$t/err" &
c=$!
started started
sleep 0.3
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

# A command that ignores SIGTERM: the second one stops the capture alone. (The first run's
# "started" is cleared first: the background job truncates the file only once it runs.)
: >"$t/err"
"$cap" -q -l sched -o "$t/ign.jsonl" -- sh -c 'trap "" TERM; echo started $$ >&2; exec sleep 5' \
	2>"$t/err" &
c=$!
started started
kill -TERM "$c"
sleep 0.3
kill -0 "$c" 2>/dev/null || fail "stopped at the first SIGTERM though the command ignored it"
kill -TERM "$c"
wait "$c"
rc=$?
c=
[ $rc = 143 ] || fail "second SIGTERM: exit $rc"
[ "$(tail -1 "$t/ign.jsonl" | jq -r .name)" = trailer ] || fail "second SIGTERM: no trailer"
kill -KILL "$(awk '/^started/ {print $2}' "$t/err")" 2>/dev/null
exit 0
