#!/bin/sh
# On a GPU machine: how long after its START a kernel starts, by the bytes of parameters it is
# handed, first in a turn of its process beside a heavy one and queued in its own turn (the
# rule of cutstat for pieces run first after a switch, cut-events(5)). Per round a process of
# param_kernels.cu's kernels and torch's (switch_setup.py) runs under cuthook -S and its own
# torch.profiler beside torch_share_work.py's heavy process (also under cuthook -S); then
# switch_setup_check.py's table. Needs nvcc (sm_90: an H100 or H200).
# usage: tests/gpu/switch_setup.sh BUILDDIR [OUTDIR] [python]   (ROUNDS=n, default 2)
B=$(cd "${1:?usage: switch_setup.sh BUILDDIR [OUTDIR] [python]}" && pwd)
out=${2:-/tmp/switch_setup}
py=${3:-python3}
T=$(cd "$(dirname "$0")" && pwd)
hook=$B/bin/cuthook
[ -x "$B/bin/cuthook-static" ] && hook=$B/bin/cuthook-static
mkdir -p "$out" || exit 1
nvcc -arch=sm_90 -cubin -o "$out/param_kernels.cubin" "$T/progs/param_kernels.cu" || exit 1
rc=0
i=0
hung=0
while [ $i -lt "${ROUNDS:-2}" ]; do
	i=$((i + 1))
	"$hook" -S -o "$out/heavy.$i.jsonl" -- "$py" "$T/torch_share_work.py" "$out/heavy.$i.json" \
		heavy 3000 >"$out/heavy.$i.out" 2>&1 &
	heavy=$!
	# (its start-up, some seconds, before the other's: the other's steps fall in its)
	sleep 4
	# torch.profiler at times never returns from stopping here (on H200s, 6 runs in 17, with
	# cuthook and without): such a round is run again, three times at most.
	timeout 120 "$hook" -S -o "$out/k.$i.jsonl" -- "$py" "$T/switch_setup.py" \
		"$out/param_kernels.cubin" "$out/k.$i.json" 25 >"$out/k.$i.out" 2>&1
	r=$?
	wait $heavy || { echo "round $i: the heavy process failed"; rc=1; }
	if [ $r -eq 124 ] && [ $hung -lt 3 ]; then
		hung=$((hung + 1))
		echo "round $i: the profiler never ended; again"
		i=$((i - 1))
		continue
	fi
	[ $r -eq 0 ] || { echo "round $i: failed ($r): $(tail -2 "$out/k.$i.out")"; rc=1; }
	[ -f "$out/k.$i.json" ] || continue
	echo "== round $i"
	"$py" "$T/switch_setup_check.py" "$out/k.$i.jsonl" "$out/k.$i.json" || rc=1
done
exit $rc
