/* gpu_map.c: GPU event times onto CLOCK_MONOTONIC, and the span of a piece of work from its
 * events. Pure functions: tests/unit/test_gpu_map.c feeds them made-up clocks.
 *
 * An anchor is an event recorded on an idle private stream. Its host time is taken as the
 * moment its record returned, the moment the driver handed it to the GPU, as a launch's host
 * time is the moment its call returned: the GPU's delay in picking work up is then the same
 * on both sides and cancels, and an idle stream's work starts when its call returned. The
 * bound is the bracket from that moment to the host seeing the event complete. An event's host time
 * is the latest anchor's plus the GPU time between them (cuEventElapsedTime, a float of ms: kept
 * small by taking anchors often) scaled by the rate. The GPU's clock runs up to ~20 ppm off the
 * host's, so the rate is measured between the first anchor and the latest once they are a second
 * apart; until then it is taken as 1 with GPU_RATE_ERR_DEFAULT of doubt. */
#include <stdint.h>
#include <stdlib.h>

#include "gpu.h"

void
gpu_clock_init(struct gpu_clock *c, int64_t host, int64_t err, int64_t gap)
{
	c->host0 = c->host = host;
	c->err0 = c->err = err;
	c->gpu_since0 = 0;
	c->rate = 1.0;
	c->rate_err = GPU_RATE_ERR_DEFAULT;
	c->gap = gap;
	c->n = 1;
}

void
gpu_clock_anchor(struct gpu_clock *c, int64_t host, int64_t err, double gpu_ns)
{
	c->gpu_since0 += gpu_ns;
	c->host = host;
	c->err = err;
	c->n++;
	double host_since0 = (double)(host - c->host0);
	if (host_since0 >= 1e9 && c->gpu_since0 > 0) {
		c->rate = host_since0 / c->gpu_since0;
		c->rate_err = (double)(c->err0 + err) / host_since0;
	}
}

int64_t
gpu_clock_map(const struct gpu_clock *c, double gpu_ns, int64_t *bound)
{
	double d = gpu_ns * c->rate;
	double ad = d < 0 ? -d : d;
	/* A float of ms has 24 bits: its precision is the elapsed time / 2^24. */
	double b = (double)c->err + ad * c->rate_err + ad / 16777216.0 + GPU_QUANTUM_NS;
	if (bound)
		*bound = (int64_t)(b + 0.5);
	return c->host + (int64_t)(d < 0 ? d - 0.5 : d + 0.5);
}

void
gpu_work_span(const struct gpu_span_in *in, struct gpu_span *out)
{
	int64_t lo = in->have_before ? in->before_ev + in->gap : INT64_MIN;
	int64_t ready = (in->sync ? in->t0 : in->t1) + in->pickup;
	int64_t s = lo, e = in->end_ev - in->gap;
	out->how = 0;
	if (s < ready) {
		s = ready;
		out->how |= in->sync ? GPU_SPAN_START_BOUND : GPU_SPAN_FROM_CALL;
	} else if (in->sync && in->t1 + in->pickup - s > GPU_BOUND_SLACK_NS)
		out->how |= GPU_SPAN_START_BOUND; /* the call may have handed it over later */
	/* (Within the slack: the END's record and the anchors' are timed by different reads.) */
	if (in->end_ev <= in->t_er + in->pickup_hi + GPU_BOUND_SLACK_NS) {
		out->how |= GPU_SPAN_END_BOUND;
		if (s > e) { /* the work lies between the earliest it can have started and e */
			s = lo > in->t0 ? lo : in->t0;
			out->how = (out->how & ~GPU_SPAN_FROM_CALL) | GPU_SPAN_START_BOUND;
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
