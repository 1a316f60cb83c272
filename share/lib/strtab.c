/* strtab.c: open-addressing hash of interned strings (FNV-1a, linear probing). */
#include <err.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "strtab.h"

struct cut_strtab {
	char **keys; /* by index */
	size_t n, kcap;
	size_t *slots; /* index + 1; 0 = empty */
	size_t nslots; /* power of two */
};

/* FNV-1a over 8 bytes at a time (names are short; every event of a summary is hashed). */
static uint64_t
hash(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ULL, w;
	for (; n >= 8; n -= 8, s += 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * 1099511628211ULL;
		h ^= h >> 29;
	}
	w = 0;
	memcpy(&w, s, n);
	h = (h ^ w ^ n) * 1099511628211ULL;
	return h ^ (h >> 32);
}

struct cut_strtab *
strtab_new(void)
{
	struct cut_strtab *t = calloc(1, sizeof(*t));
	if (!t || !(t->slots = calloc(64, sizeof(size_t))))
		err(2, "out of memory");
	t->nslots = 64;
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
probe(const struct cut_strtab *t, const char *key)
{
	size_t mask = t->nslots - 1, n = strlen(key);
	for (size_t i = hash(key, n) & mask;; i = (i + 1) & mask)
		if (!t->slots[i] || strcmp(t->keys[t->slots[i] - 1], key) == 0)
			return &t->slots[i];
}

static void
rehash(struct cut_strtab *t)
{
	size_t *old = t->slots, oldn = t->nslots;
	t->nslots *= 2;
	if (!(t->slots = calloc(t->nslots, sizeof(size_t))))
		err(2, "out of memory");
	for (size_t i = 0; i < oldn; i++)
		if (old[i])
			*probe(t, t->keys[old[i] - 1]) = old[i];
	free(old);
}

size_t
strtab_intern(struct cut_strtab *t, const char *key)
{
	size_t *slot = probe(t, key);
	if (*slot)
		return *slot - 1;
	if (t->n == t->kcap) {
		t->kcap = t->kcap ? t->kcap * 2 : 64;
		if (!(t->keys = realloc(t->keys, t->kcap * sizeof(char *))))
			err(2, "out of memory");
	}
	if (!(t->keys[t->n] = strdup(key)))
		err(2, "out of memory");
	*slot = ++t->n;
	if (t->n * 2 > t->nslots)
		rehash(t);
	return t->n - 1;
}

size_t
strtab_find(const struct cut_strtab *t, const char *key)
{
	size_t *slot = probe(t, key);
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
