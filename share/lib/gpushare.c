/* gpushare.c: the rule of gpushare.h, one sort and one pass: by device, pieces in order of
 * end, keeping the latest end of any process met and the latest of a process other than that
 * one, which is all a piece needs to know of the others. */
#include <stdbool.h>
#include <stdlib.h>

#include "cut.h"
#include "gpushare.h"

struct order {
	uint64_t device, proc;
	int64_t end, start;
	size_t i;
};

static int
by_end(const void *a, const void *b)
{
	const struct order *x = a, *y = b;
	if (x->device != y->device)
		return x->device < y->device ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	if (x->start != y->start) /* the later start, the shorter piece, first */
		return x->start > y->start ? -1 : 1;
	if (x->proc != y->proc)
		return x->proc < y->proc ? -1 : 1;
	return (x->i > y->i) - (x->i < y->i);
}

size_t
cut_gpu_resolve(struct cut_gpu_piece *p, size_t n)
{
	struct order *o = cut_xcalloc(n ? n : 1, sizeof(*o));
	for (size_t i = 0; i < n; i++) {
		o[i] = (struct order){p[i].device, p[i].proc, p[i].end, p[i].start, i};
		p[i].resolved = p[i].start;
	}
	qsort(o, n, sizeof(*o), by_end);
	size_t moved = 0;
	/* Per device: the latest end met (of process first) and the latest of any other. */
	int64_t first = 0, other = 0;
	uint64_t first_proc = 0;
	bool have_first = false, have_other = false;
	for (size_t k = 0; k < n; k++) {
		struct cut_gpu_piece *q = &p[o[k].i];
		if (k == 0 || o[k].device != o[k - 1].device)
			have_first = have_other = false;
		bool mine = have_first && first_proc == q->proc;
		int64_t before = mine ? other : first;
		if ((mine ? have_other : have_first) && before > q->start) {
			q->resolved = before < q->end ? before : q->end;
			moved++;
		}
		if (q->end <= q->resolved)
			continue; /* no length: no evidence */
		/* Ends come in order, so this one is the latest met. */
		if (!mine && have_first) {
			other = first;
			have_other = true;
		}
		first = q->end;
		first_proc = q->proc;
		have_first = true;
	}
	free(o);
	return moved;
}
