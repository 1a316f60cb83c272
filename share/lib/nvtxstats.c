/* nvtxstats.c: time by NVTX range (see nvtxstats.h). A range is open on its thread from its
 * start to its end; each event of the thread is added to every range open at its start, and
 * the GPU work of a submitting call to the ranges that call was in, found again by args.corr. */
#include <err.h>
#include <stdlib.h>
#include <string.h>

#include "cut.h"
#include "args.h"
#include "idmap.h"
#include "nvtxstats.h"
#include "strtab.h"

struct open_range {
	size_t key;
	int64_t end;
};

struct thread {
	struct open_range *open;
	size_t n, cap;
};

/* The ranges a call with work on the GPU was in, until that work is seen. */
struct pending {
	size_t *keys;
	size_t n;
};

struct priv {
	struct cut_strtab *index; /* "domain\x1fname" to a row */
	int64_t *stamp;           /* per row: the last event added to it */
	size_t cap;
	struct cut_idmap *threads; /* (pid, tid) */
	struct thread *thr;
	size_t nthr;
	struct cut_idmap *corrs; /* (pid, corr) */
	struct pending *pend;
	size_t npend;
	int64_t seq;
};

struct cut_nvtx_stats *
nvtxstats_new(void)
{
	struct cut_nvtx_stats *s = calloc(1, sizeof(*s));
	struct priv *p = calloc(1, sizeof(*p));
	if (!s || !p)
		err(2, "out of memory");
	p->index = strtab_new();
	p->threads = idmap_new();
	p->corrs = idmap_new();
	s->priv = p;
	return s;
}

static size_t
row_of(struct cut_nvtx_stats *s, const struct cut_event *ev)
{
	struct priv *p = s->priv;
	char dom[256], key[1024];
	if (cut_args_str(ev->args, "domain", dom, sizeof(dom)) <= 0)
		dom[0] = '\0';
	snprintf(key, sizeof(key), "%s\x1f%s", dom, ev->name ? ev->name : "");
	size_t i = strtab_intern(p->index, key);
	if (i >= s->nranges) {
		size_t cap = p->cap;
		s->ranges = cut_grow(s->ranges, &cap, i + 1, sizeof(*s->ranges));
		p->stamp = cut_grow(p->stamp, &p->cap, i + 1, sizeof(*p->stamp));
		s->nranges = i + 1;
	}
	return i;
}

/* The thread of ev with the ranges that ended at or before ev->ts dropped. */
static struct thread *
thread_of(struct priv *p, const struct cut_event *ev)
{
	size_t t = idmap_put2(p->threads, ev->pid, ev->tid, NULL);
	p->thr = cut_grow(p->thr, &p->nthr, t + 1, sizeof(*p->thr));
	struct thread *th = &p->thr[t];
	size_t k = 0;
	for (size_t i = 0; i < th->n; i++)
		if (th->open[i].end > ev->ts)
			th->open[k++] = th->open[i];
	th->n = k;
	return th;
}

/* Adds b >= 0 to *a, saturating at INT64_MAX (as stats.c does). */
static void
sat_add(struct cut_nvtx_stats *s, int64_t *a, int64_t b)
{
	if (__builtin_add_overflow(*a, b, a)) {
		*a = INT64_MAX;
		s->saturated = true;
	}
}

static void
add_to(struct cut_nvtx_stats *s, struct cut_nvtx_range *r, enum cut_layer l, int64_t dur)
{
	switch (l) {
	case CUT_RUNTIME: sat_add(s, &r->runtime, dur), r->nruntime++; break;
	case CUT_API: sat_add(s, &r->api, dur), r->napi++; break;
	case CUT_IOCTL: sat_add(s, &r->ioctl, dur), r->nioctl++; break;
	case CUT_GPU: sat_add(s, &r->gpu, dur), r->ngpu++; break;
	default: break;
	}
}

static void
add_gpu(struct cut_nvtx_stats *s, const struct cut_event *ev)
{
	struct priv *p = s->priv;
	int64_t corr;
	if (!(ev->has & CUT_HAS_DUR) || cut_args_int(ev->args, "corr", &corr) != 0)
		return;
	size_t i = idmap_get2(p->corrs, ev->pid, corr);
	if (i == IDMAP_NONE)
		return;
	struct pending *pd = &p->pend[i];
	for (size_t k = 0; k < pd->n; k++)
		add_to(s, &s->ranges[pd->keys[k]], CUT_GPU, ev->dur);
}

/* Keeps the ranges a call with args.corr is in, for its GPU work. A call's work may come in
 * several pieces (a graph), so the entry stays; a later call with the same corr replaces it. */
static void
keep_corr(struct priv *p, const struct cut_event *ev, const struct thread *th)
{
	int64_t corr;
	if (cut_args_int(ev->args, "corr", &corr) != 0)
		return;
	size_t i = idmap_put2(p->corrs, ev->pid, corr, NULL);
	p->pend = cut_grow(p->pend, &p->npend, i + 1, sizeof(*p->pend));
	struct pending *pd = &p->pend[i];
	free(pd->keys);
	pd->keys = malloc((th->n ? th->n : 1) * sizeof(*pd->keys));
	if (!pd->keys)
		err(2, "out of memory");
	pd->n = 0;
	p->seq++;
	for (size_t k = 0; k < th->n; k++) {
		size_t key = th->open[k].key;
		if (p->stamp[key] != p->seq)
			pd->keys[pd->n++] = key, p->stamp[key] = p->seq;
	}
}

void
nvtxstats_add(struct cut_nvtx_stats *s, const struct cut_event *ev)
{
	struct priv *p = s->priv;
	if (ev->layer == CUT_GPU) {
		add_gpu(s, ev);
		return;
	}
	if (ev->layer == CUT_META || ev->tid == 0)
		return;
	if (ev->layer == CUT_NVTX && !(ev->has & CUT_HAS_DUR)) {
		s->marks++;
		return;
	}
	if (!(ev->has & CUT_HAS_DUR))
		return;
	struct thread *th = thread_of(p, ev);
	if (ev->layer == CUT_NVTX) {
		size_t key = row_of(s, ev);
		s->ranges[key].count++;
		sat_add(s, &s->ranges[key].total, ev->dur);
		th->open = cut_grow(th->open, &th->cap, th->n + 1, sizeof(*th->open));
		th->open[th->n++] = (struct open_range){key, ev->ts + ev->dur};
		return;
	}
	if (ev->layer != CUT_RUNTIME && ev->layer != CUT_API && ev->layer != CUT_IOCTL)
		return;
	if (th->n == 0)
		return;
	p->seq++;
	for (size_t k = 0; k < th->n; k++) {
		size_t key = th->open[k].key;
		if (p->stamp[key] != p->seq) {
			p->stamp[key] = p->seq;
			add_to(s, &s->ranges[key], ev->layer, ev->dur);
		}
	}
	if (ev->layer == CUT_API || ev->layer == CUT_RUNTIME)
		keep_corr(p, ev, th);
}

static int
by_total(const void *a, const void *b)
{
	const struct cut_nvtx_range *x = a, *y = b;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	int c = strcmp(x->domain, y->domain);
	return c ? c : strcmp(x->name, y->name);
}

void
nvtxstats_finish(struct cut_nvtx_stats *s)
{
	struct priv *p = s->priv;
	for (size_t i = 0; i < s->nranges; i++) {
		const char *k = strtab_key(p->index, i);
		const char *sep = strchr(k, '\x1f');
		s->ranges[i].name = sep + 1;
		char *d = strndup(k, (size_t)(sep - k));
		if (!d)
			err(2, "out of memory");
		s->ranges[i].domain = d;
	}
	if (s->nranges)
		qsort(s->ranges, s->nranges, sizeof(*s->ranges), by_total);
}

void
nvtxstats_free(struct cut_nvtx_stats *s)
{
	if (!s)
		return;
	struct priv *p = s->priv;
	for (size_t i = 0; i < p->nthr; i++)
		free(p->thr[i].open);
	for (size_t i = 0; i < p->npend; i++)
		free(p->pend[i].keys);
	free(p->thr);
	free(p->pend);
	free(p->stamp);
	idmap_free(p->threads);
	idmap_free(p->corrs);
	for (size_t i = 0; i < s->nranges; i++)
		free((char *)s->ranges[i].domain);
	strtab_free(p->index);
	free(p);
	free(s->ranges);
	free(s);
}
