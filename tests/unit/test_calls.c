/* test_calls.c: the tracker of open calls: parent chains across layers, overlapping NVTX
 * ranges, parents by id, nothing kept for what cannot hold, threads apart by host and rank,
 * time that does not grow with the overlap, and memory that follows the threads and spans
 * still open, within a bound when asked; and the index from GPU work to its call, by
 * (process, corr), bounded. */
#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "calls.h"
#include "check_main.h"

static struct cut_event
ev(enum cut_layer layer, const char *name, int64_t ts, int64_t dur)
{
	struct cut_event e;
	cut_event_init(&e);
	e.layer = layer;
	e.name = name;
	e.ts = ts;
	e.pid = 7;
	e.tid = 8;
	if (dur >= 0) {
		e.dur = dur;
		e.has |= CUT_HAS_DUR;
	}
	return e;
}

/* Opens e after asking for its parent (as a merge does); returns the parent's name or "-". */
static const char *
step(struct cut_calls *c, struct cut_event e)
{
	static char name[64];
	struct cut_span *p = cut_calls_parent(c, &e);
	snprintf(name, sizeof(name), "%s", p ? cut_span_name(p) : "-");
	cut_calls_open(c, &e);
	return name;
}

/* A submission as a caller keeps it: the call's start and a mark. */
struct sub {
	struct cut_submit k;
	int64_t ts;
	int mark;
};

/* A record of corr (none when corr < 0) at ts. */
static struct cut_event
corr_ev(enum cut_layer layer, int64_t ts, int64_t corr, char *args)
{
	struct cut_event e = ev(layer, layer == CUT_GPU ? "kernel" : "cuLaunchKernel", ts, 10);
	if (corr >= 0) {
		sprintf(args, "{\"stream\":1,\"corr\":%lld}", (long long)corr);
		e.args = args;
	}
	return e;
}

static struct sub *
submit(struct cut_submits *s, int64_t proc, int64_t ts, int64_t corr, int mark)
{
	char args[64];
	struct cut_event e = corr_ev(CUT_API, ts, corr, args);
	struct sub *x = cut_calls_submit(s, proc, &e);
	if (x) {
		ck_assert_int_eq(x->k.proc, proc);
		ck_assert_int_eq(x->k.corr, corr);
		ck_assert(x->ts == 0 && x->mark == 0); /* the caller's members start zero */
		x->ts = ts;
		x->mark = mark;
	}
	return x;
}

/* The mark of the call that submitted work (proc, corr), or -1 for none. */
static int
submitter(struct cut_submits *s, int64_t proc, int64_t corr)
{
	char args[64];
	struct cut_event e = corr_ev(CUT_GPU, 0, corr, args);
	struct sub *x = cut_calls_submitter(s, proc, &e);
	return x ? x->mark : -1;
}

START_TEST(test_submits)
{
	struct cut_submits *s = cut_submits_new(sizeof(struct sub), 1000);
	ck_assert_ptr_null(submit(s, 1, 10, -1, 9)); /* no corr: nothing noted */
	ck_assert_ptr_nonnull(submit(s, 1, 20, 5, 1));
	ck_assert_ptr_nonnull(submit(s, 2, 30, 5, 2)); /* the same corr, another process */
	ck_assert_int_eq(submitter(s, 1, 5), 1);
	ck_assert_int_eq(submitter(s, 2, 5), 2);
	ck_assert_int_eq(submitter(s, 3, 5), -1);
	ck_assert_int_eq(submitter(s, 1, 6), -1);
	ck_assert_int_eq(submitter(s, 1, -1), -1);
	/* a key noted again: the latest first, then the one before */
	submit(s, 1, 40, 5, 3);
	char args[64];
	struct cut_event w = corr_ev(CUT_GPU, 50, 5, args);
	struct sub *x = cut_calls_submitter(s, 1, &w);
	ck_assert_int_eq(x->mark, 3);
	x = cut_submits_older(s, x);
	ck_assert_int_eq(x->mark, 1);
	ck_assert_ptr_null(cut_submits_older(s, x));
	/* forgotten: the one before is found again; forgetting twice is nothing */
	x = cut_calls_submitter(s, 1, &w);
	cut_submits_forget(s, x);
	cut_submits_forget(s, x);
	ck_assert_int_eq(submitter(s, 1, 5), 1);
	ck_assert_uint_eq(cut_submits_len(s), 2);
	/* the oldest first, and forgetting by time (as cutmerge's window does) */
	x = cut_submits_oldest(s);
	ck_assert_int_eq(x->mark, 1);
	cut_submits_forget(s, x);
	ck_assert_int_eq(cut_submits_oldest(s) ? ((struct sub *)cut_submits_oldest(s))->mark : -1,
	                 2);
	ck_assert_int_eq(submitter(s, 1, 5), -1);
	cut_submits_forget(s, cut_submits_oldest(s));
	ck_assert_ptr_null(cut_submits_oldest(s));
	ck_assert_uint_eq(cut_submits_len(s), 0);
	cut_submits_free(s);
}
END_TEST

START_TEST(test_submits_bound)
{
	/* The latest max are kept: the oldest go, and only they, whatever their keys. */
	struct cut_submits *s = cut_submits_new(sizeof(struct sub), 3);
	submit(s, 1, 10, 1, 1);
	submit(s, 1, 20, 1, 2); /* the same key again */
	submit(s, 1, 30, 2, 3);
	submit(s, 1, 40, 3, 4); /* the first goes: its key stays, with the second */
	ck_assert_uint_eq(cut_submits_len(s), 3);
	ck_assert_int_eq(submitter(s, 1, 1), 2);
	submit(s, 1, 50, 4, 5); /* the second goes, and its key */
	ck_assert_int_eq(submitter(s, 1, 1), -1);
	ck_assert_int_eq(submitter(s, 1, 2), 3);
	ck_assert_int_eq(submitter(s, 1, 4), 5);
	ck_assert_uint_eq(cut_submits_len(s), 3);
	/* an entry forgotten in the middle leaves room that the bound counts until it is the
	 * oldest */
	struct sub *x = (struct sub *)cut_submits_oldest(s);
	ck_assert_int_eq(x->mark, 3);
	char args[64];
	struct cut_event w = corr_ev(CUT_GPU, 60, 3, args);
	cut_submits_forget(s, cut_calls_submitter(s, 1, &w));
	ck_assert_uint_eq(cut_submits_len(s), 2);
	submit(s, 1, 70, 5, 6); /* 3 goes */
	ck_assert_int_eq(submitter(s, 1, 2), -1);
	ck_assert_int_eq(submitter(s, 1, 4), 5);
	ck_assert_int_eq(submitter(s, 1, 5), 6);
	cut_submits_free(s);

	/* Many, in a ring that grows and then wraps: each found with its own data. */
	s = cut_submits_new(sizeof(struct sub), 5000);
	for (int i = 0; i < 20000; i++)
		submit(s, i % 7, i, i, i);
	ck_assert_uint_eq(cut_submits_len(s), 5000);
	for (int i = 0; i < 20000; i++)
		ck_assert_int_eq(submitter(s, i % 7, i), i < 15000 ? -1 : i);
	for (int i = 15000; i < 20000; i += 2) {
		struct cut_event g = corr_ev(CUT_GPU, 0, i, args);
		cut_submits_forget(s, cut_calls_submitter(s, i % 7, &g));
	}
	ck_assert_uint_eq(cut_submits_len(s), 2500);
	for (int i = 15000; i < 20000; i++)
		ck_assert_int_eq(submitter(s, i % 7, i), i % 2 ? i : -1);
	cut_submits_free(s);
}
END_TEST

START_TEST(test_chain)
{
	struct cut_calls *c = cut_calls_new(CUT_CALLS_HOLDERS | CUT_CALLS_NAMES);
	ck_assert_str_eq(step(c, ev(CUT_NVTX, "step", 0, 1000)), "-");
	ck_assert_str_eq(step(c, ev(CUT_NVTX, "forward", 5, 900)), "step");
	ck_assert_str_eq(step(c, ev(CUT_RUNTIME, "cudaLaunchKernel", 10, 100)), "forward");
	ck_assert_str_eq(step(c, ev(CUT_API, "cuLaunchKernel", 12, 50)), "cudaLaunchKernel");
	ck_assert_str_eq(step(c, ev(CUT_API, "cuGetProcAddress", 15, 10)), "cuLaunchKernel");
	ck_assert_str_eq(step(c, ev(CUT_IOCTL, "NV_ESC_RM_CONTROL", 16, 2)), "cuGetProcAddress");
	ck_assert_str_eq(step(c, ev(CUT_IOCTL, "NV_ESC_RM_ALLOC", 30, 2)), "cuLaunchKernel");
	ck_assert_str_eq(step(c, ev(CUT_KERNEL, "nvidia_ioctl", 31, 1)), "cuLaunchKernel");
	/* inside the runtime call, after its driver call: the runtime call */
	ck_assert_str_eq(step(c, ev(CUT_SCHED, "off-cpu", 70, 5)), "cudaLaunchKernel");
	/* gpu work and interrupts: no parent, whatever the time says */
	ck_assert_str_eq(step(c, ev(CUT_GPU, "vecAdd", 20, 5)), "-");
	struct cut_event irq = ev(CUT_IRQ, "nvidia", 20, 1);
	irq.pid = irq.tid = 0;
	ck_assert_str_eq(step(c, irq), "-");
	/* a driver call outside any runtime call: the NVTX range around it */
	ck_assert_str_eq(step(c, ev(CUT_API, "cuMemAlloc_v2", 200, 10)), "forward");
	ck_assert_str_eq(step(c, ev(CUT_IOCTL, "NV_ESC_RM_ALLOC", 205, 1)), "cuMemAlloc_v2");
	/* an ioctl outside driver calls, inside the ranges */
	ck_assert_str_eq(step(c, ev(CUT_IOCTL, "NV_ESC_RM_FREE", 300, 1)), "forward");
	/* the end of a span is not inside it */
	ck_assert_str_eq(step(c, ev(CUT_API, "cuCtxSynchronize", 905, 10)), "step");
	ck_assert_str_eq(step(c, ev(CUT_API, "cuCtxSynchronize", 1000, 10)), "-");
	/* another thread sees nothing of this one's */
	struct cut_event other = ev(CUT_IOCTL, "NV_ESC_RM_CONTROL", 1001, 1);
	other.tid = 9;
	ck_assert_str_eq(step(c, other), "-");
	/* instants hold nothing; only kept layers are opened */
	struct cut_event mark = ev(CUT_NVTX, "mark", 1100, -1);
	ck_assert_ptr_null(cut_calls_open(c, &mark));
	struct cut_event io = ev(CUT_IOCTL, "x", 1100, 10);
	ck_assert_ptr_null(cut_calls_open(c, &io));
	cut_calls_free(c);
}
END_TEST

/* NVTX start/end ranges overlap freely: the latest started one still open wins. */
START_TEST(test_overlapping_ranges)
{
	struct cut_calls *c = cut_calls_new(CUT_CALLS_HOLDERS | CUT_CALLS_NAMES);
	ck_assert_str_eq(step(c, ev(CUT_NVTX, "load", 0, 100)), "-");
	ck_assert_str_eq(step(c, ev(CUT_API, "a", 40, 1)), "load");
	ck_assert_str_eq(step(c, ev(CUT_NVTX, "epoch", 50, 100)), "load"); /* starts inside */
	ck_assert_str_eq(step(c, ev(CUT_API, "b", 60, 1)), "epoch");
	ck_assert_str_eq(step(c, ev(CUT_NVTX, "push", 70, 10)), "epoch");
	ck_assert_str_eq(step(c, ev(CUT_API, "c", 75, 1)), "push");
	ck_assert_str_eq(step(c, ev(CUT_API, "d", 90, 1)), "epoch");
	ck_assert_str_eq(step(c, ev(CUT_API, "e", 120, 1)), "epoch"); /* load has ended */
	ck_assert_uint_eq(cut_calls_spans(c), 2);                     /* epoch and e */
	ck_assert_str_eq(step(c, ev(CUT_API, "f", 150, 1)), "-");
	ck_assert_uint_eq(cut_calls_spans(c), 1);
	cut_calls_free(c);
}
END_TEST

/* A merged trace says its parents: they win over time, and ids that are not open give none. */
START_TEST(test_parent_by_id)
{
	struct cut_calls *c = cut_calls_new(CUT_CALLS_HOLDERS | CUT_CALLS_NAMES);
	struct cut_event a = ev(CUT_API, "outer", 0, 100), b = ev(CUT_API, "inner", 10, 50);
	a.id = 1, b.id = 2;
	a.has |= CUT_HAS_ID, b.has |= CUT_HAS_ID;
	cut_calls_open(c, &a);
	cut_calls_open(c, &b);
	struct cut_event i = ev(CUT_IOCTL, "x", 20, 1);
	ck_assert_int_eq(cut_calls_parent(c, &i)->id, 2);
	i.parent = 1;
	i.has |= CUT_HAS_PARENT;
	ck_assert_int_eq(cut_calls_parent(c, &i)->id, 1);
	i.parent = 3;
	ck_assert_ptr_null(cut_calls_parent(c, &i));
	ck_assert_int_eq(cut_calls_within(c, &i, CUT_API)->id, 2);
	ck_assert_ptr_null(cut_calls_within(c, &i, CUT_RUNTIME));
	/* closing the inner one early: the outer holds again */
	cut_calls_close(c, &i, cut_calls_within(c, &i, CUT_API));
	ck_assert_int_eq(cut_calls_within(c, &i, CUT_API)->id, 1);
	cut_calls_free(c);
}
END_TEST

/* Other layers on request (cutgaps keeps ioctls), names of any length, the caller's words. */
START_TEST(test_mask_and_names)
{
	char longname[300];
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	struct cut_calls *c = cut_calls_new(1u << CUT_API | 1u << CUT_IOCTL | CUT_CALLS_NAMES);
	struct cut_event a = ev(CUT_API, longname, 0, 100), io = ev(CUT_IOCTL, "io", 10, 20);
	struct cut_span *s = cut_calls_open(c, &a);
	s->user[0] = 42;
	ck_assert_ptr_nonnull(cut_calls_open(c, &io));
	struct cut_event r = ev(CUT_RUNTIME, "cudaFree", 11, 1);
	ck_assert_ptr_null(cut_calls_open(c, &r)); /* not kept */
	struct cut_event off = ev(CUT_SCHED, "off-cpu", 15, 1);
	ck_assert_str_eq(cut_calls_within(c, &off, CUT_IOCTL)->name, "io");
	ck_assert_str_eq(cut_span_name(cut_calls_parent(c, &off)), longname); /* not the ioctl */
	ck_assert_uint_eq(cut_calls_parent(c, &off)->user[0], 42);
	cut_calls_free(c);
	/* names only on request */
	c = cut_calls_new(CUT_CALLS_HOLDERS);
	cut_calls_open(c, &a);
	ck_assert_str_eq(cut_span_name(cut_calls_parent(c, &off)), "");
	cut_calls_free(c);
}
END_TEST

/* A million short calls on ever new threads, and deep nesting that unwinds: what is kept
 * follows what is open. */
START_TEST(test_memory_bound)
{
	struct cut_calls *c = cut_calls_new(CUT_CALLS_HOLDERS | CUT_CALLS_NAMES);
	size_t most = 0;
	for (int64_t i = 0; i < 1000000; i++) {
		struct cut_event e = ev(CUT_API, "cuCtxGetDevice", 10 * i, 5);
		e.tid = 100 + i % 50000; /* 50000 threads, each called again 20 times */
		cut_calls_parent(c, &e);
		cut_calls_open(c, &e);
		most = cut_calls_threads(c) > most ? cut_calls_threads(c) : most;
	}
	ck_assert_uint_le(most, 128);
	ck_assert_uint_le(cut_calls_spans(c), 128);
	for (int64_t d = 0; d < 10000; d++) {
		struct cut_event e = ev(CUT_NVTX, "r", 20000000 + d, 20000 - 2 * d);
		ck_assert_ptr_nonnull(cut_calls_open(c, &e));
	}
	struct cut_event in = ev(CUT_API, "x", 20009999, 1);
	ck_assert_int_eq(cut_calls_parent(c, &in)->ts, 20009999);
	struct cut_event after = ev(CUT_API, "y", 20020000, 1);
	ck_assert_ptr_null(cut_calls_parent(c, &after));
	ck_assert_uint_le(cut_calls_spans(c), 128);
	cut_calls_free(c);
}
END_TEST

/* The same pid and tid on two hosts, or of two ranks, are two threads: a call of one holds
 * nothing of the other's (issue 23: a container's trainer is pid 1 on every host). */
START_TEST(test_hosts_and_ranks)
{
	struct cut_calls *c = cut_calls_new(CUT_CALLS_HOLDERS | CUT_CALLS_NAMES);
	struct cut_event a = ev(CUT_API, "onA", 0, 100);
	a.host = "A";
	ck_assert_str_eq(step(c, a), "-");
	struct cut_event b = ev(CUT_API, "onB", 10, 100);
	b.host = "B";
	ck_assert_str_eq(step(c, b), "-"); /* not inside onA */
	struct cut_event io = ev(CUT_IOCTL, "x", 20, 1);
	io.host = "A";
	ck_assert_str_eq(step(c, io), "onA");
	io.host = "B";
	ck_assert_str_eq(step(c, io), "onB");
	io.host = NULL; /* no host: neither */
	ck_assert_str_eq(step(c, io), "-");
	io.host = "";
	ck_assert_str_eq(step(c, io), "-");
	/* ranks apart on one host */
	struct cut_event r0 = ev(CUT_RUNTIME, "r0", 30, 100), r1 = ev(CUT_RUNTIME, "r1", 31, 100);
	r0.host = r1.host = "A";
	r0.rank = 0, r1.rank = 1;
	r0.has |= CUT_HAS_RANK, r1.has |= CUT_HAS_RANK;
	ck_assert_str_eq(step(c, r0), "-");
	ck_assert_str_eq(step(c, r1), "-");
	struct cut_event call = ev(CUT_API, "in1", 40, 1);
	call.host = "A", call.rank = 1, call.has |= CUT_HAS_RANK;
	ck_assert_str_eq(step(c, call), "r1");
	call.rank = 0;
	ck_assert_str_eq(step(c, call), "r0");
	call.has &= ~CUT_HAS_RANK; /* host A without a rank: onA's thread */
	ck_assert_str_eq(step(c, call), "onA");
	ck_assert_uint_eq(cut_calls_threads(c), 4); /* A, B, A rank 0, A rank 1 */
	/* within and close find the span on its own thread only */
	struct cut_event probe = ev(CUT_IOCTL, "y", 50, 1);
	probe.host = "B";
	ck_assert_str_eq(cut_span_name(cut_calls_within(c, &probe, CUT_API)), "onB");
	cut_calls_close(c, &probe, cut_calls_within(c, &probe, CUT_API));
	ck_assert_ptr_null(cut_calls_within(c, &probe, CUT_API));
	probe.host = "A";
	ck_assert_str_eq(cut_span_name(cut_calls_within(c, &probe, CUT_API)), "onA");
	cut_calls_free(c);
}
END_TEST

static double
cpu_seconds(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* n calls on one thread, each asked its parent and opened, then an ioctl in each; nested
 * when overlap, else one after the other. Returns the CPU seconds taken. */
static double
run_calls(int64_t n, bool overlap)
{
	struct cut_calls *c = cut_calls_new(CUT_CALLS_HOLDERS | CUT_CALLS_NAMES);
	double t0 = cpu_seconds();
	for (int64_t i = 0; i < n; i++) {
		/* overlapping: every call the same span, as 80k identical calls of issue 23 */
		struct cut_event e =
		    ev(CUT_API, "cuCtxGetDevice", overlap ? 1000 : 10 * i, overlap ? 1000000 : 5);
		cut_calls_parent(c, &e);
		cut_calls_open(c, &e);
		struct cut_event io = ev(CUT_IOCTL, "x", e.ts, 1);
		ck_assert_ptr_nonnull(cut_calls_parent(c, &io));
		cut_calls_within(c, &io, CUT_RUNTIME);
	}
	if (overlap)
		ck_assert_uint_eq(cut_calls_spans(c), (size_t)n);
	struct cut_event after = ev(CUT_API, "y", 10 * n + 2000000, 1);
	ck_assert_ptr_null(cut_calls_parent(c, &after));
	ck_assert_uint_eq(cut_calls_spans(c), 0);
	double t = cpu_seconds() - t0;
	cut_calls_free(c);
	return t;
}

/* Issue 23: the parent was looked for among every open span, so identical overlapping calls
 * took quadratic time (80k: 12 s). Held to the same number of calls that do not overlap, in
 * CPU time of this process, with a margin no load can cross (quadratic is 1000 times). */
START_TEST(test_overlap_linear)
{
	const int64_t n = 200000;
	double flat = run_calls(n, false), deep = run_calls(n, true);
	double base = flat > 0.005 ? flat : 0.005; /* a clock too coarse for the baseline */
	ck_assert_msg(deep < 20 * base, "%lld overlapping calls took %.3f s, apart %.3f s",
	              (long long)n, deep, flat);
}
END_TEST

/* Parents by id among many open spans, and spans closed in any order. */
START_TEST(test_by_id_many)
{
	struct cut_calls *c = cut_calls_new(CUT_CALLS_HOLDERS);
	const int64_t n = 100000;
	for (int64_t i = 0; i < n; i++) {
		struct cut_event e = ev(CUT_API, "a", i, 10 * n - i);
		e.id = i + 1;
		e.has |= CUT_HAS_ID;
		cut_calls_open(c, &e);
	}
	/* the baseline: as many asks on a thread with one span open */
	struct cut_event one = ev(CUT_API, "one", 0, 10 * n);
	one.tid = 99, one.id = 1, one.has |= CUT_HAS_ID;
	cut_calls_open(c, &one);
	double t0 = cpu_seconds();
	for (int64_t i = 0; i < n; i++) {
		struct cut_event io = ev(CUT_IOCTL, "x", n, 1);
		io.tid = 99, io.parent = 1, io.has |= CUT_HAS_PARENT;
		ck_assert_int_eq(cut_calls_parent(c, &io)->ts, 0);
	}
	double base = cpu_seconds() - t0;
	t0 = cpu_seconds();
	for (int64_t i = 0; i < n; i++) {
		struct cut_event io = ev(CUT_IOCTL, "x", n, 1);
		io.parent = 1 + (i * 7919) % n;
		io.has |= CUT_HAS_PARENT;
		struct cut_span *p = cut_calls_parent(c, &io);
		ck_assert_ptr_nonnull(p);
		ck_assert_int_eq(p->id, io.parent);
	}
	double many = cpu_seconds() - t0;
	ck_assert_msg(many < 20 * (base > 0.005 ? base : 0.005), "by id among %lld: %.3f s, %.3f",
	              (long long)n, many, base);
	/* close every other one: the rest still found by id and by time */
	for (int64_t i = 0; i < n; i += 2) {
		struct cut_event io = ev(CUT_IOCTL, "x", n, 1);
		io.parent = i + 1;
		io.has |= CUT_HAS_PARENT;
		cut_calls_close(c, &io, cut_calls_parent(c, &io));
		ck_assert_ptr_null(cut_calls_parent(c, &io));
	}
	ck_assert_uint_eq(cut_calls_spans(c), (size_t)n / 2 + 1); /* and "one" */
	struct cut_event io = ev(CUT_IOCTL, "x", n, 1);
	ck_assert_int_eq(cut_calls_parent(c, &io)->id, n); /* the last opened */
	io.parent = 2;
	io.has |= CUT_HAS_PARENT;
	ck_assert_int_eq(cut_calls_parent(c, &io)->id, 2);
	/* spans opened after the index was made are in it */
	struct cut_event late = ev(CUT_API, "late", n + 1, 5);
	late.id = 5 * n;
	late.has |= CUT_HAS_ID;
	cut_calls_open(c, &late);
	io.ts = n + 2;
	io.parent = 5 * n;
	ck_assert_str_eq(cut_span_name(cut_calls_parent(c, &io)), "");
	ck_assert_int_eq(cut_calls_parent(c, &io)->id, 5 * n);
	cut_calls_free(c);
}
END_TEST

/* The bound on what is open: past it a span is not opened, and counted. */
START_TEST(test_limit)
{
	struct cut_calls *c = cut_calls_new(CUT_CALLS_HOLDERS | CUT_CALLS_NAMES);
	cut_calls_limit(c, 100, SIZE_MAX);
	for (int64_t i = 0; i < 1000; i++) {
		struct cut_event e = ev(CUT_API, "same", 0, 1000);
		struct cut_span *s = cut_calls_open(c, &e);
		ck_assert(i < 100 ? s != NULL : s == NULL);
	}
	ck_assert_uint_eq(cut_calls_spans(c), 100);
	ck_assert_uint_eq(cut_calls_refused(c), 900);
	struct cut_event after = ev(CUT_API, "after", 1000, 1);
	ck_assert_ptr_nonnull(cut_calls_open(c, &after)); /* the others have ended */
	cut_calls_free(c);
	c = cut_calls_new(CUT_CALLS_HOLDERS | CUT_CALLS_NAMES);
	cut_calls_limit(c, SIZE_MAX, 1 << 20);
	char name[1000];
	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	int64_t opened = 0;
	for (int64_t i = 0; i < 10000; i++) {
		struct cut_event e = ev(CUT_API, name, i, 100000);
		opened += cut_calls_open(c, &e) != NULL;
	}
	ck_assert_uint_le(cut_calls_bytes(c), 1 << 20);
	ck_assert_int_gt(opened, 100);
	ck_assert_int_lt(opened, 1100);
	ck_assert_uint_eq(cut_calls_refused(c), (uint64_t)(10000 - opened));
	cut_calls_free(c);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("calls");
	TCase *tc = tcase_create("calls");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_chain);
	tcase_add_test(tc, test_overlapping_ranges);
	tcase_add_test(tc, test_parent_by_id);
	tcase_add_test(tc, test_mask_and_names);
	tcase_add_test(tc, test_memory_bound);
	tcase_add_test(tc, test_hosts_and_ranks);
	tcase_add_test(tc, test_overlap_linear);
	tcase_add_test(tc, test_by_id_many);
	tcase_add_test(tc, test_limit);
	tcase_add_test(tc, test_submits);
	tcase_add_test(tc, test_submits_bound);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
