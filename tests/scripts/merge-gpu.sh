#!/bin/sh
# cutmerge and the gpu layer on a real trace (issue 13): the sample given twice keeps every
# piece of GPU work once, unchanged, and counts the copies; the sample moved onto another boot
# of the same host is aligned back onto it and its GPU work dropped as copies, launch
# latencies intact; 5 us of wall-clock disagreement keeps both copies; of another host, both
# copies are kept at the same times, each with its host; the trailer carries the GPU clock
# bound.
top=${CUT_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
B=${CUT_BUILD:-$top/build}
PATH=$B/bin:$PATH
for c in zstd python3; do
	command -v $c >/dev/null || { echo "needs $c"; exit 77; }
done
t=$(mktemp -d) || exit 2
trap 'rm -rf "$t"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

zstd -q -dc "$top/samples/hook-torch-mlp-gpu.jsonl.zst" >"$t/a.jsonl" || bad "zstd"
cp "$t/a.jsonl" "$t/copy.jsonl"
# move DELTA HOST SKEW: the sample as if recorded DELTA ns later on another boot of HOST (its
# monotonic clock DELTA behind, the wall clock SKEW ns ahead of the first)
move() {
	python3 - "$t/a.jsonl" "$@" <<'PY'
import json, sys
src, delta, host, skew = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
for line in open(src):
    e = json.loads(line)
    e["ts"] -= delta
    a = e.get("args", {})
    if e["layer"] == "gpu" and "submit" in a:
        a["submit"] -= delta
    if e["layer"] == "meta" and e["name"] == "header":
        a["host"] = host
        a["clock"]["monotonic_ns"] -= delta
        a["clock"]["realtime_ns"] += skew
    print(json.dumps(e, separators=(",", ":")))
PY
}
move 5000000000 vm 0 >"$t/boot.jsonl" || bad "boot"
move 5000000000 vm 5000 >"$t/skew.jsonl" || bad "skew"
move 5000000000 other 0 >"$t/host.jsonl" || bad "host"
for b in copy boot skew host; do
	cutmerge "$t/a.jsonl" "$t/$b.jsonl" >"$t/m-$b.jsonl" 2>"$t/e-$b" || bad "cutmerge $b: exit $?"
done

python3 - "$t" <<'PY' || fail=1
import json, sys
t = sys.argv[1]
n = 0
def bad(m):
    global n; n += 1; print("FAIL", m)
def load(f):
    return [json.loads(l) for l in open(f"{t}/{f}")]
src = load("a.jsonl")
gpu = [e for e in src if e["layer"] == "gpu"]
key = lambda e: json.dumps(e, sort_keys=True)
want = sorted(key(e) for e in gpu)
bound = next(e["args"]["gpu"]["error_ns"] for e in src if e["name"] == "trailer")
for b, copies, dropped in [("copy", 1, len(gpu)), ("boot", 1, len(gpu)), ("skew", 2, 0),
                           ("host", 2, 0)]:
    out = load(f"m-{b}.jsonl")
    ts = [e["ts"] for e in out]
    if ts != sorted(ts): bad(f"{b}: not sorted")
    got = [e for e in out if e["layer"] == "gpu"]
    if len(got) != copies * len(gpu): bad(f"{b}: {len(got)} gpu events, want {copies * len(gpu)}")
    if any("parent" in e or "id" in e for e in got): bad(f"{b}: gpu event with parent or id")
    tr = out[-1]["args"]
    if tr.get("gpu_duplicates") != dropped:
        bad(f"{b}: gpu_duplicates {tr.get('gpu_duplicates')}, want {dropped}")
    if tr.get("gpu", {}).get("error_ns") != bound:
        bad(f"{b}: trailer gpu.error_ns {tr.get('gpu')}, want {bound}")
    if [i.get("gpu_error_ns") for i in tr.get("inputs", [])] != [bound, bound]:
        bad(f"{b}: trailer inputs {tr.get('inputs')}")
    hdr = out[0]["args"]["inputs"]
    shift = 0 if b == "copy" else 5000000000 + (5000 if b == "skew" else 0)
    if hdr[1]["shift_ns"] != shift: bad(f"{b}: shift {hdr[1]['shift_ns']}, want {shift}")
    if b == "skew":
        # every piece of work twice, the second copy 5 us later, latency intact
        late = sorted(key(dict(e, ts=e["ts"] + 5000, args=dict(e["args"], submit=e["args"]["submit"] + 5000)))
                      for e in gpu)
        if sorted(key(e) for e in got) != sorted(want + late): bad("skew: gpu events moved wrong")
    else:
        # of two hosts, each record goes out with its host (issue 23), else unchanged
        hosts = sorted({e.pop("host", None) or "-" for e in got}) if b == "host" else []
        if b == "host" and hosts != ["other", "vm"]: bad(f"host: gpu events of hosts {hosts}")
        if sorted(key(e) for e in got) != sorted(want * copies): bad(f"{b}: gpu events changed")
    devs = [e for e in out if e["name"] == "device"]
    if len(devs) != 2 * sum(e["name"] == "device" for e in src): bad(f"{b}: device records lost")
sys.exit(1 if n else 0)
PY
grep -q "^cutmerge: $(grep -c '"layer":"gpu"' "$t/a.jsonl") GPU events were recorded in both" "$t/e-copy" ||
	bad "no line on stderr for the GPU copies: $(cat "$t/e-copy")"
exit $fail
