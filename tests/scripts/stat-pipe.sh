#!/bin/sh
# cutstat given a pipe by name (issue 23): /dev/stdin, a shell's <(...), a named FIFO. Whether
# an input is a cutstat -j summary or a trace is decided without taking bytes from a pipe, so
# the report is the one of the same trace given as a file, plain, zstd or gzip (the sniffing
# read ahead 4 KB through stdio, and all of a compressed stream); a summary through a pipe is
# still taken as a summary. A named FIFO is opened once (a second open would wait for a
# writer that is gone).
top=${CUT_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
B=${CUT_BUILD:-$top/build}
PATH=$B/bin:$PATH
for c in python3 zstd gzip timeout mkfifo; do
	command -v $c >/dev/null || { echo "needs $c"; exit 77; }
done
t=$(mktemp -d) || exit 2
trap 'rm -rf "$t"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# 3000 calls of distinct names: a lost start changes the table
python3 - "$t" <<'PY'
import json, sys
d = sys.argv[1]
for r in (0, 1):
    with open(f"{d}/r{r}.jsonl", "w") as f:
        for i in range(3000):
            f.write(json.dumps({"ts": 1000 * i, "dur": 100 + i, "rank": r, "pid": 5 + r, "tid": 5 + r,
                                "layer": "api", "name": f"cuFunc{i % 300}", "ret": 0}) + "\n")
PY
zstd -q -c "$t/r0.jsonl" >"$t/r0.jsonl.zst"
gzip -c "$t/r0.jsonl" >"$t/r0.jsonl.gz"
cutstat "$t/r0.jsonl" >"$t/want" || bad "cutstat of the file: exit $?"

for z in jsonl jsonl.zst jsonl.gz; do
	timeout 120 cutstat /dev/stdin <"$t/r0.$z" >"$t/got" 2>"$t/err" ||
		bad "cutstat /dev/stdin from a file ($z): exit $?: $(head -2 "$t/err")"
	cmp -s "$t/want" "$t/got" || bad "cutstat /dev/stdin from a file ($z) differs"
	cat "$t/r0.$z" | timeout 120 cutstat /dev/stdin >"$t/got" 2>"$t/err" ||
		bad "cutstat /dev/stdin from a pipe ($z): exit $?: $(head -2 "$t/err")"
	cmp -s "$t/want" "$t/got" || bad "cutstat /dev/stdin from a pipe ($z) differs: $(diff "$t/want" "$t/got" | head -4)"
	# two pipes by name at once, through the fds the shell opened
	cat "$t/r0.$z" | timeout 120 cutstat /dev/fd/0 "$t/r1.jsonl" >"$t/got2" 2>"$t/err" ||
		bad "cutstat /dev/fd/0 and a file ($z): exit $?: $(head -2 "$t/err")"
	cutstat "$t/r0.jsonl" "$t/r1.jsonl" >"$t/want2"
	cmp -s "$t/want2" "$t/got2" || bad "cutstat /dev/fd/0 and a file ($z) differs"
done
if command -v bash >/dev/null; then
	bash -c 'timeout 120 cutstat <(zstd -dc "$1")' sh "$t/r0.jsonl.zst" >"$t/got" 2>"$t/err" ||
		bad "cutstat <(zstd -dc): exit $?"
	cmp -s "$t/want" "$t/got" || bad "cutstat <(zstd -dc) differs: $(diff "$t/want" "$t/got" | head -4)"
	bash -c 'timeout 120 cutstat <(cat "$1")' sh "$t/r0.jsonl.zst" >"$t/got" 2>"$t/err" ||
		bad "cutstat <(cat t.zst): exit $?"
	cmp -s "$t/want" "$t/got" || bad "cutstat <(cat t.zst) differs"
fi

# a named FIFO: read once, the trace whole
mkfifo "$t/fifo"
cat "$t/r0.jsonl.zst" >"$t/fifo" &
timeout 120 cutstat "$t/fifo" >"$t/got" 2>"$t/err" || bad "cutstat FIFO: exit $?: $(head -2 "$t/err")"
cmp -s "$t/want" "$t/got" || bad "cutstat FIFO differs"
wait
# a small trace the writer has finished before cutstat opens the FIFO again
head -3 "$t/r0.jsonl" >"$t/small.jsonl"
cutstat "$t/small.jsonl" >"$t/want3"
cat "$t/small.jsonl" >"$t/fifo" &
timeout 120 cutstat "$t/fifo" >"$t/got" 2>"$t/err" || bad "cutstat FIFO (small): exit $?: $(head -2 "$t/err")"
cmp -s "$t/want3" "$t/got" || bad "cutstat FIFO (small) differs"
wait

# summaries through pipes are still summaries: the job is the one of the files
cutstat -j "$t/r0.jsonl" >"$t/s0.json" && cutstat -j "$t/r1.jsonl" >"$t/s1.json" || bad "cutstat -j"
cutstat "$t/s0.json" "$t/s1.json" >"$t/wantjob" || bad "job of files: exit $?"
grep -q '^Job: 2 summaries' "$t/wantjob" || bad "job of files: $(head -1 "$t/wantjob")"
timeout 120 cutstat /dev/stdin "$t/s1.json" <"$t/s0.json" >"$t/got" 2>"$t/err" || bad "job from stdin (file): exit $?"
cmp -s "$t/wantjob" "$t/got" || bad "job from stdin (file) differs"
cat "$t/s0.json" | timeout 120 cutstat /dev/stdin "$t/s1.json" >"$t/got" 2>"$t/err" ||
	bad "job from a pipe: exit $?: $(head -2 "$t/err")"
cmp -s "$t/wantjob" "$t/got" || bad "job from a pipe differs"
# a summary written on one line (jq -c) through a pipe: recognised when that line fits in
# what a pipe holds (64 KB)
cutstat -j "$t/small.jsonl" >"$t/s2.json"
cutstat "$t/s2.json" "$t/s1.json" >"$t/wantjob"
python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))))' "$t/s2.json" >"$t/s2c.json"
cat "$t/s2c.json" | timeout 120 cutstat /dev/stdin "$t/s1.json" >"$t/got" 2>"$t/err" ||
	bad "one-line summary from a pipe: exit $?: $(head -2 "$t/err")"
cmp -s "$t/wantjob" "$t/got" || bad "one-line summary from a pipe differs"
exit $fail
