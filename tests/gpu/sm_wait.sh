#!/bin/sh
# On a GPU machine: what cut says of a kernel that waited for SMs another stream's kernel held
# (progs/sm_wait.cu), by default and with cuthook -S, against the kernels' own %globaltimer.
# A limit of timing without CUPTI, measured rather than tested: a kernel's start is when its
# stream reached it, and an event before it (-S) is reached as soon as the stream is, so the
# wait for SMs counts as the kernel's own time (cuthook(1), CAVEATS). Prints a table.
# usage: tests/gpu/sm_wait.sh BUILDDIR [python]
B=$(cd "${1:?usage: sm_wait.sh BUILDDIR [python]}" && pwd)
py=${2:-python3}
T=$(cd "$(dirname "$0")" && pwd)
hook=$B/bin/cuthook
[ -x "$B/bin/cuthook-static" ] && hook=$B/bin/cuthook-static
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
nvcc -O2 -o "$w/sm_wait" "$T/progs/sm_wait.cu" || exit 1
"$w/sm_wait"
for flag in "" -S; do
	"$hook" $flag -l api,gpu -o "$w/t.jsonl" -- "$w/sm_wait" >/dev/null || exit 1
	$py - "$w/t.jsonl" "cuthook $flag" <<'PY'
import json, statistics, sys
g = sorted((e for e in map(json.loads, open(sys.argv[1])) if e.get("layer") == "gpu"),
           key=lambda e: e["args"]["corr"])
fill = [e for e in g if "fill" in e["name"]][1:]
small = [e for e in g if "small" in e["name"]][1:]
after = [s["ts"] - (f["ts"] + f["dur"]) for s, f in zip(small, fill)]
print(f"{sys.argv[2]:<12} small began {statistics.median(after) / 1e3:.1f} us after fill ended "
      f"(median), lasted {statistics.median(e['dur'] for e in small) / 1e3:.1f} us; "
      f"fill {statistics.median(e['dur'] for e in fill) / 1e3:.1f} us")
PY
done
