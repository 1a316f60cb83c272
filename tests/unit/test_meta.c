/* test_meta.c: the meta records: every kind written and read back to the same struct and
 * the same bytes, absent members left out, writers' own members kept, odd input read as
 * absent. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "check_main.h"
#include "meta.h"
#include "parse.h"

/* Formats m, parses the line, reads it back into *back (released by the caller); returns the
 * line (valid until the next call). */
static const char *
round_trip(const struct cut_event *at, const struct cut_meta *m, struct cut_meta *back)
{
	static struct cut_buf line, copy;
	static struct cut_parser *p;
	struct cut_event ev;
	char why[256];
	if (!p)
		p = cut_parser_new();
	buf_reset(&line);
	cut_meta_format(&line, at, m);
	buf_reset(&copy);
	buf_add(&copy, line.s, line.len);
	ck_assert_int_eq(cut_parse(p, copy.s, copy.len, &ev, CUT_PARSE_AUTO, why, sizeof(why)),
	                 CUT_PARSE_EVENT);
	ck_assert_int_eq(ev.ts, at->ts);
	ck_assert_int_eq(ev.pid, at->pid);
	ck_assert_int_eq(ev.tid, at->tid);
	ck_assert_int_eq(cut_meta_read(&ev, back), m->kind);
	/* written again from what was read: the same bytes */
	static struct cut_buf again;
	buf_reset(&again);
	cut_meta_format(&again, &ev, back);
	ck_assert_str_eq(again.s, line.s);
	return line.s;
}

static struct cut_event
at(int64_t ts)
{
	struct cut_event ev;
	cut_event_init(&ev);
	ev.ts = ts;
	ev.pid = 77;
	ev.tid = 78;
	return ev;
}

START_TEST(test_header)
{
	static const char *const cmd[] = {"python", "x.py", "-n \"1\""};
	struct cut_meta m, back;
	struct cut_event a = at(812000);
	cut_meta_init(&m, CUT_META_HEADER);
	m.header.tool = "cutcapture";
	m.header.version = "0.1.0";
	m.header.host = "gpu1";
	m.header.kernel = "6.18.44";
	m.header.driver = "580.159.04";
	m.header.driver_flavour = "open";
	m.header.libcuda = "/usr/lib/libcuda.so.1";
	m.header.monotonic_ns = 812000;
	m.header.realtime_ns = 1795000000000000000;
	m.header.sorted = 1;
	m.header.layers[CUT_API] = "on";
	m.header.layers[CUT_KERNEL] = "off: kprobes not supported by this kernel";
	m.header.cmd = cmd;
	m.header.ncmd = 3;
	m.header.more = "\"pid\":77,\"probes\":{\"mode\":\"uprobe_multi\"}";
	a.host = "gpu1";
	a.rank = 3;
	a.has |= CUT_HAS_RANK;
	ck_assert_str_eq(
	    round_trip(&a, &m, &back),
	    "{\"ts\":812000,\"host\":\"gpu1\",\"rank\":3,\"pid\":77,\"tid\":78,\"layer\":\"meta\","
	    "\"name\":\"header\",\"args\":{\"schema\":2,\"tool\":\"cutcapture\",\"version\":\"0.1."
	    "0\","
	    "\"host\":\"gpu1\",\"kernel\":\"6.18.44\",\"driver\":\"580.159.04\",\"driver_flavour\":"
	    "\"open\",\"libcuda\":\"/usr/lib/libcuda.so.1\",\"clock\":{\"monotonic_ns\":812000,"
	    "\"realtime_ns\":1795000000000000000},\"sorted\":true,\"layers\":{\"api\":\"on\","
	    "\"kernel\":\"off: kprobes not supported by this kernel\"},\"cmd\":[\"python\","
	    "\"x.py\",\"-n \\\"1\\\"\"],\"pid\":77,\"probes\":{\"mode\":\"uprobe_multi\"}}}");
	ck_assert_int_eq(back.header.schema, 2);
	ck_assert_str_eq(back.header.tool, "cutcapture");
	ck_assert_int_eq(back.header.realtime_ns, 1795000000000000000);
	ck_assert_int_eq(back.header.sorted, 1);
	ck_assert_str_eq(back.header.layers[CUT_KERNEL],
	                 "off: kprobes not supported by this kernel");
	ck_assert_ptr_null(back.header.layers[CUT_IRQ]);
	ck_assert_uint_eq(back.header.ncmd, 3);
	ck_assert_str_eq(back.header.cmd[2], "-n \"1\"");
	cut_meta_release(&back);
	ck_assert_ptr_null(back.header.tool);

	/* Only what is there: no clock, sorted false. */
	cut_meta_init(&m, CUT_META_HEADER);
	m.header.tool = "cutioctl";
	m.header.sorted = 0;
	ck_assert_str_eq(round_trip(&a, &m, &back),
	                 "{\"ts\":812000,\"host\":\"gpu1\",\"rank\":3,\"pid\":77,\"tid\":78,"
	                 "\"layer\":\"meta\",\"name\":\"header\",\"args\":{\"schema\":2,"
	                 "\"tool\":\"cutioctl\",\"sorted\":false}}");
	ck_assert_int_eq(back.header.monotonic_ns, CUT_ABSENT);
	ck_assert_ptr_null(back.header.cmd);
	ck_assert_ptr_null(back.header.more);
	cut_meta_release(&back);
}
END_TEST

START_TEST(test_other_kinds)
{
	struct cut_meta m, back;
	struct cut_event a = at(5);

	cut_meta_init(&m, CUT_META_TRAILER);
	m.trailer.events = 10;
	m.trailer.lost = 0;
	m.trailer.layers[CUT_API] = 7;
	m.trailer.layers[CUT_META] = 3;
	m.trailer.gpu_timed = 4;
	m.trailer.gpu_error_ns = 900;
	ck_assert_str_eq(round_trip(&a, &m, &back),
	                 "{\"ts\":5,\"pid\":77,\"tid\":78,\"layer\":\"meta\",\"name\":\"trailer\","
	                 "\"args\":{\"events\":10,\"lost\":0,\"layers\":{\"api\":7,\"meta\":3},"
	                 "\"gpu\":{\"timed\":4,\"error_ns\":900}}}");
	ck_assert_int_eq(back.trailer.layers[CUT_META], 3);
	ck_assert_int_eq(back.trailer.layers[CUT_IOCTL], CUT_ABSENT);
	ck_assert_int_eq(back.trailer.gpu_untimed, CUT_ABSENT);
	cut_meta_release(&back);

	cut_meta_init(&m, CUT_META_LOST);
	m.lost.count = 3;
	m.lost.reason = "ring buffer full";
	m.lost.layer = "sched";
	ck_assert_str_eq(
	    round_trip(&a, &m, &back),
	    "{\"ts\":5,\"pid\":77,\"tid\":78,\"layer\":\"meta\",\"name\":\"lost\","
	    "\"args\":{\"count\":3,\"reason\":\"ring buffer full\",\"layer\":\"sched\"}}");
	cut_meta_release(&back);

	cut_meta_init(&m, CUT_META_SYMBOL);
	m.symbol.handle = (int64_t)0xffff8000deadbeefu;
	m.symbol.name = "vecAdd";
	m.symbol.kind = "function";
	m.symbol.via = "cuModuleGetFunction";
	ck_assert_str_eq(round_trip(&a, &m, &back),
	                 "{\"ts\":5,\"pid\":77,\"tid\":78,\"layer\":\"meta\",\"name\":\"symbol\","
	                 "\"args\":{\"handle\":\"0xffff8000deadbeef\",\"name\":\"vecAdd\",\"kind\":"
	                 "\"function\",\"via\":\"cuModuleGetFunction\"}}");
	ck_assert_int_eq(back.symbol.handle, (int64_t)0xffff8000deadbeefu);
	cut_meta_release(&back);

	cut_meta_init(&m, CUT_META_PROCESS);
	m.task.comm = "python";
	m.task.cmdline = "python x.py";
	m.task.ppid = 1;
	m.task.rank = 0;
	m.task.world_size = 8;
	ck_assert_str_eq(round_trip(&a, &m, &back),
	                 "{\"ts\":5,\"pid\":77,\"tid\":78,\"layer\":\"meta\",\"name\":\"process\","
	                 "\"args\":{\"comm\":\"python\",\"cmdline\":\"python x.py\",\"ppid\":1,"
	                 "\"rank\":0,\"world_size\":8}}");
	cut_meta_release(&back);

	cut_meta_init(&m, CUT_META_THREAD);
	m.task.comm = "pt_autograd_0";
	m.task.name = "backward";
	ck_assert_str_eq(round_trip(&a, &m, &back),
	                 "{\"ts\":5,\"pid\":77,\"tid\":78,\"layer\":\"meta\",\"name\":\"thread\","
	                 "\"args\":{\"comm\":\"pt_autograd_0\",\"name\":\"backward\"}}");
	ck_assert_str_eq(back.task.name, "backward");
	cut_meta_release(&back);

	cut_meta_init(&m, CUT_META_DEVICE);
	m.device.device = 0;
	m.device.name = "NVIDIA H200";
	m.device.bus = "0000:18:00.0";
	m.device.file = "nvidia0";
	ck_assert_str_eq(round_trip(&a, &m, &back),
	                 "{\"ts\":5,\"pid\":77,\"tid\":78,\"layer\":\"meta\",\"name\":\"device\","
	                 "\"args\":{\"device\":0,\"name\":\"NVIDIA H200\",\"bus\":\"0000:18:00.0\","
	                 "\"file\":\"nvidia0\"}}");
	cut_meta_release(&back);

	/* Nothing at all: an empty args object. */
	cut_meta_init(&m, CUT_META_LOST);
	ck_assert_str_eq(round_trip(&a, &m, &back),
	                 "{\"ts\":5,\"pid\":77,\"tid\":78,\"layer\":\"meta\",\"name\":\"lost\","
	                 "\"args\":{}}");
	cut_meta_release(&back);
	cut_meta_init(&m, CUT_META_TRAILER);
	m.trailer.more = "\"duplicates\":2";
	ck_assert_str_eq(round_trip(&a, &m, &back),
	                 "{\"ts\":5,\"pid\":77,\"tid\":78,\"layer\":\"meta\",\"name\":\"trailer\","
	                 "\"args\":{\"duplicates\":2}}");
	ck_assert_str_eq(back.trailer.more, "\"duplicates\":2");
	cut_meta_release(&back);
}
END_TEST

/* Records of other writers, in any layout: members of the wrong type are absent, unknown
 * records and other layers are told apart. */
START_TEST(test_reading)
{
	struct cut_parser *p = cut_parser_new();
	struct cut_event ev;
	struct cut_meta m;
	char why[256];
	char l1[] = "{ \"layer\":\"meta\",\"name\":\"header\",\"ts\":1,\"pid\":1,\"tid\":1,"
	            "\"args\":{\"sorted\":\"yes\",\"schema\":1,\"clock\":{\"monotonic_ns\":5},"
	            "\"tool\":7,\"cmd\":[\"a\",1,\"b\"],\"layers\":{\"api\":\"on\",\"warp\":\"on\","
	            "\"irq\":0},\"x\":null} }";
	ck_assert_int_eq(cut_parse(p, l1, strlen(l1), &ev, CUT_PARSE_AUTO, why, 256),
	                 CUT_PARSE_EVENT);
	ck_assert_int_eq(cut_meta_read(&ev, &m), CUT_META_HEADER);
	ck_assert_int_eq(m.header.schema, 1);
	ck_assert_int_eq(m.header.sorted, CUT_ABSENT);
	ck_assert_ptr_null(m.header.tool);
	ck_assert_int_eq(m.header.monotonic_ns, 5);
	ck_assert_int_eq(m.header.realtime_ns, CUT_ABSENT);
	ck_assert_uint_eq(m.header.ncmd, 2);
	ck_assert_str_eq(m.header.cmd[1], "b");
	ck_assert_str_eq(m.header.layers[CUT_API], "on");
	ck_assert_ptr_null(m.header.layers[CUT_IRQ]);
	ck_assert_str_eq(m.header.more, "\"x\":null");
	cut_meta_release(&m);

	char l2[] = "{\"ts\":1,\"pid\":1,\"tid\":1,\"layer\":\"meta\",\"name\":\"symbol\","
	            "\"args\":{\"handle\":4096}}";
	cut_parse(p, l2, strlen(l2), &ev, CUT_PARSE_AUTO, why, 256);
	ck_assert_int_eq(cut_meta_read(&ev, &m), CUT_META_SYMBOL);
	ck_assert_int_eq(m.symbol.handle, 4096);
	cut_meta_release(&m);

	char l3[] = "{\"ts\":1,\"pid\":1,\"tid\":1,\"layer\":\"meta\",\"name\":\"process\"}";
	cut_parse(p, l3, strlen(l3), &ev, CUT_PARSE_AUTO, why, 256);
	ck_assert_int_eq(cut_meta_read(&ev, &m), CUT_META_PROCESS);
	ck_assert_ptr_null(m.task.comm);
	cut_meta_release(&m);

	char l4[] = "{\"ts\":1,\"pid\":1,\"tid\":1,\"layer\":\"meta\",\"name\":\"audit\","
	            "\"args\":{\"comm\":\"x\"}}";
	cut_parse(p, l4, strlen(l4), &ev, CUT_PARSE_AUTO, why, 256);
	ck_assert_int_eq(cut_meta_read(&ev, &m), CUT_META_OTHER);
	ck_assert_ptr_null(cut_meta_name(CUT_META_OTHER));
	cut_meta_release(&m);

	char l5[] = "{\"ts\":1,\"pid\":1,\"tid\":1,\"layer\":\"api\",\"name\":\"header\"}";
	cut_parse(p, l5, strlen(l5), &ev, CUT_PARSE_AUTO, why, 256);
	ck_assert_int_eq(cut_meta_kind(&ev), CUT_META_NONE);
	ck_assert_int_eq(cut_meta_read(&ev, &m), CUT_META_NONE);
	cut_meta_release(&m);
	for (int k = CUT_META_HEADER; k < CUT_META_OTHER; k++) {
		ev.layer = CUT_META;
		ev.name = cut_meta_name(k);
		ck_assert_int_eq(cut_meta_kind(&ev), k);
	}
	cut_parser_free(p);
}
END_TEST

/* Reads one record from a line. */
static void
read_line(struct cut_parser *p, const char *line, struct cut_meta *m)
{
	static char copy[4096];
	struct cut_event ev;
	char why[256];
	snprintf(copy, sizeof(copy), "%s", line);
	ck_assert_int_eq(cut_parse(p, copy, strlen(copy), &ev, CUT_PARSE_AUTO, why, sizeof(why)),
	                 CUT_PARSE_EVENT);
	cut_meta_read(&ev, m);
}

/* Two libcuthook trailers folded: every member by its rule (each runtime not recorded named
 * once), the coverage audits joined, the writers' own members kept; then into cutcapture's
 * own, which keeps what it has. */
START_TEST(test_fold)
{
	struct cut_parser *p = cut_parser_new();
	struct cut_meta a, b, own;
	struct cut_buf line = {0}, more = {0};
	struct cut_event at0 = at(9);
	read_line(
	    p,
	    "{\"ts\":1,\"pid\":10,\"tid\":10,\"layer\":\"meta\",\"name\":\"trailer\",\"args\":{"
	    "\"events\":74,\"lost\":1,\"layers\":{\"api\":51,\"gpu\":23},\"durations\":{\"tsc\":"
	    "23,\"clock\":51,\"tsc_hz\":2300000000},\"gpu\":{\"timed\":23,\"untimed\":0,"
	    "\"capture_skips\":3,\"starts\":11,\"starts_from_call\":7,\"gap_ns\":1200,"
	    "\"error_ns\":5328,\"error_ns_median\":5320},\"own_thread\":2373,\"off_thread\":40,"
	    "\"format_thread\":2374,"
	    "\"runtimes_unrecorded\":[\"libcublas.so.13\",\"libcublasLt.so.13\"],"
	    "\"coverage\":{"
	    "\"cuda_h\":13000,\"wrapped\":672,\"obtained\":{\"link\":2,\"dlsym\":0,"
	    "\"cuGetProcAddress\":0},\"called\":2,\"functions\":[{\"name\":\"cuInit\",\"via\":"
	    "[\"link\"],\"calls\":1},{\"name\":\"cuMemAlloc_v2\",\"via\":[\"link\"],\"calls\":2}"
	    "],\"unwrapped\":0},\"mine\":1}}",
	    &a);
	read_line(
	    p,
	    "{\"ts\":2,\"pid\":11,\"tid\":11,\"layer\":\"meta\",\"name\":\"trailer\",\"args\":{"
	    "\"events\":10,\"lost\":0,\"layers\":{\"api\":5,\"gpu\":5},\"durations\":{\"tsc\":5,"
	    "\"clock\":6,\"tsc_hz\":2300000001},\"gpu\":{\"timed\":100,\"untimed\":0,"
	    "\"capture_skips\":0,\"starts\":20,\"starts_from_call\":8,\"gap_ns\":1300,"
	    "\"error_ns\":4000,\"error_ns_median\":4100},\"own_thread\":99,\"off_thread\":9,"
	    "\"runtimes_unrecorded\":[\"libcublasLt.so.13\",\"libcudnn.so.9\"],"
	    "\"coverage\":{"
	    "\"cuda_h\":13000,\"wrapped\":672,\"obtained\":{\"link\":1,\"dlsym\":1,"
	    "\"cuGetProcAddress\":0},\"called\":2,\"functions\":[{\"name\":"
	    "\"cuGetProcAddress_v2\",\"via\":[\"link\"],\"calls\":15},{\"name\":\"cuInit\","
	    "\"via\":[\"dlsym\"],\"calls\":3}],\"unwrapped\":1,\"unwrapped_symbols\":[{"
	    "\"symbol\":\"cuX\",\"via\":\"cuGetProcAddress_v2\",\"version\":12000,\"why\":"
	    "\"w\"}]},\"mine\":2,\"theirs\":3}}",
	    &b);
	ck_assert_int_eq(a.trailer.gpu_starts_from_call, 7);
	ck_assert_int_eq(b.trailer.own_thread, 99);
	ck_assert_int_eq(b.trailer.off_thread, 9);
	ck_assert_int_eq(a.trailer.format_thread, 2374);
	ck_assert_uint_eq(a.trailer.nruntimes, 2);
	ck_assert_str_eq(a.trailer.runtimes[1], "libcublasLt.so.13");
	struct cut_meta_fold *f = cut_meta_fold_new(CUT_META_TRAILER);
	ck_assert_ptr_eq(cut_meta_fold_result(f)->trailer.more, NULL);
	cut_meta_fold_add(f, &a);
	cut_meta_release(&a); /* the fold keeps copies */
	cut_meta_fold_add(f, &b);
	cut_meta_release(&b);
	ck_assert_uint_eq(cut_meta_fold_count(f), 2);
	static const char coverage[] =
	    "\"coverage\":{\"cuda_h\":13000,\"wrapped\":672,\"obtained\":{\"link\":3,\"dlsym\":1,"
	    "\"cuGetProcAddress\":0},\"called\":3,\"functions\":[{\"name\":\"cuGetProcAddress_v2\","
	    "\"via\":[\"link\"],\"calls\":15},{\"name\":\"cuInit\",\"via\":[\"link\",\"dlsym\"],"
	    "\"calls\":4,\"link_calls\":1},{\"name\":\"cuMemAlloc_v2\",\"via\":[\"link\"],"
	    "\"calls\":"
	    "2}],\"unwrapped\":1,\"unwrapped_symbols\":[{\"symbol\":\"cuX\",\"via\":"
	    "\"cuGetProcAddress_v2\",\"version\":12000,\"why\":\"w\"}]}";
	static const char folded[] =
	    "\"events\":84,\"lost\":1,\"layers\":{\"api\":56,\"gpu\":28},\"durations\":{\"tsc\":28,"
	    "\"clock\":57,\"tsc_hz\":2300000000},\"gpu\":{\"timed\":123,\"untimed\":0,"
	    "\"capture_skips\":3,\"starts\":31,\"starts_from_call\":15,\"gap_ns\":1300,"
	    "\"error_ns\":5328,\"error_ns_median\":4100},\"off_thread\":49,"
	    "\"runtimes_unrecorded\":[\"libcublas.so.13\",\"libcublasLt.so.13\","
	    "\"libcudnn.so.9\"],";
	cut_meta_format(&line, &at0, cut_meta_fold_result(f));
	struct cut_buf want = {0};
	buf_addf(
	    &want,
	    "{\"ts\":9,\"pid\":77,\"tid\":78,\"layer\":\"meta\",\"name\":\"trailer\",\"args\":{"
	    "%s%s,\"mine\":1,\"theirs\":3}}",
	    folded, coverage);
	ck_assert_str_eq(line.s, want.s);

	/* cutcapture's own trailer keeps its counts and members, and takes the rest */
	cut_meta_init(&own, CUT_META_TRAILER);
	own.trailer.events = 5;
	own.trailer.lost = 0;
	own.trailer.layers[CUT_API] = 2;
	own.trailer.more = "\"mine\":7,\"status\":0";
	cut_meta_fill(&own, cut_meta_fold_result(f), &more);
	buf_reset(&line);
	cut_meta_format(&line, &at0, &own);
	buf_reset(&want);
	buf_addf(
	    &want,
	    "{\"ts\":9,\"pid\":77,\"tid\":78,\"layer\":\"meta\",\"name\":\"trailer\",\"args\":{"
	    "\"events\":5,\"lost\":0,\"layers\":{\"api\":2,\"gpu\":28},%s%s,\"mine\":7,"
	    "\"status\":0,\"theirs\":3}}",
	    strchr(folded, '}') + 2, coverage);
	ck_assert_str_eq(line.s, want.s);
	cut_meta_fold_free(f);

	/* Headers: the largest schema, sorted only if all are, a layer on where any is, each
	 * layer's distinct sources joined. */
	f = cut_meta_fold_new(CUT_META_HEADER);
	read_line(p,
	          "{\"ts\":1,\"pid\":1,\"tid\":1,\"layer\":\"meta\",\"name\":\"header\",\"args\":{"
	          "\"schema\":1,\"tool\":\"cuthook\",\"sorted\":true,\"layers\":{\"gpu\":\"off: a "
	          "forked child\",\"nvtx\":\"on\"},\"sources\":{\"nvtx\":\"preload\",\"api\":"
	          "\"preload\"},\"cmd\":[\"a\",\"b\"]}}",
	          &a);
	read_line(p,
	          "{\"ts\":1,\"pid\":2,\"tid\":2,\"layer\":\"meta\",\"name\":\"header\",\"args\":{"
	          "\"schema\":2,\"tool\":\"other\",\"sorted\":false,\"layers\":{\"gpu\":\"on\","
	          "\"nvtx\":\"off: x\",\"api\":\"on\"},\"sources\":{\"api\":\"uprobes: -p\","
	          "\"ioctl\":\"ebpf\",\"gpu\":\"preload\"},\"cmd\":[\"c\"]}}",
	          &b);
	cut_meta_fold_add(f, &a);
	cut_meta_fold_add(f, &b);
	cut_meta_fold_add(f, &a); /* a source met again is not repeated */
	cut_meta_release(&a);
	cut_meta_release(&b);
	buf_reset(&line);
	cut_meta_format(&line, &at0, cut_meta_fold_result(f));
	ck_assert_str_eq(line.s,
	                 "{\"ts\":9,\"pid\":77,\"tid\":78,\"layer\":\"meta\",\"name\":\"header\","
	                 "\"args\":{\"schema\":2,\"tool\":\"cuthook\",\"sorted\":false,\"layers\":{"
	                 "\"nvtx\":\"on\",\"api\":\"on\",\"gpu\":\"on\"},\"sources\":{\"nvtx\":"
	                 "\"preload\",\"api\":\"preload; uprobes: -p\",\"ioctl\":\"ebpf\",\"gpu\":"
	                 "\"preload\"},\"cmd\":[\"a\",\"b\"]}}");
	cut_meta_fold_free(f);
	buf_free(&line);
	buf_free(&want);
	buf_free(&more);
	cut_parser_free(p);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("meta");
	TCase *tc = tcase_create("meta");
	tcase_add_test(tc, test_header);
	tcase_add_test(tc, test_other_kinds);
	tcase_add_test(tc, test_reading);
	tcase_add_test(tc, test_fold);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
