/* test_strace.c: the strace importer: every line form strace writes for ioctls, split calls
 * and their order, files that are not NVIDIA devices, -v parameter strings, bad lines. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "check_main.h"
#include "strace.h"

static struct cut_strace *s;
static uint64_t lineno;

static int
feed(const char *line)
{
	char why[128];
	return strace_feed(s, line, strlen(line), ++lineno, why, sizeof(why));
}

/* The next ready event as its canonical line, or "" when none is ready. */
static const char *
next(void)
{
	static struct cut_buf b;
	struct cut_event ev;
	uint64_t ul;
	buf_reset(&b);
	if (strace_next(s, &ev, &ul) > 0)
		cut_event_format(&b, &ev);
	else
		buf_adds(&b, "");
	return b.s;
}

static void
setup(void)
{
	s = strace_new();
	lineno = 0;
}

static void
teardown(void)
{
	strace_free(s);
}

START_TEST(test_forms)
{
	/* -f to the terminal: [pid N]; unknown requests in strace's _IOC form */
	ck_assert_int_eq(feed("[pid  4242] 1700000000.000100 ioctl(5, _IOC(_IOC_READ|_IOC_WRITE, "
	                      "0x46, 0x2a, 0x20), 0x7ffd5c2a3b40) = 0 <0.000021>"),
	                 0);
	ck_assert_str_eq(next(),
	                 "{\"ts\":1700000000000100000,\"dur\":21000,\"pid\":4242,\"tid\":4242,"
	                 "\"layer\":\"ioctl\",\"name\":\"NV_ESC_RM_CONTROL\",\"ret\":0,"
	                 "\"args\":{\"fd\":5,\"cmd\":\"0xc020462a\"}}");
	ck_assert_str_eq(next(), "");
	/* -f -o FILE: "PID  "; -y path; a UVM command (no direction, type 0) */
	ck_assert_int_eq(
	    feed("4243  1700000000.000200 ioctl(6</dev/nvidia-uvm>, _IOC(_IOC_NONE, 0, "
	         "0x1b, 0), 0x7ffd) = 0 <0.000500>"),
	    0);
	ck_assert_str_eq(next(),
	                 "{\"ts\":1700000000000200000,\"dur\":500000,\"pid\":4243,\"tid\":4243,"
	                 "\"layer\":\"ioctl\",\"name\":\"UVM_REGISTER_CHANNEL\",\"ret\":0,"
	                 "\"args\":{\"fd\":6,\"dev\":\"nvidia-uvm\",\"cmd\":\"0x1b\"}}");
	/* -X raw, no -f, an error */
	ck_assert_int_eq(feed("1700000000.000300 ioctl(5, 0xc030462b, 0x7ffd) = -1 EINVAL (Invalid "
	                      "argument) <0.000001>"),
	                 0);
	ck_assert_str_eq(next(), "{\"ts\":1700000000000300000,\"dur\":1000,\"pid\":0,\"tid\":0,"
	                         "\"layer\":\"ioctl\",\"name\":\"NV_ESC_RM_ALLOC\",\"ret\":-22,"
	                         "\"args\":{\"fd\":5,\"cmd\":\"0xc030462b\"}}");
	/* -X verbose, -yy, nanosecond timestamps, no -T */
	ck_assert_int_eq(
	    feed("1700000000.123456789 ioctl(5</dev/nvidiactl<char 195:255>>, 0xc0104629 "
	         "/* _IOC(_IOC_READ|_IOC_WRITE, 0x46, 0x29, 0x10) */, 0x7ffd) = 0"),
	    0);
	ck_assert_str_eq(next(),
	                 "{\"ts\":1700000000123456789,\"pid\":0,\"tid\":0,\"layer\":\"ioctl\","
	                 "\"name\":\"NV_ESC_RM_FREE\",\"ret\":0,\"args\":{\"fd\":5,"
	                 "\"dev\":\"nvidiactl\",\"cmd\":\"0xc0104629\"}}");
	/* UVM_INITIALIZE as strace spells it; a result of "?" */
	ck_assert_int_eq(feed("[pid 9] 2.5 ioctl(7, _IOC(_IOC_NONE, 0, 0x1, 0x3000), 0x7ffd) = ?"),
	                 0);
	ck_assert_str_eq(next(),
	                 "{\"ts\":2500000000,\"pid\":9,\"tid\":9,\"layer\":\"ioctl\","
	                 "\"name\":\"UVM_INITIALIZE\",\"args\":{\"fd\":7,\"cmd\":\"0x30000001\"}}");
	struct cut_strace_counts n = strace_counts(s);
	ck_assert_uint_eq(n.ioctls, 5);
	ck_assert_uint_eq(n.other, 0);
}
END_TEST

START_TEST(test_split)
{
	/* A split call is handed out only when it has resumed, and first: calls come out in
	 * the order they started. */
	ck_assert_int_eq(feed("[pid 10] 1.000000 ioctl(5, _IOC(_IOC_READ|_IOC_WRITE, 0x46, 0x2a, "
	                      "0x20), 0x1 <unfinished ...>"),
	                 0);
	ck_assert_int_eq(feed("[pid 11] 1.000100 ioctl(5, _IOC(_IOC_READ|_IOC_WRITE, 0x46, 0x29, "
	                      "0x10), 0x2) = 0 <0.000010>"),
	                 0);
	ck_assert_str_eq(next(), "");
	ck_assert_int_eq(feed("[pid 10] 1.000500 <... ioctl resumed>) = 0 <0.000480>"), 0);
	ck_assert_str_eq(next(),
	                 "{\"ts\":1000000000,\"dur\":480000,\"pid\":10,\"tid\":10,\"layer\":"
	                 "\"ioctl\",\"name\":\"NV_ESC_RM_CONTROL\",\"ret\":0,\"args\":{\"fd\":5,"
	                 "\"cmd\":\"0xc020462a\"}}");
	ck_assert_str_eq(next(),
	                 "{\"ts\":1000100000,\"dur\":10000,\"pid\":11,\"tid\":11,\"layer\":"
	                 "\"ioctl\",\"name\":\"NV_ESC_RM_FREE\",\"ret\":0,\"args\":{\"fd\":5,"
	                 "\"cmd\":\"0xc0104629\"}}");
	/* without -T the duration is the time between the halves */
	ck_assert_int_eq(feed("[pid 12] 3.000000 ioctl(5, 0xc0104629, 0x2 <unfinished ...>"), 0);
	ck_assert_int_eq(feed("[pid 12] 3.000250 <... ioctl resumed>) = 0"), 0);
	ck_assert_str_eq(next(),
	                 "{\"ts\":3000000000,\"dur\":250000,\"pid\":12,\"tid\":12,\"layer\":"
	                 "\"ioctl\",\"name\":\"NV_ESC_RM_FREE\",\"ret\":0,\"args\":{\"fd\":5,"
	                 "\"cmd\":\"0xc0104629\"}}");
	/* never resumed: kept as an instant at the end, with its line */
	ck_assert_int_eq(feed("[pid 13] 4.000000 ioctl(5, 0xc0104629, 0x2 <unfinished ...>"), 0);
	ck_assert_int_eq(feed("[pid 13] 4.100000 +++ killed by SIGKILL +++"), 0);
	ck_assert_str_eq(next(), "");
	strace_finish(s);
	struct cut_event ev;
	uint64_t ul;
	ck_assert_int_eq(strace_next(s, &ev, &ul), 1);
	ck_assert_uint_eq(ul, 6);
	ck_assert(!(ev.has & (CUT_HAS_DUR | CUT_HAS_RET)));
	ck_assert_int_eq(strace_next(s, &ev, &ul), 0);
	ck_assert_uint_eq(strace_counts(s).unfinished, 1);
	/* a resumption with nothing to resume is a bad line */
	ck_assert_int_eq(feed("[pid 14] 5.0 <... ioctl resumed>) = 0"), -1);
}
END_TEST

START_TEST(test_other_files)
{
	/* strace names requests it knows (not NVIDIA's); -y shows other files */
	ck_assert_int_eq(feed("[pid 1] 1.0 ioctl(1</dev/pts/0>, TCGETS, {c_iflag=ICRNL}) = 0"), 0);
	ck_assert_int_eq(feed("[pid 1] 1.1 ioctl(3, TCGETS, 0x7ffd) = -1 ENOTTY (Inappropriate "
	                      "ioctl for device)"),
	                 0);
	ck_assert_int_eq(
	    feed("[pid 1] 1.2 ioctl(3</tmp/x>, _IOC(_IOC_READ, 0x46, 0x2a, 0x20), 0x1) = 0"), 0);
	ck_assert_str_eq(next(), "");
	/* except FIBMAP and FIGETBSZ, whose numbers are UVM's too */
	ck_assert_int_eq(feed("[pid 1] 1.3 ioctl(7</dev/nvidia-uvm>, FIBMAP, 0x7ffd) = 0"), 0);
	ck_assert_str_eq(next(),
	                 "{\"ts\":1300000000,\"pid\":1,\"tid\":1,\"layer\":\"ioctl\",\"name\":"
	                 "\"UVM_RESERVE_VA\",\"ret\":0,\"args\":{\"fd\":7,\"dev\":\"nvidia-uvm\","
	                 "\"cmd\":\"0x1\"}}");
	/* other system calls, signals, exits and strace's own lines are ignored */
	ck_assert_int_eq(feed("[pid 1] 1.4 openat(AT_FDCWD, \"/dev/nvidiactl\", O_RDWR) = 5"), 0);
	ck_assert_int_eq(feed("[pid 1] 1.5 --- SIGCHLD {si_signo=SIGCHLD} ---"), 0);
	ck_assert_int_eq(feed("1.6 +++ exited with 0 +++"), 0);
	ck_assert_int_eq(feed("strace: Process 7 attached"), 0);
	ck_assert_int_eq(feed(""), 0);
	ck_assert_str_eq(next(), "");
	struct cut_strace_counts n = strace_counts(s);
	ck_assert_uint_eq(n.other, 3);
	ck_assert_uint_eq(n.skipped, 3);
	ck_assert_uint_eq(n.ioctls, 1);
}
END_TEST

START_TEST(test_params)
{
	/* strace -v prints the parameter struct: NVOS54 cmd@8, status@28 after the call */
	ck_assert_int_eq(
	    feed(
	        "[pid 2] 1.0 ioctl(5</dev/nvidiactl>, _IOC(_IOC_READ|_IOC_WRITE, 0x46, 0x2a, "
	        "0x20), "
	        "\"\\x01\\x00\\x00\\xc1\\x02\\x00\\x00\\x5c\\x02\\x01\\x80\\x20\\x00\\x00\\x00\\x00"
	        "\\x00\\x10\\x2a\\x5c\\xfd\\x7f\\x00\\x00\\x18\\x00\\x00\\x00\\x00\\x00\\x00\\x00\""
	        " => "
	        "\"\\x01\\x00\\x00\\xc1\\x02\\x00\\x00\\x5c\\x02\\x01\\x80\\x20\\x00\\x00\\x00\\x00"
	        "\\x00\\x10\\x2a\\x5c\\xfd\\x7f\\x00\\x00\\x18\\x00\\x00\\x00\\x56\\x00\\x00\\x00\""
	        ") = 0 "
	        "<0.000010>"),
	    0);
	ck_assert_str_eq(next(),
	                 "{\"ts\":1000000000,\"dur\":10000,\"pid\":2,\"tid\":2,\"layer\":"
	                 "\"ioctl\",\"name\":\"NV_ESC_RM_CONTROL\",\"ret\":0,\"args\":{\"fd\":5,"
	                 "\"dev\":\"nvidiactl\",\"cmd\":\"0xc020462a\",\"ctrl\":\"0x20800102\","
	                 "\"status\":86}}");
	/* NV_ESC_RM_ALLOC (NVOS64): hClass@12, in a split call; strace's "..." after 32 bytes */
	ck_assert_int_eq(feed("[pid 3] 2.0 ioctl(5, _IOC(_IOC_READ|_IOC_WRITE, 0x46, 0x2b, 0x30), "
	                      "\"\\1\\0\\0\\301\\2\\0\\0\\134\\3\\0\\0\\134\\157\\310\\0\\0\"... "
	                      "<unfinished ...>"),
	                 0);
	ck_assert_int_eq(
	    feed("[pid 3] 2.000100 <... ioctl resumed> => \"\\1\\0\"...) = 0 <0.000090>"), 0);
	ck_assert_str_eq(next(),
	                 "{\"ts\":2000000000,\"dur\":90000,\"pid\":3,\"tid\":3,\"layer\":"
	                 "\"ioctl\",\"name\":\"NV_ESC_RM_ALLOC\",\"ret\":0,\"args\":{\"fd\":5,"
	                 "\"cmd\":\"0xc030462b\",\"class\":\"0xc86f\"}}");
	/* NV_ESC_IOCTL_XFER_CMD: the inner command @0 */
	ck_assert_int_eq(feed("[pid 4] 3.0 ioctl(5, _IOC(_IOC_READ|_IOC_WRITE, 0x46, 0xd3, 0x10), "
	                      "\"*\\0\\0\\0 \\0\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0\") = 0 <0.000001>"),
	                 0);
	ck_assert_str_eq(
	    next(), "{\"ts\":3000000000,\"dur\":1000,\"pid\":4,\"tid\":4,\"layer\":"
	            "\"ioctl\",\"name\":\"NV_ESC_IOCTL_XFER_CMD\",\"ret\":0,\"args\":{\"fd\":5,"
	            "\"cmd\":\"0xc01046d3\",\"xfer\":\"0x2a\"}}");
}
END_TEST

START_TEST(test_bad_lines)
{
	char why[128];
	static const char *const bad[] = {
	    "garbage",
	    "ioctl(5, 0xc020462a, 0x1) = 0",                 /* no -ttt */
	    "12:00:00.000000 ioctl(5, 0xc020462a, 0x1) = 0", /* -tt */
	    "[pid x] 1.0 ioctl(5, 0xc020462a, 0x1) = 0",
	    "[pid 1] 1.0 ioctl(5, 0xc020462a, 0x1)", /* no result */
	    "[pid 1] 1.0 ioctl(5, _IOC(_IOC_READ, 0x46, 0x2a), 0x1) = 0",
	    "[pid 1] 1.0 ioctl(5, _IOC(_IOC_READ, 0x146, 0x2a, 0x20), 0x1) = 0",
	    "[pid 1] 1.0 ioctl(x, 0xc020462a, 0x1) = 0",
	    "[pid 1] 1.0 ioctl(5, 0x1c020462a, 0x1) = 0", /* beyond 32 bits */
	    "[pid 1] 1.0 ioctl(5, 0xc020462a, 0x1) = x",
	    "[pid 1] 99999999999.0 ioctl(5, 0xc020462a, 0x1) = 0", /* ns would overflow */
	    "[pid 1] 1.0 <... ioctl resumed",
	    "[pid 17000999999999999999] 1.0 ioctl(5, 0xc020462a, 0x1) = 0", /* past INT64_MAX */
	    "17000999999999999999 1.0 ioctl(5, 0xc020462a, 0x1) = 0",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = '\0';
		ck_assert_msg(strace_feed(s, bad[i], strlen(bad[i]), i + 1, why, sizeof(why)) == -1,
		              "accepted: %s", bad[i]);
		ck_assert_msg(why[0], "no reason for: %s", bad[i]);
	}
	strace_finish(s);
	ck_assert_str_eq(next(), "");
	/* a CR before the newline and trailing blanks are fine */
	ck_assert_int_eq(feed("[pid 1] 1.0 ioctl(5, 0xc020462a, 0x1) = 0 <0.000001>  \r"), 0);
	ck_assert_str_ne(next(), "");
}
END_TEST

int
main(void)
{
	Suite *su = suite_create("strace");
	TCase *tc = tcase_create("strace");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_forms);
	tcase_add_test(tc, test_split);
	tcase_add_test(tc, test_other_files);
	tcase_add_test(tc, test_params);
	tcase_add_test(tc, test_bad_lines);
	suite_add_tcase(su, tc);
	return run_suite(su);
}
