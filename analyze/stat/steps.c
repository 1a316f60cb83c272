/* steps.c: the per-step view (steps.h). Each process's calls, synchronising calls and GPU work
 * are kept as spans to the end (a span that continues the one before it, as the calls of a
 * thread in time order often do, extends it instead), then made unions, sorted and disjoint,
 * that each window is measured against by binary search; kernels are swept once per process,
 * the steps in start order, with a heap of the kernels still running at a step's start. */
#include <err.h>
#include <stdlib.h>
#include <string.h>

#include "classify.h"
#include "cut.h"
#include "heap.h"
#include "procs.h"
#include "steps.h"
#include "strtab.h"

struct span {
	int64_t s, e;
};

struct spans {
	struct span *v;
	size_t n, cap;
};

struct kpiece {
	int64_t s, e;
	size_t name;
};

struct inst {
	int64_t ts, dur;
	uint64_t seq;
};

/* What steps_add keeps of one process. */
struct pacc {
	struct spans calls, sync, gpu;
	struct kpiece *k;
	size_t nk, capk;
	struct inst *inst;
	size_t ninst, capinst;
};

struct priv {
	char *range;
	struct cut_procs *procs;
	struct pacc *pa;
	size_t cap;
	struct cut_strtab *names; /* kernel names */
	unsigned char *sync_fn;   /* per name: 0 not looked up, 1 not sync, 2 sync */
	size_t capsync;
	struct cut_strtab *fns; /* driver and runtime function names */
	uint64_t seq;
};

/* a + b, or INT64_MAX past it: the end of a span of a hostile trace. */
static int64_t
end_of(int64_t a, int64_t b)
{
	int64_t e;
	return __builtin_add_overflow(a, b, &e) ? INT64_MAX : e;
}

struct cut_steps *
steps_new(const char *range)
{
	struct cut_steps *s = cut_xcalloc(1, sizeof(*s));
	struct priv *p = cut_xcalloc(1, sizeof(*p));
	p->range = cut_xstrdup(range);
	p->procs = cut_procs_new();
	p->names = strtab_new();
	p->fns = strtab_new();
	s->range = p->range;
	s->priv = p;
	return s;
}

static void
span_add(struct spans *v, int64_t s, int64_t e)
{
	struct span *last = v->n ? &v->v[v->n - 1] : NULL;
	if (last && s >= last->s && s <= last->e) {
		if (e > last->e)
			last->e = e;
		return;
	}
	CUT_GROW(v->v, v->n + 1, v->cap);
	v->v[v->n++] = (struct span){s, e};
}

/* Whether a runtime or driver call is of the sync category (cached per name). */
static bool
is_sync(struct priv *p, const struct cut_event *ev)
{
	if (ev->layer == CUT_RUNTIME) /* its cat, else the runtime's row of the table */
		return strcmp(cut_event_category(ev), "sync") == 0;
	size_t i = strtab_intern(p->fns, ev->name);
	CUT_GROW(p->sync_fn, i + 1, p->capsync);
	if (!p->sync_fn[i])
		p->sync_fn[i] = 1 + (cut_api_category_id(ev->name) == CUT_CAT_SYNC);
	return p->sync_fn[i] == 2;
}

void
steps_add(struct cut_steps *s, const struct cut_event *ev)
{
	struct priv *p = s->priv;
	size_t proc = cut_procs_of(p->procs, ev);
	if (ev->layer == CUT_META || !(ev->has & CUT_HAS_DUR) || ev->dur < 0)
		return;
	CUT_GROW(p->pa, proc + 1, p->cap);
	struct pacc *a = &p->pa[proc];
	int64_t end = end_of(ev->ts, ev->dur);
	switch (ev->layer) {
	case CUT_RUNTIME:
	case CUT_API:
		span_add(&a->calls, ev->ts, end);
		if (is_sync(p, ev))
			span_add(&a->sync, ev->ts, end);
		break;
	case CUT_GPU:
		span_add(&a->gpu, ev->ts, end);
		if (ev->cat && strcmp(ev->cat, "kernel") == 0 && ev->name) {
			CUT_GROW(a->k, a->nk + 1, a->capk);
			a->k[a->nk++] =
			    (struct kpiece){ev->ts, end, strtab_intern(p->names, ev->name)};
		}
		break;
	case CUT_NVTX:
		if (strcmp(ev->name, p->range) != 0 || (ev->cat && strcmp(ev->cat, "mark") == 0))
			break;
		CUT_GROW(a->inst, a->ninst + 1, a->capinst);
		a->inst[a->ninst++] = (struct inst){ev->ts, ev->dur, p->seq++};
		break;
	default: break;
	}
}

static int
by_start(const void *a, const void *b)
{
	const struct span *x = a, *y = b;
	return x->s < y->s ? -1 : x->s > y->s;
}

static int
piece_by_start(const void *a, const void *b)
{
	const struct kpiece *x = a, *y = b;
	return x->s < y->s ? -1 : x->s > y->s;
}

static int
inst_by_start(const void *a, const void *b)
{
	const struct inst *x = a, *y = b;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Makes v its union: sorted by start, disjoint. */
static void
unite(struct spans *v)
{
	if (v->n < 2)
		return;
	qsort(v->v, v->n, sizeof(*v->v), by_start);
	size_t k = 0;
	for (size_t i = 1; i < v->n; i++) {
		if (v->v[i].s <= v->v[k].e) {
			if (v->v[i].e > v->v[k].e)
				v->v[k].e = v->v[i].e;
		} else
			v->v[++k] = v->v[i];
	}
	v->n = k + 1;
}

/* The time of [from, to) a union covers. */
static int64_t
covered(const struct spans *v, int64_t from, int64_t to)
{
	size_t lo = 0, hi = v->n;
	while (lo < hi) { /* the first span ending after from */
		size_t m = lo + (hi - lo) / 2;
		if (v->v[m].e <= from)
			lo = m + 1;
		else
			hi = m;
	}
	int64_t t = 0;
	for (size_t i = lo; i < v->n && v->v[i].s < to; i++) {
		int64_t a = v->v[i].s > from ? v->v[i].s : from,
		        b = v->v[i].e < to ? v->v[i].e : to;
		if (b > a)
			t += b - a;
	}
	return t;
}

double
steps_quantile(const int64_t *v, size_t n, double q)
{
	double h = (double)(n - 1) * q;
	size_t i = (size_t)h;
	if (i + 1 >= n)
		return (double)v[n - 1];
	return (double)v[i] + (h - (double)i) * (double)(v[i + 1] - v[i]);
}

/* A kernel running at a step's start, by its end. */
struct running {
	struct cut_heap_key key; /* ts: its end */
	size_t piece;
};

/* Per name, the time of the window its pieces covered; touched lists the names with any. */
struct tally {
	int64_t *ns;
	size_t *touched, n, cap;
};

static void
tally_add(struct tally *t, size_t name, int64_t ns)
{
	if (ns <= 0)
		return;
	if (!t->ns[name])
		t->touched[t->n++] = name;
	t->ns[name] = end_of(t->ns[name], ns); /* saturated */
}

/* The steps of one process, in start order, with their kernels (sorted by start here). */
static void
measure(struct cut_steps *s, struct pacc *a, struct cut_step *st, size_t n, struct tally *t)
{
	struct priv *p = s->priv;
	if (a->nk)
		qsort(a->k, a->nk, sizeof(*a->k), piece_by_start);
	struct cut_heap run;
	heap_init(&run, sizeof(struct running));
	size_t next = 0;
	for (size_t j = 0; j < n; j++) {
		int64_t from = st[j].ts, to = end_of(st[j].ts, st[j].dur);
		st[j].gpu_busy = covered(&a->gpu, from, to);
		st[j].calls = covered(&a->calls, from, to);
		st[j].sync = covered(&a->sync, from, to);
		for (; next < a->nk && a->k[next].s < from; next++)
			heap_push(&run, &(struct running){{a->k[next].e, next}, next});
		struct running *r;
		while ((r = heap_top(&run)) && r->key.ts <= from)
			heap_pop(&run, NULL);
		t->n = 0;
		for (size_t i = 0; i < heap_len(&run); i++) { /* started before, still running */
			const struct kpiece *k = &a->k[((struct running *)heap_at(&run, i))->piece];
			tally_add(t, k->name, (k->e < to ? k->e : to) - from);
		}
		for (size_t i = next; i < a->nk && a->k[i].s < to; i++) /* started in it */
			tally_add(t, a->k[i].name, (a->k[i].e < to ? a->k[i].e : to) - a->k[i].s);
		for (size_t i = 0; i < t->n; i++) {
			size_t nm = t->touched[i];
			const char *name = strtab_key(p->names, nm);
			if (!st[j].top || t->ns[nm] > st[j].top_ns ||
			    (t->ns[nm] == st[j].top_ns && strcmp(name, st[j].top) < 0))
				st[j].top = name, st[j].top_ns = t->ns[nm];
			t->ns[nm] = 0;
		}
	}
	heap_free(&run);
}

/* The median, p10, p90, spread and outliers of a process's n steps. */
static void
summarize(struct cut_step_proc *sp, struct cut_step *st, size_t n, int64_t *d)
{
	for (size_t j = 0; j < n; j++)
		d[j] = st[j].dur;
	qsort(d, n, sizeof(*d), cut_cmp_i64);
	sp->steps = (int64_t)n;
	sp->med = steps_quantile(d, n, 0.5);
	sp->p10 = steps_quantile(d, n, 0.1);
	sp->p90 = steps_quantile(d, n, 0.9);
	sp->spread = sp->p90 - sp->p10;
	sp->threshold = sp->p90 + sp->spread;
	for (size_t j = 0; j < n; j++)
		if ((st[j].outlier = (double)st[j].dur > sp->threshold))
			sp->outliers++;
}

void
steps_finish(struct cut_steps *s)
{
	struct priv *p = s->priv;
	size_t nproc = cut_procs_count(p->procs), total = 0, most = 1;
	for (size_t i = 0; i < nproc && i < p->cap; i++) {
		total += p->pa[i].ninst;
		if (p->pa[i].ninst > most)
			most = p->pa[i].ninst;
	}
	s->nhosts = cut_procs_hosts(p->procs);
	s->steps = cut_xcalloc(total, sizeof(*s->steps));
	s->procs = cut_xcalloc(nproc, sizeof(*s->procs));
	int64_t *d = cut_xcalloc(most, sizeof(*d));
	size_t nn = strtab_len(p->names);
	struct tally t = {cut_xcalloc(nn, sizeof(int64_t)), cut_xcalloc(nn, sizeof(size_t)), 0, nn};
	for (size_t i = 0; i < nproc && i < p->cap; i++) {
		struct pacc *a = &p->pa[i];
		if (!a->ninst)
			continue;
		qsort(a->inst, a->ninst, sizeof(*a->inst), inst_by_start);
		unite(&a->calls);
		unite(&a->sync);
		unite(&a->gpu);
		struct cut_step *st = &s->steps[s->nsteps];
		const char *host = cut_procs_host(p->procs, i);
		int64_t pid = cut_procs_pid(p->procs, i), rank = cut_procs_rank(p->procs, i);
		for (size_t j = 0; j < a->ninst; j++)
			st[j] = (struct cut_step){.proc = i,
			                          .host = host,
			                          .pid = pid,
			                          .rank = rank,
			                          .n = (int64_t)j + 1,
			                          .ts = a->inst[j].ts,
			                          .dur = a->inst[j].dur};
		measure(s, a, st, a->ninst, &t);
		struct cut_step_proc *sp = &s->procs[s->nprocs++];
		*sp = (struct cut_step_proc){.proc = i, .host = host, .pid = pid, .rank = rank};
		summarize(sp, st, a->ninst, d);
		s->nsteps += a->ninst;
	}
	free(d);
	free(t.ns);
	free(t.touched);
}

void
steps_free(struct cut_steps *s)
{
	if (!s)
		return;
	struct priv *p = s->priv;
	for (size_t i = 0; i < p->cap; i++) {
		free(p->pa[i].calls.v);
		free(p->pa[i].sync.v);
		free(p->pa[i].gpu.v);
		free(p->pa[i].k);
		free(p->pa[i].inst);
	}
	free(p->pa);
	cut_procs_free(p->procs);
	strtab_free(p->names);
	strtab_free(p->fns);
	free(p->sync_fn);
	free(p->range);
	free(p);
	free(s->steps);
	free(s->procs);
	free(s);
}
