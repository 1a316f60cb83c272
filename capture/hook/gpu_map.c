/* gpu_map.c: GPU event times onto CLOCK_MONOTONIC, and the span of a piece of work from its
 * events. Pure functions: tests/unit/test_gpu_map.c feeds them made-up clocks.
 *
 * An anchor is an event whose host time is known within +-err: where the clock kernel runs
 * (gpu_kernel.c), the event after it, a stream operation after the kernel's end, which the
 * kernel dates on the GPU's own clock against the host's (gpu_kernel_anchor); else, where the
 * driver has stream memory operations, an event between a wait for a word of host memory and a
 * write of another (the host wrote the first at t_w and saw the second at t_r: the event ran in
 * between, at (t_w + t_r) / 2 +- (t_r - t_w) / 2); else an event on an idle private stream whose
 * host time is taken as the moment its record returned, as a launch's is the moment its call
 * returned (the GPU's delay in picking work up is then the same on both sides and cancels, which
 * makes the device's measured pick-up time 0). Times on the GPU are counted from the first anchor's
 * event through a reference event renewed often (cuEventElapsedTime is a float of ms: kept
 * small, it holds a few ns). The GPU's clock runs some 20 ppm off the host's, and not quite
 * steadily: the rate is the median of the slopes between the pairs of the latest anchors that
 * measure it best (far apart and narrow: Theil-Sen over them, which one anchor taken badly
 * moves little), and the host time at the latest anchor
 * the middle of what every anchor, carried there at that rate with its doubt, allows; until
 * anchors far enough apart measure the rate better (or show the clock further off), it is taken
 * as 1 with GPU_RATE_ERR_DEFAULT of doubt. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"

static double
fabs_(double x)
{
	return x < 0 ? -x : x;
}

static int64_t
round_(double x)
{
	return (int64_t)(x < 0 ? x - 0.5 : x + 0.5);
}

/* Pairs of anchors closer than this on the GPU measure no rate. */
#define RATE_SPAN_MIN_NS 50e6

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The rate and the host time at the latest anchor from the anchors in the window. */
static void
fit(struct gpu_clock *c)
{
	enum { N = GPU_ANCHOR_WINDOW };
	double slope[N * (N - 1) / 2], doubt[N * (N - 1) / 2], best = 1e300;
	int np = 0;
	for (int i = 0; i < c->na; i++)
		for (int j = i + 1; j < c->na; j++) {
			const struct gpu_anchor *x = &c->a[i], *y = &c->a[j];
			double dg = y->gpu - x->gpu;
			if (fabs_(dg) < RATE_SPAN_MIN_NS)
				continue;
			double r = (double)(y->host - x->host) / dg;
			if (fabs_(r - 1) > 1e-3) /* no clock is 1000 ppm off: a broken pair */
				continue;
			slope[np] = r;
			doubt[np] = (double)(x->err + y->err) / fabs_(dg);
			if (doubt[np] < best)
				best = doubt[np];
			np++;
		}
	/* The pairs that measure it best (a doubt at most twice the least: anchors far apart
	 * and narrow), the median of their slopes, which one pair taken badly moves little. */
	int ns = 0;
	for (int i = 0; i < np; i++)
		if (doubt[i] <= 2 * best) {
			slope[ns] = slope[i];
			doubt[ns++] = doubt[i];
		}
	if (ns) {
		qsort(slope, (size_t)ns, sizeof(*slope), cmp_double);
		qsort(doubt, (size_t)ns, sizeof(*doubt), cmp_double);
		double r = slope[ns / 2], e = doubt[ns / 2];
		/* The spread of the slopes too: a clock that does not run steadily. */
		double spread = (slope[(ns * 3) / 4] - slope[ns / 4]) / 2;
		if (spread > e)
			e = spread;
		/* Taken where it knows better than the assumption, or contradicts it (a clock
		 * further off than GPU_RATE_ERR_DEFAULT). */
		if (e < GPU_RATE_ERR_DEFAULT || fabs_(r - 1) - e > GPU_RATE_ERR_DEFAULT) {
			c->rate = r;
			c->rate_err = e;
		}
	}
	/* Each anchor carried to the latest at that rate: an interval; the middle of what they
	 * all allow, else (they disagree: the rate moved) the latest's own. */
	const struct gpu_anchor *l = &c->a[c->na - 1];
	double lo = -1e300, hi = 1e300;
	for (int i = 0; i < c->na; i++) {
		const struct gpu_anchor *x = &c->a[i];
		double dg = l->gpu - x->gpu;
		double at = (double)x->host + dg * c->rate;
		double w = (double)x->err + fabs_(dg) * c->rate_err;
		if (at - w > lo)
			lo = at - w;
		if (at + w < hi)
			hi = at + w;
	}
	c->gpu_at = l->gpu;
	if (lo <= hi) {
		c->host_at = (int64_t)round_((lo + hi) / 2);
		c->err_at = (int64_t)round_((hi - lo) / 2);
	} else {
		c->host_at = l->host;
		c->err_at = l->err;
	}
}

bool
gpu_kernel_anchor(const struct gpu_ktry *t, int n, uint64_t end, int64_t gap, int64_t *host,
                  int64_t *err)
{
	int64_t lo = INT64_MIN, hi = INT64_MAX, best_lo = 0, best_hi = 0;
	bool any = false;
	for (int i = 0; i < n; i++) {
		if (!t[i].hit)
			continue;
		/* Offsets GPU - host, relative to end, so that nothing overflows. */
		int64_t hit = (int64_t)(t[i].hit - end);
		int64_t l = hit - t[i].r, h = hit - t[i].w0;
		if (t[i].miss) {
			int64_t m = (int64_t)(t[i].miss - end) - t[i].w1;
			if (m > l)
				l = m;
		}
		if (l > h)
			continue; /* a clock read out of order */
		if (!any || h - l < best_hi - best_lo)
			best_lo = l, best_hi = h;
		any = true;
		if (l > lo)
			lo = l;
		if (h < hi)
			hi = h;
	}
	if (!any)
		return false;
	if (lo > hi)
		lo = best_lo, hi = best_hi;
	/* The end's host time is end - offset: -(lo + hi) / 2 from end's GPU time. */
	*host = gap - (lo + (hi - lo) / 2);
	*err = (hi - lo + 1) / 2 + GPU_QUANTUM_NS + GPU_LINK_NS;
	return true;
}

void
gpu_clock_init(struct gpu_clock *c, int64_t host, int64_t err, int64_t gap)
{
	c->na = 1;
	c->n = 1;
	c->a[0] = (struct gpu_anchor){.gpu = 0, .host = host, .err = err};
	c->have_link = false;
	c->ref = 0;
	c->rate = 1.0;
	c->rate_err = GPU_RATE_ERR_DEFAULT;
	c->gap = gap;
	fit(c);
}

void
gpu_clock_advance(struct gpu_clock *c, double gpu_ns)
{
	c->ref += gpu_ns;
}

void
gpu_clock_anchor(struct gpu_clock *c, int64_t host, int64_t err, double gpu_ns)
{
	c->ref += gpu_ns;
	if (c->na == GPU_ANCHOR_WINDOW) { /* the oldest goes */
		for (int i = 1; i < c->na; i++)
			c->a[i - 1] = c->a[i];
		c->na--;
	}
	c->a[c->na++] = (struct gpu_anchor){.gpu = c->ref, .host = host, .err = err};
	c->n++;
	fit(c);
}

void
gpu_clock_link(struct gpu_clock *c, uint64_t kend)
{
	struct gpu_anchor *l = &c->a[c->na - 1];
	if (!c->have_link)
		c->kbase = kend;
	l->linked = true;
	l->host_linked = l->host;
	l->lag = l->gpu - (double)(int64_t)(kend - c->kbase);
	/* (the least of every linked anchor of the clock, those gone from the window too) */
	double least = c->have_link && c->lag_min < l->lag ? c->lag_min : l->lag;
	c->have_link = true;
	c->lag_min = least;
	for (int i = 0; i < c->na; i++) {
		struct gpu_anchor *x = &c->a[i];
		double more = x->lag - least;
		if (x->linked)
			x->host = x->host_linked + (more > GPU_LINK_SPREAD_NS ? round_(more) : 0);
	}
	fit(c);
}

int64_t
gpu_clock_map(const struct gpu_clock *c, double gpu_ns, int64_t *bound)
{
	double g = c->ref + gpu_ns, d = (g - c->gpu_at) * c->rate;
	double ad = fabs_(g - c->gpu_at);
	/* A float of ms has 24 bits: its precision is the elapsed time / 2^24. */
	double b =
	    (double)c->err_at + ad * c->rate_err + fabs_(gpu_ns) / 16777216.0 + GPU_QUANTUM_NS;
	if (bound)
		*bound = (int64_t)(b + 0.5);
	return c->host_at + (int64_t)round_(d);
}

/* Whether work that lasted d is of a kind GPU_TWIN_ALIKE of its twins are: within slack of
 * their durations. */
static bool
twins_alike(const struct gpu_span_in *in, int64_t d, int64_t slack)
{
	int n = 0;
	for (int i = 0; i < in->twin_n; i++)
		if (in->twin_durs[i] - d <= slack && d - in->twin_durs[i] <= slack &&
		    ++n >= GPU_TWIN_ALIKE)
			return true;
	return false;
}

void
gpu_work_span(const struct gpu_span_in *in, struct gpu_span *out)
{
	int64_t lo = in->have_before ? in->before_ev + in->gap : INT64_MIN;
	/* Work handed to an idle stream starts when the device picks it up: an operation before
	 * an event handed over alike has its time (the pick-up time is measured with events,
	 * whose times are taken at the end of their operation). On an H100 such kernels started
	 * 0.5-1.2 us after their call returned (CUPTI, the median of 134-142 in each of 4 runs)
	 * where the events' pick-up was 1.9-2.0 us and an operation 1.25: from the pick-up time
	 * alone they came out 0.8-1.5 us late. (Never less than 0: events picked up sooner than
	 * an operation say nothing of how long before its return the call handed work over.) */
	int64_t pickup = in->at_return || in->pickup < in->gap ? 0 : in->pickup - in->gap;
	int64_t ready = (in->sync ? in->t0 : in->t1) + pickup;
	if ((in->kernel || in->graph) && !in->sync && !in->at_return) { /* (GPU_KERNEL_SETUP_NS) */
		int64_t after = in->graph ? 0 : (in->t1 - in->t0) / GPU_KERNEL_HANDOVER_PART;
		ready += GPU_KERNEL_SETUP_NS -
		         (after < GPU_KERNEL_HANDOVER_MAX_NS ? after : GPU_KERNEL_HANDOVER_MAX_NS);
	}
	int64_t s = lo, e = in->end_ev - in->gap;
	/* Work handed over while its stream still had something to do (what was before it, its
	 * START or the work before, ran after the call returned) was queued behind it and starts
	 * when that ends, however long an idle stream takes to pick work up: on a GPU shared with
	 * other processes, that time is the others' turn, and from it a START that waited out the
	 * turn with its kernel was overruled by an estimate (kernels 60-100 us short). */
	bool queued = !in->sync && in->have_before && lo >= in->t1;
	/* But a kernel behind a START of its own that ran at its pick-up, done an operation before
	 * the device picked the kernel up, was handed to an idle stream: it is set up after that
	 * START (GPU_KERNEL_SETUP_NS), and starts no sooner than from its call. */
	if (queued && in->kernel && in->start_idle &&
	    in->before_ev + in->gap <= ready - GPU_KERNEL_SETUP_NS)
		queued = false;
	out->how = 0;
	if (s < ready && !queued) {
		s = ready;
		out->how |= in->sync ? GPU_SPAN_START_BOUND : GPU_SPAN_FROM_CALL;
	} else if (in->sync && in->t1 + pickup - s > GPU_BOUND_SLACK_NS)
		out->how |= GPU_SPAN_START_BOUND; /* the call may have handed it over later */
	/* (Within the slack: the END's record and the anchors' are timed by different reads.) */
	if (in->end_ev <= in->t_er + in->pickup_hi + GPU_BOUND_SLACK_NS) {
		out->how |= GPU_SPAN_END_BOUND;
		if (s > e) { /* the work lies between the earliest it can have started and e */
			s = lo > in->t0 ? lo : in->t0;
			out->how = (out->how & ~GPU_SPAN_FROM_CALL) | GPU_SPAN_START_BOUND;
		}
	}
	/* Work started from a call that came out shorter than its twins, beyond their spread and
	 * a slack, began before the call returned: the call ran on after handing it over (a
	 * thread preempted there, a profiler's callbacks), and the return says nothing of when.
	 * It started when its twins say, where that lies inside its call (earlier, it ran shorter
	 * than they did: the start from the call stands) and after the work before it. */
	if ((out->how & GPU_SPAN_FROM_CALL) && !(out->how & GPU_SPAN_END_BOUND) && in->have_twins) {
		int64_t at = e - in->twin;
		int64_t slack =
		    GPU_TWIN_SLACK_NS + in->twin / GPU_TWIN_SHARE + GPU_TWIN_DEVS * in->twin_dev;
		int64_t move = s - (at > lo ? at : lo);
		bool ran_on = !in->twin_call || in->t1 - in->t0 - in->twin_call >= move - slack;
		if (at >= in->t0 && move > slack && ran_on && !twins_alike(in, e - s, slack)) {
			s = at > lo ? at : lo;
			out->how = (out->how & ~GPU_SPAN_FROM_CALL) | GPU_SPAN_FROM_TWINS;
		}
	}
	/* Work started from the work before it (its END, or a START queued behind it) that came
	 * out longer than its twins, beyond their spread and a slack but by no more than the device
	 * is seen to start work late (GPU_LATE_*), started that much after the work before it: it
	 * lasted as its twins did. */
	if (!out->how && in->have_twins && !in->start_idle && !in->start_turns) {
		int64_t over = e - s - in->twin;
		int64_t slack =
		    GPU_LATE_SLACK_NS + in->twin / GPU_LATE_SHARE + GPU_TWIN_DEVS * in->twin_dev;
		if (over > slack && over <= GPU_LATE_MAX_NS) {
			s = e - in->twin;
			out->how |= GPU_SPAN_LATE;
		}
	}
	/* A mapping that moved between two anchors (or an anchor taken badly, under load) can
	 * put a piece before its call or inside the one before it: the order the program and the
	 * stream imposed wins, and the piece says it was moved. */
	if (s < in->t0) {
		s = in->t0;
		out->how |= GPU_SPAN_CLAMPED_START;
	}
	if (in->have_prev && s < in->prev_end) {
		s = in->prev_end;
		out->how |= GPU_SPAN_CLAMPED_START;
	}
	if (e > in->seen) { /* (a start after it is moved back below) */
		e = in->seen;
		out->how |= GPU_SPAN_CLAMPED_END;
	}
	if (s > e && (out->how & GPU_SPAN_CLAMPED_END)) {
		s = e; /* no earlier than the call, which the host saw begin before */
		out->how |= GPU_SPAN_CLAMPED_START;
	}
	if (s > in->seen) { /* (the piece before it ended by its own seen, before this one's) */
		s = in->seen;
		out->how |= GPU_SPAN_CLAMPED_START;
	}
	if (e < s) {
		e = s;
		out->how |= GPU_SPAN_CLAMPED_END;
	}
	out->start = s;
	out->end = e;
}

static int
cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

int64_t
gpu_median(int64_t *v, int n)
{
	if (n <= 0)
		return 0;
	qsort(v, (size_t)n, sizeof(*v), cmp_i64);
	return v[n / 2];
}

/* The largest sample is the bound on the pick-up time (the library's thread descheduled
 * between a record's return and its clock read makes a sample smaller, never larger), but not
 * one that waited out another process's turn on a shared device: that is how long the device
 * was someone else's, not how long it takes to pick work up while it is this process's, and
 * taken as the bound it made every END within a turn of its record a bound (on an H100, beside
 * a deep process, 362 of a light process's 363 ends; 272 of 49,159 pieces of 35 such runs
 * without it, none over 100 us). */
void
gpu_pickups(int64_t *v, int n, int64_t *median, int64_t *hi)
{
	*median = gpu_median(v, n); /* sorts */
	int i = n - 1;
	while (i > n / 2 && v[i] - *median > GPU_PICKUP_TURN_NS)
		i--;
	*hi = v[i];
}

void
gpu_twin_key(uint64_t key[4], const void *ctx, uint64_t handle, const uint32_t grid[3],
             const uint32_t block[3])
{
	key[0] = (uint64_t)(uintptr_t)ctx;
	key[1] = handle;
	key[2] = (uint64_t)grid[0] << 32 | grid[1];
	key[3] = (uint64_t)grid[2] << 33 | (uint64_t)(block[0] & 0x7ff) << 22 |
	         (uint64_t)(block[1] & 0x7ff) << 11 | (block[2] & 0x7ff);
}

static bool
key_eq(const uint64_t *a, const uint64_t *b)
{
	return a[0] == b[0] && a[1] == b[1] && a[2] == b[2] && a[3] == b[3];
}

static bool
key_free(const uint64_t *k)
{
	return !(k[0] | k[1] | k[2] | k[3]);
}

/* A slot a context's twins were forgotten from: taken again, but searched past (a key after
 * it in its probe sequence is still found). No context is at UINT64_MAX. */
static bool
key_gone(const uint64_t *k)
{
	return k[0] == UINT64_MAX && !(k[1] | k[2] | k[3]);
}

/* Where key is, probing from its hash on, else NULL; *take, when not NULL: the slot it would
 * take, the first free or forgotten one on its way (NULL: none within the probes, the table
 * that full around it). */
#define TWIN_PROBES 32
static struct gpu_twin *
twin_find(const struct gpu_twins *tw, const uint64_t key[4], struct gpu_twin **take)
{
	uint64_t h = 1469598103934665603ull;
	for (int i = 0; i < 4; i++)
		h = (h ^ key[i]) * 1099511628211ull;
	h ^= h >> 29;
	if (take)
		*take = NULL;
	for (unsigned i = 0; i < TWIN_PROBES; i++) {
		struct gpu_twin *t = (struct gpu_twin *)&tw->t[(h + i) % GPU_TWINS];
		if (key_eq(t->key, key))
			return t;
		if ((key_free(t->key) || key_gone(t->key)) && take && !*take)
			*take = t;
		if (key_free(t->key))
			break;
	}
	return NULL;
}

void
gpu_twins_note(struct gpu_twins *tw, const uint64_t key[4], int64_t dur, int64_t call, bool bound)
{
	if (key_free(key) || key_gone(key))
		return;
	struct gpu_twin *take, *t = twin_find(tw, key, &take);
	if (!t) {
		if (!(t = take))
			return;
		*t = (struct gpu_twin){.key = {key[0], key[1], key[2], key[3]}};
	}
	if (bound) {
		t->bound[t->nextb] = dur;
		t->nextb = (t->nextb + 1) % GPU_TWIN_KEEP;
		if (t->nb < GPU_TWIN_KEEP)
			t->nb++;
		return;
	}
	t->dur[t->next] = dur;
	t->call[t->next] = call;
	t->next = (t->next + 1) % GPU_TWIN_KEEP;
	if (t->n < GPU_TWIN_KEEP)
		t->n++;
}

bool
gpu_twins_dur(const struct gpu_twins *tw, const uint64_t key[4], int64_t *median, int64_t *dev,
              int64_t *call, int64_t *durs, int *n)
{
	const struct gpu_twin *t = twin_find(tw, key, NULL);
	if (!t || t->n < GPU_TWIN_MIN)
		return false;
	int64_t v[GPU_TWIN_KEEP];
	if (call) {
		memcpy(v, t->call, sizeof(v[0]) * (size_t)t->n);
		*call = gpu_median(v, t->n);
	}
	for (int i = 0; i < t->n; i++)
		v[i] = t->dur[i];
	if (durs) {
		memcpy(durs, v, sizeof(v[0]) * (size_t)t->n);
		memcpy(durs + t->n, t->bound, sizeof(v[0]) * (size_t)t->nb);
		*n = t->n + t->nb;
	}
	*median = gpu_median(v, t->n);
	for (int i = 0; i < t->n; i++)
		v[i] = v[i] > *median ? v[i] - *median : *median - v[i];
	*dev = gpu_median(v, t->n);
	return true;
}

void
gpu_twins_forget(struct gpu_twins *tw, const void *ctx)
{
	for (unsigned i = 0; i < GPU_TWINS; i++) {
		struct gpu_twin *t = &tw->t[i];
		if (!key_free(t->key) && !key_gone(t->key) && t->key[0] == (uint64_t)(uintptr_t)ctx)
			*t = (struct gpu_twin){.key = {UINT64_MAX, 0, 0, 0}};
	}
}
