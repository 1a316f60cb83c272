/* order.c: the reorder buffer, a heap.h min-heap on (ts, arrival), and the off-CPU periods
 * handed out in parts. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cut.h"
#include "event.h"
#include "order.h"

/* An element of the heap. Record times are CLOCK_MONOTONIC readings, far below 2^63. */
struct item {
	struct cut_heap_key key; /* ts, then the order of arrival */
	struct cc_hdr *rec;
};

void
order_push(struct order *o, struct cc_hdr *rec)
{
	if (!o->heap.size)
		heap_init(&o->heap, sizeof(struct item));
	struct item it = {{(int64_t)rec->ts, o->seq++}, rec};
	heap_push(&o->heap, &it);
}

struct cc_hdr *
order_pop(struct order *o, uint64_t upto)
{
	const struct item *top = heap_top(&o->heap);
	struct item it;
	if (!top || (uint64_t)top->key.ts >= upto || !heap_pop(&o->heap, &it))
		return NULL;
	return it.rec;
}

size_t
order_pending(const struct order *o)
{
	return heap_len(&o->heap);
}

/* The split of thread tid's period that began at off_ts. */
static struct order_split *
split_find(struct order *o, uint32_t tid, uint64_t off_ts)
{
	for (size_t i = 0; i < o->nsplits; i++)
		if (o->splits[i].tid == tid && o->splits[i].off_ts == off_ts)
			return &o->splits[i];
	return NULL;
}

void
order_offcpu_arrived(struct order *o, struct cc_hdr *rec)
{
	/* Part of this period was handed out already: the rest starts where that ended. */
	struct order_split *s = split_find(o, rec->tid, rec->ts);
	if (!s)
		return;
	uint64_t end = rec->ts + rec->dur;
	rec->ts = s->upto;
	rec->dur = end > s->upto ? end - s->upto : 0;
	*s = o->splits[--o->nsplits];
}

uint64_t
order_offcpu_hold(struct order *o, uint32_t tid, uint64_t off_ts, uint64_t now, uint64_t max_age,
                  uint64_t upto, uint64_t *part)
{
	/* A period of this thread that began earlier is over: the thread woke and left the CPU
	 * again between the last read of the ring and this scan, and that period's record may
	 * still be in the ring (it is read after the scan). Its split stays until the next scan,
	 * so that the record is cut to what was not handed out, not written whole and late. */
	struct order_split *s = NULL;
	for (size_t i = 0; i < o->nsplits; i++)
		if (o->splits[i].tid == tid) {
			if (o->splits[i].off_ts == off_ts)
				s = &o->splits[i];
			else
				o->splits[i].ended = true;
		}
	*part = 0;
	if (!s) {
		if (now < off_ts + max_age || upto <= off_ts)
			return off_ts;
		CUT_GROW(o->splits, o->nsplits + 1, o->capsplits);
		s = &o->splits[o->nsplits++];
		*s = (struct order_split){tid, false, off_ts, off_ts};
	}
	if (now < s->upto + max_age || upto <= s->upto)
		return s->upto;
	*part = s->upto;
	s->upto = upto;
	return upto;
}

size_t
order_offcpu_sweep(struct order *o)
{
	size_t n = 0;
	for (size_t i = 0; i < o->nsplits;)
		if (o->splits[i].ended) {
			o->splits[i] = o->splits[--o->nsplits];
			n++;
		} else {
			i++;
		}
	return n;
}

void
order_offcpu_end(struct order *o, bool (*still_off)(uint32_t tid, uint64_t off_ts, void *arg),
                 void *arg)
{
	for (size_t i = 0; i < o->nsplits; i++)
		if (!still_off(o->splits[i].tid, o->splits[i].off_ts, arg))
			o->splits[i].ended = true;
}

void
order_free(struct order *o)
{
	struct item it;
	while (heap_pop(&o->heap, &it))
		free(it.rec);
	heap_free(&o->heap);
	free(o->splits);
	memset(o, 0, sizeof(*o));
}
