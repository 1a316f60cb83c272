#!/bin/sh
# DuckDB (the npm build, share/scripts/duckdb-node.sh) over a generated multi-rank job: each
# share/sql recipe end to end (node start, DuckDB start, reading the JSON Lines), all of them
# in one run with and without load.sql, against cutstat over the same files less their nvtx
# and runtime records and envelope host and rank (the question api-functions.sql answers). Prints a table
# (min/median/max of wall time, MB/s and records/s of the input at the median, peak RSS);
# asserts nothing.
# usage: tests/bench/bench-duckdb.sh [ranks] [records-per-rank] [runs]   (4 250000 3)
set -eu
ranks=${1:-4}
records=${2:-250000}
runs=${3:-3}
top=$(cd "$(dirname "$0")/../.." && pwd)
B=${CUT_BUILD:-$top/build}
make -s -C "$top" B="$B" all >/dev/null
NODE_PATH=$("$top/share/scripts/duckdb-node.sh")
export NODE_PATH CUT_DATADIR="$top/share/data"
dir=${TMPDIR:-/tmp}/cut-bench-duckdb-${ranks}x$records
r=0
while [ $r -lt "$ranks" ]; do
	d=$dir/run/host=node$((r / 8))/rank=$r
	mkdir -p "$d"
	[ -s "$d/trace.jsonl" ] ||
		python3 "$top/tests/bench/gentrace.py" -g -r $r -n "$records" 0 $((r + 1)) >"$d/trace.jsonl"
	# For cutstat, the records it knows at full speed: a reader of schema 1 takes host and
	# rank for members it does not know (the slow path) and nvtx and runtime for bad lines.
	[ -s "$dir/known-$r.jsonl" ] || grep -v -e '"layer":"nvtx"' -e '"layer":"runtime"' \
		"$d/trace.jsonl" | sed 's/"host":"[^"]*","rank":[0-9]*,//' >"$dir/known-$r.jsonl"
	r=$((r + 1))
done
glob="$dir/run/*/*/*.jsonl"
bytes=$(cat $glob | wc -c)
events=$(cat $glob | wc -l)
sql=$top/share/sql
echo "job: $ranks ranks in $dir/run, $bytes bytes, $events records (gentrace.py -g -r RANK)"
echo "$(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "DuckDB $(node -e "require('@duckdb/node-api').DuckDBInstance.create().then(d => d.connect()).then(c => c.runAndReadAll('SELECT version()')).then(r => console.log(r.getRows()[0][0]))")," \
	"node $(node --version); $runs runs each; MB/s and records/s of the input at the median"
echo

all=
for f in api-functions api-categories api-transfers layers gaps runtime-functions gpu-kernels \
	gpu-copies ranks straggler-ranks stragglers; do
	all="$all $sql/$f.sql"
done
kbytes=$(cat "$dir"/known-*.jsonl | wc -c)
kevents=$(cat "$dir"/known-*.jsonl | wc -l)
# name<TAB>command<TAB>input bytes<TAB>input records
cmds="cutstat, api+ioctl+gpu only (1 core)	$B/bin/cutstat $dir/known-*.jsonl	$kbytes	$kevents
count(*) over the events view	node $sql/run.js '$glob' $top/tests/bench/count.sql	$bytes	$events"
for f in api-functions layers gaps gpu-kernels gpu-copies ranks stragglers; do
	cmds="$cmds
$f.sql	node $sql/run.js '$glob' $sql/$f.sql	$bytes	$events"
done
cmds="$cmds
all 11 recipes, JSON each time	node $sql/run.js '$glob' $all	$bytes	$events
load.sql, then all 11 recipes	node $sql/run.js '$glob' $sql/load.sql $all	$bytes	$events"

printf '%-34s %8s %8s %8s %9s %12s %9s\n' what min_s med_s max_s MB/s records/s peakRSS
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
		'BEGIN { s = m > 0 ? m : 0.001; printf "%-34s %8.2f %8.2f %8.2f %9.0f %12.0f %7.0fMB\n", n, a, m, z, b / s / 1e6, e / s, r / 1024 }'
done
