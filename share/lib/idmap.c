/* idmap.c: open addressing with linear probing on a power-of-two table at most half full;
 * deletion shifts the rest of the probe run back, so there are no tombstones. */
#include <stdlib.h>

#include "cut.h"
#include "idmap.h"

struct slot {
	int64_t a, b;
	size_t idx; /* index + 1; 0: empty */
};

struct cut_idmap {
	struct slot *slots;
	size_t cap, len, span;
	unsigned shift; /* 64 - log2(cap) */
	size_t *freed;  /* deleted indices not yet reused, the last deleted on top */
	size_t nfreed, capfreed;
};

/* Multiplicative hashing: both words through odd multipliers, and the table index from the
 * top bits of the sum, which every bit of the key reaches, so keys that differ only in high
 * bits (multiples of 4096, pointers, pids shifted up) still spread over the table; the low
 * bits would not. Four instructions, on every lookup of every event. */
static inline size_t
home(const struct cut_idmap *m, int64_t a, int64_t b)
{
	return (size_t)(((uint64_t)a * 0x9e3779b97f4a7c15u + (uint64_t)b * 0xc2b2ae3d27d4eb4fu) >>
	                m->shift);
}

struct cut_idmap *
idmap_new(void)
{
	return cut_xcalloc(1, sizeof(struct cut_idmap));
}

void
idmap_free(struct cut_idmap *m)
{
	if (!m)
		return;
	free(m->slots);
	free(m->freed);
	free(m);
}

/* The slot of (a, b), or the empty slot where it would go. */
static inline struct slot *
probe(const struct cut_idmap *m, int64_t a, int64_t b)
{
	size_t i = home(m, a, b);
	while (m->slots[i].idx && (m->slots[i].a != a || m->slots[i].b != b))
		i = (i + 1) & (m->cap - 1);
	return &m->slots[i];
}

static void
grow(struct cut_idmap *m)
{
	struct slot *old = m->slots;
	size_t oldcap = m->cap;
	m->cap = m->cap ? 2 * m->cap : 16;
	m->shift = 64 - (unsigned)__builtin_ctzll(m->cap);
	m->slots = cut_xcalloc(m->cap, sizeof(*m->slots));
	for (size_t i = 0; i < oldcap; i++)
		if (old[i].idx)
			*probe(m, old[i].a, old[i].b) = old[i];
	free(old);
}

size_t
idmap_put2(struct cut_idmap *m, int64_t a, int64_t b, bool *isnew)
{
	if (2 * (m->len + 1) > m->cap)
		grow(m);
	struct slot *s = probe(m, a, b);
	if (isnew)
		*isnew = !s->idx;
	if (s->idx)
		return s->idx - 1;
	size_t idx = m->nfreed ? m->freed[--m->nfreed] : m->span++;
	*s = (struct slot){a, b, idx + 1};
	m->len++;
	return idx;
}

size_t
idmap_get2(const struct cut_idmap *m, int64_t a, int64_t b)
{
	return m->cap ? probe(m, a, b)->idx - 1 : IDMAP_NONE;
}

/* Whether slot k's key, at home h, may move back to the hole at i: its probe from h passes i. */
static bool
reaches(size_t h, size_t i, size_t k)
{
	return i <= k ? h <= i || h > k : h <= i && h > k;
}

size_t
idmap_del2(struct cut_idmap *m, int64_t a, int64_t b)
{
	if (!m->cap)
		return IDMAP_NONE;
	struct slot *s = probe(m, a, b);
	size_t idx = s->idx - 1, mask = m->cap - 1;
	if (!s->idx)
		return IDMAP_NONE;
	CUT_GROW(m->freed, m->nfreed + 1, m->capfreed);
	m->freed[m->nfreed++] = idx;
	m->len--;
	size_t i = (size_t)(s - m->slots);
	for (size_t k = (i + 1) & mask; m->slots[k].idx; k = (k + 1) & mask) {
		if (reaches(home(m, m->slots[k].a, m->slots[k].b), i, k)) {
			m->slots[i] = m->slots[k];
			i = k;
		}
	}
	m->slots[i].idx = 0;
	return idx;
}

size_t
idmap_put(struct cut_idmap *m, int64_t key, bool *isnew)
{
	return idmap_put2(m, key, 0, isnew);
}

size_t
idmap_get(const struct cut_idmap *m, int64_t key)
{
	return idmap_get2(m, key, 0);
}

size_t
idmap_del(struct cut_idmap *m, int64_t key)
{
	return idmap_del2(m, key, 0);
}

size_t
idmap_len(const struct cut_idmap *m)
{
	return m->len;
}

size_t
idmap_span(const struct cut_idmap *m)
{
	return m->span;
}
