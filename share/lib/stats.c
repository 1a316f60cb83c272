/* stats.c: one-pass accumulation of cutstat's numbers. Exact medians keep every API
 * duration (8 bytes a call); everything else is constant per function. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "calls.h"
#include "cut.h"
#include "idmap.h"
#include "meta.h"
#include "procs.h"
#include "stats.h"
#include "strtab.h"
#include "summary.h"

/* Adds b to *a, saturating at INT64_MAX (and INT64_MIN): four calls of 2^62 ns must not
 * total 0. A sum that saturated is at least that: 292 years of nanoseconds; st says so. */
static inline void
sat_add(struct cut_stats *st, int64_t *a, int64_t b)
{
	if (__builtin_add_overflow(*a, b, a)) {
		*a = b > 0 ? INT64_MAX : INT64_MIN;
		st->saturated = true;
	}
}

const char *const cut_xfer_names[CUT_X_NDIRS] = {"HtoD", "DtoH", "DtoD", "HtoH", "any", "memset"};

/* A call in the heap of the slowest. */
struct slow {
	struct cut_heap_key k; /* ts: its duration; seq: 0 */
	struct cut_slow_call c;
};

struct cut_stats *
stats_new_layer(size_t ntop, enum cut_layer layer)
{
	struct cut_stats *st = cut_xcalloc(1, sizeof(*st));
	heap_init(&st->slowest, sizeof(struct slow));
	st->first = -1;
	st->ntop = ntop;
	st->layer = layer;
	st->index = strtab_new();
	st->procs = cut_procs_new();
	st->open = cut_calls_new(1u << layer);
	st->last_ts = INT64_MIN;
	return st;
}

struct cut_stats *
stats_new(size_t ntop)
{
	return stats_new_layer(ntop, CUT_API);
}

static struct cut_fn_stat *
fn_of(struct cut_stats *st, const char *name)
{
	size_t i = strtab_intern(st->index, name);
	CUT_GROW(st->fns, i + 1, st->fncap);
	if (i >= st->nfns)
		st->nfns = i + 1;
	struct cut_fn_stat *f = &st->fns[i];
	if (!f->name) {
		f->name = (char *)strtab_key(st->index, i);
		f->cat = cut_api_category_id(name);
	}
	return f;
}

static void
fn_add(struct cut_stats *st, struct cut_fn_stat *f, int64_t dur)
{
	CUT_GROW(f->durs, (size_t)f->calls + 1, f->cap);
	f->durs[f->calls++] = dur;
	sat_add(st, &f->total, dur);
	f->sum += dur;
	if (f->calls == 1 || dur < f->min)
		f->min = dur;
	if (dur > f->max)
		f->max = dur;
	double d = (double)dur - f->mean; /* Welford: stable running variance */
	f->mean += d / (double)f->calls;
	f->m2 += d * ((double)dur - f->mean);
}

/* Keeps the ntop longest calls in a heap whose top is the shortest kept; a call no longer than
 * that is not taken. */
static void
note_slow(struct cut_stats *st, const struct cut_event *ev)
{
	if (st->ntop == 0)
		return;
	struct slow *top = heap_top(&st->slowest), s = {{ev->dur, 0}, {0}};
	bool full = heap_len(&st->slowest) == st->ntop;
	if (full && ev->dur <= top->k.ts)
		return;
	s.c = (struct cut_slow_call){ev->ts, ev->dur, ev->pid, ev->tid, cut_xstrdup(ev->name)};
	if (full) {
		free(top->c.name);
		*top = s;
		heap_fix_top(&st->slowest);
	} else
		heap_push(&st->slowest, &s);
}

enum cut_xfer_dir
stats_xfer_dir(const struct cut_event *ev)
{
	char dir[16];
	if (cut_args_str(ev->args, "dir", dir, sizeof(dir)) > 0)
		for (int d = 0; d < CUT_X_NDIRS; d++)
			if (strcmp(dir, cut_xfer_names[d]) == 0)
				return (enum cut_xfer_dir)d;
	unsigned f = cut_api_flags(ev->name);
	return f & CUT_API_MEMSET ? CUT_X_MEMSET
	       : f & CUT_API_HTOD ? CUT_X_HTOD
	       : f & CUT_API_DTOH ? CUT_X_DTOH
	       : f & CUT_API_DTOD ? CUT_X_DTOD
	                          : CUT_X_ANY;
}

/* Whether the input is still in order at ev (a call of st's layer or an ioctl): what counting
 * ioctls in their calls needs. */
static bool
in_order(struct cut_stats *st, const struct cut_event *ev)
{
	if (ev->ts < st->last_ts)
		st->unsorted = true;
	else
		st->last_ts = ev->ts;
	return !st->unsorted;
}

/* A call of st's layer opens on its thread, to hold the ioctls made inside it: user[0] is its
 * function's index plus one, user[1] 1 where cutmerge has counted them already. */
static void
open_call(struct cut_stats *st, const struct cut_event *ev, const struct cut_fn_stat *f)
{
	if (!in_order(st, ev))
		return;
	struct cut_span *s = cut_calls_open(st->open, ev);
	if (s) {
		s->user[0] = (uint64_t)(f - st->fns) + 1;
		s->user[1] = (ev->has & CUT_HAS_NIOCTL) != 0;
		st->counted_here |= !(ev->has & CUT_HAS_NIOCTL);
	}
}

void
stats_next_input(struct cut_stats *st)
{
	st->last_ts = INT64_MIN;
}

void
stats_ioctl(struct cut_stats *st, const struct cut_event *ev)
{
	if (ev->layer != CUT_IOCTL)
		return;
	st->ioctls_seen++;
	if (!in_order(st, ev) || !cut_is_ioctl_call(ev))
		return;
	struct cut_span *s = cut_calls_within(st->open, ev, st->layer);
	if (!s || s->user[1] || !s->user[0])
		return;
	struct cut_fn_stat *f = &st->fns[s->user[0] - 1];
	sat_add(st, &f->own_ioctls, 1);
	sat_add(st, &f->own_ioctl_ns, ev->has & CUT_HAS_DUR ? ev->dur : 0);
}

static void
add_api(struct cut_stats *st, const struct cut_event *ev)
{
	struct cut_fn_stat *f = fn_of(st, ev->name);
	open_call(st, ev, f);
	fn_add(st, f, ev->dur);
	sat_add(st, &st->api_total, ev->dur);
	st->cat_calls[f->cat]++;
	sat_add(st, &st->cat_total[f->cat], ev->dur);
	st->cat_sum[f->cat] += ev->dur;
	if (ev->has & CUT_HAS_NIOCTL) {
		st->have_nioctl = true;
		sat_add(st, &f->ioctls, ev->nioctl);
		sat_add(st, &f->ioctl_ns, ev->ioctl_ns);
	}
	int64_t bytes;
	if (f->cat == CUT_CAT_TRANSFER && cut_args_int(ev->args, "bytes", &bytes) == 0) {
		enum cut_xfer_dir d = stats_xfer_dir(ev);
		st->xfer_calls[d]++;
		sat_add(st, &st->xfer_bytes[d], bytes);
		sat_add(st, &st->xfer_time[d], ev->dur);
	}
	note_slow(st, ev);
}

/* The count of a lost record (0 when it says none). */
static int64_t
lost_count(const struct cut_event *ev)
{
	struct cut_meta m;
	cut_meta_read(ev, &m);
	int64_t n = m.lost.count == CUT_ABSENT ? 0 : m.lost.count;
	cut_meta_release(&m);
	return n;
}

/* A trailer's runtimes_unrecorded, each name once into st->unrecorded, STATS_MAX_UNRECORDED
 * at most (a trace is input: a made-up one could name millions). */
static void
note_unrecorded(struct cut_stats *st, const struct cut_event *ev)
{
	struct cut_meta m;
	cut_meta_read(ev, &m);
	for (size_t i = 0; i < m.trailer.nruntimes && st->nunrecorded < STATS_MAX_UNRECORDED; i++) {
		size_t j = 0;
		while (j < st->nunrecorded && strcmp(st->unrecorded[j], m.trailer.runtimes[i]) != 0)
			j++;
		if (j < st->nunrecorded)
			continue;
		st->unrecorded =
		    cut_xrealloc(st->unrecorded, st->nunrecorded + 1, sizeof(*st->unrecorded));
		st->unrecorded[st->nunrecorded++] = cut_xstrdup(m.trailer.runtimes[i]);
	}
	cut_meta_release(&m);
}

void
stats_add(struct cut_stats *st, const struct cut_event *ev)
{
	size_t proc = cut_procs_of(st->procs, ev);
	if (ev->layer == CUT_META) {
		enum cut_meta_kind k = cut_meta_kind(ev);
		if (k == CUT_META_LOST)
			sat_add(st, &st->lost, lost_count(ev));
		else if (k == CUT_META_TRAILER)
			note_unrecorded(st, ev);
		return;
	}
	if (st->first < 0 || ev->ts < st->first)
		st->first = ev->ts;
	if (cut_event_end(ev) > st->last)
		st->last = cut_event_end(ev);
	st->layer_events[ev->layer]++;
	stats_ioctl(st, ev);
	if (!(ev->has & CUT_HAS_DUR)) {
		if (ev->layer == st->layer)
			st->untimed++;
		return;
	}
	sat_add(st, &st->layer_total[ev->layer], ev->dur);
	if (!st->seen[ev->layer])
		st->seen[ev->layer] = idmap_new();
	bool isnew;
	idmap_put2(st->seen[ev->layer], (int64_t)proc, ev->tid, &isnew);
	st->layer_threads[ev->layer] += isnew;
	if (ev->layer == st->layer)
		add_api(st, ev);
}

/* The k-th smallest of v[0..n) (Hoare's quickselect, median-of-three pivots); reorders v
 * so that v[0..k) <= v[k]. Linear on average, where sorting every function's calls would
 * dominate cutstat's run time. */
static int64_t
select_kth(int64_t *v, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int64_t a = v[lo], b = v[mid], c = v[hi];
		int64_t pivot =
		    a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
		size_t i = lo, j = hi;
		while (i <= j) {
			while (v[i] < pivot)
				i++;
			while (v[j] > pivot)
				j--;
			if (i <= j) {
				int64_t t = v[i];
				v[i] = v[j];
				v[j] = t;
				i++;
				if (j == 0)
					break;
				j--;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			break;
	}
	return v[k];
}

static double
median(int64_t *v, size_t n)
{
	size_t h = n / 2;
	int64_t upper = select_kth(v, n, h);
	if (n % 2)
		return (double)upper;
	int64_t lower = v[0];
	for (size_t i = 1; i < h; i++) /* the largest of the lower half */
		if (v[i] > lower)
			lower = v[i];
	return ((double)lower + (double)upper) / 2;
}

/* Longest total first; ties by name so output never depends on input order. */
static int
cmp_fn(const void *a, const void *b)
{
	const struct cut_fn_stat *x = a, *y = b;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return strcmp(x->name, y->name);
}

static int
cmp_slow(const void *a, const void *b)
{
	const struct cut_slow_call *x = a, *y = b;
	if (x->dur != y->dur)
		return x->dur < y->dur ? 1 : -1;
	return (x->ts > y->ts) - (x->ts < y->ts);
}

void
stats_finish(struct cut_stats *st)
{
	/* The ioctls counted here join cutmerge's where the whole trace came in order. */
	bool own = st->counted_here && !st->unsorted;
	st->have_nioctl |= own;
	st->ioctls_unsorted = st->counted_here && st->unsorted && st->ioctls_seen;
	cut_calls_free(st->open);
	st->open = NULL;
	for (size_t i = 0; i < st->nfns; i++) {
		struct cut_fn_stat *f = &st->fns[i];
		if (own) {
			sat_add(st, &f->ioctls, f->own_ioctls);
			sat_add(st, &f->ioctl_ns, f->own_ioctl_ns);
		}
		cut_hist_of(&f->hist, f->durs, (size_t)f->calls);
		f->med = median(f->durs, (size_t)f->calls);
		f->stddev = f->calls > 1 ? sqrt(f->m2 / (double)(f->calls - 1)) : 0;
		f->avg = (double)f->sum / (double)f->calls;
		free(f->durs);
		f->durs = NULL;
		f->cap = 0;
	}
	for (int c = 0; c < CUT_NCATS; c++)
		st->cat_avg[c] =
		    st->cat_calls[c] ? (double)st->cat_sum[c] / (double)st->cat_calls[c] : 0;
	/* Names point into the index, which stays alive; only the order changes. */
	if (st->nfns)
		qsort(st->fns, st->nfns, sizeof(*st->fns), cmp_fn);
	st->slow = cut_xcalloc(heap_len(&st->slowest), sizeof(*st->slow));
	for (; st->nslow < heap_len(&st->slowest); st->nslow++)
		st->slow[st->nslow] = ((struct slow *)heap_at(&st->slowest, st->nslow))->c;
	heap_free(&st->slowest);
	if (st->nslow)
		qsort(st->slow, st->nslow, sizeof(*st->slow), cmp_slow);
}

void
stats_free(struct cut_stats *st)
{
	if (!st)
		return;
	for (size_t i = 0; i < st->nfns; i++) {
		free(st->fns[i].durs);
		cut_hist_free(&st->fns[i].hist);
	}
	for (size_t i = 0; i < st->nslow; i++)
		free(st->slow[i].name);
	for (size_t i = 0; i < heap_len(&st->slowest); i++) /* not finished */
		free(((struct slow *)heap_at(&st->slowest, i))->c.name);
	heap_free(&st->slowest);
	free(st->fns);
	free(st->slow);
	strtab_free(st->index);
	cut_calls_free(st->open);
	for (int l = 0; l < CUT_NLAYERS; l++)
		idmap_free(st->seen[l]);
	cut_procs_free(st->procs);
	for (size_t i = 0; i < st->nunrecorded; i++)
		free(st->unrecorded[i]);
	free(st->unrecorded);
	free(st);
}
