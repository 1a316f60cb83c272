#!/bin/sh
# On a GPU machine, as root: programs of other frameworks and shapes than the PyTorch scripts the
# capture was built against -- JAX (XLA), CuPy (NVRTC, raw kernels), Triton's own launcher,
# torch.compile's CUDA graphs, per-thread default streams from four threads, a program that
# dies of SIGSEGV with work queued, one whose memory pool makes a stream wait unnamed
# (check_pool.py), and one that puts work on the GPU in every other way the CUDA API has
# (cooperative and cluster launches, arguments in one buffer, host functions, waits on other
# streams' events and the legacy stream's implicit ones, programmatic dependent launch, managed
# and cuMemMap'd memory, 2D copies, a captured graph; check_odd.py holds each kernel to its own
# clock), one that resets its device twice and goes on (reset_midway.cu, the same check), one
# of the driver API alone that ends its primary context by giving back the last reference to it
# (release_midway.cu, the same check), and
# one that works in three contexts at once: the primary one, its own (cuCtxCreate) and a green
# context (contexts.cu, the same check), one that works on two GPUs at once (two_gpus.cu,
# the same check; it says so and passes where there is one), and one whose two threads put work
# on one GPU at once, one beside 4 MiB copies (two_threads.cu, the same check) --
# each run plain, under cuthook and under cutcapture. Each
# must exit as it does plain and say so; each trace must pass check_trace.py (parses, counts
# agree, nothing lost, every piece of GPU work linked to its call and not before it; cutcapture's
# sorted); torch.compile's GPU work is compared with torch.profiler's in the same process.
# A run that takes longer than LIMIT seconds (default 300) is killed and fails.
# usage: tests/gpu/frameworks.sh BUILDDIR OUTDIR [python [program...]]
#   BUILDDIR holds bin/cuthook (or cuthook-static), bin/cutcapture-static, bin/cutstat,
#   lib/libcuthook.so; programs: jax cupy triton compile ptsz crash pool odd reset release contexts
#   two threads (default: all)
set -u
B=$(cd "$1" && pwd)
out=$2
py=${3:-python3}
shift 2
[ $# -gt 0 ] && shift
progs=${*:-jax cupy triton compile ptsz crash pool odd reset release contexts two threads}
limit=${LIMIT:-300}
T=$(cd "$(dirname "$0")" && pwd)
hook=$B/bin/cuthook
[ -x "$B/bin/cuthook-static" ] && hook=$B/bin/cuthook-static
cap=$B/bin/cutcapture-static
export CUTHOOK_LIB=$B/lib/libcuthook.so
mkdir -p "$out"
fail=0
case " $progs " in *" ptsz "*)
	nvcc -O2 -o "$out/ptsz_threads" --default-stream per-thread "$T/progs/ptsz_threads.cu" || fail=1 ;;
esac
case " $progs " in *" crash "*) nvcc -O2 -o "$out/crash_midway" "$T/progs/crash_midway.cu" || fail=1 ;; esac
case " $progs " in *" pool "*) nvcc -O2 -o "$out/pool_wait" "$T/progs/pool_wait.cu" || fail=1 ;; esac
# (sm_90: its cluster launch; the GPU machines are H100s and H200s)
case " $progs " in *" odd "*)
	nvcc -O2 -arch=sm_90 -o "$out/odd_apis" "$T/progs/odd_apis.cu" -lcuda || fail=1 ;;
esac
case " $progs " in *" reset "*) nvcc -O2 -o "$out/reset_midway" "$T/progs/reset_midway.cu" || fail=1 ;; esac
case " $progs " in *" release "*)
	nvcc -O2 -o "$out/release_midway" "$T/progs/release_midway.cu" -lcuda &&
		nvcc -O2 -arch=sm_90 -fatbin -o "$out/release_midway.fatbin" \
			"$T/progs/release_midway.cu" || fail=1 ;;
esac
case " $progs " in *" two "*) nvcc -O2 -o "$out/two_gpus" "$T/progs/two_gpus.cu" || fail=1 ;; esac
case " $progs " in *" threads "*)
	nvcc -O2 -o "$out/two_threads" "$T/progs/two_threads.cu" || fail=1 ;;
esac
case " $progs " in *" contexts "*)
	nvcc -O2 -arch=sm_90 -o "$out/contexts" "$T/progs/contexts.cu" -lcuda || fail=1 ;;
esac

# run NAME EXPECTED-STATUS COMMAND...: plain, under cuthook, under cutcapture; the statuses and
# the last line of output must agree with the plain run's, and the traces must pass (a program
# that dies of a signal leaves cuthook's trace without a trailer: cuthook(1)).
run() {
	name=$1 want=$2
	shift 2
	died=
	[ "$want" -gt 128 ] && died=--died
	case " $progs " in *" $name "*) ;; *) return ;; esac
	timeout -s KILL "$limit" "$@" >"$out/$name.plain.out" 2>&1
	rp=$?
	timeout -s KILL "$limit" "$hook" -o "$out/$name.hook.jsonl" -- "$@" >"$out/$name.hook.out" 2>&1
	rh=$?
	timeout -s KILL "$limit" "$cap" -q -o "$out/$name.cap.jsonl" -- "$@" >"$out/$name.cap.out" 2>&1
	rc=$?
	lp=$(tail -1 "$out/$name.plain.out")
	lh=$(grep -v '^cuthook[-a-z]*:' "$out/$name.hook.out" | tail -1)
	lc=$(grep -v '^cutcapture[-a-z]*:' "$out/$name.cap.out" | tail -1)
	echo "== $name: exit plain $rp, cuthook $rh, cutcapture $rc; said: $lp"
	# (what a program that died says is its shell's: compared only for programs that exit)
	if [ "$rp" != "$want" ] || [ "$rh" != "$rp" ] || [ "$rc" != "$rp" ] ||
		{ [ -z "$died" ] && { [ "$lh" != "$lp" ] || [ "$lc" != "$lp" ]; }; }; then
		echo "FAIL $name: statuses or output differ (cuthook said: $lh; cutcapture: $lc)"
		fail=1
	fi
	$py "$T/check_trace.py" "$out/$name.hook.jsonl" $died || fail=1
	$py "$T/check_trace.py" "$out/$name.cap.jsonl" --sorted || fail=1
	"$B/bin/cutstat" "$out/$name.cap.jsonl" >"$out/$name.stat" 2>&1 || { echo "FAIL cutstat $name"; fail=1; }
}

run jax 0 $py "$T/progs/jax_loop.py"
run cupy 0 $py "$T/progs/cupy_loop.py"
run triton 0 $py "$T/progs/triton_add.py"
run compile 0 $py "$T/progs/compile_graphs.py"
run ptsz 0 "$out/ptsz_threads"
run crash 139 "$out/crash_midway"
run pool 0 "$out/pool_wait"
run odd 0 "$out/odd_apis"
run reset 0 "$out/reset_midway"
run release 0 "$out/release_midway" "$out/release_midway.fatbin"
run contexts 0 "$out/contexts"
run two 0 "$out/two_gpus"
run threads 0 "$out/two_threads"
case " $progs " in *" pool "*)
	$py "$T/check_pool.py" "$out/pool.hook.jsonl" "$out/pool.hook.out" || fail=1
	$py "$T/check_pool.py" "$out/pool.cap.jsonl" "$out/pool.cap.out" || fail=1
	;;
esac
for p in odd reset release contexts two threads; do
	grep -q "GPU here, not two" "$out/$p.plain.out" 2>/dev/null && continue
	case " $progs " in *" $p "*)
		$py "$T/check_odd.py" "$out/$p.hook.jsonl" "$out/$p.hook.out" || fail=1
		$py "$T/check_odd.py" "$out/$p.cap.jsonl" "$out/$p.cap.out" || fail=1
		;;
	esac
done
case " $progs " in *" crash "*)
	for f in "$out/crash.hook.jsonl" "$out/crash.cap.jsonl"; do
		n=$(grep -c '"name":"cuLaunchKernel"' "$f")
		[ "$n" = 300 ] || { echo "FAIL $f: $n of the 300 launches before the crash"; fail=1; }
	done
	;;
esac

case " $progs " in *" compile "*)
	echo "== torch.compile's CUDA graphs against torch.profiler in the same process"
	timeout -s KILL "$limit" "$hook" -o "$out/compile.prof.jsonl" -- $py "$T/progs/compile_graphs.py" \
		"$out/compile.prof.json" >/dev/null 2>&1
	$py "$T/compare.py" "$out/compile.prof.jsonl" "$out/compile.prof.json" || fail=1
	;;
esac
[ $fail = 0 ] && echo "frameworks: OK" || echo "frameworks: FAILED"
exit $fail
