#!/bin/sh
# cutperfetto on the layers of schema 2 above the driver API: NVTX ranges (push/pop nested on
# their thread's track with the runtime and driver calls inside; start/end ranges, which need not
# nest and may end on another thread, on a child track of the process per domain, "NVTX" and
# "NVTX: data", two that overlap without nesting spilling to an overlap track), a mark as an
# instant, an NVTX thread name that a later
# rename by the kernel does not replace, the flows API call -> ioctl and API call -> GPU work,
# all checked against the input as in visualize-perfetto.sh. Skipped until the shared reader
# accepts the nvtx and runtime layers (cutstat takes an nvtx line).
command -v protoc >/dev/null || { echo "protoc not installed (apt-get install protobuf-compiler)"; exit 77; }
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }
command -v cutperfetto >/dev/null || { echo "cutperfetto not built"; exit 1; }
printf '%s\n' '{"ts":1,"dur":1,"pid":1,"tid":1,"layer":"nvtx","name":"x","cat":"range"}' \
	'{"ts":1,"dur":1,"pid":1,"tid":1,"layer":"runtime","name":"cudaFree","cat":"memory"}' |
	cutstat >/dev/null 2>&1 ||
	{ echo "the reader does not accept layers nvtx and runtime yet (cutstat rejects them)"; exit 77; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/nvtx.jsonl" <<'EOF'
{"ts":500,"pid":77,"tid":77,"layer":"meta","name":"header","args":{"schema":2,"tool":"cuthook","host":"gpu1","clock":{"monotonic_ns":500,"realtime_ns":1795000000000000500},"sorted":true}}
{"ts":500,"pid":77,"tid":77,"layer":"meta","name":"process","args":{"comm":"python3","cmdline":"python3 x.py"}}
{"ts":500,"pid":77,"tid":77,"layer":"meta","name":"thread","args":{"comm":"python3","name":"main loop"}}
{"ts":1000,"dur":30000,"pid":77,"tid":77,"layer":"nvtx","name":"forward","cat":"range","args":{"depth":0,"domain":"torch","color":"0xff00ff00","payload":3}}
{"ts":1200,"dur":8800,"pid":77,"tid":77,"layer":"nvtx","name":"warmup","cat":"startend"}
{"ts":1500,"dur":5100,"pid":77,"tid":77,"layer":"runtime","name":"cudaLaunchKernel","cat":"launch","ret":0,"args":{"func":"0x55d0c0de","grid":[64,1,1],"block":[256,1,1],"shmem":0,"stream":"0x0"}}
{"ts":2000,"dur":4200,"pid":77,"tid":77,"layer":"api","name":"cuLaunchKernel","cat":"launch","ret":0,"args":{"func":"0x55d0c0de","kernel":"vecAdd","grid":[64,1,1],"block":[256,1,1],"shmem":0,"stream":"0x0","corr":12}}
{"ts":3000,"dur":500,"pid":77,"tid":77,"layer":"ioctl","name":"NV_ESC_RM_CONTROL","ret":0,"args":{"fd":5,"ctrl":"0x20800a4c"}}
{"ts":5000,"dur":35000,"pid":77,"tid":77,"layer":"nvtx","name":"epoch","cat":"startend","args":{"end_tid":78}}
{"ts":6000,"dur":40000,"pid":77,"tid":78,"layer":"nvtx","name":"prefetch","cat":"startend","args":{"domain":"data"}}
{"ts":7000,"dur":13000,"pid":77,"tid":77,"layer":"nvtx","name":"layer1","cat":"range","args":{"depth":1}}
{"ts":7500,"dur":2600,"pid":77,"tid":77,"layer":"gpu","name":"vecAdd","cat":"kernel","args":{"corr":12,"stream":"0x0","device":0,"grid":[64,1,1],"block":[256,1,1],"submit":2000}}
{"ts":8000,"pid":77,"tid":77,"layer":"meta","name":"thread","args":{"comm":"pt_main_thread"}}
{"ts":25000,"pid":77,"tid":77,"layer":"nvtx","name":"checkpoint","cat":"mark","args":{"category":2,"category_name":"io"}}
{"ts":41000,"dur":100,"pid":77,"tid":78,"layer":"nvtx","name":"(unnamed)","cat":"range","args":{"depth":0,"unended":true}}
EOF
cutperfetto "$tmp/nvtx.jsonl" >"$tmp/out.pb" 2>"$tmp/err" || { cat "$tmp/err"; exit 1; }
[ -s "$tmp/err" ] && { echo "FAIL: unexpected messages: $(cat "$tmp/err")"; exit 1; }
protoc --decode=perfetto.protos.Trace tests/fixtures/perfetto/perfetto_trace.proto \
	<"$tmp/out.pb" >"$tmp/out.txt" || { echo "FAIL: protoc cannot decode the output"; exit 1; }
python3 tests/scripts/visualize-perfetto-check.py --layers nvtx,runtime --overlaps 1 \
	"$tmp/out.txt" "$tmp/nvtx.jsonl" || exit 1
grep -q 'thread_name: "main loop"' "$tmp/out.txt" || { echo "FAIL: NVTX thread name lost"; exit 1; }
for t in 'NVTX' 'NVTX: data' 'NVTX overlap 1'; do
	grep -q "name: \"$t\"" "$tmp/out.txt" || { echo "FAIL: no track \"$t\""; exit 1; }
done
exit 0
