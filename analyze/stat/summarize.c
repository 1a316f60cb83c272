/* summarize.c: the summary object of summarize.h, each list's items with their counts,
 * extremes and log histograms. */
#include "cut.h"
#include "summarize.h"

static void
set_int(json_t *o, const char *k, int64_t v)
{
	json_object_set_new(o, k, json_integer(v));
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
item_json(const char *name, int64_t calls, int64_t total, int64_t min, int64_t max,
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

static json_t *
fns_json(const struct cut_stats *st)
{
	json_t *a = json_array();
	for (size_t i = 0; st && i < st->nfns; i++) {
		const struct cut_fn_stat *f = &st->fns[i];
		json_array_append_new(
		    a, item_json(f->name, f->calls, f->total, f->min, f->max, &f->hist));
	}
	return a;
}

json_t *
cut_summary_of(const struct cut_summary_src *src)
{
	json_t *o = json_object(), *ks = json_array(), *nv = json_array();
	if (!o || !ks || !nv)
		cut_out_of_memory();
	set_int(o, "version", CUT_SUMMARY_VERSION);
	if (src->rank >= 0)
		set_int(o, "rank", src->rank);
	else if (src->nranks) { /* a trace of several: the job view must not count them twice */
		json_t *rs = json_array();
		for (size_t i = 0; i < src->nranks; i++)
			json_array_append_new(rs, json_integer(src->ranks[i]));
		json_object_set_new(o, "ranks", rs);
	}
	const struct cut_gpu_stats *g = src->gpu;
	for (size_t i = 0; g && i < g->nnames; i++) {
		const struct cut_gpu_name *nm = &g->names[i];
		json_t *it = item_json(nm->name, nm->count, nm->total, nm->min, nm->max, &nm->hist);
		json_object_set_new(it, "kind", json_string(nm->cat));
		json_array_append_new(ks, it);
	}
	const struct cut_nvtx_stats *n = src->nvtx;
	for (size_t i = 0; n && i < n->nranges; i++) {
		const struct cut_nvtx_range *r = &n->ranges[i];
		json_t *it = item_json(r->name, r->count, r->total, r->min, r->max, &r->hist);
		json_object_set_new(it, "domain", json_string(r->domain));
		json_array_append_new(nv, it);
	}
	json_object_set_new(o, "functions", fns_json(src->api));
	json_object_set_new(o, "kernels", ks);
	json_object_set_new(o, "runtime", fns_json(src->runtime));
	json_object_set_new(o, "nvtx", nv);
	if (src->nvtx_full)
		json_object_set_new(o, "nvtx_full", json_true());
	return o;
}
