/* job.h: cutstat's summaries of many traces (one per rank) merged into the job: per driver
 * function and per GPU kernel the total over ranks, each rank's share, the spread between the
 * ranks, quantiles from the merged histograms (summary.h), and the straggler of each collective
 * kernel. A summary is what `cutstat -j` prints: its "summary" member. */
#ifndef CUT_JOB_H
#define CUT_JOB_H

#include <stdbool.h>

#include <jansson.h>

/* Whether path holds a summary, decided without taking anything from a pipe: a regular file
 * whose JSON object has a "summary" member, or an anonymous pipe (/dev/stdin, <(...)) whose
 * first line is "{" alone (as cutstat -j writes it) or such an object. Anything else (a named
 * FIFO, a device, "-") is a trace. */
bool cut_job_is_summary(const char *path);
/* Merges the summaries named in paths and prints the job, as text or (json) one JSON object.
 * Returns an exit status (cut.h): a file that is no summary is reported and exits 2. */
int cut_job_print(int n, char **paths, bool json);

#endif
