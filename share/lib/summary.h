/* summary.h: durations kept as a fixed log-scale histogram, so that summaries of many traces
 * (cutstat -j, one per rank) merge exactly by adding counts: 8 buckets a power of two, so a
 * quantile read from the histogram (its bucket's geometric middle) is within 4.4 % of the true
 * one. */
#ifndef CUT_SUMMARY_H
#define CUT_SUMMARY_H

#include <stddef.h>
#include <stdint.h>

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

#endif
