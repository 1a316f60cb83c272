#!/bin/sh
# cuthook's corners, with small programs built here against the stand-in libcuda: a library
# dlopen'ed late with RTLD_LOCAL that links libcuda; dlsym(RTLD_NEXT) still relative to its
# caller; dlsym(RTLD_DEFAULT, "cuInit") without a libcuda still NULL; a launch of a handle no
# call named (named through cuFuncGetName); _exit and a fatal signal still flushing; a program
# that closes every descriptor and reuses the number the trace had.
. "$(dirname "$0")/lib/hook-setup.sh"
inc=$(pwd)/tests/fixtures
build() { $CC -std=gnu11 -O1 -Wall -Werror -I"$inc" "$@" || exit 1; }

cat >"$tmp/late.c" <<'EOF'
/* Linked against libcuda, loaded by a program that is not. */
#include "fakecuda.h"
int late(void) { CUcontext c; return cuInit(0) + cuCtxGetCurrent(&c) + cuCtxGetCurrent(&c); }
EOF
cat >"$tmp/which.c" <<'EOF'
int which(void) { return WHICH; }
EOF
cat >"$tmp/next.c" <<'EOF'
/* Defines which() and asks for the next one, as a malloc wrapper asks for malloc. */
#define _GNU_SOURCE
#include <dlfcn.h>
int which(void) { return 1; }
int next_which(void) { int (*f)(void) = (int (*)(void))dlsym(RTLD_NEXT, "which"); return f ? f() : -1; }
EOF
cat >"$tmp/prog.c" <<'EOF'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "fakecuda.h"
int next_which(void);
int main(int argc, char **argv) {
	if (strcmp(argv[1], "late") == 0) {
		void *h = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
		int (*late)(void) = h ? (int (*)(void))dlsym(h, "late") : NULL;
		if (!late || late() != 0) return 1;
	} else if (strcmp(argv[1], "next") == 0) {
		printf("%d\n", next_which());
	} else if (strcmp(argv[1], "default") == 0) {
		printf("%s\n", dlsym(RTLD_DEFAULT, "cuInit") ? "found" : "none");
	} else {
		/* The rest drive the stand-in through dlopen, as cudart does. */
		void *h = dlopen("libcuda.so.1", RTLD_NOW);
		CUresult (*gpa)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
		CUresult (*lib_kernel)(CUkernel *, CUlibrary, const char *);
		CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
				   unsigned, CUstream, void **, void **);
		CUresult (*current)(CUcontext *);
		*(void **)&gpa = dlsym(h, "cuGetProcAddress_v2");
		gpa("cuLibraryGetKernel", (void **)&lib_kernel, 13000, 0, NULL);
		gpa("cuLaunchKernel", (void **)&launch, 13000, 0, NULL);
		gpa("cuCtxGetCurrent", (void **)&current, 13000, 0, NULL);
		CUkernel k;
		CUcontext c;
		lib_kernel(&k, (CUlibrary)0xb0, "gemm");
		/* The stand-in's function handle of the kernel, never returned by any call. */
		launch((CUfunction)(0xf0000 + ((uintptr_t)k - 0xe0000)), 2, 1, 1, 64, 1, 1, 0, NULL, NULL, NULL);
		if (strcmp(argv[1], "exit") == 0) {
			current(&c);
			_exit(0);
		} else if (strcmp(argv[1], "signal") == 0) {
			current(&c);
			raise(SIGTERM);
		} else if (strcmp(argv[1], "closefds") == 0) {
			for (int fd = 3; fd < 1024; fd++) close(fd);
			int mine = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
			for (int fd = 100; fd < 110; fd++) dup2(mine, fd);
			for (int i = 0; i < 2000; i++) current(&c);
			if (write(100, "mine\n", 5) != 5) return 1;
		}
	}
	return 0;
}
EOF
build -fPIC -shared -o "$tmp/liblate.so" "$tmp/late.c" -L"$fx" -lcuda -Wl,-rpath,"$fx"
build -fPIC -shared -DWHICH=2 -o "$tmp/libwhich.so" "$tmp/which.c"
build -fPIC -shared -o "$tmp/libnext.so" "$tmp/next.c" -ldl
build -o "$tmp/prog" "$tmp/prog.c" -L"$tmp" -Wl,--no-as-needed -lnext -lwhich -ldl -Wl,-rpath,"$tmp" -Wl,-rpath,"$fx"

hook() {
	out=$1
	shift
	"$B/bin/cuthook" -o "$out" -- "$@"
}
count() { grep -c "$1" "$2"; }

# A late, RTLD_LOCAL library that links libcuda: its calls bind to the exported wrappers,
# which find the driver although it is not in the global scope.
hook "$tmp/late.jsonl" "$tmp/prog" late "$tmp/liblate.so" || bad "late: exit status $?"
[ "$(count '"layer":"api","name":"cuCtxGetCurrent","cat":"query","ret":0}' "$tmp/late.jsonl")" -eq 2 ] &&
	[ "$(count '"layer":"api","name":"cuInit"' "$tmp/late.jsonl")" -eq 1 ] ||
	bad "late: calls of a library dlopen'ed with RTLD_LOCAL not seen"

# RTLD_NEXT from a library after libcuthook finds the definition after that library.
[ "$("$tmp/prog" next)" = 2 ] || bad "next: wrong without cuthook"
[ "$(hook "$tmp/next.jsonl" "$tmp/prog" next)" = 2 ] || bad "next: dlsym(RTLD_NEXT) answers for the wrong caller"

# No libcuda loaded: the exported wrappers must not pass for the driver.
[ "$(hook "$tmp/default.jsonl" "$tmp/prog" default)" = none ] ||
	bad "default: dlsym(RTLD_DEFAULT, \"cuInit\") finds libcuthook's wrapper"

# A launch of a function handle no call returned: named by asking cuFuncGetName.
hook "$tmp/name.jsonl" "$tmp/prog" name || bad "name: exit status $?"
grep -q '"name":"symbol","args":{"handle":"0xf0000","name":"gemm","kind":"function","via":"cuFuncGetName"}' "$tmp/name.jsonl" ||
	bad "name: no symbol record from cuFuncGetName"
grep -q '"name":"cuLaunchKernel",.*"args":{"func":"0xf0000","kernel":"gemm","grid":\[2,1,1\],"block":\[64,1,1\],"shmem":0,"stream":"0x0","corr":1}' "$tmp/name.jsonl" ||
	bad "name: the launch is not named"
[ "$(count '"name":"cuFuncGetName"' "$tmp/name.jsonl")" -eq 0 ] ||
	bad "name: cuthook's own cuFuncGetName call was recorded"

# _exit skips the destructors: the trace is still complete.
hook "$tmp/exit.jsonl" "$tmp/prog" exit || bad "exit: exit status $?"
tail -1 "$tmp/exit.jsonl" | grep -q '"name":"trailer","args":{"events":7,"lost":0,"layers":{"api":6,"gpu":1}' ||
	bad "exit: no trailer after _exit: $(tail -1 "$tmp/exit.jsonl" | cut -c1-200)"

# Death by SIGTERM: the events are written (no trailer), the status is the signal's.
sh -c "\"$B/bin/cuthook\" -o \"$tmp/signal.jsonl\" -- \"$tmp/prog\" signal" 2>/dev/null
st=$?
[ $st -eq 143 ] || bad "signal: exit status $st, not 143"
[ "$(count '"layer":"api"' "$tmp/signal.jsonl")" -eq 6 ] || bad "signal: events lost on SIGTERM"

# The program closes every descriptor and its own file takes the trace's old number: its
# file keeps only its own line, the trace still gets every event.
hook "$tmp/fds.jsonl" "$tmp/prog" closefds "$tmp/mine.txt" || bad "closefds: exit status $?"
[ "$(cat "$tmp/mine.txt")" = mine ] || bad "closefds: the program's file was written to: $(head -c 200 "$tmp/mine.txt")"
[ "$(count '"layer":"api","name":"cuCtxGetCurrent"' "$tmp/fds.jsonl")" -eq 2000 ] || bad "closefds: events lost"
tail -1 "$tmp/fds.jsonl" | grep -q '"name":"trailer"' || bad "closefds: no trailer"

for f in "$tmp"/*.jsonl; do
	CUT_STRICT=1 cutstat "$f" >/dev/null 2>"$tmp/err" || bad "$f: $(head -2 "$tmp/err")"
done
exit $fail
