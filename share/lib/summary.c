/* summary.c: the log-scale histogram of summary.h. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "cut.h"
#include "summary.h"

int
cut_hist_bucket(int64_t ns)
{
	if (ns < 1)
		return 0;
	int b = (int)floor(8 * log2((double)ns)) + 1;
	return b < CUT_HIST_N ? b : CUT_HIST_N - 1;
}

double
cut_hist_value(int b)
{
	return b <= 0 ? 0 : exp2(((double)b - 0.5) / 8);
}

double
cut_hist_quantile_range(const int64_t *h, int lo, int hi, int64_t n, double q)
{
	if (n <= 0 || lo >= hi)
		return 0;
	/* the rank of the value wanted, 1 to n, computed so that no n overflows it */
	double x = q * (double)(n - 1);
	int64_t want = x >= 0x1p63 ? INT64_MAX : (int64_t)x + 1, seen = 0;
	for (int b = lo; b < hi; b++)
		if (__builtin_add_overflow(seen, h[b - lo], &seen) || seen >= want)
			return cut_hist_value(b);
	return cut_hist_value(hi - 1);
}

double
cut_hist_quantile(const int64_t *h, int64_t n, double q)
{
	return cut_hist_quantile_range(h, 0, CUT_HIST_N, n, q);
}

void
cut_hist_of(struct cut_hist *h, const int64_t *v, size_t n)
{
	h->lo = CUT_HIST_N, h->hi = 0;
	for (size_t i = 0; i < n; i++) {
		int b = cut_hist_bucket(v[i]);
		h->lo = b < h->lo ? b : h->lo;
		h->hi = b >= h->hi ? b + 1 : h->hi;
	}
	if (h->lo >= h->hi) {
		h->lo = h->hi = 0;
		h->counts = NULL;
		return;
	}
	h->counts = cut_xcalloc((size_t)(h->hi - h->lo), sizeof(*h->counts));
	for (size_t i = 0; i < n; i++)
		h->counts[cut_hist_bucket(v[i]) - h->lo]++;
}

void
cut_hist_free(struct cut_hist *h)
{
	free(h->counts);
	h->counts = NULL;
	h->lo = h->hi = 0;
}
