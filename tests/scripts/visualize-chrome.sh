#!/bin/sh
# cutchrome: the output parses, every track nests, every input span appears exactly once,
# flows connect API calls to their ioctls, the memory counter and lost markers are right
# (visualize-chrome-check.py), on sorted, unsorted, truncated and split traces.
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }
command -v cutchrome >/dev/null || { echo "cutchrome not built"; exit 1; }
check=tests/scripts/visualize-chrome-check.py
layers=tests/cases/cutchrome/layers/input
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# Sorted traces: the hand-built one with every layer, the demo, a generated one.
python3 tests/bench/gentrace.py 2 3 >"$tmp/gen.jsonl"
for t in $layers samples/demo.jsonl "$tmp/gen.jsonl"; do
	cutchrome "$t" >"$tmp/out.json" 2>"$tmp/err" || bad "$t: exit $?"
	[ -s "$tmp/err" ] && bad "$t: unexpected messages: $(cat "$tmp/err")"
	python3 $check "$t" "$tmp/out.json" || bad "$t: check"
done
# gentrace puts ioctls inside syncs and allocations: they must come with flows.
[ "$(grep -c '"ph":"s"' "$tmp/out.json")" -gt 0 ] || bad "gentrace: no flows"

# Real kernel names, mangled: shown demangled, the trace's name in args.mangled; collectives
# (tests/cases/cutchrome/demangled) say so in args.collective; -M keeps the trace's names.
for t in tests/cases/cutchrome/demangled/input samples/hook-torch-mlp-gpu.jsonl.zst; do
	cutchrome "$t" >"$tmp/out.json" 2>"$tmp/err" || bad "$t: exit $?"
	python3 $check "$t" "$tmp/out.json" || bad "$t: check"
done
grep -q '^{"ph":"X","name":"_ZN' "$tmp/out.json" && bad "a kernel shown mangled"
grep -q '"name":"void cutlass::Kernel2<' "$tmp/out.json" || bad "a kernel not demangled"
cutchrome -M samples/hook-torch-mlp-gpu.jsonl.zst >"$tmp/out.json" || bad "-M: exit $?"
grep -q '^{"ph":"X","name":"_ZN7cutlass7Kernel2I42cutlass' "$tmp/out.json" && ! grep -q '"mangled"' "$tmp/out.json" ||
	bad "-M: names not the trace's"

# The DDP sample, whose runtime and NVTX records carry no host or rank: they are their
# processes' (the host and rank other records of the pid said), a process per rank.
ddp=samples/ddp-2gpu-hook.jsonl.zst
cutchrome $ddp >"$tmp/out.json" 2>"$tmp/err" || bad "ddp: exit $?"
python3 $check $ddp "$tmp/out.json" || bad "ddp: check"
python3 - "$tmp/out.json" <<'PY' || bad "ddp: not a process per rank"
import json, sys
te = json.load(open(sys.argv[1]))["traceEvents"]
names = {e["pid"]: e["args"]["name"] for e in te if e["ph"] == "M" and e["name"] == "process_name"}
used = {e["pid"] for e in te if e["ph"] in ("X", "i")}
procs = sorted(n for p, n in names.items() if p in used and not n.startswith("GPU "))
assert procs == ["rank 0 on vm: python", "rank 1 on vm: python", "torchrun"], procs
PY

# A host up for 200 days: timestamps past 2^53 ns, which doubles cannot hold to the
# nanosecond, come out exact from a base.
python3 -c '
import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    e["ts"] += 17280000000000000
    print(json.dumps(e))' $layers >"$tmp/late.jsonl"
cutchrome "$tmp/late.jsonl" >"$tmp/out.json" || bad "late: exit $?"
grep -q '"base_ns":17279990000000000}' "$tmp/out.json" || bad "late: base is not a second 10 s early"
python3 $check "$tmp/late.jsonl" "$tmp/out.json" || bad "late: check"

# Unsorted: still nested and complete, with one warning.
awk 'NR % 2 == 0' "$tmp/gen.jsonl" >"$tmp/shuf.jsonl"
awk 'NR % 2 == 1' "$tmp/gen.jsonl" >>"$tmp/shuf.jsonl"
cutchrome "$tmp/shuf.jsonl" >"$tmp/out.json" 2>"$tmp/err" || bad "unsorted: exit $?"
grep -q 'not sorted by time' "$tmp/err" || bad "unsorted: no warning"
python3 $check "$tmp/shuf.jsonl" "$tmp/out.json" || bad "unsorted: check"

# Truncated in the middle of a line: valid JSON for the good lines, exit 1.
head -c 3000 $layers >"$tmp/trunc.jsonl"
cutchrome <"$tmp/trunc.jsonl" >"$tmp/out.json" 2>"$tmp/err"
[ $? -eq 1 ] || bad "truncated: exit status is not 1"
grep -q '<stdin>:25: ' "$tmp/err" || bad "truncated: no message for line 25: $(cat "$tmp/err")"
python3 $check "$tmp/trunc.jsonl" "$tmp/out.json" || bad "truncated: check"

# Split by event count and by time window: every part valid, together complete.
for opt in "-m 10" "-w 1us" "--max-events=25"; do
	rm -f "$tmp"/part-*
	cutchrome $opt -o "$tmp/part" $layers >"$tmp/names" || bad "$opt: exit $?"
	[ "$(wc -l <"$tmp/names")" -gt 1 ] || bad "$opt: not split"
	python3 $check $layers $(cat "$tmp/names") || bad "$opt: check"
done
# Without -o the limit cuts the output short, still valid JSON.
cutchrome -m 10 $layers >"$tmp/out.json" 2>"$tmp/err" || bad "-m without -o: exit $?"
grep -q 'use -o prefix' "$tmp/err" || bad "-m without -o: no warning"
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/out.json" || bad "-m: not JSON"

# Usage errors.
cutchrome -w 10parsecs $layers >/dev/null 2>&1
[ $? -eq 2 ] || bad "-w 10parsecs: exit status is not 2"
cutchrome -x >/dev/null 2>"$tmp/err"
grep -q '^usage: cutchrome \[-M\] \[-m max-events\] \[-w window\] \[-o prefix\] \[file \.\.\.\]$' \
	"$tmp/err" || bad "usage line: $(cat "$tmp/err")"
exit $fail
