/* gpushare.c: the rule of gpushare.h in passes: the moves of pieces started at their call (in
 * order of end, keeping per device the latest end of any process met and the latest of a
 * process other than that one); the switch times measured, and the starts of the pieces that
 * ran first after a switch moved; the late pieces found (by their process's hold, then by their
 * twins: the longest each kernel launched alike took, timed at both ends); the first pass
 * again, the late ones now among those started at their call and a switch after another's end;
 * the device's slice measured on the preempted kernels, which places the pieces started at
 * their call that end inside one, and the twins, which bound those that end inside another
 * process's piece timed at both ends; a sweep per device that finds
 * which process ran at each moment (of the pieces covering it, a heap.h heap by end, the
 * top's process); the switch times taken off where one process's moments meet another's; and
 * each piece's parts, its span's share of its process's moments. */
#include <stdbool.h>
#include <stdlib.h>

#include "cut.h"
#include "gpushare.h"
#include "heap.h"

/* A piece in the order of the rule: device, then key (end or start), then the tie-breaks. */
struct order {
	uint64_t device, proc;
	int64_t key, end, start;
	size_t i;
};

static int
cmp_order(const void *a, const void *b)
{
	const struct order *x = a, *y = b;
	if (x->device != y->device)
		return x->device < y->device ? -1 : 1;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	if (x->start != y->start) /* the later start, the shorter piece, first */
		return x->start > y->start ? -1 : 1;
	if (x->proc != y->proc)
		return x->proc < y->proc ? -1 : 1;
	return (x->i > y->i) - (x->i < y->i);
}

/* A moment some process ran on a device, and the pieces that ran its first and last instant
 * (of those covering them, the first to end). */
struct won {
	uint64_t device, proc;
	int64_t s, e;
	size_t first_i, last_i;
};

static int
cmp_won(const void *a, const void *b)
{
	const struct won *x = a, *y = b;
	if (x->device != y->device)
		return x->device < y->device ? -1 : 1;
	if (x->proc != y->proc)
		return x->proc < y->proc ? -1 : 1;
	return (x->s > y->s) - (x->s < y->s);
}

/* Whether a piece's start is its call's, or is taken as one (a late piece, rule 3). */
static bool
called(const struct cut_gpu_piece *q)
{
	return q->from_call || q->late;
}

/* How far find_late looks for a piece inside another, or back for another process's end
 * (pieces in order of start or end): beyond, it takes the piece as preempted, as it was
 * before rule 3 looked, and a trace of many overlapping streams costs no more than this a
 * piece. */
#define LATE_SCAN 256

/* A kernel preempted for another process's turn (rule 3): its device and span, its process,
 * and the moment it was preempted, as its device's time slice places it. */
struct preempted {
	uint64_t device, proc;
	int64_t start, end, at;
	int64_t since, hold; /* its process's turn began after since; held it hold to the turn */
	int64_t switch_ns;   /* its device's */
	size_t i;            /* the piece */
};

static int
cmp_preempted(const void *a, const void *b)
{
	const struct preempted *x = a, *y = b;
	if (x->device != y->device)
		return x->device < y->device ? -1 : 1;
	return (x->start > y->start) - (x->start < y->start);
}

/* Where the preempted kernels of o[d .. e) (pre[d0 ..]) were preempted: a time slice after
 * their process's turn began, the slice the median of their holds (SWITCH_SEEN_MIN of them
 * at least: else none is placed, at -1). */
static void
place_preemptions(struct preempted *pre, size_t d0, size_t npre, int64_t switch_ns)
{
	size_t m = npre - d0;
	int64_t *h = cut_xcalloc(m ? m : 1, sizeof(*h));
	for (size_t k = 0; k < m; k++)
		h[k] = pre[d0 + k].hold;
	qsort(h, m, sizeof(*h), cut_cmp_i64);
	for (size_t k = d0; k < npre; k++)
		pre[k].at = m >= SWITCH_SEEN_MIN ? pre[k].since + h[m / 2] - switch_ns : -1;
	free(h);
}

/* 3, the late pieces: timed at both ends, holding another process's piece, their process had
 * held the device less than SLICE_HELD_MIN before it, since the latest end of another
 * process's piece, less the two switches (measured, p[].switch_ns). Sets p[].late; the others
 * that hold a piece go into pre[] (*npre), placed (o, by: scratch); holds[i] says piece i,
 * timed at both ends, holds another process's piece. */
static void
find_late(struct cut_gpu_piece *p, size_t n, struct order *o, struct order *by,
          struct preempted *pre, size_t *npre, bool *holds)
{
	*npre = 0;
	for (size_t i = 0; i < n; i++) {
		o[i] = (struct order){p[i].device, p[i].proc, p[i].end, p[i].end, p[i].start, i};
		by[i] = o[i];
		by[i].key = p[i].start;
	}
	qsort(o, n, sizeof(*o), cmp_order);   /* by device and end */
	qsort(by, n, sizeof(*by), cmp_order); /* by device and start */
	for (size_t d = 0, e; d < n; d = e) { /* by[d .. e): one device's, by start */
		size_t d0 = *npre;
		int64_t switch_ns = 0;
		for (e = d; e < n && by[e].device == by[d].device; e++)
			;
		for (size_t k = d; k < e; k++) {
			struct cut_gpu_piece *q = &p[by[k].i];
			switch_ns = q->switch_ns;
			if (!q->start_exact || !q->end_exact || q->from_call || q->end <= q->start)
				continue;
			int64_t a = -1; /* the first other process's piece inside it starts */
			for (size_t j = k + 1; j < e && j <= k + LATE_SCAN && by[j].start < q->end;
			     j++)
				if (by[j].proc != q->proc && by[j].start > q->start &&
				    by[j].end <= q->end) {
					a = by[j].start;
					break;
				}
			if (a < 0)
				continue;
			holds[by[k].i] = true;
			/* the latest end at or before its start of another process's piece */
			/* (o and by hold the same devices in the same order) */
			size_t lo = d, hi = e;
			while (lo < hi) {
				size_t m = lo + (hi - lo) / 2;
				if (o[m].end <= q->start)
					lo = m + 1;
				else
					hi = m;
			}
			size_t back = 0;
			while (lo > d && o[lo - 1].proc == q->proc && back++ < LATE_SCAN)
				lo--;
			/* (Held through that much of its own work, or since before the trace began:
			 * for how long is not known, and it is taken as preempted.) */
			if (back > LATE_SCAN || lo == d)
				continue;
			q->late = a - o[lo - 1].end - 2 * q->switch_ns < SLICE_HELD_MIN;
			if (!q->late)
				pre[(*npre)++] = (struct preempted){.device = q->device,
				                                    .proc = q->proc,
				                                    .start = q->start,
				                                    .end = q->end,
				                                    .at = -1,
				                                    .since = o[lo - 1].end,
				                                    .hold = a - o[lo - 1].end,
				                                    .switch_ns = q->switch_ns,
				                                    .i = by[k].i};
		}
		place_preemptions(pre, d0, *npre, switch_ns);
	}
}

static int
cmp_shape(const void *a, const void *b)
{
	const struct cut_gpu_piece *const *x = a, *const *y = b;
	if ((*x)->proc != (*y)->proc)
		return (*x)->proc < (*y)->proc ? -1 : 1;
	return ((*x)->shape > (*y)->shape) - ((*x)->shape < (*y)->shape);
}

/* 3: the longest each piece's kernel took, launched alike in its process, where the device
 * timed it at both ends and it held no other process's piece (holds); -1 where fewer than
 * SWITCH_SEEN_MIN such pieces measured it. A new array of n. */
static int64_t *
twin_lengths(struct cut_gpu_piece *p, size_t n, const bool *holds)
{
	int64_t *twin = cut_xcalloc(n ? n : 1, sizeof(*twin));
	struct cut_gpu_piece **by = cut_xcalloc(n ? n : 1, sizeof(*by));
	for (size_t i = 0; i < n; i++)
		by[i] = &p[i];
	qsort(by, n, sizeof(*by), cmp_shape);
	for (size_t d = 0, e; d < n; d = e) {
		int64_t longest = 0;
		size_t seen = 0;
		for (e = d; e < n && by[e]->proc == by[d]->proc && by[e]->shape == by[d]->shape;
		     e++) {
			const struct cut_gpu_piece *q = by[e];
			if (q->start_exact && q->end_exact && !q->from_call && !holds[q - p]) {
				seen++;
				if (q->end - q->start > longest)
					longest = q->end - q->start;
			}
		}
		for (size_t k = d; k < e; k++)
			twin[by[k] - p] = by[d]->shape && seen >= SWITCH_SEEN_MIN ? longest : -1;
	}
	free(by);
	return twin;
}

/* 3: a piece started at its call (or late) whose end lies inside another process's preempted
 * kernel ran in the turn the kernel was preempted for: it starts no earlier than the moment
 * it was (pre: by device and start). */
static void
after_preemptions(struct cut_gpu_piece *p, size_t n, struct preempted *pre, size_t npre)
{
	qsort(pre, npre, sizeof(*pre), cmp_preempted);
	for (size_t i = 0; i < n; i++) {
		struct cut_gpu_piece *q = &p[i];
		if (!called(q) || q->end <= q->resolved)
			continue;
		size_t lo = 0, hi = npre; /* the first preempted kernel after q's end */
		while (lo < hi) {
			size_t m = lo + (hi - lo) / 2;
			if (pre[m].device < q->device ||
			    (pre[m].device == q->device && pre[m].start < q->end))
				lo = m + 1;
			else
				hi = m;
		}
		const struct preempted *k = lo ? &pre[lo - 1] : NULL;
		if (k && k->device == q->device && k->proc != q->proc && k->end > q->end &&
		    k->at >= 0 && k->at < q->end && k->at > q->resolved)
			q->resolved = k->at;
	}
}

/* 3: a piece taken as preempted (pre[], *npre) whose kernel, launched alike, never took half
 * as long as it ran before the turn it holds (from its start to the other's piece, less a
 * switch) did not run then: it is late (its START run, its kernel taken up after the turn).
 * The rest are placed again, without it. */
static void
late_by_twins(struct cut_gpu_piece *p, struct preempted *pre, size_t *npre, const int64_t *twin)
{
	size_t m = 0;
	bool any = false;
	for (size_t k = 0; k < *npre; k++) {
		struct preempted *x = &pre[k];
		int64_t ran = x->since + x->hold - x->start - x->switch_ns;
		if (twin[x->i] >= 0 && ran > 2 * twin[x->i]) {
			p[x->i].late = any = true;
			continue;
		}
		pre[m++] = *x;
	}
	*npre = m;
	if (any)
		for (size_t d = 0, e; d < m; d = e) {
			for (e = d; e < m && pre[e].device == pre[d].device; e++)
				;
			place_preemptions(pre, d, e, pre[d].switch_ns);
		}
}

/* 3: a piece whose start was not timed (its call's, a bound, or late) and whose end lies inside
 * a piece of another process timed at both ends ran in a turn that kernel was preempted for: it
 * starts no earlier than its end less the longest its kernel took (twin[], where known; o:
 * scratch). */
static void
twins_inside(struct cut_gpu_piece *p, size_t n, const int64_t *twin, struct order *o)
{
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (p[i].start_exact && p[i].end_exact && !p[i].from_call && p[i].end > p[i].start)
			o[m++] = (struct order){p[i].device, p[i].proc, p[i].start,
			                        p[i].end,    p[i].start, i};
	qsort(o, m, sizeof(*o), cmp_order); /* by device and start */
	for (size_t i = 0; i < n; i++) {
		struct cut_gpu_piece *q = &p[i];
		if ((!called(q) && q->start_exact) || twin[i] < 0 || q->end - twin[i] <= q->resolved)
			continue;
		size_t lo = 0, hi = m; /* the first after q's end */
		while (lo < hi) {
			size_t k = lo + (hi - lo) / 2;
			if (o[k].device < q->device ||
			    (o[k].device == q->device && o[k].start < q->end))
				lo = k + 1;
			else
				hi = k;
		}
		for (size_t k = lo, back = 0;
		     k > 0 && o[k - 1].device == q->device && back < LATE_SCAN; k--, back++)
			if (o[k - 1].proc != q->proc && o[k - 1].end > q->end) {
				q->resolved = q->end - twin[i];
				break;
			}
	}
}

/* 1: a piece started at its call starts no earlier than the latest end, before its own, of a
 * piece of another process on its device; with switched, where that end is the latest before
 * its own of any piece, no earlier than a switch after it (3: the device then switched to its
 * process, p[].switch_ns where measured). Moves p[].resolved (its start, or where a pass before
 * moved it). */
static void
move_calls(struct cut_gpu_piece *p, size_t n, struct order *o, bool switched)
{
	for (size_t i = 0; i < n; i++)
		o[i] = (struct order){p[i].device, p[i].proc, p[i].end, p[i].end, p[i].start, i};
	qsort(o, n, sizeof(*o), cmp_order);
	int64_t first = 0, other = 0; /* the latest end met, and the latest of another process */
	uint64_t first_proc = 0;
	bool have_first = false, have_other = false;
	for (size_t k = 0; k < n; k++) {
		struct cut_gpu_piece *q = &p[o[k].i];
		if (k == 0 || o[k].device != o[k - 1].device)
			have_first = have_other = false;
		bool mine = have_first && first_proc == q->proc;
		int64_t before = mine ? other : first;
		if (switched && !mine)
			before += q->switch_ns;
		if (called(q) && (mine ? have_other : have_first) && before > q->resolved)
			q->resolved = before < q->end ? before : q->end;
		if (q->end <= q->resolved)
			continue;          /* no length: no evidence */
		if (!mine && have_first) { /* ends come in order: this one is the latest */
			other = first;
			have_other = true;
		}
		first = q->end;
		first_proc = q->proc;
		have_first = true;
	}
}

/* An element of the sweep's heap (heap.h) of the pieces covering its moment, the first to end
 * on top: key.ts its end, key.seq its rank among the pieces in cmp_order by end (the later
 * start, then the process and the piece, first among equal ends). */
struct covering {
	struct cut_heap_key key;
	uint64_t proc;
	size_t i;
};

/* rank[i]: piece i's place in cmp_order with its end as the key (o: scratch, n pieces). */
static uint64_t *
end_ranks(const struct cut_gpu_piece *p, size_t n, struct order *o)
{
	uint64_t *rank = cut_xcalloc(n, sizeof(*rank));
	for (size_t i = 0; i < n; i++)
		o[i] = (struct order){p[i].device, p[i].proc, p[i].end, p[i].end, p[i].resolved, i};
	qsort(o, n, sizeof(*o), cmp_order);
	for (size_t k = 0; k < n; k++)
		rank[o[k].i] = k;
	return rank;
}

static void
add_won(struct won **w, size_t *n, size_t *cap, uint64_t device, const struct covering *c,
        int64_t s, int64_t e)
{
	struct won *last = *n ? &(*w)[*n - 1] : NULL;
	if (last && last->device == device && last->proc == c->proc && last->e == s) {
		last->e = e;
		last->last_i = c->i;
		return;
	}
	CUT_GROW(*w, *n + 1, *cap);
	(*w)[(*n)++] = (struct won){device, c->proc, s, e, c->i, c->i};
}

/* 2: who ran when, device by device: of the pieces covering a moment, the process of the one
 * that ends first (o: the pieces by device and start, from 1). In order of device and time. */
static struct won *
sweep(const struct cut_gpu_piece *p, size_t n, struct order *o, size_t *nw)
{
	size_t cap = 0;
	struct won *w = NULL;
	uint64_t *rank = end_ranks(p, n, o);
	struct cut_heap h;
	struct covering c;
	heap_init(&h, sizeof(struct covering));
	*nw = 0;
	for (size_t i = 0; i < n; i++)
		o[i] = (struct order){p[i].device, p[i].proc,     p[i].resolved,
		                      p[i].end,    p[i].resolved, i};
	qsort(o, n, sizeof(*o), cmp_order);
	for (size_t j = 0; j < n;) {
		uint64_t dev = o[j].device;
		int64_t x = o[j].start;
		const struct covering *top;
		while (j < n && o[j].device == dev) {
			for (; j < n && o[j].device == dev && o[j].start <= x; j++)
				if (o[j].end > o[j].start) {
					c = (struct covering){
					    {o[j].end, rank[o[j].i]}, o[j].proc, o[j].i};
					heap_push(&h, &c);
				}
			while ((top = heap_top(&h)) && top->key.ts <= x)
				heap_pop(&h, NULL);
			if (!top) {
				if (j < n && o[j].device == dev)
					x = o[j].start;
				continue;
			}
			int64_t y = top->key.ts;
			if (j < n && o[j].device == dev && o[j].start < y)
				y = o[j].start;
			add_won(&w, nw, &cap, dev, top, x, y);
			x = y;
		}
		while ((top = heap_top(&h))) { /* what is left of this device */
			if (top->key.ts <= x) {
				heap_pop(&h, NULL);
				continue;
			}
			add_won(&w, nw, &cap, dev, top, x, top->key.ts);
			x = top->key.ts;
		}
	}
	heap_free(&h);
	free(rank);
	return w;
}

/* Of the n values v[], the number less than x (v in order). */
static size_t
below(const int64_t *v, size_t n, int64_t x)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t m = lo + (hi - lo) / 2;
		if (v[m] < x)
			lo = m + 1;
		else
			hi = m;
	}
	return lo;
}

/* Where a piece that ran first after a switch began: after its START, an operation of its
 * process's stream for a kernel handed more than SWITCH_PARAMS_SMALL bytes of parameters, a
 * quarter of one for a kernel handed fewer, three quarters where they are not known (no later
 * than its end). */
static int64_t
moved_start(const struct cut_gpu_piece *q)
{
	int64_t op = q->op_ns > 0 ? q->op_ns : 0;
	if (!q->params)
		op = op * 3 / 4;
	else if (q->params <= SWITCH_PARAMS_SMALL)
		op /= 4;
	return op < q->end - q->resolved ? q->resolved + op : q->end;
}

/* 3, measured: each device's switch time, into p[].switch_ns (o: scratch). A gap counts from
 * the last end before a piece's exact start, when that end is another process's, exact, and
 * after the piece was submitted, and no piece started between the two: the piece waited
 * through the gap for the device to switch (not for another's kernel, preempted later). Every
 * piece with an exact start whose latest end before it is another process's ran first after
 * a switch: it starts later by a part of its process's stream operation (set once every
 * gap is found, so that no start moved changes which count), and a gap is measured to there. */
static void
measure_switches(struct cut_gpu_piece *p, size_t n, struct order *o)
{
	for (size_t i = 0; i < n; i++) {
		o[i] = (struct order){p[i].device, p[i].proc, p[i].end, p[i].end, p[i].resolved, i};
		p[i].switch_ns = 0;
	}
	qsort(o, n, sizeof(*o), cmp_order);
	int64_t *gap = cut_xcalloc(n ? n : 1, sizeof(*gap));
	int64_t *ends = cut_xcalloc(n ? n : 1, sizeof(*ends));
	int64_t *starts = cut_xcalloc(n ? n : 1, sizeof(*starts));
	size_t *first = cut_xcalloc(n ? n : 1, sizeof(*first)), nfirst = 0;
	for (size_t d = 0, e; d < n; d = e) { /* o[d .. e): one device's, by end */
		size_t ng = 0;
		for (e = d; e < n && o[e].device == o[d].device; e++) {
			ends[e - d] = o[e].end;
			starts[e - d] = p[o[e].i].resolved;
		}
		qsort(starts, e - d, sizeof(*starts), cut_cmp_i64);
		for (size_t k = d; k < e; k++) {
			const struct cut_gpu_piece *q = &p[o[k].i];
			if (!q->start_exact || called(q) || q->submit < 0)
				continue;
			size_t before = below(ends, e - d, q->resolved);
			const struct cut_gpu_piece *b = before ? &p[o[d + before - 1].i] : NULL;
			size_t started = below(starts, e - d, q->resolved);
			if (!b || b->proc == q->proc)
				continue;
			first[nfirst++] = o[k].i;
			if (b->end_exact && q->submit < b->end &&
			    (!started || starts[started - 1] <= b->end))
				gap[ng++] = moved_start(q) - b->end;
		}
		if (ng < SWITCH_SEEN_MIN)
			continue;
		qsort(gap, ng, sizeof(*gap), cut_cmp_i64);
		for (size_t k = d; k < e; k++)
			p[o[k].i].switch_ns = gap[ng / 2];
	}
	for (size_t k = 0; k < nfirst; k++)
		p[first[k]].resolved = moved_start(&p[first[k]]);
	free(first);
	free(gap);
	free(ends);
	free(starts);
}

/* Whether a piece's span is a bound somewhere (rule 3). */
static bool
bound(const struct cut_gpu_piece *q)
{
	return called(q) || !q->start_exact || !q->end_exact;
}

/* 3: where one process's moment meets another's, the switch time comes off the side whose
 * piece is a bound and runs across the meeting (or started from its call at it). */
static void
take_switches(const struct cut_gpu_piece *p, struct won *w, size_t nw)
{
	for (size_t k = 0; k + 1 < nw; k++) {
		struct won *x = &w[k], *y = &w[k + 1];
		int64_t t = x->e, sw = p[x->last_i].switch_ns;
		if (x->device != y->device || x->proc == y->proc || t != y->s || sw <= 0)
			continue;
		const struct cut_gpu_piece *a = &p[x->last_i], *b = &p[y->first_i];
		if (a->end > t && bound(a))
			x->e = t - sw > x->s ? t - sw : x->s;
		if (bound(b) && (b->resolved < t || called(b)))
			y->s = t + sw < y->e ? t + sw : y->e;
	}
}

size_t
cut_gpu_resolve(struct cut_gpu_piece *p, size_t n, struct cut_gpu_span **parts, size_t *nparts)
{
	struct order *o = cut_xcalloc(n ? n : 1, sizeof(*o));
	struct order *by = cut_xcalloc(n ? n : 1, sizeof(*by));
	struct preempted *pre = cut_xcalloc(n ? n : 1, sizeof(*pre));
	bool *holds = cut_xcalloc(n ? n : 1, sizeof(*holds));
	size_t npre;
	for (size_t i = 0; i < n; i++) {
		p[i].late = false;
		p[i].resolved = p[i].start;
	}
	move_calls(p, n, o, false);
	measure_switches(p, n, o);
	find_late(p, n, o, by, pre, &npre, holds);
	int64_t *twin = twin_lengths(p, n, holds);
	late_by_twins(p, pre, &npre, twin);
	/* Again, the late ones now taken as started at their calls, and the switches measured. */
	move_calls(p, n, o, true);
	after_preemptions(p, n, pre, npre);
	twins_inside(p, n, twin, o);
	free(twin);
	free(holds);
	free(pre);
	free(by);
	size_t nw, cap = 0, lost = 0;
	struct won *w = sweep(p, n, o, &nw);
	take_switches(p, w, nw);
	free(o);
	if (nw) /* (no work: w is NULL, which qsort may not be given) */
		qsort(w, nw, sizeof(*w), cmp_won);
	*parts = NULL;
	*nparts = 0;
	/* 4: each piece's parts: its span's share of its process's moments. */
	for (size_t i = 0; i < n; i++) {
		struct cut_gpu_piece *q = &p[i];
		int64_t s = q->resolved;
		q->first = *nparts;
		q->nparts = 0;
		q->kept = 0;
		size_t lo = 0, hi = nw; /* the first moment of its process that ends after s */
		while (lo < hi) {
			size_t m = lo + (hi - lo) / 2;
			const struct won *x = &w[m];
			if (x->device < q->device ||
			    (x->device == q->device &&
			     (x->proc < q->proc || (x->proc == q->proc && x->e <= s))))
				lo = m + 1;
			else
				hi = m;
		}
		for (size_t k = lo;
		     k < nw && w[k].device == q->device && w[k].proc == q->proc && w[k].s < q->end;
		     k++) {
			int64_t a = w[k].s > s ? w[k].s : s, b = w[k].e < q->end ? w[k].e : q->end;
			if (b <= a)
				continue;
			CUT_GROW(*parts, *nparts + 1, cap);
			(*parts)[(*nparts)++] = (struct cut_gpu_span){a, b};
			q->nparts++;
			q->kept += b - a;
		}
		q->resolved = q->nparts ? (*parts)[q->first].s : q->end;
		if (q->end == q->start)
			q->resolved = q->start;
		lost += q->kept < q->end - q->start;
	}
	free(w);
	return lost;
}
