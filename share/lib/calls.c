/* calls.c: per thread, the open spans in the order they were opened (so by start), pruned
 * as events move past their ends; threads with none left are swept out of the id map. */
#include <err.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "calls.h"
#include "idmap.h"

struct thread {
	bool used;
	int64_t pid, tid;
	struct cut_span *s; /* open spans, in the order opened */
	size_t n, cap;
	int64_t min_end; /* the earliest end in s; INT64_MAX when s is empty */
};

struct cut_calls {
	unsigned mask;
	struct cut_idmap *ids; /* (pid, tid) -> index in t */
	struct thread *t;
	size_t cap, live, spans, sweep_at;
	/* threads looked up lately, by tid: a merge asks two or three things of each event, and
	 * a few threads make most of the events */
	struct recent {
		int64_t pid, tid;
		size_t i; /* NOTHREAD: empty */
	} recent[16];
};

#define NOTHREAD ((size_t)-1)

static void
forget_recent(struct cut_calls *c)
{
	for (size_t i = 0; i < sizeof(c->recent) / sizeof(c->recent[0]); i++)
		c->recent[i].i = NOTHREAD;
}

struct cut_calls *
cut_calls_new(unsigned mask)
{
	struct cut_calls *c = calloc(1, sizeof(*c));
	if (!c)
		err(2, "out of memory");
	c->mask = mask;
	c->ids = idmap_new();
	c->sweep_at = 64;
	forget_recent(c);
	return c;
}

static inline void
drop_span(struct cut_calls *c, struct cut_span *s)
{
	if (s->longname)
		free(s->longname);
	c->spans--;
}

static void
drop_thread(struct cut_calls *c, struct thread *th)
{
	for (size_t i = 0; i < th->n; i++)
		drop_span(c, &th->s[i]);
	free(th->s);
	*th = (struct thread){.used = false};
	c->live--;
}

void
cut_calls_free(struct cut_calls *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->cap; i++)
		if (c->t[i].used)
			drop_thread(c, &c->t[i]);
	free(c->t);
	idmap_free(c->ids);
	free(c);
}

/* prune() when something ends: mostly the innermost span, as calls nest. */
static void
prune_ended(struct cut_calls *c, struct thread *th, int64_t now)
{
	while (th->n && th->s[th->n - 1].end <= now)
		drop_span(c, &th->s[--th->n]);
	size_t k = 0;
	th->min_end = INT64_MAX;
	for (size_t i = 0; i < th->n; i++) {
		if (th->s[i].end <= now) {
			drop_span(c, &th->s[i]);
			continue;
		}
		th->s[k++] = th->s[i];
		if (th->s[i].end < th->min_end)
			th->min_end = th->s[i].end;
	}
	th->n = k;
}

/* Forgets the spans of th that end at or before now. */
static inline void
prune(struct cut_calls *c, struct thread *th, int64_t now)
{
	if (now < th->min_end)
		return;
	if (th->n == 1) { /* the one call open has ended: the usual case */
		drop_span(c, &th->s[--th->n]);
		th->min_end = INT64_MAX;
		return;
	}
	prune_ended(c, th, now);
}

/* Forgets the threads with no span open at now, so memory follows the threads alive. */
static void
sweep(struct cut_calls *c, int64_t now)
{
	for (size_t i = 0; i < c->cap; i++) {
		struct thread *th = &c->t[i];
		if (!th->used)
			continue;
		prune(c, th, now);
		if (th->n)
			continue;
		idmap_del2(c->ids, th->pid, th->tid);
		drop_thread(c, th);
	}
	forget_recent(c);
	c->sweep_at = 2 * c->live > 64 ? 2 * c->live : 64;
}

/* thread_of when the thread is not among the recent ones. */
static struct thread *
lookup(struct cut_calls *c, const struct cut_event *ev, bool create)
{
	size_t i;
	if (ev->tid <= 0)
		return NULL;
	if (!create) {
		if ((i = idmap_get2(c->ids, ev->pid, ev->tid)) == IDMAP_NONE)
			return NULL;
	} else {
		if (c->live >= c->sweep_at)
			sweep(c, ev->ts);
		i = idmap_put2(c->ids, ev->pid, ev->tid, NULL);
		if (i >= c->cap) {
			size_t cap = c->cap ? 2 * c->cap : 16;
			if (!(c->t = realloc(c->t, cap * sizeof(*c->t))))
				err(2, "out of memory");
			memset(c->t + c->cap, 0, (cap - c->cap) * sizeof(*c->t));
			c->cap = cap;
		}
		if (!c->t[i].used) {
			c->t[i] = (struct thread){
			    .used = true, .pid = ev->pid, .tid = ev->tid, .min_end = INT64_MAX};
			c->live++;
		}
	}
	c->recent[ev->tid & 15] = (struct recent){ev->pid, ev->tid, i};
	prune(c, &c->t[i], ev->ts);
	return &c->t[i];
}

/* The thread of ev, pruned to now = ev->ts; created when create is set, else NULL when it has
 * nothing open. The recent ones are at hand: a merge asks two or three things of an event,
 * and a few threads make most of the events. */
static inline struct thread *
thread_of(struct cut_calls *c, const struct cut_event *ev, bool create)
{
	const struct recent *r = &c->recent[ev->tid & 15];
	if (r->i == NOTHREAD || r->pid != ev->pid || r->tid != ev->tid)
		return lookup(c, ev, create);
	struct thread *th = &c->t[r->i];
	prune(c, th, ev->ts);
	return th;
}

struct cut_span *
cut_calls_open(struct cut_calls *c, const struct cut_event *ev)
{
	if (!(ev->has & CUT_HAS_DUR) || !(c->mask & 1u << ev->layer) || ev->tid <= 0)
		return NULL;
	struct thread *th = thread_of(c, ev, true);
	if (th->n == th->cap) {
		th->cap = th->cap ? 2 * th->cap : 4;
		if (!(th->s = realloc(th->s, th->cap * sizeof(*th->s))))
			err(2, "out of memory");
	}
	struct cut_span *s = &th->s[th->n++];
	s->ts = ev->ts;
	s->end = cut_event_end(ev);
	s->id = ev->has & CUT_HAS_ID ? ev->id : -1;
	s->layer = ev->layer;
	s->user[0] = s->user[1] = 0;
	s->longname = NULL;
	size_t n = c->mask & CUT_CALLS_NAMES ? strlen(ev->name) : 0;
	if (n < sizeof(s->name))
		memcpy(s->name, ev->name, n), s->name[n] = '\0';
	else if (!(s->longname = strdup(ev->name)))
		err(2, "out of memory");
	if (s->end < th->min_end)
		th->min_end = s->end;
	c->spans++;
	return s;
}

/* How near a span of layer l is to holding an event of layer e: 1 for the nearest layer,
 * higher for those above it; 0 when it cannot hold it. */
static int
nearness(enum cut_layer l, enum cut_layer e)
{
	int rl = cut_layer_rank(l), re = cut_layer_rank(e);
	if (rl < 1 || rl < re)
		return 0;
	return rl - (re > 0 ? re : 1) + 1;
}

struct cut_span *
cut_calls_parent(struct cut_calls *c, const struct cut_event *ev)
{
	/* gpu work runs apart from the thread that submitted it (corr links the two);
	 * interrupts and meta records belong to no call */
	if (ev->layer == CUT_GPU || ev->layer == CUT_IRQ || ev->layer == CUT_META)
		return NULL;
	struct thread *th = thread_of(c, ev, false);
	struct cut_span *best = NULL;
	int bestn = 0;
	if (th && (ev->has & CUT_HAS_PARENT)) {
		for (size_t i = th->n; i-- > 0;)
			if (th->s[i].id == ev->parent)
				return &th->s[i];
		return NULL;
	}
	for (size_t i = th ? th->n : 0; i-- > 0;) {
		struct cut_span *s = &th->s[i];
		int n = nearness(s->layer, ev->layer);
		if (n && s->ts <= ev->ts && ev->ts < s->end && (!best || n < bestn))
			best = s, bestn = n;
	}
	return best;
}

struct cut_span *
cut_calls_within(struct cut_calls *c, const struct cut_event *ev, enum cut_layer l)
{
	struct thread *th = thread_of(c, ev, false);
	for (size_t i = th ? th->n : 0; i-- > 0;)
		if (th->s[i].layer == l && th->s[i].ts <= ev->ts && ev->ts < th->s[i].end)
			return &th->s[i];
	return NULL;
}

void
cut_calls_close(struct cut_calls *c, const struct cut_event *ev, struct cut_span *s)
{
	/* found without pruning, which would move s */
	const struct recent *r = &c->recent[ev->tid & 15];
	size_t i = r->i != NOTHREAD && r->pid == ev->pid && r->tid == ev->tid
	               ? r->i
	               : idmap_get2(c->ids, ev->pid, ev->tid);
	struct thread *th = i == IDMAP_NONE ? NULL : &c->t[i];
	if (!th || s < th->s || s >= th->s + th->n)
		return;
	drop_span(c, s);
	memmove(s, s + 1, (size_t)(th->s + th->n - (s + 1)) * sizeof(*s));
	th->n--;
	th->min_end = INT64_MAX;
	for (size_t i = 0; i < th->n; i++)
		if (th->s[i].end < th->min_end)
			th->min_end = th->s[i].end;
}

size_t
cut_calls_threads(const struct cut_calls *c)
{
	return c->live;
}

size_t
cut_calls_spans(const struct cut_calls *c)
{
	return c->spans;
}
