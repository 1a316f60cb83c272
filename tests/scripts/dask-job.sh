#!/bin/sh
# cutjob (share/dask/cutjob.py, issue 28) prints what cutstat prints over the ranks' cutstat -j
# summaries, byte for byte, as text and with -j: on a local Dask cluster of 2 workers (the DDP
# sample's two ranks and its unranked records, one file each, one of them gzipped), and
# through a scheduler whose two workers stand for two hosts (127.0.0.1 and 127.0.0.2) on a
# generated job of 4 ranks: host:glob runs on that host's workers alone (the second host's
# cutstat logs what it ran), a glob without a host finds each file on both hosts and
# summarises it once. A rank's bad line is reported and the job printed (exit 1); a rank
# cutstat fails on, a summary given as a trace, no file matched, a missing file and an unknown
# host each exit 2 naming the operand. Skips only when Dask's distributed cannot be imported.
top=${CUT_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
B=${CUT_BUILD:-$top/build}
PATH=$B/bin:$PATH
export CUT_DATADIR="${CUT_DATADIR:-$top/share/data}"
py=
for p in /usr/bin/python3 python3; do
	"$p" -c 'import distributed' 2>/dev/null && { py=$p; break; }
done
[ -n "$py" ] || { echo "neither /usr/bin/python3 nor python3 can import Dask's distributed (apt-get install python3-distributed, or make deps)"; exit 77; }
tmp=$(mktemp -d) || exit 1
pids=
# The scheduler and workers are stopped with SIGTERM; one that has not exited 30 s later (a
# worker busy reconnecting on a loaded machine ignored it) gets SIGKILL, so the end never hangs.
stop_all() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	n=0
	for p in $pids; do
		while kill -0 "$p" 2>/dev/null && [ $n -lt 150 ]; do sleep 0.2; n=$((n + 1)); done
		kill -9 "$p" 2>/dev/null
	done
	wait
	rm -rf "$tmp"
}
trap stop_all EXIT
fail=0
no() { echo "FAIL: $*"; fail=1; }
cutjob() { "$py" "$B/bin/cutjob" "$@"; }

# want NAME FILE...: cutstat over the files' cutstat -j summaries, in their order, as
# $tmp/NAME.txt and $tmp/NAME.json.
want() {
	name=$1 sums='' k=0
	shift
	for f in "$@"; do
		k=$((k + 1))
		cutstat -j "$f" >"$tmp/$name.$k.sum" 2>/dev/null
		[ $? -le 1 ] || no "cutstat -j $f"
		sums="$sums $tmp/$name.$k.sum"
	done
	# shellcheck disable=SC2086
	cutstat $sums >"$tmp/$name.txt" && cutstat -j $sums >"$tmp/$name.json" || no "cutstat over $name"
}
# same WHAT WANT GOT: the files are equal, byte for byte, and nothing was said on stderr.
same() {
	cmp -s "$2" "$3" || no "$1: differs from cutstat's job view: $(diff "$2" "$3" | head -5)"
	[ ! -s "$tmp/err" ] || no "$1: on stderr: $(head -5 "$tmp/err")"
}

"$py" "$B/bin/cutjob" --help | grep -q '^usage: cutjob ' || no "--help"
[ "$(cutjob --version)" = "cutjob $(sed -n 's/^VERSION = //p' "$top/config.mk")" ] || no "--version"
cutjob -Z >/dev/null 2>&1; [ $? = 2 ] || no "-Z: not exit 2"

# The operands are checked before a local cluster starts.
mkdir "$tmp/ddp" "$tmp/dir"
cutjob "$tmp/nothing*" "$tmp/missing.jsonl" "$tmp/dir" nosuchhost:/x >"$tmp/out" 2>"$tmp/err"
[ $? = 2 ] && [ ! -s "$tmp/out" ] || no "operands naming no file: exit not 2, or output"
for m in "nothing\*: no file matches" "missing.jsonl: no such file" "dir: is a directory" \
	"nosuchhost:/x: no worker on host nosuchhost" "4 of 4 operands name no file"; do
	grep -q "^cutjob: .*$m" "$tmp/err" || no "no '$m' in: $(cat "$tmp/err")"
done

# The DDP sample's ranks, one file each.
zstd -dc "$top/samples/ddp-2gpu-hook.jsonl.zst" | "$py" -c '
import gzip, json, sys
d = sys.argv[1]
out = {0: open(d + "/r0.jsonl", "w"), 1: gzip.open(d + "/r1.jsonl.gz", "wt"),
       None: open(d + "/unranked.jsonl", "w")}
for line in sys.stdin:
    out[json.loads(line).get("rank")].write(line)
for f in out.values():
    f.close()
' "$tmp/ddp" || no "splitting the DDP sample"
want ddp "$tmp/ddp/r0.jsonl" "$tmp/ddp/r1.jsonl.gz" "$tmp/ddp/unranked.jsonl"
grep -q '^Job: 3 summaries: rank 0 rank 1 #3$' "$tmp/ddp.txt" || no "the job: $(head -1 "$tmp/ddp.txt")"
cutjob --workers 2 "$tmp/ddp/r0.jsonl" "$tmp/ddp/r[1-9]*" "$tmp/ddp/unranked.jsonl" \
	>"$tmp/ddp.out" 2>"$tmp/err" || no "cutjob, local: exit $?: $(cat "$tmp/err")"
same "cutjob, local" "$tmp/ddp.txt" "$tmp/ddp.out"
(cd "$tmp/ddp" && cutjob -j --workers=2 r0.jsonl 'r[1-9]*' unranked.jsonl) >"$tmp/ddp.jout" \
	2>"$tmp/err" || no "cutjob -j, local: exit $?: $(cat "$tmp/err")"
same "cutjob -j, local" "$tmp/ddp.json" "$tmp/ddp.jout"

# A scheduler, a worker on 127.0.0.1 and one on 127.0.0.2 whose cutstat logs what it runs.
"$py" "$top/tests/scripts/lib/gen-ranks.py" "$tmp/gen" || no "gen-ranks.py"
job=$tmp/gen/envelope
mkdir "$tmp/mark"
printf '#!/bin/sh\necho "$2" >>"%s"\nexec "%s" "$@"\n' "$tmp/host2.log" "$B/bin/cutstat" \
	>"$tmp/mark/cutstat"
chmod +x "$tmp/mark/cutstat"
sf=$tmp/scheduler.json
"$py" -m dask scheduler --host 127.0.0.1 --port 0 --no-dashboard --scheduler-file "$sf" \
	>"$tmp/scheduler.log" 2>&1 &
pids="$pids $!"
"$py" -m dask worker --scheduler-file "$sf" --host 127.0.0.1 --nthreads 1 --no-nanny \
	--no-dashboard --name one --local-directory "$tmp/w1" >"$tmp/w1.log" 2>&1 &
pids="$pids $!"
PATH=$tmp/mark:$PATH "$py" -m dask worker --scheduler-file "$sf" --host 127.0.0.2 --nthreads 1 \
	--no-nanny --no-dashboard --name two --local-directory "$tmp/w2" >"$tmp/w2.log" 2>&1 &
pids="$pids $!"
"$py" - "$sf" <<'PY' || { echo "FAIL: no scheduler with 2 workers: $(tail -3 "$tmp"/*.log)"; exit 1; }
import os, sys, time
from distributed import Client
deadline = time.monotonic() + 180
while not os.path.exists(sys.argv[1]):
    if time.monotonic() > deadline:
        sys.exit("no scheduler file")
    time.sleep(0.05)
with Client(scheduler_file=sys.argv[1], timeout=180) as c:
    c.wait_for_workers(2, timeout=max(1, deadline - time.monotonic()))
PY
want gen "$job/rank0.jsonl" "$job/rank1.jsonl" "$job/rank2.jsonl" "$job/rank3.jsonl"
cutjob --scheduler "$sf" "127.0.0.1:$job/rank*.jsonl" >"$tmp/gen.out" 2>"$tmp/err" ||
	no "cutjob 127.0.0.1:glob: exit $?: $(cat "$tmp/err")"
same "cutjob 127.0.0.1:glob" "$tmp/gen.txt" "$tmp/gen.out"
[ ! -e "$tmp/host2.log" ] || no "127.0.0.1:glob ran on 127.0.0.2: $(cat "$tmp/host2.log")"
addr=$("$py" -c 'import json, sys; print(json.load(open(sys.argv[1]))["address"])' "$sf")
(cd "$tmp/gen" && cutjob -j --scheduler "$addr" 'two:envelope/rank*.jsonl') >"$tmp/gen.jout" \
	2>"$tmp/err" || no "cutjob -j two:glob: exit $?: $(cat "$tmp/err")"
same "cutjob -j two:glob" "$tmp/gen.json" "$tmp/gen.jout"
[ "$(sort "$tmp/host2.log" 2>/dev/null | tr '\n' ' ')" = "$(ls "$job"/rank*.jsonl | tr '\n' ' ')" ] ||
	no "two:glob: not every file on 127.0.0.2: $(cat "$tmp/host2.log")"
cutjob --scheduler "$sf" "$job/rank*.jsonl" >"$tmp/gen.out" 2>"$tmp/err" ||
	no "cutjob glob on both hosts: exit $?: $(cat "$tmp/err")"
same "cutjob glob on both hosts (each file once)" "$tmp/gen.txt" "$tmp/gen.out"

# A bad line in a rank: reported with its file and host, the job printed, exit 1.
{ head -3 "$job/rank2.jsonl"; echo 'not json'; tail -n +4 "$job/rank2.jsonl"; } >"$tmp/bad.jsonl"
want bad "$job/rank0.jsonl" "$tmp/bad.jsonl"
cutjob --scheduler "$sf" "127.0.0.1:$job/rank0.jsonl" "127.0.0.1:$tmp/bad.jsonl" \
	>"$tmp/bad.out" 2>"$tmp/err"
[ $? = 1 ] || no "a bad line: exit not 1"
cmp -s "$tmp/bad.txt" "$tmp/bad.out" || no "cutjob with a bad line: differs from cutstat's job view"
grep -q "^cutjob: 127.0.0.1:$tmp/bad.jsonl: cutstat: $tmp/bad.jsonl:4: " "$tmp/err" ||
	no "a bad line: not reported: $(cat "$tmp/err")"

# A rank cutstat fails on, and a summary given for a trace: no job, exit 2, the rank named.
printf '#!/bin/sh\ncase $2 in *rank1*) echo "cutstat: $2: out of memory" >&2; exit 2;; esac\nexec "%s" "$@"\n' \
	"$B/bin/cutstat" >"$tmp/failing"
chmod +x "$tmp/failing"
CUTSTAT=$tmp/failing cutjob --scheduler "$sf" "one:$job/rank*.jsonl" "one:$tmp/gen.1.sum" \
	>"$tmp/out" 2>"$tmp/err"
[ $? = 2 ] && [ ! -s "$tmp/out" ] || no "a failing rank: exit not 2, or a job printed"
for m in "$job/rank1.jsonl: cutstat: $job/rank1.jsonl: out of memory" \
	"$job/rank1.jsonl: cutstat failed (exit 2)" "$tmp/gen.1.sum: cutstat -j gave no summary" \
	"2 of 5 ranks have no summary"; do
	grep -qF "$m" "$tmp/err" || no "a failing rank: no '$m' in: $(cat "$tmp/err")"
done
cutjob --scheduler "$sf" "$tmp/none*" "elsewhere:$job/rank0.jsonl" >"$tmp/out" 2>"$tmp/err"
[ $? = 2 ] && grep -q "none\*: no file matches on any worker's host" "$tmp/err" &&
	grep -q "elsewhere:.*: no worker on host elsewhere" "$tmp/err" || no "operands naming no file on a cluster: $(cat "$tmp/err")"
exit $fail
