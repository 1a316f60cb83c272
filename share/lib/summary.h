/* summary.h: what `cutstat -j` writes as its "summary" member, so that summaries of many traces
 * merge (the job view, job.h) and compare (cutdiff) exactly. Durations are kept as a fixed
 * log-scale histogram that merges by adding counts: 8 buckets a power of two, so a quantile read
 * from the histogram (its bucket's geometric middle) is within 4.4 % of the true one. */
#ifndef CUT_SUMMARY_H
#define CUT_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#define CUT_HIST_N 512 /* bucket 0: 0 ns; bucket b >= 1: [2^((b-1)/8), 2^(b/8)) ns */
#define CUT_HIST_ERR 0.044

/* A histogram that holds only the buckets from lo to hi - 1, counts[b - lo]: what one name
 * keeps, a few hundred bytes where all the buckets would take 4 KB. */
struct cut_hist {
	int lo, hi;
	int64_t *counts;
};

/* The histogram of the n durations of v (ns); exits (status 2) on no memory. */
void cut_hist_of(struct cut_hist *h, const int64_t *v, size_t n);
/* Counts one duration more, widening the buckets held as needed; exits (status 2) on no
 * memory. A zeroed struct cut_hist is an empty histogram. */
void cut_hist_add(struct cut_hist *h, int64_t ns);
/* Adds the counts of all, a histogram of every bucket (all[b] for bucket b), widening the
 * buckets held once. A count that would pass INT64_MAX stays there and sets *saturated. */
void cut_hist_merge(struct cut_hist *h, const int64_t *all, bool *saturated);
void cut_hist_free(struct cut_hist *h);

/* The bucket of a duration in ns. */
int cut_hist_bucket(int64_t ns);
/* The duration a bucket stands for: the geometric middle of its range. */
double cut_hist_value(int b);
/* The q-quantile (0..1) of a histogram of n counts (counts that saturated at INT64_MAX
 * included). */
double cut_hist_quantile(const int64_t *h, int64_t n, double q);
/* The same of a histogram that holds only the buckets lo to hi - 1: h[b - lo] for bucket b. */
double cut_hist_quantile_range(const int64_t *h, int lo, int hi, int64_t n, double q);

/*
 * The summary. Version 1: "version", the trace's "rank" or the "ranks" it holds, and lists of
 * items, each {"name", "calls", "total_ns", "min_ns", "max_ns", "hist": [[bucket, count],
 * ...]}: "functions" (driver API) and "kernels" (GPU work by name; "kind" kernel, memcpy,
 * memset, graph or other); a newer cutstat adds "runtime" (the runtime's functions) and "nvtx"
 * (NVTX ranges by "domain" and name, "calls" their instances; "nvtx_full" true when the names
 * were not folded to their operator, cut_nvtx_op_len). Readers of version 1 ignore members
 * they do not know, so the added lists need no new version; a list missing is one the writer
 * did not count.
 */
#define CUT_SUMMARY_VERSION 1

/* The lists of a summary, in the order they are written. */
enum cut_sum_list {
	CUT_SUM_FUNCTIONS,
	CUT_SUM_RUNTIME,
	CUT_SUM_KERNELS,
	CUT_SUM_NVTX,
	CUT_SUM_NLISTS
};
/* Their members: "functions", "runtime", "kernels", "nvtx". */
extern const char *const cut_sum_list_key[CUT_SUM_NLISTS];

/* The summary is written from cutstat's accumulators by analyze/stat/summarize.h. */

/* An item of a summary as read. The strings are the JSON's, valid while it lives. */
struct cut_sum_item {
	const char *name;
	const char *domain; /* an NVTX range's ("" for the default domain), else NULL */
	const char *kind;   /* GPU work's, NULL where the summary has none */
	int64_t calls, total, min, max;
	int64_t hist[CUT_HIST_N]; /* every bucket; counts that would pass INT64_MAX stay there */
};
/* Reads item o of a list of a summary into it. Returns false, with why (n bytes) saying what
 * is missing or out of range, when o is not an item. */
bool cut_summary_item(json_t *o, enum cut_sum_list list, struct cut_sum_item *it, char *why,
                      size_t n);

/* The ranks a summary covers, into *r (grown by cut_grow, *cap its capacity): its "rank", or
 * the "ranks" that a summary of a trace of several lists. Returns how many. */
size_t cut_summary_ranks(json_t *s, int64_t **r, size_t *cap);

/*
 * Whether path holds a summary, decided without taking anything from a pipe: a regular file
 * (plain, gzip or zstd) whose JSON object has a "summary" member, or an anonymous pipe
 * (/dev/stdin, <(...)) whose first line, seen without reading it, is "{" alone (as cutstat -j
 * writes it) or such an object. Anything else (a named FIFO, a device, "-") is a trace.
 */
bool cut_summary_sniff(const char *path);
/*
 * Reads the summary in path (plain, gzip or zstd) and returns its "summary" object, a new
 * reference. Exits with status 2 when path holds no summary (no JSON object with a "summary"
 * object, no "version") or one of a version newer than CUT_SUMMARY_VERSION, saying so and that
 * this program cannot read it; with status 3 when it cannot be read or its compressed data is
 * corrupt or cut short.
 */
json_t *cut_summary_load(const char *path);

#endif
