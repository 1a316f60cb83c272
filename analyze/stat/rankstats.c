/* rankstats.c: the per-rank view (see rankstats.h). Numbers are kept per process until the
 * end, when every process's rank is known (a record may lack it, procs.h): GPU work's
 * intervals, 16 bytes each, for the union, and kernel totals per (process, name) in a table;
 * then per rank. */
#include <stdlib.h>
#include <string.h>

#include "classify.h"
#include "collwait.h"
#include "cut.h"
#include "idmap.h"
#include "procs.h"
#include "rankstats.h"
#include "strtab.h"

struct span {
	int64_t ts, end;
};

/* What a process did, kept by process (procs.h) and the records' own rank (-1: none) until the
 * end, when the rank of each process is known. */
struct proc_acc {
	size_t proc;
	int64_t rank;
	int64_t events, api_calls, api, runtime_calls, runtime, work;
	struct span *work_v;
	size_t n, cap;
};

/* Total of one kernel name in one process, then on one rank. */
struct kern {
	size_t name;
	size_t row; /* the process's pa, then (rankstats_finish) the row */
	int64_t total;
};

/* The GPU work of a rank, for the union. */
struct rank_priv {
	struct span *work;
	size_t n, cap;
};

struct priv {
	struct cut_procs *procs;
	struct cut_idmap *accs; /* (process, rank) to pa */
	struct proc_acc *pa;
	size_t npa, pcap;
	struct cut_idmap *ranks; /* rank to row */
	struct rank_priv *rp;
	size_t rcap;
	struct cut_strtab *names; /* kernel names */
	struct cut_idmap *kidx;   /* (process, name), then (row, name), to kern */
	struct kern *kerns;
	size_t nkerns, kcap;
};

/* Adds b >= 0 to *a, saturating at INT64_MAX (as stats.c does). */
static void
sat_add(struct cut_rank_stats *s, int64_t *a, int64_t b)
{
	if (__builtin_add_overflow(*a, b, a)) {
		*a = INT64_MAX;
		s->saturated = true;
	}
}

struct cut_rank_stats *
rankstats_new(void)
{
	struct cut_rank_stats *s = cut_xcalloc(1, sizeof(*s));
	struct priv *p = cut_xcalloc(1, sizeof(*p));
	p->procs = cut_procs_new();
	p->accs = idmap_new();
	p->ranks = idmap_new();
	p->names = strtab_new();
	p->kidx = idmap_new();
	s->priv = p;
	return s;
}

/* Adds total to kernel name of key (a process, or a row), making it. */
static void
kern_add(struct cut_rank_stats *s, size_t key, size_t name, int64_t total)
{
	struct priv *p = s->priv;
	bool isnew;
	size_t k = idmap_put2(p->kidx, (int64_t)key, (int64_t)name, &isnew);
	if (isnew) {
		CUT_GROW(p->kerns, k + 1, p->kcap);
		p->kerns[k] = (struct kern){name, key, 0};
		if (k + 1 > p->nkerns)
			p->nkerns = k + 1;
	}
	sat_add(s, &p->kerns[k].total, total);
}

static void
add_span(struct span **v, size_t *n, size_t *cap, struct span sp)
{
	CUT_GROW(*v, *n + 1, *cap);
	(*v)[(*n)++] = sp;
}

void
rankstats_add(struct cut_rank_stats *s, const struct cut_event *ev)
{
	struct priv *p = s->priv;
	size_t proc = cut_procs_of(p->procs, ev);
	if (ev->layer == CUT_META)
		return;
	int64_t rank = (ev->has & CUT_HAS_RANK) && ev->rank >= 0 ? ev->rank : -1;
	bool isnew;
	size_t i = idmap_put2(p->accs, (int64_t)proc, rank, &isnew);
	if (isnew) {
		CUT_GROW(p->pa, i + 1, p->pcap);
		p->pa[i].proc = proc;
		p->pa[i].rank = rank;
		p->npa = i + 1;
	}
	struct proc_acc *a = &p->pa[i];
	a->events++;
	if (!(ev->has & CUT_HAS_DUR))
		return;
	if (ev->layer == CUT_API) {
		a->api_calls++;
		sat_add(s, &a->api, ev->dur);
	} else if (ev->layer == CUT_RUNTIME) {
		a->runtime_calls++;
		sat_add(s, &a->runtime, ev->dur);
	} else if (ev->layer == CUT_GPU) {
		add_span(&a->work_v, &a->n, &a->cap, (struct span){ev->ts, ev->ts + ev->dur});
		a->work++;
		if (ev->cat && strcmp(ev->cat, "kernel") == 0 && ev->name)
			kern_add(s, i, strtab_intern(p->names, ev->name), ev->dur);
	}
}

/* The row of a rank, made when new. */
static size_t
row_of(struct cut_rank_stats *s, int64_t rank)
{
	struct priv *p = s->priv;
	bool isnew;
	size_t r = idmap_put(p->ranks, rank, &isnew);
	if (isnew) {
		size_t cap = p->rcap;
		CUT_GROW(s->rows, r + 1, cap);
		CUT_GROW(p->rp, r + 1, p->rcap);
		if (r + 1 > s->nrows)
			s->nrows = r + 1;
		s->rows[r].rank = rank;
	}
	return r;
}

/* Each process's numbers into the row of their rank (the records' own, else their process's:
 * procs.h), or into unranked; its kernels' totals into the row's. */
static void
to_rows(struct cut_rank_stats *s)
{
	struct priv *p = s->priv;
	size_t *row = cut_xcalloc(p->npa, sizeof(*row));
	for (size_t i = 0; i < p->npa; i++) {
		struct proc_acc *a = &p->pa[i];
		int64_t rank = a->rank >= 0 ? a->rank : cut_procs_rank(p->procs, a->proc);
		row[i] = SIZE_MAX;
		if (rank < 0) {
			s->unranked += a->events;
			continue;
		}
		size_t r = row[i] = row_of(s, rank);
		struct cut_rank_row *w = &s->rows[r];
		struct rank_priv *rp = &p->rp[r];
		w->events += a->events;
		w->api_calls += a->api_calls;
		sat_add(s, &w->api, a->api);
		w->runtime_calls += a->runtime_calls;
		sat_add(s, &w->runtime, a->runtime);
		w->work += a->work;
		for (size_t k = 0; k < a->n; k++)
			add_span(&rp->work, &rp->n, &rp->cap, a->work_v[k]);
	}
	/* the kernels by process become kernels by row */
	struct kern *by_proc = p->kerns;
	size_t n = p->nkerns;
	p->kerns = NULL;
	p->nkerns = p->kcap = 0;
	idmap_free(p->kidx);
	p->kidx = idmap_new();
	for (size_t k = 0; k < n; k++)
		if (row[by_proc[k].row] != SIZE_MAX)
			kern_add(s, row[by_proc[k].row], by_proc[k].name, by_proc[k].total);
	free(by_proc);
	free(row);
}

/* A rank's total in an NCCL kernel of one name. */
struct nccl_total {
	size_t name;
	struct cut_coll_total t;
};

static int
by_name_rank(const void *a, const void *b)
{
	const struct nccl_total *x = a, *y = b;
	if (x->name != y->name)
		return x->name < y->name ? -1 : 1;
	return x->t.rank < y->t.rank ? -1 : x->t.rank > y->t.rank;
}

static int
by_start(const void *a, const void *b)
{
	const struct span *x = a, *y = b;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

static int
by_rank(const void *a, const void *b)
{
	const struct cut_rank_row *x = a, *y = b;
	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

static int
by_max(const void *a, const void *b)
{
	const struct cut_rank_straggler *x = a, *y = b;
	if (x->max != y->max)
		return x->max < y->max ? 1 : -1;
	return strcmp(x->name, y->name);
}

void
rankstats_finish(struct cut_rank_stats *s)
{
	struct priv *p = s->priv;
	to_rows(s);
	for (size_t r = 0; r < s->nrows; r++) {
		struct rank_priv *rp = &p->rp[r];
		if (rp->n)
			qsort(rp->work, rp->n, sizeof(*rp->work), by_start);
		int64_t busy = 0, end = INT64_MIN;
		for (size_t i = 0; i < rp->n; i++) {
			int64_t from = rp->work[i].ts > end ? rp->work[i].ts : end;
			if (rp->work[i].end > from)
				busy += rp->work[i].end - from;
			if (rp->work[i].end > end)
				end = rp->work[i].end;
		}
		s->rows[r].gpu_busy = busy;
	}
	/* Top kernel per rank; the NCCL kernels' totals, grouped by name, for the rule. */
	size_t nn = strtab_len(p->names), nk = 0;
	struct nccl_total *nt = cut_xcalloc(p->nkerns, sizeof(*nt));
	s->nccl = cut_xcalloc(nn, sizeof(*s->nccl));
	for (size_t k = 0; k < p->nkerns; k++) {
		const struct kern *kn = &p->kerns[k];
		const char *name = strtab_key(p->names, kn->name);
		struct cut_rank_row *row = &s->rows[kn->row];
		if (!row->top_kernel || kn->total > row->top_total ||
		    (kn->total == row->top_total && strcmp(name, row->top_kernel) < 0))
			row->top_kernel = name, row->top_total = kn->total;
		if (cut_is_collective(name))
			nt[nk++] = (struct nccl_total){kn->name, {row->rank, kn->total}};
	}
	if (nk)
		qsort(nt, nk, sizeof(*nt), by_name_rank);
	struct cut_coll_total *v = cut_xcalloc(nk, sizeof(*v));
	for (size_t i = 0, j; i < nk; i = j) {
		size_t n = 0, most, least;
		for (j = i; j < nk && nt[j].name == nt[i].name; j++)
			v[n++] = nt[j].t;
		collwait_pick(v, n, &most, &least);
		s->nccl[s->nnccl++] = (struct cut_rank_straggler){strtab_key(p->names, nt[i].name),
		                                                  (int64_t)n,
		                                                  v[most].rank,
		                                                  v[most].total,
		                                                  v[least].total,
		                                                  v[least].rank};
	}
	free(v);
	free(nt);
	if (s->nrows) /* qsort of no elements may still not be given NULL */
		qsort(s->rows, s->nrows, sizeof(*s->rows), by_rank);
	if (s->nnccl)
		qsort(s->nccl, s->nnccl, sizeof(*s->nccl), by_max);
}

void
rankstats_free(struct cut_rank_stats *s)
{
	if (!s)
		return;
	struct priv *p = s->priv;
	for (size_t r = 0; r < p->rcap; r++)
		free(p->rp[r].work);
	free(p->rp);
	for (size_t i = 0; i < p->pcap; i++)
		free(p->pa[i].work_v);
	free(p->pa);
	idmap_free(p->accs);
	cut_procs_free(p->procs);
	free(p->kerns);
	idmap_free(p->ranks);
	idmap_free(p->kidx);
	strtab_free(p->names);
	free(p);
	free(s->rows);
	free(s->nccl);
	free(s);
}
