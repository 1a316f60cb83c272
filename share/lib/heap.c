/* heap.c: sift up and down by moving the hole, so an element is copied once per level. */
#include <stdlib.h>
#include <string.h>

#include "cut.h"
#include "heap.h"

void
heap_init(struct cut_heap *h, size_t size)
{
	*h = (struct cut_heap){.size = size};
}

void
heap_free(struct cut_heap *h)
{
	free(h->v);
	heap_init(h, h->size);
}

static inline bool
less(const char *x, const char *y)
{
	const struct cut_heap_key *a = (const void *)x, *b = (const void *)y;
	return a->ts < b->ts || (a->ts == b->ts && a->seq < b->seq);
}

static inline char *
at(const struct cut_heap *h, size_t i)
{
	return h->v + i * h->size;
}

/* Copies an element. The usual sizes get a memcpy of a constant size, which the compiler
 * turns into a few moves; any other size is a library call at every level of a sift. */
static inline void
move(const struct cut_heap *h, void *dst, const void *src)
{
	switch (h->size) {
	case 16: memcpy(dst, src, 16); break;
	case 24: memcpy(dst, src, 24); break;
	case 32: memcpy(dst, src, 32); break;
	case 40: memcpy(dst, src, 40); break;
	case 48: memcpy(dst, src, 48); break;
	default: memcpy(dst, src, h->size);
	}
}

/* Puts elem (not in the heap) at the hole i, moving the hole down past smaller children. */
static void
sift_down(struct cut_heap *h, size_t i, const char *elem)
{
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= h->n)
			break;
		if (c + 1 < h->n && less(at(h, c + 1), at(h, c)))
			c++;
		if (!less(at(h, c), elem))
			break;
		move(h, at(h, i), at(h, c));
		i = c;
	}
	move(h, at(h, i), elem);
}

void
heap_push(struct cut_heap *h, const void *elem)
{
	if (h->n == h->cap) {
		h->cap = h->cap ? 2 * h->cap : 64;
		h->v = cut_xrealloc(h->v, h->cap + 1, h->size);
	}
	size_t i = h->n++;
	while (i > 0 && less(elem, at(h, (i - 1) / 2))) {
		move(h, at(h, i), at(h, (i - 1) / 2));
		i = (i - 1) / 2;
	}
	move(h, at(h, i), elem);
}

bool
heap_pop(struct cut_heap *h, void *out)
{
	if (!h->n)
		return false;
	if (out)
		move(h, out, h->v);
	if (--h->n)
		sift_down(h, 0, at(h, h->n));
	return true;
}

void
heap_fix_top(struct cut_heap *h)
{
	if (h->n < 2)
		return;
	char *spare = at(h, h->cap);
	move(h, spare, h->v);
	sift_down(h, 0, spare);
}
