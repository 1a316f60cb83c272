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

# Series each chart of the hand-built trace must name (gaps: of 100 ns or more).
series_timeline='memory launch sync transfer query ioctl kernel irq off-CPU GPU'
series_categories='memory launch sync transfer query'
series_durations='memory launch sync transfer'
series_gaps='gap < 100 us'
labels_timeline='python 77 api|python 77 ioctl|python 77 kernel|python 77 sched|python 77 gpu|worker 78 api|worker 78 ioctl|tid 79 api|interrupts'
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
[ "$(grep -c 'samples/demo.jsonl' "$tmp/all.txt")" -eq 4 ] || bad "all dumb: not 4 charts"

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
