/* summarize.h: cutstat -j's summary (summary.h's format) written from the analysers'
 * accumulators: the API and runtime statistics, the GPU and NVTX sections. */
#ifndef CUT_SUMMARIZE_H
#define CUT_SUMMARIZE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "gpustats.h"
#include "nvtxstats.h"
#include "stats.h"
#include "summary.h"

/* What a summary is written from: cutstat's accumulators after their _finish. */
struct cut_summary_src {
	const struct cut_stats *api, *runtime; /* runtime: from stats_new_layer(, CUT_RUNTIME) */
	const struct cut_gpu_stats *gpu;
	const struct cut_nvtx_stats *nvtx;
	bool nvtx_full;       /* the NVTX names were kept whole (not folded) */
	int64_t rank;         /* the trace's one rank, or -1 */
	const int64_t *ranks; /* else the ranks it holds (nranks of them, maybe none) */
	size_t nranks;
};
/* The summary object of src (a new reference); exits (status 2) on no memory. */
json_t *cut_summary_of(const struct cut_summary_src *src);

#endif
