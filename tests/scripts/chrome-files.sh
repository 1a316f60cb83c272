#!/bin/sh
# cutchrome -o and cutperfetto -o write no file through a link (issue 12: a link planted in a
# shared directory would get the trace written to its target): a symbolic link is refused with
# exit 2, the target as it was; a hard link, or a file left by an earlier run, is replaced by a
# fresh file (created with O_EXCL beside it and renamed into place), its other name untouched;
# a run that fails leaves the previous file whole and no temporary behind; files are 0644
# whatever the umask.
B=${CUT_BUILD:-build}
PATH=$B/bin:$PATH
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL $*"; fail=1; }
echo precious >"$tmp/target"
ln -s "$tmp/target" "$tmp/p-001.json"
cutchrome -o "$tmp/p" samples/demo.jsonl >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] || bad "a link: exit status not 2"
grep -q 'a symbolic link: not followed' "$tmp/err" || bad "a link: no message: $(cat "$tmp/err")"
[ "$(cat "$tmp/target")" = precious ] || bad "the link's target was written"
(umask 0 && cutchrome -o "$tmp/q" samples/demo.jsonl >/dev/null) || bad "umask 0: exit $?"
[ "$(stat -c %a "$tmp/q-001.json")" = 644 ] || bad "mode $(stat -c %a "$tmp/q-001.json"), want 644"
# A hard link planted under the part's name: a fresh file replaces the name, the target keeps
# its bytes.
echo precious >"$tmp/target2"
ln "$tmp/target2" "$tmp/h-001.json"
cutchrome -o "$tmp/h" samples/demo.jsonl >/dev/null || bad "a hard link: exit $?"
[ "$(cat "$tmp/target2")" = precious ] || bad "a hard link's other name was written"
python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$tmp/h-001.json" || bad "a hard link: no trace under the name"
[ "$(stat -c %i "$tmp/h-001.json")" != "$(stat -c %i "$tmp/target2")" ] || bad "a hard link: the same inode"
# An earlier, longer file: replaced whole (nothing of it left at the end).
head -c 100000 /dev/zero | tr '\0' x >"$tmp/q-001.json"
cutchrome -o "$tmp/q" samples/demo.jsonl >/dev/null || bad "an earlier file: exit $?"
grep -q xxx "$tmp/q-001.json" && bad "an earlier file: its bytes are left in the new one"
# A run that fails (a write over the size limit): the earlier file whole, no temporary left.
cp "$tmp/q-001.json" "$tmp/q.before"
python3 tests/bench/gentrace.py 2 1 >"$tmp/big.jsonl"
( ulimit -f 64; trap '' XFSZ; cutchrome -o "$tmp/q" "$tmp/big.jsonl" >/dev/null 2>&1; echo $? >"$tmp/rc" )
[ "$(cat "$tmp/rc")" = 2 ] || bad "a failed run: exit $(cat "$tmp/rc")"
cmp -s "$tmp/q-001.json" "$tmp/q.before" || bad "a failed run changed the earlier file"
ls -A "$tmp" | grep -q '^\.' && bad "a temporary left: $(ls -A "$tmp" | grep '^\.')"
# cutperfetto -o: the same rules.
ln -s "$tmp/target" "$tmp/t.pftrace"
cutperfetto -o "$tmp/t.pftrace" samples/demo.jsonl 2>"$tmp/err"
[ $? -eq 2 ] && grep -q 'a symbolic link: not followed' "$tmp/err" || bad "cutperfetto, a link: $(cat "$tmp/err")"
[ "$(cat "$tmp/target")" = precious ] || bad "cutperfetto wrote the link's target"
ln "$tmp/target2" "$tmp/h.pftrace"
(umask 0 && cutperfetto -o "$tmp/h.pftrace" samples/demo.jsonl) || bad "cutperfetto, a hard link: exit $?"
[ "$(cat "$tmp/target2")" = precious ] || bad "cutperfetto wrote a hard link's other name"
[ "$(stat -c %a "$tmp/h.pftrace")" = 644 ] || bad "cutperfetto: mode $(stat -c %a "$tmp/h.pftrace"), want 644"
cutperfetto samples/demo.jsonl | cmp -s - "$tmp/h.pftrace" || bad "cutperfetto -o: not the bytes of standard output"
exit $fail
