#!/bin/sh
# gen-api.sh: writes api.def, the one list of CUDA driver API functions libcuthook wraps (and
# whose parameter types and roles the argument decoder of both capture paths reads), from the
# installed cuda.h and its companion headers. api.def is committed so the tools build where no
# CUDA toolkit is installed; run this again (make hook-api) when the toolkit changes:
#   capture/api/gen-api.sh [cuda-include-dir] >capture/api/api.def
# It also checks the structs mirrored in cudatypes.h against cuda.h.
set -eu
inc=${1:-${CUDA_INCLUDE:-/usr/local/cuda/include}}
cc=${CC:-cc}
here=$(cd "$(dirname "$0")" && pwd)
[ -f "$inc/cuda.h" ] || { echo "gen-api.sh: $inc/cuda.h: not found" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The interop headers use GL, VDPAU and EGL types the application is expected to provide;
# stand-ins of the same size and kind are enough to read the prototypes.
mkdir "$tmp/EGL"
cat >"$tmp/EGL/egl.h" <<'EOF'
#include <stdint.h>
typedef void *EGLImageKHR, *EGLStreamKHR, *EGLSyncKHR, *EGLDisplay, *EGLSync, *EGLImage;
typedef int32_t EGLint;
typedef unsigned int EGLenum, EGLBoolean;
EOF
: >"$tmp/EGL/eglext.h"
{
	echo '#include <stdint.h>'
	echo 'typedef unsigned int GLuint, GLenum;'
	echo 'typedef uint32_t VdpDevice, VdpVideoSurface, VdpOutputSurface, VdpFuncId;'
	echo 'typedef int VdpStatus;'
	echo 'typedef VdpStatus VdpGetProcAddress(VdpDevice, VdpFuncId, void **);'
	for h in cuda.h cudaProfiler.h cudaGL.h cudaVDPAU.h cudaEGL.h; do
		[ -f "$inc/$h" ] && echo "#include <$h>"
	done
} >"$tmp/all.h"
version=$(sed -n 's/^#define CUDA_VERSION \([0-9]*\).*/\1/p' "$inc/cuda.h")

# Three views of the headers: the default names (cuMemAlloc -> cuMemAlloc_v2), the per-thread
# default stream names (_ptds, _ptsz) and the driver's own view, which also declares the
# older versions it still exports. A name declared in several views must have one prototype.
for view in "" "-DCUDA_API_PER_THREAD_DEFAULT_STREAM" "-D__CUDA_API_VERSION_INTERNAL"; do
	# shellcheck disable=SC2086
	$cc -E -P -DCUDA_ENABLE_DEPRECATED $view -I"$inc" -I"$tmp" "$tmp/all.h" |
		tr '\n\t' '  ' | tr ';{}' '\n\n\n' |
		sed -e 's/__attribute__(([^)]*))//g' -e 's/  */ /g' -e 's/^ //' -e 's/ *$//' |
		sed -n -E 's/^(extern )?CUresult (cu[A-Za-z0-9_]+) ?\((.*)\)$/\2	\3/p'
done | LC_ALL=C sort -u -t '	' -k1,1 -k2 | awk -F '\t' '
function types(p,    n, a, i, t, s) {
	n = split(p, a, ",")
	s = ""
	for (i = 1; i <= n; i++) {
		t = a[i]
		gsub(/^ +| +$/, "", t)
		if (t != "void")
			sub(/ ?[A-Za-z_][A-Za-z0-9_]*$/, "", t)
		gsub(/ /, "", t)
		s = s "," t
	}
	return s
}
$1 == prev && types($2) != types(prevp) {
	printf "gen-api.sh: %s has two prototypes: (%s) and (%s)\n", $1, prevp, $2 > "/dev/stderr"
	bad = 1
}
$1 != prev { print; prev = $1; prevp = $2 }
END { exit bad }' >"$tmp/protos"

# Classify every parameter type with the compiler: its class, size and signedness decide the
# ABI-equivalent type the wrappers declare, so api.def needs no CUDA type at all.
awk -F '\t' '
BEGIN {
	print "#include \"all.h\""
	print "#include <stdio.h>"
	print "#define P(f, i, T) do { T x_; __builtin_memset(&x_, 0, sizeof x_); printf(\"%s\\t%d\\t%d\\t%zu\\t%zu\\n\", f, i, __builtin_classify_type(x_), sizeof(T), _Alignof(T)); } while (0)"
	print "int main(void) {"
}
$2 != "void" {
	n = split($2, a, ",")
	for (i = 1; i <= n; i++) {
		t = a[i]
		gsub(/^ +| +$/, "", t)
		sub(/[A-Za-z_][A-Za-z0-9_]*$/, "", t)
		printf "P(\"%s\", %d, %s);\n", $1, i - 1, t
	}
}
END { print "return 0; }" }' "$tmp/protos" >"$tmp/classify.c"
$cc -w -D__CUDA_API_VERSION_INTERNAL -I"$inc" -I"$tmp" -o "$tmp/classify" "$tmp/classify.c"
"$tmp/classify" >"$tmp/classes"
# Signedness, for the integer and enum parameters only.
awk -F '\t' '
BEGIN {
	print "#include \"all.h\""
	print "#include <stdio.h>"
	print "#define S(f, i, T) printf(\"%s\\t%d\\t%d\\n\", f, i, (int)((T)-1 < (T)0))"
	print "int main(void) {"
}
FNR == NR { if ($3 == 1 || $3 == 2 || $3 == 3 || $3 == 4) want[$1 SUBSEP $2] = 1; next }
$2 != "void" {
	n = split($2, a, ",")
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
$cc -w -D__CUDA_API_VERSION_INTERNAL -I"$inc" -I"$tmp" -o "$tmp/signed" "$tmp/signed.c"
"$tmp/signed" >"$tmp/signs"

# The structs call.c (and the BPF side) read through pointers, mirrored in cudatypes.h, must
# match cuda.h.
cat >"$tmp/mirror.c" <<'EOF'
#include <stddef.h>
#include "all.h"
#include "cudatypes.h"
#define SAME(a, b, f) _Static_assert(offsetof(a, f) == offsetof(struct b, f), #a "." #f)
#define SIZE(a, b) _Static_assert(sizeof(a) == sizeof(struct b), "sizeof " #a)
SIZE(CUDA_MEMCPY2D, hook_memcpy2d);
SAME(CUDA_MEMCPY2D, hook_memcpy2d, srcMemoryType);
SAME(CUDA_MEMCPY2D, hook_memcpy2d, srcHost);
SAME(CUDA_MEMCPY2D, hook_memcpy2d, srcDevice);
SAME(CUDA_MEMCPY2D, hook_memcpy2d, srcArray);
SAME(CUDA_MEMCPY2D, hook_memcpy2d, dstMemoryType);
SAME(CUDA_MEMCPY2D, hook_memcpy2d, dstHost);
SAME(CUDA_MEMCPY2D, hook_memcpy2d, dstDevice);
SAME(CUDA_MEMCPY2D, hook_memcpy2d, dstArray);
SAME(CUDA_MEMCPY2D, hook_memcpy2d, WidthInBytes);
SAME(CUDA_MEMCPY2D, hook_memcpy2d, Height);
SIZE(CUDA_MEMCPY3D, hook_memcpy3d);
SAME(CUDA_MEMCPY3D, hook_memcpy3d, srcMemoryType);
SAME(CUDA_MEMCPY3D, hook_memcpy3d, srcHost);
SAME(CUDA_MEMCPY3D, hook_memcpy3d, srcDevice);
SAME(CUDA_MEMCPY3D, hook_memcpy3d, srcArray);
SAME(CUDA_MEMCPY3D, hook_memcpy3d, dstMemoryType);
SAME(CUDA_MEMCPY3D, hook_memcpy3d, dstHost);
SAME(CUDA_MEMCPY3D, hook_memcpy3d, dstDevice);
SAME(CUDA_MEMCPY3D, hook_memcpy3d, dstArray);
SAME(CUDA_MEMCPY3D, hook_memcpy3d, WidthInBytes);
SAME(CUDA_MEMCPY3D, hook_memcpy3d, Height);
SAME(CUDA_MEMCPY3D, hook_memcpy3d, Depth);
SAME(CUlaunchConfig, hook_launch_config, gridDimX);
SAME(CUlaunchConfig, hook_launch_config, blockDimZ);
SAME(CUlaunchConfig, hook_launch_config, sharedMemBytes);
SAME(CUlaunchConfig, hook_launch_config, hStream);
_Static_assert(CU_MEMORYTYPE_HOST == HOOK_MEMORYTYPE_HOST, "CU_MEMORYTYPE_HOST");
_Static_assert(CU_MEMORYTYPE_DEVICE == HOOK_MEMORYTYPE_DEVICE, "CU_MEMORYTYPE_DEVICE");
_Static_assert(CU_MEMORYTYPE_ARRAY == HOOK_MEMORYTYPE_ARRAY, "CU_MEMORYTYPE_ARRAY");
_Static_assert(CU_MEMORYTYPE_UNIFIED == HOOK_MEMORYTYPE_UNIFIED, "CU_MEMORYTYPE_UNIFIED");
_Static_assert(CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM == HOOK_GPA_PER_THREAD_STREAM, "ptds");
EOF
$cc -fsyntax-only -I"$inc" -I"$tmp" -I"$here" "$tmp/mirror.c"

exports=$(ls "$here"/../../share/data/libcuda-*.exports 2>/dev/null | tail -1)
cut -f1 "$tmp/protos" >"$tmp/names"

echo "/* api.def: every CUDA driver API function libcuthook wraps, one line each (an X-macro)."
echo " * Generated by gen-api.sh from cuda.h (CUDA_VERSION $version) and its companion headers:"
echo " * do not edit. Each line is"
echo " *   HOOK_API(name, params, args, pack, roles, prototype)"
echo " * params: ABI-equivalent parameter list (pointers void *, integers and enums by width and"
echo " *   signedness, structs passed by value as HOOK_BLOB(n) of the same size);"
echo " * args: the names, to forward the call; pack: each argument as a uint64_t for call.c;"
echo " * roles: one letter per parameter, S a CUstream, s a CUstream *, E a CUevent, e a CUevent *;"
echo " * prototype: the declaration in cuda.h, for readers."
if [ -n "$exports" ]; then
	missing=$(LC_ALL=C comm -23 "$exports" "$tmp/names" | tr '\n' ' ' | sed 's/ $//')
	echo " * Exported by $(basename "$exports" .exports) but declared in no header, so not"
	echo " * wrapped: $missing." | fold -s -w 92 | sed -e "s/ *$//" -e "2,\$s/^/ * /"
fi
echo " */"
echo "#ifndef HOOK_CUDA_H_VERSION"
echo "#define HOOK_CUDA_H_VERSION $version"
echo "#endif"
echo "#ifndef HOOK_BLOB"
echo "#define HOOK_BLOB(n)"
echo "#endif"
awk -F '\t' '
FILENAME == ARGV[1] { cls[$1 SUBSEP $2] = $3; size[$1 SUBSEP $2] = $4; align[$1 SUBSEP $2] = $5; next }
FILENAME == ARGV[2] { sgn[$1 SUBSEP $2] = $3; next }
function fail(msg) { printf "gen-api.sh: %s\n", msg > "/dev/stderr"; bad = 1 }
{
	name = $1
	proto = $2
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
			# blob of the same size and alignment is equivalent; smaller ones travel in
			# registers by member class, and the only one cuda.h has is integers only.
			if (s > 16 && align[k] <= 8) {
				b = int((s + 7) / 8) * 8
				ty = "struct hook_blob" b; pk = "HOOK_B(" v ")"; blobs[b] = 1
			} else if (t ~ /^(const )?CUmemLocation$/ && s == 8) {
				ty = "uint64_t"; pk = "HOOK_U(" v ")"
			} else
				fail(name ": struct parameter " t " passed by value in registers")
		} else
			fail(name ": parameter " i " of type class " c)
		r = t
		gsub(/const|[ ]/, "", r)
		roles = roles (r == "CUstream" ? "S" : r == "CUstream*" ? "s" : r == "CUevent" ? "E" : r == "CUevent*" ? "e" : "-")
		params = params (i ? ", " : "") ty (ty ~ /\*$/ ? "" : " ") v
		args = args (i ? ", " : "") v
		pack = pack (i ? ", " : "") pk
	}
	if (n == 0) {
		params = "void"; pack = "0"
	}
	gsub(/ +/, " ", proto)
	line[NR] = sprintf("HOOK_API(%s, (%s), (%s), (%s), \"%s\", \"%s\")", name, params, args, pack, roles, proto)
	nl = NR
}
END {
	for (b in blobs)
		printf "HOOK_BLOB(%d)\n", b
	for (i = 1; i <= nl; i++)
		if (i in line)
			print line[i]
	exit bad
}' "$tmp/classes" "$tmp/signs" "$tmp/protos"
echo "#undef HOOK_API"
echo "#undef HOOK_BLOB"
