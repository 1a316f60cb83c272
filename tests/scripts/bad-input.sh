#!/bin/sh
# Every filter against bad input: truncated last line, invalid JSON, invalid UTF-8, NUL bytes,
# a 10 MB line, missing and wrongly typed fields, negative and huge numbers, unsorted input,
# empty input, a binary file, unknown layers and schema versions. Each must: not crash, report
# each bad line as "tool: file:line: reason" on one line, keep the good events, and exit with
# the documented status (0 clean, 1 bad lines skipped).
B=${CUT_BUILD:-build}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
good='{"ts":1000,"dur":10,"pid":1,"tid":1,"layer":"api","name":"cuInit","ret":0}'
good2='{"ts":2000,"dur":10,"pid":1,"tid":1,"layer":"api","name":"cuMemAlloc_v2","ret":0,"args":{"bytes":8,"dptr":"0x10"}}'
good3='{"ts":3000,"dur":10,"pid":1,"tid":1,"layer":"api","name":"cuMemFree_v2","ret":0,"args":{"dptr":"0x10"}}'

# name|bad lines|good events kept|exit status
mk() { printf '%s\n' "$2" >"$tmp/$1.jsonl"; }
mk truncated "$good
$good2
$good3
{\"ts\":4000,\"dur\":1"
printf '%s' "$(cat "$tmp/truncated.jsonl")" >"$tmp/truncated.jsonl" # no final newline
mk invalid "$good
{ this is not json
$good2
$good3"
printf '%s\n{"ts":1500,"pid":1,"tid":1,"layer":"api","name":"bad\377utf8"}\n%s\n%s\n' "$good" "$good2" "$good3" >"$tmp/utf8.jsonl"
printf '%s\n{"ts":1500,"pid":1,"tid":1,"lay\000er":"api","name":"x"}\n%s\n%s\n' "$good" "$good2" "$good3" >"$tmp/nul.jsonl"
mk fields "$good
{\"ts\":1500,\"pid\":1,\"tid\":1,\"layer\":\"api\"}
{\"ts\":\"1500\",\"pid\":1,\"tid\":1,\"layer\":\"api\",\"name\":\"x\"}
{\"ts\":1500,\"pid\":[1],\"tid\":1,\"layer\":\"api\",\"name\":\"x\"}
$good2
$good3"
mk numbers "$good
{\"ts\":-5,\"pid\":1,\"tid\":1,\"layer\":\"api\",\"name\":\"x\"}
{\"ts\":123456789012345678901234567890,\"pid\":1,\"tid\":1,\"layer\":\"api\",\"name\":\"x\"}
{\"ts\":9223372036854775807,\"dur\":9223372036854775807,\"pid\":1,\"tid\":1,\"layer\":\"api\",\"name\":\"x\"}
$good2
$good3"
mk layers "{\"ts\":1,\"pid\":1,\"tid\":1,\"layer\":\"meta\",\"name\":\"header\",\"args\":{\"schema\":99}}
$good
{\"ts\":1500,\"pid\":1,\"tid\":1,\"layer\":\"quantum\",\"name\":\"x\"}
$good2
$good3"
head -c 65536 /dev/urandom >"$tmp/binary.jsonl" 2>/dev/null || head -c 65536 /bin/sh >"$tmp/binary.jsonl"
: >"$tmp/empty.jsonl"
python3 -c "
import sys
print('$good')
print('{\"ts\":1500,\"dur\":1,\"pid\":1,\"tid\":1,\"layer\":\"api\",\"name\":\"cuBig\",\"args\":{\"pad\":\"' + 'x' * 10000000 + '\"}}')
print('$good2'); print('$good3')" >"$tmp/bigline.jsonl"

# file | bad lines | good events
cases="truncated 1 3
invalid 1 3
utf8 1 3
nul 1 3
fields 3 3
numbers 3 3
layers 2 3
empty 0 0
bigline 0 4"

# cutplot writes its gnuplot script instead of running gnuplot.
opts() { [ "$1" = cutplot ] && echo -S; }
filters=
for t in cutstat cutmerge cutioctl cutgaps cutchrome cutplot cutperfetto cutturns; do
	[ -x "$B/bin/$t" ] && filters="$filters $t"
done
fail=0
for t in $filters; do
	printf '%s\n' "$cases" | while read -r name nbad ngood; do
		f=$tmp/$name.jsonl
		"$B/bin/$t" $(opts $t) "$f" >"$tmp/out" 2>"$tmp/err" </dev/null
		rc=$?
		want=0
		[ "$nbad" -gt 0 ] && want=1
		if [ $rc -ne $want ]; then
			echo "$t $name: exit status $rc, want $want"; sed 's/^/  /' "$tmp/err" | head -5; exit 1
		fi
		nerr=$(grep -c "^$t: $f:[0-9][0-9]*: " "$tmp/err")
		if [ "$nerr" -ne "$nbad" ]; then
			echo "$t $name: $nerr line errors reported, want $nbad"; sed 's/^/  /' "$tmp/err" | head -8; exit 1
		fi
		# Filters that write events must keep every good one.
		case $t in cutmerge | cutioctl | cutturns)
			n=$(grep -c '"layer":"api"' "$tmp/out")
			[ "$n" -eq "$ngood" ] || { echo "$t $name: kept $n good events, want $ngood"; exit 1; }
		esac
	done || fail=1
	# A binary file: no crash, bad lines reported, status 1.
	"$B/bin/$t" $(opts $t) "$tmp/binary.jsonl" >/dev/null 2>"$tmp/err"
	rc=$?
	[ $rc -eq 1 ] || { echo "$t binary: exit status $rc, want 1"; fail=1; }
done
[ -n "$filters" ] || { echo "no filter built in $B/bin"; exit 1; }
exit $fail
