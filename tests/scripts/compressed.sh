#!/bin/sh
# Compressed traces (issue 15): every tool reads .gz and .zst inputs, and either on standard
# input, by their magic number, with the same output as the plain trace, concatenated members
# and frames included; a corrupt or truncated one is reported with its file and the line it
# broke off in, the events before the break are kept, and the exit status says an input was
# lost (3). cuthook -o t.gz / t.zst and cutcapture -o t.zst write valid compressed traces that
# hold what the plain ones hold.
top=${CUT_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
B=${CUT_BUILD:-$top/build}
PATH=$B/bin:$PATH
for c in gzip zstd jq; do
	command -v $c >/dev/null || { echo "needs $c"; exit 77; }
done
t=$(mktemp -d) || exit 2
trap 'rm -rf "$t"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

cutmerge "$top/samples/capture-torch-train.jsonl" "$top/samples/hook-torch-train.jsonl" >"$t/a.jsonl" ||
	bad "cutmerge of the samples"
gzip -c "$t/a.jsonl" >"$t/a.jsonl.gz"
zstd -q -c "$t/a.jsonl" >"$t/a.jsonl.zst"
gzip -c "$t/a.jsonl" >"$t/a.data" # a gzip file by any other name
head -2000 "$t/a.jsonl" | gzip -c >"$t/parts.gz"
tail -n +2001 "$t/a.jsonl" | gzip -c >>"$t/parts.gz"
head -3000 "$t/a.jsonl" | zstd -q -c >"$t/parts.zst"
tail -n +3001 "$t/a.jsonl" | zstd -q -c >>"$t/parts.zst"

# run FILE TOOL...: the tool's output, exit status, -o file (cutperfetto) and messages, the
# input's name (or "<stdin>" when FILE is -) made "IN".
run() {
	in=$1
	shift
	if [ "$in" = - ]; then
		"$@" <"$t/a.jsonl.zst" >"$t/raw" 2>"$t/err"
	else
		"$@" "$in" >"$t/raw" 2>"$t/err"
	fi
	echo "rc $?" >>"$t/raw"
	[ -f "$t/pf" ] && cat "$t/pf" >>"$t/raw" && rm -f "$t/pf"
	cat "$t/err" >>"$t/raw"
	[ "$in" = - ] && in="<stdin>"
	sed -e "s#$in#IN#g" -e 's#"file":"-"#"file":"IN"#' "$t/raw" >"$t/out"
}
for tool in cutstat "cutstat -j" cutgaps cutioctl "cutioctl -c" "cutioctl -m" cutmerge cutchrome \
	"cutplot -S" "cutperfetto -o $t/pf"; do
	run "$t/a.jsonl" $tool
	mv "$t/out" "$t/want"
	for f in a.jsonl.gz a.jsonl.zst a.data parts.gz parts.zst; do
		run "$t/$f" $tool
		cmp -s "$t/out" "$t/want" || bad "$tool $f: not as on the plain trace: $(diff "$t/want" "$t/out" | head -5)"
	done
	run - $tool
	cmp -s "$t/out" "$t/want" || bad "$tool < a.jsonl.zst: not as on the plain trace: $(diff "$t/want" "$t/out" | head -5)"
done

# Truncated and corrupt: file:line, the events before kept, exit 3.
n=$(wc -l <"$t/a.jsonl")
size=$(wc -c <"$t/a.jsonl.gz")
head -c $((size / 2)) "$t/a.jsonl.gz" >"$t/cut.gz"
size=$(wc -c <"$t/a.jsonl.zst")
head -c $((size / 2)) "$t/a.jsonl.zst" >"$t/cut.zst"
for f in cut.gz cut.zst; do
	cutmerge "$t/$f" >"$t/out" 2>"$t/err"
	rc=$?
	[ $rc = 3 ] || bad "$f: exit $rc, want 3"
	grep -q "^cutmerge: $t/$f:[0-9][0-9]*: \(gzip\|zstd\) data cut short" "$t/err" ||
		bad "$f: not reported with its line: $(cat "$t/err")"
	line=$(sed -n 's/.*:\([0-9]*\): [gz][zs][it][pd] data cut short.*/\1/p' "$t/err")
	got=$(grep -vc '"layer":"meta"' "$t/out")
	# every whole line before the break came through (the header's meta records aside)
	want=$(head -n $((line - 1)) "$t/a.jsonl" | grep -vc '"layer":"meta"')
	[ "$got" -ge "$want" ] && [ "$line" -gt 100 ] && [ "$line" -lt "$n" ] ||
		bad "$f: broke at line $line of $n, $got events out, want $want"
done
python3 - "$t" <<'EOF'
import sys
t = sys.argv[1]
for f, at in (("a.jsonl.gz", 0.5), ("a.jsonl.zst", 0.5)):
    d = bytearray(open(f"{t}/{f}", "rb").read())
    d[int(len(d) * at)] ^= 0x55
    open(f"{t}/bad.{f.split('.')[-1]}", "wb").write(d)
EOF
for f in bad.gz bad.zst; do
	cutstat "$t/$f" >/dev/null 2>"$t/err"
	rc=$?
	[ $rc = 3 ] || bad "$f: exit $rc, want 3"
	grep -q "^cutstat: $t/$f:[0-9][0-9]*: corrupt \(gzip\|zstd\) data" "$t/err" ||
		bad "$f: corruption not reported: $(tail -2 "$t/err")"
done
# a lost input among several: the others read, exit 3
cutstat "$t/cut.zst" "$t/a.jsonl.gz" >/dev/null 2>&1
[ $? = 3 ] || bad "a truncated input among several: not exit 3"
printf '\037\213' | cutstat >/dev/null 2>"$t/err"
[ $? = 3 ] && grep -q '^cutstat: <stdin>:1: gzip data cut short' "$t/err" ||
	bad "two bytes of gzip magic: $(cat "$t/err")"

# Output: cuthook -o with .gz and .zst; the launcher compresses as it sorts.
if [ -x "$B/bin/cuthook" ] && [ -x "$B/fixtures/cuprog" ]; then
	cuthook -o "$t/h.jsonl" -- "$B/fixtures/cuprog" late >/dev/null || bad "cuthook plain"
	for z in gz zst; do
		cuthook -o "$t/h.jsonl.$z" -- "$B/fixtures/cuprog" late >/dev/null || bad "cuthook -o .$z"
		case $z in gz) gzip -t "$t/h.jsonl.$z" && zcat "$t/h.jsonl.$z" >"$t/h.$z.plain" ;;
		zst) zstd -q -t "$t/h.jsonl.$z" && zstd -q -d -c "$t/h.jsonl.$z" >"$t/h.$z.plain" ;;
		esac || bad "cuthook -o .$z: not a valid .$z file"
		[ "$(jq -r .name "$t/h.$z.plain" | sort)" = "$(jq -r .name "$t/h.jsonl" | sort)" ] ||
			bad "cuthook -o .$z: not the records of the plain trace"
		[ "$(head -1 "$t/h.$z.plain" | jq .args.sorted)" = true ] || bad "cuthook -o .$z: not sorted"
		cutstat "$t/h.jsonl.$z" >/dev/null 2>"$t/err" && [ ! -s "$t/err" ] ||
			bad "cutstat of cuthook's .$z: $(cat "$t/err")"
	done
else
	echo "note: no cuthook fixtures (make test-programs): its output not tested"
fi

# Output: cutcapture -o .zst (root and BPF).
if [ "$(id -u)" -eq 0 ] && cutcapture -q -l sched -o "$t/c.jsonl.zst" -- true 2>"$t/err"; then
	zstd -q -t "$t/c.jsonl.zst" || bad "cutcapture -o .zst: not a valid zstd file"
	zstd -q -d -c "$t/c.jsonl.zst" | head -1 | jq -e '.name == "header"' >/dev/null ||
		bad "cutcapture -o .zst: no header first"
	zstd -q -d -c "$t/c.jsonl.zst" | tail -1 | jq -e '.name == "trailer"' >/dev/null ||
		bad "cutcapture -o .zst: no trailer last"
	cutstat "$t/c.jsonl.zst" >/dev/null || bad "cutstat of cutcapture's .zst"
	cutcapture -q -l sched -o "$t/c.jsonl.gz" -- true && gzip -t "$t/c.jsonl.gz" ||
		bad "cutcapture -o .gz: not a valid gzip file"
else
	echo "note: cutcapture -o .zst not tested (needs root and BPF): $(cat "$t/err")"
fi
exit $fail
