/* strtab.c: open-addressing hash of interned strings (linear probing), keyed with a random
 * seed per table: the names come from the traced program, and a fixed hash lets a trace of
 * names made to collide turn every lookup into a scan of all of them. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "cut.h"
#include "strtab.h"

struct cut_strtab {
	char **keys; /* by index */
	size_t n, kcap;
	size_t *slots;    /* index + 1; 0 = empty */
	size_t nslots;    /* power of two */
	uint64_t seed;    /* secret: collisions cannot be made in advance */
	size_t longest;   /* longest probe seen since the last seeding */
	unsigned reseeds; /* since the table last grew */
};

/* A probe longer than this on a table not that full means colliding keys: new seed. */
#define STRTAB_LONG_PROBE 64

/* Eight bytes a step, multiply and xor-shift, from the seed; the last step is the SplitMix64
 * finaliser, so every bit of the key and the seed reaches the low bits the table uses. */
static uint64_t
hash(uint64_t seed, const char *s, size_t n)
{
	uint64_t h = seed ^ (n * 0x9e3779b97f4a7c15ULL), w;
	for (; n >= 8; n -= 8, s += 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * 0xbf58476d1ce4e5b9ULL;
		h ^= h >> 31;
	}
	w = 0;
	memcpy(&w, s, n);
	h = (h ^ w) * 0x94d049bb133111ebULL;
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebULL;
	return h ^ (h >> 31);
}

static uint64_t
new_seed(const void *salt)
{
	uint64_t s = 0;
	if (getrandom(&s, sizeof(s), GRND_NONBLOCK) != (ssize_t)sizeof(s)) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		s = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ULL ^ (uint64_t)(uintptr_t)salt ^
		    (uint64_t)ts.tv_sec << 32;
	}
	return s | 1;
}

struct cut_strtab *
strtab_new(void)
{
	struct cut_strtab *t = cut_xcalloc(1, sizeof(*t));
	t->slots = cut_xcalloc(64, sizeof(size_t));
	t->nslots = 64;
	t->seed = new_seed(t);
	return t;
}

void
strtab_free(struct cut_strtab *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++)
		free(t->keys[i]);
	free(t->keys);
	free(t->slots);
	free(t);
}

static size_t *
probe(const struct cut_strtab *t, const char *key, size_t *steps)
{
	size_t mask = t->nslots - 1, n = strlen(key);
	*steps = 0;
	for (size_t i = hash(t->seed, key, n) & mask;; i = (i + 1) & mask, ++*steps)
		if (!t->slots[i] || strcmp(t->keys[t->slots[i] - 1], key) == 0)
			return &t->slots[i];
}

/* Places every key again, in a table of nslots slots. */
static void
rehash_to(struct cut_strtab *t, size_t nslots)
{
	size_t *old = t->slots, oldn = t->nslots, steps;
	t->nslots = nslots;
	t->slots = cut_xcalloc(t->nslots, sizeof(size_t));
	t->longest = 0;
	for (size_t i = 0; i < oldn; i++)
		if (old[i]) {
			*probe(t, t->keys[old[i] - 1], &steps) = old[i];
			if (steps > t->longest)
				t->longest = steps;
		}
	free(old);
}

static void
rehash(struct cut_strtab *t)
{
	t->reseeds = 0;
	rehash_to(t, t->nslots * 2);
}

size_t
strtab_intern(struct cut_strtab *t, const char *key)
{
	size_t steps;
	size_t *slot = probe(t, key, &steps);
	if (*slot)
		return *slot - 1;
	if (steps > STRTAB_LONG_PROBE && steps > t->longest && t->reseeds < 3) {
		/* keys that collide under this seed: another seed scatters them (three tries
		 * at most before the table grows, so that this stays linear whatever the keys) */
		t->reseeds++;
		t->seed = new_seed(slot);
		rehash_to(t, t->nslots);
		slot = probe(t, key, &steps);
	}
	if (steps > t->longest)
		t->longest = steps;
	CUT_GROW(t->keys, t->n + 1, t->kcap);
	t->keys[t->n] = cut_xstrdup(key);
	*slot = ++t->n;
	if (t->n * 2 > t->nslots)
		rehash(t);
	return t->n - 1;
}

size_t
strtab_find(const struct cut_strtab *t, const char *key)
{
	size_t steps;
	size_t *slot = probe(t, key, &steps);
	return *slot ? *slot - 1 : (size_t)-1;
}

const char *
strtab_key(const struct cut_strtab *t, size_t i)
{
	return i < t->n ? t->keys[i] : NULL;
}

size_t
strtab_len(const struct cut_strtab *t)
{
	return t->n;
}
