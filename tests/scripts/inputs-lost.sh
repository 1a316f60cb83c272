#!/bin/sh
# Every filter given several inputs of which some cannot be read (a directory, a missing file,
# an I/O error) reports each one once, goes on with the next, and exits 3 (an input lost) with
# the same output as for the readable inputs alone; a line longer than the reader's limit is
# one bad line; names that carry terminal escapes or newlines reach stderr escaped.
B=${CUT_BUILD:-build}
PATH=$B/bin:$PATH
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

cp "$CUT_TOP/samples/demo.jsonl" "$tmp/a.jsonl"
head -40 "$CUT_TOP/samples/capture-torch-mlp.jsonl" >"$tmp/b.jsonl"
mkdir "$tmp/dir"

# tool | options | output file (- for standard output)
for t in "cutstat|-j|-" "cutgaps|-j|-" "cutioctl|-c|-" "cutmerge||-" "cutchrome||-" \
	"cutperfetto|-o OUT|OUT" "cutplot|-S|-" "cutturns||-"; do
	tool=${t%%|*} rest=${t#*|} opts=${rest%|*} out=${rest#*|}
	o1=$tmp/$tool.want o2=$tmp/$tool.got
	run() { # run OUTPUT INPUTS...
		dest=$1; shift
		if [ "$out" = OUT ]; then
			$tool $(echo "$opts" | sed "s|OUT|$dest|") "$@"
		else
			$tool $opts "$@" >"$dest"
		fi
	}
	run "$o1" "$tmp/a.jsonl" "$tmp/b.jsonl" 2>/dev/null
	want=$?
	run "$o2" "$tmp/a.jsonl" "$tmp/dir" "$tmp/missing.jsonl" "$tmp/b.jsonl" 2>"$tmp/err"
	rc=$?
	[ $rc -eq 3 ] || bad "$tool: exit $rc with an unreadable input, want 3 (readable alone: $want)"
	[ "$(wc -l <"$tmp/err")" -eq 2 ] || bad "$tool: want 2 lines on stderr: $(cat "$tmp/err")"
	grep -q "^$tool: $tmp/dir: " "$tmp/err" || bad "$tool: the directory not named: $(cat "$tmp/err")"
	grep -q "^$tool: $tmp/missing.jsonl: No such file" "$tmp/err" ||
		bad "$tool: the missing file not named: $(cat "$tmp/err")"
	# cutmerge and cutperfetto name their inputs in what they write
	sed "s|$tmp/[a-z/.]*||g" "$o1" >"$o1.n"
	sed "s|$tmp/[a-z/.]*||g" "$o2" >"$o2.n"
	case $tool in
	cutmerge | cutperfetto) ;;
	*) cmp -s "$o1.n" "$o2.n" || bad "$tool: output differs from the readable inputs' alone" ;;
	esac
done

# An overlong line: one bad line, the events around it kept.
python3 -c "
print('{\"ts\":1,\"dur\":2,\"pid\":1,\"tid\":1,\"layer\":\"api\",\"name\":\"cuInit\"}')
print('{\"ts\":2,\"pid\":1,\"tid\":1,\"layer\":\"api\",\"name\":\"x\",\"args\":{\"p\":\"' + 'y' * (65 << 20) + '\"}}')
print('{\"ts\":3,\"dur\":2,\"pid\":1,\"tid\":1,\"layer\":\"api\",\"name\":\"cuInit\"}')" >"$tmp/long.jsonl"
n=$(cutstat -j "$tmp/long.jsonl" 2>"$tmp/err" | python3 -c 'import json,sys; print(sum(f["calls"] for f in json.load(sys.stdin)["functions"]))')
rc=$?
[ "$n" = 2 ] || bad "overlong line: $n calls kept, want 2"
grep -q "^cutstat: $tmp/long.jsonl:2: line longer than 64 MiB: skipped" "$tmp/err" ||
	bad "overlong line not reported as line 2: $(head -c 300 "$tmp/err")"

# Trace strings in messages are escaped: no raw escape or line break reaches the terminal.
printf '{"ts":1,"pid":1,"tid":1,"layer":"\\u001b[2J\\nforged: line","name":"x"}\n' >"$tmp/esc.jsonl"
for tool in cutstat cutgaps cutmerge cutioctl cutchrome cutplot; do
	$tool "$tmp/esc.jsonl" >/dev/null 2>"$tmp/err"
	[ "$(wc -l <"$tmp/err")" -eq 1 ] || bad "$tool: an escaped name spans lines: $(cat -v "$tmp/err")"
	grep -q "$(printf '\033')" "$tmp/err" && bad "$tool: a raw ESC on stderr: $(cat -v "$tmp/err")"
	grep -q '\\x1b\[2J\\nforged' "$tmp/err" || bad "$tool: not escaped as \\x1b...\\n: $(cat -v "$tmp/err")"
done
exit $fail
