/* job.h: cutstat's summaries of many traces (one per rank) merged into the job: per driver
 * function and per GPU kernel the total over ranks, each rank's share, the spread between the
 * ranks, quantiles from the merged histograms (summary.h), and the straggler of each collective
 * kernel. A summary is what `cutstat -j` prints: its "summary" member. */
#ifndef CUT_JOB_H
#define CUT_JOB_H

#include <stdbool.h>

#include <jansson.h>

#include "table.h"

/* Whether path holds a summary: cut_summary_sniff (summary.h). */
bool cut_job_is_summary(const char *path);
/*
 * Merges the summaries named in paths and prints the job as text, one JSON object or CSV
 * tables. A summary of a file or a rank already merged (its times would count twice) is
 * reported and left out, as is an item of a summary that is not one (a count out of range, a
 * name twice); sums that reach INT64_MAX stay there and are reported. Returns an exit status
 * (cut.h): 0, or 1 when something was left out. A file that is no summary, or of a version
 * newer than CUT_SUMMARY_VERSION, is reported and exits 2 (cut_summary_load).
 */
int cut_job_print(int n, char **paths, enum cut_fmt fmt);

#endif
