#!/bin/sh
# cutmerge on calls that all overlap (issue 23: 80k identical calls took 12 s, 2M kept it
# running 46 min at 1.5 GB): in time, held to the same number of calls one after the other in
# this run (CPU time, so load does not count; quadratic is hundreds of times); in memory,
# within -M of the same baseline, with the warnings naming the option that was hit; and
# cutioctl -m on ioctls inside thousands of calls; cutmerge on lines of half a MiB.
B=${CUT_BUILD:-build}
PATH=$B/bin:$PATH
command -v python3 >/dev/null || { echo "needs python3"; exit 77; }
# under AddressSanitizer, memory freed is held in quarantine: none, so that sizes compare
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0:thread_local_quarantine_size_kb=0"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL $*"; fail=1; }
# gen N overlap|apart: a sorted trace of N driver calls, all the same span or one after another
gen() {
	awk -v n="$1" -v mode="$2" 'BEGIN {
		print "{\"ts\":1,\"pid\":1,\"tid\":1,\"layer\":\"meta\",\"name\":\"header\",\"args\":{\"schema\":2,\"tool\":\"cuthook\",\"sorted\":true}}"
		for (i = 0; i < n; i++)
			printf "{\"ts\":%d,\"dur\":%d,\"pid\":1,\"tid\":1,\"layer\":\"api\",\"name\":\"cuCtxGetDevice\",\"ret\":0}\n",
			    mode == "overlap" ? 1000 : 1000 + 10 * i, mode == "overlap" ? 1000000000 : 5
	}'
}
gen 60000 overlap >"$tmp/o.jsonl"
gen 60000 apart >"$tmp/a.jsonl"
gen 400000 overlap >"$tmp/big.jsonl"
gen 400000 apart >"$tmp/bigapart.jsonl"
# cost FILE ARGS...: "cpu-seconds max-rss-KiB" of cutmerge ARGS FILE, in a process of its own
cost() {
	f=$1
	shift
	python3 -c '
import resource, subprocess, sys
err = open(sys.argv[2], "w")
rc = subprocess.run(sys.argv[3:] + [sys.argv[1]], stdout=subprocess.DEVNULL, stderr=err).returncode
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(r.ru_utime + r.ru_stime, r.ru_maxrss, rc)' "$f" "$tmp/err" cutmerge "$@"
}
set -- $(cost "$tmp/a.jsonl")
apart=$1
set -- $(cost "$tmp/o.jsonl")
overlap=$1
[ "$3" = 0 ] || bad "overlapping calls: exit $3: $(cat "$tmp/err")"
python3 -c 'import sys; a, o = map(float, sys.argv[1:]); sys.exit(o > 20 * max(a, 0.02))' \
	"$apart" "$overlap" || bad "60000 overlapping calls took ${overlap}s, one after the other ${apart}s"

set -- $(cost "$tmp/bigapart.jsonl" -M 16)
base=$2
set -- $(cost "$tmp/big.jsonl" -M 16)
[ "$3" = 0 ] || bad "-M 16: exit $3"
[ "$2" -le $((base + 3 * 16 * 1024)) ] || bad "-M 16: ${2} KiB at most, one after the other ${base} KiB"
grep -q '(raise -M)' "$tmp/err" || bad "-M 16: no warning naming -M: $(cat "$tmp/err")"
grep -q 'not followed.*(raise -M)' "$tmp/err" || bad "-M 16: calls not followed, not said: $(cat "$tmp/err")"
grep -q '(raise -m' "$tmp/err" && bad "-M 16: a warning naming -m: $(cat "$tmp/err")"
set -- $(cost "$tmp/big.jsonl" -m 1000)
[ "$3" = 0 ] || bad "-m 1000: exit $3"
[ "$2" -le $((base + 3 * 16 * 1024)) ] || bad "-m 1000: ${2} KiB at most, one after the other ${base} KiB"
grep -q 'more than 1000 events were held back.*(raise -m)' "$tmp/err" || bad "-m 1000: $(cat "$tmp/err")"
grep -q 'not followed: more than 1000 were open at once (raise -m)' "$tmp/err" || bad "-m 1000: $(cat "$tmp/err")"
# cutioctl -m counts an ioctl in every call around it: 20000 identical calls open around
# 20000 ioctls cost it the product (minutes, gigabytes); now 64 calls deep at most.
awk 'BEGIN { for (i = 0; i < 20000; i++) print "{\"ts\":1000,\"dur\":100000000,\"pid\":1,\"tid\":1,\"layer\":\"api\",\"name\":\"cuCtxGetDevice\",\"ret\":0}"
	for (i = 0; i < 20000; i++) printf "{\"ts\":%d,\"dur\":10,\"pid\":1,\"tid\":1,\"layer\":\"ioctl\",\"name\":\"NV_ESC_RM_CONTROL\",\"ret\":0}\n", 2000 + 10 * i }' >"$tmp/deep.jsonl"
awk 'BEGIN { for (i = 0; i < 20000; i++) printf "{\"ts\":%d,\"dur\":100,\"pid\":1,\"tid\":1,\"layer\":\"api\",\"name\":\"cuCtxGetDevice\",\"ret\":0}\n{\"ts\":%d,\"dur\":10,\"pid\":1,\"tid\":1,\"layer\":\"ioctl\",\"name\":\"NV_ESC_RM_CONTROL\",\"ret\":0}\n", 1000 + 1000 * i, 1010 + 1000 * i }' >"$tmp/flat.jsonl"
ioctl_cpu() {
	python3 -c '
import resource, subprocess, sys
subprocess.run(["cutioctl", "-m", sys.argv[1]], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(r.ru_utime + r.ru_stime)' "$1"
}
flat=$(ioctl_cpu "$tmp/flat.jsonl")
deep=$(ioctl_cpu "$tmp/deep.jsonl")
python3 -c 'import sys; f, d = map(float, sys.argv[1:]); sys.exit(d > 20 * max(f, 0.02))' "$flat" "$deep" ||
	bad "cutioctl -m: 20000 ioctls in 20000 calls took ${deep}s, apart ${flat}s"

# Lines of half a MiB, each alone in its time: what is held or remembered of one is let go
# with it (the held events' ring and the GPU work's kept a buffer of each line's size per slot,
# the hosts of labelled processes were all kept).
if command -v zstd >/dev/null; then
	for layer in api gpu host; do
		python3 -c '
import json, sys
layer, big = sys.argv[1], "k" * (1 << 19)
print(json.dumps({"ts": 1, "pid": 1, "tid": 1, "layer": "meta", "name": "header",
                  "args": {"schema": 2, "tool": "cuthook", "sorted": True}}, separators=(",", ":")))
for i in range(300):
    e = {"ts": 1000 + i * 100000, "dur": 10, "pid": 1, "tid": 1, "layer": layer}
    if layer == "gpu":
        e.update(name=big, cat="kernel", args={"corr": i + 1, "stream": "0x0"})
    elif layer == "host":  # a process of its own, labelled with a host name of its own
        e.update(host=big + str(i), rank=i, pid=1000 + i, tid=1000 + i, layer="api", name="cuInit")
    else:
        e.update(name="cuLaunchKernel", ret=0, args={"kernel": big})
    print(json.dumps(e, separators=(",", ":")))' $layer | zstd -q -c >"$tmp/$layer.zst"
		set -- $(cost "$tmp/$layer.zst")
		[ "$3" = 0 ] || bad "$layer lines of 512 KiB: exit $3: $(head -3 "$tmp/err")"
		[ "$2" -le $((base + 32 * 1024)) ] || bad "$layer lines of 512 KiB: ${2} KiB, one after the other ${base} KiB"
	done
fi
exit $fail
