/* test_timeline.c: the timeline model of the visualisers through a sink that writes down what
 * it is told: nesting and overlap lanes, spill lanes reused, slice ends in time order, the GPU
 * busy and device memory counters in both kinds of sink, flows from calls, machines by host or
 * boot, what a record changes. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "check_main.h"
#include "timeline.h"

static struct cut_buf log_;
static struct tl_track *last_track; /* the latest track told of */

static const char *const kinds[] = {"process", "thread", "offcpu", "nvtx",
                                    "irqs",    "irq",    "gpu",    "stream"};

static void
track(void *arg, struct tl_track *t, unsigned what)
{
	(void)arg;
	last_track = t;
	if (what & ~(unsigned)TL_MADE)
		buf_addf(&log_, "%s%s%s%s%s;", kinds[t->kind], what & TL_NEW ? " new" : "",
		         what & TL_LABEL ? " label" : "", what & TL_NAMED ? " named" : "",
		         what & TL_RANKED ? " ranked" : "");
	if (what & TL_RANKED)
		buf_addf(&log_, "rank %lld;", (long long)t->rank);
}

static void
slice(void *arg, struct tl_lane *l, struct tl_open *o, const struct cut_event *ev,
      const struct tl_call *call)
{
	(void)arg, (void)o;
	buf_addf(&log_, "%s %s/%zu", ev->name, kinds[l->t->kind], l->index);
	if (call)
		buf_addf(&log_, " in %lld", (long long)call->ts);
	buf_adds(&log_, ";");
}

static void
slice_end(void *arg, struct tl_lane *l, struct tl_open *o)
{
	(void)arg;
	buf_addf(&log_, "end %s/%zu %lld;", kinds[l->t->kind], l->index, (long long)o->end);
}

static void
counter(void *arg, struct tl_track *t, int64_t ts, int64_t value)
{
	(void)arg;
	buf_addf(&log_, "%s %lld=%lld;", t->kind == TL_GPU ? "busy" : "memory", (long long)ts,
	         (long long)value);
}

static void
flow(void *arg, struct tl_lane *from, int64_t ts, struct tl_lane *to, const struct cut_event *ev)
{
	(void)arg, (void)to;
	buf_addf(&log_, "flow %s %lld->%s;", kinds[from->t->kind], (long long)ts, ev->name);
}

/* Runs the lines (one or two inputs, split at a "--" line) through a timeline writing to a sink
 * of these flags that logs slices, or counters and flows, or tracks; returns the log. */
enum { SLICES = 1, COUNTERS = 2, TRACKS = 4 };
static const char *
run(unsigned flags, unsigned log, const char *lines, struct tl **out)
{
	char path[2][32] = {"/tmp/test_timeline.XXXXXX", "/tmp/test_timeline.XXXXXX"};
	char *argv[2] = {path[0], path[1]};
	const char *split = strstr(lines, "--\n");
	int n = split ? 2 : 1;
	for (int i = 0; i < n; i++) {
		int fd = mkstemp(path[i]);
		ck_assert_int_ge(fd, 0);
		const char *s = i ? split + 3 : lines;
		size_t len = i || !split ? strlen(s) : (size_t)(split - lines);
		ck_assert_int_eq(write(fd, s, len), (ssize_t)len);
		close(fd);
	}
	struct tl_sink sink = {.flags = flags, .calls = 1u << CUT_API};
	if (log & SLICES) {
		sink.slice = slice;
		sink.slice_end = slice_end;
	}
	if (log & COUNTERS) {
		sink.counter = counter;
		sink.flow = flow;
	}
	sink.track = track;
	buf_reset(&log_);
	if (!(log & TRACKS))
		sink.track = NULL;
	struct tl *tl = tl_new(&sink);
	ck_assert_int_eq(tl_run(tl, n, argv), 0);
	tl_flush(tl);
	for (int i = 0; i < n; i++)
		unlink(path[i]);
	if (out)
		*out = tl;
	else
		tl_free(tl);
	return log_.s ? log_.s : "";
}

#define API(ts, dur, name)                                                                         \
	"{\"ts\":" #ts ",\"dur\":" #dur ",\"pid\":7,\"tid\":7,\"layer\":\"api\",\"name\":\"" name  \
	"\"}\n"

START_TEST(test_nesting)
{
	/* nested calls share a lane, an ioctl is in the innermost call open, a call that overlaps
	 * another without nesting takes an overlap lane; the same for both kinds of sink */
	const char *in = API(0, 100, "a")
	    API(10, 50, "b") "{\"ts\":20,\"dur\":5,\"pid\":7,\"tid\":7,\"layer\":\"ioctl\","
	                     "\"name\":\"io\"}\n" API(200, 100, "c") API(250, 100, "d");
	const char *want = "a thread/0;b thread/0;io thread/0 in 10;c thread/0;d thread/1;";
	ck_assert_str_eq(run(TL_COMPLETE, SLICES, in, NULL), want);
	ck_assert_str_eq(
	    run(0, SLICES, in, NULL),
	    "a thread/0;b thread/0;io thread/0 in 10;end thread/0 25;end thread/0 60;"
	    "end thread/0 100;c thread/0;d thread/1;end thread/0 300;end thread/1 350;");
}
END_TEST

START_TEST(test_spill)
{
	/* 40 pieces of GPU work, each overlapping all before it, twice: past the 16 lanes
	 * scanned, each takes a spill lane; the second round the lanes the first left free */
	char in[20000] = "";
	for (int r = 0; r < 2; r++)
		for (int i = 0; i < 40; i++)
			snprintf(in + strlen(in), sizeof(in) - strlen(in),
			         "{\"ts\":%d,\"dur\":1000,\"pid\":1,\"tid\":1,\"layer\":\"gpu\","
			         "\"name\":\"k\",\"args\":{\"device\":0,\"stream\":\"0x5\"}}\n",
			         10000 * r + i);
	for (unsigned flags = 0; flags <= TL_COMPLETE; flags += TL_COMPLETE) {
		struct tl *tl;
		run(flags, TRACKS, in, &tl);
		ck_assert_int_eq(last_track->kind, TL_STREAM);
		size_t n = 0;
		for (struct tl_lane *l = last_track->lanes; l; l = l->next)
			n++;
		ck_assert_uint_eq(n, 40);
		tl_free(tl);
	}
}
END_TEST

START_TEST(test_ends)
{
	/* ends in time order, the innermost first among equal ends, each before the next event
	 * that comes after it; the rest at tl_flush */
	const char *in =
	    API(0, 100, "a") API(50, 50, "b") API(60, 40, "c") API(100, 10, "d") API(120, 10, "e");
	ck_assert_str_eq(run(0, SLICES, in, NULL),
	                 "a thread/0;b thread/0;c thread/0;end thread/0 100;end thread/0 100;"
	                 "end thread/0 100;d thread/0;end thread/0 110;e thread/0;"
	                 "end thread/0 130;");
}
END_TEST

#define GPU(ts, dur, corr)                                                                         \
	"{\"ts\":" #ts ",\"dur\":" #dur                                                            \
	",\"pid\":7,\"tid\":7,\"layer\":\"gpu\",\"name\":\"k" #corr                                \
	"\",\"args\":{\"device\":0,\"stream\":\"0x0\",\"corr\":" #corr "}}\n"

START_TEST(test_busy)
{
	const char *in = GPU(0, 100, 1) GPU(50, 100, 2) GPU(200, 100, 3);
	/* written whole: the work that ended is counted when the next comes, the rest at the
	 * end */
	ck_assert_str_eq(run(TL_COMPLETE, COUNTERS, in, NULL),
	                 "busy 0=1;busy 50=2;busy 100=1;busy 150=0;busy 200=1;busy 300=0;");
	/* begun and ended: each end as it is passed */
	ck_assert_str_eq(run(0, COUNTERS, in, NULL),
	                 "busy 0=1;busy 50=2;busy 100=1;busy 150=0;busy 200=1;busy 300=0;");
}
END_TEST

START_TEST(test_memory_flow)
{
	/* allocations counted at their end, frees at their start; host memory and failed calls
	 * not; a flow from the call that submitted work (its corr) to the work */
	const char *in =
	    "{\"ts\":0,\"dur\":10,\"pid\":7,\"tid\":7,\"layer\":\"api\",\"name\":\"cuMemAlloc_v2\","
	    "\"ret\":0,\"args\":{\"bytes\":4096,\"dptr\":\"0x1000\"}}\n"
	    "{\"ts\":20,\"dur\":10,\"pid\":7,\"tid\":7,\"layer\":\"api\",\"name\":\"cuMemAllocHost_"
	    "v2\","
	    "\"ret\":0,\"args\":{\"bytes\":64,\"dptr\":\"0x2000\"}}\n"
	    "{\"ts\":30,\"dur\":10,\"pid\":7,\"tid\":7,\"layer\":\"api\",\"name\":\"cuMemAlloc_"
	    "v2\","
	    "\"ret\":2,\"args\":{\"bytes\":64,\"dptr\":\"0x3000\"}}\n"
	    "{\"ts\":40,\"dur\":10,\"pid\":7,\"tid\":7,\"layer\":\"api\",\"name\":"
	    "\"cuLaunchKernel\","
	    "\"args\":{\"corr\":9}}\n" GPU(60, 10, 9) "{\"ts\":80,\"dur\":10,\"pid\":7,\"tid\":7,"
	                                              "\"layer\":\"api\",\"name\":\"cuMemFree_v2\","
	                                              "\"ret\":0,\"args\":{\"dptr\":\"0x1000\"}}\n";
	ck_assert_str_eq(run(TL_COMPLETE, COUNTERS, in, NULL),
	                 "memory 10=4096;busy 60=1;flow thread 40->k9;memory 80=0;busy 70=0;");
}
END_TEST

START_TEST(test_flow_bound)
{
	/* Two calls of corr 1, then 262142 others: the first is the oldest of the 262144 kept
	 * and goes, the second stays, and the work of corr 1 still has its flow. */
	struct cut_buf in = {0};
	buf_adds(&in, "{\"ts\":10,\"dur\":1,\"pid\":7,\"tid\":7,\"layer\":\"api\",\"name\":"
	              "\"cuLaunchKernel\",\"args\":{\"corr\":1}}\n"
	              "{\"ts\":20,\"dur\":1,\"pid\":7,\"tid\":7,\"layer\":\"api\",\"name\":"
	              "\"cuLaunchKernel\",\"args\":{\"corr\":1}}\n");
	for (int i = 0; i < (1 << 18) - 1; i++)
		buf_addf(&in,
		         "{\"ts\":%d,\"dur\":1,\"pid\":7,\"tid\":7,\"layer\":\"api\",\"name\":"
		         "\"cuLaunchKernel\",\"args\":{\"corr\":%d}}\n",
		         30 + 2 * i, 100 + i);
	buf_adds(&in, GPU(900000, 10, 1));
	ck_assert_str_eq(run(TL_COMPLETE, COUNTERS, in.s, NULL),
	                 "busy 900000=1;flow thread 20->k1;busy 900010=0;");
	buf_free(&in);
}
END_TEST

#define HEADER(mono)                                                                               \
	"{\"ts\":1,\"pid\":1,\"tid\":1,\"layer\":\"meta\",\"name\":\"header\",\"args\":{"          \
	"\"schema\":2,"                                                                            \
	"\"host\":\"a\",\"clock\":{\"monotonic_ns\":" #mono ",\"realtime_ns\":5000000000}}}\n"

START_TEST(test_machines)
{
	/* one host, two boots: two machines for a sink that writes a clock per machine, one
	 * otherwise */
	const char *in = HEADER(1000) API(5, 1, "a") "--\n" HEADER(3000000000) API(6, 1, "b");
	struct tl *tl;
	run(TL_BOOTS, 0, in, &tl);
	ck_assert_uint_eq(tl_machines(tl), 2);
	tl_free(tl);
	run(0, 0, in, &tl);
	ck_assert_uint_eq(tl_machines(tl), 1);
	tl_free(tl);
}
END_TEST

START_TEST(test_records)
{
	/* what a process record changes: its label (a name shown), its rank (the envelope's
	 * before its own), nothing when said again; a thread's comm and NVTX name apart, its
	 * label the latest record's */
	const char *in =
	    "{\"ts\":1,\"pid\":7,\"tid\":7,\"layer\":\"meta\",\"name\":\"process\",\"args\":{"
	    "\"comm\":\"python\"}}\n"
	    "{\"ts\":2,\"pid\":7,\"tid\":7,\"layer\":\"meta\",\"name\":\"process\",\"args\":{"
	    "\"comm\":\"python\"}}\n"
	    "{\"ts\":3,\"rank\":3,\"pid\":7,\"tid\":7,\"layer\":\"meta\",\"name\":\"process\","
	    "\"args\":{\"comm\":\"python\",\"rank\":1}}\n"
	    "{\"ts\":4,\"pid\":7,\"tid\":8,\"layer\":\"meta\",\"name\":\"thread\",\"args\":{"
	    "\"comm\":\"python\",\"name\":\"loader\"}}\n"
	    "{\"ts\":5,\"pid\":7,\"tid\":8,\"layer\":\"meta\",\"name\":\"thread\",\"args\":{"
	    "\"comm\":\"pt_main\"}}\n";
	ck_assert_str_eq(run(0, TRACKS, in, NULL),
	                 "process new;process label named;process ranked;rank 3;thread new;"
	                 "thread label named;thread label named;");
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("timeline");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, test_nesting);
	tcase_add_test(tc, test_spill);
	tcase_add_test(tc, test_ends);
	tcase_add_test(tc, test_busy);
	tcase_add_test(tc, test_memory_flow);
	tcase_add_test(tc, test_flow_bound);
	tcase_add_test(tc, test_machines);
	tcase_add_test(tc, test_records);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return run_suite(suite());
}
