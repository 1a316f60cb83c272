#!/bin/sh
# cutchrome -o writes no file through a symbolic link (issue 12: a link planted in a shared
# directory would get the trace written to its target): refused with exit 2, the target as it
# was; files it makes are 0644 whatever the umask.
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
exit $fail
