#!/bin/sh
# cutmerge streams sorted input whether or not a header says so (issue 26): a real
# multi-layer trace with every header taken out (as grep leaves it) is merged exactly as with
# -S (which sorts it whole) and, but for that header, as when its header says it is sorted;
# its peak memory is a fraction of that of the same lines shuffled, measured in this run (it
# was sorted whole before: as much as shuffled). Nearly sorted lines (moved back by up to 300)
# are put in order by the window, a block that comes far too late is sorted from where it
# breaks the order; both give what -S gives, from a file and from a pipe.
B=${CUT_BUILD:-build}
PATH=$B/bin:$PATH
command -v python3 >/dev/null || { echo "needs python3"; exit 77; }
command -v zstd >/dev/null || { echo "needs zstd"; exit 77; }
# under AddressSanitizer, memory freed is held in quarantine: none, so that sizes compare
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0:thread_local_quarantine_size_kb=0"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL $*"; fail=1; }

zstd -dc samples/ddp-2gpu-hook.jsonl.zst >"$tmp/h.jsonl"
grep -v '"name":"header"' "$tmp/h.jsonl" >"$tmp/s.jsonl"
python3 - "$tmp" <<'PY'
import random, sys
d = sys.argv[1]
rnd = random.Random(1)
lines = open(f"{d}/s.jsonl").read().splitlines(True)
n = len(lines)
near = list(lines)
for _ in range(n // 50):
    i = rnd.randrange(300, n)
    near.insert(i - rnd.randrange(1, 300), near.pop(i))
open(f"{d}/near.jsonl", "w").writelines(near)
a, b = n // 2, n // 2 + 3000
open(f"{d}/late.jsonl", "w").writelines(lines[:a] + lines[b:] + lines[a:b])
rnd.shuffle(lines)
open(f"{d}/shuf.jsonl", "w").writelines(lines)
PY
# cost FILE: "max-rss-KiB exit-status" of cutmerge FILE, its output in FILE.out
cost() {
	python3 -c '
import resource, subprocess, sys
rc = subprocess.run(["cutmerge", sys.argv[1]], stdout=open(sys.argv[1] + ".out", "w"),
                    stderr=open(sys.argv[1] + ".err", "w")).returncode
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, rc)' "$1"
}
# what the measure counts besides cutmerge's own (the fork of python before it is replaced)
: >"$tmp/empty.jsonl"
set -- $(cost "$tmp/empty.jsonl")
base=$1
set -- $(cost "$tmp/s.jsonl")
sorted=$1
[ "$2" = 0 ] || bad "sorted: exit $2: $(cat "$tmp/s.jsonl.err")"
set -- $(cost "$tmp/shuf.jsonl")
shuffled=$1
[ "$2" = 0 ] || bad "shuffled: exit $2"
echo "peak RSS: sorted without a header ${sorted} KiB, the same lines shuffled ${shuffled} KiB," \
	"an empty input ${base} KiB"
[ $(((sorted - base) * 4)) -le $((shuffled - base)) ] ||
	bad "sorted input: ${sorted} KiB, shuffled ${shuffled} KiB, empty ${base} KiB"
grep -q '"sorted_inputs":0' "$tmp/s.jsonl.out" || bad "sorted input counted as sorted"

cutmerge -S "$tmp/s.jsonl" >"$tmp/S.out" || bad "-S: exit $?"
cmp -s "$tmp/s.jsonl.out" "$tmp/S.out" || bad "sorted input: not what -S gives"
# with its headers (the first says sorted): the same records but those headers (and the
# trailer that counts them)
cutmerge "$tmp/h.jsonl" | grep -v '"name":"header"' | sed '$d' >"$tmp/h.out"
grep -v '"name":"header"' "$tmp/s.jsonl.out" | sed '$d' | cmp -s - "$tmp/h.out" ||
	bad "sorted input: not what its header'd copy gives"
cutmerge -S "$tmp/shuf.jsonl" | cmp -s - "$tmp/shuf.jsonl.out" || bad "shuffled: not what -S gives"

for f in near late; do
	cutmerge "$tmp/$f.jsonl" >"$tmp/$f.out" 2>"$tmp/$f.err" || bad "$f: exit $?"
	cutmerge -S "$tmp/$f.jsonl" >"$tmp/$f.S" || bad "$f -S: exit $?"
	cmp -s "$tmp/$f.out" "$tmp/$f.S" || bad "$f: not what -S gives"
	grep -q '"sorted_inputs":1' "$tmp/$f.out" || bad "$f: not counted as sorted"
	cat "$tmp/$f.jsonl" | cutmerge >"$tmp/$f.pipe" || bad "$f from a pipe: exit $?"
	sed "s|\"$tmp/$f.jsonl\"|\"<stdin>\"|" "$tmp/$f.S" | cmp -s - "$tmp/$f.pipe" ||
		bad "$f from a pipe: not what -S gives"
	[ -s "$tmp/$f.err" ] && bad "$f: $(cat "$tmp/$f.err")"
done
exit $fail
