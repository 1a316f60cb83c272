#!/bin/sh
# libcuthook copies the args object of a call of a pure function (one whose args are its
# argument words and the names of handles among them: a launch) from a recent call alike
# instead of decoding it again (capture/hook/writer.c, decode). A copy must never stand for a
# call that differs: launches of one host stub through the stand-in libcudart, alike, then
# each of grid, block, shared memory and stream changed in turn, a failing one, then the stub
# registered again under another name (a library loaded again at the same address): every
# line says the name, grid, block, shmem, stream and result of its own call. And the symbol
# record of the stub under each name is written once, not lost to a copy. Calls alike whose
# out values differ (three allocations into one variable) each say their own.
. "$(dirname "$0")/lib/hook-setup.sh"
top=${CUT_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
[ -f "$fx/libcudart.so.13" ] || { echo "build $B/fixtures/libcudart.so.13 first"; exit 1; }

cat >"$tmp/memo.c" <<'C'
#include <stdio.h>
#include "fakecuda.h"
#include "fakecudart.h"
static void stub(void) {}
static int
launch(unsigned gx, unsigned bx, size_t shmem, void *stream)
{
	struct fake_dim3 g = {gx, 1, 1}, b = {bx, 1, 1};
	return cudaLaunchKernel((const void *)stub, g, b, NULL, shmem, stream);
}
int
main(void)
{
	static char one[] = "k_one", two[] = "k_two";
	__cudaRegisterFunction(NULL, (const char *)stub, one, one, -1, NULL, NULL, NULL, NULL, NULL);
	int e = 0;
	e |= launch(8, 32, 0, NULL);
	e |= launch(8, 32, 0, NULL);
	e |= launch(9, 32, 0, NULL);
	e |= launch(8, 33, 0, NULL);
	e |= launch(8, 32, 16, NULL);
	e |= launch(8, 32, 0, (void *)0x10);
	e |= launch(8, 32, 0, NULL);
	int f = launch(0, 32, 0, NULL); /* fails: an empty grid */
	__cudaRegisterFunction(NULL, (const char *)stub, two, two, -1, NULL, NULL, NULL, NULL, NULL);
	e |= launch(8, 32, 0, NULL);
	e |= launch(8, 32, 0, NULL);
	printf("%d %d\n", e, f != 0);
	CUdeviceptr d;
	for (int i = 0; i < 3; i++) {
		cuMemAlloc_v2(&d, 4096);
		fprintf(stderr, "0x%llx\n", (unsigned long long)d);
	}
	return 0;
}
C
$CC -O2 -I"$top/tests/fixtures" -o "$tmp/memo" "$tmp/memo.c" -L"$fx" -lcuda -l:libcudart.so.13 \
	-Wl,-rpath,"$fx" || { echo "FAIL cannot build the test program"; exit 1; }
out=$("$B/bin/cuthook" -l api,runtime -o "$tmp/t.jsonl" -- "$tmp/memo" 2>"$tmp/dptr") ||
	bad "cuthook: exit $?"
[ "$out" = "0 1" ] || bad "the program said: $out"
canonical "$tmp/t.jsonl"

# name, ret, grid, block, shmem, stream of every cudaLaunchKernel, in order
grep '"layer":"runtime","name":"cudaLaunchKernel"' "$tmp/t.jsonl" |
	sed 's/.*"ret":\(-\{0,1\}[0-9]*\),"args":.*"kernel":"\([^"]*\)","grid":\[\([0-9,]*\)\],"block":\[\([0-9,]*\)\],"shmem":\([0-9]*\),"stream":"\([^"]*\)".*/\2 \1 \3 \4 \5 \6/' >"$tmp/got"
cat >"$tmp/want" <<'W'
k_one 0 8,1,1 32,1,1 0 0x0
k_one 0 8,1,1 32,1,1 0 0x0
k_one 0 9,1,1 32,1,1 0 0x0
k_one 0 8,1,1 33,1,1 0 0x0
k_one 0 8,1,1 32,1,1 16 0x0
k_one 0 8,1,1 32,1,1 0 0x10
k_one 0 8,1,1 32,1,1 0 0x0
k_one 1 0,1,1 32,1,1 0 0x0
k_two 0 8,1,1 32,1,1 0 0x0
k_two 0 8,1,1 32,1,1 0 0x0
W
cmp -s "$tmp/want" "$tmp/got" || bad "launches recorded otherwise: $(diff "$tmp/want" "$tmp/got")"
# the driver's launches under them: the function the stand-in runtime loaded, named alike
[ "$(grep -c '"layer":"api","name":"cuLaunchKernel".*"kernel":"k_one"' "$tmp/t.jsonl")" -ge 7 ] ||
	bad "the driver's launches not named"
grep '"layer":"api","name":"cuMemAlloc_v2"' "$tmp/t.jsonl" | sed 's/.*"dptr":"\(0x[0-9a-f]*\)".*/\1/' >"$tmp/got-dptr"
[ "$(sort -u "$tmp/dptr" | wc -l)" = 3 ] && cmp -s "$tmp/dptr" "$tmp/got-dptr" ||
	bad "allocations recorded otherwise: $(cat "$tmp/got-dptr"), made $(cat "$tmp/dptr")"
for k in k_one k_two; do
	n=$(grep '"layer":"meta","name":"symbol"' "$tmp/t.jsonl" |
		grep -c "\"name\":\"$k\",\"kind\":\"function\",\"via\":\"__cudaRegisterFunction\"")
	[ "$n" = 1 ] || bad "$n symbol records of the host stub as $k, want 1"
done
exit $fail
