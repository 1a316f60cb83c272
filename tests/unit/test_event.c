/* test_event.c: the event reader and writer: fast path vs jansson (differential, random and
 * mutated lines), canonical round trips, line handling, bad lines. */
#include <check.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "event.h"
#include "event_diff.h"
#include "parse.h"
#include "reader.h"

static unsigned rng_state = 12345;

static unsigned
rnd(unsigned n)
{
	rng_state = rng_state * 1103515245u + 12345u;
	return (rng_state >> 8) % n;
}

static const char *const some_names[] = {
    "cuLaunchKernel", "cuMemcpyHtoD_v2", "NV_ESC_RM_CONTROL", "x",       "tab\there", "quote\"d",
    "back\\slash",    "caf\xc3\xa9",     "\xe2\x82\xac euro", "ctl\x01",
};

/* The first PLAIN names need no escapes: the fast path must take events made of them. */
#define PLAIN 4
static int plain_only;

static const char *
some_name(void)
{
	return some_names[rnd(plain_only ? PLAIN : sizeof(some_names) / sizeof(some_names[0]))];
}

static void
random_json(struct cut_buf *b, int depth)
{
	switch (rnd(depth > 2 ? 5 : 7)) {
	case 0: buf_addi64(b, (int64_t)rnd(1000000) - 500000); break;
	case 1: buf_addf(b, "%d.%d", (int)rnd(1000), (int)rnd(100)); break;
	case 2: {
		const char *s = some_name();
		buf_addjstr(b, s, strlen(s));
		break;
	}
	case 3: buf_adds(b, rnd(2) ? "true" : "null"); break;
	case 4: buf_adds(b, "false"); break;
	case 5: {
		buf_addc(b, '[');
		for (unsigned i = 0, n = rnd(4); i < n; i++) {
			if (i)
				buf_addc(b, ',');
			random_json(b, depth + 1);
		}
		buf_addc(b, ']');
		break;
	}
	default: {
		buf_addc(b, '{');
		for (unsigned i = 0, n = rnd(4); i < n; i++) {
			if (i)
				buf_addc(b, ',');
			buf_addf(b, "\"k%u\":", rnd(6));
			random_json(b, depth + 1);
		}
		buf_addc(b, '}');
	}
	}
}

/* A random event in canonical form; args_text is where its args live. */
static void
random_event(struct cut_event *ev, struct cut_buf *args_text)
{
	cut_event_init(ev);
	ev->ts = rnd(2) ? (int64_t)rnd(1000000000) * 1000 : (int64_t)rnd(1000);
	if (rnd(2)) {
		ev->dur = rnd(1000000);
		ev->has |= CUT_HAS_DUR;
	}
	if (rnd(4) == 0)
		ev->host = some_names[rnd(plain_only ? PLAIN : PLAIN + 2)]; /* mostly plain */
	if (rnd(3) == 0) {
		ev->rank = rnd(2) ? rnd(8) : rnd(100000);
		ev->has |= CUT_HAS_RANK;
	}
	ev->pid = rnd(70000);
	ev->tid = rnd(70000);
	ev->layer = (enum cut_layer)rnd(CUT_NLAYERS);
	ev->name = some_name();
	if (rnd(2))
		ev->cat = some_name();
	if (rnd(2)) {
		ev->ret = (int64_t)rnd(100) - 50;
		ev->has |= CUT_HAS_RET;
	}
	if (rnd(3) == 0) {
		ev->id = rnd(1 << 30);
		ev->has |= CUT_HAS_ID;
	}
	if (rnd(3) == 0) {
		ev->parent = rnd(1 << 30);
		ev->has |= CUT_HAS_PARENT;
		ev->pname = some_name();
	}
	if (rnd(3) == 0) {
		ev->nioctl = rnd(50);
		ev->ioctl_ns = rnd(1000000);
		ev->has |= CUT_HAS_NIOCTL;
	}
	if (rnd(2)) {
		buf_reset(args_text);
		buf_addc(args_text, '{');
		for (unsigned i = 0, n = rnd(5); i < n; i++) {
			if (i)
				buf_addc(args_text, ',');
			buf_addf(args_text, "\"a%u\":", i);
			random_json(args_text, 1);
		}
		buf_addc(args_text, '}');
		ev->args = args_text->s;
	}
}

/* Parses text (len bytes) in one mode on a private copy. */
static int
parse_copy(struct cut_parser *p, const char *text, size_t len, enum cut_parse_mode mode,
           struct owned *out, char *why)
{
	char *line = malloc(len + 1);
	memcpy(line, text, len);
	line[len] = '\0';
	struct cut_event ev;
	int rc = cut_parse(p, line, len, &ev, mode, why, 256);
	if (rc == CUT_PARSE_EVENT)
		own(out, &ev);
	free(line);
	return rc;
}

START_TEST(test_roundtrip_random)
{
	struct cut_parser *p = cut_parser_new();
	struct cut_buf args = {0}, line = {0};
	char why[256];
	int fast_taken = 0;
	for (int i = 0; i < 20000; i++) {
		struct cut_event ev;
		plain_only = i % 2;
		random_event(&ev, &args);
		buf_reset(&line);
		cut_event_format(&line, &ev);
		struct owned viaj, viaf;
		int rj = parse_copy(p, line.s, line.len, CUT_PARSE_JANSSON, &viaj, why);
		ck_assert_msg(rj == CUT_PARSE_EVENT, "jansson rejected %s: %s", line.s, why);
		const char *d = event_diff(&ev, &viaj.ev);
		ck_assert_msg(!d, "jansson read %s differently (%s)", line.s, d);
		int rf = parse_copy(p, line.s, line.len, CUT_PARSE_FAST, &viaf, why);
		if (rf == CUT_PARSE_EVENT) {
			fast_taken++;
			d = event_diff(&ev, &viaf.ev);
			ck_assert_msg(!d, "fast path read %s differently (%s)", line.s, d);
			disown(&viaf);
		} else {
			ck_assert_int_eq(rf, CUT_PARSE_NOT_CANONICAL);
			ck_assert_msg(!plain_only, "fast path refused a plain line: %s", line.s);
		}
		disown(&viaj);
	}
	ck_assert_msg(fast_taken >= 10000, "fast path took only %d of 20000", fast_taken);
	plain_only = 0;
	buf_free(&args);
	buf_free(&line);
	cut_parser_free(p);
}
END_TEST

static size_t
mutate(char *s, size_t len, size_t cap)
{
	static const char bytes[] = "{}[]\":,\\ 0123456789-.eEabtnul\x01\x7f\x80\xc3\xff";
	switch (rnd(5)) {
	case 0: /* replace */
		if (len)
			s[rnd((unsigned)len)] = bytes[rnd(sizeof(bytes))];
		return len;
	case 1: /* delete */
		if (len) {
			size_t i = rnd((unsigned)len);
			memmove(s + i, s + i + 1, len - i - 1);
			len--;
		}
		return len;
	case 2: /* insert */
		if (len + 1 < cap) {
			size_t i = rnd((unsigned)len + 1);
			memmove(s + i + 1, s + i, len - i);
			s[i] = bytes[rnd(sizeof(bytes))];
			len++;
		}
		return len;
	case 3: /* truncate */ return len ? rnd((unsigned)len) : 0;
	default: /* repeat a piece */
		if (len > 4 && len * 2 < cap) {
			size_t i = rnd((unsigned)len - 2), n = 1 + rnd(8);
			if (i + n > len)
				n = len - i;
			memmove(s + i + n, s + i, len - i);
			len += n;
		}
		return len;
	}
}

START_TEST(test_differential_mutated)
{
	struct cut_parser *p = cut_parser_new();
	struct cut_buf args = {0}, line = {0};
	char why[256], buf[8192];
	int fast_taken = 0, jansson_taken = 0;
	for (int i = 0; i < 60000; i++) {
		struct cut_event ev;
		random_event(&ev, &args);
		buf_reset(&line);
		cut_event_format(&line, &ev);
		if (line.len >= sizeof(buf) / 2)
			continue;
		memcpy(buf, line.s, line.len);
		size_t len = line.len;
		for (unsigned m = 0, n = 1 + rnd(3); m < n; m++)
			len = mutate(buf, len, sizeof(buf));
		struct owned viaj, viaf, viaa;
		int rj = parse_copy(p, buf, len, CUT_PARSE_JANSSON, &viaj, why);
		int rf = parse_copy(p, buf, len, CUT_PARSE_FAST, &viaf, why);
		int ra = parse_copy(p, buf, len, CUT_PARSE_AUTO, &viaa, why);
		ck_assert_msg(ra == rj || (rj == CUT_PARSE_ERROR && ra == CUT_PARSE_ERROR),
		              "auto %d vs jansson %d on %.*s", ra, rj, (int)len, buf);
		if (rf == CUT_PARSE_EVENT) {
			fast_taken++;
			ck_assert_msg(rj == CUT_PARSE_EVENT,
			              "fast accepted what jansson rejects: %.*s", (int)len, buf);
			const char *d = event_diff(&viaf.ev, &viaj.ev);
			ck_assert_msg(!d, "paths differ on %s for %.*s", d, (int)len, buf);
			disown(&viaf);
		}
		if (rj == CUT_PARSE_EVENT) {
			jansson_taken++;
			const char *d = event_diff(&viaa.ev, &viaj.ev);
			ck_assert_msg(!d, "auto differs from jansson on %s for %.*s", d, (int)len,
			              buf);
			disown(&viaj);
			disown(&viaa);
		}
	}
	ck_assert_msg(fast_taken > 1000 && jansson_taken > fast_taken,
	              "weak test: fast %d jansson %d", fast_taken, jansson_taken);
	buf_free(&args);
	buf_free(&line);
	cut_parser_free(p);
}
END_TEST

static int
parse_str(struct cut_parser *p, const char *text, struct cut_event *ev, char *why)
{
	static char line[4096];
	snprintf(line, sizeof(line), "%s", text);
	return cut_parse(p, line, strlen(line), ev, CUT_PARSE_AUTO, why, 256);
}

START_TEST(test_bad_lines)
{
	static const struct {
		const char *line, *why;
	} cases[] = {
	    {"{\"ts\":1,\"pid\":1,\"tid\":1,\"layer\":\"api\"}", "missing \"name\""},
	    {"{\"pid\":1,\"tid\":1,\"layer\":\"api\",\"name\":\"x\"}", "missing \"ts\""},
	    {"{\"ts\":1.5,\"pid\":1,\"tid\":1,\"layer\":\"api\",\"name\":\"x\"}",
	     "\"ts\" is not an integer"},
	    {"{\"ts\":\"1\",\"pid\":1,\"tid\":1,\"layer\":\"api\",\"name\":\"x\"}",
	     "\"ts\" is not an integer"},
	    {"{\"ts\":-1,\"pid\":1,\"tid\":1,\"layer\":\"api\",\"name\":\"x\"}", "negative \"ts\""},
	    {"{\"ts\":1,\"dur\":-5,\"pid\":1,\"tid\":1,\"layer\":\"api\",\"name\":\"x\"}",
	     "negative \"dur\""},
	    {"{\"ts\":9223372036854775807,\"dur\":5,\"pid\":1,\"tid\":1,\"layer\":\"api\",\"name\":"
	     "\"x\"}",
	     "\"ts\" + \"dur\" overflows"},
	    {"{\"ts\":99999999999999999999,\"pid\":1,\"tid\":1,\"layer\":\"api\",\"name\":\"x\"}",
	     "\"ts\" is out of range (64-bit integers)"},
	    {"{\"ts\":1,\"pid\":1,\"tid\":-99999999999999999999,\"layer\":\"api\",\"name\":\"x\"}",
	     "\"tid\" is out of range (64-bit integers)"},
	    /* a line with a \u0001 of its own keeps jansson's refusal */
	    {"{\"ts\":1,\"pid\":1,\"tid\":1,\"layer\":\"api\",\"name\":\"\\u0001\",\"args\":{\"a\":"
	     "99999999999999999999}}",
	     "invalid JSON: too big integer"},
	    {"{\"ts\":1,\"pid\":1,\"tid\":1,\"layer\":\"gpuz\",\"name\":\"x\"}",
	     "unknown layer \"gpuz\""},
	    {"{\"ts\":1,\"pid\":1,\"tid\":1,\"layer\":\"api\",\"name\":\"\"}", "empty \"name\""},
	    {"{\"ts\":1,\"rank\":-1,\"pid\":1,\"tid\":1,\"layer\":\"api\",\"name\":\"x\"}",
	     "negative \"rank\""},
	    {"{\"ts\":1,\"rank\":\"0\",\"pid\":1,\"tid\":1,\"layer\":\"api\",\"name\":\"x\"}",
	     "\"rank\" is not an integer"},
	    {"{\"ts\":1,\"host\":7,\"pid\":1,\"tid\":1,\"layer\":\"api\",\"name\":\"x\"}",
	     "\"host\" is not a string"},
	    {"{\"ts\":1,\"pid\":1,\"tid\":1,\"layer\":\"cuda\",\"name\":\"x\"}",
	     "unknown layer \"cuda\""},
	    {"{\"ts\":1,\"pid\":1,\"tid\":1,\"layer\":\"api\",\"name\":\"x\",\"args\":[1]}",
	     "\"args\" is not an object"},
	    {"{\"ts\":1,\"pid\":1,\"tid\":1,\"layer\":\"api\",\"name\":\"x\",\"nioctl\":1}",
	     "\"nioctl\" and \"ioctl_ns\" must come together"},
	    {"[1,2]", "not a JSON object"},
	    {"{\"ts\":1}", "not a cut event: no \"layer\""},
	    {"{\"ts\":1,\"pid\":1", "invalid JSON: '}' expected near end of file"},
	    {"\xff\xfe", "invalid JSON: unable to decode byte 0xff"},
	};
	struct cut_parser *p = cut_parser_new();
	struct cut_event ev;
	char why[256];
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = parse_str(p, cases[i].line, &ev, why);
		ck_assert_msg(rc == CUT_PARSE_ERROR, "accepted %s", cases[i].line);
		ck_assert_msg(strncmp(why, cases[i].why, strlen(cases[i].why)) == 0,
		              "%s: got \"%s\", want \"%s\"", cases[i].line, why, cases[i].why);
	}
	/* A NUL byte inside a line. */
	char nul[] = "{\"ts\":1,\"pid\":1,\"tid\":1,\"layer\":\"api\",\"name\":\"a\0b\"}";
	ck_assert_int_eq(cut_parse(p, nul, sizeof(nul) - 1, &ev, CUT_PARSE_AUTO, why, 256),
	                 CUT_PARSE_ERROR);
	ck_assert_str_eq(why, "NUL byte in line");
	cut_parser_free(p);
}
END_TEST

/* Numbers jansson cannot hold, inside args and unknown members, are kept as written, in any
 * layout; random ones written out and read back. */
START_TEST(test_big_numbers)
{
	struct cut_parser *p = cut_parser_new();
	struct cut_event ev;
	char why[256], want[512], num[3][80];
	for (int i = 0; i < 500; i++) {
		for (int k = 0; k < 3; k++) {
			int n = 19 + (int)rnd(40), o = 0;
			if (rnd(2))
				num[k][o++] = '-';
			num[k][o++] = (char)('1' + rnd(9));
			for (int d = 1; d < n; d++)
				num[k][o++] = (char)('0' + rnd(10));
			num[k][o] = '\0';
			if (n == 19 &&
			    strcmp(num[k] + (num[k][0] == '-'), "9223372036854775807") < 0)
				strcpy(num[k] + (num[k][0] == '-'),
				       "9999999999999999999"); /* past int64 */
		}
		if (i % 7 == 0)
			strcpy(num[2], rnd(2) ? "1.5e400" : "-2E+999");
		const char *sp = i % 2 ? " " : "";
		snprintf(want, sizeof(want),
		         "{\"ts\":%s%d,\"pid\":1,\"tid\":1,\"layer\":\"api\",\"name\":\"x\","
		         "\"args\":{\"a\":%s%s,"
		         "\"s\":\"1234567890123456789012\",\"b\":[%s,{\"c\":%s}]},\"zz\":%s}",
		         sp, i, sp, num[0], num[1], num[2], num[0]);
		int rc = parse_str(p, want, &ev, why);
		ck_assert_msg(rc == CUT_PARSE_EVENT, "%s: %s", want, why);
		char args[400], extra[100];
		snprintf(args, sizeof(args),
		         "{\"a\":%s,\"s\":\"1234567890123456789012\",\"b\":[%s,{\"c\":%s}]}",
		         num[0], num[1], num[2]);
		snprintf(extra, sizeof(extra), "\"zz\":%s", num[0]);
		ck_assert_str_eq(ev.args, args);
		ck_assert_str_eq(ev.extra, extra);
		ck_assert_int_eq(ev.ts, i);
	}
	cut_parser_free(p);
}
END_TEST

START_TEST(test_lenient_layouts)
{
	struct cut_parser *p = cut_parser_new();
	struct cut_event ev;
	char why[256];
	/* Any order, whitespace, CR, unknown members kept as extra. */
	ck_assert_int_eq(parse_str(p,
	                           " { \"name\" : \"cuInit\", \"layer\":\"api\", \"tid\":2,"
	                           "\"pid\":1, \"ts\":10, \"future\":{\"a\":1}, \"dur\":5 }\r",
	                           &ev, why),
	                 CUT_PARSE_EVENT);
	ck_assert_int_eq(ev.ts, 10);
	ck_assert_int_eq(ev.dur, 5);
	ck_assert_str_eq(ev.name, "cuInit");
	ck_assert_str_eq(ev.extra, "\"future\":{\"a\":1}");
	struct cut_buf b = {0};
	cut_event_format(&b, &ev);
	ck_assert_str_eq(b.s, "{\"ts\":10,\"dur\":5,\"pid\":1,\"tid\":2,\"layer\":\"api\","
	                      "\"name\":\"cuInit\",\"future\":{\"a\":1}}");
	/* A newer schema is read on, with a warning; schemas 1 and 2 are read silently. */
	ck_assert_int_eq(parse_str(p,
	                           "{\"ts\":1,\"pid\":1,\"tid\":1,\"layer\":\"meta\","
	                           "\"name\":\"header\",\"args\":{\"schema\":3}}",
	                           &ev, why),
	                 CUT_PARSE_EVENT);
	ck_assert_str_eq(why, "schema version 3 is newer than this reader's 2: reading on");
	for (int v = 1; v <= 2; v++) {
		char line[128];
		snprintf(line, sizeof(line),
		         "{\"ts\":1,\"pid\":1,\"tid\":1,\"layer\":\"meta\","
		         "\"name\":\"header\",\"args\":{\"schema\":%d}}",
		         v);
		ck_assert_int_eq(parse_str(p, line, &ev, why), CUT_PARSE_EVENT);
		ck_assert_str_eq(why, "");
	}
	/* Schema 2: host and rank in the envelope, the nvtx and runtime layers; the canonical
	 * order puts host and rank after dur. */
	ck_assert_int_eq(parse_str(p,
	                           "{\"layer\":\"runtime\",\"rank\":3,\"name\":\"cudaMalloc\","
	                           "\"tid\":2,\"pid\":1,\"ts\":10,\"host\":\"gpu7\",\"dur\":5}",
	                           &ev, why),
	                 CUT_PARSE_EVENT);
	ck_assert_str_eq(ev.host, "gpu7");
	ck_assert_int_eq(ev.rank, 3);
	ck_assert_int_eq(ev.layer, CUT_RUNTIME);
	buf_reset(&b);
	cut_event_format(&b, &ev);
	ck_assert_str_eq(b.s,
	                 "{\"ts\":10,\"dur\":5,\"host\":\"gpu7\",\"rank\":3,\"pid\":1,\"tid\":2,"
	                 "\"layer\":\"runtime\",\"name\":\"cudaMalloc\"}");
	char canon[] = "{\"ts\":10,\"host\":\"\",\"rank\":0,\"pid\":1,\"tid\":2,\"layer\":\"nvtx\","
	               "\"name\":\"forward\",\"cat\":\"range\"}";
	ck_assert_int_eq(cut_parse(p, canon, strlen(canon), &ev, CUT_PARSE_FAST, why, 256),
	                 CUT_PARSE_EVENT);
	ck_assert_str_eq(ev.host, "");
	ck_assert_int_eq(ev.has & CUT_HAS_RANK, CUT_HAS_RANK);
	ck_assert_int_eq(ev.layer, CUT_NVTX);
	/* Blank and whitespace-only lines are not events and not errors. */
	ck_assert_int_eq(parse_str(p, "", &ev, why), CUT_PARSE_NONE);
	ck_assert_int_eq(parse_str(p, " \t\r", &ev, why), CUT_PARSE_NONE);
	buf_free(&b);
	cut_parser_free(p);
}
END_TEST

START_TEST(test_writer_escapes)
{
	struct cut_event ev;
	struct cut_buf b = {0};
	cut_event_init(&ev);
	ev.ts = 1;
	ev.layer = CUT_API;
	ev.name = "a\"b\\c\n\x01\xff\xc3\xa9";
	cut_event_format(&b, &ev);
	ck_assert_str_eq(b.s, "{\"ts\":1,\"pid\":0,\"tid\":0,\"layer\":\"api\","
	                      "\"name\":\"a\\\"b\\\\c\\n\\u0001\\ufffd\xc3\xa9\"}");
	json_error_t e;
	json_t *j = json_loads(b.s, 0, &e);
	ck_assert_msg(j != NULL, "writer output is not JSON: %s", e.text);
	json_decref(j);
	buf_free(&b);
}
END_TEST

static char *
write_temp(const char *text, size_t len)
{
	static char path[64];
	strcpy(path, "/tmp/cut-test-XXXXXX");
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, len), (ssize_t)len);
	close(fd);
	return path;
}

START_TEST(test_reader_lines)
{
	/* A 3 MB line (longer than the reader's first buffer), CRLF, a bad line, a blank line
	 * and a last line without newline. */
	size_t pad = 3 << 20;
	struct cut_buf t = {0};
	buf_adds(&t, "{\"ts\":1,\"pid\":1,\"tid\":1,\"layer\":\"api\",\"name\":\"a\"}\r\n");
	buf_adds(
	    &t,
	    "{\"ts\":2,\"pid\":1,\"tid\":1,\"layer\":\"api\",\"name\":\"b\",\"args\":{\"pad\":\"");
	for (size_t i = 0; i < pad; i++)
		buf_addc(&t, 'x');
	buf_adds(&t, "\"}}\n");
	buf_adds(&t, "not json\n\n");
	buf_adds(&t, "{\"ts\":3,\"pid\":1,\"tid\":1,\"layer\":\"api\",\"name\":\"c\"}");
	char *path = write_temp(t.s, t.len);
	struct cut_reader *r = cut_reader_open(path, 0);
	ck_assert_ptr_nonnull(r);
	struct cut_event ev;
	ck_assert_int_eq(cut_reader_next(r, &ev), 1);
	ck_assert_str_eq(ev.name, "a");
	ck_assert_int_eq(cut_reader_line(r), 1);
	ck_assert_int_eq(cut_reader_next(r, &ev), 1);
	ck_assert_str_eq(ev.name, "b");
	ck_assert_uint_eq(strlen(ev.args), pad + 10);
	ck_assert_int_eq(cut_reader_next(r, &ev), 1);
	ck_assert_str_eq(ev.name, "c");
	ck_assert_int_eq(cut_reader_line(r), 5);
	ck_assert_int_eq(cut_reader_next(r, &ev), 0);
	ck_assert_int_eq(cut_reader_errors(r), 1);
	ck_assert_int_eq(cut_reader_close(r), 1);
	unlink(path);

	/* Strict mode stops at the bad line. */
	path = write_temp(t.s, t.len);
	r = cut_reader_open(path, CUT_READ_STRICT);
	ck_assert_int_eq(cut_reader_next(r, &ev), 1);
	ck_assert_int_eq(cut_reader_next(r, &ev), 1);
	ck_assert_int_eq(cut_reader_next(r, &ev), -1);
	cut_reader_close(r);
	unlink(path);

	/* Empty input. */
	path = write_temp("", 0);
	r = cut_reader_open(path, 0);
	ck_assert_int_eq(cut_reader_next(r, &ev), 0);
	ck_assert_int_eq(cut_reader_close(r), 0);
	unlink(path);

	ck_assert_ptr_null(cut_reader_open("/nonexistent/cut", 0));
	buf_free(&t);
}
END_TEST

START_TEST(test_reader_bom)
{
	/* A UTF-8 byte-order mark at the file's start is skipped, for events and for raw
	 * lines; one anywhere else is a bad line. */
	const char *a = "{\"ts\":1,\"pid\":1,\"tid\":1,\"layer\":\"api\",\"name\":\"a\"}";
	struct cut_buf t = {0};
	buf_adds(&t, "\xef\xbb\xbf");
	buf_adds(&t, a);
	buf_adds(&t, "\n\xef\xbb\xbf");
	buf_adds(&t, a);
	buf_adds(&t, "\n");
	char *path = write_temp(t.s, t.len);
	struct cut_reader *r = cut_reader_open(path, CUT_READ_SILENT);
	ck_assert_ptr_nonnull(r);
	struct cut_event ev;
	ck_assert_int_eq(cut_reader_next(r, &ev), 1);
	ck_assert_str_eq(ev.name, "a");
	ck_assert_uint_eq(cut_reader_line_bytes(r), strlen(a));
	ck_assert_int_eq(cut_reader_next(r, &ev), 0);
	ck_assert_int_eq(cut_reader_close(r), 1);
	r = cut_reader_open(path, CUT_READ_SILENT);
	char *line;
	size_t len;
	ck_assert_int_eq(cut_reader_next_line(r, &line, &len), 1);
	ck_assert_uint_eq(len, strlen(a));
	ck_assert_int_eq(memcmp(line, a, len), 0);
	ck_assert_int_eq(cut_reader_next_line(r, &line, &len), 1);
	ck_assert_uint_eq(len, strlen(a) + 3);
	cut_reader_close(r);
	unlink(path);
	buf_free(&t);
}
END_TEST

START_TEST(test_reader_raw_lines)
{
	/* Lines as they are, numbered as events are, whatever they hold; an event's line's
	 * bytes; a reader of an open file named as given. */
	const char *a = "{\"ts\":1,\"pid\":1,\"tid\":1,\"layer\":\"api\",\"name\":\"a\"}";
	struct cut_buf t = {0};
	buf_adds(&t, a);
	buf_adds(&t, "\r\nnot json\n\n");
	buf_adds(&t, a);
	char *path = write_temp(t.s, t.len);
	struct cut_reader *r = cut_reader_open(path, CUT_READ_SILENT);
	ck_assert_ptr_nonnull(r);
	char *line;
	size_t len;
	ck_assert_int_eq(cut_reader_next_line(r, &line, &len), 1);
	ck_assert_uint_eq(len, strlen(a) + 1); /* the CR stays */
	ck_assert_int_eq(cut_reader_line(r), 1);
	ck_assert_int_eq(cut_reader_next_line(r, &line, &len), 1);
	ck_assert_int_eq(len, 8);
	ck_assert_int_eq(memcmp(line, "not json", 8), 0);
	ck_assert_int_eq(cut_reader_next_line(r, &line, &len), 1);
	ck_assert_int_eq(len, 0);
	ck_assert_int_eq(cut_reader_next_line(r, &line, &len), 1);
	ck_assert_uint_eq(len, strlen(a));
	ck_assert_int_eq(cut_reader_line(r), 4);
	ck_assert_int_eq(cut_reader_next_line(r, &line, &len), 0);
	ck_assert_int_eq(cut_reader_close(r), 0); /* lines are not parsed: none is bad */

	int fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	r = cut_reader_open_fd(fd, "named", 0);
	ck_assert_str_eq(cut_reader_path(r), "named");
	struct cut_event ev;
	ck_assert_int_eq(cut_reader_next(r, &ev), 1);
	ck_assert_uint_eq(cut_reader_line_bytes(r), strlen(a) + 1);
	ck_assert_int_eq(cut_reader_next(r, &ev), 1);
	ck_assert_int_eq(cut_reader_line(r), 4);
	ck_assert_uint_eq(cut_reader_line_bytes(r), strlen(a));
	ck_assert_int_eq(cut_reader_next(r, &ev), 0);
	ck_assert_int_eq(cut_reader_close(r), 1);
	unlink(path);
	buf_free(&t);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("event");
	TCase *tc = tcase_create("event");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_roundtrip_random);
	tcase_add_test(tc, test_differential_mutated);
	tcase_add_test(tc, test_bad_lines);
	tcase_add_test(tc, test_lenient_layouts);
	tcase_add_test(tc, test_big_numbers);
	tcase_add_test(tc, test_writer_escapes);
	tcase_add_test(tc, test_reader_lines);
	tcase_add_test(tc, test_reader_raw_lines);
	tcase_add_test(tc, test_reader_bom);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
