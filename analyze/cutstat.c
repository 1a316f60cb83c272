/* cutstat: where the time went in a trace: by category, by driver function (like nsys
 * cuda_api_sum), slowest calls, bytes moved, time per layer, and a one-line verdict. */
#include <err.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cut.h"
#include "demangle.h"
#include "event.h"
#include "gpustats.h"
#include "job.h"
#include "nvtxstats.h"
#include "rankstats.h"
#include "reader.h"
#include "stats.h"
#include "steps.h"
#include "summarize.h"
#include "summary.h"
#include "table.h"
#include "text.h"
#include "units.h"

/* Both accumulators, for the reader's callback, and the rank the trace is of. */
struct acc {
	struct cut_stats *st, *rt; /* driver API, runtime */
	struct cut_gpu_stats *gpu;
	struct cut_nvtx_stats *nvtx;
	struct cut_rank_stats *ranks;
	int64_t rank;            /* -1: none seen; -2: several */
	struct cut_steps *steps; /* -s; NULL without */
	uint64_t input;          /* the reader of the latest event (cut_reader_serial) */
};
static struct acc acc = {.rank = -1};

static const struct cut_opt_help opts[] = {
    {"-j, --json", "print everything as one JSON object"},
    {"-c, --csv", "print the tables as CSV, one after another"},
    {"-n top", "list the top slowest calls (0 to 100000; 10)"},
    {"-w, --wide", "print names whole, not shortened to fit 160 columns"},
    {"-M, --mangled", "print C++ names as the trace has them, not demangled"},
    {"-O, --overlap", "take processes' overlapping GPU work as recorded (MPS), not told apart"},
    {"--nvtx-full", "keep NVTX range names whole, not folded to their operator"},
    {"-s, --steps=range", "a row per instance of the NVTX range (a step), and the outliers"},
    {NULL, NULL},
};

static void
usage(void)
{
	fprintf(stderr, "usage: cutstat [-jcwMO] [-n top] [-s range] [--nvtx-full] [file ...]\n");
	exit(CUT_EXIT_FATAL);
}

static double
pct(int64_t part, int64_t whole)
{
	return whole > 0 ? 100.0 * (double)part / (double)whole : 0;
}

static const struct cut_fn_stat *
top_fn_in(const struct cut_stats *st, enum cut_category c)
{
	for (size_t i = 0; i < st->nfns; i++)
		if (st->fns[i].cat == c)
			return &st->fns[i];
	return NULL;
}

/* A name of the trace as the verdict shows it: escaped, and shortened to name_cols columns
 * unless that is 0; shown_cols says how many it took. */
static size_t shown_cols;
static const char *
shown(const char *name, size_t name_cols)
{
	const char *s = cut_table_fit(cut_esc(cut_table_name(name)), name_cols);
	shown_cols = cut_name_cols(s);
	return s;
}

/* The share of the traced time the busiest GPU worked, and that GPU. */
static double
gpu_busy_share(const struct cut_stats *st, const struct cut_gpu_stats *g,
               const struct cut_gpu_busy **which)
{
	int64_t traced = st->first < 0 ? 0 : st->last - st->first;
	const struct cut_gpu_busy *best = NULL;
	for (size_t i = 0; i < g->ndevices; i++)
		if (!best || g->devices[i].busy > best->busy)
			best = &g->devices[i];
	*which = best;
	return best ? pct(best->busy, traced) : 0;
}

/* The verdict where the gpu layer says how busy the GPU was: GPU-bound, launch-bound (the
 * GPU waits for the host's launches), sync-bound (the host waits in sync calls for a GPU that
 * is mostly idle: waiting on something else), or idle. Returns 0 when there is no gpu layer. */
static bool
gpu_verdict(const struct cut_stats *st, const struct cut_gpu_stats *g, size_t name_cols,
            struct cut_buf *out)
{
	const struct cut_gpu_busy *dev;
	if (!g->count)
		return false;
	double busy = gpu_busy_share(st, g, &dev);
	const char *top = g->nnames ? shown(g->names[0].name, name_cols) : "?";
	double top_share = g->nnames ? pct(g->names[0].total, g->total) : 0;
	double launch = pct(st->cat_total[CUT_CAT_LAUNCH], st->api_total);
	double sync = pct(st->cat_total[CUT_CAT_SYNC], st->api_total);
	char t[32];
	if (busy >= 80)
		buf_addf(
		    out,
		    "GPU-bound: the busiest GPU worked %.0f%% of the traced time; %.0f%% of the "
		    "GPU time is %s",
		    busy, top_share, top);
	else if (busy < 10 && launch < 50 && sync < 50)
		buf_addf(out,
		         "idle: the GPU worked only %.0f%% of the traced time; the host spent most "
		         "of it outside the driver",
		         busy);
	else if (sync >= launch)
		buf_addf(
		    out,
		    "sync-bound: the GPU worked only %.0f%% of the traced time while %.0f%% of "
		    "the driver API time was spent waiting in sync calls",
		    busy, sync);
	else {
		buf_addf(out,
		         "launch-bound: the GPU worked only %.0f%% of the traced time, waiting for "
		         "launches (%.0f%% of the driver API time",
		         busy, launch);
		if (g->lat_count)
			buf_addf(out, "; median launch latency %s",
			         cut_format_duration(g->lat_med, t, sizeof(t)));
		buf_addc(out, ')');
	}
	return true;
}

/* One sentence naming what dominates: from the GPU's own timeline when the trace has it,
 * else from the driver API time; the name in it fitted to name_cols columns (0: whole). */
static const char *
verdict(const struct cut_stats *st, const struct cut_gpu_stats *g, size_t name_cols)
{
	static struct cut_buf out;
	char t[32];
	out.len = 0;
	buf_add(&out, "", 0);
	if (gpu_verdict(st, g, name_cols, &out))
		return out.s;
	if (st->api_total == 0)
		return "no timed driver API calls in the trace";
	int c = 0;
	for (int i = 1; i < CUT_NCATS; i++)
		if (st->cat_total[i] > st->cat_total[c])
			c = i;
	double share = pct(st->cat_total[c], st->api_total);
	const struct cut_fn_stat *f = top_fn_in(st, (enum cut_category)c);
	const char *fn = f ? shown(f->name, name_cols) : "?";
	switch (c) {
	case CUT_CAT_SYNC:
		buf_addf(&out,
		         "GPU-bound: %.0f%% of driver API time is spent waiting for the "
		         "GPU, mostly in %s",
		         share, fn);
		break;
	case CUT_CAT_INIT:
	case CUT_CAT_MODULE:
	case CUT_CAT_CONTEXT:
	case CUT_CAT_DEVICE:
		buf_addf(&out,
		         "start-up dominated: %.0f%% of driver API time is %s, led by "
		         "%s; profile a longer steady-state run",
		         share, cut_category_name(c), fn);
		break;
	case CUT_CAT_LAUNCH:
		buf_addf(&out,
		         "launch-bound: %.0f%% of driver API time is %lld launch calls "
		         "(%s each on average); consider CUDA graphs or fewer, larger kernels",
		         share, (long long)st->cat_calls[c],
		         cut_format_duration(st->cat_avg[c], t, sizeof(t)));
		break;
	case CUT_CAT_QUERY:
		buf_addf(&out,
		         "query overhead: %.0f%% of driver API time is %lld cheap "
		         "queries, led by %s",
		         share, (long long)st->cat_calls[c], fn);
		break;
	default:
		buf_addf(&out, "%s-bound: %.0f%% of driver API time is %s calls, led by %s",
		         cut_category_name(c), share, cut_category_name(c), fn);
	}
	__int128 in_ioctl = 0; /* of saturated sums: no overflow */
	for (size_t i = 0; i < st->nfns; i++)
		in_ioctl += st->fns[i].ioctl_ns;
	double share_ioctl =
	    st->api_total > 0 ? 100.0 * (double)in_ioctl / (double)st->api_total : 0;
	if (share_ioctl >= 20)
		buf_addf(&out, "; %.0f%% of all driver API time is inside NVIDIA ioctls",
		         share_ioctl);
	return out.s;
}

/* The verdict in width columns (0: any), its name shortened by what it passes them by. */
static const char *
verdict_in(const struct cut_stats *st, const struct cut_gpu_stats *g, size_t width)
{
	shown_cols = 0;
	const char *v = verdict(st, g, 0);
	size_t len = cut_name_cols(v), over = len - width;
	if (!width || len <= width || !shown_cols)
		return v;
	return verdict(
	    st, g, shown_cols > over + CUT_TABLE_MIN_ROOM ? shown_cols - over : CUT_TABLE_MIN_ROOM);
}

/* ---- the tables: each written once, printed as text, CSV or JSON ---- */

/* Time by category (driver API). */
static const struct cut_col cat_cols[] = {
    {"category", NULL, "category", CUT_COL_STR, -10, 0, 0},
    {"calls", NULL, "calls", CUT_COL_INT, 9, 0, 0},
    {"total_ns", NULL, "total", CUT_COL_DUR, 14, 0, 0},
    {NULL, NULL, "%api", CUT_COL_PCT, 7, 0, 0},
    {NULL, NULL, "%traced", CUT_COL_PCT, 8, 0, 0},
};
static const struct cut_table_def cat_def = {cat_cols, CUT_NCOLS(cat_cols), NULL, NULL};

static json_t *
cat_table(const struct cut_stats *st, int64_t traced, enum cut_fmt fmt)
{
	struct cut_table *t = cut_table_new(&cat_def, fmt);
	for (int c = 0; c < CUT_NCATS; c++) {
		if (!st->cat_calls[c])
			continue;
		cut_table_add(t, CUT_ROW(CUT_S(cut_category_name(c)), CUT_I(st->cat_calls[c]),
		                         CUT_I(st->cat_total[c]),
		                         CUT_R(pct(st->cat_total[c], st->api_total)),
		                         CUT_R(pct(st->cat_total[c], traced))));
	}
	return cut_table_end(t);
}

/* A per-function table (nsys stats' cuda_api_sum) of the layer st counts. */
static const struct cut_col fn_cols[] = {
    {"name", "name", "Name", CUT_COL_STR, 0, 0, 0},
    {"category", "category", "Category", CUT_COL_STR, -9, 0, 0},
    {"calls", "calls", "Calls", CUT_COL_INT, 8, 0, 0},
    {"total_ns", "total_ns", "Total(ns)", CUT_COL_INT, 14, 0, 0},
    {"avg_ns", "avg_ns", "Avg(ns)", CUT_COL_REAL, 12, 1, 0},
    {"med_ns", "med_ns", "Med(ns)", CUT_COL_REAL, 12, 1, 0},
    {"min_ns", "min_ns", "Min(ns)", CUT_COL_INT, 11, 0, 0},
    {"max_ns", "max_ns", "Max(ns)", CUT_COL_INT, 12, 0, 0},
    {"stddev_ns", "stddev_ns", "StdDev(ns)", CUT_COL_REAL, 12, 1, 0},
    {"ioctls", "ioctls", "Ioctls", CUT_COL_INT, 7, 0, 0},
    {"ioctl_ns", "ioctl_ns", "InIoctl(ns)", CUT_COL_INT, 13, 0, 0},
    {NULL, "time_pct", "Time(%)", CUT_COL_PCT, 8, 0, 0},
};

/* csv_name names the first CSV column: "name", "runtime_name". ioctls: the trace holds ioctls,
 * so the calls' counts of them (cutmerge's nioctl), zeros included, say something: a trace
 * recorded without the ioctl layer gets no columns of zeros. */
static json_t *
fn_table(const struct cut_stats *st, enum cut_fmt fmt, const char *csv_name, bool ioctls)
{
	struct cut_col cols[CUT_NCOLS(fn_cols)];
	memcpy(cols, fn_cols, sizeof(cols));
	cols[0].csv = csv_name;
	struct cut_table_def def = {cols, CUT_NCOLS(cols),
	                            "time_pct total_ns calls avg_ns med_ns min_ns max_ns stddev_ns "
	                            "ioctls ioctl_ns category name",
	                            "name category calls total_ns avg_ns med_ns min_ns max_ns "
	                            "stddev_ns time_pct ioctls ioctl_ns"};
	struct cut_table *t = cut_table_new(&def, fmt);
	if (!st->have_nioctl || !ioctls) {
		cut_table_hide(t, "ioctls");
		cut_table_hide(t, "ioctl_ns");
	}
	for (size_t i = 0; i < st->nfns; i++) {
		const struct cut_fn_stat *f = &st->fns[i];
		cut_table_add(t, CUT_ROW(CUT_S(f->name), CUT_S(cut_category_name(f->cat)),
		                         CUT_I(f->calls), CUT_I(f->total), CUT_R(f->avg),
		                         CUT_R(f->med), CUT_I(f->min), CUT_I(f->max),
		                         CUT_R(f->stddev), CUT_I(f->ioctls), CUT_I(f->ioctl_ns),
		                         CUT_R(pct(f->total, st->api_total))));
	}
	return cut_table_end(t);
}

/* The slowest calls. */
static const struct cut_col slow_cols[] = {
    {"name", NULL, "name", CUT_COL_STR, 0, 0, CUT_COL_GAP},
    {"ts", NULL, "ts(ns)", CUT_COL_INT, 20, 0, 0},
    {"dur", NULL, "duration", CUT_COL_DUR, 14, 0, 0},
    {"pid", NULL, "pid", CUT_COL_INT, 8, 0, 0},
    {"tid", NULL, "tid", CUT_COL_INT, 8, 0, 0},
};
static const struct cut_table_def slow_def = {slow_cols, CUT_NCOLS(slow_cols),
                                              "dur ts pid tid name", NULL};

static json_t *
slow_table(const struct cut_stats *st, enum cut_fmt fmt)
{
	struct cut_table *t = cut_table_new(&slow_def, fmt);
	for (size_t i = 0; i < st->nslow; i++) {
		cut_table_add(t, CUT_ROW(CUT_S(st->slow[i].name), CUT_I(st->slow[i].ts),
		                         CUT_I(st->slow[i].dur), CUT_I(st->slow[i].pid),
		                         CUT_I(st->slow[i].tid)));
	}
	return cut_table_end(t);
}

static double
rate(int64_t bytes, int64_t ns)
{
	return ns ? (double)bytes / (double)ns : 0.0;
}

/* Transfers by direction, from the API calls. */
static const struct cut_col xfer_cols[] = {
    {"dir", NULL, "dir", CUT_COL_STR, -7, 0, 0},
    {"calls", NULL, "calls", CUT_COL_INT, 8, 0, 0},
    {"bytes", NULL, "bytes", CUT_COL_INT, 16, 0, 0},
    {"time_ns", NULL, "time", CUT_COL_DUR, 14, 0, 0},
    {NULL, NULL, "GB/s", CUT_COL_REAL, 10, 2, 0},
};
static const struct cut_table_def xfer_def = {xfer_cols, CUT_NCOLS(xfer_cols), NULL, NULL};

static json_t *
xfer_table(const struct cut_stats *st, enum cut_fmt fmt)
{
	struct cut_table *t = cut_table_new(&xfer_def, fmt);
	for (int d = 0; d < CUT_X_NDIRS; d++) {
		if (!st->xfer_calls[d])
			continue;
		cut_table_add(t, CUT_ROW(CUT_S(cut_xfer_names[d]), CUT_I(st->xfer_calls[d]),
		                         CUT_I(st->xfer_bytes[d]), CUT_I(st->xfer_time[d]),
		                         CUT_R(rate(st->xfer_bytes[d], st->xfer_time[d]))));
	}
	return cut_table_end(t);
}

/* Time by layer. Totals add up the spans of every thread (and stream): with threads at once,
 * a layer's share of the traced time passes 100%; per thread it cannot. */
static const struct cut_col layer_cols[] = {
    {"layer", NULL, "layer", CUT_COL_STR, -7, 0, 0},
    {"events", NULL, "events", CUT_COL_INT, 9, 0, 0},
    {"total_ns", NULL, "total", CUT_COL_DUR, 14, 0, 0},
    {NULL, NULL, "%traced", CUT_COL_PCT, 8, 0, 0},
    {"threads", NULL, "threads", CUT_COL_INT, 8, 0, 0},
    {NULL, NULL, "per thread", CUT_COL_PCT, 11, 0, 0},
};
static const struct cut_table_def layer_def = {layer_cols, CUT_NCOLS(layer_cols), NULL, NULL};

static json_t *
layer_table(const struct cut_stats *st, int64_t traced, enum cut_fmt fmt)
{
	struct cut_table *t = cut_table_new(&layer_def, fmt);
	for (int l = 0; l < CUT_NLAYERS; l++) {
		if (!st->layer_events[l] || l == CUT_META)
			continue;
		int64_t n = st->layer_threads[l];
		cut_table_add(
		    t, CUT_ROW(CUT_S(cut_layer_name(l)), CUT_I(st->layer_events[l]),
		               CUT_I(st->layer_total[l]), CUT_R(pct(st->layer_total[l], traced)),
		               CUT_I(n),
		               CUT_R(n ? pct(st->layer_total[l], traced) / (double)n : 0.0)));
	}
	return cut_table_end(t);
}

/* The gpu layer's work by name (nsys stats' cuda_gpu_kern_sum and cuda_gpu_mem_time_sum). */
static const struct cut_col gpu_cols[] = {
    {"name", "gpu_name", "Name", CUT_COL_STR, 0, 0, 0},
    {"kind", "kind", "Kind", CUT_COL_STR, -7, 0, 0},
    {"instances", "instances", "Instances", CUT_COL_INT, 9, 0, 0},
    {"total_ns", "total_ns", "Total(ns)", CUT_COL_INT, 14, 0, 0},
    {"avg_ns", "avg_ns", "Avg(ns)", CUT_COL_REAL, 12, 1, 0},
    {"med_ns", "med_ns", "Med(ns)", CUT_COL_REAL, 12, 1, 0},
    {"min_ns", "min_ns", "Min(ns)", CUT_COL_INT, 11, 0, 0},
    {"max_ns", "max_ns", "Max(ns)", CUT_COL_INT, 12, 0, 0},
    {"stddev_ns", "stddev_ns", "StdDev(ns)", CUT_COL_REAL, 12, 1, 0},
    {"bytes", NULL, NULL, CUT_COL_INT, 0, 0, 0}, /* copies and memsets */
    {"gb_per_s", NULL, NULL, CUT_COL_REAL, 0, 0, 0},
    {"bounded", NULL, NULL, CUT_COL_INT, 0, 0, 0}, /* left out of gb_per_s */
    {NULL, "time_pct", "Time(%)", CUT_COL_PCT, 8, 0, 0},
    {NULL, "bytes", NULL, CUT_COL_INT, 0, 0, 0},
    {"mangled", "mangled", NULL, CUT_COL_STR, 0, 0, 0}, /* where the name is demangled */
};
static const struct cut_table_def gpu_def = {
    gpu_cols, CUT_NCOLS(gpu_cols),
    "time_pct total_ns instances avg_ns med_ns min_ns max_ns stddev_ns kind name",
    "name kind instances total_ns avg_ns med_ns min_ns max_ns stddev_ns time_pct bytes "
    "mangled"};

static json_t *
gpu_table(const struct cut_gpu_stats *g, enum cut_fmt fmt)
{
	struct cut_table *t = cut_table_new(&gpu_def, fmt);
	for (size_t i = 0; i < g->nnames; i++) {
		const struct cut_gpu_name *nm = &g->names[i];
		double bw = rate(nm->bw_bytes, nm->bw_time); /* bounds left out: gpustats.h */
		cut_table_add(t, CUT_ROW(CUT_S(cut_table_name(nm->name)), CUT_S(nm->cat),
		                         CUT_I(nm->count), CUT_I(nm->total), CUT_R(nm->avg),
		                         CUT_R(nm->med), CUT_I(nm->min), CUT_I(nm->max),
		                         CUT_R(nm->stddev), CUT_IF(nm->bytes > 0, CUT_I(nm->bytes)),
		                         CUT_IF(nm->bw_time > 0, CUT_R(bw)),
		                         CUT_IF(nm->bounded > 0, CUT_I(nm->bounded)),
		                         CUT_R(pct(nm->total, g->total)), CUT_I(nm->bytes),
		                         CUT_S(cut_table_mangled(nm->name))));
	}
	return cut_table_end(t);
}

/* Copies and memsets with their bandwidth on the device (text: JSON has it in the names). */
static const struct cut_col copy_cols[] = {
    {NULL, NULL, "name", CUT_COL_STR, -12, 0, 0}, {NULL, NULL, "count", CUT_COL_INT, 9, 0, 0},
    {NULL, NULL, "bytes", CUT_COL_INT, 16, 0, 0}, {NULL, NULL, "time", CUT_COL_DUR, 14, 0, 0},
    {NULL, NULL, "GB/s", CUT_COL_REAL, 10, 2, 0},
};
static const struct cut_table_def copy_def = {copy_cols, CUT_NCOLS(copy_cols), NULL, NULL};

static void
copy_table(const struct cut_gpu_stats *g)
{
	struct cut_table *t = cut_table_new(&copy_def, CUT_FMT_TEXT);
	int64_t bounded = 0;
	for (size_t i = 0; i < g->nnames; i++) {
		const struct cut_gpu_name *nm = &g->names[i];
		if (nm->bytes <= 0)
			continue;
		bounded += nm->bounded;
		double bw = rate(nm->bw_bytes, nm->bw_time);
		cut_table_add(t, CUT_ROW(CUT_S(cut_table_name(nm->name)), CUT_I(nm->count),
		                         CUT_I(nm->bytes), CUT_I(nm->total),
		                         CUT_IF(nm->bw_time > 0, CUT_R(bw))));
	}
	cut_table_end(t);
	if (bounded)
		cut_table_say(
		    "note: GB/s leaves out %lld pieces whose start or end is only a bound "
		    "(args.start or args.end \"bound\": no bandwidth can be measured)",
		    (long long)bounded);
}

/* Where some pieces' start or end is only a bound, the busy times count all of such a span,
 * of which the work ran perhaps less (a kernel done inside its launch call, whose END ran as
 * it was recorded: on an H200 under torch.profiler, 2,197 of a launch-bound loop's 2,200
 * kernels, 0.35-0.54 us over CUPTI's at the median, the GPU busy 4.4 % against 2.7 %). */
static void
bounded_note(const struct cut_gpu_stats *g)
{
	char a[32], b[32];
	if (g->bounded)
		cut_table_say(
		    "note: %lld of %lld pieces of work (%s of %s) start or end at a bound "
		    "(args.start or args.end \"bound\": the work ran inside that span, "
		    "perhaps for less of it): the busy times above are upper bounds",
		    (long long)g->bounded, (long long)g->count,
		    cut_format_duration((double)g->bounded_ns, a, sizeof(a)),
		    cut_format_duration((double)g->total, b, sizeof(b)));
}

/* How busy each device, stream or process kept the GPU; what names the first column. */
static const struct cut_col busy_cols[] = {
    {"key", NULL, "", CUT_COL_STR, -44, 0, 0},
    {"work", NULL, "work", CUT_COL_INT, 9, 0, 0},
    {"busy_ns", NULL, "busy", CUT_COL_DUR, 14, 0, 0},
    {"busy_pct", NULL, "%traced", CUT_COL_PCT, 8, 0, 0},
    {"processes", NULL, NULL, CUT_COL_INT, 0, 0, 0}, /* of a shared device */
    {"overlap_ns", NULL, NULL, CUT_COL_INT, 0, 0, 0},
    {"overlap_recorded_ns", NULL, NULL, CUT_COL_INT, 0, 0, 0},
    {"resolved", NULL, NULL, CUT_COL_INT, 0, 0, 0}, /* pieces moved (gpushare.h) */
    {"resolved_ns", NULL, NULL, CUT_COL_INT, 0, 0, 0},
    {"switch_ns", NULL, NULL, CUT_COL_INT, 0, 0, 0}, /* measured (gpushare.h) */
    {"pid", NULL, NULL, CUT_COL_INT, 0, 0, 0},       /* of one process's */
    {"host", NULL, NULL, CUT_COL_STR, 0, 0, 0},
    {"rank", NULL, NULL, CUT_COL_INT, 0, 0, 0},
};

static json_t *
busy_table(const char *what, const struct cut_gpu_busy *b, size_t n, int64_t traced,
           enum cut_fmt fmt)
{
	struct cut_col cols[CUT_NCOLS(busy_cols)];
	memcpy(cols, busy_cols, sizeof(cols));
	cols[0].head = what;
	struct cut_table_def def = {cols, CUT_NCOLS(cols), NULL, NULL};
	struct cut_table *t = cut_table_new(&def, fmt);
	for (size_t i = 0; i < n; i++) {
		cut_table_add(t, CUT_ROW(CUT_S(b[i].key), CUT_I(b[i].work), CUT_I(b[i].busy),
		                         CUT_R(pct(b[i].busy, traced)),
		                         CUT_IF(b[i].procs > 1, CUT_I(b[i].procs)),
		                         CUT_IF(b[i].procs > 1, CUT_I(b[i].overlap)),
		                         CUT_IF(b[i].procs > 1, CUT_I(b[i].overlap_recorded)),
		                         CUT_IF(b[i].procs > 1, CUT_I(b[i].resolved)),
		                         CUT_IF(b[i].procs > 1, CUT_I(b[i].resolved_ns)),
		                         CUT_IF(b[i].switch_ns > 0, CUT_I(b[i].switch_ns)),
		                         CUT_IF(b[i].proc >= 0, CUT_I(b[i].pid)), CUT_S(b[i].host),
		                         CUT_IF(b[i].rank >= 0, CUT_I(b[i].rank))));
	}
	return cut_table_end(t);
}

/* Time by NVTX range: the ranges' own time and that of each layer inside them. */
static const struct cut_col nvtx_cols[] = {
    {"domain", "nvtx_domain", "Domain", CUT_COL_STR, -10, 0, CUT_COL_GAP | CUT_COL_DASH},
    {"name", "nvtx_name", "Name", CUT_COL_STR, 0, 0, 0},
    {"count", "count", "Count", CUT_COL_INT, 8, 0, 0},
    {"total_ns", "total_ns", "Total(ns)", CUT_COL_INT, 14, 0, 0},
    {"runtime_ns", "runtime_ns", "Runtime(ns)", CUT_COL_INT, 14, 0, 0},
    {"runtime_calls", "runtime_calls", NULL, CUT_COL_INT, 0, 0, 0},
    {"api_ns", "api_ns", "DriverAPI(ns)", CUT_COL_INT, 14, 0, 0},
    {"api_calls", "api_calls", NULL, CUT_COL_INT, 0, 0, 0},
    {"ioctl_ns", "ioctl_ns", "Ioctl(ns)", CUT_COL_INT, 14, 0, 0},
    {"ioctls", "ioctls", NULL, CUT_COL_INT, 0, 0, 0},
    {"gpu_ns", "gpu_ns", "GPU(ns)", CUT_COL_INT, 14, 0, 0},
    {"gpu_work", "gpu_work", NULL, CUT_COL_INT, 0, 0, 0},
    {"mangled", "nvtx_mangled", NULL, CUT_COL_STR, 0, 0, 0},
};
static const struct cut_table_def nvtx_def = {
    nvtx_cols, CUT_NCOLS(nvtx_cols), "count total_ns runtime_ns api_ns ioctl_ns gpu_ns domain name",
    NULL};

static json_t *
nvtx_table(const struct cut_nvtx_stats *n, enum cut_fmt fmt)
{
	struct cut_table *t = cut_table_new(&nvtx_def, fmt);
	for (size_t i = 0; i < n->nranges; i++) {
		const struct cut_nvtx_range *r = &n->ranges[i];
		cut_table_add(t, CUT_ROW(CUT_S(r->domain), CUT_S(cut_table_name(r->name)),
		                         CUT_I(r->count), CUT_I(r->total), CUT_I(r->runtime),
		                         CUT_I(r->nruntime), CUT_I(r->api), CUT_I(r->napi),
		                         CUT_I(r->ioctl), CUT_I(r->nioctl), CUT_I(r->gpu),
		                         CUT_I(r->ngpu), CUT_S(cut_table_mangled(r->name))));
	}
	return cut_table_end(t);
}

/* Per step (-s): a row per instance of the range, then per process the median, spread and
 * outliers (steps.h has the rules). */
static const struct cut_col step_cols[] = {
    {"range", "range", NULL, CUT_COL_STR, 0, 0, 0},
    {"host", "host", "host", CUT_COL_STR, -12, 0, 0}, /* text: of several hosts */
    {"pid", "pid", "pid", CUT_COL_INT, 8, 0, 0},
    {"rank", "rank", "rank", CUT_COL_INT, 5, 0, 0},
    {"step", "step", "step", CUT_COL_INT, 6, 0, 0},
    {"ts", "ts", NULL, CUT_COL_INT, 0, 0, 0},
    {"dur_ns", "dur_ns", "duration", CUT_COL_DUR, 13, 0, 0},
    {"gpu_busy_ns", "gpu_busy_ns", NULL, CUT_COL_INT, 0, 0, 0},
    {"gpu_busy_pct", "gpu_busy_pct", "gpu busy", CUT_COL_PCT, 9, 0, 0},
    {"calls_ns", "calls_ns", "in calls", CUT_COL_DUR, 13, 0, 0},
    {"sync_ns", "sync_ns", "in sync", CUT_COL_DUR, 13, 0, 0},
    {"outlier", NULL, NULL, CUT_COL_JSON, 0, 0, 0},
    {NULL, "outlier", NULL, CUT_COL_INT, 0, 0, 0},
    {NULL, "outlier_mark", "", CUT_COL_STR, -7, 0, 0}, /* text only */
    {"top_kernel", "top_kernel", "top kernel", CUT_COL_STR, 0, 0, CUT_COL_GAP},
    {"top_kernel_ns", NULL, NULL, CUT_COL_INT, 0, 0, 0}, /* with a top kernel */
    {NULL, "top_kernel_ns", "its time", CUT_COL_DUR, 13, 0, 0},
    {"top_kernel_mangled", "top_kernel_mangled", NULL, CUT_COL_STR, 0, 0, 0},
};
static const struct cut_table_def step_def = {
    step_cols, CUT_NCOLS(step_cols),
    "host pid rank step outlier_mark dur_ns gpu_busy_pct calls_ns sync_ns top_kernel_ns "
    "top_kernel",
    "range host pid rank step ts dur_ns gpu_busy_ns gpu_busy_pct calls_ns sync_ns outlier "
    "top_kernel_ns top_kernel top_kernel_mangled"};

static json_t *
step_table(const struct cut_steps *s, enum cut_fmt fmt)
{
	struct cut_table *t = cut_table_new(&step_def, fmt);
	if (fmt == CUT_FMT_TEXT && s->nhosts < 2)
		cut_table_hide(t, "host");
	for (size_t i = 0; i < s->nsteps; i++) {
		const struct cut_step *x = &s->steps[i];
		cut_table_add(
		    t, CUT_ROW(CUT_S(s->range), CUT_S(x->host), CUT_I(x->pid),
		               CUT_IF(x->rank >= 0, CUT_I(x->rank)), CUT_I(x->n), CUT_I(x->ts),
		               CUT_I(x->dur), CUT_I(x->gpu_busy), CUT_R(pct(x->gpu_busy, x->dur)),
		               CUT_I(x->calls), CUT_I(x->sync), CUT_J(json_boolean(x->outlier)),
		               CUT_I(x->outlier), CUT_S(x->outlier ? "outlier" : ""),
		               CUT_S(cut_table_name(x->top)), CUT_IF(x->top, CUT_I(x->top_ns)),
		               CUT_IF(x->top, CUT_I(x->top_ns)), CUT_S(cut_table_mangled(x->top))));
	}
	return cut_table_end(t);
}

static const struct cut_col steps_cols[] = {
    {"range", "range", NULL, CUT_COL_STR, 0, 0, 0},
    {"host", "host", "host", CUT_COL_STR, -12, 0, 0}, /* text: of several hosts */
    {"pid", "pid", "pid", CUT_COL_INT, 8, 0, 0},
    {"rank", "rank", "rank", CUT_COL_INT, 5, 0, 0},
    {"steps", "steps", "steps", CUT_COL_INT, 6, 0, 0},
    {"med_ns", "med_ns", NULL, CUT_COL_REAL, 0, 1, 0},
    {NULL, NULL, "median", CUT_COL_DUR, 13, 0, 0},
    {"p10_ns", "p10_ns", NULL, CUT_COL_REAL, 0, 1, 0},
    {NULL, NULL, "p10", CUT_COL_DUR, 13, 0, 0},
    {"p90_ns", "p90_ns", NULL, CUT_COL_REAL, 0, 1, 0},
    {NULL, NULL, "p90", CUT_COL_DUR, 13, 0, 0},
    {"spread_ns", "spread_ns", NULL, CUT_COL_REAL, 0, 1, 0},
    {NULL, NULL, "spread", CUT_COL_DUR, 13, 0, 0},
    {"threshold_ns", "threshold_ns", NULL, CUT_COL_REAL, 0, 1, 0},
    {NULL, NULL, "threshold", CUT_COL_DUR, 13, 0, 0},
    {"outliers", "outliers", NULL, CUT_COL_INT, 0, 0, 0},
    {"outlier_steps", NULL, NULL, CUT_COL_JSON, 0, 0, 0},
    {NULL, "outlier_steps", NULL, CUT_COL_STR, 0, 0, 0},
    {NULL, "outlier_list", "outliers", CUT_COL_STR, 0, 0, CUT_COL_GAP}, /* text: "none" */
};
static const struct cut_table_def steps_def = {
    steps_cols, CUT_NCOLS(steps_cols), NULL,
    "range host pid rank steps med_ns p10_ns p90_ns spread_ns threshold_ns outliers "
    "outlier_steps"};

/* A duration of the summary, whole nanoseconds, for text (saturated, as sums are). */
static int64_t
whole_ns(double ns)
{
	return ns >= (double)INT64_MAX ? INT64_MAX : (int64_t)(ns + 0.5);
}

static json_t *
steps_summary(const struct cut_steps *s, enum cut_fmt fmt)
{
	struct cut_table *t = cut_table_new(&steps_def, fmt);
	struct cut_buf list = {0};
	if (fmt == CUT_FMT_TEXT && s->nhosts < 2)
		cut_table_hide(t, "host");
	for (size_t i = 0, at = 0; i < s->nprocs; at += (size_t)s->procs[i++].steps) {
		const struct cut_step_proc *p = &s->procs[i];
		json_t *out = json_array();
		buf_reset(&list);
		buf_add(&list, "", 0);
		for (size_t j = at; j < at + (size_t)p->steps; j++)
			if (s->steps[j].outlier) {
				json_array_append_new(out, json_integer(s->steps[j].n));
				buf_addf(&list, "%s%lld", list.len ? ", " : "",
				         (long long)s->steps[j].n);
			}
		cut_table_add(
		    t, CUT_ROW(CUT_S(s->range), CUT_S(p->host), CUT_I(p->pid),
		               CUT_IF(p->rank >= 0, CUT_I(p->rank)), CUT_I(p->steps), CUT_R(p->med),
		               CUT_I(whole_ns(p->med)), CUT_R(p->p10), CUT_I(whole_ns(p->p10)),
		               CUT_R(p->p90), CUT_I(whole_ns(p->p90)), CUT_R(p->spread),
		               CUT_I(whole_ns(p->spread)), CUT_R(p->threshold),
		               CUT_I(whole_ns(p->threshold)), CUT_I(p->outliers), CUT_J(out),
		               CUT_S(list.s), CUT_S(list.len ? list.s : "none")));
	}
	buf_free(&list);
	return cut_table_end(t);
}

static void
steps_text(const struct cut_steps *s)
{
	if (!s->nsteps) {
		cut_table_say("\nSteps: no instance of NVTX range \"%s\"", cut_esc(s->range));
		return;
	}
	cut_table_say(
	    "\nSteps: each instance of NVTX range \"%s\", per process (gpu busy: the share of the "
	    "step "
	    "its GPU work covered; in calls: the time one of its threads was in a runtime or "
	    "driver call; in sync: in a synchronising one; top kernel: the one whose work "
	    "covered most of the step)",
	    cut_esc(s->range));
	step_table(s, CUT_FMT_TEXT);
	cut_table_say(
	    "\nSteps per process: median, p10, p90, spread (p90 - p10), and the outliers: "
	    "the steps longer than the threshold, p90 + spread");
	steps_summary(s, CUT_FMT_TEXT);
}

static json_t *
steps_json(const struct cut_steps *s)
{
	json_t *o = json_pack("{s:s}", "range", s->range);
	json_object_set_new(o, "rows", step_table(s, CUT_FMT_JSON));
	json_object_set_new(o, "processes", steps_summary(s, CUT_FMT_JSON));
	return o;
}

/* The per-rank view, for a trace of several ranks. */
static const struct cut_col rank_cols[] = {
    {"rank", "rank", "rank", CUT_COL_INT, 6, 0, 0},
    {"events", "events", "events", CUT_COL_INT, 9, 0, 0},
    {"api_calls", "api_calls", "api", CUT_COL_INT, 8, 0, 0},
    {"api_ns", "api_ns", "api time", CUT_COL_DUR, 13, 0, 0},
    {"runtime_calls", "runtime_calls", "runtime", CUT_COL_INT, 8, 0, 0},
    {"runtime_ns", "runtime_ns", "runtime time", CUT_COL_DUR, 13, 0, 0},
    {"gpu_work", "gpu_work", "gpu work", CUT_COL_INT, 9, 0, 0},
    {"gpu_busy_ns", "gpu_busy_ns", "gpu busy", CUT_COL_DUR, 13, 0, 0},
    {"top_kernel", "top_kernel", "top kernel", CUT_COL_STR, 0, 0, CUT_COL_GAP},
    {"top_kernel_ns", NULL, NULL, CUT_COL_INT, 0, 0, 0}, /* with a top kernel */
    {NULL, "top_kernel_ns", "its total", CUT_COL_DUR, 13, 0, 0},
    {"top_kernel_mangled", "top_kernel_mangled", NULL, CUT_COL_STR, 0, 0, 0},
};
static const struct cut_table_def rank_def = {
    rank_cols, CUT_NCOLS(rank_cols),
    "rank events api_calls api_ns runtime_calls runtime_ns gpu_work gpu_busy_ns top_kernel_ns "
    "top_kernel",
    "rank events api_calls api_ns runtime_calls runtime_ns gpu_work gpu_busy_ns top_kernel_ns "
    "top_kernel top_kernel_mangled"};

static json_t *
rank_table(const struct cut_rank_stats *k, enum cut_fmt fmt)
{
	struct cut_table *t = cut_table_new(&rank_def, fmt);
	for (size_t i = 0; i < k->nrows; i++) {
		const struct cut_rank_row *r = &k->rows[i];
		cut_table_add(
		    t, CUT_ROW(CUT_I(r->rank), CUT_I(r->events), CUT_I(r->api_calls), CUT_I(r->api),
		               CUT_I(r->runtime_calls), CUT_I(r->runtime), CUT_I(r->work),
		               CUT_I(r->gpu_busy), CUT_S(cut_table_name(r->top_kernel)),
		               CUT_IF(r->top_kernel, CUT_I(r->top_total)), CUT_I(r->top_total),
		               CUT_S(cut_table_mangled(r->top_kernel))));
	}
	return cut_table_end(t);
}

/* Per NCCL kernel, the rank that waited most and the straggler (the job view's rule). */
static const struct cut_col wait_cols[] = {
    {"kernel", "kernel", "kernel", CUT_COL_STR, 0, 0, CUT_COL_GAP},
    {"ranks", "ranks", "ranks", CUT_COL_INT, 6, 0, 0},
    {"rank", "nccl_waited_most_rank", "waited most", CUT_COL_INT, 11, 0, 0},
    {"max_ns", "max_ns", "its total", CUT_COL_DUR, 14, 0, 0},
    {"min_ns", "min_ns", "its total", CUT_COL_DUR, 14, 0, 0},
    {"straggler", "straggler_rank", "straggler", CUT_COL_INT, 9, 0, 0},
    {"kernel_mangled", "kernel_mangled", NULL, CUT_COL_STR, 0, 0, 0},
};
static const struct cut_table_def wait_def = {
    wait_cols, CUT_NCOLS(wait_cols), "rank max_ns straggler min_ns ranks kernel",
    "nccl_waited_most_rank ranks max_ns min_ns straggler_rank kernel kernel_mangled"};

static json_t *
wait_table(const struct cut_rank_stats *k, enum cut_fmt fmt)
{
	struct cut_table *t = cut_table_new(&wait_def, fmt);
	for (size_t i = 0; i < k->nnccl; i++) {
		const struct cut_rank_straggler *g = &k->nccl[i];
		cut_table_add(t, CUT_ROW(CUT_S(cut_table_name(g->name)), CUT_I(g->ranks),
		                         CUT_I(g->rank), CUT_I(g->max), CUT_I(g->min),
		                         CUT_I(g->least), CUT_S(cut_table_mangled(g->name))));
	}
	return cut_table_end(t);
}

/* Whether a sum reached INT64_MAX and stopped there: those totals are lower bounds (the
 * averages, from wider sums, are not). */
#define SATURATED                                                                                  \
	"some sums reached the largest 64-bit integer and stopped there: they are lower bounds "   \
	"(the averages are exact)"
/* The calls' ioctls were not counted: cutmerge had not, and the trace came out of order. */
#define UNSORTED_IOCTLS                                                                            \
	"the trace is out of order, so the ioctls inside each call are not counted: "              \
	"cutmerge sorts it (cutmerge t.jsonl | cutstat)"
static bool
saturated(const struct cut_stats *st, const struct cut_stats *rt, const struct cut_gpu_stats *g,
          const struct cut_nvtx_stats *nv, const struct cut_rank_stats *rk)
{
	return st->saturated || rt->saturated || g->saturated || nv->saturated || rk->saturated;
}

/* What a device's processes' overlapping work was taken for (gpushare.h), in a note. */
static void
overlap_note(const struct cut_gpu_stats *g, const struct cut_gpu_busy *d)
{
	char a[32], b[32];
	if (d->overlap_recorded <= 0)
		return;
	cut_format_duration((double)d->overlap_recorded, a, sizeof(a));
	if (g->as_recorded)
		cut_table_say("note: on %s the work of %lld processes overlapped %s, taken as "
		              "recorded (-O: they ran at once, as under MPS); without MPS the GPU "
		              "runs one process's work at a time, and cutstat tells it apart",
		              cut_esc(d->key), (long long)d->procs, a);
	else
		cut_table_say("note: on %s the work of %lld processes overlapped %s as recorded: a "
		              "GPU without MPS runs one process's work at a time, so where they "
		              "overlapped the piece that ended first ran, and %lld pieces lost %s "
		              "in all to it (cut-events(5); -O takes them as recorded; cuthook -S "
		              "times every start, the mode for a shared GPU)",
		              cut_esc(d->key), (long long)d->procs, a, (long long)d->resolved,
		              cut_format_duration((double)d->resolved_ns, b, sizeof(b)));
	if (!g->as_recorded && d->switch_ns > 0)
		cut_table_say(
		    "note: on %s a switch from one process to another took %s (the median "
		    "wait of work submitted before the other's ended), which neither's "
		    "work holds where a bound spanned it",
		    cut_esc(d->key), cut_format_duration((double)d->switch_ns, a, sizeof(a)));
}

/* The runtimes linked into other objects, whose calls a runtime layer in the trace lacks
 * (cut-events(5): runtimes_unrecorded), in a note: the reason such a layer counts fewer calls
 * than a profiler does. */
static void
unrecorded_note(const struct cut_stats *st)
{
	if (!st->nunrecorded || !st->layer_events[CUT_RUNTIME])
		return;
	struct cut_buf b = {0};
	for (size_t i = 0; i < st->nunrecorded; i++) {
		if (i)
			buf_adds(&b, ", ");
		cut_text_escape(&b, st->unrecorded[i], strlen(st->unrecorded[i]));
	}
	cut_table_say("note: the runtime layer lacks the calls of the CUDA runtime linked into %s "
	              "(their driver calls are in the api layer)",
	              b.s);
	buf_free(&b);
}

static void
print_text(const struct cut_stats *st, const struct cut_stats *rt, const struct cut_gpu_stats *g,
           const struct cut_nvtx_stats *nv, const struct cut_rank_stats *rk)
{
	char a[32], b[32], c[32], d[32], e[32];
	int64_t traced = st->first < 0 ? 0 : st->last - st->first;
	int64_t events = 0;
	for (int l = 0; l < CUT_NLAYERS; l++)
		events += st->layer_events[l];
	cut_table_say("%lld events over %s (first start to last end)", (long long)events,
	              cut_format_duration((double)traced, a, sizeof(a)));
	if (st->lost)
		cut_table_say("warning: the capture lost %lld events: every total is a lower bound",
		              (long long)st->lost);
	if (st->untimed)
		cut_table_say("note: %lld API events without a duration are counted by layer only",
		              (long long)st->untimed);
	if (saturated(st, rt, g, nv, rk))
		cut_table_say("note: %s", SATURATED);
	if (st->ioctls_unsorted || rt->ioctls_unsorted)
		cut_table_say("note: %s", UNSORTED_IOCTLS);
	unrecorded_note(st);

	if (st->nfns == 0)
		cut_table_say("\nno timed driver API calls");
	else {
		cut_table_say("\nTime by category (driver API)");
		cat_table(st, traced, CUT_FMT_TEXT);
		cut_table_say("\nDriver API functions");
		fn_table(st, CUT_FMT_TEXT, NULL, st->layer_events[CUT_IOCTL] > 0);
		if (st->nslow) {
			cut_table_say("\nSlowest calls");
			slow_table(st, CUT_FMT_TEXT);
		}
	}
	if (rt->nfns) {
		cut_table_say("\nRuntime API functions (layer runtime)");
		fn_table(rt, CUT_FMT_TEXT, NULL, st->layer_events[CUT_IOCTL] > 0);
	}
	if (nv->nranges) {
		cut_table_say(
		    "\nNVTX ranges (time inside: events of the range's thread that start in it; "
		    "GPU: work submitted from it)");
		nvtx_table(nv, CUT_FMT_TEXT);
	}
	if (acc.steps)
		steps_text(acc.steps);
	if (rk->nrows >= 2) {
		cut_table_say(
		    "\nPer rank (a record without a rank is its process's; %lld records of "
		    "processes of no rank left out)",
		    (long long)rk->unranked);
		rank_table(rk, CUT_FMT_TEXT);
		if (rk->nnccl) {
			cut_table_say(
			    "\nNCCL waits (per kernel the rank that waited most inside it for the "
			    "others, its instances the longest in total, and the straggler they "
			    "waited for, the shortest: the job view's rule)");
			wait_table(rk, CUT_FMT_TEXT);
		}
	}

	if (!g->count)
		cut_table_say(
		    "\nGPU work: none in the trace (the gpu layer was off or not recorded)");
	else {
		cut_table_say("\nGPU work (timed on the device: layer gpu)");
		gpu_table(g, CUT_FMT_TEXT);
		bool copies = false;
		for (size_t i = 0; i < g->nnames; i++)
			copies |= g->names[i].bytes > 0;
		if (copies) {
			cut_table_say(
			    "\nGPU copies and memsets (bandwidth = bytes / time on the device)");
			copy_table(g);
		}
		cut_table_say("\nGPU busy (time covered by at least one piece of work)");
		busy_table("device", g->devices, g->ndevices, traced, CUT_FMT_TEXT);
		for (size_t i = 0; i < g->ndevices; i++)
			overlap_note(g, &g->devices[i]);
		busy_table("stream", g->streams, g->nstreams, traced, CUT_FMT_TEXT);
		busy_table("process", g->procs, g->nprocs, traced, CUT_FMT_TEXT);
		bounded_note(g);
		if (g->lat_count)
			cut_table_say(
			    "\nLaunch latency (submitting call's start to the work's start): "
			    "%lld, min %s, median %s, p90 %s, p99 %s, max %s",
			    (long long)g->lat_count,
			    cut_format_duration((double)g->lat_min, a, sizeof(a)),
			    cut_format_duration(g->lat_med, b, sizeof(b)),
			    cut_format_duration(g->lat_p90, c, sizeof(c)),
			    cut_format_duration(g->lat_p99, d, sizeof(d)),
			    cut_format_duration((double)g->lat_max, e, sizeof(e)));
	}

	bool xfers = false;
	for (int dir = 0; dir < CUT_X_NDIRS; dir++)
		xfers |= st->xfer_calls[dir] != 0;
	if (xfers) {
		cut_table_say(
		    "\nTransfers (bandwidth = bytes / time inside the API calls; asynchronous "
		    "copies return early)");
		xfer_table(st, CUT_FMT_TEXT);
	}
	if (traced == 0 && st->layer_events[CUT_API] == 0)
		return;
	cut_table_say(
	    "\nTime by layer (total: summed over threads and streams, so %%traced can pass "
	    "100%%; per thread: total / threads)");
	layer_table(st, traced, CUT_FMT_TEXT);
	size_t width = cut_table_width();
	cut_table_say("\nVerdict: %s", verdict_in(st, g, width ? width - 9 : 0));
}

/* The tables as CSV, each after a blank line, as nsys stats writes one file per report. */
static void
print_csv(const struct cut_stats *st, const struct cut_stats *rt, const struct cut_gpu_stats *g,
          const struct cut_nvtx_stats *nv, const struct cut_rank_stats *rk)
{
	fn_table(st, CUT_FMT_CSV, "name", st->layer_events[CUT_IOCTL] > 0);
	if (g->count) {
		putchar('\n');
		gpu_table(g, CUT_FMT_CSV);
	}
	if (rt->nfns) {
		putchar('\n');
		fn_table(rt, CUT_FMT_CSV, "runtime_name", st->layer_events[CUT_IOCTL] > 0);
	}
	if (nv->nranges) {
		putchar('\n');
		nvtx_table(nv, CUT_FMT_CSV);
	}
	if (acc.steps) {
		putchar('\n');
		step_table(acc.steps, CUT_FMT_CSV);
		putchar('\n');
		steps_summary(acc.steps, CUT_FMT_CSV);
	}
	if (rk->nrows >= 2) {
		putchar('\n');
		rank_table(rk, CUT_FMT_CSV);
		if (rk->nnccl) {
			putchar('\n');
			wait_table(rk, CUT_FMT_CSV);
		}
	}
	if (saturated(st, rt, g, nv, rk))
		warnx("%s", SATURATED);
	if (st->ioctls_unsorted || rt->ioctls_unsorted)
		warnx("%s", UNSORTED_IOCTLS);
}

static void
set_int(json_t *o, const char *k, int64_t v)
{
	json_object_set_new(o, k, json_integer(v));
}

static json_t *
gpu_json(const struct cut_gpu_stats *g, int64_t traced)
{
	json_t *o = json_object();
	set_int(o, "work", g->count);
	set_int(o, "total_ns", g->total);
	set_int(o, "bounded", g->bounded);
	set_int(o, "bounded_ns", g->bounded_ns);
	if (g->resolved) {
		set_int(o, "resolved", g->resolved);
		set_int(o, "resolved_ns", g->resolved_ns);
	}
	json_object_set_new(o, "names", gpu_table(g, CUT_FMT_JSON));
	json_object_set_new(o, "devices",
	                    busy_table("device", g->devices, g->ndevices, traced, CUT_FMT_JSON));
	json_object_set_new(o, "streams",
	                    busy_table("stream", g->streams, g->nstreams, traced, CUT_FMT_JSON));
	json_object_set_new(o, "processes",
	                    busy_table("process", g->procs, g->nprocs, traced, CUT_FMT_JSON));
	if (g->lat_count) {
		json_t *l = json_object();
		set_int(l, "count", g->lat_count);
		set_int(l, "min_ns", g->lat_min);
		json_object_set_new(l, "med_ns", json_real(g->lat_med));
		json_object_set_new(l, "p90_ns", json_real(g->lat_p90));
		json_object_set_new(l, "p99_ns", json_real(g->lat_p99));
		set_int(l, "max_ns", g->lat_max);
		json_object_set_new(o, "launch_latency", l);
	}
	return o;
}

/* What cutstat given several summaries merges into the job (cut_job_print) and cutdiff
 * compares: per function, kernel and NVTX range the counts, totals, extremes and log
 * histograms, which add up exactly. */
static json_t *
summary_json(const struct cut_stats *st, const struct cut_stats *rt, const struct cut_gpu_stats *g,
             const struct cut_nvtx_stats *nv, const struct cut_rank_stats *rk)
{
	int64_t *ranks = cut_xcalloc(rk->nrows, sizeof(*ranks));
	for (size_t i = 0; i < rk->nrows; i++)
		ranks[i] = rk->rows[i].rank;
	struct cut_summary_src src = {
	    st, rt, g, nv, !nv->fold, acc.rank >= 0 ? acc.rank : -1, ranks, rk->nrows};
	json_t *o = cut_summary_of(&src);
	free(ranks);
	return o;
}

static void
print_json(const struct cut_stats *st, const struct cut_stats *rt, const struct cut_gpu_stats *g,
           const struct cut_nvtx_stats *nv, const struct cut_rank_stats *rk)
{
	json_t *root = json_object();
	int64_t traced = st->first < 0 ? 0 : st->last - st->first;
	set_int(root, "traced_ns", traced);
	set_int(root, "api_ns", st->api_total);
	set_int(root, "lost", st->lost);
	set_int(root, "untimed", st->untimed);
	if (saturated(st, rt, g, nv, rk))
		json_object_set_new(root, "saturated", json_true());
	if (st->ioctls_unsorted || rt->ioctls_unsorted)
		json_object_set_new(root, "ioctls_unsorted", json_true());
	if (st->nunrecorded) {
		json_t *a = json_array();
		for (size_t i = 0; i < st->nunrecorded; i++)
			json_array_append_new(a, json_string(st->unrecorded[i]));
		json_object_set_new(root, "runtimes_unrecorded", a);
	}
	if (g->count)
		json_object_set_new(root, "gpu", gpu_json(g, traced));
	json_object_set_new(root, "categories", cat_table(st, traced, CUT_FMT_JSON));
	json_object_set_new(root, "functions",
	                    fn_table(st, CUT_FMT_JSON, NULL, st->layer_events[CUT_IOCTL] > 0));
	if (rt->nfns)
		json_object_set_new(
		    root, "runtime",
		    fn_table(rt, CUT_FMT_JSON, NULL, st->layer_events[CUT_IOCTL] > 0));
	if (nv->nranges)
		json_object_set_new(root, "nvtx", nvtx_table(nv, CUT_FMT_JSON));
	if (acc.steps)
		json_object_set_new(root, "steps", steps_json(acc.steps));
	if (rk->nrows >= 2) {
		json_t *o = json_object();
		set_int(o, "unranked", rk->unranked);
		json_object_set_new(o, "rows", rank_table(rk, CUT_FMT_JSON));
		json_object_set_new(o, "nccl_waits", wait_table(rk, CUT_FMT_JSON));
		json_object_set_new(root, "ranks", o);
	}
	json_object_set_new(root, "slowest", slow_table(st, CUT_FMT_JSON));
	json_object_set_new(root, "transfers", xfer_table(st, CUT_FMT_JSON));
	json_object_set_new(root, "layers", layer_table(st, traced, CUT_FMT_JSON));
	json_object_set_new(root, "verdict", json_string(verdict(st, g, 0)));
	json_object_set_new(root, "summary", summary_json(st, rt, g, nv, rk));
	if (json_dumpf(root, stdout, JSON_INDENT(2)) < 0)
		err(CUT_EXIT_FATAL, "write error on standard output");
	putchar('\n');
	json_decref(root);
}

static void
add_event(struct cut_reader *r, struct cut_event *ev, void *arg)
{
	struct acc *a = arg;
	if (cut_reader_serial(r) != a->input) {
		a->input = cut_reader_serial(r);
		stats_next_input(a->st);
		stats_next_input(a->rt);
	}
	if (ev->has & CUT_HAS_RANK)
		a->rank = a->rank == -1 || a->rank == ev->rank ? ev->rank : -2;
	stats_add(a->st, ev);
	if (ev->layer == CUT_RUNTIME)
		stats_add(a->rt, ev);
	else
		stats_ioctl(a->rt, ev); /* (of the ioctl layer's events) */
	gpustats_add(a->gpu, ev);
	nvtxstats_add(a->nvtx, ev);
	rankstats_add(a->ranks, ev);
	if (a->steps)
		steps_add(a->steps, ev);
}

int
main(int argc, char *argv[])
{
	enum { NVTX_FULL = 256 };
	const char *steps = NULL;
	static const struct option longopts[] = {
	    {"json", no_argument, NULL, 'j'},
	    {"csv", no_argument, NULL, 'c'},
	    {"wide", no_argument, NULL, 'w'},
	    {"mangled", no_argument, NULL, 'M'},
	    {"nvtx-full", no_argument, NULL, NVTX_FULL},
	    {"steps", required_argument, NULL, 's'},
	    {"overlap", no_argument, NULL, 'O'},
	    {NULL, 0, NULL, 0},
	};
	bool nvtx_full = false, wide = false, mangled = false, as_recorded = false;
	enum cut_fmt fmt = CUT_FMT_TEXT;
	unsigned long ntop = 10;
	int ch, status = CUT_EXIT_OK;
	char *end;

	cut_std_args_help(argc, argv, usage, opts);

	while ((ch = getopt_long(argc, argv, "jcwMOn:s:", longopts, NULL)) != -1) {
		switch (ch) {
		case 'j': fmt = CUT_FMT_JSON; break;
		case 'c': fmt = CUT_FMT_CSV; break;
		case 'w': wide = true; break;
		case 'M': mangled = true; break;
		case 'O': as_recorded = true; break;
		case NVTX_FULL: nvtx_full = true; break;
		case 's': steps = optarg; break;
		case 'n':
			ntop = strtoul(optarg, &end, 10);
			if (*optarg < '0' || *optarg > '9' || *end || ntop > 100000)
				errx(CUT_EXIT_FATAL, "-n: not a count from 0 to 100000: %s",
				     optarg);
			break;
		default: usage();
		}
	}
	argc -= optind;
	argv += optind;
	cut_table_display(wide ? 0 : CUT_TABLE_WIDTH, mangled);

	/* Summaries of cutstat -j (one per rank): the job. */
	int nsum = 0;
	for (int i = 0; i < argc; i++)
		nsum += cut_job_is_summary(argv[i]);
	if (nsum && nsum != argc)
		errx(CUT_EXIT_FATAL, "traces and cutstat -j summaries cannot be mixed");
	if (nsum && steps)
		errx(CUT_EXIT_FATAL,
		     "-s: steps are counted in traces, not in cutstat -j summaries");
	if (nsum)
		return cut_finish_output(cut_job_print(argc, argv, fmt));

	struct cut_stats *st = stats_new(ntop);
	struct acc a = {st,
	                stats_new_layer(0, CUT_RUNTIME),
	                gpustats_new(),
	                nvtxstats_new(!nvtx_full),
	                rankstats_new(),
	                -1,
	                steps ? steps_new(steps) : NULL,
	                0};
	a.gpu->as_recorded = as_recorded;
	status = cut_read_all(argc, argv, add_event, &a);
	acc = a;
	stats_finish(st);
	stats_finish(a.rt);
	gpustats_finish(a.gpu);
	nvtxstats_finish(a.nvtx);
	rankstats_finish(a.ranks);
	if (acc.rank == -1 && a.ranks->nrows == 1) /* no record said it: its process's */
		acc.rank = a.ranks->rows[0].rank;
	if (a.steps)
		steps_finish(a.steps);
	if (fmt == CUT_FMT_JSON)
		print_json(st, a.rt, a.gpu, a.nvtx, a.ranks);
	else if (fmt == CUT_FMT_CSV)
		print_csv(st, a.rt, a.gpu, a.nvtx, a.ranks);
	else
		print_text(st, a.rt, a.gpu, a.nvtx, a.ranks);
	stats_free(st);
	stats_free(a.rt);
	gpustats_free(a.gpu);
	nvtxstats_free(a.nvtx);
	rankstats_free(a.ranks);
	steps_free(a.steps);
	return cut_finish_output(status);
}
