#!/bin/sh
# No silent loss across cutmerge and cutchrome, on generated traces: every record of N inputs
# comes out of cutmerge exactly once (the inputs' meta records included), less the duplicates
# it documents and counts in its trailer; with a small -m, with out-of-order input (sorted by
# cutmerge, or reported where its header claims order), all still come out. cutchrome (whose one-input cases visualize-chrome.sh checks)
# shows every span of several inputs once, of a merged trace once, and across the parts of a
# split.
top=${CUT_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
B=${CUT_BUILD:-$top/build}
PATH=$B/bin:$PATH
command -v python3 >/dev/null || { echo "needs python3"; exit 77; }
t=$(mktemp -d) || exit 2
trap 'rm -rf "$t"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
check=$top/tests/scripts/visualize-chrome-check.py

# Three processes (each input its own pid and tids), the second with a lost record and a
# trailer, as a capture writes them.
gen() { python3 "$top/tests/bench/gentrace.py" 0.5 "$1" | sed "s/\"pid\":4242,\"tid\":424/\"pid\":$2,\"tid\":$3/"; }
gen 11 4242 424 >"$t/a.jsonl"
gen 12 5242 524 | awk 'NR == 200 { l = $0; sub(/"dur".*/, "", l)
	print l "\"pid\":5242,\"tid\":5242,\"layer\":\"meta\",\"name\":\"lost\",\"args\":{\"count\":3,\"reason\":\"ring buffer full\",\"layer\":\"api\"}}" }
	{ print; last = $0 } END { sub(/"dur".*/, "", last)
	print last "\"pid\":5242,\"tid\":5242,\"layer\":\"meta\",\"name\":\"trailer\",\"args\":{\"events\":1}}" }' \
	>"$t/b.jsonl"
gen 13 6242 624 >"$t/c.jsonl"
cat "$t/a.jsonl" "$t/b.jsonl" "$t/c.jsonl" >"$t/abc.jsonl"

# same IN OUT [DOUBLE]: the records of OUT but cutmerge's header and trailer are those of IN,
# each as often (ts, pid, tid, layer, name, dur, ret, args; ids and correlation set aside);
# with DOUBLE, those of IN twice but one of each API call.
cat >"$t/same.py" <<'EOF'
import collections, json, sys
def key(e):
    return (e["ts"], e["pid"], e["tid"], e["layer"], e["name"], e.get("dur"), e.get("ret"),
            json.dumps(e.get("args"), sort_keys=True))
def records(path, drop_own):
    out = collections.Counter()
    for line in open(path):
        e = json.loads(line)
        if drop_own and e["layer"] == "meta" and e["name"] in ("header", "trailer") and \
                e["pid"] == 0:
            continue
        out[key(e)] += 1
    return out
want = records(sys.argv[1], False)
if len(sys.argv) > 3:
    want = collections.Counter({k: n if k[3] == "api" else 2 * n for k, n in want.items()})
got = records(sys.argv[2], True)
bad = [(k, want[k], got[k]) for k in set(want) | set(got) if want[k] != got[k]]
for k, w, g in bad[:5]:
    print("%s %s at %d: %d in, %d out" % (k[3], k[4], k[0], w, g))
sys.exit(1 if bad else 0)
EOF
# trailer FILE KEY: a member of cutmerge's trailer.
trailer() { tail -1 "$1" | python3 -c "import json,sys; print(json.load(sys.stdin)['args']['$2'])"; }
lines() { wc -l <"$1" | tr -d ' '; }

# N inputs, all out.
cutmerge "$t/a.jsonl" "$t/b.jsonl" "$t/c.jsonl" >"$t/m.jsonl" 2>"$t/err" || bad "merge: exit $?: $(cat "$t/err")"
python3 "$t/same.py" "$t/abc.jsonl" "$t/m.jsonl" || bad "merge: records differ"
[ "$(trailer "$t/m.jsonl" events)" = "$(lines "$t/abc.jsonl")" ] ||
	bad "merge: the trailer counts $(trailer "$t/m.jsonl" events), the inputs have $(lines "$t/abc.jsonl")"
[ "$(lines "$t/m.jsonl")" = $(($(lines "$t/abc.jsonl") + 2)) ] || bad "merge: line count"

# One trace in two files (the same file twice is refused): every API call is a duplicate,
# counted; everything else comes twice.
cp "$t/a.jsonl" "$t/a2.jsonl"
cutmerge "$t/a.jsonl" "$t/a.jsonl" >/dev/null 2>&1
[ $? -eq 2 ] || bad "the same file twice: not refused"
cutmerge "$t/a.jsonl" "$t/a2.jsonl" >"$t/aa.jsonl" 2>"$t/err" || bad "dedup: exit $?"
python3 "$t/same.py" "$t/a.jsonl" "$t/aa.jsonl" double || bad "dedup: records differ"
api=$(grep -c '"layer":"api"' "$t/a.jsonl")
[ "$(trailer "$t/aa.jsonl" duplicates)" = "$api" ] ||
	bad "dedup: $(trailer "$t/aa.jsonl" duplicates) duplicates, not $api"
grep -q "$api calls were recorded in both" "$t/err" || bad "dedup: no line about it: $(cat "$t/err")"

# Fewer held than open: API calls go out early without ioctl counts, none is lost.
cutmerge -m 20 "$t/a.jsonl" "$t/b.jsonl" "$t/c.jsonl" >"$t/m20.jsonl" 2>"$t/err" || bad "-m 20: exit $?"
python3 "$t/same.py" "$t/abc.jsonl" "$t/m20.jsonl" || bad "-m 20: records differ"
[ "$(trailer "$t/m20.jsonl" partial)" -gt 0 ] || bad "-m 20: nothing partial"

# Out of order (each pair of lines after the first swapped): sorted by cutmerge, with a memory
# small enough to spill runs to disk; where a header claims the input sorted, reported and
# written where met, or sorted with -S; all out every time.
awk 'NR == 1 { print; next } NR % 2 == 0 { held = $0; next } { print; print held }
	END { if (NR % 2 == 0) print held }' "$t/c.jsonl" >"$t/c-swapped.jsonl"
cat "$t/a.jsonl" "$t/c.jsonl" >"$t/ac.jsonl"
python3 "$top/tests/bench/gentrace.py" 4 14 | sed 's/"pid":4242,"tid":424/"pid":7242,"tid":724/' >"$t/d.jsonl"
awk 'NR == 1 { print; next } NR % 2 == 0 { held = $0; next } { print; print held }
	END { if (NR % 2 == 0) print held }' "$t/d.jsonl" >"$t/d-swapped.jsonl"
cat "$t/a.jsonl" "$t/d.jsonl" >"$t/ad.jsonl"
CUT_SORT_MEMORY=1 cutmerge "$t/a.jsonl" "$t/d-swapped.jsonl" >"$t/ms.jsonl" 2>"$t/err" ||
	bad "unsorted: exit $?: $(cat "$t/err")"
python3 "$t/same.py" "$t/ad.jsonl" "$t/ms.jsonl" || bad "unsorted: records differ"
[ "$(trailer "$t/ms.jsonl" unsorted)" = 0 ] || bad "unsorted: $(trailer "$t/ms.jsonl" unsorted) left unsorted"
[ "$(trailer "$t/ms.jsonl" sorted_inputs)" = 1 ] || bad "unsorted: sorted_inputs is not 1"
python3 -c "
import json, sys
ts = [json.loads(l)['ts'] for l in open(sys.argv[1])]
sys.exit(ts != sorted(ts))" "$t/ms.jsonl" || bad "unsorted: output not sorted"
{ echo '{"ts":0,"pid":1,"tid":1,"layer":"meta","name":"header","args":{"schema":2,"sorted":true}}'
	cat "$t/c-swapped.jsonl"; } >"$t/c-claims.jsonl"
{ echo '{"ts":0,"pid":1,"tid":1,"layer":"meta","name":"header","args":{"schema":2,"sorted":true}}'
	cat "$t/c.jsonl"; } >"$t/c-header.jsonl"
cat "$t/a.jsonl" "$t/c-header.jsonl" >"$t/ach.jsonl"
cutmerge "$t/a.jsonl" "$t/c-claims.jsonl" >"$t/mu.jsonl" 2>"$t/err"
[ $? -eq 1 ] || bad "claims sorted: exit status is not 1"
python3 "$t/same.py" "$t/ach.jsonl" "$t/mu.jsonl" || bad "claims sorted: records differ"
[ "$(trailer "$t/mu.jsonl" unsorted)" -gt 0 ] || bad "claims sorted: not counted"
cutmerge -S "$t/a.jsonl" "$t/c-claims.jsonl" >"$t/mw.jsonl" 2>"$t/err" || bad "-S: exit $?: $(cat "$t/err")"
python3 "$t/same.py" "$t/ach.jsonl" "$t/mw.jsonl" || bad "-S: records differ"
[ "$(trailer "$t/mw.jsonl" unsorted)" = 0 ] || bad "-S: $(trailer "$t/mw.jsonl" unsorted) left unsorted"

# cutchrome: several inputs at once, a merged trace, the parts of a split.
cutchrome "$t/a.jsonl" "$t/b.jsonl" "$t/c.jsonl" >"$t/abc.json" 2>/dev/null || bad "cutchrome a b c: exit $?"
python3 "$check" "$t/abc.jsonl" "$t/abc.json" >"$t/out" || bad "cutchrome a b c: $(head -5 "$t/out")"
cutchrome "$t/m.jsonl" >"$t/m.json" || bad "cutchrome merged: exit $?"
python3 "$check" "$t/m.jsonl" "$t/m.json" >"$t/out" || bad "cutchrome merged: $(head -5 "$t/out")"
cutchrome -w 20ms -o "$t/part" "$t/m.jsonl" >"$t/names" || bad "cutchrome -w -o: exit $?"
[ "$(lines "$t/names")" -gt 2 ] || bad "cutchrome -w -o: not split"
# shellcheck disable=SC2046
python3 "$check" "$t/m.jsonl" $(cat "$t/names") >"$t/out" || bad "cutchrome -w -o: $(head -5 "$t/out")"
exit $fail
