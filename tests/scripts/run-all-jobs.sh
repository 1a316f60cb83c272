#!/bin/sh
# tests/run-all -jN, on a tree of made-up scripts: two scripts run at once (each waits to see
# the other running), every script sees no descriptor 3 (the runner's FIFO), the scripts that
# CUT_LOADED_SCRIPTS names run after the others have ended, two at once (each waits to see the
# other) and in the order of its patterns, a script that CUT_ALONE_SCRIPTS names runs after all
# of them and beside none, each result is counted and said once (a failure with its output's
# tail, a skip with its reason), the run exits 1 on a failure; without -j the same scripts run
# one at a time in their order, those CUT_FIRST_SCRIPTS names first.
top=${CUT_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL $*"; fail=1; }
# The made-up scripts' failures are this test's to judge, not make check's to list.
unset CUT_FAILED_LOG
mkdir -p "$tmp/tree/tests/scripts" "$tmp/b" "$tmp/m"
cp "$top/tests/run-all" "$tmp/tree/tests/" || exit 1
S=$tmp/tree/tests/scripts
M=$tmp/m
# mk NAME BODY: a script that says it started, and is running while BODY runs (in a subshell:
# an exit in it ends only the body), and checks descriptor 3.
mk() {
	cat >"$S/$1.sh" <<EOF
M=$M
touch "\$M/$1.started" "\$M/$1.running"
[ -e /proc/\$\$/fd/3 ] && echo "$1: descriptor 3 open" >>"\$M/fd3"
($2)
rc=\$?
rm -f "\$M/$1.running"
exit \$rc
EOF
}
# wait_for FILE: up to 60 s (a state, not a time: the other script has started).
wait_for='n=${WAIT_TRIES:-1200}; while [ ! -e "$1" ]; do n=$((n - 1)); [ $n -gt 0 ] || exit 9; sleep 0.05; done'
mk a1 "set -- \$M/a2.started; $wait_for; echo a1 saw a2"
mk a2 "set -- \$M/a1.started; $wait_for; echo a2 saw a1"
mk b-fail 'echo "first line"; echo "why it failed"; exit 3'
mk c-skip 'echo "needs a thing this machine lacks"; exit 77'
mk z-alone 'ls "$M" | grep "\.running$" | grep -v z-alone >"$M/z.others"; exit 0'
# The loaded ones: two at once, beside no other script; w-loaded, named by the second pattern,
# starts after both (in the patterns' order, not the names').
mk y-loaded1 "set -- \$M/y-loaded2.started; $wait_for; ls \"\$M\" | grep '\\.running\$' | grep -v '^[yw]-loaded' >\"\$M/y.others\"; exit 0"
mk y-loaded2 "set -- \$M/y-loaded1.started; $wait_for; ls \"\$M\" | grep '\\.running\$' | grep -v '^[yw]-loaded' >>\"\$M/y.others\"; exit 0"
mk w-loaded '[ -e "$M/y-loaded1.started" ] && [ -e "$M/y-loaded2.started" ] || echo "w-loaded first" >>"$M/y.others"'

CUT_ALONE_SCRIPTS='z-*' CUT_LOADED_SCRIPTS='y-* w-*' "$tmp/tree/tests/run-all" -j2 "$tmp/b" \
	a1 a2 b-fail c-skip z-alone y-loaded1 y-loaded2 w-loaded >"$tmp/out" 2>&1
rc=$?
[ $rc -eq 1 ] || bad "-j2 with a failure: exit $rc, not 1"
grep -q '^tests: 6 passed, 1 failed, 1 skipped' "$tmp/out" || bad "-j2: counts: $(grep '^tests:' "$tmp/out")"
for s in a1 a2 z-alone; do
	[ "$(grep -c "^ok  *scripts/$s.sh (" "$tmp/out")" = 1 ] || bad "-j2: $s not said once as ok"
done
for s in y-loaded1 y-loaded2 w-loaded; do
	[ "$(grep -c "^ok  *scripts/$s.sh (.*, loaded)" "$tmp/out")" = 1 ] || bad "-j2: $s not said once as ok, loaded"
done
grep -q '^FAIL  *scripts/b-fail.sh (exit 3,' "$tmp/out" || bad "-j2: the failure not said"
grep -q '^why it failed$' "$tmp/out" || bad "-j2: the failure's output not shown"
grep -q '^skip  *scripts/c-skip.sh: needs a thing this machine lacks$' "$tmp/out" ||
	bad "-j2: the skip's reason not said"
grep -q '^failed: scripts/b-fail.sh$' "$tmp/out" || bad "-j2: failed list: $(grep '^failed' "$tmp/out")"
[ -s "$M/fd3" ] && bad "-j2: $(cat "$M/fd3")"
[ -f "$M/z.others" ] && [ ! -s "$M/z.others" ] || bad "-j2: z-alone ran beside $(cat "$M/z.others" 2>/dev/null)"
[ -f "$M/y.others" ] && [ ! -s "$M/y.others" ] || bad "-j2: the loaded ones: $(cat "$M/y.others" 2>/dev/null)"
# The loaded scripts come after the others (in any order of their ends: w-loaded starts once
# one of the first two has ended, and may end before the other), the alone one last.
tail_names=$(grep -o 'scripts/[a-z0-9-]*\.sh' "$tmp/out" | grep -v '^scripts/b-fail.sh$' | tail -4 | tr '\n' ' ')
loaded_ends=$(echo "$tail_names" | tr ' ' '\n' | head -3 | sort | tr '\n' ' ')
case "$loaded_ends|${tail_names##* scripts/z-}" in
"scripts/w-loaded.sh scripts/y-loaded1.sh scripts/y-loaded2.sh |alone.sh ") ;;
*) bad "-j2: last were $tail_names" ;;
esac

# Without -j: one at a time, in order (a1 alone waits in vain for a2: exit 9).
rm -f "$M"/*
WAIT_TRIES=20 "$tmp/tree/tests/run-all" "$tmp/b" a1 b-fail c-skip >"$tmp/out1" 2>&1
[ $? -eq 1 ] || bad "no -j: exit not 1"
grep -q '^FAIL  *scripts/a1.sh (exit 9,' "$tmp/out1" || bad "no -j: a1 did not run alone: $(grep a1 "$tmp/out1")"
[ "$(grep -o 'scripts/[a-z0-9-]*\.sh' "$tmp/out1" | head -3 | tr '\n' ' ')" = \
	"scripts/a1.sh scripts/b-fail.sh scripts/c-skip.sh " ] || bad "no -j: not in order"
[ -s "$M/fd3" ] && bad "no -j: $(cat "$M/fd3")"
# CUT_FIRST_SCRIPTS: those first, in the order of its patterns, then the rest in order.
rm -f "$M"/*
WAIT_TRIES=20 CUT_FIRST_SCRIPTS='c-* b-fail' "$tmp/tree/tests/run-all" "$tmp/b" a1 b-fail c-skip >"$tmp/out2" 2>&1
[ "$(grep -o 'scripts/[a-z0-9-]*\.sh' "$tmp/out2" | head -3 | tr '\n' ' ')" = \
	"scripts/c-skip.sh scripts/b-fail.sh scripts/a1.sh " ] || bad "CUT_FIRST_SCRIPTS: not first: $(cat "$tmp/out2")"
"$tmp/tree/tests/run-all" -jx "$tmp/b" a1 >/dev/null 2>&1 && bad "-jx: accepted"
[ $fail -eq 0 ] && echo "run-all -j: concurrent, alone and loaded scripts as asked; results said once"
exit $fail
