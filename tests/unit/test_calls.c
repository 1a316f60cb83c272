/* test_calls.c: the tracker of open calls: parent chains across layers, overlapping NVTX
 * ranges, parents by id, nothing kept for what cannot hold, and memory that follows the
 * threads and spans still open. */
#include <check.h>
#include <stdio.h>
#include <string.h>

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
	suite_add_tcase(s, tc);
	return run_suite(s);
}
