#!/bin/sh
# bench-ab.sh BUILDDIR OLDLIB [rounds] [python] [parts]: on a GPU machine with PyTorch, one
# libcuthook against another in the same run (runs of one machine differ by 20-40 %, machines
# more: only builds alternated in one run compare). BUILDDIR holds bin/cuthook (or
# bin/cuthook-static) and lib/libcuthook.so, the new library; OLDLIB is the library to compare
# it with (e.g. one built from the commit before, carried beside it). parts (default both):
#   loop   the launch-bound loop (launchloop.py) plain, under cuthook -l api,runtime,nvtx and
#          under cuthook's every layer with each library, and under torch.profiler's CUDA
#          records, alternated `rounds` times (default 7); then the chunks run at full speed
#          (chunks.sh): us an op, median and 10th percentile, chunks kept, and against plain.
#   times  tests/gpu/torch_gpu_work.py 20 under cuthook with each library, alternated, two
#          rounds (one where rounds is 1), each held to CUPTI's times by check_times.py (item
#          3's rows: |dstart| and |ddur| p50, p90 and largest per kind of start).
set -u
B=$(cd "${1:?usage: bench-ab.sh BUILDDIR OLDLIB [rounds] [python] [parts]}" && pwd)
old=${2:?usage: bench-ab.sh BUILDDIR OLDLIB [rounds] [python] [parts]}
rounds=${3:-7}
py=${4:-python3}
parts=${5:-loop times}
[ -f "$old" ] || { echo "bench-ab.sh: $old: no such library" >&2; exit 2; }
old=$(cd "$(dirname "$old")" && pwd)/$(basename "$old")
new=$B/lib/libcuthook.so
hook=$B/bin/cuthook
[ -x "$B/bin/cuthook-static" ] && hook=$B/bin/cuthook-static
here=$(cd "$(dirname "$0")" && pwd)
L=$here/launchloop.py
T=$here/../gpu
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
part() { case " $parts " in *" $1 "*) return 0 ;; esac; return 1; }
. "$here/chunks.sh" # fast_table

# loop_run MODE: one run of the loop, its chunks appended to $w/c.MODE
loop_run() {
	case $1 in
	plain) $py "$L" "$w/c.$1" ;;
	api-old) CUTHOOK_LIB=$old "$hook" -l api,runtime,nvtx -o "$w/t.jsonl" -- $py "$L" "$w/c.$1" ;;
	api-new) CUTHOOK_LIB=$new "$hook" -l api,runtime,nvtx -o "$w/t.jsonl" -- $py "$L" "$w/c.$1" ;;
	all-old) CUTHOOK_LIB=$old "$hook" -o "$w/t.jsonl" -- $py "$L" "$w/c.$1" ;;
	all-new) CUTHOOK_LIB=$new "$hook" -o "$w/t.jsonl" -- $py "$L" "$w/c.$1" ;;
	profiler) $py "$L" "$w/c.$1" cuda ;;
	esac
}

if part loop; then
	modes="plain api-old api-new all-old all-new profiler"
	i=0
	while [ $i -lt "$rounds" ]; do
		i=$((i + 1))
		for m in $modes; do
			loop_run $m >/dev/null 2>&1 || echo "round $i: $m failed"
		done
	done
	fast_table "$w/c" $modes
fi

if part times; then
	i=0
	while [ $i -lt $((rounds > 1 ? 2 : 1)) ]; do
		i=$((i + 1))
		for v in old new; do
			lib=$new
			[ $v = old ] && lib=$old
			CUTHOOK_LIB=$lib "$hook" -o "$w/g.$v.jsonl" -- \
				$py "$T/torch_gpu_work.py" "$w/g.$v.prof.json" 20 >/dev/null 2>&1 ||
				echo "times round $i: $v failed"
			echo "== times, $v library, round $i"
			$py "$T/check_times.py" "$w/g.$v.jsonl" "$w/g.$v.prof.json" "$v" 2>&1 |
				grep -E "kernels paired|^(every|event|call|twins|late|bound|targets) "
		done
	done
fi
