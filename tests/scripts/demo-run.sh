#!/bin/sh
# make demo's run (share/scripts/demo.sh) on its two training samples, with the tools built:
# it succeeds, shows each part it says it shows with real numbers (35 steady steps per trace,
# the GPU busy of the steady state, the synchronisations that reading the loss adds, and the
# step that got slower), and writes the timeline and the chart.
B=${CUT_BUILD:-build}
B=$(cd "$B" && pwd) || exit 2
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL demo: $*"; fail=1; }
command -v gnuplot >/dev/null 2>&1 || { echo "skip: gnuplot is not installed (cutplot needs it)"; exit 77; }
mkdir -p "$tmp/b" && ln -s "$B/bin" "$tmp/b/bin"
PATH="$B/bin:$PATH" share/scripts/demo.sh "$tmp/b" >"$tmp/out" 2>&1 || bad "exit $?: $(tail -3 "$tmp/out")"
grep -q '^GPU work (timed on the device' "$tmp/out" || bad "no GPU work table"
# The steady state is GPU-bound (the base loop keeps the GPU above 80 % busy).
busy=$(sed -n '/^GPU busy/{n;n;p;}' "$tmp/out" | awk '{ sub("%", "", $NF); print int($NF) }')
[ "${busy:-0}" -ge 80 ] || bad "steady-state GPU busy ${busy:-none}%, not 80 % or more"
awk '/^Steps per process/ { getline; getline; if ($3 != 35) exit 1; found = 1 } END { exit !found }' \
	"$tmp/out" || bad "the per-step view does not hold the 35 steady steps"
grep -Eq '^new +(runtime|driver) +0 +35 .*(cudaStreamSynchronize|cuStreamSynchronize)$' "$tmp/out" ||
	bad "cutdiff does not show the 35 synchronisations loss.item() adds"
grep -Eq '^slower +nvtx +35 +35 .* step$' "$tmp/out" || bad "cutdiff does not show the step slower"
python3 -m json.tool "$tmp/b/demo/trace.json" >/dev/null 2>&1 || bad "trace.json is not JSON"
[ "$(head -c 4 "$tmp/b/demo/overview.png" | od -An -c | tr -d ' ')" = "211PNG" ] || bad "overview.png is not a PNG"
exit $fail
