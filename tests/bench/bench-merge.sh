#!/bin/sh
# cutmerge on inputs in every order (issue 26): a real multi-layer capture (the 2-GPU DDP
# sample of cuthook: nvtx, runtime, api, gpu and symbol records) 8 times over, each copy
# later than the last, with its header saying it is sorted; the same with every header taken
# out (what grep and jq leave: it was sorted whole before, as if unsorted); nearly sorted (2 %
# of the lines moved back by up to 300); sorted but for a block of 3000 lines that comes late;
# shuffled; the headerless one from a pipe; and the sorted one split into two hosts, rank 1's
# clock 3 ms ahead (the first reading then looks for the collectives of both files). MB/s of
# the input by wall time and by CPU time (user + system), peak RSS; median of the runs.
# Asserts nothing.
# usage: tests/bench/bench-merge.sh [runs]     (default 3)
set -eu
runs=${1:-3}
top=$(cd "$(dirname "$0")/../.." && pwd)
B=${CUT_BUILD:-$top/build}
# a machine without the build's dependencies runs the cutmerge built elsewhere
make -s -C "$top" B="$B" "$B/bin/cutmerge" >/dev/null 2>&1 ||
	{ [ -x "$B/bin/cutmerge" ] && echo "(make failed: the cutmerge already built)" >&2; } || exit 1
dir=${TMPDIR:-/tmp}/cut-bench-merge
mkdir -p "$dir"
d8=$dir/ddp8.jsonl
[ -s "$d8" ] || zstd -dc "$top/samples/ddp-2gpu-hook.jsonl.zst" | python3 -c '
import json, sys
lines = sys.stdin.read().splitlines()
ev = [json.loads(l) for l in lines]
span = max(e["ts"] + e.get("dur", 0) for e in ev) - min(e["ts"] for e in ev) + 1000
for k in range(8):
    for line, e in zip(lines, ev):
        if k == 0:
            print(line)
        elif e["layer"] != "meta":
            e["ts"] += k * span
            print(json.dumps(e, separators=(",", ":")))' >"$d8"
[ -s "$dir/nohdr.jsonl" ] || grep -v '"name":"header"' "$d8" >"$dir/nohdr.jsonl"
[ -s "$dir/shuf.jsonl" ] || python3 - "$dir" <<'PY'
import random, sys
d = sys.argv[1]
rnd = random.Random(1)
lines = open(f"{d}/nohdr.jsonl").read().splitlines(True)
n = len(lines)
near = list(lines)
for _ in range(n // 50):
    i = rnd.randrange(300, n)
    near.insert(i - rnd.randrange(1, 300), near.pop(i))
open(f"{d}/near.jsonl", "w").writelines(near)
a, b = n // 2, n // 2 + 3000
open(f"{d}/late.jsonl", "w").writelines(lines[:a] + lines[b:] + lines[a:b])
rnd.shuffle(lines)
open(f"{d}/shuf.jsonl", "w").writelines(lines)
PY
[ -s "$dir/hosts/b.jsonl" ] ||
	python3 "$top/tests/scripts/lib/gen-hosts.py" rehost "$d8" "$dir/hosts" --ppm 0
bytes=$(wc -c <"$d8")
echo "trace: $d8, $bytes bytes, $(wc -l <"$d8") lines; $(nproc) CPUs:" \
	"$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $runs runs each"
echo
m=$B/bin/cutmerge
tab=$(printf '\t')
cmds="sorted, its header says so	$m $d8
sorted, no header	$m $dir/nohdr.jsonl
sorted, no header, from a pipe	cat $dir/nohdr.jsonl | $m
nearly sorted (window)	$m $dir/near.jsonl
a block of 3000 late	$m $dir/late.jsonl
shuffled	$m $dir/shuf.jsonl
sorted, no header, -S	$m -S $dir/nohdr.jsonl
two hosts (collectives)	$m $dir/hosts/a.jsonl $dir/hosts/b.jsonl"
echo "| input | wall s, median (min–max) | MB/s | cpuMB/s | peak RSS |"
echo "|---|---|---|---|---|"
printf '%s\n' "$cmds" | while IFS=$tab read -r name cmd; do
	times=
	cpus=
	rss=0
	i=0
	while [ $i -lt "$runs" ]; do
		# wall s, peak KB, user s, system s
		set -- $( { /usr/bin/time -f '%e %M %U %S' sh -c "$cmd >/dev/null"; } 2>&1 | tail -1)
		times="$times $1"
		cpus="$cpus $(echo "$3 $4" | awk '{ print $1 + $2 }')"
		[ "$2" -gt "$rss" ] && rss=$2
		i=$((i + 1))
	done
	cpu=$(printf '%s\n' $cpus | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
	set -- $(printf '%s\n' $times | sort -n)
	min=$1
	eval "med=\${$(( ($# + 1) / 2 ))}"
	eval "max=\${$#}"
	awk -v n="$name" -v a="$min" -v m="$med" -v z="$max" -v b="$bytes" -v r="$rss" -v c="$cpu" \
		'BEGIN { s = m > 0 ? m : 0.001; c = c > 0 ? c : 0.001
		printf "| %s | %.2f (%.2f–%.2f) | %.0f | %.0f | %.0f MB |\n", n, m, a, z, b / s / 1e6, b / c / 1e6, r / 1024 }'
done
