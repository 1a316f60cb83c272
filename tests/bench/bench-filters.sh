#!/bin/sh
# Filter throughput on a generated trace: MB/s and events/s of the input, and peak RSS, for
# every filter in the ways it is used (cutmerge on a trace whose header says it is sorted, as
# cut's capture tools write them, and on one that does not, which it sorts in bounded memory;
# cutstat on the trace compressed: MB/s of the plain bytes), next to equivalent jq and python3
# commands, cutchrome and cutperfetto on a real capture repeated too, and the shared reader alone (cpuMB/s: by the median user + system time, steadier
# than wall time on a shared machine); then the size of a timeline per event as Chrome JSON (cutchrome) and as
# Perfetto protobuf (cutperfetto). Prints tables (min/median/max of wall time); asserts nothing.
# usage: tests/bench/bench-filters.sh [megabytes] [runs]     (defaults: 200, 3)
set -eu
mb=${1:-200}
runs=${2:-3}
top=$(cd "$(dirname "$0")/../.." && pwd)
B=${CUT_BUILD:-$top/build}
make -s -C "$top" B="$B" all bench-programs >/dev/null
dir=${TMPDIR:-/tmp}/cut-bench-$mb
mkdir -p "$dir"
t=$dir/trace.jsonl
[ -s "$t" ] || python3 "$top/tests/bench/gentrace.py" "$mb" 1 >"$t"
# The trace as cut's capture tools leave it (its header saying it is sorted, so cutmerge
# streams it) and compressed, the same events as two inputs, and the ioctls as strace would
# print them.
[ -s "$dir/sorted.jsonl" ] ||
	sed '1s/"tool":"gentrace"}/"tool":"gentrace","sorted":true}/' "$t" >"$dir/sorted.jsonl"
[ -s "$dir/trace.jsonl.gz" ] || gzip -c "$t" >"$dir/trace.jsonl.gz"
[ -s "$dir/trace.jsonl.zst" ] || zstd -q -c "$t" >"$dir/trace.jsonl.zst"
[ -s "$dir/api.jsonl" ] || grep '"layer":"api"' "$t" >"$dir/api.jsonl"
[ -s "$dir/kern.jsonl" ] || grep -v '"layer":"api"' "$t" >"$dir/kern.jsonl"
[ -s "$dir/strace.txt" ] || awk -F'[:,]' '/"layer":"ioctl"/ {
	printf "[pid %d] %d.%09d ioctl(5</dev/nvidiactl>, _IOC(_IOC_READ|_IOC_WRITE, 0x46, 0x2a, 0x20), 0x7ffd5c2a3b40) = 0 <0.%06d>\n",
		$8, $2 / 1e9, $2 % 1e9, $4 / 1000 }' "$t" >"$dir/strace.txt"
# A real multi-layer capture repeated: the 2-GPU DDP sample (cuthook: nvtx, runtime, api, gpu,
# and the symbol records of every kernel) 8 times over, each copy later than the last.
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
d8bytes=$(wc -c <"$d8")
d8events=$(wc -l <"$d8")
bytes=$(wc -c <"$t")
events=$(wc -l <"$t")
echo "trace: $t, $bytes bytes, $events events; $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "kernel $(uname -r); $runs runs each; MB/s and events/s of the input at the median"
echo
echo "== the shared reader alone (file in memory)"
"$B/bench/readbench" "$t"
echo

jq_sum='reduce (inputs|select(.layer=="api" and .dur)) as $e ({}; .[$e.cat] += $e.dur)'
sbytes=$(wc -c <"$dir/strace.txt")
sevents=$(wc -l <"$dir/strace.txt")
# name<TAB>command<TAB>input bytes<TAB>input events (jq programs hold ';')
cmds="cutstat	$B/bin/cutstat $t	$bytes	$events
cutstat, gzip input	$B/bin/cutstat $dir/trace.jsonl.gz	$bytes	$events
cutstat, zstd input	$B/bin/cutstat $dir/trace.jsonl.zst	$bytes	$events
cutmerge, sorted input	$B/bin/cutmerge $dir/sorted.jsonl	$bytes	$events
cutmerge, one input	$B/bin/cutmerge $t	$bytes	$events
cutmerge, api + kernel	$B/bin/cutmerge $dir/api.jsonl $dir/kern.jsonl	$bytes	$events
cutmerge -w 1ms	$B/bin/cutmerge -w 1ms $t	$bytes	$events
cutmerge | cutstat	$B/bin/cutmerge $dir/api.jsonl $dir/kern.jsonl | $B/bin/cutstat	$bytes	$events
cutioctl (annotate)	$B/bin/cutioctl $t	$bytes	$events
cutioctl -c	$B/bin/cutioctl -c $t	$bytes	$events
cutioctl -m (the map)	$B/bin/cutioctl -m $t	$bytes	$events
cutioctl -s (strace text)	$B/bin/cutioctl -s $dir/strace.txt	$sbytes	$sevents
cutgaps	$B/bin/cutgaps $t	$bytes	$events
cutturns	$B/bin/cutturns $t	$bytes	$events
cutchrome	$B/bin/cutchrome $t	$bytes	$events
cutchrome, DDP sample x8	$B/bin/cutchrome $d8	$d8bytes	$d8events
cutperfetto	$B/bin/cutperfetto $t	$bytes	$events
cutperfetto, DDP sample x8	$B/bin/cutperfetto $d8	$d8bytes	$d8events
cutplot -S (no gnuplot)	$B/bin/cutplot -S -c all $t	$bytes	$events
jq (sum by category)	jq -n '$jq_sum' <$t	$bytes	$events
python3 (sum by category)	python3 $top/tests/bench/sum_by_category.py <$t	$bytes	$events"

printf '%-26s %8s %8s %8s %9s %9s %12s %9s\n' tool min_s med_s max_s MB/s cpuMB/s events/s peakRSS
tab=$(printf '\t')
printf '%s\n' "$cmds" | while IFS=$tab read -r name cmd in ev; do
	times=
	cpus=
	rss=0
	i=0
	while [ $i -lt "$runs" ]; do
		# wall s, peak KB, user s, system s
		set -- $( { /usr/bin/time -f '%e %M %U %S' sh -c "$cmd >/dev/null 2>&1"; } 2>&1 | tail -1)
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
	awk -v n="$name" -v a="$min" -v m="$med" -v z="$max" -v b="$in" -v e="$ev" -v r="$rss" -v c="$cpu" \
		'BEGIN { s = m > 0 ? m : 0.001; c = c > 0 ? c : 0.001
		printf "%-26s %8.2f %8.2f %8.2f %9.0f %9.0f %12.0f %7.0fMB\n", n, a, m, z, b / s / 1e6, b / c / 1e6, e / s, r / 1024 }'
done

echo
echo "== adversarial inputs (issue 12): each size twice the last, so linear time doubles"
printf '%-44s %8s %8s %8s\n' input events med_s per_event_us
for n in 20000 40000 80000; do
	"$B/bench/collide" $n >"$dir/collide.jsonl"
	# older-format begins, all open, then their ends oldest first; then begins never ended
	awk -v n=$n 'BEGIN {
		for (i = 0; i < n; i++) printf "{\"phase\":\"B\",\"name\":\"f%d\",\"ts\":%d.0,\"pid\":1,\"tid\":1}\n", i, i
		for (i = 0; i < n; i++) printf "{\"phase\":\"E\",\"name\":\"f%d\",\"ts\":%d.0,\"pid\":1,\"tid\":1}\n", i, n + i }' \
		>"$dir/legacy-fifo.jsonl"
	head -n $n "$dir/legacy-fifo.jsonl" >"$dir/legacy-open.jsonl"
	for what in "cutstat, names colliding in a fixed hash	collide.jsonl" \
		"cutstat, older format, ends oldest first	legacy-fifo.jsonl" \
		"cutstat, older format, begins never ended	legacy-open.jsonl"; do
		name=${what%%"$tab"*}
		f=$dir/${what#*"$tab"}
		ev=$(wc -l <"$f")
		times=
		for i in 1 2 3; do
			out=$( { /usr/bin/time -f '%e' sh -c '"$0" "$1" >/dev/null 2>&1' "$B/bin/cutstat" \
				"$f"; } 2>&1 | tail -1)
			times="$times $out"
		done
		med=$(printf '%s\n' $times | sort -n | sed -n 2p)
		awk -v n="$name" -v e="$ev" -v m="$med" \
			'BEGIN { printf "%-44s %8d %8.2f %8.2f\n", n, e, m, m * 1e6 / e }'
	done
done
rm -f "$dir/collide.jsonl" "$dir/legacy-fifo.jsonl" "$dir/legacy-open.jsonl"

echo
echo "== output per input event (meta records not counted): Chrome JSON and Perfetto protobuf"
printf '%-34s %9s %11s %11s %11s %11s\n' trace events json_B/ev gzip_B/ev proto_B/ev gzip_B/ev
for f in "$t" "$top/samples/capture-torch-mlp.jsonl"; do
	n=$(grep -vc '"layer":"meta"' "$f")
	"$B/bin/cutchrome" "$f" >"$dir/out.json" 2>/dev/null
	"$B/bin/cutperfetto" "$f" >"$dir/out.pftrace"
	set -- $(wc -c <"$dir/out.json") $(gzip -c "$dir/out.json" | wc -c) \
		$(wc -c <"$dir/out.pftrace") $(gzip -c "$dir/out.pftrace" | wc -c)
	awk -v f="${f##*/}" -v n="$n" -v j="$1" -v jz="$2" -v p="$3" -v pz="$4" 'BEGIN {
		printf "%-34s %9d %11.1f %11.1f %11.1f %11.1f\n", f, n, j / n, jz / n, p / n, pz / n }'
done
rm -f "$dir/out.json" "$dir/out.pftrace"
