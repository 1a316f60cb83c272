#!/bin/sh
# cutplot: every chart on every terminal, with the expected series: PNG signature, SVG that
# parses and names its series, text charts with their row labels and legend; gnuplot missing
# or failing is a clear error; bad input still draws the good lines and exits 1.
command -v cutplot >/dev/null || { echo "cutplot not built"; exit 1; }
layers=tests/cases/cutchrome/layers/input
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

GNUPLOT=$tmp/no-gnuplot cutplot -o "$tmp/x.png" $layers 2>"$tmp/err"
[ $? -eq 2 ] || bad "missing gnuplot: exit status is not 2"
grep -q 'cannot run .*no-gnuplot: install gnuplot' "$tmp/err" || bad "missing gnuplot: $(cat "$tmp/err")"
GNUPLOT=false cutplot -o "$tmp/x.png" $layers 2>"$tmp/err"
[ $? -eq 2 ] && grep -q 'false failed on the chart script' "$tmp/err" || bad "failing gnuplot"
command -v gnuplot >/dev/null || { echo "gnuplot not installed"; exit 77; }
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }

# The DDP sample, whose runtime and NVTX records carry no host or rank: their rows are their
# processes' (named python, as the process records of the ranks say), not a host's without a
# name.
cutplot -S -T dumb samples/ddp-2gpu-hook.jsonl.zst >"$tmp/ddp.gp" || bad "ddp: exit $?"
grep '^set ytics' "$tmp/ddp.gp" | grep -q 'tid 70[12] ' && bad "ddp: rows of a rank apart: $(grep '^set ytics' "$tmp/ddp.gp")"
grep -q '^set ytics.*python 701 [a-z ]*runtime' "$tmp/ddp.gp" || bad "ddp: no runtime row of rank 0"

# Series each chart of the hand-built trace must name (gaps: of 100 ns or more).
series_timeline='memory launch sync transfer query ioctl kernel irq off-CPU GPU'
series_categories='memory launch sync transfer query'
series_durations='memory launch sync transfer'
series_gaps='gap < 100 us'
labels_timeline='python 77 api|python 77 ioctl|python 77 kernel|python 77 sched|python 77 GPU stream 0x0|python 77 GPU stream 0x1|worker 78 api|worker 78 ioctl|tid 79 api|interrupts'
labels_gaps='python 77 (|worker 78 ('
for chart in timeline categories durations gaps; do
	eval "series=\$series_$chart"
	cutplot -c $chart -t 100ns -o "$tmp/$chart.png" $layers || bad "$chart png: exit $?"
	python3 -c 'import sys; d=open(sys.argv[1],"rb").read(); sys.exit(not (d[:8]==b"\x89PNG\r\n\x1a\n" and len(d)>3000))' \
		"$tmp/$chart.png" || bad "$chart: not a PNG with a chart in it"
	cutplot -c $chart -t 100ns -T svg $layers >"$tmp/$chart.svg" || bad "$chart svg: exit $?"
	python3 - "$tmp/$chart.svg" "$chart" "$series" <<'EOF' || bad "$chart svg"
import sys, xml.etree.ElementTree as ET
path, chart, series = sys.argv[1], sys.argv[2], sys.argv[3]
texts = {"".join(t.itertext()).strip() for t in ET.parse(path).iter("{http://www.w3.org/2000/svg}text")}
want = [{"timeline": "timeline: ", "categories": "driver API time by category: ",
         "durations": "driver API call durations: ", "gaps": "host idle gaps between driver calls: "}[chart]
        + "tests/cases/cutchrome/layers/input"]
want += series.split(" ") if chart != "gaps" else [series]
missing = [w for w in want if w not in texts]
if missing:
    print("%s: missing %s in %s" % (path, missing, sorted(texts)))
    sys.exit(1)
EOF
	cutplot -c $chart -t 100ns -T dumb -s 130 $layers >"$tmp/$chart.txt" || bad "$chart dumb: exit $?"
	for s in $series; do
		grep -q -- "$s" "$tmp/$chart.txt" || bad "$chart dumb: no $s"
	done
done
printf '%s\n' "$labels_timeline" | tr '|' '\n' | while read -r l; do
	grep -q "^ *$l |" "$tmp/timeline.txt" || { echo "FAIL: timeline dumb: no row $l"; exit 1; }
done || fail=1
printf '%s\n' "$labels_gaps" | tr '|' '\n' | while read -r l; do
	grep -qF "$l" "$tmp/gaps.svg" || { echo "FAIL: gaps svg: no row $l"; exit 1; }
done || fail=1
# The launch of worker 78 is drawn with its character on its row.
grep -q '^ *worker 78 api |.*L' "$tmp/timeline.txt" || bad "timeline dumb: no L on worker 78"

# Threads that only sleep are left out, and the chart says how many; -a draws every thread.
# Rows sit on the lines between the borders, never on a border, one row a line.
sleepers=tests/cases/cutplot/script-timeline-sleepers/input
on_border() { grep -E '^ *[[:alnum:]].*\+-----' "$1"; }
cutplot -T dumb -s 140,30 -c timeline $sleepers >"$tmp/sl.txt" 2>"$tmp/err" || bad "sleepers: exit $?"
[ -s "$tmp/err" ] && bad "sleepers: $(cat "$tmp/err")"
grep -q '30 threads without driver calls not drawn (-a draws them)' "$tmp/sl.txt" ||
	bad "sleepers: no count of the threads left out"
grep -q 'sleeper [0-9]' "$tmp/sl.txt" && bad "sleepers: a thread that only sleeps is drawn"
for l in 'python 77 api' 'python 77 ioctl' 'python 77 sched' 'worker 78 api' 'interrupts'; do
	grep -q "^ *$l |" "$tmp/sl.txt" || bad "sleepers: no row $l"
done
on_border "$tmp/sl.txt" && bad "sleepers: a row on the border"
# The time axis spans the rows drawn (1000 to 4000 ns), not the sleepers' (200 to 10000 ns).
grep -qE '^ +0 .* 3000 *$' "$tmp/sl.txt" && ! grep -q 9000 "$tmp/sl.txt" ||
	bad "sleepers: the time axis is not that of the rows drawn"
cutplot -a -T dumb -s 140,30 -c timeline $sleepers >"$tmp/sl-a.txt" 2>"$tmp/err" ||
	bad "sleepers -a: exit $?"
[ "$(grep -cE '^ *(sleeper [0-9]+ sched|python 77 [a-z]+|worker 78 api|interrupts) \|' \
	"$tmp/sl-a.txt")" -eq 35 ] || bad "sleepers -a: not 35 rows of a line each"
grep -q 'not drawn' "$tmp/sl-a.txt" && bad "sleepers -a: says threads are left out"
on_border "$tmp/sl-a.txt" && bad "sleepers -a: a row on the border"
grep -q '30 lines are too few for the 35 rows of the timeline chart; drawing 43' "$tmp/err" ||
	bad "sleepers -a: no word on the height: $(cat "$tmp/err")"
# One row, and the ten rows of the hand-built trace (GPU work: a row per stream), at several sizes.
grep -v '"layer":"ioctl"' $layers | grep -e '"tid":78' -e '"layer":"meta"' >"$tmp/one.jsonl"
for s in 60 130 130,12 200,40; do
	cutplot -T dumb -s $s -c timeline "$tmp/one.jsonl" >"$tmp/one.txt" 2>/dev/null
	grep -q '^ *worker 78 api |' "$tmp/one.txt" && ! on_border "$tmp/one.txt" ||
		bad "one row, -s $s: not on a line of its own"
	cutplot -T dumb -s $s -c timeline $layers >"$tmp/rows.txt" 2>/dev/null
	[ "$(grep -cE '^ *[[:alnum:]][[:alnum:] ]* \|' "$tmp/rows.txt")" -eq 10 ] &&
		! on_border "$tmp/rows.txt" || bad "ten rows, -s $s: not a line each"
done

# A dozen categories: the labels of the category chart do not run into each other (on the
# half-width panel of the overview either), and a category with some time is never 0.0%.
python3 - >"$tmp/cats.jsonl" <<'EOF'
import json
names = {"init": "cuDriverGetVersion", "context": "cuCtxAttach", "device": "cuDeviceGet",
         "memory": "cuMemAlloc_v2", "transfer": "cuMemcpyHtoD_v2", "launch": "cuLaunchKernel",
         "sync": "cuCtxSynchronize", "stream": "cuStreamCreate", "event": "cuEventCreate",
         "module": "cuModuleLoad", "graph": "cuGraphLaunch", "query": "cuDeviceGetAttribute"}
calls = {"init": 1356, "context": 7, "query": 2825}
durs, ts = {"init": 130000, "context": 14000000, "module": 900000}, 1000
for cat, name in names.items():
    for i in range(calls.get(cat, 20)):
        print(json.dumps({"ts": ts, "dur": durs.get(cat, 500), "pid": 7, "tid": 7,
                          "layer": "api", "name": name, "ret": 0}))
        ts += durs.get(cat, 500) + 100
EOF
cutplot -c categories -s 600,480 -o "$tmp/cats.svg" "$tmp/cats.jsonl" || bad "categories: exit $?"
cutplot -c all -o "$tmp/cats-all.svg" "$tmp/cats.jsonl" || bad "categories all: exit $?"
for f in cats cats-all; do
	python3 - "$tmp/$f.svg" <<'EOF' || bad "$f.svg: labels overlap"
import re, sys, xml.etree.ElementTree as ET
NS = "{http://www.w3.org/2000/svg}"
boxes = []  # text boxes, at about 5.5 pixels a character of the 10-point font
for g in ET.parse(sys.argv[1]).iter(NS + "g"):
    m = re.match(r"translate\(([-\d.]+),([-\d.]+)\)", g.get("transform", ""))
    t = g.find(NS + "text")
    s = "".join(t.itertext()).strip() if t is not None else ""
    if not m or not s:
        continue
    x, y, w = float(m.group(1)), float(m.group(2)), 5.5 * len(s)
    a = {"start": 0, "middle": -w / 2, "end": -w}[g.get("text-anchor", "start")]
    if "rotate(270)" in g.get("transform"):  # read upwards from (x, y)
        boxes.append((s, x - 9, x + 1, y - a - w, y - a))
    else:
        boxes.append((s, x + a, x + a + w, y - 9, y + 1))
bad = [(p[0], q[0]) for i, p in enumerate(boxes) for q in boxes[i + 1:]
       if p[1] < q[2] and q[1] < p[2] and p[3] < q[4] and q[3] < p[4]]
for p, q in bad:
    print("%s: %r overlaps %r" % (sys.argv[1], p, q))
sys.exit(bool(bad))
EOF
done
cutplot -c categories -T dumb -s 120 "$tmp/cats.jsonl" >"$tmp/cats.txt"
grep -qE '(^|[^0-9])0\.0%' "$tmp/cats.txt" && bad "categories: 0.0% for a category with time"
[ "$(grep -c '^ *[a-z]* |.*<0\.1%, 20 calls' "$tmp/cats.txt")" -eq 8 ] ||
	bad "categories dumb: not 8 bars of <0.1%"
grep -qE '^ *init \|\*+ 60\.0%, 1356 calls' "$tmp/cats.txt" ||
	bad "categories dumb: no init bar with its label"

# The idle share of each thread is the one cutgaps prints, when cutgaps is built.
if command -v cutgaps >/dev/null; then
	cutgaps -j samples/demo.jsonl >"$tmp/gaps.json" || bad "cutgaps -j: exit $?"
	cutplot -c gaps -T dumb -s 150 samples/demo.jsonl >"$tmp/demo-gaps.txt"
	python3 - "$tmp/gaps.json" "$tmp/demo-gaps.txt" <<'EOF' || bad "idle shares differ from cutgaps"
import json, re, sys
threads = json.load(open(sys.argv[1]))["threads"]
text = open(sys.argv[2]).read()
for t in threads:
    want = round(100.0 * t["idle_ns"] / t["window_ns"])
    m = re.search(r"tid %d \((\d+)%% idle\)" % t["tid"], text)
    if not m or int(m.group(1)) != want:
        print("thread %d: cutgaps %d%% idle, cutplot %s" % (t["tid"], want, m and m.group(1)))
        sys.exit(1)
EOF
fi

# Everything at once, on the demo trace.
cutplot -c all -o "$tmp/all.svg" samples/demo.jsonl || bad "all svg: exit $?"
for t in 'timeline: ' 'host idle gaps' 'driver API time by category' 'driver API call durations'; do
	grep -q "$t" "$tmp/all.svg" || bad "all svg: no $t"
done
cutplot -c all -T dumb samples/demo.jsonl >"$tmp/all.txt" || bad "all dumb: exit $?"
[ "$(grep -c 'samples/demo.jsonl' "$tmp/all.txt")" -eq 5 ] || bad "all dumb: not 5 charts (the GPU one too)"

# Bad input: the good lines are drawn, the bad one reported, exit 1.
head -c 3000 $layers >"$tmp/trunc.jsonl"
cutplot -T svg "$tmp/trunc.jsonl" >"$tmp/trunc.svg" 2>"$tmp/err"
[ $? -eq 1 ] || bad "truncated: exit status is not 1"
grep -q 'trunc.jsonl:25: ' "$tmp/err" || bad "truncated: $(cat "$tmp/err")"
grep -q 'worker 78 api' "$tmp/trunc.svg" || bad "truncated: good lines not drawn"

# Empty input draws an empty chart rather than failing.
cutplot -T dumb </dev/null >"$tmp/empty.txt" || bad "empty: exit $?"
grep -q 'no events' "$tmp/empty.txt" || bad "empty: no 'no events'"
cutplot -c nonsense $layers >/dev/null 2>&1
[ $? -eq 2 ] || bad "-c nonsense: exit status is not 2"
exit $fail
