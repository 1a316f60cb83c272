#!/bin/sh
# Host and rank labels (issues 15, 16; cut-events(5)): a launcher starts two 'ranks' of cuprog
# against the stand-in libcuda, rank 0 named by RANK/LOCAL_RANK/WORLD_SIZE, rank 1 by Open
# MPI's variables; under cuthook (a file per process, then cutmerge) and under cutcapture
# (root, BPF; skipped without), every record of each rank from its exec on carries host and
# its rank, its process record says rank, local_rank and world_size, the launcher's records
# (and a rank's before its exec) carry neither, and cutmerge of both captures keeps every label;
# cutcapture -p reads a rank found running from /proc.
top=${CUT_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
B=${CUT_BUILD:-$top/build}
PATH=$B/bin:$PATH
fx=$B/fixtures
t=$(mktemp -d) || exit 2
trap 'rm -rf "$t"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
command -v jq >/dev/null || { echo "needs jq"; exit 77; }
[ -x "$B/bin/cuthook" ] && [ -x "$fx/cuprog" ] || { echo "build $B first (make test-programs)"; exit 1; }
host=$(uname -n)
launch='RANK=0 LOCAL_RANK=0 WORLD_SIZE=2 "$0" link >/dev/null &
OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_LOCAL_RANK=1 OMPI_COMM_WORLD_SIZE=2 "$0" link >/dev/null &
wait'
n=$(cuthook -o "$t/one.jsonl" -- "$fx/cuprog" link >/dev/null && jq -s '[.[] | select(.layer == "api")] | length' "$t/one.jsonl")
[ "$n" -gt 0 ] || bad "cuprog link: no calls"

# labelled FILE WHAT: checks the labels of every record in FILE.
labelled() {
	# pid -> rank, from the process records of the cuprog processes
	jq -e -s --arg host "$host" --argjson n "$n" '
	  [.[] | select(.layer == "meta" and .name == "process" and (.args.cmdline // "" | test("cuprog link")))] as $procs |
	  ($procs | map({key: (.pid | tostring), value: .args.rank}) | from_entries) as $rank |
	  ($procs | map({key: (.pid | tostring), value: .ts}) | from_entries) as $exec |
	  def ranked: $rank[.pid | tostring] != null and .ts >= $exec[.pid | tostring];
	  ($procs | length) == 2 and
	  ($procs | map([.args.rank, .args.local_rank, .args.world_size]) | sort) == [[0, 0, 2], [1, 1, 2]] and
	  all(.[] | select(ranked); .host == $host and .rank == $rank[.pid | tostring]) and
	  all(.[] | select(ranked | not); has("host") or has("rank") | not) and
	  ([.[] | select(.layer == "api") | .rank] | group_by(.) | map([.[0], length])) == [[0, $n], [1, $n]]
	' "$1" >/dev/null || bad "$2: labels: $(jq -c -s '[.[] | select(.layer != "api") | {name, pid, host, rank, a: (.args | {rank, local_rank, world_size, cmdline})}]' "$1" | cut -c1-600)"
}

# cuthook: a file per process, merged.
mkdir "$t/h"
cuthook -o "$t/h/t.%p.jsonl" -- sh -c "$launch" "$fx/cuprog" || bad "cuthook: exit status $?"
cutmerge "$t"/h/t.*.jsonl >"$t/hook.jsonl" || bad "cutmerge of the hook's files: exit status $?"
labelled "$t/hook.jsonl" "cuthook + cutmerge"
for f in "$t"/h/t.*.jsonl; do
	grep -q '"name":"cuInit"' "$f" || continue
	jq -e -s 'all(.[]; has("rank") and has("host"))' "$f" >/dev/null || bad "cuthook: $f: a record without host and rank"
done

# Every layer the hook writes is labelled: the runtime (rtprog on the stand-in libcudart), NVTX
# ranges, those still open at exit included (nvtxprog), the gpu layer (cuprog above).
if [ -x "$fx/rtprog" ] && [ -x "$fx/nvtxprog" ]; then
	RANK=5 cuthook -o "$t/rt.jsonl" -- "$fx/rtprog" 2 2 >/dev/null 2>&1 || bad "cuthook rtprog: exit status $?"
	RANK=6 env -u NVTX_INJECTION64_PATH cuthook -o "$t/nvtx.jsonl" -- "$fx/nvtxprog" 2 open >/dev/null 2>&1 ||
		bad "cuthook nvtxprog: exit status $?"
	for f in "rt 5 runtime" "nvtx 6 nvtx"; do
		set -- $f
		jq -e -s --arg host "$host" --argjson r "$2" --arg l "$3" '
		  any(.[]; .layer == $l) and all(.[]; .host == $host and .rank == $r)' "$t/$1.jsonl" >/dev/null ||
			bad "cuthook $1: no $3 record, or one without host and rank: $(grep -v '"rank"' "$t/$1.jsonl" | head -2 | cut -c1-200)"
	done
fi

# cutcapture: one trace of the whole tree; then merged with the hook's.
if [ "$(id -u)" -ne 0 ] || ! cutcapture -q -l sched -o /dev/null -- true 2>/dev/null; then
	echo "no root or no BPF: cutcapture's part not run"
	exit $fail
fi
cutcapture -q -l api --libcuda "$fx/libcuda.so.1" -o "$t/cap.jsonl" -- sh -c "$launch" "$fx/cuprog" ||
	bad "cutcapture: exit status $?"
labelled "$t/cap.jsonl" cutcapture
# -p: a rank found running is read from /proc (cuprog sleeps in cuStreamSynchronize until the
# capture has attached, which it says by its header; the calls after it are traced).
# waitfor CMD...: until CMD succeeds, 120 s at most.
waitfor() {
	i=0
	until "$@"; do
		i=$((i + 1))
		[ $i -lt 2400 ] || return 1
		sleep 0.05
	done
}
RANK=7 LOCAL_RANK=3 WORLD_SIZE=8 FAKECUDA_SYNC_FILE=$t/sync FAKECUDA_SYNC_UNTIL=$t/go \
	"$fx/cuprog" link 120000000 >/dev/null &
r=$!
waitfor test -s "$t/sync" || bad "cuprog never reached cuStreamSynchronize"
cutcapture -q -l api --libcuda "$fx/libcuda.so.1" -o "$t/p.jsonl" -p $r &
c=$!
waitfor grep -qs '"name":"header"' "$t/p.jsonl" || bad "cutcapture -p never attached"
: >"$t/go"
wait $c || bad "cutcapture -p: exit status $?"
wait $r
jq -e -s --arg host "$host" --argjson pid $r '
  ([.[] | select(.name == "process" and .pid == $pid)][0].args | [.rank, .local_rank, .world_size]) == [7, 3, 8] and
  ([.[] | select(.layer == "api")] | length > 0 and all(.[]; .host == $host and .rank == 7))' "$t/p.jsonl" >/dev/null ||
	bad "cutcapture -p: labels: $(grep -v '"header"' "$t/p.jsonl" | head -3)"
cutmerge "$t/cap.jsonl" "$t"/h/t.*.jsonl >"$t/all.jsonl" || bad "cutmerge of both: exit status $?"
jq -e -s --arg host "$host" '[.[] | select(.layer == "api")] | length > 0 and all(.[]; .host == $host and (.rank == 0 or .rank == 1))' \
	"$t/all.jsonl" >/dev/null || bad "cutmerge of both: an api event lost its labels"
exit $fail
