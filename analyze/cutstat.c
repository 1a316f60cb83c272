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
#include "event.h"
#include "gpustats.h"
#include "job.h"
#include "nvtxstats.h"
#include "rankstats.h"
#include "reader.h"
#include "stats.h"
#include "summary.h"
#include "text.h"
#include "units.h"

enum format { TEXT, JSON, CSV };

/* Both accumulators, for the reader's callback, and the rank the trace is of. */
struct acc {
	struct cut_stats *st, *rt; /* driver API, runtime */
	struct cut_gpu_stats *gpu;
	struct cut_nvtx_stats *nvtx;
	struct cut_rank_stats *ranks;
	int64_t rank; /* -1: none seen; -2: several */
};
static struct acc acc = {.rank = -1};

static void
usage(void)
{
	fprintf(stderr, "usage: cutstat [-jc] [-n top] [file ...]\n");
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
gpu_verdict(const struct cut_stats *st, const struct cut_gpu_stats *g, struct cut_buf *out)
{
	const struct cut_gpu_busy *dev;
	if (!g->count)
		return false;
	double busy = gpu_busy_share(st, g, &dev);
	const char *top = g->nnames ? cut_esc(g->names[0].name) : "?";
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
 * else from the driver API time. */
static const char *
verdict(const struct cut_stats *st, const struct cut_gpu_stats *g)
{
	static struct cut_buf out;
	char t[32];
	out.len = 0;
	buf_add(&out, "", 0);
	if (gpu_verdict(st, g, &out))
		return out.s;
	if (st->api_total == 0)
		return "no timed driver API calls in the trace";
	int c = 0;
	for (int i = 1; i < CUT_NCATS; i++)
		if (st->cat_total[i] > st->cat_total[c])
			c = i;
	double share = pct(st->cat_total[c], st->api_total);
	const struct cut_fn_stat *f = top_fn_in(st, (enum cut_category)c);
	const char *fn = f ? cut_esc(f->name) : "?";
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

/* A per-function table (nsys stats' cuda_api_sum) of the layer st counts. */
static void
print_fn_table(const char *title, const struct cut_stats *st)
{
	printf("\n%s\n%8s %14s %8s %12s %12s %11s %12s %12s ", title, "Time(%)", "Total(ns)",
	       "Calls", "Avg(ns)", "Med(ns)", "Min(ns)", "Max(ns)", "StdDev(ns)");
	if (st->have_nioctl)
		printf("%7s %13s ", "Ioctls", "InIoctl(ns)");
	printf("%-9s %s\n", "Category", "Name");
	for (size_t i = 0; i < st->nfns; i++) {
		const struct cut_fn_stat *f = &st->fns[i];
		printf("%7.1f%% %14lld %8lld %12.1f %12.1f %11lld %12lld %12.1f ",
		       pct(f->total, st->api_total), (long long)f->total, (long long)f->calls,
		       f->avg, f->med, (long long)f->min, (long long)f->max, f->stddev);
		if (st->have_nioctl)
			printf("%7lld %13lld ", (long long)f->ioctls, (long long)f->ioctl_ns);
		printf("%-9s %s\n", cut_category_name(f->cat), cut_esc(f->name));
	}
}

static void
print_api_tables(const struct cut_stats *st, int64_t traced)
{
	char a[32];
	printf("\nTime by category (driver API)\n%-10s %9s %14s %7s %8s\n", "category", "calls",
	       "total", "%api", "%traced");
	for (int c = 0; c < CUT_NCATS; c++)
		if (st->cat_calls[c])
			printf("%-10s %9lld %14s %6.1f%% %7.1f%%\n", cut_category_name(c),
			       (long long)st->cat_calls[c],
			       cut_format_duration((double)st->cat_total[c], a, sizeof(a)),
			       pct(st->cat_total[c], st->api_total), pct(st->cat_total[c], traced));

	print_fn_table("Driver API functions", st);

	if (st->nslow) {
		printf("\nSlowest calls\n%14s %20s %8s %8s  %s\n", "duration", "ts(ns)", "pid",
		       "tid", "name");
		for (size_t i = 0; i < st->nslow; i++)
			printf("%14s %20lld %8lld %8lld  %s\n",
			       cut_format_duration((double)st->slow[i].dur, a, sizeof(a)),
			       (long long)st->slow[i].ts, (long long)st->slow[i].pid,
			       (long long)st->slow[i].tid, cut_esc(st->slow[i].name));
	}
}

static void
print_other_sections(const struct cut_stats *st, const struct cut_gpu_stats *g, int64_t traced)
{
	char a[32];
	int any = 0;
	for (int d = 0; d < CUT_X_NDIRS; d++)
		any |= st->xfer_calls[d] != 0;
	if (any) {
		printf("\nTransfers (bandwidth = bytes / time inside the API calls; asynchronous "
		       "copies return early)\n%-7s %8s %16s %14s %10s\n",
		       "dir", "calls", "bytes", "time", "GB/s");
		for (int d = 0; d < CUT_X_NDIRS; d++)
			if (st->xfer_calls[d])
				printf("%-7s %8lld %16lld %14s %10.2f\n", cut_xfer_names[d],
				       (long long)st->xfer_calls[d], (long long)st->xfer_bytes[d],
				       cut_format_duration((double)st->xfer_time[d], a, sizeof(a)),
				       st->xfer_time[d]
				           ? (double)st->xfer_bytes[d] / (double)st->xfer_time[d]
				           : 0.0);
	}

	if (traced == 0 && st->layer_events[CUT_API] == 0)
		return;
	/* Totals add up the spans of every thread (and stream): with threads at once, a layer's
	 * share of the traced time passes 100%; per thread it cannot. */
	printf("\nTime by layer (total: summed over threads and streams, so %%traced can pass "
	       "100%%; per thread: total / threads)\n%-7s %9s %14s %8s %8s %11s\n",
	       "layer", "events", "total", "%traced", "threads", "per thread");
	for (int l = 0; l < CUT_NLAYERS; l++)
		if (st->layer_events[l] && l != CUT_META) {
			int64_t n = st->layer_threads[l];
			printf("%-7s %9lld %14s %7.1f%% %8lld %10.1f%%\n", cut_layer_name(l),
			       (long long)st->layer_events[l],
			       cut_format_duration((double)st->layer_total[l], a, sizeof(a)),
			       pct(st->layer_total[l], traced), (long long)n,
			       n ? pct(st->layer_total[l], traced) / (double)n : 0.0);
		}

	printf("\nVerdict: %s\n", verdict(st, g));
}

static void
print_busy(const char *what, const struct cut_gpu_busy *b, size_t n, int64_t traced)
{
	char a[32];
	printf("%-44s %9s %14s %8s\n", what, "work", "busy", "%traced");
	for (size_t i = 0; i < n; i++)
		printf("%-44s %9lld %14s %7.1f%%\n", cut_esc(b[i].key), (long long)b[i].work,
		       cut_format_duration((double)b[i].busy, a, sizeof(a)),
		       pct(b[i].busy, traced));
}

/* The gpu layer's tables (nsys stats' cuda_gpu_kern_sum and cuda_gpu_mem_time_sum). */
static void
print_gpu(const struct cut_gpu_stats *g, int64_t traced)
{
	char a[32], b[32], c[32], d[32], e[32];
	if (!g->count) {
		printf("\nGPU work: none in the trace (the gpu layer was off or not recorded)\n");
		return;
	}
	printf("\nGPU work (timed on the device: layer gpu)\n%8s %14s %9s %12s %12s %11s %12s "
	       "%12s %-7s %s\n",
	       "Time(%)", "Total(ns)", "Instances", "Avg(ns)", "Med(ns)", "Min(ns)", "Max(ns)",
	       "StdDev(ns)", "Kind", "Name");
	for (size_t i = 0; i < g->nnames; i++) {
		const struct cut_gpu_name *nm = &g->names[i];
		printf("%7.1f%% %14lld %9lld %12.1f %12.1f %11lld %12lld %12.1f %-7s %s\n",
		       pct(nm->total, g->total), (long long)nm->total, (long long)nm->count,
		       nm->avg, nm->med, (long long)nm->min, (long long)nm->max, nm->stddev,
		       nm->cat, cut_esc(nm->name));
	}
	int any = 0;
	for (size_t i = 0; i < g->nnames; i++)
		any |= g->names[i].bytes > 0;
	if (any) {
		printf("\nGPU copies and memsets (bandwidth = bytes / time on the device)\n%-12s "
		       "%9s %16s %14s %10s\n",
		       "name", "count", "bytes", "time", "GB/s");
		for (size_t i = 0; i < g->nnames; i++) {
			const struct cut_gpu_name *nm = &g->names[i];
			if (nm->bytes > 0)
				printf("%-12s %9lld %16lld %14s %10.2f\n", cut_esc(nm->name),
				       (long long)nm->count, (long long)nm->bytes,
				       cut_format_duration((double)nm->total, a, sizeof(a)),
				       nm->total ? (double)nm->bytes / (double)nm->total : 0.0);
		}
	}
	printf("\nGPU busy (time covered by at least one piece of work)\n");
	print_busy("device", g->devices, g->ndevices, traced);
	for (size_t i = 0; i < g->ndevices; i++)
		if (g->devices[i].overlap > 0)
			printf("note: on %s the work of %lld processes overlapped %s: unless MPS "
			       "was on, the GPU ran one process's work at a time and a start taken "
			       "from its call includes the wait for the other's turn (record with "
			       "cuthook -S)\n",
			       cut_esc(g->devices[i].key), (long long)g->devices[i].procs,
			       cut_format_duration((double)g->devices[i].overlap, a, sizeof(a)));
	print_busy("stream", g->streams, g->nstreams, traced);
	print_busy("process", g->procs, g->nprocs, traced);
	if (g->lat_count)
		printf("\nLaunch latency (submitting call's start to the work's start): %lld, min "
		       "%s, median %s, p90 %s, p99 %s, max %s\n",
		       (long long)g->lat_count,
		       cut_format_duration((double)g->lat_min, a, sizeof(a)),
		       cut_format_duration(g->lat_med, b, sizeof(b)),
		       cut_format_duration(g->lat_p90, c, sizeof(c)),
		       cut_format_duration(g->lat_p99, d, sizeof(d)),
		       cut_format_duration((double)g->lat_max, e, sizeof(e)));
}

/* Time by NVTX range: the ranges' own time and that of each layer inside them. */
static void
print_nvtx(const struct cut_nvtx_stats *n)
{
	if (!n->nranges)
		return;
	printf("\nNVTX ranges (time inside: events of the range's thread that start in it; GPU: "
	       "work submitted from it)\n%8s %14s %14s %14s %14s %14s  %-10s %s\n",
	       "Count", "Total(ns)", "Runtime(ns)", "DriverAPI(ns)", "Ioctl(ns)", "GPU(ns)",
	       "Domain", "Name");
	for (size_t i = 0; i < n->nranges; i++) {
		const struct cut_nvtx_range *r = &n->ranges[i];
		printf("%8lld %14lld %14lld %14lld %14lld %14lld  %-10s %s\n", (long long)r->count,
		       (long long)r->total, (long long)r->runtime, (long long)r->api,
		       (long long)r->ioctl, (long long)r->gpu,
		       *r->domain ? cut_esc(r->domain) : "-", cut_esc(r->name));
	}
}

/* The per-rank view, for a trace of several ranks. */
static void
print_ranks(const struct cut_rank_stats *k)
{
	char a[32], b[32], c[32];
	if (k->nrows < 2)
		return;
	printf("\nPer rank (events with a rank; %lld without one left out)\n%6s %9s %14s %9s "
	       "%14s  %s\n",
	       (long long)k->unranked, "rank", "api", "api time", "gpu work", "gpu busy",
	       "top kernel (total)");
	for (size_t i = 0; i < k->nrows; i++) {
		const struct cut_rank_row *r = &k->rows[i];
		printf("%6lld %9lld %14s %9lld %14s  %s (%s)\n", (long long)r->rank,
		       (long long)r->api_calls, cut_format_duration((double)r->api, a, sizeof(a)),
		       (long long)r->work, cut_format_duration((double)r->gpu_busy, b, sizeof(b)),
		       r->top_kernel ? cut_esc(r->top_kernel) : "-",
		       cut_format_duration((double)r->top_total, c, sizeof(c)));
	}
	if (!k->nnccl)
		return;
	printf("\nNCCL waits (per kernel the rank that waited most inside it for the others, its "
	       "instances the longest in total, and the straggler they waited for, the "
	       "shortest: the job view's rule)\n%11s %14s %9s %14s %6s  %s\n",
	       "waited most", "its total", "straggler", "its total", "ranks", "kernel");
	for (size_t i = 0; i < k->nnccl; i++) {
		const struct cut_rank_straggler *g = &k->nccl[i];
		printf("%11lld %14s %9lld %14s %6lld  %s\n", (long long)g->rank,
		       cut_format_duration((double)g->max, a, sizeof(a)), (long long)g->least,
		       cut_format_duration((double)g->min, b, sizeof(b)), (long long)g->ranks,
		       cut_esc(g->name));
	}
}

/* Whether a sum reached INT64_MAX and stopped there: those totals are lower bounds (the
 * averages, from wider sums, are not). */
#define SATURATED                                                                                  \
	"some sums reached the largest 64-bit integer and stopped there: they are lower bounds "   \
	"(the averages are exact)"
static bool
saturated(const struct cut_stats *st, const struct cut_stats *rt, const struct cut_gpu_stats *g,
          const struct cut_nvtx_stats *nv, const struct cut_rank_stats *rk)
{
	return st->saturated || rt->saturated || g->saturated || nv->saturated || rk->saturated;
}

static void
print_text(const struct cut_stats *st, const struct cut_stats *rt, const struct cut_gpu_stats *g,
           const struct cut_nvtx_stats *nv, const struct cut_rank_stats *rk)
{
	char a[32];
	int64_t traced = st->first < 0 ? 0 : st->last - st->first;
	int64_t events = 0;
	for (int l = 0; l < CUT_NLAYERS; l++)
		events += st->layer_events[l];
	printf("%lld events over %s (first start to last end)\n", (long long)events,
	       cut_format_duration((double)traced, a, sizeof(a)));
	if (st->lost)
		printf("warning: the capture lost %lld events: every total is a lower bound\n",
		       (long long)st->lost);
	if (st->untimed)
		printf("note: %lld API events without a duration are counted by layer only\n",
		       (long long)st->untimed);
	if (saturated(st, rt, g, nv, rk))
		printf("note: %s\n", SATURATED);

	if (st->nfns == 0)
		printf("\nno timed driver API calls\n");
	else
		print_api_tables(st, traced);
	if (rt->nfns)
		print_fn_table("Runtime API functions (layer runtime)", rt);
	print_nvtx(nv);
	print_ranks(rk);
	print_gpu(g, traced);
	print_other_sections(st, g, traced);
}

static void
set_int(json_t *o, const char *k, int64_t v)
{
	json_object_set_new(o, k, json_integer(v));
}

static json_t *
busy_json(const struct cut_gpu_busy *b, size_t n, int64_t traced)
{
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++) {
		json_t *o = json_pack("{s:s}", "key", b[i].key);
		set_int(o, "work", b[i].work);
		set_int(o, "busy_ns", b[i].busy);
		json_object_set_new(o, "busy_pct", json_real(pct(b[i].busy, traced)));
		if (b[i].procs > 1) { /* a device processes share */
			set_int(o, "processes", b[i].procs);
			set_int(o, "overlap_ns", b[i].overlap);
		}
		json_array_append_new(a, o);
	}
	return a;
}

static json_t *
gpu_json(const struct cut_gpu_stats *g, int64_t traced)
{
	json_t *o = json_object(), *names = json_array();
	set_int(o, "work", g->count);
	set_int(o, "total_ns", g->total);
	for (size_t i = 0; i < g->nnames; i++) {
		const struct cut_gpu_name *nm = &g->names[i];
		json_t *x = json_pack("{s:s,s:s}", "name", nm->name, "kind", nm->cat);
		set_int(x, "instances", nm->count);
		set_int(x, "total_ns", nm->total);
		json_object_set_new(x, "avg_ns", json_real(nm->avg));
		json_object_set_new(x, "med_ns", json_real(nm->med));
		set_int(x, "min_ns", nm->min);
		set_int(x, "max_ns", nm->max);
		json_object_set_new(x, "stddev_ns", json_real(nm->stddev));
		if (nm->bytes > 0) {
			set_int(x, "bytes", nm->bytes);
			json_object_set_new(
			    x, "gb_per_s",
			    json_real(nm->total ? (double)nm->bytes / (double)nm->total : 0.0));
		}
		json_array_append_new(names, x);
	}
	json_object_set_new(o, "names", names);
	json_object_set_new(o, "devices", busy_json(g->devices, g->ndevices, traced));
	json_object_set_new(o, "streams", busy_json(g->streams, g->nstreams, traced));
	json_object_set_new(o, "processes", busy_json(g->procs, g->nprocs, traced));
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

/* A histogram as [[bucket, count], ...], the buckets that have any. */
static json_t *
hist_json(const struct cut_hist *h)
{
	json_t *a = json_array();
	for (int b = h->lo; b < h->hi; b++)
		if (h->counts[b - h->lo])
			json_array_append_new(
			    a, json_pack("[i,I]", b, (json_int_t)h->counts[b - h->lo]));
	return a;
}

static json_t *
summary_item(const char *name, int64_t calls, int64_t total, int64_t min, int64_t max,
             const struct cut_hist *hist)
{
	json_t *o = json_pack("{s:s}", "name", name);
	set_int(o, "calls", calls);
	set_int(o, "total_ns", total);
	set_int(o, "min_ns", min);
	set_int(o, "max_ns", max);
	json_object_set_new(o, "hist", hist_json(hist));
	return o;
}

/* What cutstat given several summaries merges into the job (cut_job_print): per function
 * and kernel the counts, totals, extremes and log histograms, which add up exactly. */
static json_t *
summary_json(const struct cut_stats *st, const struct cut_gpu_stats *g,
             const struct cut_rank_stats *rk)
{
	json_t *o = json_object(), *fns = json_array(), *ks = json_array();
	set_int(o, "version", 1);
	if (acc.rank >= 0)
		set_int(o, "rank", acc.rank);
	else if (rk->nrows) { /* a trace of several: the job view must not count them twice */
		json_t *rs = json_array();
		for (size_t i = 0; i < rk->nrows; i++)
			json_array_append_new(rs, json_integer(rk->rows[i].rank));
		json_object_set_new(o, "ranks", rs);
	}
	for (size_t i = 0; i < st->nfns; i++) {
		const struct cut_fn_stat *f = &st->fns[i];
		json_array_append_new(
		    fns, summary_item(f->name, f->calls, f->total, f->min, f->max, &f->hist));
	}
	for (size_t i = 0; i < g->nnames; i++) {
		const struct cut_gpu_name *nm = &g->names[i];
		json_array_append_new(
		    ks, summary_item(nm->name, nm->count, nm->total, nm->min, nm->max, &nm->hist));
	}
	json_object_set_new(o, "functions", fns);
	json_object_set_new(o, "kernels", ks);
	return o;
}

static json_t *
fns_json(const struct cut_stats *st)
{
	json_t *fns = json_array();
	for (size_t i = 0; i < st->nfns; i++) {
		const struct cut_fn_stat *f = &st->fns[i];
		json_t *o =
		    json_pack("{s:s,s:s}", "name", f->name, "category", cut_category_name(f->cat));
		set_int(o, "calls", f->calls);
		set_int(o, "total_ns", f->total);
		json_object_set_new(o, "avg_ns", json_real(f->avg));
		json_object_set_new(o, "med_ns", json_real(f->med));
		set_int(o, "min_ns", f->min);
		set_int(o, "max_ns", f->max);
		json_object_set_new(o, "stddev_ns", json_real(f->stddev));
		if (st->have_nioctl) {
			set_int(o, "ioctls", f->ioctls);
			set_int(o, "ioctl_ns", f->ioctl_ns);
		}
		json_array_append_new(fns, o);
	}
	return fns;
}

static json_t *
nvtx_json(const struct cut_nvtx_stats *n)
{
	json_t *a = json_array();
	for (size_t i = 0; i < n->nranges; i++) {
		const struct cut_nvtx_range *r = &n->ranges[i];
		json_t *o = json_pack("{s:s,s:s}", "domain", r->domain, "name", r->name);
		set_int(o, "count", r->count);
		set_int(o, "total_ns", r->total);
		set_int(o, "runtime_ns", r->runtime);
		set_int(o, "runtime_calls", r->nruntime);
		set_int(o, "api_ns", r->api);
		set_int(o, "api_calls", r->napi);
		set_int(o, "ioctl_ns", r->ioctl);
		set_int(o, "ioctls", r->nioctl);
		set_int(o, "gpu_ns", r->gpu);
		set_int(o, "gpu_work", r->ngpu);
		json_array_append_new(a, o);
	}
	return a;
}

static json_t *
ranks_json(const struct cut_rank_stats *k)
{
	json_t *o = json_object(), *rows = json_array(), *st = json_array();
	set_int(o, "unranked", k->unranked);
	for (size_t i = 0; i < k->nrows; i++) {
		const struct cut_rank_row *r = &k->rows[i];
		json_t *x = json_object();
		set_int(x, "rank", r->rank);
		set_int(x, "api_calls", r->api_calls);
		set_int(x, "api_ns", r->api);
		set_int(x, "gpu_work", r->work);
		set_int(x, "gpu_busy_ns", r->gpu_busy);
		if (r->top_kernel) {
			json_object_set_new(x, "top_kernel", json_string(r->top_kernel));
			set_int(x, "top_kernel_ns", r->top_total);
		}
		json_array_append_new(rows, x);
	}
	for (size_t i = 0; i < k->nnccl; i++) {
		const struct cut_rank_straggler *g = &k->nccl[i];
		json_t *x = json_pack("{s:s}", "kernel", g->name);
		set_int(x, "ranks", g->ranks);
		set_int(x, "rank", g->rank);
		set_int(x, "max_ns", g->max);
		set_int(x, "min_ns", g->min);
		set_int(x, "straggler", g->least);
		json_array_append_new(st, x);
	}
	json_object_set_new(o, "rows", rows);
	json_object_set_new(o, "nccl_waits", st);
	return o;
}

static void
print_json(const struct cut_stats *st, const struct cut_stats *rt, const struct cut_gpu_stats *g,
           const struct cut_nvtx_stats *nv, const struct cut_rank_stats *rk)
{
	json_t *root = json_object(), *cats = json_array(), *fns = fns_json(st),
	       *slow = json_array(), *xfers = json_array(), *layers = json_array();
	int64_t traced = st->first < 0 ? 0 : st->last - st->first;
	set_int(root, "traced_ns", traced);
	set_int(root, "api_ns", st->api_total);
	set_int(root, "lost", st->lost);
	set_int(root, "untimed", st->untimed);
	if (saturated(st, rt, g, nv, rk))
		json_object_set_new(root, "saturated", json_true());
	for (int c = 0; c < CUT_NCATS; c++) {
		if (!st->cat_calls[c])
			continue;
		json_t *o = json_pack("{s:s}", "category", cut_category_name(c));
		set_int(o, "calls", st->cat_calls[c]);
		set_int(o, "total_ns", st->cat_total[c]);
		json_array_append_new(cats, o);
	}
	for (size_t i = 0; i < st->nslow; i++) {
		json_t *o = json_pack("{s:s}", "name", st->slow[i].name);
		set_int(o, "ts", st->slow[i].ts);
		set_int(o, "dur", st->slow[i].dur);
		set_int(o, "pid", st->slow[i].pid);
		set_int(o, "tid", st->slow[i].tid);
		json_array_append_new(slow, o);
	}
	for (int d = 0; d < CUT_X_NDIRS; d++) {
		if (!st->xfer_calls[d])
			continue;
		json_t *o = json_pack("{s:s}", "dir", cut_xfer_names[d]);
		set_int(o, "calls", st->xfer_calls[d]);
		set_int(o, "bytes", st->xfer_bytes[d]);
		set_int(o, "time_ns", st->xfer_time[d]);
		json_array_append_new(xfers, o);
	}
	for (int l = 0; l < CUT_NLAYERS; l++) {
		if (!st->layer_events[l] || l == CUT_META)
			continue;
		json_t *o = json_pack("{s:s}", "layer", cut_layer_name(l));
		set_int(o, "events", st->layer_events[l]);
		set_int(o, "total_ns", st->layer_total[l]);
		set_int(o, "threads", st->layer_threads[l]);
		json_array_append_new(layers, o);
	}
	const char *v = verdict(st, g);
	if (g->count)
		json_object_set_new(root, "gpu", gpu_json(g, traced));
	json_object_set_new(root, "categories", cats);
	json_object_set_new(root, "functions", fns);
	if (rt->nfns)
		json_object_set_new(root, "runtime", fns_json(rt));
	if (nv->nranges)
		json_object_set_new(root, "nvtx", nvtx_json(nv));
	if (rk->nrows >= 2)
		json_object_set_new(root, "ranks", ranks_json(rk));
	json_object_set_new(root, "slowest", slow);
	json_object_set_new(root, "transfers", xfers);
	json_object_set_new(root, "layers", layers);
	json_object_set_new(root, "verdict", json_string(v));
	json_object_set_new(root, "summary", summary_json(st, g, rk));
	if (json_dumpf(root, stdout, JSON_INDENT(2)) < 0)
		err(CUT_EXIT_FATAL, "write error on standard output");
	putchar('\n');
	json_decref(root);
}

/* The GPU table as a second CSV table after a blank line, as nsys stats writes one file per
 * report. */
static void
print_gpu_csv(const struct cut_gpu_stats *g)
{
	if (!g->count)
		return;
	printf("\ngpu_name,kind,instances,total_ns,avg_ns,med_ns,min_ns,max_ns,stddev_ns,time_pct,"
	       "bytes\n");
	for (size_t i = 0; i < g->nnames; i++) {
		const struct cut_gpu_name *nm = &g->names[i];
		printf("%s,%s,%lld,%lld,%.1f,%.1f,%lld,%lld,%.1f,%.2f,%lld\n", cut_csv(nm->name),
		       nm->cat, (long long)nm->count, (long long)nm->total, nm->avg, nm->med,
		       (long long)nm->min, (long long)nm->max, nm->stddev, pct(nm->total, g->total),
		       (long long)nm->bytes);
	}
}

/* A per-function table as CSV; prefix names the first column ("name", "runtime_name"). */
static void
print_csv(const char *first, const struct cut_stats *st)
{
	printf("%s,category,calls,total_ns,avg_ns,med_ns,min_ns,max_ns,stddev_ns,time_pct%s\n",
	       first, st->have_nioctl ? ",ioctls,ioctl_ns" : "");
	for (size_t i = 0; i < st->nfns; i++) {
		const struct cut_fn_stat *f = &st->fns[i];
		printf("%s,%s,%lld,%lld,%.1f,%.1f,%lld,%lld,%.1f,%.2f", cut_csv(f->name),
		       cut_category_name(f->cat), (long long)f->calls, (long long)f->total, f->avg,
		       f->med, (long long)f->min, (long long)f->max, f->stddev,
		       pct(f->total, st->api_total));
		if (st->have_nioctl)
			printf(",%lld,%lld", (long long)f->ioctls, (long long)f->ioctl_ns);
		putchar('\n');
	}
}

/* The NVTX table as CSV, after a blank line. */
static void
print_nvtx_csv(const struct cut_nvtx_stats *n)
{
	if (!n->nranges)
		return;
	printf("\nnvtx_domain,nvtx_name,count,total_ns,runtime_ns,runtime_calls,api_ns,api_calls,"
	       "ioctl_ns,ioctls,gpu_ns,gpu_work\n");
	for (size_t i = 0; i < n->nranges; i++) {
		const struct cut_nvtx_range *r = &n->ranges[i];
		printf("%s,", cut_csv(r->domain));
		printf("%s,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld\n", cut_csv(r->name),
		       (long long)r->count, (long long)r->total, (long long)r->runtime,
		       (long long)r->nruntime, (long long)r->api, (long long)r->napi,
		       (long long)r->ioctl, (long long)r->nioctl, (long long)r->gpu,
		       (long long)r->ngpu);
	}
}

/* The per-rank tables as CSV, each after a blank line. */
static void
print_ranks_csv(const struct cut_rank_stats *k)
{
	if (k->nrows < 2)
		return;
	printf("\nrank,api_calls,api_ns,gpu_work,gpu_busy_ns,top_kernel_ns,top_kernel\n");
	for (size_t i = 0; i < k->nrows; i++) {
		const struct cut_rank_row *r = &k->rows[i];
		printf("%lld,%lld,%lld,%lld,%lld,%lld,%s\n", (long long)r->rank,
		       (long long)r->api_calls, (long long)r->api, (long long)r->work,
		       (long long)r->gpu_busy, (long long)r->top_total,
		       r->top_kernel ? cut_csv(r->top_kernel) : "");
	}
	if (!k->nnccl)
		return;
	printf("\nnccl_waited_most_rank,ranks,max_ns,min_ns,straggler_rank,kernel\n");
	for (size_t i = 0; i < k->nnccl; i++) {
		const struct cut_rank_straggler *g = &k->nccl[i];
		printf("%lld,%lld,%lld,%lld,%lld,%s\n", (long long)g->rank, (long long)g->ranks,
		       (long long)g->max, (long long)g->min, (long long)g->least, cut_csv(g->name));
	}
}

static void
add_event(struct cut_reader *r, struct cut_event *ev, void *arg)
{
	struct acc *a = arg;
	(void)r;
	if (ev->has & CUT_HAS_RANK)
		a->rank = a->rank == -1 || a->rank == ev->rank ? ev->rank : -2;
	stats_add(a->st, ev);
	if (ev->layer == CUT_RUNTIME)
		stats_add(a->rt, ev);
	if (ev->layer == CUT_GPU || ev->layer == CUT_META)
		gpustats_add(a->gpu, ev);
	nvtxstats_add(a->nvtx, ev);
	rankstats_add(a->ranks, ev);
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
	    {"json", no_argument, NULL, 'j'},
	    {"csv", no_argument, NULL, 'c'},
	    {NULL, 0, NULL, 0},
	};
	enum format fmt = TEXT;
	unsigned long ntop = 10;
	int ch, status = CUT_EXIT_OK;
	char *end;

	cut_std_args(argc, argv, usage);

	while ((ch = getopt_long(argc, argv, "jcn:", longopts, NULL)) != -1) {
		switch (ch) {
		case 'j': fmt = JSON; break;
		case 'c': fmt = CSV; break;
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

	/* Summaries of cutstat -j (one per rank): the job. */
	int nsum = 0;
	for (int i = 0; i < argc; i++)
		nsum += cut_job_is_summary(argv[i]);
	if (nsum && nsum != argc)
		errx(CUT_EXIT_FATAL, "traces and cutstat -j summaries cannot be mixed");
	if (nsum)
		return cut_finish_output(cut_job_print(argc, argv,
		                                       fmt == JSON  ? CUT_JOB_JSON
		                                       : fmt == CSV ? CUT_JOB_CSV
		                                                    : CUT_JOB_TEXT));

	struct cut_stats *st = stats_new(ntop);
	struct acc a = {
	    st, stats_new_layer(0, CUT_RUNTIME), gpustats_new(), nvtxstats_new(), rankstats_new(),
	    -1};
	status = cut_read_all(argc, argv, add_event, &a);
	acc = a;
	stats_finish(st);
	stats_finish(a.rt);
	gpustats_finish(a.gpu);
	nvtxstats_finish(a.nvtx);
	rankstats_finish(a.ranks);
	if (fmt == JSON)
		print_json(st, a.rt, a.gpu, a.nvtx, a.ranks);
	else if (fmt == CSV) {
		print_csv("name", st);
		print_gpu_csv(a.gpu);
		if (a.rt->nfns) {
			putchar('\n');
			print_csv("runtime_name", a.rt);
		}
		print_nvtx_csv(a.nvtx);
		print_ranks_csv(a.ranks);
		if (saturated(st, a.rt, a.gpu, a.nvtx, a.ranks))
			warnx("%s", SATURATED);
	} else
		print_text(st, a.rt, a.gpu, a.nvtx, a.ranks);
	stats_free(st);
	stats_free(a.rt);
	gpustats_free(a.gpu);
	nvtxstats_free(a.nvtx);
	rankstats_free(a.ranks);
	return cut_finish_output(status);
}
