#!/bin/sh
# cutcapture's default path: libcuthook preloaded into the command records the api, runtime, gpu
# and nvtx layers, eBPF the ioctl, irq and sched layers, and the header's sources say which
# recorded what; uprobes instead, saying why, with --uprobes and -p, and for a command the
# library cannot see into: static, set-user-ID to another user (and, in a process tree, a child
# that is set-user-ID says it is not recorded) or with the driver linked in, or where there is
# no library to preload. The stand-in
# programs (tests/fixtures: cuprog, rtprog, gpuprog, nvtxprog) make as many api and runtime calls
# by default as under --uprobes. Needs root with BPF; exits 77 when missing.
. "$(dirname "$0")/lib/capture-setup.sh"
need_bpf
for f in cuprog rtprog gpuprog nvtxprog libcudart.so.13; do
	[ -e "$fx/$f" ] || fail "build $fx/$f first (make test-programs)"
done
lib="--libcuda $fx/libcuda.so.1 --libcudart $fx/libcudart.so.13"

# counts FILE LAYER: "name count" per function of the layer, sorted.
counts() { jq -r "select(.layer==\"$2\") | .name" "$1" | sort | uniq -c | awk '{ print $2, $1 }'; }
# sources FILE: the header's sources, as compact JSON.
sources() { head -1 "$1" | jq -c .args.sources; }
# capture OUT ARGS...: cutcapture, saying nothing on standard error but the layers this machine
# has not (the kernel layer, where kprobes and fentry are refused).
capture() {
	out=$1
	shift
	"$cap" -q -o "$out" "$@" >"$t/cmd.out" 2>"$t/err" || fail "cutcapture $*: exit $?: $(cat "$t/err")"
	grep -v "kernel layer off" "$t/err" >"$t/said"
	valid "$out"
	[ "$(tail -1 "$out" | jq .args.lost)" = 0 ] || fail "$*: events lost"
}

# The default: every call layer from the library, the kernel side from eBPF.
for prog in "cuprog link" "cuprog dlopen" "cuprog threads" "rtprog 3 4" "gpuprog 5" "nvtxprog 3"; do
	name=${prog%% *}
	keep=$(echo "$prog" | tr ' ' -)
	capture "$t/d.jsonl" -- "$fx/"$prog
	[ ! -s "$t/said" ] || fail "$prog: cutcapture said: $(cat "$t/said")"
	head -1 "$t/d.jsonl" | jq -e '.args.sources | .api == "preload" and .runtime == "preload" and
		.gpu == "preload" and .nvtx == "preload" and .ioctl == "ebpf" and .irq == "ebpf" and
		.sched == "ebpf"' >/dev/null || fail "$prog: header sources $(sources "$t/d.jsonl")"
	head -1 "$t/d.jsonl" | jq -e '.args.probes.mode == "none" and .args.layers.runtime == "on"' \
		>/dev/null || fail "$prog: header: $(head -1 "$t/d.jsonl" | jq -c .args.probes)"
	[ "$(tail -1 "$t/d.jsonl" | jq .args.preload.files)" = 1 ] || fail "$prog: library files"
	# The same calls as the uprobes give: the api and runtime layers, function by function.
	capture "$t/u.jsonl" --uprobes $lib -- "$fx/"$prog
	[ "$(sources "$t/u.jsonl" | jq -r '.api + "|" + .runtime')" = "uprobes: --uprobes|uprobes: --uprobes" ] ||
		fail "$prog --uprobes: header sources $(sources "$t/u.jsonl")"
	for layer in api runtime; do
		[ "$(counts "$t/d.jsonl" $layer)" = "$(counts "$t/u.jsonl" $layer)" ] ||
			fail "$prog: $layer calls differ, default against --uprobes: $(counts "$t/d.jsonl" $layer | tr '\n' ' ') / $(counts "$t/u.jsonl" $layer | tr '\n' ' ')"
	done
	[ -n "$(counts "$t/d.jsonl" api)" ] || fail "$prog: no api calls"
	case $name in
	rtprog | nvtxprog) [ -n "$(counts "$t/d.jsonl" runtime)" ] || fail "$prog: no runtime calls" ;;
	gpuprog) [ "$(grep -c '"layer":"gpu"' "$t/d.jsonl")" -gt 0 ] || fail "$prog: no gpu work" ;;
	esac
	[ $name = nvtxprog ] && { [ "$(grep -c '"layer":"nvtx"' "$t/d.jsonl")" -gt 0 ] || fail "$prog: no nvtx ranges"; }
	cp "$t/d.jsonl" "$t/default-$keep.jsonl"
done
# --hook-api, the default's old spelling: the same.
capture "$t/h.jsonl" --hook-api -- "$fx/cuprog" link
[ "$(sources "$t/h.jsonl")" = "$(sources "$t/default-cuprog-link.jsonl")" ] || fail "--hook-api: $(sources "$t/h.jsonl")"
# The library's own calls are left out of the ioctl and sched layers as with --hook-api: no
# record of a thread of the library's.
own=$(tail -1 "$t/default-gpuprog-5.jsonl" | jq -c .args.preload.threads)
[ "$own" != "[]" ] || fail "gpuprog: no thread of the library's named"
jq -e -s --argjson own "$own" 'all(.[]; .layer == "meta" or (.tid as $t | $own | index($t) | not))' \
	"$t/default-gpuprog-5.jsonl" >/dev/null || fail "gpuprog: records of the library's own thread"

# No library to preload (CUTHOOK_LIB names none): uprobes after all, saying why.
CUTHOOK_LIB=$t/nowhere/libcuthook.so capture "$t/n.jsonl" $lib -- "$fx/cuprog" link
[ "$(sources "$t/n.jsonl" | jq -r .api)" = "uprobes: no libcuthook" ] || fail "no library: header sources $(sources "$t/n.jsonl")"
grep -q "libcuthook cannot be preloaded: CUTHOOK_LIB $t/nowhere/libcuthook.so: .*: the api and runtime layers come from uprobes" "$t/said" ||
	fail "no library: not said: $(cat "$t/said")"
[ "$(counts "$t/n.jsonl" api)" = "$(counts "$t/default-cuprog-link.jsonl" api)" ] || fail "no library: calls differ"

# -p: uprobes, saying why.
sh -c "until grep -qs '\"name\":\"header\"' '$t/p.jsonl'; do sleep 0.05; done
	exec '$fx/cuprog' link" >/dev/null 2>&1 &
bg=$!
"$cap" -q $lib -o "$t/p.jsonl" -p $bg 2>"$t/err" || fail "-p: exit $?: $(cat "$t/err")"
wait $bg
[ "$(sources "$t/p.jsonl" | jq -r .api)" = "uprobes: -p" ] || fail "-p: header sources $(sources "$t/p.jsonl")"
[ "$(counts "$t/p.jsonl" api)" = "$(counts "$t/default-cuprog-link.jsonl" api)" ] || fail "-p: calls differ"

# A static program (its driver loaded with dlopen): uprobes, saying why, the same calls.
cat >"$t/static.c" <<'EOF'
#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv) {
	void *h = dlopen(argv[1], RTLD_NOW);
	int (*init)(unsigned) = h ? (int (*)(unsigned))dlsym(h, "cuInit") : NULL;
	int (*cur)(void **) = h ? (int (*)(void **))dlsym(h, "cuCtxGetCurrent") : NULL;
	void *c;
	if (!init || !cur || init(0) || cur(&c) || cur(&c) || cur(&c))
		return 1;
	puts("static: ok");
	return 0;
}
EOF
if ${CC:-cc} -static -o "$t/static" "$t/static.c" -ldl 2>/dev/null && "$t/static" "$fx/libcuda.so.1" >/dev/null 2>&1; then
	capture "$t/s.jsonl" $lib -- "$t/static" "$fx/libcuda.so.1"
	[ "$(sources "$t/s.jsonl" | jq -r .api)" = "uprobes: static" ] || fail "static: header sources $(sources "$t/s.jsonl")"
	grep -q "$t/static is a static program: the dynamic loader ignores LD_PRELOAD there; the api and runtime layers come from uprobes" "$t/said" ||
		fail "static: not said: $(cat "$t/said")"
	head -1 "$t/s.jsonl" | jq -e '.args.layers.gpu | startswith("off: '"$t"'/static is a static program")' >/dev/null ||
		fail "static: gpu layer: $(head -1 "$t/s.jsonl" | jq -c .args.layers)"
	[ "$(counts "$t/s.jsonl" api | tr '\n' ' ')" = "cuCtxGetCurrent 3 cuInit 1 " ] ||
		fail "static: calls: $(counts "$t/s.jsonl" api | tr '\n' ' ')"
else
	echo "no static C library with dlopen here: the static program's case not run" >&2
fi

# The driver linked into the program: it is probed itself.
${CC:-cc} -std=gnu11 -I"$top/tests/fixtures" -o "$t/inside" "$top/tests/fixtures/cuprog.c" \
	"$top/tests/fixtures/fakecuda.c" "$top/tests/fixtures/fakegpu.c" "$top/tests/fixtures/fakeshare.c" -ldl -pthread ||
	fail "cannot build cuprog with the stand-in linked in"
capture "$t/i.jsonl" -- "$t/inside" link
[ "$(sources "$t/i.jsonl" | jq -r .api)" = "uprobes: libcuda linked in" ] || fail "linked in: header sources $(sources "$t/i.jsonl")"
[ "$(head -1 "$t/i.jsonl" | jq -r .args.libcuda)" = "$t/inside" ] || fail "linked in: not the program probed"
[ "$(counts "$t/i.jsonl" api)" = "$(counts "$t/default-cuprog-link.jsonl" api)" ] ||
	fail "linked in: calls: $(counts "$t/i.jsonl" api | tr '\n' ' ')"

# Set-user-ID to another user: the loader runs in secure-execution mode. The program finds the
# stand-in by an absolute RUNPATH ($ORIGIN is not expanded there) and runs as nobody.
if [ -n "$(findmnt -no OPTIONS -T "$t" 2>/dev/null | grep -w nosuid)" ]; then
	echo "$t is on a nosuid mount: the set-user-ID cases not run" >&2
	exit 0
fi
chmod 755 "$t"
${CC:-cc} -std=gnu11 -I"$top/tests/fixtures" -o "$t/suid" "$top/tests/fixtures/cuprog.c" \
	-L"$fx" -lcuda -Wl,-rpath,"$fx" -Wl,--disable-new-dtags -ldl -pthread ||
	fail "cannot build cuprog with an absolute RUNPATH"
chown 65534 "$t/suid" && chmod 4755 "$t/suid" || fail "cannot make cuprog set-user-ID"
"$t/suid" link >/dev/null 2>&1 || { echo "the set-user-ID cuprog does not run here: its cases not run" >&2; exit 0; }
capture "$t/u.jsonl" $lib -- "$t/suid" link
[ "$(sources "$t/u.jsonl" | jq -r .api)" = "uprobes: setuid" ] || fail "setuid: header sources $(sources "$t/u.jsonl")"
grep -q "$t/suid is set-user-ID: the dynamic loader ignores LD_PRELOAD there" "$t/said" ||
	fail "setuid: not said: $(cat "$t/said")"
[ "$(counts "$t/u.jsonl" api)" = "$(counts "$t/default-cuprog-link.jsonl" api)" ] ||
	fail "setuid: calls: $(counts "$t/u.jsonl" api | tr '\n' ' ')"
# In a process tree: the shell takes the library, its set-user-ID child does not; the child's
# process record and a line on standard error say so, and none of its calls is anyone's.
capture "$t/tree.jsonl" -- sh -c "'$fx/cuprog' link; '$t/suid' link"
[ "$(sources "$t/tree.jsonl" | jq -r .api)" = preload ] || fail "tree: header sources $(sources "$t/tree.jsonl")"
jq -e -s '[.[] | select(.name == "process" and .args.preload != null)] | length == 1 and
	.[0].args.preload == "ignored: secure execution" and .[0].args.comm == "suid"' "$t/tree.jsonl" \
	>/dev/null || fail "tree: process records: $(grep '"process"' "$t/tree.jsonl")"
grep -q "process [0-9]* (suid) runs in secure-execution mode (setuid, setgid or file capabilities): LD_PRELOAD is ignored there: api, gpu, nvtx, runtime not recorded for it" "$t/said" ||
	fail "tree: not said: $(cat "$t/said")"
[ "$(counts "$t/tree.jsonl" api)" = "$(counts "$t/default-cuprog-link.jsonl" api)" ] ||
	fail "tree: calls (cuprog's only): $(counts "$t/tree.jsonl" api | tr '\n' ' ')"
exit 0
