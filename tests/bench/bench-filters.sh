#!/bin/sh
# Filter throughput on a generated trace: MB/s and events/s of the input, and peak RSS, for
# every filter in the ways it is used, next to equivalent jq and python3 commands, and the
# shared reader alone; then the size of a timeline per event as Chrome JSON (cutchrome) and as
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
# The same events as two inputs, and the ioctls as strace would print them.
[ -s "$dir/api.jsonl" ] || grep '"layer":"api"' "$t" >"$dir/api.jsonl"
[ -s "$dir/kern.jsonl" ] || grep -v '"layer":"api"' "$t" >"$dir/kern.jsonl"
[ -s "$dir/strace.txt" ] || awk -F'[:,]' '/"layer":"ioctl"/ {
	printf "[pid %d] %d.%09d ioctl(5</dev/nvidiactl>, _IOC(_IOC_READ|_IOC_WRITE, 0x46, 0x2a, 0x20), 0x7ffd5c2a3b40) = 0 <0.%06d>\n",
		$8, $2 / 1e9, $2 % 1e9, $4 / 1000 }' "$t" >"$dir/strace.txt"
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
cutmerge, one input	$B/bin/cutmerge $t	$bytes	$events
cutmerge, api + kernel	$B/bin/cutmerge $dir/api.jsonl $dir/kern.jsonl	$bytes	$events
cutmerge -w 1ms	$B/bin/cutmerge -w 1ms $t	$bytes	$events
cutmerge | cutstat	$B/bin/cutmerge $dir/api.jsonl $dir/kern.jsonl | $B/bin/cutstat	$bytes	$events
cutioctl (annotate)	$B/bin/cutioctl $t	$bytes	$events
cutioctl -c	$B/bin/cutioctl -c $t	$bytes	$events
cutioctl -s (strace text)	$B/bin/cutioctl -s $dir/strace.txt	$sbytes	$sevents
cutgaps	$B/bin/cutgaps $t	$bytes	$events
cutchrome	$B/bin/cutchrome $t	$bytes	$events
cutperfetto	$B/bin/cutperfetto $t	$bytes	$events
cutplot -S (no gnuplot)	$B/bin/cutplot -S -c all $t	$bytes	$events
jq (sum by category)	jq -n '$jq_sum' <$t	$bytes	$events
python3 (sum by category)	python3 $top/tests/bench/sum_by_category.py <$t	$bytes	$events"

printf '%-26s %8s %8s %8s %9s %12s %9s\n' tool min_s med_s max_s MB/s events/s peakRSS
tab=$(printf '\t')
printf '%s\n' "$cmds" | while IFS=$tab read -r name cmd in ev; do
	times=
	rss=0
	i=0
	while [ $i -lt "$runs" ]; do
		out=$( { /usr/bin/time -f '%e %M' sh -c "$cmd >/dev/null 2>&1"; } 2>&1 | tail -1)
		times="$times ${out% *}"
		r=${out#* }
		[ "$r" -gt "$rss" ] && rss=$r
		i=$((i + 1))
	done
	set -- $(printf '%s\n' $times | sort -n)
	min=$1
	eval "med=\${$(( ($# + 1) / 2 ))}"
	eval "max=\${$#}"
	awk -v n="$name" -v a="$min" -v m="$med" -v z="$max" -v b="$in" -v e="$ev" -v r="$rss" \
		'BEGIN { s = m > 0 ? m : 0.001; printf "%-26s %8.2f %8.2f %8.2f %9.0f %12.0f %7.0fMB\n", n, a, m, z, b / s / 1e6, e / s, r / 1024 }'
done

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
