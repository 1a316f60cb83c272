#!/bin/sh
# cutchrome's output loaded into the trace viewer Chromium ships (the DevTools Performance
# panel, headless and offline, by tests/viewer-check/viewer-check.js; issue 15): every file
# loads with no error and no slice dropped, the viewer sees every process, thread and slice
# of the file under the file's names, and nests the ioctls inside their API calls as the
# file's flows say. Needs Chromium, Node.js and puppeteer-core (.ci/run installs them).
B=${CUT_BUILD:-build}
PATH=$B/bin:$PATH
command -v python3 >/dev/null || { echo "needs python3"; exit 77; }
command -v node >/dev/null || { echo "no Node.js (apt-get install nodejs)"; exit 77; }
[ -n "${CHROMIUM:-}" ] || command -v chromium >/dev/null || command -v chromium-browser >/dev/null ||
	{ echo "no Chromium (apt-get install chromium)"; exit 77; }
mods=
for d in ${CUT_VIEWER_DIR:+"$CUT_VIEWER_DIR/node_modules"} "$B/viewer-check/node_modules" \
	"$HOME/.cache/cut-viewer-check/node_modules"; do
	[ -d "$d/puppeteer-core" ] && { mods=$d; break; }
done
[ -n "$mods" ] || { echo "no puppeteer-core: run share/scripts/viewer-check-deps.sh"; exit 77; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
ranks=tests/cases/cutperfetto/ranks
cutmerge samples/capture-torch-train.jsonl 2>/dev/null | cutchrome >"$tmp/capture.json" || exit 1
cutmerge samples/hook-torch-nvtx-runtime.jsonl.zst 2>/dev/null | cutchrome >"$tmp/nvtx.json" || exit 1
cutchrome samples/hook-torch-mlp-gpu.jsonl.zst >"$tmp/gpu.json" || exit 1
cutchrome $ranks/r0.jsonl $ranks/r1.jsonl $ranks/r2.jsonl >"$tmp/ranks.json" || exit 1
cutchrome tests/cases/cutchrome/layers/input >"$tmp/layers.json" || exit 1
NODE_PATH=$mods timeout 300 node tests/viewer-check/viewer-check.js --json "$tmp"/*.json >"$tmp/report" 2>"$tmp/err"
rc=$?
[ $rc -eq 2 ] && grep -q 'internals\|no Chromium' "$tmp/err" && { echo "the viewer could not run: $(tail -1 "$tmp/err")"; exit 77; }
python3 - "$tmp/report" <<'PY' || exit 1
import collections, json, sys
fail = 0
for r in json.load(open(sys.argv[1])):
    f, v = r["file"], r["viewer"]
    name = f.rsplit("/", 1)[-1]
    te = json.load(open(f))["traceEvents"]
    procs = {e["pid"]: e["args"]["name"] for e in te if e["ph"] == "M" and e["name"] == "process_name"}
    with_events = {e["pid"] for e in te if e["ph"] != "M"}
    threads = {(e["pid"], e["tid"]) for e in te if e["ph"] == "X"}  # and thread instants:
    xs = sum(1 for e in te if e["ph"] == "X")
    # ioctls with a flow from their call are nested in it, as the viewer nests them
    flows = sum(1 for e in te if e["ph"] == "f" and e["name"] == "ioctl")
    problems = []
    if not v.get("loaded") or v.get("errors"):
        problems.append("not loaded: %s" % v.get("errors"))
    if v.get("dropped"):
        problems.append("%d slices dropped" % v["dropped"])
    if v.get("slices") != xs:
        problems.append("%s slices in the viewer, %d in the file" % (v.get("slices"), xs))
    if {int(k): n for k, n in v.get("processNames", {}).items()} != {p: procs[p] for p in with_events if p in procs}:
        problems.append("processes %s, file %s" % (v.get("processNames"), procs))
    threads |= {(e["pid"], e["tid"]) for e in te if e["ph"] == "i" and e.get("s") == "t"}
    if v.get("threads") != len(threads):
        problems.append("%s threads in the viewer, %d tracks with slices in the file" % (v.get("threads"), len(threads)))
    if v.get("ioctlsInApi", 0) < flows:
        problems.append("%s ioctls nested in API calls, %d flows to ioctls" % (v.get("ioctlsInApi"), flows))
    print("%s: %s" % (name, "; ".join(problems) if problems else
                      "%d processes, %d threads, %d slices, %d ioctls in calls" % (
                          len(v["processNames"]), v["threads"], v["slices"], v.get("ioctlsInApi", 0))))
    fail |= bool(problems)
sys.exit(fail)
PY
[ $rc -eq 0 ] || { echo "FAIL viewer-check exit $rc: $(tail -3 "$tmp/err")"; exit 1; }
exit 0
