/* sort.h: events sorted by time in bounded memory, as sort(1) does it: sorted runs spilled to
 * temporary files once the memory given is used, then merged. What turns an unsorted trace
 * (lines written late by a thread's buffer, GPU work written when it completed, NVTX ranges
 * written when they ended) into a sorted one, in cutmerge and in the cuthook launcher. */
#ifndef CUT_SORT_H
#define CUT_SORT_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "event.h"

struct cut_sorter;
/* A temporary file in $TMPDIR (else /tmp), open for reading and writing and unlinked at once
 * (nothing is left behind whatever happens), or NULL with errno set. */
FILE *cut_temp_file(void);

/* Default memory of a sorter, in bytes of held events (CUT_SORT_MEMORY in the environment, in
 * MiB, overrides it for every sorter of a tool). */
#define CUT_SORT_MEMORY (256u << 20)

/* The memory a tool gives its sorters in all: CUT_SORT_MEMORY from the environment (MiB) when
 * set, else the default. */
size_t cut_sort_memory(void);

/*
 * A new sorter holding at most mem bytes of events (each its strings and 120 bytes) before it
 * writes a sorted run to a temporary file in $TMPDIR (else /tmp), unlinked at once so that
 * nothing is left behind whatever happens; 0 means cut_sort_memory(). Returns NULL when memory
 * runs out.
 */
struct cut_sorter *cut_sorter_new(size_t mem);
/*
 * Adds a copy of ev, tagged with line (the line of the input it came from, for messages).
 * Events of equal ts come out in the order they were added. Returns 0, or -1 with errno set
 * when a run could not be written (a full disk): the sorter is then unusable.
 */
int cut_sorter_add(struct cut_sorter *s, const struct cut_event *ev, uint64_t line);
/*
 * After the last cut_sorter_add: the next event in (ts, order added) order into *ev (its
 * strings valid until the next call), its line into *line when line is not NULL. Returns 1,
 * 0 when there are no more, -1 with errno set on a read error of a run.
 */
int cut_sorter_next(struct cut_sorter *s, struct cut_event *ev, uint64_t *line);
/* Events added so far; runs written to temporary files so far. */
uint64_t cut_sorter_count(const struct cut_sorter *s);
unsigned cut_sorter_runs(const struct cut_sorter *s);
/* Whether the events were added in order already (then nothing was sorted). */
int cut_sorter_was_sorted(const struct cut_sorter *s);
void cut_sorter_free(struct cut_sorter *s);

#endif
