/* job.c: summaries merged into the job (job.h). Each function or kernel keeps what it needs
 * and no more: its histogram's buckets from the least to the greatest used, and a share per
 * summary that has it, so that many names over many ranks take memory as the summaries do. */
#include <err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "classify.h"
#include "collwait.h"
#include "cut.h"
#include "idmap.h"
#include "job.h"
#include "strtab.h"
#include "summary.h"
#include "table.h"
#include "text.h"
#include "units.h"

/* One summary's part of a function or kernel. */
struct share {
	int k; /* the summary */
	int64_t total;
	double med; /* from the summary's own histogram */
};

/* One function or kernel over the job. */
struct item {
	int64_t calls, total, min, max;
	struct cut_hist hist;
	struct share *per; /* the summaries that have it, in the order given */
	size_t nper, capper;
};

struct table {
	struct cut_strtab *names;
	struct item *items;
	size_t cap;
};

struct job {
	int n;         /* summaries kept */
	char **labels; /* per summary kept: "rank R" or "#i" (its place among the files) */
	int64_t *rank; /* per summary kept: its rank, -1 when it has none */
	struct table fns, kernels;
	bool saturated; /* a sum reached INT64_MAX */
	int status;
};

static struct item *
item_of(struct table *t, const char *name)
{
	size_t i = strtab_intern(t->names, name);
	CUT_GROW(t->items, i + 1, t->cap);
	return &t->items[i];
}

static void
sat_add(struct job *j, int64_t *a, int64_t b)
{
	if (__builtin_add_overflow(*a, b, a)) {
		*a = b > 0 ? INT64_MAX : INT64_MIN;
		j->saturated = true;
	}
}

/* Adds a summary's list of items (functions or kernels) as summary number k; an item that is
 * not one (bad or missing members, a name listed twice) is reported and left out. */
static void
add_items(struct job *j, struct table *t, json_t *list, enum cut_sum_list which, const char *path,
          int k)
{
	static struct cut_sum_item mine;
	const char *what = cut_sum_list_key[which];
	size_t i;
	json_t *o;
	if (list && !json_is_array(list)) {
		warnx("%s: \"%s\" is not an array: left out", cut_esc(path), what);
		j->status = CUT_EXIT_BADINPUT;
		return;
	}
	json_array_foreach(list, i, o)
	{
		char why[128];
		if (!cut_summary_item(o, which, &mine, why, sizeof(why))) {
			warnx("%s: %s[%zu]: %s: left out", cut_esc(path), what, i, why);
			j->status = CUT_EXIT_BADINPUT;
			continue;
		}
		if (!mine.calls)
			continue;
		struct item *it = item_of(t, mine.name);
		if (it->nper && it->per[it->nper - 1].k == k) {
			warnx("%s: %s[%zu]: %s listed twice: left out", cut_esc(path), what, i,
			      cut_esc(mine.name));
			j->status = CUT_EXIT_BADINPUT;
			continue;
		}
		if (!it->nper || mine.min < it->min)
			it->min = mine.min;
		if (mine.max > it->max)
			it->max = mine.max;
		sat_add(j, &it->calls, mine.calls);
		sat_add(j, &it->total, mine.total);
		cut_hist_merge(&it->hist, mine.hist, &j->saturated);
		CUT_GROW(it->per, it->nper + 1, it->capper);
		it->per[it->nper++] =
		    (struct share){k, mine.total, cut_hist_quantile(mine.hist, mine.calls, 0.5)};
	}
}

bool
cut_job_is_summary(const char *path)
{
	return cut_summary_sniff(path);
}

/* Longest total first, ties by name: output never depends on the order of the files. */
static const struct table *sort_table;
static int
by_total(const void *a, const void *b)
{
	const struct item *x = &sort_table->items[*(const size_t *)a],
	                  *y = &sort_table->items[*(const size_t *)b];
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return strcmp(strtab_key(sort_table->names, *(const size_t *)a),
	              strtab_key(sort_table->names, *(const size_t *)b));
}

/* The shares of the least and the most: a summary without the item counts 0 for the least. */
static void
extremes(const struct job *j, const struct item *it, int64_t *lo, const struct share **hi)
{
	*hi = &it->per[0];
	*lo = it->per[0].total;
	for (size_t s = 1; s < it->nper; s++) {
		if (it->per[s].total > (*hi)->total)
			*hi = &it->per[s];
		if (it->per[s].total < *lo)
			*lo = it->per[s].total;
	}
	if ((int)it->nper < j->n)
		*lo = 0;
}

/* A function or kernel over the job. The CSV header of the first column is set per table. */
static const struct cut_col item_cols[] = {
    {"name", "name", "Name", CUT_COL_STR, 0, 0, 0},
    {"calls", "calls", "Calls", CUT_COL_INT, 9, 0, 0},
    {"total_ns", "total_ns", "Total(ns)", CUT_COL_INT, 14, 0, 0},
    {"med_ns", "med_ns", "Med(ns)", CUT_COL_REAL, 12, 0, 0},
    {"p99_ns", "p99_ns", "P99(ns)", CUT_COL_REAL, 12, 0, 0},
    {"min_ns", "min_ns", NULL, CUT_COL_INT, 0, 0, 0},
    {"max_ns", "max_ns", NULL, CUT_COL_INT, 0, 0, 0},
    {"per_summary_ns", NULL, NULL, CUT_COL_JSON, 0, 0, 0},
    {"slowest", "slowest", "slowest", CUT_COL_STR, -10, 0, CUT_COL_GAP},
    {NULL, "rank_min_ns", "rank min", CUT_COL_DUR, 14, 0, 0},
    {NULL, "rank_max_ns", "rank max", CUT_COL_DUR, 14, 0, 0},
    {"mangled", "mangled", NULL, CUT_COL_STR, 0, 0, 0}, /* a kernel's, where demangled */
};

static void
print_table(const struct job *j, const struct table *t, const char *what, enum cut_fmt fmt,
            json_t *out)
{
	size_t n = strtab_len(t->names);
	size_t *order = cut_xcalloc(n, sizeof(*order));
	for (size_t i = 0; i < n; i++)
		order[i] = i;
	sort_table = t;
	if (n)
		qsort(order, n, sizeof(*order), by_total);
	bool fns = what[0] == 'D';
	struct cut_col cols[CUT_NCOLS(item_cols)];
	memcpy(cols, item_cols, sizeof(cols));
	cols[0].csv = fns ? "name" : "gpu_name";
	struct cut_table_def def = {
	    cols, CUT_NCOLS(cols),
	    "total_ns calls med_ns p99_ns rank_min_ns rank_max_ns slowest name",
	    "name calls total_ns med_ns p99_ns min_ns max_ns rank_min_ns rank_max_ns slowest "
	    "mangled"};
	if (fmt == CUT_FMT_TEXT)
		cut_table_say("\n%s over the job (quantiles from merged histograms, within %.1f%%)",
		              what, 100 * CUT_HIST_ERR);
	else if (fmt == CUT_FMT_CSV && !fns)
		putchar('\n');
	struct cut_table *tab = cut_table_new(&def, fmt);
	if (fns)
		cut_table_hide(tab, "mangled");
	for (size_t x = 0; x < n; x++) {
		const struct item *it = &t->items[order[x]];
		const char *name = strtab_key(t->names, order[x]);
		const struct share *hi;
		int64_t lo;
		extremes(j, it, &lo, &hi);
		json_t *per = NULL;
		if (fmt == CUT_FMT_JSON) {
			per = json_object();
			for (size_t s = 0; s < it->nper; s++)
				json_object_set_new(per, j->labels[it->per[s].k],
				                    json_integer(it->per[s].total));
		}
		cut_table_add(
		    tab, CUT_ROW(CUT_S(cut_table_name(name)), CUT_I(it->calls), CUT_I(it->total),
		                 CUT_R(cut_hist_quantile_range(it->hist.counts, it->hist.lo,
		                                               it->hist.hi, it->calls, 0.5)),
		                 CUT_R(cut_hist_quantile_range(it->hist.counts, it->hist.lo,
		                                               it->hist.hi, it->calls, 0.99)),
		                 CUT_I(it->min), CUT_I(it->max), CUT_IF(per, CUT_J(per)),
		                 CUT_S(j->labels[hi->k]), CUT_I(lo), CUT_I(hi->total),
		                 CUT_S(cut_table_mangled(name))));
	}
	json_t *arr = cut_table_end(tab);
	if (arr)
		json_object_set_new(out, fns ? "functions" : "kernels", arr);
	free(order);
}

/* Per collective kernel, the straggler and the rank that waited most. */
static const struct cut_col straggler_cols[] = {
    {"kernel", "nccl_kernel", "kernel", CUT_COL_STR, 0, 0, CUT_COL_GAP},
    {"straggler", "straggler", "straggler", CUT_COL_STR, -10, 0, 0},
    {"its_total_ns", "straggler_total_ns", "its total", CUT_COL_DUR, 14, 0, 0},
    {"its_med_ns", NULL, NULL, CUT_COL_REAL, 0, 0, 0},
    {"most_waiting", "waited_most", "waited most", CUT_COL_STR, -11, 0, 0},
    {"most_waiting_total_ns", "waited_most_total_ns", "its total", CUT_COL_DUR, 14, 0, 0},
    {"most_waiting_med_ns", NULL, NULL, CUT_COL_REAL, 0, 0, 0},
    {"summaries", "summaries", NULL, CUT_COL_INT, 0, 0, 0},
    {"kernel_mangled", "nccl_kernel_mangled", NULL, CUT_COL_STR, 0, 0, 0},
};
static const struct cut_table_def straggler_def = {
    straggler_cols, CUT_NCOLS(straggler_cols),
    "straggler its_total_ns most_waiting most_waiting_total_ns kernel",
    "straggler straggler_total_ns waited_most waited_most_total_ns summaries nccl_kernel "
    "nccl_kernel_mangled"};

/* Collective kernels (cut_is_collective, classify.h): per kernel the straggler and the rank
 * that waited most, by the rule of collwait_pick over the summaries' totals. Text and CSV show
 * the table only when it has a row. */
static void
print_stragglers(const struct job *j, enum cut_fmt fmt, json_t *out)
{
	size_t n = strtab_len(j->kernels.names);
	struct cut_coll_total *v = cut_xcalloc((size_t)j->n, sizeof(*v));
	struct cut_table *t = fmt == CUT_FMT_JSON ? cut_table_new(&straggler_def, fmt) : NULL;
	for (size_t i = 0; i < n; i++) {
		const char *name = strtab_key(j->kernels.names, i);
		const struct item *it = &j->kernels.items[i];
		if (!cut_is_collective(name) || it->nper < 2)
			continue;
		for (size_t s = 0; s < it->nper; s++) {
			int64_t r = j->rank[it->per[s].k];
			v[s] = (struct cut_coll_total){r >= 0 ? r : INT64_MAX, it->per[s].total};
		}
		size_t most, least;
		collwait_pick(v, it->nper, &most, &least);
		const struct share *lo = &it->per[least], *hi = &it->per[most];
		if (!t && fmt == CUT_FMT_CSV)
			putchar('\n');
		else if (!t)
			cut_table_say(
			    "\nStragglers: per collective kernel, the rank the others waited "
			    "for (its instances took least time in total: it arrived last) "
			    "and the rank that waited most (most time in total)");
		if (!t)
			t = cut_table_new(&straggler_def, fmt);
		cut_table_add(t, CUT_ROW(CUT_S(cut_table_name(name)), CUT_S(j->labels[lo->k]),
		                         CUT_I(lo->total), CUT_R(lo->med), CUT_S(j->labels[hi->k]),
		                         CUT_I(hi->total), CUT_R(hi->med), CUT_I((int64_t)it->nper),
		                         CUT_S(cut_table_mangled(name))));
	}
	free(v);
	json_t *arr = t ? cut_table_end(t) : NULL;
	if (arr)
		json_object_set_new(out, "stragglers", arr);
}

/* Loads summary i (paths[i]) into the job, unless it repeats a file or a rank already in it
 * (its times would count twice): then it is reported and left out. */
static void
load(struct job *j, int i, char **paths, struct cut_idmap *files, int *file_of,
     struct cut_idmap *ranks, int **rank_of, size_t *rcap)
{
	const char *path = paths[i];
	json_t *s = cut_summary_load(path), *root = s;
	struct stat st;
	if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
		bool isnew;
		size_t f = idmap_put2(files, (int64_t)st.st_dev, (int64_t)st.st_ino, &isnew);
		if (!isnew) {
			warnx("%s: the same file as %s: left out", cut_esc(path),
			      cut_esc(paths[file_of[f]]));
			j->status = CUT_EXIT_BADINPUT;
			json_decref(root);
			return;
		}
		file_of[f] = i;
	}
	int64_t *r = NULL;
	size_t cap = 0, nr = cut_summary_ranks(s, &r, &cap);
	for (size_t x = 0; x < nr; x++) {
		size_t at = idmap_get(ranks, r[x]);
		if (at != IDMAP_NONE && (*rank_of)[at] != i) {
			warnx("%s: rank %lld is also in %s: left out (its times would count "
			      "twice)",
			      cut_esc(path), (long long)r[x], cut_esc(paths[(*rank_of)[at]]));
			j->status = CUT_EXIT_BADINPUT;
			json_decref(root);
			free(r);
			return;
		}
	}
	for (size_t x = 0; x < nr; x++) {
		size_t at = idmap_put(ranks, r[x], NULL);
		CUT_GROW(*rank_of, at + 1, *rcap);
		(*rank_of)[at] = i;
	}
	free(r);
	int k = j->n++;
	char label[64];
	json_t *one = json_object_get(s, "rank");
	j->rank[k] =
	    json_is_integer(one) && json_integer_value(one) >= 0 ? json_integer_value(one) : -1;
	if (j->rank[k] >= 0)
		snprintf(label, sizeof(label), "rank %lld", (long long)j->rank[k]);
	else
		snprintf(label, sizeof(label), "#%d", i + 1);
	j->labels[k] = cut_xstrdup(label);
	add_items(j, &j->fns, json_object_get(s, "functions"), CUT_SUM_FUNCTIONS, path, k);
	add_items(j, &j->kernels, json_object_get(s, "kernels"), CUT_SUM_KERNELS, path, k);
	json_decref(root);
}

static void
table_free(struct table *t)
{
	size_t n = strtab_len(t->names);
	for (size_t i = 0; i < n; i++) {
		cut_hist_free(&t->items[i].hist);
		free(t->items[i].per);
	}
	free(t->items);
	strtab_free(t->names);
}

int
cut_job_print(int n, char **paths, enum cut_fmt fmt)
{
	struct job j = {0,
	                cut_xcalloc((size_t)n, sizeof(char *)),
	                cut_xcalloc((size_t)n, sizeof(int64_t)),
	                {strtab_new(), NULL, 0},
	                {strtab_new(), NULL, 0},
	                false,
	                CUT_EXIT_OK};
	int *file_of = cut_xcalloc((size_t)n, sizeof(int)), *rank_of = NULL;
	size_t rcap = 0;
	struct cut_idmap *files = idmap_new(), *ranks = idmap_new();
	for (int i = 0; i < n; i++)
		load(&j, i, paths, files, file_of, ranks, &rank_of, &rcap);
	idmap_free(files);
	idmap_free(ranks);
	free(file_of);
	free(rank_of);
	json_t *out = fmt == CUT_FMT_JSON ? json_object() : NULL;
	if (j.saturated && fmt == CUT_FMT_CSV) /* no place for it in the tables */
		warnx("some sums of the job reached the largest 64-bit integer and stopped there: "
		      "they are lower bounds");
	if (fmt == CUT_FMT_JSON) {
		json_object_set_new(out, "summaries", json_integer(j.n));
		if (j.saturated)
			json_object_set_new(out, "saturated", json_true());
	} else if (fmt == CUT_FMT_TEXT) {
		struct cut_buf line = {0};
		buf_addf(&line, "Job: %d summaries:", j.n);
		for (int k = 0; k < j.n; k++)
			buf_addf(&line, " %s", j.labels[k]);
		cut_table_say("%s", line.s);
		buf_free(&line);
		if (j.saturated)
			cut_table_say("warning: some sums reached the largest 64-bit integer and "
			              "stopped there: they are lower bounds");
	}
	print_table(&j, &j.fns, "Driver API functions", fmt, out);
	if (strtab_len(j.kernels.names))
		print_table(&j, &j.kernels, "GPU kernels, copies and memsets", fmt, out);
	print_stragglers(&j, fmt, out);
	if (out) {
		json_t *root = json_object();
		json_object_set_new(root, "job", out);
		if (json_dumpf(root, stdout, JSON_INDENT(2)) < 0)
			err(CUT_EXIT_FATAL, "write error on standard output");
		putchar('\n');
		json_decref(root);
	}
	for (int k = 0; k < j.n; k++)
		free(j.labels[k]);
	free(j.labels);
	free(j.rank);
	table_free(&j.fns);
	table_free(&j.kernels);
	return j.status;
}
