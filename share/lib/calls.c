/* calls.c: per thread, the open spans of each layer as a list in the order they were opened
 * (its last one the innermost) and a heap by end; spans live in one pool, threads with none
 * open are swept out. Every step is O(1) or O(log n) whatever overlaps: a trace of a million
 * calls open at once costs what a million nested ones do. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "cut.h"
#include "calls.h"
#include "idmap.h"

#define NIL ((size_t)-1)

/* A span in the pool: the caller's struct first, so a struct cut_span * is one of these. */
struct rec {
	struct cut_span s;
	size_t below, above; /* same thread and layer, opened before and after it; NIL */
	size_t heap;         /* its place in its thread's heap; NIL when the entry is free */
	size_t thread;       /* index in t; the next free entry when free */
};

struct thread {
	bool used;
	int64_t pid, tid, rank; /* rank -1: none */
	char *host;             /* NULL: none */
	size_t next;            /* the next thread of the same (pid, tid) on another host or rank */
	size_t top[CUT_NLAYERS]; /* the last opened span still open of each layer, or NIL */
	size_t *heap;            /* its open spans, a binary min-heap by end */
	size_t n, cap;
};

struct cut_calls {
	unsigned mask;
	struct rec *pool;
	size_t poolcap, poolused, freerec; /* entries made, first free one (NIL: none) */
	struct thread *t;
	size_t tcap, tused, freethread; /* free threads chain through next */
	struct cut_idmap *ids;          /* (pid, tid) -> index in chain */
	size_t *chain;                  /* the first thread of each (pid, tid), NIL when none */
	size_t chaincap;
	size_t live, spans, bytes, sweep_at;
	size_t max_spans, max_bytes;
	uint64_t refused;
	/* spans by (thread, id), once a parent was asked by id (cutmerge's output read again) */
	struct cut_idmap *byid;
	size_t *byid_rec, byid_cap;
	/* threads looked up lately, by tid: a merge asks two or three things of each event, and
	 * a few threads make most of the events */
	size_t recent[16];
};

/* What a span and a thread cost, besides names: the numbers cut_calls_bytes adds up. */
#define SPAN_BYTES (sizeof(struct rec) + sizeof(size_t))
#define THREAD_BYTES (sizeof(struct thread) + 2 * sizeof(size_t))

/* How many spans of a layer are looked at for an event out of ts order (see calls.h). */
#define SCAN_MAX 64

struct cut_calls *
cut_calls_new(unsigned mask)
{
	struct cut_calls *c = cut_xcalloc(1, sizeof(*c));
	c->mask = mask;
	c->ids = idmap_new();
	c->sweep_at = 64;
	c->freerec = c->freethread = NIL;
	c->max_spans = c->max_bytes = SIZE_MAX;
	for (size_t i = 0; i < sizeof(c->recent) / sizeof(c->recent[0]); i++)
		c->recent[i] = NIL;
	return c;
}

void
cut_calls_limit(struct cut_calls *c, size_t spans, size_t bytes)
{
	c->max_spans = spans;
	c->max_bytes = bytes;
}

/* ---- the heap of a thread's spans by end ---- */

static inline int64_t
end_at(const struct cut_calls *c, const struct thread *th, size_t i)
{
	return c->pool[th->heap[i]].s.end;
}

static inline void
heap_set(struct cut_calls *c, struct thread *th, size_t i, size_t x)
{
	th->heap[i] = x;
	c->pool[x].heap = i;
}

static void
sift_up(struct cut_calls *c, struct thread *th, size_t i)
{
	size_t x = th->heap[i];
	int64_t end = c->pool[x].s.end;
	while (i > 0 && end_at(c, th, (i - 1) / 2) > end) {
		heap_set(c, th, i, th->heap[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	heap_set(c, th, i, x);
}

static void
sift_down(struct cut_calls *c, struct thread *th, size_t i)
{
	size_t x = th->heap[i];
	int64_t end = c->pool[x].s.end;
	for (;;) {
		size_t k = 2 * i + 1;
		if (k >= th->n)
			break;
		if (k + 1 < th->n && end_at(c, th, k + 1) < end_at(c, th, k))
			k++;
		if (end_at(c, th, k) >= end)
			break;
		heap_set(c, th, i, th->heap[k]);
		i = k;
	}
	heap_set(c, th, i, x);
}

/* ---- spans ---- */

/* Forgets the span of (thread index ti, id) in the index by id, if it is that span. */
static void
byid_forget(struct cut_calls *c, size_t ti, size_t x)
{
	int64_t id = c->pool[x].s.id;
	if (!c->byid || id < 0)
		return;
	size_t k = idmap_get2(c->byid, (int64_t)ti, id);
	if (k != IDMAP_NONE && c->byid_rec[k] == x)
		idmap_del2(c->byid, (int64_t)ti, id);
}

static void
byid_add(struct cut_calls *c, size_t ti, size_t x)
{
	int64_t id = c->pool[x].s.id;
	if (id < 0)
		return;
	size_t k = idmap_put2(c->byid, (int64_t)ti, id, NULL);
	CUT_GROW(c->byid_rec, k + 1, c->byid_cap);
	c->byid_rec[k] = x;
}

/* Takes span x off its thread: its layer's list, the heap, the index by id; frees it. */
static void
drop_span(struct cut_calls *c, struct thread *th, size_t x)
{
	struct rec *r = &c->pool[x];
	byid_forget(c, r->thread, x);
	if (r->above != NIL)
		c->pool[r->above].below = r->below;
	else
		th->top[r->s.layer] = r->below;
	if (r->below != NIL)
		c->pool[r->below].above = r->above;
	size_t i = r->heap;
	size_t last = th->heap[--th->n];
	if (i < th->n) {
		heap_set(c, th, i, last);
		sift_down(c, th, i);
		sift_up(c, th, c->pool[last].heap);
	}
	c->bytes -= SPAN_BYTES;
	if (r->s.longname) {
		c->bytes -= strlen(r->s.longname) + 1;
		free(r->s.longname);
		r->s.longname = NULL;
	}
	r->heap = NIL;
	r->thread = c->freerec;
	c->freerec = x;
	c->spans--;
}

/* Forgets the spans of th that end at or before now. */
static inline void
prune(struct cut_calls *c, struct thread *th, int64_t now)
{
	while (th->n && end_at(c, th, 0) <= now)
		drop_span(c, th, th->heap[0]);
}

/* ---- threads ---- */

static bool
same_host(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* The host and rank of ev as its thread's key: an empty host is none. */
static inline const char *
host_of(const struct cut_event *ev)
{
	return ev->host && *ev->host ? ev->host : NULL;
}

static inline int64_t
rank_of(const struct cut_event *ev)
{
	return ev->has & CUT_HAS_RANK ? ev->rank : -1;
}

static inline bool
is_thread_of(const struct thread *th, const struct cut_event *ev)
{
	return th->used && th->tid == ev->tid && th->pid == ev->pid && th->rank == rank_of(ev) &&
	       same_host(th->host, host_of(ev));
}

static void
drop_thread(struct cut_calls *c, size_t ti)
{
	struct thread *th = &c->t[ti];
	while (th->n)
		drop_span(c, th, th->heap[th->n - 1]);
	/* out of its (pid, tid) chain */
	size_t k = idmap_get2(c->ids, th->pid, th->tid);
	if (k != IDMAP_NONE) {
		size_t *p = &c->chain[k];
		while (*p != NIL && *p != ti)
			p = &c->t[*p].next;
		if (*p == ti)
			*p = th->next;
		if (c->chain[k] == NIL)
			idmap_del2(c->ids, th->pid, th->tid);
	}
	free(th->heap);
	c->bytes -= THREAD_BYTES + (th->host ? strlen(th->host) + 1 : 0);
	free(th->host);
	*th = (struct thread){.used = false, .next = c->freethread};
	c->freethread = ti;
	c->live--;
}

void
cut_calls_free(struct cut_calls *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->tused; i++)
		if (c->t[i].used)
			drop_thread(c, i);
	free(c->t);
	free(c->pool);
	free(c->chain);
	idmap_free(c->ids);
	idmap_free(c->byid);
	free(c->byid_rec);
	free(c);
}

/* Forgets the threads with no span open at now, so memory follows the threads alive. */
static void
sweep(struct cut_calls *c, int64_t now)
{
	for (size_t i = 0; i < c->tused; i++) {
		struct thread *th = &c->t[i];
		if (!th->used)
			continue;
		prune(c, th, now);
		if (!th->n)
			drop_thread(c, i);
	}
	c->sweep_at = 2 * c->live > 64 ? 2 * c->live : 64;
}

static size_t
new_thread(struct cut_calls *c, const struct cut_event *ev, size_t *head)
{
	size_t ti = c->freethread;
	if (ti != NIL) {
		c->freethread = c->t[ti].next;
	} else {
		CUT_GROW(c->t, c->tused + 1, c->tcap);
		ti = c->tused++;
	}
	const char *host = host_of(ev);
	struct thread *th = &c->t[ti];
	*th = (struct thread){.used = true,
	                      .pid = ev->pid,
	                      .tid = ev->tid,
	                      .rank = rank_of(ev),
	                      .host = host ? cut_xstrdup(host) : NULL,
	                      .next = *head};
	for (int l = 0; l < CUT_NLAYERS; l++)
		th->top[l] = NIL;
	*head = ti;
	c->bytes += THREAD_BYTES + (host ? strlen(host) + 1 : 0);
	c->live++;
	return ti;
}

/* thread_of when the thread is not among the recent ones. */
static size_t
lookup(struct cut_calls *c, const struct cut_event *ev, bool create)
{
	if (create && c->live >= c->sweep_at)
		sweep(c, ev->ts);
	size_t k = create ? idmap_put2(c->ids, ev->pid, ev->tid, NULL)
	                  : idmap_get2(c->ids, ev->pid, ev->tid);
	if (k == IDMAP_NONE)
		return NIL;
	if (k >= c->chaincap) {
		size_t old = c->chaincap;
		CUT_GROW(c->chain, k + 1, c->chaincap);
		for (size_t i = old; i < c->chaincap; i++)
			c->chain[i] = NIL;
	}
	size_t ti = c->chain[k];
	while (ti != NIL && !is_thread_of(&c->t[ti], ev))
		ti = c->t[ti].next;
	if (ti == NIL && create)
		ti = new_thread(c, ev, &c->chain[k]);
	if (ti != NIL)
		c->recent[ev->tid & 15] = ti;
	return ti;
}

/* The thread of ev (host, rank, pid, tid), pruned to now = ev->ts; created when create is
 * set, else NULL when it has nothing open. The recent ones are at hand: a merge asks two or
 * three things of an event, and a few threads make most of the events. */
static inline struct thread *
thread_of(struct cut_calls *c, const struct cut_event *ev, bool create)
{
	if (ev->tid <= 0)
		return NULL;
	size_t ti = c->recent[ev->tid & 15];
	if (ti == NIL || ti >= c->tused || !is_thread_of(&c->t[ti], ev))
		ti = lookup(c, ev, create);
	if (ti == NIL)
		return NULL;
	prune(c, &c->t[ti], ev->ts);
	return &c->t[ti];
}

struct cut_span *
cut_calls_open(struct cut_calls *c, const struct cut_event *ev)
{
	if (!(ev->has & CUT_HAS_DUR) || !(c->mask & 1u << ev->layer) || ev->tid <= 0)
		return NULL;
	struct thread *th = thread_of(c, ev, true);
	size_t n = c->mask & CUT_CALLS_NAMES ? strlen(ev->name) : 0;
	size_t cost = SPAN_BYTES + (n < sizeof(((struct cut_span *)0)->name) ? 0 : n + 1);
	if (c->spans >= c->max_spans || c->bytes + cost > c->max_bytes) {
		c->refused++;
		return NULL;
	}
	CUT_GROW(th->heap, th->n + 1, th->cap);
	size_t x = c->freerec;
	if (x != NIL) {
		c->freerec = c->pool[x].thread;
	} else {
		CUT_GROW(c->pool, c->poolused + 1, c->poolcap);
		x = c->poolused++;
	}
	size_t ti = (size_t)(th - c->t);
	struct rec *r = &c->pool[x];
	struct cut_span *s = &r->s;
	s->ts = ev->ts;
	s->end = cut_event_end(ev);
	s->id = ev->has & CUT_HAS_ID ? ev->id : -1;
	s->layer = ev->layer;
	s->user[0] = s->user[1] = 0;
	s->longname = NULL;
	if (n < sizeof(s->name)) {
		memcpy(s->name, ev->name, n);
		s->name[n] = '\0';
	} else {
		s->longname = cut_xstrdup(ev->name);
		s->name[0] = '\0';
		c->bytes += n + 1;
	}
	r->thread = ti;
	r->above = NIL;
	r->below = th->top[ev->layer];
	if (r->below != NIL)
		c->pool[r->below].above = x;
	th->top[ev->layer] = x;
	th->heap[th->n++] = x;
	sift_up(c, th, th->n - 1);
	if (c->byid)
		byid_add(c, ti, x);
	c->spans++;
	c->bytes += SPAN_BYTES;
	return s;
}

/* The last opened span of layer l on th that holds ts. In ts order it is the top, since every
 * span left open started at or before ts and ends after it; an event out of order may need a
 * look further down, SCAN_MAX spans at most. */
static struct cut_span *
holding(struct cut_calls *c, const struct thread *th, enum cut_layer l, int64_t ts)
{
	size_t x = th->top[l];
	for (int i = 0; i < SCAN_MAX && x != NIL; i++, x = c->pool[x].below) {
		struct cut_span *s = &c->pool[x].s;
		if (s->ts <= ts && ts < s->end)
			return s;
	}
	return NULL;
}

/* The layers that can hold an event of layer e, nearest first: a layer holds itself and
 * those ranked below it (cut-events(5)); NVTX ranges hold runtime calls, which hold driver
 * calls, which hold the layers of rank 0. */
static const enum cut_layer holders[] = {CUT_API, CUT_RUNTIME, CUT_NVTX};

struct cut_span *
cut_calls_parent(struct cut_calls *c, const struct cut_event *ev)
{
	/* gpu work runs apart from the thread that submitted it (corr links the two);
	 * interrupts and meta records belong to no call */
	if (ev->layer == CUT_GPU || ev->layer == CUT_IRQ || ev->layer == CUT_META)
		return NULL;
	struct thread *th = thread_of(c, ev, false);
	if (!th)
		return NULL;
	if (ev->has & CUT_HAS_PARENT) {
		size_t ti = (size_t)(th - c->t);
		if (!c->byid) { /* the first ask by id: index what is open */
			c->byid = idmap_new();
			for (size_t i = 0; i < c->tused; i++)
				for (size_t j = 0; c->t[i].used && j < c->t[i].n; j++)
					byid_add(c, i, c->t[i].heap[j]);
		}
		size_t k = idmap_get2(c->byid, (int64_t)ti, ev->parent);
		return k == IDMAP_NONE ? NULL : &c->pool[c->byid_rec[k]].s;
	}
	int re = cut_layer_rank(ev->layer);
	for (size_t i = 0; i < sizeof(holders) / sizeof(holders[0]); i++) {
		enum cut_layer l = holders[i];
		if (cut_layer_rank(l) < re || !(c->mask & 1u << l))
			continue;
		struct cut_span *s = holding(c, th, l, ev->ts);
		if (s)
			return s;
	}
	return NULL;
}

struct cut_span *
cut_calls_within(struct cut_calls *c, const struct cut_event *ev, enum cut_layer l)
{
	if ((unsigned)l >= CUT_NLAYERS)
		return NULL;
	struct thread *th = thread_of(c, ev, false);
	return th ? holding(c, th, l, ev->ts) : NULL;
}

void
cut_calls_close(struct cut_calls *c, const struct cut_event *ev, struct cut_span *s)
{
	(void)ev;
	struct rec *r = (struct rec *)s;
	if (!s || r < c->pool || r >= c->pool + c->poolused || r->heap == NIL)
		return;
	drop_span(c, &c->t[r->thread], (size_t)(r - c->pool));
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

size_t
cut_calls_bytes(const struct cut_calls *c)
{
	return c->bytes;
}

uint64_t
cut_calls_refused(const struct cut_calls *c)
{
	return c->refused;
}

/* ---- submissions: a ring of entries in the order noted, chained by key ---- */

#define NO_SEQ UINT64_MAX

struct cut_submits {
	char *v; /* cap entries of elem bytes; entry seq is at seq % cap */
	size_t elem, cap, max;
	uint64_t head, tail;    /* entries head..tail-1 are kept (some may be forgotten) */
	size_t live;            /* entries kept and not forgotten */
	struct cut_idmap *keys; /* (proc, corr) -> index in latest */
	uint64_t *latest;       /* the seq of each key's latest entry kept */
	size_t latestcap;
};

struct cut_submits *
cut_submits_new(size_t elem, size_t max)
{
	struct cut_submits *s = cut_xcalloc(1, sizeof(*s));
	s->elem = elem < sizeof(struct cut_submit) ? sizeof(struct cut_submit) : elem;
	s->max = max ? max : 1;
	s->keys = idmap_new();
	return s;
}

void
cut_submits_free(struct cut_submits *s)
{
	if (!s)
		return;
	free(s->v);
	free(s->latest);
	idmap_free(s->keys);
	free(s);
}

static inline struct cut_submit *
entry(const struct cut_submits *s, uint64_t seq)
{
	return (struct cut_submit *)(s->v + (size_t)(seq % s->cap) * s->elem);
}

/* The first entry kept and not forgotten from seq along its key's chain, or NULL. */
static struct cut_submit *
live_from(const struct cut_submits *s, uint64_t seq)
{
	while (seq != NO_SEQ && seq >= s->head) {
		struct cut_submit *e = entry(s, seq);
		if (e->live)
			return e;
		seq = e->older;
	}
	return NULL;
}

/* Takes e out of its key's chain, as the latest entry of the key when it was. */
static void
unlink_entry(struct cut_submits *s, struct cut_submit *e)
{
	size_t k = idmap_get2(s->keys, e->proc, e->corr);
	e->live = false;
	s->live--;
	if (k == IDMAP_NONE || s->latest[k] != e->seq)
		return; /* a later one is the latest, and skips it */
	struct cut_submit *o = live_from(s, e->older);
	if (o)
		s->latest[k] = o->seq;
	else
		idmap_del2(s->keys, e->proc, e->corr);
}

/* Moves head past the entries forgotten. */
static void
trim(struct cut_submits *s)
{
	while (s->head < s->tail && !entry(s, s->head)->live)
		s->head++;
}

void *
cut_calls_submit(struct cut_submits *s, int64_t proc, const struct cut_event *ev)
{
	int64_t corr;
	if (cut_args_int(ev->args, "corr", &corr) != 0)
		return NULL;
	if (s->tail - s->head == s->max) { /* the oldest goes */
		struct cut_submit *o = entry(s, s->head);
		if (o->live)
			unlink_entry(s, o);
		s->head++;
		trim(s);
	}
	if (s->tail - s->head == s->cap) { /* full: double, each entry to its new place */
		size_t cap = s->cap ? 2 * s->cap : 64;
		cap = cap > s->max ? s->max : cap;
		char *v = cut_xcalloc(cap, s->elem);
		for (uint64_t q = s->head; q < s->tail; q++)
			memcpy(v + (size_t)(q % cap) * s->elem, entry(s, q), s->elem);
		free(s->v);
		s->v = v;
		s->cap = cap;
	}
	bool isnew;
	size_t k = idmap_put2(s->keys, proc, corr, &isnew);
	CUT_GROW(s->latest, k + 1, s->latestcap);
	uint64_t seq = s->tail++;
	struct cut_submit *e = entry(s, seq);
	memset(e, 0, s->elem);
	*e = (struct cut_submit){proc, corr, seq, isnew ? NO_SEQ : s->latest[k], true};
	s->latest[k] = seq;
	s->live++;
	return e;
}

void *
cut_calls_submitter(struct cut_submits *s, int64_t proc, const struct cut_event *ev)
{
	int64_t corr;
	size_t k;
	if (cut_args_int(ev->args, "corr", &corr) != 0 ||
	    (k = idmap_get2(s->keys, proc, corr)) == IDMAP_NONE)
		return NULL;
	return live_from(s, s->latest[k]);
}

void *
cut_submits_older(struct cut_submits *s, const void *e)
{
	return live_from(s, ((const struct cut_submit *)e)->older);
}

void
cut_submits_forget(struct cut_submits *s, void *e)
{
	struct cut_submit *x = e;
	if (!x->live)
		return;
	unlink_entry(s, x);
	trim(s);
}

void *
cut_submits_oldest(struct cut_submits *s)
{
	trim(s);
	return s->head < s->tail ? entry(s, s->head) : NULL;
}

size_t
cut_submits_len(const struct cut_submits *s)
{
	return s->live;
}
