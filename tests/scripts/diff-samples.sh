#!/bin/sh
# cutdiff on real traces (samples/, those with GPU work): a sample against itself, and against
# its own cutstat -j summary (plain and compressed), changes nothing (exit 0); copies with one
# kernel's durations made 1.5 times longer (the one of the largest total, of the fewest and of
# the most instances; every other byte kept) change exactly that kernel's row, by exactly the
# time added (exit 4), on the job and on every rank; a copy with each call of the driver
# function called most often made twice (same durations) changes exactly its row, as more
# calls, not slower. Bad inputs give the statuses of cutdiff(1).
top=${CUT_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
B=${CUT_BUILD:-$top/build}
PATH=$B/bin:$PATH
for c in zstd gzip python3; do
	command -v $c >/dev/null || { echo "needs $c"; exit 77; }
done
[ -x "$B/bin/cutdiff" ] || { echo "build $B first"; exit 1; }
t=$(mktemp -d) || exit 2
trap 'rm -rf "$t"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

cat >"$t/edit.py" <<'EOF'
# edit.py IN OUT kernel NAME: that kernel's durations times 1.5; OUT and the time added.
# edit.py IN OUT twice NAME: each driver call of NAME twice; OUT and its calls.
# edit.py IN pick: the kernels to slow (largest total, fewest, most instances; one line each)
# and the driver function called most often, last.
import collections, json, sys

inp = sys.argv[1]
if sys.argv[2] == "pick":
    n, tot, calls = collections.Counter(), collections.Counter(), collections.Counter()
    for line in open(inp):
        e = json.loads(line)
        if e.get("layer") == "gpu" and "dur" in e:
            n[e["name"]] += 1
            tot[e["name"]] += e["dur"]
        elif e.get("layer") == "api" and "dur" in e:
            calls[e["name"]] += 1
    ks = [k for k in n if tot[k] > 0]
    picks = []
    for k in (max(ks, key=lambda k: (tot[k], k)), min(ks, key=lambda k: (n[k], k)),
              max(ks, key=lambda k: (n[k], k))):
        if k not in picks:
            picks.append(k)
    for k in picks:
        print("kernel", k)
    print("twice", max(calls, key=lambda k: (calls[k], k)))
    sys.exit(0)
out, what, name = sys.argv[2], sys.argv[3], sys.argv[4]
added = 0
with open(inp) as f, open(out, "w") as o:
    for line in f:
        if name in line:
            e = json.loads(line)
            if what == "kernel" and e.get("layer") == "gpu" and e["name"] == name and "dur" in e:
                d = round(e["dur"] * 1.5)
                added += d - e["dur"]
                e["dur"] = d
                line = json.dumps(e, separators=(",", ":")) + "\n"
            elif what == "twice" and e.get("layer") == "api" and e["name"] == name and "dur" in e:
                o.write(line)
                added += 1
        o.write(line)
print(added)
EOF

cat >"$t/check.py" <<'EOF'
# check.py OUT.json what name added: the rows of cutdiff -j that changed are that one only
import json, sys

j = json.load(open(sys.argv[1]))
what, name, added = sys.argv[2], sys.argv[3], int(sys.argv[4])
errs = []
def key(r):
    return r.get("mangled") or r["name"]
scopes = [("job", j["rows"])] + [("rank %d" % k["rank"], k["rows"]) for k in j.get("ranks", [])]
for scope, rows in scopes:
    changed = [r for r in rows if r["changed"]]
    if what == "none":
        if changed:
            errs.append("%s: changed %s" % (scope, [key(r) for r in changed]))
        if any(r["delta_ns"] or r["calls_a"] != r["calls_b"] for r in rows):
            errs.append("%s: rows differ" % scope)
        continue
    mine = [r for r in rows if key(r) == name]
    if [key(r) for r in changed] != [name] * len(changed) or (scope == "job" and len(changed) != 1):
        errs.append("%s: changed %s, want %s" % (scope, [key(r) for r in changed], name))
    if scope != "job" or not mine:
        continue
    r = mine[0]
    if what == "kernel" and (r["delta_ns"] != added or not r["change"].startswith("slower") or not r["duration_changed"]):
        errs.append("job: %s: delta %d (want %d), change %r" % (name, r["delta_ns"], added, r["change"]))
    if what == "twice" and (r["calls_b"] != 2 * r["calls_a"] or r["calls_b"] - r["calls_a"] != added or
                            r["total_b_ns"] != 2 * r["total_a_ns"] or r["change"] != "more" or
                            r["duration_changed"] or not r["calls_changed"]):
        errs.append("job: %s: %s" % (name, r))
    if rows[0] is not r:
        errs.append("job: %s is not the first row" % name)
if errs:
    print("; ".join(errs)[:2000])
    sys.exit(1)
EOF

n=0
for z in "$top"/samples/*.jsonl.zst; do
	s=$(basename "$z" .jsonl.zst)
	case $s in ddp-2gpu-load-*) continue ;; esac # (ddp-2gpu-*'s job, longer: for merge-align.sh)
	zstd -q -dc "$z" >"$t/s.jsonl" || { bad "$s: zstd"; continue; }
	grep -q '"layer":"gpu"' "$t/s.jsonl" || continue
	n=$((n + 1))
	# itself, and its own summary
	cutdiff -j "$t/s.jsonl" "$t/s.jsonl" >"$t/out.json"
	rc=$?
	[ $rc -eq 0 ] || bad "$s against itself: exit $rc"
	python3 "$t/check.py" "$t/out.json" none - 0 || bad "$s against itself"
	cutstat -j "$t/s.jsonl" >"$t/s.json" || bad "$s: cutstat -j: exit $?"
	gzip -c "$t/s.json" >"$t/s.json.gz"
	cutdiff -j "$t/s.jsonl" "$t/s.json" >"$t/sum.json"
	rc=$?
	[ $rc -eq 0 ] || bad "$s against its summary: exit $rc"
	python3 "$t/check.py" "$t/sum.json" none - 0 || bad "$s against its summary"
	cutdiff "$z" "$t/s.json.gz" >"$t/out.txt"
	rc=$?
	[ $rc -eq 0 ] || bad "$s (zstd) against its summary (gzip): exit $rc"
	grep -q '^Job: [0-9]* rows, 0 changed beyond noise' "$t/out.txt" ||
		bad "$s (zstd) against its summary (gzip): $(sed -n 4p "$t/out.txt")"
	# the same numbers from the trace and from the summary
	python3 -c '
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
sys.exit(a["rows"] != b["rows"])' "$t/out.json" "$t/sum.json" || bad "$s: a trace and its summary give other numbers"
	python3 "$t/edit.py" "$t/s.jsonl" pick >"$t/picks" || { bad "$s: pick"; continue; }
	while read -r what name; do
		added=$(python3 "$t/edit.py" "$t/s.jsonl" "$t/b.jsonl" "$what" "$name") ||
			{ bad "$s: edit"; continue; }
		cutdiff -j "$t/s.jsonl" "$t/b.jsonl" >"$t/out.json"
		rc=$?
		[ $rc -eq 4 ] || bad "$s, $what $name: exit $rc, want 4"
		python3 "$t/check.py" "$t/out.json" "$what" "$name" "$added" || bad "$s, $what $name"
	done <"$t/picks"
done
[ $n -ge 5 ] || bad "only $n samples with GPU work"

# bad inputs
zstd -q -dc "$top/samples/hook-torch-train-gpu.jsonl.zst" >"$t/s.jsonl"
cutdiff "$t/s.jsonl" "$t/missing.jsonl" >/dev/null 2>"$t/err"
rc=$?
[ $rc -eq 7 ] || bad "a file missing: exit $rc, want 7 (3 and 4: all rows gone)"
grep -q 'missing.jsonl: No such file' "$t/err" || bad "a file missing: $(cat "$t/err")"
head -c 20000 "$top/samples/hook-torch-train-gpu.jsonl.zst" >"$t/cut.jsonl.zst"
cutdiff "$t/cut.jsonl.zst" "$t/cut.jsonl.zst" >/dev/null 2>"$t/err"
rc=$?
[ $rc -eq 3 ] || bad "a trace cut short, against itself: exit $rc, want 3"
grep -q 'cut short' "$t/err" || bad "a trace cut short: $(cat "$t/err")"
cutstat -j "$t/s.jsonl" | gzip >"$t/s.json.gz"
head -c 6000 "$t/s.json.gz" >"$t/cut.json.gz"
cutdiff "$t/s.jsonl" "$t/cut.json.gz" >/dev/null 2>"$t/err"
rc=$?
[ $rc -eq 3 ] || bad "a summary cut short: exit $rc, want 3"
grep -q 'cut.json.gz: gzip data cut short' "$t/err" || bad "a summary cut short: $(cat "$t/err")"
sed '5s/^/x/' "$t/s.jsonl" >"$t/badline.jsonl"
cutdiff "$t/badline.jsonl" "$t/badline.jsonl" >/dev/null 2>"$t/err"
rc=$?
[ $rc -eq 1 ] || bad "a bad line: exit $rc, want 1"
[ "$(wc -l <"$t/err")" -eq 2 ] || bad "a bad line: $(cat "$t/err")"
echo '{"summary": {"version": 2}}' >"$t/v2.json"
cutdiff "$t/s.jsonl" "$t/v2.json" >/dev/null 2>"$t/err"
rc=$?
[ $rc -eq 2 ] || bad "a summary of version 2: exit $rc, want 2"
cutdiff "$t/s.jsonl" >/dev/null 2>&1
rc=$?
[ $rc -eq 2 ] || bad "one file: exit $rc, want 2"
exit $fail
