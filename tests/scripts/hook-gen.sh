#!/bin/sh
# capture/api/api.def is what gen-api.sh makes of the installed cuda.h, when the installed
# toolkit is the one it was generated from (CI machines may have none).
inc=${CUDA_INCLUDE:-/usr/local/cuda/include}
[ -f "$inc/cuda.h" ] || { echo "skip: no $inc/cuda.h"; exit 77; }
have=$(sed -n 's/^#define CUDA_VERSION \([0-9]*\).*/\1/p' "$inc/cuda.h")
want=$(sed -n 's/^#define HOOK_CUDA_H_VERSION \([0-9]*\)$/\1/p' capture/api/api.def)
[ "$have" = "$want" ] || { echo "skip: cuda.h is CUDA_VERSION $have, api.def comes from $want"; exit 77; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
capture/api/gen-api.sh "$inc" >"$tmp/api.def" || exit 1
diff -u capture/api/api.def "$tmp/api.def" >"$tmp/diff" ||
	{ echo "api.def is stale: make hook-api"; head -20 "$tmp/diff"; exit 1; }
capture/api/gen-rt.sh "$inc" >"$tmp/rt.def" || exit 1
diff -u capture/api/rt.def "$tmp/rt.def" >"$tmp/diff" ||
	{ echo "rt.def is stale: make hook-api"; head -20 "$tmp/diff"; exit 1; }
# Every declared function is wrapped and exported, the runtime's with libcudart.so.13's version
# (and that version's own entry); nothing else is, but dlsym, _exit, _Exit, the exec family and
# sigaction/signal (life.c), the NVTX injection entry point, and cuthook_mark_thread (mark.c,
# which cutcapture probes).
B=${CUT_BUILD:-build}
[ -f "$B/lib/libcuthook.so" ] || exit 0
nm -D --defined-only "$B/lib/libcuthook.so" | awk '{ print $3 }' | sort >"$tmp/exported"
{ sed -n 's/^HOOK_API(\([A-Za-z0-9_]*\),.*/\1/p' capture/api/api.def
	sed -n 's/^HOOK_RT(\([A-Za-z0-9_]*\),.*/\1@@libcudart.so.13/p' capture/api/rt.def
	printf '%s\n' _Exit _exit dlsym execl execle execlp execv execve execveat execvp \
		execvpe fexecve sigaction signal libcudart.so.13 InitializeInjectionNvtx2 cuthook_mark_thread; } |
	sort | diff -u - "$tmp/exported" >"$tmp/diff" ||
	{ echo "libcuthook.so exports differ from api.def:"; head -20 "$tmp/diff"; exit 1; }
