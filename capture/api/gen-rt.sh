#!/bin/sh
# gen-rt.sh: writes rt.def, the one list of CUDA runtime API functions libcuthook wraps and
# cutcapture probes (the runtime layer), from the installed cuda_runtime_api.h and its interop
# companions, for the functions the libcudart of share/data/libcudart-*.exports exports. rt.def
# is committed so the tools build where no CUDA toolkit is installed; run this again (make
# hook-api) when the toolkit changes:
#   capture/api/gen-rt.sh [cuda-include-dir] >capture/api/rt.def
set -eu
inc=${1:-${CUDA_INCLUDE:-/usr/local/cuda/include}}
cc=${CC:-cc}
here=$(cd "$(dirname "$0")" && pwd)
[ -f "$inc/cuda_runtime_api.h" ] || { echo "gen-rt.sh: $inc/cuda_runtime_api.h: not found" >&2; exit 1; }
exports=$(ls "$here"/../../share/data/libcudart-*.exports 2>/dev/null | tail -1)
[ -n "$exports" ] || { echo "gen-rt.sh: no share/data/libcudart-*.exports" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The interop headers use GL, EGL and VDPAU types the application is expected to provide;
# stand-ins of the same size and kind are enough to read the prototypes.
mkdir "$tmp/EGL" "$tmp/GL" "$tmp/vdpau"
cat >"$tmp/EGL/egl.h" <<'EOF'
#include <stdint.h>
typedef void *EGLImageKHR, *EGLStreamKHR, *EGLSyncKHR, *EGLDisplay, *EGLSync, *EGLImage;
typedef int32_t EGLint;
typedef unsigned int EGLenum, EGLBoolean;
EOF
: >"$tmp/EGL/eglext.h"
echo 'typedef unsigned int GLuint, GLenum;' >"$tmp/GL/gl.h"
cat >"$tmp/vdpau/vdpau.h" <<'EOF'
#include <stdint.h>
typedef uint32_t VdpDevice, VdpVideoSurface, VdpOutputSurface, VdpFuncId;
typedef int VdpStatus;
typedef VdpStatus VdpGetProcAddress(VdpDevice, VdpFuncId, void **);
EOF
{
	echo '#include <stdint.h>'
	for h in cuda_runtime_api.h cuda_profiler_api.h cuda_gl_interop.h cuda_egl_interop.h \
		cuda_vdpau_interop.h; do
		[ -f "$inc/$h" ] && echo "#include <$h>"
	done
	# What nvcc's generated code calls (crt/host_runtime.h, which is C++ only): the launch
	# a <<<>>> compiles to, and the registration that names each kernel's host stub.
	echo 'extern cudaError_t __cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem, cudaStream_t stream);'
	echo 'extern cudaError_t __cudaLaunchKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem, cudaStream_t stream);'
	echo 'extern void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun, const char *deviceName, int thread_limit, uint3 *tid, uint3 *bid, dim3 *bDim, dim3 *gDim, int *wSize);'
} >"$tmp/all.h"
version=$(sed -n 's/^#define CUDART_VERSION  *\([0-9]*\).*/\1/p' "$inc/cuda_runtime_api.h")

# Two views of the headers: the default names, and the per-thread default stream names
# (_ptds, _ptsz). A name declared in both must have one prototype.
for view in "" "-DCUDA_API_PER_THREAD_DEFAULT_STREAM"; do
	# shellcheck disable=SC2086
	$cc -E -P $view -I"$inc" -I"$tmp" "$tmp/all.h" |
		tr '\n\t' '  ' | tr ';{}' '\n\n\n' |
		sed -e 's/__attribute__(([^)]*))//g' -e 's/  */ /g' -e 's/^ //' -e 's/ *$//' |
		sed -n -E 's/^extern (.*[^A-Za-z0-9_])((__)?cuda[A-Za-z0-9_]+) ?\((.*)\)$/\2	\1	\4/p'
done | sed 's/ *	/	/g' | LC_ALL=C sort -u -t '	' -k1,1 -k3 | awk -F '\t' '
$1 == prev && $3 != prevp {
	printf "gen-rt.sh: %s has two prototypes: (%s) and (%s)\n", $1, prevp, $3 > "/dev/stderr"
	bad = 1
}
$1 != prev { print; prev = $1; prevp = $3 }
END { exit bad }' >"$tmp/all"
# Only what the library exports.
LC_ALL=C sort "$exports" >"$tmp/exports"
awk -F '\t' 'FILENAME == ARGV[1] { e[$1] = 1; next } $1 in e' "$tmp/exports" "$tmp/all" >"$tmp/protos"

# Classify every parameter and return type with the compiler, as gen-api.sh does.
awk -F '\t' '
BEGIN {
	print "#include \"all.h\""
	print "#include <stdio.h>"
	print "#define P(f, i, T) do { T x_; __builtin_memset(&x_, 0, sizeof x_); printf(\"%s\\t%d\\t%d\\t%zu\\t%zu\\n\", f, i, __builtin_classify_type(x_), sizeof(T), _Alignof(T)); } while (0)"
	print "int main(void) {"
}
{
	r = $2
	gsub(/^ +| +$/, "", r)
	if (r != "void")
		printf "P(\"%s\", -1, %s);\n", $1, r
	if ($3 == "void")
		next
	n = split($3, a, ",")
	for (i = 1; i <= n; i++) {
		t = a[i]
		gsub(/^ +| +$/, "", t)
		sub(/[A-Za-z_][A-Za-z0-9_]*$/, "", t)
		printf "P(\"%s\", %d, %s);\n", $1, i - 1, t
	}
}
END { print "return 0; }" }' "$tmp/protos" >"$tmp/classify.c"
$cc -w -I"$inc" -I"$tmp" -o "$tmp/classify" "$tmp/classify.c"
"$tmp/classify" >"$tmp/classes"
# Signedness, for the integer and enum parameters only.
awk -F '\t' '
BEGIN {
	print "#include \"all.h\""
	print "#include <stdio.h>"
	print "#define S(f, i, T) printf(\"%s\\t%d\\t%d\\n\", f, i, (int)((T)-1 < (T)0))"
	print "int main(void) {"
}
FNR == NR { if ($2 >= 0 && $3 >= 1 && $3 <= 4) want[$1 SUBSEP $2] = 1; next }
$3 != "void" {
	n = split($3, a, ",")
	for (i = 1; i <= n; i++) {
		if (!((($1) SUBSEP (i - 1)) in want))
			continue
		t = a[i]
		gsub(/^ +| +$/, "", t)
		sub(/[A-Za-z_][A-Za-z0-9_]*$/, "", t)
		printf "S(\"%s\", %d, %s);\n", $1, i - 1, t
	}
}
END { print "return 0; }" }' "$tmp/classes" "$tmp/protos" >"$tmp/signed.c"
$cc -w -I"$inc" -I"$tmp" -o "$tmp/signed" "$tmp/signed.c"
"$tmp/signed" >"$tmp/signs"

missing=$(cut -f1 "$tmp/protos" | LC_ALL=C comm -23 "$tmp/exports" - | tr '\n' ' ' | sed 's/ $//')
echo "/* rt.def: every CUDA runtime API function libcuthook wraps and cutcapture's runtime layer"
echo " * probes, one line each (an X-macro). Generated by gen-rt.sh from cuda_runtime_api.h"
echo " * (CUDART_VERSION $version) and its interop headers, for the functions"
echo " * $(basename "$exports" .exports) exports: do not edit. Each line is"
echo " *   HOOK_RT(name, as, ret, params, args, pack, roles, prototype)"
echo " * as: the function its calls are recorded as (nvcc's __cudaLaunchKernel is cudaLaunchKernel,"
echo " *   which it jumps to); ret: ERR (a cudaError_t), PTR (a pointer), RBLOBn (a struct of n"
echo " *   bytes, returned in memory) or VOID; params: ABI-equivalent parameter list as api.def's,"
echo " *   a dim3 passed by value as struct hook_dim3; args: the names, to forward the call;"
echo " *   pack: the argument words as the registers and stack hold them (a dim3 is two: x | y << 32,"
echo " *   then z), for call.c; roles: one letter per word, S a cudaStream_t, s a cudaStream_t *, E"
echo " *   a cudaEvent_t, e a cudaEvent_t *; prototype: the declaration, for readers."
echo " * Exported but declared in no header read, so not wrapped: $missing." |
	fold -s -w 92 | sed -e "s/ *$//" -e "2,\$s/^/ * /"
echo " */"
echo "#ifndef HOOK_CUDART_VERSION"
echo "#define HOOK_CUDART_VERSION $version"
echo "#endif"
echo "#ifndef HOOK_RTBLOB"
echo "#define HOOK_RTBLOB(n)"
echo "#endif"
echo "#ifndef HOOK_RBLOB"
echo "#define HOOK_RBLOB(n)"
echo "#endif"
awk -F '\t' '
FILENAME == ARGV[1] { k = $1 SUBSEP $2; cls[k] = $3; size[k] = $4; align[k] = $5; next }
FILENAME == ARGV[2] { sgn[$1 SUBSEP $2] = $3; next }
function fail(msg) { printf "gen-rt.sh: %s\n", msg > "/dev/stderr"; bad = 1 }
function bare(t) { gsub(/const|struct|[ ]/, "", t); return t }
{
	name = $1
	rt = $2
	gsub(/^ +| +$/, "", rt)
	proto = $3
	gsub(/^ +| +$/, "", proto)
	as = name
	sub(/^__/, "", as)
	if (name == "__cudaRegisterFunction")
		as = name
	k = name SUBSEP "-1"
	if (rt == "void")
		ret = "VOID"
	else if (bare(rt) == "cudaError_t")
		ret = "ERR"
	else if (cls[k] == 5)
		ret = "PTR"
	else if ((cls[k] == 12 || cls[k] == 13) && size[k] > 16) {
		ret = "RBLOB" size[k]; rblobs[size[k]] = 1
	} else
		fail(name ": return type " rt)
	params = ""; args = ""; pack = ""; roles = ""
	n = 0
	if (proto != "void")
		n = split(proto, a, ",")
	for (i = 0; i < n; i++) {
		t = a[i + 1]
		gsub(/^ +| +$/, "", t)
		sub(/ ?[A-Za-z_][A-Za-z0-9_]*$/, "", t)
		k = name SUBSEP i
		c = cls[k]; s = size[k]
		v = "a" i
		w = 1
		if (c == 5) {
			ty = "void *"; pk = "HOOK_P(" v ")"
		} else if (c == 1 || c == 2 || c == 3 || c == 4) {
			if (s != 1 && s != 2 && s != 4 && s != 8)
				fail(name ": integer parameter of size " s)
			ty = (sgn[k] ? "int" : "uint") s * 8 "_t"
			pk = (sgn[k] ? "HOOK_I(" : "HOOK_U(") v ")"
		} else if (c == 8) {
			ty = s == 4 ? "float" : "double"; pk = "HOOK_F(" v ")"
		} else if (c == 12 || c == 13) {
			# Larger than 16 bytes, a struct goes on the stack whatever its members, so a
			# blob of the same size is equivalent; of the smaller ones, in registers by
			# member class, the runtime has two, both integers only.
			if (s > 16 && align[k] <= 8) {
				b = int((s + 7) / 8) * 8
				ty = "struct hook_rtblob" b; pk = "HOOK_B(" v ")"; blobs[b] = 1
			} else if (bare(t) == "dim3" && s == 12) {
				ty = "struct hook_dim3"; pk = "HOOK_D3XY(" v "), HOOK_D3Z(" v ")"; w = 2
			} else if (bare(t) == "cudaMemLocation" && s == 8) {
				ty = "uint64_t"; pk = "HOOK_L(" v ")"
			} else
				fail(name ": struct parameter " t " passed by value in registers")
		} else
			fail(name ": parameter " i " of type class " c)
		r = bare(t)
		ro = r == "cudaStream_t" ? "S" : r == "cudaStream_t*" ? "s" : r == "cudaEvent_t" ? "E" : r == "cudaEvent_t*" ? "e" : "-"
		roles = roles ro (w == 2 ? "-" : "")
		params = params (i ? ", " : "") ty (ty ~ /\*$/ ? "" : " ") v
		args = args (i ? ", " : "") v
		pack = pack (i ? ", " : "") pk
	}
	if (n == 0) {
		params = "void"; pack = "0"
	}
	gsub(/ +/, " ", proto)
	line[NR] = sprintf("HOOK_RT(%s, %s, %s, (%s), (%s), (%s), \"%s\", \"%s\")", name, as, ret, params, args, pack, roles, proto)
	nl = NR
}
END {
	for (b = 8; b <= 4096; b += 4) {
		if (b in blobs)
			printf "HOOK_RTBLOB(%d)\n", b
		if (b in rblobs)
			printf "HOOK_RBLOB(%d)\n", b
	}
	for (i = 1; i <= nl; i++)
		if (i in line)
			print line[i]
	exit bad
}' "$tmp/classes" "$tmp/signs" "$tmp/protos"
echo "#undef HOOK_RT"
echo "#undef HOOK_RTBLOB"
echo "#undef HOOK_RBLOB"
