/* cutioctl: names NVIDIA ioctls in a trace (annotate), sums them by name like strace -c
 * (summary), and turns strace output into ioctl events. */
#include <err.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "args.h"
#include "cut.h"
#include "event.h"
#include "ioctl.h"
#include "meta.h"
#include "reader.h"
#include "strace.h"
#include "strtab.h"

static void
usage(void)
{
	fprintf(stderr, "usage: cutioctl [-cjs] [file ...]\n"
	                "       cutioctl -l\n");
	exit(CUT_EXIT_FATAL);
}

/* Per decoded name, for the summary. */
struct row {
	int64_t calls, errors, total;
};

static struct {
	bool summary, json, strace;
	struct cut_strtab *names;
	struct row *rows;
	size_t cap;
	char driver[64];
	struct cut_buf args;
	struct cut_buf out; /* events to write, in pieces of about 64 KB */
	bool header_done;   /* strace import: the header waits for the first event's time */
} g;

/* Adds "key":"value" to the args being built, unless args already has key. */
static void
add_str(const char *args, const char *key, const char *v)
{
	if (cut_args_find(args, key))
		return;
	buf_addf(&g.args, "%s\"%s\":", g.args.s[g.args.len - 1] == '{' ? "" : ",", key);
	buf_addjstr(&g.args, v, strlen(v));
}

static void
add_int(const char *args, const char *key, int64_t v)
{
	if (cut_args_find(args, key))
		return;
	buf_addf(&g.args, "%s\"%s\":%lld", g.args.s[g.args.len - 1] == '{' ? "" : ",", key,
	         (long long)v);
}

/* The names cut-events(5) leaves to cutioctl: the event's name becomes the request's, and
 * args gain ctrl_name, class_name, xfer_name, and the _IOC fields of unknown requests. */
static void
annotate(struct cut_event *ev, const struct cut_ioctl_info *in)
{
	const char *a = ev->args;
	buf_reset(&g.args);
	buf_add(&g.args, a, strlen(a) - 1); /* without its closing brace */
	if (in->has_ctrl)
		add_str(a, "ctrl_name", in->ctrl_name);
	if (in->has_class)
		add_str(a, "class_name", in->class_name);
	if (in->has_xfer)
		add_str(a, "xfer_name", in->xfer_name);
	if (in->kind == CUT_IOCTL_UNKNOWN) {
		/* as cutcapture writes them */
		static const char *const dirs[] = {"none", "w", "r", "rw"};
		add_str(a, "dir", dirs[CUT_IOC_DIR(in->cmd)]);
		add_int(a, "type", CUT_IOC_TYPE(in->cmd));
		add_int(a, "nr", CUT_IOC_NR(in->cmd));
		add_int(a, "size", CUT_IOC_SIZE(in->cmd));
	}
	buf_addc(&g.args, '}');
	ev->args = g.args.s;
	ev->name = in->req;
}

static void
count(const struct cut_event *ev, const struct cut_ioctl_info *in)
{
	char label[512];
	int64_t status = 0;
	ioctl_info_label(in, label, sizeof(label));
	size_t i = strtab_intern(g.names, label);
	if (i >= g.cap) {
		size_t cap = g.cap ? g.cap * 2 : 64;
		struct row *r = realloc(g.rows, cap * sizeof(*r));
		if (!r)
			err(CUT_EXIT_FATAL, "summary");
		memset(r + g.cap, 0, (cap - g.cap) * sizeof(*r));
		g.rows = r;
		g.cap = cap;
	}
	g.rows[i].calls++;
	if (ev->has & CUT_HAS_DUR)
		g.rows[i].total += ev->dur;
	if (((ev->has & CUT_HAS_RET) && ev->ret < 0) ||
	    (cut_args_int(ev->args, "status", &status) == 0 && status != 0))
		g.rows[i].errors++;
}

static void
write_event(const struct cut_event *ev)
{
	cut_event_format(&g.out, ev);
	buf_addc(&g.out, '\n');
	if (g.out.len >= 1 << 16)
		cut_write_buf(&g.out);
}

static void
header(int64_t ts, bool have_clock)
{
	struct cut_event at;
	struct cut_meta m;
	cut_event_init(&at);
	at.ts = ts;
	cut_meta_init(&m, CUT_META_HEADER);
	m.header.tool = "cutioctl";
	m.header.version = CUT_VERSION;
	/* ts are CLOCK_REALTIME: saying both clocks read the same lets cutmerge align the
	 * events with the monotonic clock of traces that recorded both. */
	if (have_clock)
		m.header.monotonic_ns = m.header.realtime_ns = ts;
	m.header.sorted = 1;
	m.header.more = "\"source\":\"strace\"";
	cut_meta_format(&g.out, &at, &m);
	buf_addc(&g.out, '\n');
	g.header_done = true;
}

/* The driver version a trace's header names, for the summary. */
static void
read_driver(const struct cut_event *ev)
{
	struct cut_meta m;
	if (cut_meta_read(ev, &m) == CUT_META_HEADER && m.header.driver)
		snprintf(g.driver, sizeof(g.driver), "%s", m.header.driver);
	cut_meta_release(&m);
}

static void
handle(struct cut_event *ev)
{
	struct cut_ioctl_info in;
	if (ev->layer == CUT_META && !g.driver[0])
		read_driver(ev);
	bool decoded = ev->layer == CUT_IOCTL && ioctl_decode_args(ev->args, &in) == 0;
	if (g.summary) {
		if (decoded)
			count(ev, &in);
		return;
	}
	if (g.strace && !g.header_done)
		header(ev->ts, true);
	if (decoded)
		annotate(ev, &in);
	write_event(ev);
}

/* Reads one file of strace output. Returns the number of lines it could not read. */
static uint64_t
read_strace(const char *path)
{
	FILE *f = path && strcmp(path, "-") != 0 ? fopen(path, "r") : stdin;
	const char *name = f == stdin ? "<stdin>" : path;
	if (!f)
		err(CUT_EXIT_FATAL, "%s", path);
	struct cut_strace *s = strace_new();
	if (!s)
		err(CUT_EXIT_FATAL, "strace import");
	char *line = NULL, why[128];
	size_t cap = 0;
	ssize_t len;
	uint64_t lineno = 0, bad = 0, ul;
	struct cut_event ev;
	for (;;) {
		len = getline(&line, &cap, f);
		if (len >= 0) {
			lineno++;
			if (len && line[len - 1] == '\n')
				len--;
			if (strace_feed(s, line, (size_t)len, lineno, why, sizeof(why)) < 0) {
				warnx("%s:%llu: %s", name, (unsigned long long)lineno, why);
				bad++;
			}
		} else {
			if (ferror(f))
				err(CUT_EXIT_FATAL, "%s: read", name);
			strace_finish(s);
		}
		while (strace_next(s, &ev, &ul) > 0) {
			if (ul) {
				warnx("%s:%llu: ioctl never resumed: kept without its result", name,
				      (unsigned long long)ul);
				bad++;
			}
			handle(&ev);
		}
		if (len < 0)
			break;
	}
	struct cut_strace_counts n = strace_counts(s);
	if (n.other)
		warnx("%s: left out %llu ioctls on files that are not NVIDIA devices", name,
		      (unsigned long long)n.other);
	free(line);
	strace_free(s);
	if (f != stdin)
		fclose(f);
	return bad;
}

static int
by_time(const void *a, const void *b)
{
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	const struct row *x = &g.rows[i], *y = &g.rows[j];
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	if (x->calls != y->calls)
		return x->calls < y->calls ? 1 : -1;
	return strcmp(strtab_key(g.names, i), strtab_key(g.names, j));
}

static void
print_summary(void)
{
	size_t n = strtab_len(g.names);
	size_t *order = malloc((n ? n : 1) * sizeof(*order));
	int64_t calls = 0, errors = 0, total = 0;
	if (!order)
		err(CUT_EXIT_FATAL, "summary");
	for (size_t i = 0; i < n; i++) {
		order[i] = i;
		calls += g.rows[i].calls;
		errors += g.rows[i].errors;
		total += g.rows[i].total;
	}
	if (n)
		qsort(order, n, sizeof(*order), by_time);
	if (g.json) {
		json_t *root = json_object(), *rows = json_array();
		json_object_set_new(root, "tables", json_string(ioctl_tables_version()));
		if (g.driver[0])
			json_object_set_new(root, "driver", json_string(g.driver));
		json_object_set_new(root, "calls", json_integer(calls));
		json_object_set_new(root, "errors", json_integer(errors));
		json_object_set_new(root, "total_ns", json_integer(total));
		for (size_t k = 0; k < n; k++) {
			const struct row *r = &g.rows[order[k]];
			json_array_append_new(
			    rows,
			    json_pack("{s:s,s:I,s:I,s:I,s:f,s:f}", "name",
			              strtab_key(g.names, order[k]), "calls", (json_int_t)r->calls,
			              "errors", (json_int_t)r->errors, "total_ns",
			              (json_int_t)r->total, "avg_ns",
			              (double)r->total / (double)r->calls, "time_pct",
			              total ? 100.0 * (double)r->total / (double)total : 0.0));
		}
		json_object_set_new(root, "ioctls", rows);
		if (json_dumpf(root, stdout, JSON_INDENT(2)) < 0)
			err(CUT_EXIT_FATAL, "write error on standard output");
		putchar('\n');
		json_decref(root);
		free(order);
		return;
	}
	printf("NVIDIA ioctl names from open-gpu-kernel-modules %s", ioctl_tables_version());
	if (g.driver[0])
		printf("; the trace's driver is %s", g.driver);
	printf("\n%% time     seconds  usecs/call     calls    errors ioctl\n"
	       "------ ----------- ----------- --------- --------- ----------------\n");
	for (size_t k = 0; k < n; k++) {
		const struct row *r = &g.rows[order[k]];
		printf("%6.2f %11.6f %11lld %9lld ",
		       total ? 100.0 * (double)r->total / (double)total : 0.0,
		       (double)r->total / 1e9, (long long)(r->total / 1000 / r->calls),
		       (long long)r->calls);
		if (r->errors)
			printf("%9lld ", (long long)r->errors);
		else
			printf("%9s ", "");
		printf("%s\n", strtab_key(g.names, order[k]));
	}
	printf("------ ----------- ----------- --------- --------- ----------------\n"
	       "100.00 %11.6f %11lld %9lld ",
	       (double)total / 1e9, (long long)(calls ? total / 1000 / calls : 0),
	       (long long)calls);
	if (errors)
		printf("%9lld total\n", (long long)errors);
	else
		printf("%9s total\n", "");
	free(order);
}

static void
list_tables(void)
{
	static const char *const kind[CUT_NVT_N] = {"escape", "uvm", "control", "class"};
	printf("# NVIDIA ioctl tables from open-gpu-kernel-modules %s\n"
	       "# table\tnumber\tname\tparams\tsize\n",
	       ioctl_tables_version());
	for (int t = 0; t < CUT_NVT_N; t++)
		for (size_t i = 0; i < ioctl_table_size(t); i++) {
			uint32_t num;
			const char *params, *size;
			const char *name = ioctl_table_entry(t, i, &num, &params, &size);
			printf("%s\t0x%0*X\t%s\t%s\t%s\n", kind[t],
			       t == CUT_NVT_CONTROL ? 8
			       : t == CUT_NVT_CLASS ? 4
			                            : 2,
			       num, name, *params ? params : "-", *size ? size : "-");
		}
}

static void
read_event(struct cut_reader *r, struct cut_event *ev, void *arg)
{
	(void)r, (void)arg;
	handle(ev);
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
	    {"summary", no_argument, NULL, 'c'},
	    {"json", no_argument, NULL, 'j'},
	    {"strace", no_argument, NULL, 's'},
	    {"list", no_argument, NULL, 'l'},
	    {NULL, 0, NULL, 0},
	};
	int ch, status = CUT_EXIT_OK;
	bool list = false;

	while ((ch = getopt_long(argc, argv, "cjsl", longopts, NULL)) != -1) {
		switch (ch) {
		case 'c': g.summary = true; break;
		case 'j': g.summary = g.json = true; break;
		case 's': g.strace = true; break;
		case 'l': list = true; break;
		default: usage();
		}
	}
	argc -= optind;
	argv += optind;
	if (list) {
		if (argc || g.summary || g.strace)
			usage();
		list_tables();
		return cut_finish_output(CUT_EXIT_OK);
	}

	g.names = strtab_new();
	if (g.strace) {
		for (int i = 0; i < (argc ? argc : 1); i++)
			if (read_strace(argc ? argv[i] : NULL))
				status = CUT_EXIT_BADINPUT;
	} else {
		status = cut_read_all(argc, argv, read_event, NULL);
	}
	if (g.summary)
		print_summary();
	else if (g.strace && !g.header_done)
		header(0, false);
	cut_write_buf(&g.out);
	strtab_free(g.names);
	free(g.rows);
	buf_free(&g.args);
	buf_free(&g.out);
	return cut_finish_output(status);
}
