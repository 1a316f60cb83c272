#!/bin/sh
# Filter throughput on a generated trace: MB/s, events/s and peak RSS of each cut filter,
# next to equivalent jq and python3 commands. Prints a table; asserts nothing.
# usage: tests/bench/bench-filters.sh [megabytes] [runs]     (defaults: 200, 3)
set -eu
mb=${1:-200}
runs=${2:-3}
top=$(cd "$(dirname "$0")/../.." && pwd)
B=${CUT_BUILD:-$top/build}
make -s -C "$top" B="$B" bench-programs >/dev/null
trace=${TMPDIR:-/tmp}/cut-bench-$mb.jsonl
[ -s "$trace" ] || python3 "$top/tests/bench/gentrace.py" "$mb" 1 >"$trace"
bytes=$(wc -c <"$trace")
events=$(wc -l <"$trace")

echo "trace: $trace, $bytes bytes, $events events; $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "kernel $(uname -r); $runs runs each, min/median/max of wall time"
echo
echo "== the shared reader alone (file in memory)"
"$B/bench/readbench" "$trace"
echo

jq_sum='reduce (inputs|select(.layer=="api" and .dur)) as $e ({}; .[$e.cat] += $e.dur)'

# name|command (reads $trace on stdin, output discarded)
cmds="cutstat|$B/bin/cutstat -n 10"
[ -x "$B/bin/cutmerge" ] && cmds="$cmds
cutmerge|$B/bin/cutmerge -"
[ -x "$B/bin/cutioctl" ] && cmds="$cmds
cutioctl|$B/bin/cutioctl"
[ -x "$B/bin/cutgaps" ] && cmds="$cmds
cutgaps|$B/bin/cutgaps"
[ -x "$B/bin/cutchrome" ] && cmds="$cmds
cutchrome|$B/bin/cutchrome"
cmds="$cmds
jq (sum by category)|jq -n '$jq_sum'
python3 (sum by category)|python3 $top/tests/bench/sum_by_category.py"

printf '%-26s %8s %8s %8s %9s %12s %9s\n' tool min_s med_s max_s MB/s events/s peakRSS
printf '%s\n' "$cmds" | while IFS='|' read -r name cmd; do
	times=
	rss=0
	i=0
	while [ $i -lt "$runs" ]; do
		out=$( { /usr/bin/time -f '%e %M' sh -c "$cmd >/dev/null 2>&1" <"$trace"; } 2>&1 | tail -1)
		times="$times ${out% *}"
		r=${out#* }
		[ "$r" -gt "$rss" ] && rss=$r
		i=$((i + 1))
	done
	set -- $(printf '%s\n' $times | sort -n)
	min=$1
	eval "med=\${$(( ($# + 1) / 2 ))}"
	eval "max=\${$#}"
	awk -v n="$name" -v a="$min" -v m="$med" -v z="$max" -v b="$bytes" -v e="$events" -v r="$rss" \
		'BEGIN { s = m > 0 ? m : 0.001; printf "%-26s %8.2f %8.2f %8.2f %9.0f %12.0f %7.0fMB\n", n, a, m, z, b / s / 1e6, e / s, r / 1024 }'
done
