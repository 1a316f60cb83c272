#!/bin/sh
# Compressed input at its frame boundaries (issue 23): zstd's skippable frames (pzstd writes
# one before its frames) are skipped, not read as garbage; bytes after the last gzip member or
# zstd frame that start none are "trailing garbage" (every line before them kept, exit 3, as
# for corrupt data), and only the start of a member or frame cut off is "cut short".
B=${CUT_BUILD:-build}
PATH=$B/bin:$PATH
for c in python3 zstd gzip; do command -v $c >/dev/null || { echo "needs $c"; exit 77; }; done
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL $*"; fail=1; }
t=samples/capture-driverapi.jsonl
zstd -q -c "$t" >"$tmp/t.zst"
gzip -c "$t" >"$tmp/t.gz"
cutmerge -A "$t" >"$tmp/want" 2>/dev/null || bad "plain: exit $?"
lines=$(wc -l <"$t")
python3 - "$tmp" <<'PY'
import struct, sys
d = sys.argv[1]
z, g = open(d + "/t.zst", "rb").read(), open(d + "/t.gz", "rb").read()
skip = lambda n, data: struct.pack("<II", 0x184D2A50 + n, len(data)) + data
open(d + "/pz.zst", "wb").write(skip(0, b"\0\0\0\0") + z)
open(d + "/between.zst", "wb").write(skip(15, b"x" * 100) + z + skip(3, b""))
open(d + "/stray.gz", "wb").write(g + b"x")
open(d + "/zeros.gz", "wb").write(g + b"\0" * 16)
open(d + "/garbage.zst", "wb").write(z + b"not zstd\n")
open(d + "/magic.gz", "wb").write(g + b"\x1f")
open(d + "/magic.zst", "wb").write(z + b"\x28\xb5\x2f")
PY
# the real thing, when there
command -v pzstd >/dev/null && pzstd -q -c "$t" >"$tmp/real.zst"
for f in pz.zst between.zst real.zst; do
	[ -f "$tmp/$f" ] || continue
	cutmerge -A "$tmp/$f" >"$tmp/out" 2>"$tmp/err" || bad "$f: exit $?: $(head -3 "$tmp/err")"
	tail -n +2 "$tmp/want" >"$tmp/w2"
	tail -n +2 "$tmp/out" | cmp -s - "$tmp/w2" || bad "$f: not read as the trace"
done
# file reason: every line kept, then "file:line: reason", exit 3
broken() {
	cutmerge -A "$tmp/$1" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ "$rc" = 3 ] || bad "$1: exit $rc, want 3"
	want="cutmerge: $tmp/$1:$((lines + 1)): $2"
	[ "$(cat "$tmp/err")" = "$want" ] || bad "$1: said '$(cat "$tmp/err")', want '$want'"
	[ "$(grep -c '"layer":"api"' "$tmp/out")" = "$(grep -c '"layer":"api"' "$t")" ] ||
		bad "$1: lines lost"
}
broken stray.gz "trailing garbage after the gzip data: not read"
broken zeros.gz "trailing garbage after the gzip data: not read"
broken garbage.zst "trailing garbage after the zstd data: not read"
broken magic.gz "gzip data cut short: the input ends inside a member"
broken magic.zst "zstd data cut short: the input ends inside a frame"
# zstd --long's window is past what libzstd reads by default: said so, not "corrupt"
cat "$t" | zstd -q --long=28 -c >"$tmp/long.zst"
cutmerge -A "$tmp/long.zst" >/dev/null 2>"$tmp/err"
rc=$?
[ "$rc" = 3 ] && grep -q 'window over the 128 MiB.*zstd --long' "$tmp/err" && ! grep -q corrupt "$tmp/err" ||
	bad "zstd --long=28: exit $rc: $(cat "$tmp/err")"
exit $fail
