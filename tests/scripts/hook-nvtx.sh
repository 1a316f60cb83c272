#!/bin/sh
# libcuthook as the NVTX injection tool (cuthook sets NVTX_INJECTION64_PATH): nvtxprog's
# pushed and popped ranges, domain ranges started and ended on another thread, registered
# strings, a mark, named categories, payloads and thread names, exactly; nesting
# NVTX -> runtime -> driver once merged, 20000 times at full speed too; chained to a second
# tool already named in NVTX_INJECTION64_PATH, which sees every call with its own handles; the
# trace read cleanly by every filter.
. "$(dirname "$0")/lib/hook-setup.sh"
[ -f "$fx/nvtxprog" ] && [ -f "$fx/libnvtxtool.so" ] || { echo "build $B/fixtures/nvtxprog first"; exit 1; }
N=3

# nvtx TRACE: "name<TAB>cat<TAB>args" per nvtx event.
nvtx() {
	sed -n 's/^{"ts":[0-9]*,\("dur":[0-9]*,\)\{0,1\}"pid":[0-9]*,"tid":[0-9]*,"layer":"nvtx","name":"\([^"]*\)","cat":"\([a-z]*\)"\(,"args":\(.*\)\)\{0,1\}}$/\2	\3	\5/p' "$1"
}

check_trace() {
	t=$1 what=$2
	nvtx "$t" | cut -f1,2 | sort | uniq -c | awk '{ print $2, $3, $1 }' >"$tmp/got"
	printf '%s\n' "checkpoint mark 1" "dom-push range 1" "inner range $N" "lifetime startend 1" \
		"outer range $N" "registered-step startend 2" "wide-é range 1" "worker range 2" >"$tmp/want"
	diff "$tmp/want" "$tmp/got" >/dev/null ||
		bad "$what: nvtx events: $(diff "$tmp/want" "$tmp/got" | tr '\n' ' ')"
	nvtx "$t" >"$tmp/ev"
	for want in \
		"inner	range	{\"category\":7,\"category_name\":\"io\",\"color\":\"0xff00ff00\",\"payload\":42,\"depth\":1}	$N" \
		"outer	range	{\"depth\":0}	$N" \
		"worker	range	{\"depth\":0}	2" \
		"dom-push	range	{\"domain\":\"cutdom\",\"payload\":2.5,\"depth\":0}	1" \
		"registered-step	startend	{\"domain\":\"cutdom\",\"category\":3,\"category_name\":\"phase\",\"end_tid\":[0-9]*}	2" \
		"lifetime	startend		1" \
		"checkpoint	mark		1"; do
		k=${want##*	}
		want=${want%	*}
		n=$(grep -c "^$want\$" "$tmp/ev")
		[ "$n" -eq "$k" ] || bad "$what: $n events (not $k): $want"
	done
	n=$((2 * N + 8))
	tail -1 "$t" | grep -q "\"nvtx\":$n[,}]" ||
		bad "$what: the trailer does not count $n nvtx events: $(tail -1 "$t" | cut -c1-200)"
	# A range ended on another thread keeps the thread that started it.
	grep '"name":"registered-step"' "$t" | sed 's/.*"tid":\([0-9]*\),.*"end_tid":\([0-9]*\)}.*/\1 \2/' |
		awk '$1 == $2 || $2 == "" { bad = 1 } END { exit bad }' || bad "$what: end_tid equals tid"
	for name in main-thread nvtx-worker; do
		n=$(grep '"layer":"meta","name":"thread"' "$t" | grep -c "\"name\":\"$name\"}")
		[ "$n" -eq 1 ] || bad "$what: $n thread records named $name"
	done
	# Nesting, once merged: NVTX range -> runtime call -> driver call.
	cutmerge "$t" >"$tmp/m.jsonl" || bad "$what: cutmerge failed"
	for pair in inner:outer:$N cudaLaunchKernel:inner:$N cuLaunchKernel:cudaLaunchKernel:$N; do
		child=${pair%%:*} rest=${pair#*:}
		parent=${rest%%:*} k=${rest#*:}
		n=$(grep "\"name\":\"$child\"" "$tmp/m.jsonl" | grep -c "\"pname\":\"$parent\"")
		[ "$n" -eq "$k" ] || bad "$what: $n $child inside $parent, not $k"
	done
}

# cuthook alone.
t=$tmp/t.jsonl
out=$(env -u NVTX_INJECTION64_PATH cuthook -o "$t" -- "$fx/nvtxprog" $N 2>&1) ||
	bad "cuthook nvtxprog: exit $?: $out"
check_trace "$t" alone
head -1 "$t" | grep -q '"nvtx":"on"' || bad "header: nvtx layer not on: $(head -1 "$t" | cut -c1-300)"
# Preloaded without cuthook, nothing names the library as the NVTX tool: the header says so.
CUTHOOK_OUTPUT=$tmp/pre.jsonl LD_PRELOAD="$B/lib/libcuthook.so" env -u NVTX_INJECTION64_PATH \
	"$fx/nvtxprog" $N || bad "preloaded nvtxprog failed"
head -1 "$tmp/pre.jsonl" | grep -q '"nvtx":"off: NVTX_INJECTION64_PATH is not set' ||
	bad "header: nvtx layer not said off"
[ "$(grep -c '"layer":"nvtx"' "$tmp/pre.jsonl")" -eq 0 ] || bad "nvtx events without the tool"

# Nesting at full speed: the loop 20000 times, no time between a range's push, the runtime call
# in it and its driver call, nor between their ends. A call's start and end are TSC reads mapped
# onto the clock by an anchor each thread renews every millisecond (clock.c), the NVTX records'
# times clock reads: each call is still inside its parent, as it ran.
M=20000
cuthook -o "$tmp/many.jsonl" -- "$fx/nvtxprog" $M >/dev/null 2>&1 || bad "cuthook nvtxprog $M: exit $?"
cutmerge "$tmp/many.jsonl" >"$tmp/m.jsonl" || bad "$M: cutmerge failed"
for pair in inner:outer cudaLaunchKernel:inner cuLaunchKernel:cudaLaunchKernel; do
	child=${pair%%:*} parent=${pair#*:}
	n=$(grep "\"name\":\"$child\"" "$tmp/m.jsonl" | grep -c "\"pname\":\"$parent\"")
	[ "$n" -eq $M ] || bad "$M: $n $child inside $parent, not $M"
done

# In a distributed job every NVTX record carries the rank, as API calls do (open ones too).
RANK=3 WORLD_SIZE=4 cuthook -o "$tmp/rank.jsonl" -- "$fx/nvtxprog" $N open >/dev/null 2>&1 ||
	bad "cuthook nvtxprog (RANK=3): exit $?"
[ "$(grep '"layer":"nvtx"' "$tmp/rank.jsonl" | grep -vc '"rank":3,')" -eq 0 ] &&
	grep -q '"layer":"nvtx"' "$tmp/rank.jsonl" || bad "RANK=3: NVTX records without the rank"

# Ranges still open at exit: written at the end, "unended", ending then.
t=$tmp/open.jsonl
cuthook -o "$t" -- "$fx/nvtxprog" $N open >/dev/null 2>&1 || bad "cuthook nvtxprog open: exit $?"
nvtx "$t" | grep -c '^left-open	range	{"depth":0,"unended":true}$' | grep -qx 1 ||
	bad "open: no unended pushed range"
nvtx "$t" | grep -c '^left-started	startend	{"unended":true}$' | grep -qx 1 ||
	bad "open: no unended started range"
n=$((2 * N + 10))
tail -1 "$t" | grep -q "\"nvtx\":$n[,}]" || bad "open: the trailer does not count $n nvtx events"
cutmerge "$t" >/dev/null || bad "open: cutmerge failed"

# Across fork: each process ends the range pushed before the fork, and its own inside it.
t=$tmp/fork.jsonl
cuthook -o "$t" -- "$fx/nvtxprog" 1 fork >/dev/null 2>&1 || bad "cuthook nvtxprog fork: exit $?"
for name in around-fork side; do
	d=0
	[ $name = side ] && d=1
	n=$(grep "\"layer\":\"nvtx\",\"name\":\"$name\",\"cat\":\"range\",\"args\":{\"depth\":$d}" "$t" |
		sed 's/.*"pid":\([0-9]*\),.*/\1/' | sort -u | wc -l)
	[ "$n" -eq 2 ] || bad "fork: range $name at depth $d in $n processes, not 2"
done
# Both sides' ranges are on their own main thread (the child's inherited range too).
grep -E '"name":"(around-fork|side)"' "$t" | grep -v '"pid":\([0-9]*\),"tid":\1,' | grep -q . &&
	bad "fork: a range on a thread of another process: $(grep -E '"name":"(around-fork|side)"' "$t" | head -4)"

# Each trailer counts its own process's or image's events: its layers add up to its events
# and none is negative (a forked child, and the image after an exec that failed, counted the
# parent's or the earlier image's nvtx and runtime events as theirs, and their api as fewer
# than none).
counts_own() {
	python3 - "$1" >"$tmp/own" 2>&1 <<'PY' || bad "$2: $(cat "$tmp/own")"
import json, sys
n = 0
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e.get("name") != "trailer" or e.get("layer") != "meta":
        continue
    a = e["args"]
    n += 1
    layers, d = a["layers"], a.get("durations", {})
    if sum(layers.values()) != a["events"] or min(layers.values()) < 0 or \
            min(d.get("tsc", 0), d.get("clock", 0)) < 0:
        sys.exit("pid %d: events %d, layers %s, durations %s" % (e["pid"], a["events"], layers, d))
if n != 2:
    sys.exit("%d trailers, not 2" % n)
PY
}
counts_own "$t" fork
t=$tmp/execfail.jsonl
cuthook -o "$t" -- "$fx/nvtxprog" 1 execfail >/dev/null 2>&1 || bad "cuthook nvtxprog execfail: exit $?"
grep -q '"name":"after-exec"' "$t" || bad "execfail: no range after the exec that failed"
counts_own "$t" "exec that failed"


# The second tool alone, then chained behind cuthook: it sees the same calls either way,
# always with its own handles and ids.
printf '%s\n' "nvtxRangePushA $((N + 2))" "nvtxRangePushEx $N" "nvtxRangePop $((2 * N + 3))" \
	"nvtxMarkA 1" "nvtxRangeStartA 1" "nvtxRangeEnd 1" "nvtxDomainCreateA 1" \
	"nvtxDomainRegisterStringA 1" "nvtxDomainRangeStartEx 2" "nvtxDomainRangeEnd 2" \
	"nvtxDomainRangePushEx 1" "nvtxDomainRangePop 1" "foreign 0" >"$tmp/tool-want"
NVTX_INJECTION64_PATH=$fx/libnvtxtool.so NVTXTOOL_OUT=$tmp/tool-alone "$fx/nvtxprog" $N ||
	bad "nvtxprog with nvtxtool failed"
diff "$tmp/tool-want" "$tmp/tool-alone" >/dev/null || bad "nvtxtool alone: $(diff "$tmp/tool-want" "$tmp/tool-alone" | tr '\n' ' ')"
t=$tmp/chained.jsonl
out=$(NVTX_INJECTION64_PATH=$fx/libnvtxtool.so NVTXTOOL_OUT=$tmp/tool-chained \
	cuthook -o "$t" -- "$fx/nvtxprog" $N 2>&1) || bad "cuthook nvtxprog, chained: exit $?: $out"
diff "$tmp/tool-want" "$tmp/tool-chained" >/dev/null ||
	bad "nvtxtool chained: $(diff "$tmp/tool-want" "$tmp/tool-chained" | tr '\n' ' ')"
check_trace "$t" chained

# Every filter reads the trace cleanly (exit 0, nothing on stderr).
for cmd in "cutmerge" "cutstat" "cutstat -j" "cutgaps" "cutgaps -j" "cutchrome" "cutperfetto" \
	"cutplot -T dumb"; do
	tool=${cmd%% *}
	command -v "$tool" >/dev/null || continue
	[ "$tool" = cutplot ] && ! command -v gnuplot >/dev/null && continue
	(cd "$tmp" && $cmd "$t" >"$tmp/out" 2>"$tmp/err")
	rc=$?
	[ $rc -eq 0 ] && [ ! -s "$tmp/err" ] || bad "$cmd: exit $rc: $(head -3 "$tmp/err")"
done

# -l chooses the layers: -l api records neither NVTX nor the runtime (the header says so, and
# NVTX_INJECTION64_PATH is left as it was); -l api,nvtx the ranges again.
env -u NVTX_INJECTION64_PATH cuthook -l api -o "$tmp/api.jsonl" -- "$fx/nvtxprog" $N >/dev/null 2>&1 ||
	bad "cuthook -l api: exit $?"
[ "$(grep -c '"layer":"nvtx"\|"layer":"runtime"' "$tmp/api.jsonl")" -eq 0 ] || bad "-l api: nvtx or runtime records"
grep -q '"layer":"api"' "$tmp/api.jsonl" || bad "-l api: no api records"
head -1 "$tmp/api.jsonl" | grep -q '"runtime":"off: not requested (cuthook -l)"' ||
	bad "-l api: header: $(head -1 "$tmp/api.jsonl" | cut -c1-300)"
head -1 "$tmp/api.jsonl" | grep -q '"nvtx":"off: NVTX_INJECTION64_PATH is not set' || bad "-l api: header: nvtx"
env -u NVTX_INJECTION64_PATH cuthook -l api,nvtx -o "$tmp/n.jsonl" -- "$fx/nvtxprog" $N >/dev/null 2>&1 ||
	bad "cuthook -l api,nvtx: exit $?"
[ "$(grep -c '"layer":"nvtx"' "$tmp/n.jsonl")" -eq $((2 * N + 8)) ] || bad "-l api,nvtx: nvtx records"
cuthook -l api,bogus -o "$tmp/x.jsonl" -- true 2>"$tmp/err" && bad "-l api,bogus accepted"
grep -q "unknown layer 'bogus' (known: api, gpu, nvtx, runtime)" "$tmp/err" || bad "-l bogus: $(cat "$tmp/err")"
exit $fail
