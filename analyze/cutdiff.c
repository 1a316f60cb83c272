/* cutdiff: what changed from one run to another: per driver and runtime function, GPU work
 * and NVTX range of two traces or cutstat -j summaries (or two jobs of them, also per rank),
 * the calls, total, median and p99 on each side, and whether it changed beyond noise. */
#include <err.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "cut.h"
#include "gpustats.h"
#include "idmap.h"
#include "nvtxstats.h"
#include "reader.h"
#include "stats.h"
#include "strtab.h"
#include "summarize.h"
#include "summary.h"
#include "table.h"
#include "text.h"
#include "units.h"

/* The rule (cutdiff(1), CHANGED): durations by the two-sample Kolmogorov-Smirnov test on the
 * histograms and the change of the mean; calls as the counts of a Poisson process. */
#define ALPHA 0.01      /* significance level of both tests */
#define MIN_EFFECT 0.05 /* the least change of the mean duration, or of the calls, reported */
#define MIN_EFFECT_UNTESTED 0.2 /* of the mean, where the test cannot see one (judge) */
#define Z_CALLS 2.5758          /* the normal distribution's quantile 1 - ALPHA / 2 */

/* Added to the exit status when a row changed (cutdiff(1), EXIT STATUS). */
#define EXIT_CHANGED 4

static const struct cut_opt_help opts[] = {
    {"-j, --json", "print one JSON object"},
    {"-c, --csv", "print one CSV table"},
    {"-n top", "print at most top rows a table, the largest changes"},
    {"-w, --wide", "print names whole, not shortened to fit 160 columns"},
    {"-M, --mangled", "print C++ names as the trace has them, not demangled"},
    {"--nvtx-full", "keep NVTX range names whole, not folded to their operator"},
    {NULL, NULL},
};

static void
usage(void)
{
	fprintf(stderr, "usage: cutdiff [-jcwM] [-n top] [--nvtx-full] a b\n"
	                "       cutdiff [-jcwM] [-n top] [--nvtx-full] a ... -- b ...\n");
	exit(CUT_EXIT_FATAL);
}

/* A row's kind by its list (GPU work's is the work's own: kernel, memcpy, ...). */
static const char *const list_kind[CUT_SUM_NLISTS] = {"driver", "runtime", "gpu", "nvtx"};
static const char *const list_title[CUT_SUM_NLISTS] = {"driver API functions", "runtime functions",
                                                       "GPU work", "NVTX ranges"};

/* One side's durations of a row. */
struct side {
	int64_t calls, total, min, max;
	struct cut_hist hist;
};

struct row {
	enum cut_sum_list list;
	const char *name, *domain, *kind; /* interned; kind: the GPU work's, from either side */
	struct side s[2];
	/* the verdict, from judge() */
	double med[2], p99[2], mean_pct, ks_d, ks_p;
	bool dur, calls, changed;
	bool tested;    /* the test could confirm a change of the mean's size */
	__int128 delta; /* of the totals */
};

/* The job, or a rank: its rows by list, domain and name. */
struct scope {
	int64_t rank;      /* -1: the job */
	unsigned lists[2]; /* the lists that every input of a side has (a bit per list) */
	struct cut_strtab *keys;
	struct row *rows;
	size_t cap, nchanged;
};

/* An input: a file of a side and its summary (read, or made from the trace). */
struct input {
	char *label; /* its file, and the rank of a trace of several it is of */
	int side;
	json_t *sum;
	bool skip;    /* left out: its file or a rank of it is already on its side */
	int64_t rank; /* its one rank, or -1 */
};

static struct {
	char **files; /* the operands, and their sides */
	int *side, nfiles;
	struct input *in;
	int nin;
	size_t capin;
	bool fold;               /* NVTX names folded to their operator */
	struct cut_strtab *strs; /* names, domains and kinds, for the rows */
	struct cut_buf key, op;
	json_t *notes; /* said before the tables */
	int status;
	bool saturated;
} d;

static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void
note(const char *fmt, ...)
{
	char b[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(b, sizeof(b), fmt, ap);
	va_end(ap);
	json_array_append_new(d.notes, json_string(b));
}

static void
bad_input(void)
{
	if (d.status == CUT_EXIT_OK)
		d.status = CUT_EXIT_BADINPUT;
}

static void add_input(const char *path, int64_t part, int s, json_t *sum);

/* ---- a trace's summaries, as cutstat -j writes them: one per rank ---- */

/* The events of one rank (or of none) of a trace. */
struct part {
	int64_t rank; /* -1: the events without one */
	struct cut_stats *api, *rt;
	struct cut_gpu_stats *gpu;
	struct cut_nvtx_stats *nvtx;
};

struct tacc {
	bool fold;
	struct cut_idmap *index; /* rank (-1: none) to a part */
	struct part *parts;
	size_t cap;
};

static struct part *
part_of(struct tacc *a, int64_t rank)
{
	bool isnew;
	size_t i = idmap_put(a->index, rank, &isnew);
	CUT_GROW(a->parts, i + 1, a->cap);
	struct part *p = &a->parts[i];
	if (isnew)
		*p = (struct part){rank, stats_new(0), stats_new_layer(0, CUT_RUNTIME),
		                   gpustats_new(), nvtxstats_new(a->fold)};
	return p;
}

static void
add_to(struct part *p, const struct cut_event *ev)
{
	stats_add(p->api, ev);
	if (ev->layer == CUT_RUNTIME)
		stats_add(p->rt, ev);
	else
		stats_ioctl(p->rt, ev); /* (of the ioctl layer's events) */
	if (ev->layer == CUT_GPU || ev->layer == CUT_META)
		gpustats_add(p->gpu, ev);
	nvtxstats_add(p->nvtx, ev);
}

static void
add_event(struct cut_reader *r, struct cut_event *ev, void *arg)
{
	struct tacc *a = arg;
	(void)r;
	if (ev->layer == CUT_META && !(ev->has & CUT_HAS_RANK)) {
		/* a record of no rank (a device's name) is any rank's */
		for (size_t i = 0; i < idmap_span(a->index); i++)
			add_to(&a->parts[i], ev);
		return;
	}
	add_to(part_of(a, ev->has & CUT_HAS_RANK ? ev->rank : -1), ev);
}

static int
by_part_rank(const void *x, const void *y)
{
	const struct part *a = x, *b = y;
	return (a->rank > b->rank) - (a->rank < b->rank);
}

/* Reads the trace in path and adds an input per rank it holds (one, of no rank, when it has
 * none) on side s, each with the summary cutstat -j would write of that rank's events. */
static void
add_trace(const char *path, int s, bool fold)
{
	struct tacc a = {fold, idmap_new(), NULL, 0};
	char *files[1] = {(char *)path};
	int st = cut_read_all(1, files, add_event, &a);
	if (st > d.status)
		d.status = st;
	size_t n = idmap_span(a.index);
	if (!n)
		part_of(&a, -1), n = 1;
	qsort(a.parts, n, sizeof(*a.parts), by_part_rank);
	for (size_t i = 0; i < n; i++) {
		struct part *p = &a.parts[i];
		stats_finish(p->api);
		stats_finish(p->rt);
		gpustats_finish(p->gpu);
		nvtxstats_finish(p->nvtx);
		struct cut_summary_src src = {p->api, p->rt,   p->gpu, p->nvtx,
		                              !fold,  p->rank, NULL,   0};
		add_input(path, n > 1 ? p->rank : -2, s, cut_summary_of(&src));
		stats_free(p->api);
		stats_free(p->rt);
		gpustats_free(p->gpu);
		nvtxstats_free(p->nvtx);
	}
	free(a.parts);
	idmap_free(a.index);
}

/* ---- the inputs ---- */

static const char *
side_name(int s)
{
	return s ? "B" : "A";
}

/* Adds an input to side s: the summary sum of path (part: the rank of a trace of several it
 * is of, -1 for its events of none, -2 for all of it), unless one of its ranks is already on
 * the side (its times would count twice): then it is reported and left out. */
static void
add_input(const char *path, int64_t part, int s, json_t *sum)
{
	CUT_GROW(d.in, (size_t)d.nin + 1, d.capin);
	struct input *in = &d.in[d.nin++];
	struct cut_buf label = {0};
	buf_adds(&label, path);
	if (part >= 0)
		buf_addf(&label, " (rank %lld)", (long long)part);
	else if (part == -1)
		buf_adds(&label, " (no rank)");
	*in = (struct input){label.s, s, sum, false, -1};
	int64_t *r = NULL, *r2 = NULL;
	size_t cap = 0, cap2 = 0, nr = cut_summary_ranks(sum, &r, &cap);
	for (int k = 0; k < d.nin - 1 && !in->skip; k++) {
		if (d.in[k].skip || d.in[k].side != s)
			continue;
		size_t n2 = cut_summary_ranks(d.in[k].sum, &r2, &cap2);
		for (size_t x = 0; x < nr && !in->skip; x++)
			for (size_t y = 0; y < n2 && !in->skip; y++)
				if (r[x] == r2[y]) {
					warnx(
					    "%s: rank %lld is also in %s on side %s: left out (its "
					    "times would count twice)",
					    cut_esc(in->label), (long long)r[x],
					    cut_esc(d.in[k].label), side_name(s));
					in->skip = true;
					bad_input();
				}
	}
	free(r);
	free(r2);
	json_t *one = json_object_get(sum, "rank");
	in->rank =
	    json_is_integer(one) && json_integer_value(one) >= 0 ? json_integer_value(one) : -1;
}

/* Reads operand i (a file of side s), unless its file is already on its side: then it is
 * reported and left out. */
static void
load(int i, char **paths, const int *side, dev_t *dev, ino_t *ino, bool fold)
{
	struct stat st;
	const char *path = paths[i];
	bool reg = strcmp(path, "-") != 0 && stat(path, &st) == 0 && S_ISREG(st.st_mode);
	dev[i] = reg ? st.st_dev : 0, ino[i] = reg ? st.st_ino : 0;
	for (int k = 0; reg && k < i; k++)
		if (side[k] == side[i] && dev[k] == dev[i] && ino[k] == ino[i]) {
			warnx("%s: the same file as %s on side %s: left out", cut_esc(path),
			      cut_esc(paths[k]), side_name(side[i]));
			bad_input();
			dev[i] = ino[i] = 0;
			return;
		}
	if (cut_summary_sniff(path))
		add_input(path, -2, side[i], cut_summary_load(path));
	else
		add_trace(path, side[i], fold);
}

/* ---- the rows ---- */

static struct row *
row_of(struct scope *sc, enum cut_sum_list list, const char *domain, const char *name)
{
	/* the domain's length first: no domain and name can pass for another pair */
	buf_reset(&d.key);
	buf_addf(&d.key, "%d:%zu:%s", (int)list, domain ? strlen(domain) : 0, domain ? domain : "");
	buf_adds(&d.key, name);
	size_t n = strtab_len(sc->keys), i = strtab_intern(sc->keys, d.key.s);
	CUT_GROW(sc->rows, i + 1, sc->cap);
	struct row *r = &sc->rows[i];
	if (i == n) {
		r->list = list;
		r->name = strtab_key(d.strs, strtab_intern(d.strs, name));
		r->domain = domain ? strtab_key(d.strs, strtab_intern(d.strs, domain)) : NULL;
	}
	return r;
}

static void
sat_add(int64_t *a, int64_t b)
{
	if (__builtin_add_overflow(*a, b, a)) {
		*a = INT64_MAX;
		d.saturated = true;
	}
}

/* Adds the items of an input's summary to side s of a scope; warn: report what is left out
 * (an item that is not one, a name listed twice), once for all scopes. */
static void
add_summary(struct scope *sc, int s, const struct input *in, bool warn)
{
	static struct cut_sum_item it;
	unsigned have = 0;
	for (int l = 0; l < CUT_SUM_NLISTS; l++) {
		json_t *list = json_object_get(in->sum, cut_sum_list_key[l]), *o;
		size_t i;
		if (list && !json_is_array(list)) {
			if (warn) {
				warnx("%s: \"%s\" is not an array: left out", cut_esc(in->label),
				      cut_sum_list_key[l]);
				bad_input();
			}
			continue;
		}
		if (!list)
			continue;
		have |= 1u << l;
		struct cut_strtab *seen = strtab_new();
		json_array_foreach(list, i, o)
		{
			char why[128];
			if (!cut_summary_item(o, (enum cut_sum_list)l, &it, why, sizeof(why))) {
				if (warn) {
					warnx("%s: %s[%zu]: %s: left out", cut_esc(in->label),
					      cut_sum_list_key[l], i, why);
					bad_input();
				}
				continue;
			}
			/* the item as the summary has it must be there once */
			buf_reset(&d.key);
			buf_addf(&d.key, "%zu:%s", it.domain ? strlen(it.domain) : 0,
			         it.domain ? it.domain : "");
			buf_adds(&d.key, it.name);
			size_t before = strtab_len(seen);
			if (strtab_intern(seen, d.key.s) < before) {
				if (warn) {
					warnx("%s: %s[%zu]: %s listed twice: left out",
					      cut_esc(in->label), cut_sum_list_key[l], i,
					      cut_esc(it.name));
					bad_input();
				}
				continue;
			}
			if (!it.calls)
				continue;
			const char *name = it.name;
			size_t len = l == CUT_SUM_NVTX && d.fold ? cut_nvtx_op_len(name) : 0;
			if (len && name[len]) {
				buf_reset(&d.op);
				buf_add(&d.op, name, len);
				name = d.op.s;
			}
			struct row *r = row_of(sc, (enum cut_sum_list)l, it.domain, name);
			struct side *x = &r->s[s];
			if (it.kind && !r->kind)
				r->kind = strtab_key(d.strs, strtab_intern(d.strs, it.kind));
			if (!x->calls || it.min < x->min)
				x->min = it.min;
			if (it.max > x->max)
				x->max = it.max;
			sat_add(&x->calls, it.calls);
			sat_add(&x->total, it.total);
			cut_hist_merge(&x->hist, it.hist, &d.saturated);
		}
		strtab_free(seen);
	}
	sc->lists[s] &= have;
}

/* The asymptotic p-value of the Kolmogorov-Smirnov statistic d for samples of n and m, with
 * Stephens' correction for small samples (Numerical Recipes, probks). */
static double
ks_p(double dmax, double n, double m)
{
	double ne = n * m / (n + m), sq = sqrt(ne);
	double lambda = (sq + 0.12 + 0.11 / sq) * dmax, a2 = -2 * lambda * lambda, fac = 2, sum = 0,
	       before = 0;
	for (int j = 1; j <= 100; j++) {
		double term = fac * exp(a2 * j * j);
		sum += term;
		if (fabs(term) <= 0.001 * before || fabs(term) <= 1e-8 * sum)
			return sum < 0 ? 0 : sum > 1 ? 1 : sum;
		fac = -fac;
		before = fabs(term);
	}
	return 1; /* no convergence: lambda near 0, the samples alike */
}

/* The Kolmogorov-Smirnov statistic of two histograms, a's moved by shift buckets (a duration
 * of 0 stays 0: no scaling moves it), and the counts they hold into *na, *nb. */
static double
ks_stat(const struct cut_hist *a, int shift, const struct cut_hist *b, double *na, double *nb)
{
	static double fa[CUT_HIST_N], fb[CUT_HIST_N];
	memset(fa, 0, sizeof(fa));
	memset(fb, 0, sizeof(fb));
	*na = *nb = 0;
	for (int k = a->lo; k < a->hi; k++) {
		int to = !k                        ? 0
		         : k + shift < 1           ? 1
		         : k + shift >= CUT_HIST_N ? CUT_HIST_N - 1
		                                   : k + shift;
		fa[to] += (double)a->counts[k - a->lo];
		*na += (double)a->counts[k - a->lo];
	}
	for (int k = b->lo; k < b->hi; k++) {
		fb[k] += (double)b->counts[k - b->lo];
		*nb += (double)b->counts[k - b->lo];
	}
	double ca = 0, cb = 0, dmax = 0, n = *na, m = *nb;
	for (int k = 0; k < CUT_HIST_N && n > 0 && m > 0; k++) {
		ca += fa[k], cb += fb[k];
		if (fabs(ca / n - cb / m) > dmax)
			dmax = fabs(ca / n - cb / m);
	}
	return dmax;
}

static double
pct_change(double a, double b)
{
	return a > 0 ? 100 * (b / a - 1) : NAN;
}

/* Whether a row changed beyond noise (cutdiff(1), CHANGED). */
static void
judge(struct row *r)
{
	const struct side *a = &r->s[0], *b = &r->s[1];
	for (int k = 0; k < 2; k++) {
		const struct cut_hist *h = &r->s[k].hist;
		r->med[k] = cut_hist_quantile_range(h->counts, h->lo, h->hi, r->s[k].calls, 0.5);
		r->p99[k] = cut_hist_quantile_range(h->counts, h->lo, h->hi, r->s[k].calls, 0.99);
	}
	r->delta = (__int128)b->total - a->total;
	r->mean_pct = r->ks_d = r->ks_p = NAN;
	r->dur = r->calls = r->tested = false;
	if (!a->calls || !b->calls) { /* new or gone */
		r->changed = r->calls = a->calls != b->calls;
		return;
	}
	double ma = (double)a->total / (double)a->calls, mb = (double)b->total / (double)b->calls;
	r->mean_pct = pct_change(ma, mb);
	double na, nb;
	r->ks_d = ks_stat(&a->hist, 0, &b->hist, &na, &nb);
	r->ks_p = na > 0 && nb > 0 ? (r->ks_d > 0 ? ks_p(r->ks_d, na, nb) : 1) : NAN;
	/* Could the test see a change of this size? A's durations scaled by the change of the
	 * mean, against A's own: too few instances, or mostly of no duration, it cannot. */
	if (ma > 0 && mb > 0 && !isnan(r->ks_p)) {
		/* the scaling moves durations a fraction of a bucket more or less than whole
		 * buckets: the lesser of the two moves (of at least one bucket), so as not to
		 * credit the test with more than it could see */
		double shift = 8 * log2(mb / ma), n1, n2, d_self = 1;
		int moves[2] = {(int)floor(shift), (int)ceil(shift)};
		for (int k = 0; k < 2; k++) {
			if (!moves[k])
				continue;
			double dk = ks_stat(&a->hist, moves[k], &a->hist, &n1, &n2);
			d_self = dk < d_self ? dk : d_self;
		}
		if (!moves[0] && !moves[1])
			d_self = 0;
		r->tested = d_self > 0 && ks_p(d_self, na, nb) < ALPHA;
	}
	double moved = isnan(r->mean_pct) ? (mb > 0 ? INFINITY : 0) : fabs(r->mean_pct) / 100;
	r->dur = r->tested ? moved >= MIN_EFFECT && r->ks_p < ALPHA : moved >= MIN_EFFECT_UNTESTED;
	double x = (double)a->calls, y = (double)b->calls, diff = fabs(y - x);
	r->calls = diff >= MIN_EFFECT * (x > y ? x : y) && diff >= Z_CALLS * sqrt(x + y);
	r->changed = r->dur || r->calls;
}

/* What changed, in a word or two; a "?" after a change of the durations that the test could
 * not confirm. */
static const char *
change_of(const struct row *r)
{
	static char b[32];
	if (!r->changed)
		return "";
	if (!r->s[0].calls)
		return "new";
	if (!r->s[1].calls)
		return "gone";
	const char *dur =
	    !r->dur ? ""
	    : r->s[1].total / (double)r->s[1].calls > r->s[0].total / (double)r->s[0].calls
	        ? "slower"
	        : "faster";
	snprintf(b, sizeof(b), "%s%s%s%s", dur, r->dur && !r->tested ? "?" : "",
	         r->dur && r->calls ? "+" : "",
	         !r->calls                       ? ""
	         : r->s[1].calls > r->s[0].calls ? "more"
	                                         : "fewer");
	return b;
}

static int
by_change(const void *x, const void *y)
{
	const struct row *a = x, *b = y;
	__int128 da = a->delta < 0 ? -a->delta : a->delta, db = b->delta < 0 ? -b->delta : b->delta;
	if (da != db)
		return da < db ? 1 : -1;
	if (a->changed != b->changed)
		return a->changed ? -1 : 1;
	if (a->list != b->list)
		return a->list < b->list ? -1 : 1;
	int c = strcmp(a->domain ? a->domain : "", b->domain ? b->domain : "");
	return c ? c : strcmp(a->name, b->name);
}

/* The rows of a scope that are compared (their list in every input of both sides), judged
 * and sorted, largest change of the total first. Returns how many. */
static size_t
finish(struct scope *sc)
{
	size_t n = strtab_len(sc->keys), k = 0;
	unsigned both = sc->lists[0] & sc->lists[1];
	for (size_t i = 0; i < n; i++) {
		struct row *r = &sc->rows[i];
		if (!(both & (1u << r->list))) {
			for (int s = 0; s < 2; s++)
				cut_hist_free(&r->s[s].hist);
			continue;
		}
		judge(r);
		sc->nchanged += r->changed;
		sc->rows[k++] = *r;
	}
	if (k)
		qsort(sc->rows, k, sizeof(*sc->rows), by_change);
	return k;
}

/* ---- printing ---- */

static const struct cut_col cols[] = {
    {NULL, "scope", NULL, CUT_COL_STR, 0, 0, 0},
    {"kind", "kind", "kind", CUT_COL_STR, -7, 0, 0},
    {"domain", "domain", NULL, CUT_COL_STR, 0, 0, 0},
    {"name", "name", NULL, CUT_COL_STR, 0, 0, 0},
    {"calls_a", "calls_a", "calls A", CUT_COL_INT, 8, 0, 0},
    {"calls_b", "calls_b", "calls B", CUT_COL_INT, 8, 0, 0},
    {"total_a_ns", "total_a_ns", "total A", CUT_COL_DUR, 10, 0, 0},
    {"total_b_ns", "total_b_ns", "total B", CUT_COL_DUR, 10, 0, 0},
    {"delta_ns", "delta_ns", NULL, CUT_COL_INT, 0, 0, 0},
    {NULL, "t_delta", "delta", CUT_COL_STR, 11, 0, CUT_COL_RAW},
    {"delta_pct", "delta_pct", "delta%", CUT_COL_PCT, 7, 0, CUT_COL_NULL},
    {"med_a_ns", "med_a_ns", NULL, CUT_COL_REAL, 0, 1, CUT_COL_NULL},
    {"med_b_ns", "med_b_ns", NULL, CUT_COL_REAL, 0, 1, CUT_COL_NULL},
    {NULL, "t_med_a", "med A", CUT_COL_DUR, 10, 0, 0},
    {NULL, "t_med_b", "med B", CUT_COL_DUR, 10, 0, 0},
    {"med_delta_pct", "med_delta_pct", "med%", CUT_COL_PCT, 7, 0, CUT_COL_NULL},
    {"p99_a_ns", "p99_a_ns", NULL, CUT_COL_REAL, 0, 1, CUT_COL_NULL},
    {"p99_b_ns", "p99_b_ns", NULL, CUT_COL_REAL, 0, 1, CUT_COL_NULL},
    {"mean_delta_pct", "mean_delta_pct", NULL, CUT_COL_PCT, 0, 0, CUT_COL_NULL},
    {"ks_d", "ks_d", NULL, CUT_COL_REAL, 0, 4, CUT_COL_NULL},
    {"ks_p", "ks_p", NULL, CUT_COL_REAL, 0, 6, CUT_COL_NULL},
    {"changed", NULL, NULL, CUT_COL_JSON, 0, 0, 0},
    {NULL, "changed", NULL, CUT_COL_STR, 0, 0, 0},
    {"duration_changed", NULL, NULL, CUT_COL_JSON, 0, 0, 0},
    {"calls_changed", NULL, NULL, CUT_COL_JSON, 0, 0, 0},
    {"tested", NULL, NULL, CUT_COL_JSON, 0, 0, 0},
    {"change", "change", "changed", CUT_COL_STR, -12, 0, 0},
    {NULL, "t_name", "name", CUT_COL_STR, 0, 0, CUT_COL_GAP},
    {"mangled", "mangled", NULL, CUT_COL_STR, 0, 0, 0},
};
static const struct cut_table_def def = {
    cols, CUT_NCOLS(cols),
    "change kind calls_a calls_b total_a_ns total_b_ns t_delta delta_pct t_med_a t_med_b "
    "med_delta_pct t_name",
    "scope kind domain name calls_a calls_b total_a_ns total_b_ns delta_ns delta_pct med_a_ns "
    "med_b_ns med_delta_pct p99_a_ns p99_b_ns mean_delta_pct ks_d ks_p changed change mangled"};

/* A signed duration for the text: "+1.250 ms", "-80 ns", "0 ns". */
static const char *
signed_dur(int64_t v, char *b, size_t n)
{
	char t[32];
	cut_format_duration(v < 0 ? -(double)v : (double)v, t, sizeof(t));
	snprintf(b, n, "%s%s", v > 0 ? "+" : v < 0 ? "-" : "", t);
	return b;
}

static int64_t
clamp(__int128 v)
{
	return v > INT64_MAX ? INT64_MAX : v < INT64_MIN ? INT64_MIN : (int64_t)v;
}

/* What the text shows as a row's name: an NVTX range's domain before it. */
static const char *
shown_name(const struct row *r)
{
	static struct cut_buf b;
	const char *name = cut_table_name(r->name);
	if (!r->domain || !*r->domain)
		return name;
	buf_reset(&b);
	buf_addf(&b, "%s: %s", r->domain, name);
	return b.s;
}

/* Adds a scope's rows, at most top, to a table. */
static void
add_rows(struct cut_table *t, const struct scope *sc, size_t n, size_t top)
{
	char scope[32], delta[40];
	if (sc->rank < 0)
		snprintf(scope, sizeof(scope), "job");
	else
		snprintf(scope, sizeof(scope), "rank %lld", (long long)sc->rank);
	for (size_t i = 0; i < n && i < top; i++) {
		const struct row *r = &sc->rows[i];
		int64_t dl = clamp(r->delta);
		bool has[2] = {r->s[0].calls > 0, r->s[1].calls > 0};
		double dpct = pct_change((double)r->s[0].total, (double)r->s[1].total),
		       mpct = has[0] && has[1] ? pct_change(r->med[0], r->med[1]) : NAN;
		const char *kind = r->kind ? r->kind : list_kind[r->list];
		cut_table_add(
		    t,
		    CUT_ROW(CUT_S(scope), CUT_S(kind), CUT_S(r->domain),
		            CUT_S(cut_table_name(r->name)), CUT_I(r->s[0].calls),
		            CUT_I(r->s[1].calls), CUT_I(r->s[0].total), CUT_I(r->s[1].total),
		            CUT_I(dl), CUT_S(signed_dur(dl, delta, sizeof(delta))),
		            CUT_IF(!isnan(dpct), CUT_R(dpct)), CUT_IF(has[0], CUT_R(r->med[0])),
		            CUT_IF(has[1], CUT_R(r->med[1])),
		            CUT_IF(has[0], CUT_I(llround(r->med[0]))),
		            CUT_IF(has[1], CUT_I(llround(r->med[1]))),
		            CUT_IF(!isnan(mpct), CUT_R(mpct)), CUT_IF(has[0], CUT_R(r->p99[0])),
		            CUT_IF(has[1], CUT_R(r->p99[1])),
		            CUT_IF(!isnan(r->mean_pct), CUT_R(r->mean_pct)),
		            CUT_IF(!isnan(r->ks_d), CUT_R(r->ks_d)),
		            CUT_IF(!isnan(r->ks_p), CUT_R(r->ks_p)),
		            CUT_J(json_boolean(r->changed)), CUT_S(r->changed ? "true" : "false"),
		            CUT_J(json_boolean(r->dur)), CUT_J(json_boolean(r->calls)),
		            CUT_IF(!isnan(r->ks_p), CUT_J(json_boolean(r->tested))),
		            CUT_S(change_of(r)), CUT_S(shown_name(r)),
		            CUT_S(cut_table_mangled(r->name))));
	}
}

/* A table of a scope's rows: printed, or the JSON array. */
static json_t *
print_rows(const struct scope *sc, size_t n, size_t top, enum cut_fmt fmt)
{
	struct cut_table *t = cut_table_new(&def, fmt);
	add_rows(t, sc, n, top);
	return cut_table_end(t);
}

/* The paths of a side, for the text's first lines and JSON. */
static json_t *
paths_of(int s)
{
	json_t *a = json_array();
	for (int i = 0; i < d.nfiles; i++)
		if (d.side[i] == s)
			json_array_append_new(a, json_string(d.files[i]));
	return a;
}

/* The lists a scope leaves out, said once. */
static void
note_lists(const struct scope *sc)
{
	for (int l = 0; l < CUT_SUM_NLISTS; l++)
		for (int s = 0; s < 2; s++)
			if (!(sc->lists[s] & (1u << l))) {
				note("%s: not compared: an input of side %s has none (a summary "
				     "written by an older cutstat)",
				     list_title[l], side_name(s));
				break;
			}
}

static void
scope_free(struct scope *sc, size_t n)
{
	for (size_t i = 0; i < n; i++)
		for (int s = 0; s < 2; s++)
			cut_hist_free(&sc->rows[i].s[s].hist);
	free(sc->rows);
	strtab_free(sc->keys);
}

static struct scope
scope_new(int64_t rank)
{
	return (struct scope){rank, {~0u, ~0u}, strtab_new(), NULL, 0, 0};
}

/* Per rank: the ranks that both sides have in inputs of one rank each, when a side has two
 * such inputs or more. Returns how many scopes, in *out. */
static size_t
rank_scopes(struct scope **out)
{
	int nranked[2] = {0, 0};
	for (int i = 0; i < d.nin; i++)
		nranked[d.in[i].side] += !d.in[i].skip && d.in[i].rank >= 0;
	*out = NULL;
	if (nranked[0] < 2 && nranked[1] < 2)
		return 0;
	for (int k = 0; k < 2; k++)
		if (!nranked[k]) {
			note("per rank: not compared, side %s has no input of one rank (a summary "
			     "of "
			     "a trace of several merges them: give the ranks' own)",
			     side_name(k));
			return 0;
		}
	size_t n = 0, cap = 0;
	for (int i = 0; i < d.nin; i++) {
		const struct input *a = &d.in[i];
		if (a->skip || a->rank < 0)
			continue;
		const struct input *b = NULL;
		for (int k = 0; k < d.nin && !b; k++)
			if (!d.in[k].skip && d.in[k].side != a->side && d.in[k].rank == a->rank)
				b = &d.in[k];
		if (!b) {
			note("rank %lld is only on side %s (%s): not compared per rank",
			     (long long)a->rank, side_name(a->side), a->label);
			continue;
		}
		if (a->side != 0)
			continue;
		CUT_GROW(*out, n + 1, cap);
		struct scope *sc = &(*out)[n++];
		*sc = scope_new(a->rank);
		add_summary(sc, 0, a, false);
		add_summary(sc, 1, b, false);
	}
	return n;
}

static int
by_rank(const void *x, const void *y)
{
	const struct scope *a = x, *b = y;
	return (a->rank > b->rank) - (a->rank < b->rank);
}

#define TITLE                                                                                      \
	"%s: %zu rows, %zu changed beyond noise (medians from histograms, within 4.4%%; the "      \
	"rule: "                                                                                   \
	"cutdiff(1))"

static int
run(size_t top, enum cut_fmt fmt)
{
	struct scope job = scope_new(-1);
	for (int i = 0; i < d.nin; i++)
		if (!d.in[i].skip)
			add_summary(&job, d.in[i].side, &d.in[i], true);
	struct scope *ranks;
	size_t nranks = rank_scopes(&ranks), changed = 0;
	if (nranks)
		qsort(ranks, nranks, sizeof(*ranks), by_rank);
	note_lists(&job);
	size_t n = finish(&job), *nr = cut_xcalloc(nranks, sizeof(*nr));
	changed += job.nchanged;
	for (size_t i = 0; i < nranks; i++) {
		nr[i] = finish(&ranks[i]);
		changed += ranks[i].nchanged;
	}
	if (d.saturated)
		note("some sums reached the largest 64-bit integer and stopped there: they are "
		     "lower bounds");
	size_t i;
	json_t *x;
	if (fmt == CUT_FMT_JSON) {
		json_t *root = json_object(), *rs = json_array();
		json_object_set_new(root, "a", paths_of(0));
		json_object_set_new(root, "b", paths_of(1));
		json_object_set_new(root, "changed", json_integer((json_int_t)job.nchanged));
		json_object_set_new(root, "rows", print_rows(&job, n, top, fmt));
		for (i = 0; i < nranks; i++) {
			json_t *o = json_object();
			json_object_set_new(o, "rank", json_integer(ranks[i].rank));
			json_object_set_new(o, "changed",
			                    json_integer((json_int_t)ranks[i].nchanged));
			json_object_set_new(o, "rows", print_rows(&ranks[i], nr[i], top, fmt));
			json_array_append_new(rs, o);
		}
		if (nranks)
			json_object_set_new(root, "ranks", rs);
		else
			json_decref(rs);
		json_object_set_new(root, "notes", json_incref(d.notes));
		if (json_dumpf(root, stdout, JSON_INDENT(2)) < 0)
			err(CUT_EXIT_FATAL, "write error on standard output");
		putchar('\n');
		json_decref(root);
	} else if (fmt == CUT_FMT_CSV) {
		json_array_foreach(d.notes, i, x) warnx("%s", json_string_value(x));
		/* one table: the scope says whose a row is */
		struct cut_table *t = cut_table_new(&def, fmt);
		add_rows(t, &job, n, top);
		for (i = 0; i < nranks; i++)
			add_rows(t, &ranks[i], nr[i], top);
		cut_table_end(t);
	} else {
		for (int s = 0; s < 2; s++) {
			struct cut_buf b = {0};
			buf_addf(&b, "%s:", side_name(s));
			for (int k = 0; k < d.nfiles; k++)
				if (d.side[k] == s)
					buf_addf(&b, " %s", cut_esc(d.files[k]));
			cut_table_say("%s", b.s);
			buf_free(&b);
		}
		json_array_foreach(d.notes, i, x) cut_table_say("note: %s", json_string_value(x));
		cut_table_say("\n" TITLE, "Job", n, job.nchanged);
		print_rows(&job, n, top, fmt);
		for (i = 0; i < nranks; i++) {
			char what[40];
			snprintf(what, sizeof(what), "Rank %lld", (long long)ranks[i].rank);
			cut_table_say("\n" TITLE, what, nr[i], ranks[i].nchanged);
			print_rows(&ranks[i], nr[i], top, fmt);
		}
	}
	scope_free(&job, n);
	for (i = 0; i < nranks; i++)
		scope_free(&ranks[i], nr[i]);
	free(ranks);
	free(nr);
	return changed ? EXIT_CHANGED : 0;
}

int
main(int argc, char *argv[])
{
	enum { NVTX_FULL = 256 };
	static const struct option longopts[] = {
	    {"json", no_argument, NULL, 'j'},
	    {"csv", no_argument, NULL, 'c'},
	    {"wide", no_argument, NULL, 'w'},
	    {"mangled", no_argument, NULL, 'M'},
	    {"nvtx-full", no_argument, NULL, NVTX_FULL},
	    {NULL, 0, NULL, 0},
	};
	bool nvtx_full = false, wide = false, mangled = false;
	enum cut_fmt fmt = CUT_FMT_TEXT;
	unsigned long top = (unsigned long)-1;
	int ch;
	char *end;

	cut_std_args_help(argc, argv, usage, opts);
	/* "+": options end at the first file, so that "--" between the sides stays */
	while ((ch = getopt_long(argc, argv, "+jcwMn:", longopts, NULL)) != -1) {
		switch (ch) {
		case 'j': fmt = CUT_FMT_JSON; break;
		case 'c': fmt = CUT_FMT_CSV; break;
		case 'w': wide = true; break;
		case 'M': mangled = true; break;
		case NVTX_FULL: nvtx_full = true; break;
		case 'n':
			top = strtoul(optarg, &end, 10);
			if (*optarg < '0' || *optarg > '9' || *end)
				errx(CUT_EXIT_FATAL, "-n: not a count: %s", optarg);
			break;
		default: usage();
		}
	}
	argc -= optind;
	argv += optind;
	int sep = -1;
	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0 && sep < 0)
			sep = i;
		else if (strcmp(argv[i], "--") == 0) {
			warnx("--: one between the sides, not two");
			usage();
		} else if (argv[i][0] == '-' && argv[i][1]) {
			warnx("%s: options come before the files", cut_esc(argv[i]));
			usage();
		}
	}
	if (sep < 0 ? argc != 2 : sep == 0 || sep == argc - 1)
		usage();
	cut_table_display(wide ? 0 : CUT_TABLE_WIDTH, mangled);

	char **files = cut_xcalloc((size_t)argc, sizeof(*files));
	int *side = cut_xcalloc((size_t)argc, sizeof(*side)), nfiles = 0;
	dev_t *dev = cut_xcalloc((size_t)argc, sizeof(*dev));
	ino_t *ino = cut_xcalloc((size_t)argc, sizeof(*ino));
	for (int i = 0; i < argc; i++) {
		if (i == sep)
			continue;
		side[nfiles] = sep < 0 ? i : i > sep;
		files[nfiles++] = argv[i];
	}
	cut_check_inputs(nfiles, files, 0);
	d.files = files, d.side = side, d.nfiles = nfiles;
	d.strs = strtab_new();
	d.notes = json_array();
	d.fold = !nvtx_full;
	for (int i = 0; i < nfiles; i++)
		load(i, files, side, dev, ino, d.fold);
	/* names kept whole compare with whole names only */
	for (int i = 0; i < d.nin && !d.fold; i++)
		if (!d.in[i].skip && json_is_array(json_object_get(d.in[i].sum, "nvtx")) &&
		    !json_is_true(json_object_get(d.in[i].sum, "nvtx_full"))) {
			note("NVTX ranges: %s has the names folded to their operator: compared so "
			     "on both sides",
			     d.in[i].label);
			d.fold = true;
		}
	int changed = run(top, fmt);
	for (int i = 0; i < d.nin; i++)
		json_decref(d.in[i].sum), free(d.in[i].label);
	json_decref(d.notes);
	strtab_free(d.strs);
	buf_free(&d.key);
	buf_free(&d.op);
	free(d.in);
	free(files);
	free(side);
	free(dev);
	free(ino);
	return cut_finish_output(d.status) + changed;
}
