#!/bin/sh
# The summary that cutstat -j writes, as cutdiff reads it and the job view merges it: it lists
# the runtime's functions, the GPU work's kind and the NVTX ranges (folded by operator, or whole
# with nvtx_full) each with a histogram that holds every instance; the job view prints the same
# of summaries with those lists as of the same without them (version 1 as it was), and reads
# summaries compressed (gzip, zstd), as files and through a pipe.
top=${CUT_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
B=${CUT_BUILD:-$top/build}
PATH=$B/bin:$PATH
for c in zstd gzip python3; do
	command -v $c >/dev/null || { echo "needs $c"; exit 77; }
done
t=$(mktemp -d) || exit 2
trap 'rm -rf "$t"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

zstd -q -dc "$top/samples/hook-torch-nvtx-runtime.jsonl.zst" >"$t/nvtx.jsonl" || exit 1
cutstat -j "$t/nvtx.jsonl" >"$t/s.json" || bad "cutstat -j: exit $?"
cutstat -j --nvtx-full "$t/nvtx.jsonl" >"$t/full.json" || bad "cutstat -j --nvtx-full: exit $?"
python3 - "$t" <<'EOF' || fail=1
import collections, json, sys
d = sys.argv[1]
ev = [json.loads(l) for l in open(f"{d}/nvtx.jsonl")]
s = json.load(open(f"{d}/s.json"))["summary"]
full = json.load(open(f"{d}/full.json"))["summary"]
errs = []
if s["version"] != 1 or "nvtx_full" in s or full.get("nvtx_full") is not True:
    errs.append("version or nvtx_full: %s %s" % (s["version"], full.get("nvtx_full")))
def check(key, layer, name_of, items):
    want = collections.defaultdict(list)
    for e in ev:
        if e["layer"] == layer and "dur" in e:
            want[name_of(e)].append(e["dur"])
    got = {(i.get("domain", ""), i["name"]) if key == "nvtx" else i["name"]: i for i in items}
    if set(got) != set(want):
        errs.append("%s: names %s" % (key, sorted(set(got) ^ set(want))[:5]))
    for k, v in want.items():
        i = got.get(k)
        if not i:
            continue
        if (i["calls"], i["total_ns"], i["min_ns"], i["max_ns"]) != (len(v), sum(v), min(v), max(v)) or \
                sum(c for b, c in i["hist"]) != len(v):
            errs.append("%s: %s: %s" % (key, k, {x: i[x] for x in i if x != "hist"}))
    return got
def op(name):
    # cut_nvtx_op_len for the names of this sample: the fields after the operator
    return name.split(", seq = ")[0].split(", op_id = ")[0]
check("runtime", "runtime", lambda e: e["name"], s["runtime"])
k = check("kernels", "gpu", lambda e: e["name"], s["kernels"])
kinds = {e["name"]: e["cat"] for e in ev if e["layer"] == "gpu"}
for n, i in k.items():
    if i.get("kind") != kinds[n]:
        errs.append("kernels: %s: kind %s, want %s" % (n, i.get("kind"), kinds[n]))
dom = lambda e: (e.get("args", {}).get("domain", ""))
check("nvtx", "nvtx", lambda e: (dom(e), op(e["name"])), s["nvtx"])
check("nvtx", "nvtx", lambda e: (dom(e), e["name"]), full["nvtx"])
if not s["nvtx"] or not s["runtime"]:
    errs.append("no nvtx or runtime list")
# the same without the lists a version 1 summary had not
for r in (0, 1):
    x = json.loads(json.dumps(s))
    x["rank"] = r
    json.dump({"summary": x}, open(f"{d}/new{r}.json", "w"), indent=2)
    for key in ("runtime", "nvtx"):
        del x[key]
    for i in x["kernels"]:
        del i["kind"]
    json.dump({"summary": x}, open(f"{d}/old{r}.json", "w"), indent=2)
if errs:
    print("FAIL:", "; ".join(errs)[:3000])
    sys.exit(1)
EOF
cutstat "$t/old0.json" "$t/old1.json" >"$t/old.txt" || bad "job view of old summaries: exit $?"
cutstat "$t/new0.json" "$t/new1.json" >"$t/new.txt" || bad "job view of new summaries: exit $?"
cmp -s "$t/old.txt" "$t/new.txt" || bad "the job view differs: $(diff "$t/old.txt" "$t/new.txt" | head -5)"
zstd -q "$t/new0.json" -o "$t/z0.json.zst" && gzip -c "$t/new1.json" >"$t/z1.json.gz" || exit 1
cutstat "$t/z0.json.zst" "$t/z1.json.gz" >"$t/z.txt" 2>"$t/err" || bad "job view of compressed summaries: exit $?: $(cat "$t/err")"
sed 's/z0.json.zst/new0.json/; s/z1.json.gz/new1.json/' "$t/z.txt" | cmp -s - "$t/new.txt" ||
	bad "job view of compressed summaries: $(diff "$t/new.txt" "$t/z.txt" | head -5)"
gzip -c "$t/new1.json" | cutstat "$t/z0.json.zst" /dev/stdin >"$t/z.txt" 2>"$t/err" ||
	bad "job view of a gzip summary through a pipe: exit $?: $(cat "$t/err")"
cmp -s "$t/z.txt" "$t/new.txt" || bad "job view through a pipe: $(diff "$t/new.txt" "$t/z.txt" | head -5)"
# cutdiff of the old summary against the trace: what it has compares equal, the rest is noted
cutdiff "$t/old0.json" "$t/nvtx.jsonl" >"$t/out" || bad "cutdiff old summary: exit $?"
grep -q '^note: runtime functions: not compared' "$t/out" && grep -q '^note: NVTX ranges: not compared' "$t/out" ||
	bad "cutdiff old summary: $(head -5 "$t/out")"
exit $fail
