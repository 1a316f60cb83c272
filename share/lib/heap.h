/* heap.h: a binary min-heap of fixed-size elements ordered by (ts, seq), the key each element
 * starts with: reorder windows, inputs by their next event, completions by time. */
#ifndef CUT_HEAP_H
#define CUT_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The first member of every element: the least ts comes first, then the least seq. */
struct cut_heap_key {
	int64_t ts;
	uint64_t seq;
};

struct cut_heap {
	char *v;       /* elements, then one spare for moves */
	size_t n, cap; /* elements, room */
	size_t size;   /* bytes an element */
};

/* Makes h an empty heap of elements of size bytes: the size of a struct whose first member
 * is a struct cut_heap_key. */
void heap_init(struct cut_heap *h, size_t size);
/* Frees the elements; the heap is empty again and may be reused. */
void heap_free(struct cut_heap *h);
/* Adds a copy of elem (not an element of h). Exits with status 2 when memory runs out. */
void heap_push(struct cut_heap *h, const void *elem);
/* Copies the least element into out (unless out is NULL) and removes it. Returns false when
 * the heap is empty. */
bool heap_pop(struct cut_heap *h, void *out);
/* Restores the order after the caller changed the key of the least element in place (one
 * step where a pop and a push would take two). */
void heap_fix_top(struct cut_heap *h);

/* The least element, or NULL when the heap is empty; valid until the next change. */
static inline void *
heap_top(const struct cut_heap *h)
{
	return h->n ? h->v : NULL;
}
/* Element i, in no particular order (i < heap_len), to visit them all. */
static inline void *
heap_at(const struct cut_heap *h, size_t i)
{
	return h->v + i * h->size;
}
static inline size_t
heap_len(const struct cut_heap *h)
{
	return h->n;
}

#endif
