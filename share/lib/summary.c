/* summary.c: the log-scale histogram of summary.h. */
#include <math.h>

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
cut_hist_quantile(const int64_t *h, int64_t n, double q)
{
	if (n <= 0)
		return 0;
	int64_t want = (int64_t)(q * (double)(n - 1)) + 1, seen = 0;
	for (int b = 0; b < CUT_HIST_N; b++)
		if ((seen += h[b]) >= want)
			return cut_hist_value(b);
	return cut_hist_value(CUT_HIST_N - 1);
}
