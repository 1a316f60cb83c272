/* nvtxstats.c: time by NVTX range (see nvtxstats.h). A range name is open on a thread while
 * any range of it is: from when the first opens to when the last ends (a heap of the thread's
 * open ranges by end says when). The thread keeps running sums of its events; what a name gets
 * is the sums at its end less the sums at its start, so that an event costs the same however
 * many ranges are open around it. GPU work goes to the names open on the thread when its
 * submitting call (args.corr) was made: the thread numbers those calls, each keeps the time of
 * its work, and each open stretch of a name gets, at the end, that of the calls made in it. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cut.h"
#include "args.h"
#include "buf.h"
#include "calls.h"
#include "heap.h"
#include "idmap.h"
#include "nvtxstats.h"
#include "procs.h"
#include "strtab.h"

/* Calls numbered for their GPU work: the latest are kept, so that memory stays bounded in
 * traces without the gpu layer (as a timeline's flows). */
#define MAX_SUBMITS (1 << 18)

/* The layers whose events a range holds, as indices of the sums. */
enum { S_RUNTIME, S_API, S_IOCTL, NSUMS };

/* A range open on a thread, in its heap by end. */
struct open_range {
	struct cut_heap_key key; /* ts: its end */
	size_t name;             /* its (thread, name) entry */
};

/* A range name on a thread. */
struct open_name {
	size_t row;
	size_t thread;
	int64_t open;          /* its ranges open now */
	int64_t since[NSUMS];  /* the thread's sums when it opened */
	int64_t nsince[NSUMS]; /* and counts */
	size_t call;           /* the thread's numbered calls when it opened */
};

/* The calls numbered from..to of a thread, whose GPU work goes to row. */
struct stretch {
	size_t row, thread, from, to;
};

struct thread {
	struct cut_heap open;
	int64_t sum[NSUMS], n[NSUMS];
	int64_t *gpu, *ngpu; /* per numbered call: its GPU work's time and pieces */
	size_t ncalls, capgpu, capngpu;
};

/* A call numbered: its thread, its number there. */
struct numbered {
	struct cut_submit k;
	size_t thread, call;
};

struct priv {
	bool fold;
	struct cut_buf op; /* a folded name */
	struct cut_strtab *domains, *names;
	struct cut_idmap *rows; /* (domain, name) to a row */
	size_t caprows;
	struct cut_procs *procs;   /* a pid on a host (procs.h) */
	struct cut_idmap *threads; /* (process, tid) */
	struct thread *thr;
	size_t capthr;
	struct cut_idmap *onames; /* (thread, row) to an open_name */
	struct open_name *on;
	size_t capon;
	struct cut_submits *corrs; /* (process, corr) to a call numbered */
	struct stretch *st;
	size_t nst, capst;
	int64_t seq;
};

struct cut_nvtx_stats *
nvtxstats_new(bool fold)
{
	struct cut_nvtx_stats *s = cut_xcalloc(1, sizeof(*s));
	struct priv *p = cut_xcalloc(1, sizeof(*p));
	p->fold = s->fold = fold;
	p->domains = strtab_new();
	p->names = strtab_new();
	p->rows = idmap_new();
	p->threads = idmap_new();
	p->procs = cut_procs_new();
	p->onames = idmap_new();
	p->corrs = cut_submits_new(sizeof(struct numbered), MAX_SUBMITS);
	s->priv = p;
	return s;
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

/* The row of a range's (domain, name): names of any length, a domain and a name kept apart. */
static size_t
row_of(struct cut_nvtx_stats *s, const struct cut_event *ev)
{
	struct priv *p = s->priv;
	char small[64], *dom = small;
	int n = cut_args_str(ev->args, "domain", small, sizeof(small));
	if (n >= (int)sizeof(small)) {
		dom = cut_xmalloc((size_t)n + 1);
		cut_args_str(ev->args, "domain", dom, (size_t)n + 1);
	} else if (n < 0)
		small[0] = '\0';
	const char *name = ev->name;
	size_t len = p->fold ? cut_nvtx_op_len(name) : 0;
	if (p->fold && name[len]) {
		buf_reset(&p->op);
		buf_add(&p->op, name, len);
		name = p->op.s;
	}
	size_t d = strtab_intern(p->domains, dom), nm = strtab_intern(p->names, name);
	if (dom != small)
		free(dom);
	bool isnew;
	size_t i = idmap_put2(p->rows, (int64_t)d, (int64_t)nm, &isnew);
	if (isnew) {
		CUT_GROW(s->ranges, i + 1, p->caprows);
		s->ranges[i].domain = strtab_key(p->domains, d);
		s->ranges[i].name = strtab_key(p->names, nm);
		if (i + 1 > s->nranges)
			s->nranges = i + 1;
	}
	return i;
}

static size_t
thread_of(struct priv *p, int64_t proc, const struct cut_event *ev)
{
	bool isnew;
	size_t t = idmap_put2(p->threads, proc, ev->tid, &isnew);
	CUT_GROW(p->thr, t + 1, p->capthr);
	if (isnew)
		heap_init(&p->thr[t].open, sizeof(struct open_range));
	return t;
}

/* A name's stretch on a thread is over: it gets what the thread did in it. */
static void
close_name(struct cut_nvtx_stats *s, struct open_name *o)
{
	struct priv *p = s->priv;
	struct thread *th = &p->thr[o->thread];
	struct cut_nvtx_range *r = &s->ranges[o->row];
	int64_t *dst[NSUMS] = {&r->runtime, &r->api, &r->ioctl};
	int64_t *ndst[NSUMS] = {&r->nruntime, &r->napi, &r->nioctl};
	for (int k = 0; k < NSUMS; k++) {
		sat_add(s, dst[k], th->sum[k] - o->since[k]);
		*ndst[k] += th->n[k] - o->nsince[k];
	}
	if (th->ncalls > o->call) {
		CUT_GROW(p->st, p->nst + 1, p->capst);
		p->st[p->nst++] = (struct stretch){o->row, o->thread, o->call, th->ncalls};
	}
}

/* Ends the ranges of thread t that ended at or before now. */
static void
end_until(struct cut_nvtx_stats *s, size_t t, int64_t now)
{
	struct priv *p = s->priv;
	struct thread *th = &p->thr[t];
	struct open_range *top, r;
	while ((top = heap_top(&th->open)) && top->key.ts <= now) {
		heap_pop(&th->open, &r);
		struct open_name *o = &p->on[r.name];
		if (--o->open == 0)
			close_name(s, o);
	}
}

static void
open_range(struct cut_nvtx_stats *s, size_t t, const struct cut_event *ev)
{
	struct priv *p = s->priv;
	struct thread *th = &p->thr[t];
	size_t row = row_of(s, ev);
	struct cut_nvtx_range *r = &s->ranges[row];
	if (!r->count++ || ev->dur < r->min)
		r->min = ev->dur;
	if (ev->dur > r->max)
		r->max = ev->dur;
	cut_hist_add(&r->hist, ev->dur);
	sat_add(s, &r->total, ev->dur);
	bool isnew;
	size_t i = idmap_put2(p->onames, (int64_t)t, (int64_t)row, &isnew);
	CUT_GROW(p->on, i + 1, p->capon);
	struct open_name *o = &p->on[i];
	if (isnew || o->open == 0) {
		*o = (struct open_name){row, t, 0, {0}, {0}, th->ncalls};
		memcpy(o->since, th->sum, sizeof(th->sum));
		memcpy(o->nsince, th->n, sizeof(th->n));
	}
	o->open++;
	heap_push(&th->open, &(struct open_range){{cut_event_end(ev), (uint64_t)p->seq++}, i});
}

/* Numbers a call with args.corr made while a range is open on its thread, for its GPU work. A
 * call's work may come in several pieces (a graph), so the number stays; a later call with
 * the same corr comes first. */
static void
number_call(struct priv *p, size_t t, int64_t proc, const struct cut_event *ev)
{
	struct thread *th = &p->thr[t];
	struct numbered *n = cut_calls_submit(p->corrs, proc, ev);
	if (!n)
		return;
	n->thread = t;
	n->call = th->ncalls;
	CUT_GROW(th->gpu, th->ncalls + 1, th->capgpu);
	CUT_GROW(th->ngpu, th->ncalls + 1, th->capngpu);
	th->ncalls++;
}

static void
add_gpu(struct cut_nvtx_stats *s, int64_t proc, const struct cut_event *ev)
{
	struct priv *p = s->priv;
	struct numbered *n;
	if (!(ev->has & CUT_HAS_DUR) || !(n = cut_calls_submitter(p->corrs, proc, ev)))
		return;
	struct thread *th = &p->thr[n->thread];
	sat_add(s, &th->gpu[n->call], ev->dur);
	th->ngpu[n->call]++;
}

void
nvtxstats_add(struct cut_nvtx_stats *s, const struct cut_event *ev)
{
	struct priv *p = s->priv;
	int64_t proc = (int64_t)cut_procs_of(p->procs, ev);
	if (ev->layer == CUT_GPU) {
		add_gpu(s, proc, ev);
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
	size_t t = thread_of(p, proc, ev);
	end_until(s, t, ev->ts);
	if (ev->layer == CUT_NVTX) {
		open_range(s, t, ev);
		return;
	}
	int k = ev->layer == CUT_RUNTIME ? S_RUNTIME
	        : ev->layer == CUT_API   ? S_API
	        : ev->layer == CUT_IOCTL ? S_IOCTL
	                                 : -1;
	struct thread *th = &p->thr[t];
	if (k < 0 || heap_len(&th->open) == 0)
		return;
	/* the sums only ever differ while a range is open: a saturated one stays there */
	if (__builtin_add_overflow(th->sum[k], ev->dur, &th->sum[k])) {
		th->sum[k] = INT64_MAX;
		s->saturated = true;
	}
	th->n[k]++;
	if (ev->layer == CUT_API || ev->layer == CUT_RUNTIME)
		number_call(p, t, proc, ev);
}

/* Whether the n bytes before end are ", KEY = " of a key of emit_nvtx's that takes a list
 * (list) or an integer; *start gets where the field starts. */
static bool
field_key(const char *name, const char *end, bool list, const char **start)
{
	static const char *const lists[] = {", sizes = ", ", input_op_ids = "}, *const ints[] = {
	                                                                            ", seq = ",
	                                                                            ", op_id = "};
	const char *const *keys = list ? lists : ints;
	for (int i = 0; i < 2; i++) {
		size_t n = strlen(keys[i]);
		if ((size_t)(end - name) >= n && memcmp(end - n, keys[i], n) == 0) {
			*start = end - n;
			return true;
		}
	}
	return false;
}

size_t
cut_nvtx_op_len(const char *name)
{
	const char *end = name + strlen(name), *cut = end, *p;
	for (;;) { /* one field from the end at a time */
		p = cut;
		if (p > name && p[-1] == ']') { /* a list: back to its opening bracket */
			int depth = 0;
			do {
				p--;
				depth += *p == ']' ? 1 : *p == '[' ? -1 : 0;
			} while (p > name && depth > 0);
			if (depth != 0 || !field_key(name, p, true, &p))
				break;
		} else {
			while (p > name && p[-1] >= '0' && p[-1] <= '9')
				p--;
			if (p == cut)
				break;
			if (p > name && p[-1] == '-')
				p--;
			if (!field_key(name, p, false, &p))
				break;
		}
		cut = p;
	}
	return cut > name ? (size_t)(cut - name) : (size_t)(end - name);
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
	size_t nthr = idmap_span(p->threads);
	for (size_t t = 0; t < nthr; t++)
		end_until(s, t, INT64_MAX);
	/* each thread's numbered calls' GPU time as running sums, then each stretch's share */
	for (size_t t = 0; t < nthr; t++) {
		struct thread *th = &p->thr[t];
		for (size_t c = 1; c < th->ncalls; c++) {
			if (__builtin_add_overflow(th->gpu[c], th->gpu[c - 1], &th->gpu[c])) {
				th->gpu[c] = INT64_MAX;
				s->saturated = true;
			}
			th->ngpu[c] += th->ngpu[c - 1];
		}
	}
	for (size_t i = 0; i < p->nst; i++) {
		const struct stretch *x = &p->st[i];
		const struct thread *th = &p->thr[x->thread];
		struct cut_nvtx_range *r = &s->ranges[x->row];
		int64_t before = x->from ? th->gpu[x->from - 1] : 0;
		int64_t nbefore = x->from ? th->ngpu[x->from - 1] : 0;
		/* a running sum that saturated leaves its stretches at the top */
		int64_t gpu =
		    th->gpu[x->to - 1] == INT64_MAX ? INT64_MAX : th->gpu[x->to - 1] - before;
		sat_add(s, &r->gpu, gpu);
		r->ngpu += th->ngpu[x->to - 1] - nbefore;
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
	for (size_t t = 0; t < idmap_span(p->threads); t++) {
		heap_free(&p->thr[t].open);
		free(p->thr[t].gpu);
		free(p->thr[t].ngpu);
	}
	free(p->thr);
	free(p->on);
	free(p->st);
	idmap_free(p->threads);
	cut_procs_free(p->procs);
	idmap_free(p->onames);
	cut_submits_free(p->corrs);
	idmap_free(p->rows);
	strtab_free(p->domains);
	strtab_free(p->names);
	buf_free(&p->op);
	free(p);
	for (size_t i = 0; i < s->nranges; i++)
		cut_hist_free(&s->ranges[i].hist);
	free(s->ranges);
	free(s);
}
