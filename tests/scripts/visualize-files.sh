#!/bin/sh
# The viewers' -o files (issue 23): cutplot -o goes through share/lib/outfile as cutchrome's
# and cutperfetto's do (it followed a symbolic link, overwriting its target, and created its
# file 0666 under umask 000): a link refused with exit 2, a hard link or an earlier file
# replaced by a fresh 0644 file that gnuplot draws into and that is renamed when gnuplot has
# succeeded, the earlier file left whole when it fails. And the temporary of cutchrome -o,
# cutperfetto -o and cutplot -o is removed when SIGTERM, SIGINT, SIGHUP or SIGXFSZ ends the
# tool (139 MB were left behind): each signal is sent once the temporary exists (the test
# waits for the file, not for a time), and the tool dies of it as it would have. File names
# in their messages are escaped.
B=${CUT_BUILD:-build}
PATH=$B/bin:$PATH
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
command -v python3 >/dev/null || { echo "needs python3"; exit 77; }
fail=0
bad() { echo "FAIL $*"; fail=1; }

# A stand-in gnuplot: reads the script, draws "PNG" and, when $HOLD names a FIFO, says so in
# $HOLD.ready and waits for a line there; $GNUFAIL makes it fail.
cat >"$tmp/gnuplot" <<'EOF'
#!/bin/sh
cat >/dev/null
printf 'PNG drawn\n'
[ -n "$GNUFAIL" ] && exit 1
if [ -n "$HOLD" ]; then
	: >"$HOLD.ready"
	read -r line <"$HOLD"
fi
exit 0
EOF
chmod +x "$tmp/gnuplot"
export GNUPLOT="$tmp/gnuplot"
in=tests/cases/cutchrome/layers/input

# A symbolic link: refused, its target as it was.
echo precious >"$tmp/target"
ln -s "$tmp/target" "$tmp/link.png"
cutplot -o "$tmp/link.png" "$in" 2>"$tmp/err"
[ $? -eq 2 ] || bad "cutplot, a link: exit status not 2"
grep -q 'a symbolic link: not followed' "$tmp/err" || bad "cutplot, a link: $(cat "$tmp/err")"
[ "$(cat "$tmp/target")" = precious ] || bad "cutplot wrote the link's target"
# umask 000: 0644, and what gnuplot drew.
(umask 0 && cutplot -o "$tmp/a.png" "$in") || bad "cutplot, umask 0: exit $?"
[ "$(stat -c %a "$tmp/a.png")" = 644 ] || bad "cutplot: mode $(stat -c %a "$tmp/a.png"), want 644"
[ "$(cat "$tmp/a.png")" = "PNG drawn" ] || bad "cutplot: the file is not gnuplot's output"
# A hard link: a fresh file under the name, the other name untouched.
echo precious >"$tmp/target2"
ln "$tmp/target2" "$tmp/h.png"
cutplot -o "$tmp/h.png" "$in" || bad "cutplot, a hard link: exit $?"
[ "$(cat "$tmp/target2")" = precious ] || bad "cutplot wrote a hard link's other name"
[ "$(cat "$tmp/h.png")" = "PNG drawn" ] || bad "cutplot, a hard link: not drawn under the name"
# gnuplot fails: exit 2, the earlier file whole, no temporary left.
GNUFAIL=1 cutplot -o "$tmp/a.png" "$in" 2>/dev/null
[ $? -eq 2 ] || bad "cutplot, gnuplot failing: exit status not 2"
[ "$(cat "$tmp/a.png")" = "PNG drawn" ] && [ "$(stat -c %a "$tmp/a.png")" = 644 ] ||
	bad "cutplot, gnuplot failing: the earlier file changed"
ls -A "$tmp" | grep -q '^\.' && bad "cutplot: a temporary left: $(ls -A "$tmp" | grep '^\.')"
# /dev/null stays a device.
cutplot -o /dev/null "$in" || bad "cutplot -o /dev/null: exit $?"
[ -c /dev/null ] || bad "cutplot replaced /dev/null"

# Signals. The tool reads a generated trace from a pipe that stays open (cutchrome and
# cutperfetto create their temporary first, then read), or holds gnuplot (cutplot): the
# signal comes once the temporary exists, while the tool is at work.
python3 tests/bench/gentrace.py 4 >"$tmp/big.jsonl"
mkfifo "$tmp/hold"
python3 - "$tmp" <<'PY' || fail=1
import glob, os, resource, signal, subprocess, sys, time
tmp = sys.argv[1]
big = open(os.path.join(tmp, "big.jsonl"), "rb").read()
bad = 0
DEADLINE = 120  # seconds for the temporary to appear: a condition, not a sleep


def wait_for(cond):
    end = time.monotonic() + DEADLINE
    while not cond():
        if time.monotonic() > end:
            return False
        time.sleep(0.01)
    return True


def child(sig, fsize):
    def setup():
        # The signal's default action, whatever the shell running the test set (a
        # background job ignores SIGINT)
        signal.signal(sig, signal.SIG_DFL)
        if fsize:
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
    return setup


def run(tool, sig, fsize=0):
    global bad
    d = os.path.join(tmp, "sig")
    os.makedirs(d, exist_ok=True)
    for f in glob.glob(os.path.join(d, "*")) + glob.glob(os.path.join(d, ".*")):
        os.unlink(f)
    what = "%s, %s" % (tool, signal.Signals(sig).name)
    if tool == "cutplot":
        out = os.path.join(d, "c.png")
        cmd = ["cutplot", "-o", out, "tests/cases/cutchrome/layers/input"]
        env = dict(os.environ, HOLD=os.path.join(tmp, "hold"))
        ready = os.path.join(tmp, "hold.ready")
        if os.path.exists(ready):
            os.unlink(ready)
        p = subprocess.Popen(cmd, env=env, preexec_fn=child(sig, 0))
        ok = wait_for(lambda: os.path.exists(ready))
    else:
        out = os.path.join(d, "t" if tool == "cutchrome" else "t.pftrace")
        p = subprocess.Popen([tool, "-o", out], stdin=subprocess.PIPE,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             preexec_fn=child(sig, fsize))
        try:
            p.stdin.write(big)  # returns once the tool has read all but a pipe's worth
            p.stdin.flush()
        except BrokenPipeError:
            pass
        # (a file size limit: the tool dies as its temporary grows past it)
        ok = fsize or wait_for(lambda: glob.glob(os.path.join(d, ".*")))
    if not ok:
        print("FAIL %s: no temporary appeared" % what)
        bad += 1
    if not fsize:
        p.send_signal(sig)
    rc = p.wait()
    if tool == "cutplot":
        with open(os.path.join(tmp, "hold"), "w") as h:  # lets the stand-in gnuplot end
            h.write("go\n")
    else:
        p.stdin.close()
    if rc != -sig:
        print("FAIL %s: exit status %s, want death by the signal (%d)" % (what, rc, -sig))
        bad += 1
    left = os.listdir(d)
    if left:
        print("FAIL %s: left %s" % (what, left))
        bad += 1


for tool in ("cutchrome", "cutperfetto", "cutplot"):
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        run(tool, sig)
# A file size limit (ulimit -f) whose SIGXFSZ ends cutchrome mid-write.
run("cutchrome", signal.SIGXFSZ, fsize=64 * 1024)
sys.exit(1 if bad else 0)
PY
# File names in messages are escaped (a name can hold a terminal's escape sequences): an
# input that does not exist, an -o that is a symbolic link.
esc=$(printf 'x\033[2Jy')
for t in cutchrome cutperfetto; do
	$t "$tmp/$esc" >/dev/null 2>"$tmp/err"
	grep -q "$(printf '\033')" "$tmp/err" && bad "$t: a file name printed raw: $(od -c "$tmp/err" | head -2)"
	grep -q 'x\\x1b\[2Jy' "$tmp/err" || bad "$t: no escaped name: $(cat "$tmp/err")"
done
ln -s "$tmp/target" "$tmp/$esc.png"
cutplot -o "$tmp/$esc.png" "$in" 2>"$tmp/err"
grep -q "$(printf '\033')" "$tmp/err" && bad "cutplot: a file name printed raw"
grep -q 'x\\x1b\[2Jy.png: a symbolic link' "$tmp/err" || bad "cutplot: no escaped name: $(cat "$tmp/err")"
exit $fail
