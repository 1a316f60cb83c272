/* cutstat: where the time went in a trace: by category, by driver function (like nsys
 * cuda_api_sum), slowest calls, bytes moved, time per layer, and a one-line verdict. */
#include <err.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cut.h"
#include "event.h"
#include "reader.h"
#include "stats.h"
#include "units.h"

enum format { TEXT, JSON, CSV };

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

/* One sentence naming what dominates the driver API time. */
static void
verdict(const struct cut_stats *st, char *out, size_t n)
{
	char t[32];
	if (st->api_total == 0) {
		snprintf(out, n, "no timed driver API calls in the trace");
		return;
	}
	int c = 0;
	for (int i = 1; i < CUT_NCATS; i++)
		if (st->cat_total[i] > st->cat_total[c])
			c = i;
	double share = pct(st->cat_total[c], st->api_total);
	const struct cut_fn_stat *f = top_fn_in(st, (enum cut_category)c);
	const char *fn = f ? f->name : "?";
	int len;
	switch (c) {
	case CUT_CAT_SYNC:
		len = snprintf(out, n,
		               "GPU-bound: %.0f%% of driver API time is spent waiting for the "
		               "GPU, mostly in %s",
		               share, fn);
		break;
	case CUT_CAT_INIT:
	case CUT_CAT_MODULE:
	case CUT_CAT_CONTEXT:
	case CUT_CAT_DEVICE:
		len = snprintf(out, n,
		               "start-up dominated: %.0f%% of driver API time is %s, led by "
		               "%s; profile a longer steady-state run",
		               share, cut_category_name(c), fn);
		break;
	case CUT_CAT_LAUNCH:
		len = snprintf(
		    out, n,
		    "launch-bound: %.0f%% of driver API time is %lld launch calls "
		    "(%s each on average); consider CUDA graphs or fewer, larger kernels",
		    share, (long long)st->cat_calls[c],
		    cut_format_duration((double)st->cat_total[c] / (double)st->cat_calls[c], t,
		                        sizeof(t)));
		break;
	case CUT_CAT_QUERY:
		len = snprintf(out, n,
		               "query overhead: %.0f%% of driver API time is %lld cheap "
		               "queries, led by %s",
		               share, (long long)st->cat_calls[c], fn);
		break;
	default:
		len = snprintf(out, n, "%s-bound: %.0f%% of driver API time is %s calls, led by %s",
		               cut_category_name(c), share, cut_category_name(c), fn);
	}
	int64_t in_ioctl = 0;
	for (size_t i = 0; i < st->nfns; i++)
		in_ioctl += st->fns[i].ioctl_ns;
	if (len > 0 && (size_t)len < n && pct(in_ioctl, st->api_total) >= 20)
		snprintf(out + len, n - (size_t)len,
		         "; %.0f%% of all driver API time is inside "
		         "NVIDIA ioctls",
		         pct(in_ioctl, st->api_total));
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

	printf("\nDriver API functions\n%8s %14s %8s %12s %12s %11s %12s %12s ", "Time(%)",
	       "Total(ns)", "Calls", "Avg(ns)", "Med(ns)", "Min(ns)", "Max(ns)", "StdDev(ns)");
	if (st->have_nioctl)
		printf("%7s %13s ", "Ioctls", "InIoctl(ns)");
	printf("%-9s %s\n", "Category", "Name");
	for (size_t i = 0; i < st->nfns; i++) {
		const struct cut_fn_stat *f = &st->fns[i];
		printf("%7.1f%% %14lld %8lld %12.1f %12.1f %11lld %12lld %12.1f ",
		       pct(f->total, st->api_total), (long long)f->total, (long long)f->calls,
		       (double)f->total / (double)f->calls, f->med, (long long)f->min,
		       (long long)f->max, f->stddev);
		if (st->have_nioctl)
			printf("%7lld %13lld ", (long long)f->ioctls, (long long)f->ioctl_ns);
		printf("%-9s %s\n", cut_category_name(f->cat), f->name);
	}

	if (st->nslow) {
		printf("\nSlowest calls\n%14s %20s %8s %8s  %s\n", "duration", "ts(ns)", "pid",
		       "tid", "name");
		for (size_t i = 0; i < st->nslow; i++)
			printf("%14s %20lld %8lld %8lld  %s\n",
			       cut_format_duration((double)st->slow[i].dur, a, sizeof(a)),
			       (long long)st->slow[i].ts, (long long)st->slow[i].pid,
			       (long long)st->slow[i].tid, st->slow[i].name);
	}
}

static void
print_other_sections(const struct cut_stats *st, int64_t traced)
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
	printf("\nTime by layer\n%-7s %9s %14s %8s\n", "layer", "events", "total", "%traced");
	for (int l = 0; l < CUT_NLAYERS; l++)
		if (st->layer_events[l] && l != CUT_META)
			printf("%-7s %9lld %14s %7.1f%%\n", cut_layer_name(l),
			       (long long)st->layer_events[l],
			       cut_format_duration((double)st->layer_total[l], a, sizeof(a)),
			       pct(st->layer_total[l], traced));

	char v[512];
	verdict(st, v, sizeof(v));
	printf("\nVerdict: %s\n", v);
}

static void
print_text(const struct cut_stats *st)
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

	if (st->nfns == 0)
		printf("\nno timed driver API calls\n");
	else
		print_api_tables(st, traced);
	print_other_sections(st, traced);
}

static void
set_int(json_t *o, const char *k, int64_t v)
{
	json_object_set_new(o, k, json_integer(v));
}

static void
print_json(const struct cut_stats *st)
{
	json_t *root = json_object(), *cats = json_array(), *fns = json_array(),
	       *slow = json_array(), *xfers = json_array(), *layers = json_array();
	int64_t traced = st->first < 0 ? 0 : st->last - st->first;
	set_int(root, "traced_ns", traced);
	set_int(root, "api_ns", st->api_total);
	set_int(root, "lost", st->lost);
	set_int(root, "untimed", st->untimed);
	for (int c = 0; c < CUT_NCATS; c++) {
		if (!st->cat_calls[c])
			continue;
		json_t *o = json_pack("{s:s}", "category", cut_category_name(c));
		set_int(o, "calls", st->cat_calls[c]);
		set_int(o, "total_ns", st->cat_total[c]);
		json_array_append_new(cats, o);
	}
	for (size_t i = 0; i < st->nfns; i++) {
		const struct cut_fn_stat *f = &st->fns[i];
		json_t *o =
		    json_pack("{s:s,s:s}", "name", f->name, "category", cut_category_name(f->cat));
		set_int(o, "calls", f->calls);
		set_int(o, "total_ns", f->total);
		json_object_set_new(o, "avg_ns", json_real((double)f->total / (double)f->calls));
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
		json_array_append_new(layers, o);
	}
	char v[512];
	verdict(st, v, sizeof(v));
	json_object_set_new(root, "categories", cats);
	json_object_set_new(root, "functions", fns);
	json_object_set_new(root, "slowest", slow);
	json_object_set_new(root, "transfers", xfers);
	json_object_set_new(root, "layers", layers);
	json_object_set_new(root, "verdict", json_string(v));
	if (json_dumpf(root, stdout, JSON_INDENT(2)) < 0)
		err(CUT_EXIT_FATAL, "write error on standard output");
	putchar('\n');
	json_decref(root);
}

static void
print_csv(const struct cut_stats *st)
{
	printf("name,category,calls,total_ns,avg_ns,med_ns,min_ns,max_ns,stddev_ns,time_pct%s\n",
	       st->have_nioctl ? ",ioctls,ioctl_ns" : "");
	for (size_t i = 0; i < st->nfns; i++) {
		const struct cut_fn_stat *f = &st->fns[i];
		printf("%s,%s,%lld,%lld,%.1f,%.1f,%lld,%lld,%.1f,%.2f", f->name,
		       cut_category_name(f->cat), (long long)f->calls, (long long)f->total,
		       (double)f->total / (double)f->calls, f->med, (long long)f->min,
		       (long long)f->max, f->stddev, pct(f->total, st->api_total));
		if (st->have_nioctl)
			printf(",%lld,%lld", (long long)f->ioctls, (long long)f->ioctl_ns);
		putchar('\n');
	}
}

static void
add_event(struct cut_reader *r, struct cut_event *ev, void *st)
{
	(void)r;
	stats_add(st, ev);
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

	struct cut_stats *st = stats_new(ntop);
	status = cut_read_all(argc, argv, add_event, st);
	stats_finish(st);
	if (fmt == JSON)
		print_json(st);
	else if (fmt == CSV)
		print_csv(st);
	else
		print_text(st);
	stats_free(st);
	return cut_finish_output(status);
}
