/* collwait.c: NCCL collectives matched across ranks, and the time waiting in them (see
 * collwait.h). Kernels are kept to the end (the participants are known only then), then sorted
 * by name, rank and start so each rank's sequence of a name is one run of the array. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cut.h"
#include "args.h"
#include "classify.h"
#include "collwait.h"
#include "idmap.h"
#include "procs.h"
#include "strtab.h"

struct kernel {
	int64_t ts, dur;
	uint64_t stream;
	uint32_t name, owner;
};

/* The owner of kernels: a process (procs.h) and the rank its kernels carry (-1: none). */
struct owner {
	size_t proc;
	int64_t rank;
};

struct priv {
	struct cut_strtab *names;
	struct cut_procs *procs;
	struct cut_idmap *owners; /* (process, rank) to owner */
	struct owner *own;
	size_t nown, capown;
	struct kernel *k;
	size_t nk, capk;
};

/* Adds b >= 0 to *a, saturating at INT64_MAX (as cutstat's sums do). */
static void
sat_add(struct cut_collwait *w, int64_t *a, int64_t b)
{
	if (__builtin_add_overflow(*a, b, a)) {
		*a = INT64_MAX;
		w->saturated = true;
	}
}

void
collwait_pick(const struct cut_coll_total *v, size_t n, size_t *most, size_t *least)
{
	size_t hi = 0, lo = 0;
	for (size_t i = 1; i < n; i++) {
		if (v[i].total > v[hi].total ||
		    (v[i].total == v[hi].total && v[i].rank < v[hi].rank))
			hi = i;
		if (v[i].total < v[lo].total ||
		    (v[i].total == v[lo].total && v[i].rank < v[lo].rank))
			lo = i;
	}
	*most = hi;
	*least = lo;
}

struct cut_collwait *
collwait_new(void)
{
	struct cut_collwait *w = cut_xcalloc(1, sizeof(*w));
	struct priv *p = cut_xcalloc(1, sizeof(*p));
	p->names = strtab_new();
	p->procs = cut_procs_new();
	p->owners = idmap_new();
	w->priv = p;
	return w;
}

void
collwait_add(struct cut_collwait *w, const struct cut_event *ev)
{
	struct priv *p = w->priv;
	size_t proc = cut_procs_of(p->procs, ev);
	if (ev->layer != CUT_GPU || !(ev->has & CUT_HAS_DUR) || !ev->cat ||
	    strcmp(ev->cat, "kernel") != 0 || !cut_is_collective(ev->name))
		return;
	int64_t rank = (ev->has & CUT_HAS_RANK) && ev->rank >= 0 ? ev->rank : -1;
	bool isnew;
	size_t o = idmap_put2(p->owners, (int64_t)proc, rank, &isnew);
	if (isnew) {
		CUT_GROW(p->own, o + 1, p->capown);
		p->own[o] = (struct owner){proc, rank};
		p->nown = o + 1;
	}
	int64_t stream = 0;
	if (ev->args)
		cut_args_int(ev->args, "stream", &stream);
	CUT_GROW(p->k, p->nk + 1, p->capk);
	p->k[p->nk++] = (struct kernel){ev->ts, ev->dur, (uint64_t)stream,
	                                (uint32_t)strtab_intern(p->names, ev->name), (uint32_t)o};
}

/* Kernels, their rank resolved into owner (as a dense rank index), sorted for matching. */
static int
by_name_rank_start(const void *a, const void *b)
{
	const struct kernel *x = a, *y = b;
	if (x->name != y->name)
		return x->name < y->name ? -1 : 1;
	if (x->owner != y->owner)
		return x->owner < y->owner ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->dur < y->dur ? -1 : x->dur > y->dur;
}

static int
by_pair(const void *a, const void *b)
{
	const struct cut_collwait_pair *x = a, *y = b;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->waited_for < y->waited_for ? -1 : x->waited_for > y->waited_for;
}

void
collwait_finish(struct cut_collwait *w)
{
	struct priv *p = w->priv;
	/* the participants, in rank order, and each kernel's rank index in place of its owner */
	int64_t *orank = cut_xcalloc(p->nown + 1, sizeof(*orank));
	int64_t *ranks = cut_xcalloc(p->nown + 1, sizeof(*ranks));
	size_t nr = 0, nk = 0;
	for (size_t i = 0; i < p->nown; i++) /* the kernels' own rank, else their process's */
		orank[i] =
		    p->own[i].rank >= 0 ? p->own[i].rank : cut_procs_rank(p->procs, p->own[i].proc);
	struct cut_idmap *rk = idmap_new(), *streams = idmap_new();
	for (size_t i = 0; i < p->nk; i++) {
		int64_t r = orank[p->k[i].owner];
		if (r < 0) {
			w->unranked++;
			continue;
		}
		bool isnew;
		idmap_put(rk, r, &isnew);
		if (isnew)
			ranks[nr++] = r;
		p->k[nk++] = p->k[i];
	}
	p->nk = nk;
	if (nr)
		qsort(ranks, nr, sizeof(*ranks), cut_cmp_i64);
	idmap_free(rk);
	rk = idmap_new();
	for (size_t i = 0; i < nr; i++)
		idmap_put(rk, ranks[i], NULL); /* index i */
	w->ranks = cut_xcalloc(nr + 1, sizeof(*w->ranks));
	w->nranks = nr;
	for (size_t i = 0; i < nr; i++)
		w->ranks[i] = (struct cut_collwait_rank){.rank = ranks[i], .most = -1};
	for (size_t i = 0; i < p->nk; i++) {
		struct kernel *k = &p->k[i];
		k->owner = (uint32_t)idmap_get(rk, orank[k->owner]);
		bool isnew;
		idmap_put2(streams, k->owner, (int64_t)k->stream, &isnew);
		if (isnew)
			w->ranks[k->owner].streams++;
	}
	idmap_free(streams);
	if (p->nk)
		qsort(p->k, p->nk, sizeof(*p->k), by_name_rank_start);

	/* per name: each rank's run [first[r], first[r] + count[r]); instances up to the least */
	size_t *first = cut_xcalloc(nr + 1, sizeof(*first));
	size_t *count = cut_xcalloc(nr + 1, sizeof(*count));
	struct cut_idmap *pidx = idmap_new(); /* (rank index, waited-for index) to pair */
	size_t cappairs = 0;
	for (size_t i = 0; i < p->nk;) {
		size_t j = i, present = 0;
		for (; j < p->nk && p->k[j].name == p->k[i].name; j++)
			present += j == i || p->k[j].owner != p->k[j - 1].owner;
		if (present < nr) { /* a rank never ran it: no instance (work within the run) */
			for (size_t x = i; x < j; x++)
				w->ranks[p->k[x].owner].unmatched++;
			w->unmatched += (int64_t)(j - i);
			i = j;
			continue;
		}
		/* every rank ran it: nr <= j - i, so going over the ranks costs no more */
		memset(count, 0, nr * sizeof(*count));
		for (size_t x = i; x < j; x++)
			if (count[p->k[x].owner]++ == 0)
				first[p->k[x].owner] = x;
		size_t n = SIZE_MAX;
		for (size_t r = 0; r < nr; r++)
			if (count[r] < n)
				n = count[r];
		for (size_t r = 0; r < nr; r++) {
			w->ranks[r].unmatched += (int64_t)(count[r] - n);
			w->unmatched += (int64_t)(count[r] - n);
		}
		for (size_t q = 0; q < n; q++) {
			size_t last = 0;
			for (size_t r = 1; r < nr; r++)
				if (p->k[first[r] + q].ts > p->k[first[last] + q].ts)
					last = r;
			int64_t at = p->k[first[last] + q].ts;
			w->instances++;
			w->ranks[last].last++;
			for (size_t r = 0; r < nr; r++) {
				const struct kernel *k = &p->k[first[r] + q];
				w->ranks[r].collectives++;
				sat_add(w, &w->ranks[r].in_ns, k->dur);
				if (r == last)
					continue;
				if (k->ts + k->dur <= at) {
					w->ranks[r].early++;
					continue;
				}
				int64_t wait = at - k->ts;
				if (wait == 0)
					continue;
				sat_add(w, &w->ranks[r].wait_ns, wait);
				bool isnew;
				size_t pi = idmap_put2(pidx, (int64_t)r, (int64_t)last, &isnew);
				if (isnew) {
					CUT_GROW(w->pairs, pi + 1, cappairs);
					w->pairs[pi] =
					    (struct cut_collwait_pair){ranks[r], ranks[last], 0, 0};
					w->npairs = pi + 1;
				}
				w->pairs[pi].count++;
				sat_add(w, &w->pairs[pi].wait_ns, wait);
			}
		}
		i = j;
	}
	idmap_free(pidx);
	free(first);
	free(count);
	if (w->npairs)
		qsort(w->pairs, w->npairs, sizeof(*w->pairs), by_pair);
	/* the rank each waited for longest: pairs are in rank order, so the first of equals */
	int64_t *best = cut_xcalloc(nr + 1, sizeof(*best));
	for (size_t i = 0; i < w->npairs; i++) {
		const struct cut_collwait_pair *pr = &w->pairs[i];
		size_t r = idmap_get(rk, pr->rank);
		if (w->ranks[r].most < 0 || pr->wait_ns > best[r])
			w->ranks[r].most = pr->waited_for, best[r] = pr->wait_ns;
	}
	free(best);
	/* the rank that waited most and the straggler, by the rule cutstat's views follow */
	w->most = w->straggler = -1;
	if (nr >= 2) {
		struct cut_coll_total *v = cut_xcalloc(nr, sizeof(*v));
		for (size_t r = 0; r < nr; r++)
			v[r] = (struct cut_coll_total){w->ranks[r].rank, w->ranks[r].in_ns};
		size_t most, least;
		collwait_pick(v, nr, &most, &least);
		w->most = v[most].rank;
		w->straggler = v[least].rank;
		free(v);
	}
	idmap_free(rk);
	free(orank);
	free(ranks);
}

void
collwait_free(struct cut_collwait *w)
{
	if (!w)
		return;
	struct priv *p = w->priv;
	strtab_free(p->names);
	cut_procs_free(p->procs);
	idmap_free(p->owners);
	free(p->own);
	free(p->k);
	free(p);
	free(w->ranks);
	free(w->pairs);
	free(w);
}
