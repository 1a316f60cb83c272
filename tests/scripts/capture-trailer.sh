#!/bin/sh
# cutcapture's merged trailer keeps every member of libcuthook's trailers (issue 23): the
# library's keys, top level and inside gpu and durations, are all in cutcapture's trailer for
# the same program (own_thread and format_thread, of one process, become preload.threads), and
# two processes' trailers fold by their rules (share/lib/meta.c): counts summed. Needs root
# with BPF.
. "$(dirname "$0")/lib/capture-setup.sh"
need_bpf
for f in gpuprog libcuda.so.1; do [ -e "$fx/$f" ] || fail "build $f first (make test-programs)"; done
[ -e "$B/lib/libcuthook.so" ] || fail "build libcuthook.so first"
rounds=3
want=$((rounds * 7 + 2))
lib="--libcuda $fx/libcuda.so.1"
# The trailer's keys: top level, and one level down in the objects the format defines.
keys() {
	tail -1 "$1" | jq -r '.args | to_entries[] | .key as $k |
		if ($k == "gpu" or $k == "durations") then (.value | keys[] | "\($k).\(.)") else $k end' | sort
}

# The TSC's rate (durations.tsc_hz) is there once learnt, some 15 ms into a process: never,
# in both runs alike, with CUTHOOK_TSC=0.
export CUTHOOK_TSC=0
"$B/bin/cuthook" -o "$t/hook.jsonl" -- "$fx/gpuprog" $rounds >/dev/null 2>"$t/err" ||
	fail "cuthook: exit $?: $(cat "$t/err")"
$cap -q -l api,gpu,nvtx $lib -o "$t/cap.jsonl" -- "$fx/gpuprog" $rounds >/dev/null 2>"$t/err" ||
	fail "cutcapture: exit $?: $(cat "$t/err")"
valid "$t/cap.jsonl"
# (off_thread is there when the formatter ran, which a short run may end before: below)
keys "$t/hook.jsonl" | grep -vx 'own_thread\|format_thread\|off_thread' >"$t/hook.keys"
keys "$t/cap.jsonl" >"$t/cap.keys"
grep -q '^gpu\.starts_from_call$' "$t/hook.keys" || fail "cuthook's trailer has no gpu.starts_from_call: $(tail -1 "$t/hook.jsonl")"
missing=$(comm -23 "$t/hook.keys" "$t/cap.keys" | tr '\n' ' ')
[ -z "$missing" ] || fail "cutcapture's merged trailer drops the library's $missing"
# the library's threads of the run: the completion thread, and the formatter when it ran (its
# calls counted in off_thread)
own=$(tail -1 "$t/cap.jsonl" | jq '.args | 1 + (if .off_thread then 1 else 0 end)')
[ "$(tail -1 "$t/cap.jsonl" | jq '.args.preload.threads | length')" -eq "$own" ] ||
	fail "own_thread and format_thread not in preload.threads: $(tail -1 "$t/cap.jsonl" | jq -c .args.preload)"

# Two processes (and the shell, a file of its own): their counts summed.
$cap -q -l api,gpu $lib -o "$t/two.jsonl" -- sh -c '"$0" "$1" && "$0" "$1"' "$fx/gpuprog" $rounds \
	>/dev/null 2>"$t/err" || fail "cutcapture, two processes: exit $?: $(cat "$t/err")"
valid "$t/two.jsonl"
got=$(tail -1 "$t/two.jsonl" | jq -c '[.args.preload.files, .args.gpu.timed, .args.gpu.capture_skips, .args.gpu.untimed]')
[ "$got" = "[3,$((2 * want)),6,0]" ] || fail "two processes: [files, timed, capture_skips, untimed] $got, want [3,$((2 * want)),6,0]"
exit 0
