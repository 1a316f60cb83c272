/* test_gpushare.c: GPU work of processes time-slicing one device (gpushare.h): nesting (a
 * container keeps its time around what it holds, or, started at its call, only what follows
 * it), chains, ties, pieces the rule leaves alone, any input order, the switch time measured
 * and taken off bound pieces only, the pieces that ran first after a switch started later, a
 * piece timed at both ends that holds another's turn preempted only after a time slice, the
 * twins (a kernel launched alike, timed at both ends) bounding a piece started at its call and
 * telling a late piece from a preempted one, and
 * on random pieces the promises: no two processes' time
 * overlaps on a device afterwards, every piece keeps parts of its own span, a device's busy
 * time is what its pieces covered (none started at its call or late, no switch measured), and the
 * rule applied again to what was kept changes nothing. */
#include <check.h>
#include <stdarg.h>
#include <stdlib.h>

#include "check_main.h"
#include "gpushare.h"

/* A piece timed at both ends; one whose start is its call's (a bound). */
#define P(s_, e_, dev_, proc_)                                                                     \
	{                                                                                          \
		.start = (s_), .end = (e_), .device = (dev_), .proc = (proc_),                     \
		.start_exact = true, .end_exact = true, .submit = -1                               \
	}
#define C(s_, e_, dev_, proc_)                                                                     \
	{                                                                                          \
		.start = (s_), .end = (e_), .device = (dev_), .proc = (proc_), .from_call = true,  \
		.end_exact = true, .submit = -1                                                    \
	}

static struct cut_gpu_span *parts;
static size_t nparts;

static size_t
resolve(struct cut_gpu_piece *p, size_t n)
{
	free(parts);
	return cut_gpu_resolve(p, n, &parts, &nparts);
}

/* Piece q kept exactly the parts given as s, e pairs, ending with -1. */
static void
kept(const struct cut_gpu_piece *q, ...)
{
	va_list ap;
	va_start(ap, q);
	size_t k = 0;
	int64_t total = 0;
	for (int64_t s; (s = va_arg(ap, int64_t)) >= 0; k++) {
		int64_t e = va_arg(ap, int64_t);
		ck_assert_uint_lt(k, q->nparts);
		ck_assert_int_eq(parts[q->first + k].s, s);
		ck_assert_int_eq(parts[q->first + k].e, e);
		total += e - s;
	}
	va_end(ap);
	ck_assert_uint_eq(q->nparts, k);
	ck_assert_int_eq(q->kept, total);
	ck_assert_int_eq(q->resolved, k ? parts[q->first].s : q->end);
}

#define END ((int64_t)-1)

START_TEST(test_nested)
{
	/* Process 2's piece inside process 1's: 1 keeps its time around it (a kernel preempted
	 * for 2's turn), or, started at its call, only what follows it (it waited for the turn). */
	struct cut_gpu_piece p[] = {P(100, 1000, 0, 1), P(300, 500, 0, 2)};
	ck_assert_uint_eq(resolve(p, 2), 1);
	kept(&p[0], (int64_t)100, (int64_t)300, (int64_t)500, (int64_t)1000, END);
	kept(&p[1], (int64_t)300, (int64_t)500, END);
	struct cut_gpu_piece c[] = {C(100, 1000, 0, 1), P(300, 500, 0, 2)};
	ck_assert_uint_eq(resolve(c, 2), 1);
	kept(&c[0], (int64_t)500, (int64_t)1000, END);
	kept(&c[1], (int64_t)300, (int64_t)500, END);
}
END_TEST

START_TEST(test_chain_of_three)
{
	/* Three processes, each piece starting before the one before it ended: each keeps the
	 * time after the end before it, whatever the order given. */
	struct cut_gpu_piece p[] = {P(250, 400, 0, 3), P(0, 200, 0, 1), P(100, 300, 0, 2)};
	ck_assert_uint_eq(resolve(p, 3), 2);
	kept(&p[1], (int64_t)0, (int64_t)200, END);
	kept(&p[2], (int64_t)200, (int64_t)300, END);
	kept(&p[0], (int64_t)300, (int64_t)400, END);
}
END_TEST

START_TEST(test_chain_over_own)
{
	/* Where another process's piece ends first, it ran; then all of process 1's pieces
	 * keep their time, overlapping as they were. */
	struct cut_gpu_piece p[] = {P(0, 100, 0, 2), P(50, 150, 0, 1), P(90, 200, 0, 1)};
	ck_assert_uint_eq(resolve(p, 3), 2);
	kept(&p[0], (int64_t)0, (int64_t)100, END);
	kept(&p[1], (int64_t)100, (int64_t)150, END);
	kept(&p[2], (int64_t)100, (int64_t)200, END);
	/* Started at their calls: the latest other end before each is 100, the same. */
	struct cut_gpu_piece c[] = {P(0, 100, 0, 2), C(50, 150, 0, 1), C(90, 200, 0, 1)};
	ck_assert_uint_eq(resolve(c, 3), 2);
	kept(&c[1], (int64_t)100, (int64_t)150, END);
	kept(&c[2], (int64_t)100, (int64_t)200, END);
}
END_TEST

START_TEST(test_left_alone)
{
	/* One process's pieces overlap (two streams): as recorded. Two devices: as recorded.
	 * Touching ends are no overlap; a piece of no length keeps none. */
	struct cut_gpu_piece p[] = {P(0, 100, 0, 1), C(50, 150, 0, 1), P(20, 120, 1, 2),
	                            C(150, 300, 0, 2), P(70, 70, 0, 2)};
	ck_assert_uint_eq(resolve(p, 5), 0);
	kept(&p[0], (int64_t)0, (int64_t)100, END);
	kept(&p[1], (int64_t)50, (int64_t)150, END);
	kept(&p[2], (int64_t)20, (int64_t)120, END);
	kept(&p[3], (int64_t)150, (int64_t)300, END);
	ck_assert_uint_eq(p[4].nparts, 0);
	ck_assert_int_eq(p[4].resolved, 70);
}
END_TEST

START_TEST(test_ties)
{
	/* Pieces of two processes that end together: the shorter ran last. Started at its call,
	 * the longer keeps nothing, and as no evidence moves nothing after it. */
	struct cut_gpu_piece p[] = {P(0, 100, 0, 1), P(60, 100, 0, 2), P(80, 200, 0, 1)};
	ck_assert_uint_eq(resolve(p, 3), 2);
	kept(&p[0], (int64_t)0, (int64_t)60, END);
	kept(&p[1], (int64_t)60, (int64_t)100, END);
	kept(&p[2], (int64_t)100, (int64_t)200, END);
	struct cut_gpu_piece c[] = {C(0, 100, 0, 1), P(60, 100, 0, 2), C(80, 200, 0, 1)};
	ck_assert_uint_eq(resolve(c, 3), 2);
	kept(&c[0], END);
	kept(&c[1], (int64_t)60, (int64_t)100, END);
	kept(&c[2], (int64_t)100, (int64_t)200, END);
	ck_assert_uint_eq(resolve(c, 0), 0);
	ck_assert_uint_eq(nparts, 0);
}
END_TEST

/* The time the spans [s, e) cover. */
static int
by_start(const void *a, const void *b)
{
	const struct cut_gpu_span *x = a, *y = b;
	return (x->s > y->s) - (x->s < y->s);
}

static int64_t
covered(struct cut_gpu_span *v, size_t n)
{
	qsort(v, n, sizeof(*v), by_start);
	int64_t t = 0, cs = 0, ce = 0;
	for (size_t i = 0; i < n; i++) {
		if (i == 0 || v[i].s > ce) {
			t += ce - cs;
			cs = v[i].s;
			ce = v[i].e;
		} else if (v[i].e > ce)
			ce = v[i].e;
	}
	return t + ce - cs;
}

/* The switches of a device: transitions waited for 100 ns; n of them (8 measure it).
 * preempted: process 1's next kernel starts in each gap and runs on a time slice, to be
 * preempted for process 2's piece, which its span holds: the wait is then partly that
 * kernel's, and measures nothing. Process 2's piece starts at t + PIECE(preempted). */
#define PERIOD(preempted) ((preempted) ? 3 * SLICE_HELD_MIN : 1000)
#define PIECE(preempted) ((preempted) ? SLICE_HELD_MIN + 400 : 400)
static size_t
switches(struct cut_gpu_piece *p, int n, bool preempted)
{
	size_t k = 0;
	for (int i = 0; i < n; i++) {
		int64_t t = PERIOD(preempted) * i, at = t + PIECE(preempted);
		p[k++] = (struct cut_gpu_piece)P(t, t + 300, 0, 1);
		if (preempted)
			p[k++] = (struct cut_gpu_piece)P(t + 350, at + 500, 0, 1);
		p[k] = (struct cut_gpu_piece)P(at, at + 10, 0, 2);
		p[k++].submit = t + 100; /* before the other's end: it waited */
	}
	return k;
}

START_TEST(test_switches)
{
	struct cut_gpu_piece p[40];
	/* Process 2's piece whose end is a bound holds process 1's turn: the 100 ns switches on
	 * either side of the turn are neither's work; what is left, its kernel after the turn. */
	size_t n = switches(p, SWITCH_SEEN_MIN, false);
	struct cut_gpu_piece *light = &p[n];
	p[n] = (struct cut_gpu_piece)P(10000, 10530, 0, 2);
	p[n++].end_exact = false;
	struct cut_gpu_piece *turn = &p[n];
	p[n++] = (struct cut_gpu_piece)P(10100, 10400, 0, 1);
	/* Process 1's kernel timed at both ends holds process 2's, process 1 having held the
	 * device a time slice before: preempted, it keeps its time around it, as the kernel's
	 * span holds the turn. */
	const int64_t d = 10530 + SLICE_HELD_MIN;
	struct cut_gpu_piece *deep = &p[n];
	p[n++] = (struct cut_gpu_piece)P(d, d + 1000, 0, 1);
	struct cut_gpu_piece *inside = &p[n];
	p[n++] = (struct cut_gpu_piece)P(d + 400, d + 410, 0, 2);
	/* Process 2's piece started at its call, moved to process 1's exact end: a switch later. */
	p[n++] = (struct cut_gpu_piece)P(d + 9000, d + 10200, 0, 1);
	struct cut_gpu_piece *waited = &p[n];
	p[n++] = (struct cut_gpu_piece)C(d + 10000, d + 10500, 0, 2);
	resolve(p, n);
	ck_assert_int_eq(p[0].switch_ns, 100);
	kept(light, (int64_t)10500, (int64_t)10530, END);
	kept(turn, (int64_t)10100, (int64_t)10400, END);
	ck_assert(!deep->late);
	kept(deep, d, d + 400, d + 410, d + 1000, END);
	kept(inside, d + 400, d + 410, END);
	kept(waited, d + 10300, d + 10500, END);
	/* One transition fewer, or waits that another kernel started in, measure nothing: the
	 * pieces keep what rule 2 gave them. */
	for (int preempted = 0; preempted < 2; preempted++) {
		n = switches(p, SWITCH_SEEN_MIN - !preempted, preempted);
		const int64_t b = p[n - 1].end + 10000;
		light = &p[n];
		p[n] = (struct cut_gpu_piece)P(b, b + 530, 0, 2);
		p[n++].end_exact = false;
		p[n++] = (struct cut_gpu_piece)P(b + 100, b + 400, 0, 1);
		resolve(p, n);
		ck_assert_int_eq(p[0].switch_ns, 0);
		kept(light, b, b + 100, b + 400, b + 530, END);
	}
}
END_TEST

START_TEST(test_switched_in)
{
	struct cut_gpu_piece p[60];
	/* The pieces the switch is measured on ran first after it: they start three quarters of
	 * their process's stream operation (op_ns) later than their START says, and the switch is
	 * measured to there. The piece after one in its process's turn keeps its start; one
	 * started at its call 100 ns after process 1's end starts a switch after that end: the
	 * device was process 1's until then. */
	size_t n = switches(p, SWITCH_SEEN_MIN, false);
	for (size_t i = 0; i < n; i++)
		p[i].op_ns = p[i].proc == 2 ? 8 : 0;
	struct cut_gpu_piece *first = &p[n - 1];
	struct cut_gpu_piece *next = &p[n];
	p[n] = (struct cut_gpu_piece)P(7420, 7430, 0, 2);
	p[n++].op_ns = 8;
	struct cut_gpu_piece *called = &p[n];
	p[n++] = (struct cut_gpu_piece)P(8000, 8300, 0, 1);
	p[n] = (struct cut_gpu_piece)C(8400, 8410, 0, 2);
	p[n++].op_ns = 8;
	resolve(p, n);
	ck_assert_int_eq(p[0].switch_ns, 106);
	kept(first, (int64_t)7406, (int64_t)7410, END);
	kept(next, (int64_t)7420, (int64_t)7430, END);
	kept(called + 1, (int64_t)8300 + 106, (int64_t)8410, END);
	/* An operation of more than 4/3 of the piece: it starts at its end, keeping nothing. */
	n = switches(p, SWITCH_SEEN_MIN, false);
	p[n - 1].op_ns = 40;
	resolve(p, n);
	ck_assert_int_eq(p[n - 1].resolved, p[n - 1].end);
	ck_assert_int_eq(p[n - 1].kept, 0);
	/* After another process's kernel that started in the wait (preempted later: it measures
	 * no switch), the piece that ran first in its process's turn still starts later; the
	 * kernel keeps that moment, as it keeps the rest around the piece. */
	n = switches(p, SWITCH_SEEN_MIN, true);
	for (size_t i = 0; i < n; i++)
		p[i].op_ns = p[i].proc == 2 ? 8 : 0;
	resolve(p, n);
	ck_assert_int_eq(p[0].switch_ns, 0);
	const int64_t t = PERIOD(true) * (SWITCH_SEEN_MIN - 1), at = t + PIECE(true);
	kept(&p[n - 1], at + 6, at + 10, END);
	kept(&p[n - 2], t + 350, at + 6, at + 10, at + 500, END);
}
END_TEST

START_TEST(test_switched_in_params)
{
	struct cut_gpu_piece p[40];
	/* How much later a piece that ran first after a switch starts is its kernel's parameters':
	 * more than SWITCH_PARAMS_SMALL bytes, a whole operation (8 ns here); fewer, a quarter;
	 * not known, three quarters. The switch (100 ns) is measured to there. */
	static const struct {
		int64_t params, moved;
	} c[] = {{SWITCH_PARAMS_SMALL + 1, 8}, {736, 8}, {SWITCH_PARAMS_SMALL, 2}, {32, 2}, {0, 6}};
	for (size_t k = 0; k < sizeof(c) / sizeof(c[0]); k++) {
		size_t n = switches(p, SWITCH_SEEN_MIN, false);
		for (size_t i = 0; i < n; i++)
			if (p[i].proc == 2) {
				p[i].op_ns = 8;
				p[i].params = c[k].params;
			}
		resolve(p, n);
		ck_assert_int_eq(p[0].switch_ns, 100 + c[k].moved);
		kept(&p[n - 1], (int64_t)7400 + c[k].moved, (int64_t)7410, END);
	}
}
END_TEST

START_TEST(test_late)
{
	struct cut_gpu_piece p[40];
	/* A light process's piece timed at both ends holds another's turn, its process having
	 * held the device a moment before it (since process 1's end, 50 ns before): no kernel of
	 * it ran when the device turned away, and its work ran after the turn. Taken as one
	 * started at its call, it keeps what follows the turn and the switch (100 ns). */
	size_t n = switches(p, SWITCH_SEEN_MIN, false);
	const int64_t x = 100000;
	p[n++] = (struct cut_gpu_piece)P(x - 300, x - 50, 0, 1);
	struct cut_gpu_piece *light = &p[n];
	p[n++] = (struct cut_gpu_piece)P(x, x + 530, 0, 2);
	struct cut_gpu_piece *turn = &p[n];
	p[n++] = (struct cut_gpu_piece)P(x + 100, x + 400, 0, 1);
	resolve(p, n);
	ck_assert(light->late);
	ck_assert(!turn->late);
	kept(light, x + 500, x + 530, END);
	kept(turn, x + 100, x + 400, END);
	/* The same piece where its process had held the device a time slice: preempted, it
	 * keeps its time around the turn. */
	n = switches(p, SWITCH_SEEN_MIN, false);
	const int64_t y = SLICE_HELD_MIN + 100000;
	p[n++] = (struct cut_gpu_piece)P(y - SLICE_HELD_MIN, y - 50, 0, 2);
	light = &p[n];
	p[n++] = (struct cut_gpu_piece)P(y, y + 530, 0, 2);
	p[n++] = (struct cut_gpu_piece)P(y + 100, y + 400, 0, 1);
	resolve(p, n);
	ck_assert(!light->late);
	kept(light, y, y + 100, y + 400, y + 530, END);
}
END_TEST

/* Eight pieces of process 2 launching shape 7 alike, 10 ns each, from t on, 100 ns apart. */
static size_t
twins(struct cut_gpu_piece *p, int64_t t, int n)
{
	for (int i = 0; i < n; i++) {
		p[i] = (struct cut_gpu_piece)P(t + 100 * i, t + 100 * i + 10, 0, 2);
		p[i].shape = 7;
	}
	return (size_t)n;
}

START_TEST(test_twins)
{
	struct cut_gpu_piece p[40];
	/* A piece of process 2 started at its call (5 us before process 1's kernel began) ends
	 * inside that kernel, which was preempted for it: its kernel ran as its twins did, the
	 * longest of which took 10 ns, not through process 1's kernel, nor before it. */
	const int64_t x = 100000;
	size_t n = twins(p, 0, SWITCH_SEEN_MIN);
	struct cut_gpu_piece *deep = &p[n];
	p[n++] = (struct cut_gpu_piece)P(x, x + 1000, 0, 1);
	struct cut_gpu_piece *called = &p[n];
	p[n] = (struct cut_gpu_piece)C(x - 5000, x + 600, 0, 2);
	p[n++].shape = 7;
	resolve(p, n);
	kept(called, x + 590, x + 600, END);
	kept(deep, x, x + 590, x + 600, x + 1000, END);
	/* So does one whose start and end are both bounds (its call spanned the wait). */
	n = twins(p, 0, SWITCH_SEEN_MIN);
	deep = &p[n];
	p[n++] = (struct cut_gpu_piece)P(x, x + 1000, 0, 1);
	struct cut_gpu_piece *bounded = &p[n];
	p[n] = (struct cut_gpu_piece)P(x - 5000, x + 600, 0, 2);
	p[n].start_exact = p[n].end_exact = false;
	p[n++].shape = 7;
	resolve(p, n);
	kept(bounded, x + 590, x + 600, END);
	/* One twin fewer, or another shape: nothing says how long its kernel was. */
	for (int fewer = 0; fewer < 2; fewer++) {
		n = twins(p, 0, SWITCH_SEEN_MIN - fewer);
		deep = &p[n];
		p[n++] = (struct cut_gpu_piece)P(x, x + 1000, 0, 1);
		called = &p[n];
		p[n] = (struct cut_gpu_piece)C(x - 5000, x + 600, 0, 2);
		p[n++].shape = fewer ? 7 : 8;
		resolve(p, n);
		kept(called, x - 5000, x + 600, END);
		kept(deep, x + 600, x + 1000, END);
	}
	/* A piece timed at both ends holds process 1's turn, its process having held the device a
	 * time slice (as test_late's preempted one), but had its kernel run from its start it
	 * would have ended 290 ns before the turn (its twins took 10): it did not run then, and
	 * is taken as started at its call. With no twins it would keep its time around the turn
	 * (test_late). */
	n = switches(p, SWITCH_SEEN_MIN, false);
	const int64_t y = SLICE_HELD_MIN + 100000;
	p[n++] = (struct cut_gpu_piece)P(y - SLICE_HELD_MIN, y - 50, 0, 2);
	struct cut_gpu_piece *light = &p[n];
	p[n] = (struct cut_gpu_piece)P(y, y + 800, 0, 2);
	p[n++].shape = 7;
	struct cut_gpu_piece *turn = &p[n];
	p[n++] = (struct cut_gpu_piece)P(y + 400, y + 500, 0, 1);
	n += twins(&p[n], y + 10000, SWITCH_SEEN_MIN);
	resolve(p, n);
	ck_assert(light->late);
	kept(light, y + 600, y + 800, END); /* after the turn and the switch (100 ns) */
	kept(turn, y + 400, y + 500, END);
}
END_TEST

START_TEST(test_preemptions)
{
	/* Process 1's kernels are preempted a slice (2.4 ms) after its turn began, for process
	 * 2's: its piece, then process 1's kernel, holding process 2's next piece. A piece of
	 * process 2 started at its call before such a kernel, and ending inside it, ran in the
	 * turn the kernel was preempted for: it starts at the moment it was, not at its call. */
	enum { ROUNDS = SWITCH_SEEN_MIN + 1 };
	const int64_t period = 5000000, slice = 2400000;
	struct cut_gpu_piece p[3 * ROUNDS + 1];
	size_t n = 0;
	for (int i = 0; i < ROUNDS; i++) {
		int64_t t = period * i;
		p[n++] = (struct cut_gpu_piece)P(t, t + 1000, 0, 2);
		p[n++] = (struct cut_gpu_piece)P(t + 2000, t + 4000000, 0, 1);
		p[n++] = (struct cut_gpu_piece)P(t + 1000 + slice, t + 1010 + slice, 0, 2);
	}
	const int64_t t = period * (ROUNDS - 1), at = t + 1000 + slice;
	struct cut_gpu_piece *called = &p[n];
	p[n] = (struct cut_gpu_piece)C(t + 1500, at + 5, 0, 2);
	p[n++].end_exact = false;
	resolve(p, n);
	ck_assert(!p[n - 3].late);
	kept(called, at, at + 5, END);
	/* Fewer preempted kernels than measure a slice: the piece keeps what rules 1 and 2 give
	 * it, its call's start on. */
	n = 0;
	for (int i = ROUNDS - SWITCH_SEEN_MIN + 1; i < ROUNDS; i++) {
		int64_t u = period * i;
		p[n++] = (struct cut_gpu_piece)P(u, u + 1000, 0, 2);
		p[n++] = (struct cut_gpu_piece)P(u + 2000, u + 4000000, 0, 1);
		p[n++] = (struct cut_gpu_piece)P(u + 1000 + slice, u + 1010 + slice, 0, 2);
	}
	called = &p[n];
	p[n] = (struct cut_gpu_piece)C(t + 1500, at + 5, 0, 2);
	p[n++].end_exact = false;
	resolve(p, n);
	kept(called, t + 1500, at + 5, END);
}
END_TEST

START_TEST(test_random)
{
	enum { N = 250 };
	static struct cut_gpu_piece p[N], q[4 * N];
	static struct cut_gpu_span a[4 * N], b[4 * N];
	int switched = 0, lates = 0, held = 0;
	srand(7);
	for (int round = 0; round < 60; round++) {
		/* odd rounds: pieces started at their calls; every third, bounds and submit
		 * times, so that switches are measured and taken off; in both, pieces of three
		 * kernels launched alike (twins) and of unknown ones */
		bool calls = round % 2, bounds = round % 3 == 0;
		/* every fourth round over seconds: holds of more than a time slice, preempted */
		int64_t scale = round % 4 == 2 ? SLICE_HELD_MIN : 1;
		for (int i = 0; i < N; i++) {
			int64_t s = rand() % 100000 * scale,
			        d = (rand() % 3 ? rand() % 500 : rand() % 20000) * scale;
			p[i] = (struct cut_gpu_piece)P(s, s + d, (uint64_t)(rand() % 2),
			                               (uint64_t)(rand() % 4));
			p[i].from_call = calls && rand() % 2;
			p[i].start_exact = !p[i].from_call;
			if (calls || bounds) /* three kernels, and unknown ones: twins */
				p[i].shape = (uint32_t)(rand() % 4);
			if (bounds) {
				p[i].end_exact = rand() % 4;
				p[i].submit = s - rand() % 2000;
				p[i].op_ns = (int64_t)p[i].proc * 40; /* a process's own */
			}
		}
		resolve(p, N);
		size_t nq = 0;
		for (int i = 0; i < N; i++) {
			if (p[i].kept > p[i].end - p[i].start)
				ck_abort_msg("piece %d kept more than its length", i);
			for (size_t k = p[i].first; k < p[i].first + p[i].nparts; k++) {
				if (parts[k].s < p[i].start || parts[k].e > p[i].end ||
				    parts[k].s >= parts[k].e)
					ck_abort_msg("piece %d: part [%lld,%lld] not in its span",
					             i, (long long)parts[k].s,
					             (long long)parts[k].e);
				q[nq++] = (struct cut_gpu_piece)P(parts[k].s, parts[k].e,
				                                  p[i].device, p[i].proc);
			}
		}
		/* (ck_assert in loops this long costs the forked runner a message each) */
		for (size_t i = 0; i < nq; i++)
			for (size_t j = 0; j < nq; j++)
				if (q[i].device == q[j].device && q[i].proc != q[j].proc &&
				    (q[i].start > q[j].start ? q[i].start : q[j].start) <
				        (q[i].end < q[j].end ? q[i].end : q[j].end))
					ck_abort_msg("[%lld,%lld] and [%lld,%lld] overlap",
					             (long long)q[i].start, (long long)q[i].end,
					             (long long)q[j].start, (long long)q[j].end);
		switched += p[0].switch_ns > 0;
		bool late = false;
		for (int i = 0; i < N; i++)
			late |= p[i].late;
		lates += late;
		held += !calls && !bounds && !late;
		for (uint64_t dev = 0; !calls && !bounds && !late && dev < 2; dev++) {
			size_t na = 0, nb = 0;
			for (int i = 0; i < N; i++)
				if (p[i].device == dev && p[i].end > p[i].start)
					a[na++] = (struct cut_gpu_span){p[i].start, p[i].end};
			for (size_t i = 0; i < nq; i++)
				if (q[i].device == dev)
					b[nb++] = (struct cut_gpu_span){q[i].start, q[i].end};
			ck_assert_int_eq(covered(a, na), covered(b, nb));
		}
		ck_assert_uint_eq(resolve(q, nq), 0);
	}
	ck_assert_int_gt(switched, 0); /* the rounds with bounds measured some */
	ck_assert_int_gt(lates, 0);    /* short holds made late pieces */
	ck_assert_int_gt(held, 2);     /* and the busy time was checked without them */
}
END_TEST

static Suite *
gpushare_suite(void)
{
	Suite *s = suite_create("gpushare");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, test_nested);
	tcase_add_test(tc, test_chain_of_three);
	tcase_add_test(tc, test_chain_over_own);
	tcase_add_test(tc, test_left_alone);
	tcase_add_test(tc, test_ties);
	tcase_add_test(tc, test_switches);
	tcase_add_test(tc, test_switched_in);
	tcase_add_test(tc, test_switched_in_params);
	tcase_add_test(tc, test_late);
	tcase_add_test(tc, test_preemptions);
	tcase_add_test(tc, test_twins);
	tcase_add_test(tc, test_random);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	int r = run_suite(gpushare_suite());
	free(parts);
	return r;
}
