/* collide.c: prints n trace events whose function names (16 printable bytes each, all
 * different) collide in the string table's hash as it was before it took a random seed (FNV-1a
 * over 8-byte words from a fixed start): the adversarial input of issue 12, for
 * bench-filters.sh. The second word of each name undoes the first's effect on the state, so
 * every name leaves the same state after 16 bytes. usage: collide n */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int
printable(uint64_t w)
{
	for (int i = 0; i < 8; i++) {
		unsigned c = (unsigned)(w >> (8 * i)) & 0xff;
		if (c < 0x21 || c > 0x7e || c == '"' || c == '\\')
			return 0;
	}
	return 1;
}

int
main(int argc, char *argv[])
{
	long n = argc > 1 ? atol(argv[1]) : 20000;
	const uint64_t target = 0x4c4c4c4c4c4c4c4cULL; /* the state every name reaches */
	uint64_t rng = 88172645463325252ULL;
	for (long k = 0; k < n;) {
		rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
		uint64_t w1 = 0;
		for (int i = 0; i < 8; i++)
			w1 |= (uint64_t)(0x41 + (rng >> (5 * i)) % 26) << (8 * i);
		uint64_t h = (1469598103934665603ULL ^ w1) * 1099511628211ULL;
		h ^= h >> 29;
		uint64_t w2 = h ^ target;
		if (!printable(w2))
			continue;
		char name[17];
		memcpy(name, &w1, 8);
		memcpy(name + 8, &w2, 8);
		name[16] = 0;
		printf("{\"ts\":%ld,\"dur\":10,\"pid\":1,\"tid\":1,\"layer\":\"api\",\"name\":\"%"
		       "s\"}\n",
		       1000 + 20 * k, name);
		k++;
	}
	return 0;
}
