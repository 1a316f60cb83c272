#!/bin/sh
# On a GPU machine: two and three PyTorch processes taking turns on one GPU (no MPS), each
# under its own cuthook and its own torch.profiler (CUPTI), by default and with -S (the mode
# the README recommends for a shared GPU); their traces merged (cutmerge) and read by cutstat,
# which tells their work apart (cut-events(5), GPU work on a shared device). Per run a table
# (share_busy.py): each process's busy time by CUPTI, by cut told apart and as recorded
# (cutstat -O), and how long their work overlapped by each; "target: met" where every process
# is within 5 % of CUPTI and the overlap told apart within 1 % of the busy time.
# Sets: heavy+light (the heavy one's queue runs dry each step: the GPU turns to the light one
# then) and deep+light+light (the deep one's never does: its slice runs out and its kernel is
# preempted for the others' turns). Traces, profiles and tables stay in OUTDIR.
# usage: tests/gpu/share_busy.sh BUILDDIR [OUTDIR] [python]
# (BUILDDIR: bin/cuthook or bin/cuthook-static, lib/libcuthook.so, bin/cutmerge, bin/cutstat;
# STEPS=n scales the work, default 1: heavy 200 steps, deep 800, light 60; MODES="S" runs the
# -S mode alone, "default" the default alone.)
B=$(cd "${1:?usage: share_busy.sh BUILDDIR [OUTDIR] [python]}" && pwd)
out=${2:-/tmp/share_busy}
py=${3:-python3}
T=$(cd "$(dirname "$0")" && pwd)
hook=$B/bin/cuthook
[ -x "$B/bin/cuthook-static" ] && hook=$B/bin/cuthook-static
scale=${STEPS:-1}
mkdir -p "$out" || exit 1
rc=0
for set in "heavy light" "deep light light"; do
	n=$(echo $set | wc -w)
	for mode in ${MODES:-default S}; do
		flag=
		[ $mode = S ] && flag=-S
		tag=$(echo $set | tr ' ' '-').$mode
		rm -f "$out/$tag".* "$out/$tag.barrier"
		i=0
		pids=
		for k in $set; do
			i=$((i + 1))
			case $k in
			heavy) steps=200 ;;
			deep) steps=800 ;;
			*) steps=60 ;;
			esac
			"$hook" $flag -o "$out/$tag.p$i.jsonl" -- "$py" "$T/torch_share_work.py" \
				"$out/$tag.p$i.$k.json" $k $((steps * scale)) "$out/$tag.barrier" $n \
				>"$out/$tag.p$i.out" 2>&1 &
			pids="$pids $!"
		done
		for p in $pids; do
			wait "$p" || { echo "$tag: a process failed: $(cat "$out/$tag".p*.out)"; rc=1; }
		done
		"$B/bin/cutmerge" "$out/$tag".p*.jsonl >"$out/$tag.merged.jsonl" || rc=1
		"$B/bin/cutstat" -j "$out/$tag.merged.jsonl" >"$out/$tag.told.json" || rc=1
		"$B/bin/cutstat" -j -O "$out/$tag.merged.jsonl" >"$out/$tag.recorded.json" || rc=1
		"$py" "$T/share_busy.py" "$set, cuthook $flag" "$out/$tag.merged.jsonl" \
			"$out/$tag.told.json" "$out/$tag.recorded.json" "$out/$tag".p*.json |
			tee "$out/$tag.table"
	done
done
exit $rc
