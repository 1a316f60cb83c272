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
#include "calls.h"
#include "cut.h"
#include "event.h"
#include "heap.h"
#include "idmap.h"
#include "ioctl.h"
#include "meta.h"
#include "reader.h"
#include "strace.h"
#include "strtab.h"
#include "text.h"

static const struct cut_opt_help opts[] = {
    {"-c, --summary", "print the summary (ioctls by name) instead of the events"},
    {"-j, --json", "print the summary, or with -m the map, as one JSON object"},
    {"-l, --list", "print the compiled-in ioctl tables, one entry a line"},
    {"-m, --map", "print the API to ioctl map instead of the events"},
    {"-s, --strace", "read strace output instead of a cut trace"},
    {NULL, NULL},
};

static void
usage(void)
{
	fprintf(stderr, "usage: cutioctl [-cjs] [file ...]\n"
	                "       cutioctl -m [-j] [file ...]\n"
	                "       cutioctl -l\n");
	exit(CUT_EXIT_FATAL);
}

/* Per decoded name, for the summary. */
struct row {
	int64_t calls, errors, total;
};

/* The API -> ioctl map: a driver or runtime call still open, gathering the ioctls made
 * inside it and inside the calls it holds. */
struct call {
	int64_t dur, ioctl_ns;
	uint64_t up;        /* key of the call around it, or 0 */
	size_t fn;          /* index in g.fns */
	struct cut_buf seq; /* the ioctls' names, each ended by '\n' */
};

/* A distinct (function, ioctl sequence), and a function's totals. */
struct seqrow {
	size_t fn;
	int64_t calls, total, ioctl_ns;
};

struct fnrow {
	int64_t calls, total, nseq;
	enum cut_layer layer;
};

static struct {
	bool summary, json, strace, map;
	/* the map: calls open by key, their ends, sequences and functions seen */
	struct cut_calls *calls;
	struct cut_idmap *open;
	struct call *call;
	size_t ncall;
	struct cut_heap ends;
	uint64_t nextkey;
	struct cut_strtab *fns, *seqs;
	struct fnrow *fnrows;
	struct seqrow *seqrows;
	size_t nfnrow, nseqrow;
	struct cut_strtab *names;
	struct row *rows;
	size_t cap;
	char driver[64];
	struct cut_buf args;
	struct cut_buf out; /* events to write, in pieces of about 64 KB */
	bool header_done;   /* strace import: the header waits for the first event's time */
	uint64_t too_deep;  /* ioctls inside more than MAP_DEPTH calls */
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
	CUT_GROW(g.rows, i + 1, g.cap);
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

/* A call ended: its sequence of ioctls is counted for its function. */
static void
map_end(uint64_t key)
{
	size_t i = idmap_del(g.open, (int64_t)key);
	if (i == IDMAP_NONE)
		return;
	struct call *c = &g.call[i];
	buf_reset(&g.args);
	buf_addf(&g.args, "%zu\t", c->fn);
	if (c->seq.len)
		buf_add(&g.args, c->seq.s, c->seq.len);
	size_t nseq = strtab_len(g.seqs), s = strtab_intern(g.seqs, g.args.s);
	CUT_GROW(g.seqrows, s + 1, g.nseqrow);
	struct seqrow *r = &g.seqrows[s];
	struct fnrow *f = &g.fnrows[c->fn];
	if (s == nseq) {
		r->fn = c->fn;
		f->nseq++;
	}
	r->calls++;
	r->total += c->dur;
	r->ioctl_ns += c->ioctl_ns;
	f->calls++;
	f->total += c->dur;
	buf_reset(&c->seq);
}

/* How many calls around an ioctl, from the innermost, it is counted in (see map_event). */
#define MAP_DEPTH 64

/* Ends the calls that ended at or before ts: no event from ts on is inside them. */
static void
map_flush(int64_t ts)
{
	struct cut_heap_key *k;
	while ((k = heap_top(&g.ends)) && k->ts <= ts) {
		uint64_t key = k->seq;
		heap_pop(&g.ends, NULL);
		map_end(key);
	}
}

static void
map_event(const struct cut_event *ev, const struct cut_ioctl_info *in)
{
	if (ev->layer == CUT_META)
		return;
	map_flush(ev->ts);
	if ((ev->layer == CUT_API || ev->layer == CUT_RUNTIME) && (ev->has & CUT_HAS_DUR)) {
		struct cut_span *p = cut_calls_parent(g.calls, ev);
		uint64_t up = p ? p->user[0] : 0;
		struct cut_span *s = cut_calls_open(g.calls, ev);
		if (!s)
			return;
		uint64_t key = ++g.nextkey;
		s->user[0] = key;
		buf_reset(&g.args);
		buf_addf(&g.args, "%s\t%s", cut_layer_name(ev->layer), ev->name);
		size_t nfn = strtab_len(g.fns), fn = strtab_intern(g.fns, g.args.s);
		CUT_GROW(g.fnrows, fn + 1, g.nfnrow);
		if (fn == nfn)
			g.fnrows[fn].layer = ev->layer;
		size_t i = idmap_put(g.open, (int64_t)key, NULL);
		CUT_GROW(g.call, i + 1, g.ncall);
		struct call *c = &g.call[i];
		c->dur = ev->dur;
		c->ioctl_ns = 0;
		c->up = up;
		c->fn = fn;
		buf_reset(&c->seq);
		struct cut_heap_key end = {cut_event_end(ev), key};
		heap_push(&g.ends, &end);
		return;
	}
	if (ev->layer != CUT_IOCTL)
		return;
	struct cut_span *p = cut_calls_parent(g.calls, ev);
	if (!p)
		return;
	char label[512];
	if (in)
		ioctl_info_label(in, label, sizeof(label));
	else /* open, close, mmap; escaped here, as a newline would split the sequence */
		snprintf(label, sizeof(label), "%s", cut_esc(ev->name));
	/* the ioctl belongs to its call and to every call around that one, MAP_DEPTH of them
	 * at most: calls nested deeper (thousands of identical calls all open) would cost
	 * time and memory of the depth for every ioctl */
	int depth = 0;
	for (uint64_t k = p->user[0]; k; depth++) {
		size_t i = idmap_get(g.open, (int64_t)k);
		if (i == IDMAP_NONE)
			break;
		if (depth == MAP_DEPTH) {
			g.too_deep++;
			break;
		}
		struct call *c = &g.call[i];
		buf_adds(&c->seq, label);
		buf_addc(&c->seq, '\n');
		if (ev->has & CUT_HAS_DUR)
			c->ioctl_ns += ev->dur;
		k = c->up;
	}
}

static size_t *fnrank;

static int
fn_by_time(const void *a, const void *b)
{
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	const struct fnrow *x = &g.fnrows[i], *y = &g.fnrows[j];
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	if (x->calls != y->calls)
		return x->calls < y->calls ? 1 : -1;
	return strcmp(strtab_key(g.fns, i), strtab_key(g.fns, j));
}

static int
seq_by_calls(const void *a, const void *b)
{
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	const struct seqrow *x = &g.seqrows[i], *y = &g.seqrows[j];
	if (x->fn != y->fn)
		return fnrank[x->fn] < fnrank[y->fn] ? -1 : 1;
	if (x->calls != y->calls)
		return x->calls < y->calls ? 1 : -1;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return strcmp(strtab_key(g.seqs, i), strtab_key(g.seqs, j));
}

/* The name of function fn, after its layer's name and a tab. */
static const char *
fn_name(size_t fn)
{
	return strchr(strtab_key(g.fns, fn), '\t') + 1;
}

/* Writes a sequence (names ended by '\n', escaped when they came from the trace) on one
 * line, repeats counted: "A, B x3, C"; or "-". */
static void
print_seq(const char *s)
{
	if (!*s) {
		fputs("-", stdout);
		return;
	}
	const char *sep = "";
	while (*s) {
		const char *e = strchr(s, '\n');
		size_t n = (size_t)(e - s), times = 1;
		while (strncmp(e + 1, s, n) == 0 && e[1 + n] == '\n') {
			times++;
			e += n + 1;
		}
		printf("%s%.*s", sep, (int)n, s);
		if (times > 1)
			printf(" x%zu", times);
		sep = ", ";
		s = e + 1;
	}
}

static void
json_seq(struct cut_buf *b, const char *s)
{
	buf_addc(b, '[');
	for (const char *sep = ""; *s; sep = ",") {
		const char *e = strchr(s, '\n');
		buf_adds(b, sep);
		buf_addjstr(b, s, (size_t)(e - s));
		s = e + 1;
	}
	buf_addc(b, ']');
}

static void
print_map(void)
{
	map_flush(INT64_MAX);
	if (g.too_deep)
		warnx(
		    "%llu ioctls were inside more than %d calls: counted in the %d innermost only",
		    (unsigned long long)g.too_deep, MAP_DEPTH, MAP_DEPTH);
	size_t nf = strtab_len(g.fns), ns = strtab_len(g.seqs);
	size_t *forder = cut_xcalloc(nf, sizeof(*forder)), *sorder = cut_xcalloc(ns, sizeof(*sorder));
	fnrank = cut_xcalloc(nf, sizeof(*fnrank));
	for (size_t i = 0; i < nf; i++)
		forder[i] = i;
	qsort(forder, nf, sizeof(*forder), fn_by_time);
	for (size_t k = 0; k < nf; k++)
		fnrank[forder[k]] = k;
	for (size_t i = 0; i < ns; i++)
		sorder[i] = i;
	qsort(sorder, ns, sizeof(*sorder), seq_by_calls);
	if (g.json) {
		struct cut_buf *b = &g.out;
		buf_addf(b, "{\"tables\":\"%s\",", ioctl_tables_version());
		if (g.driver[0]) {
			buf_adds(b, "\"driver\":");
			buf_addjstr(b, g.driver, strlen(g.driver));
			buf_addc(b, ',');
		}
		buf_adds(b, "\"functions\":[");
		size_t fn = SIZE_MAX;
		for (size_t k = 0; k < ns; k++) {
			const struct seqrow *r = &g.seqrows[sorder[k]];
			if (r->fn != fn) {
				const struct fnrow *f = &g.fnrows[r->fn];
				buf_adds(b, fn == SIZE_MAX ? "\n{\"name\":" : "]},\n{\"name\":");
				buf_addjstr(b, fn_name(r->fn), strlen(fn_name(r->fn)));
				buf_addf(b,
				         ",\"layer\":\"%s\",\"calls\":%lld,\"total_ns\":%lld,"
				         "\"sequences\":[",
				         cut_layer_name(f->layer), (long long)f->calls,
				         (long long)f->total);
				fn = r->fn;
			} else {
				buf_addc(b, ',');
			}
			buf_addf(
			    b, "\n {\"calls\":%lld,\"total_ns\":%lld,\"ioctl_ns\":%lld,\"ioctls\":",
			    (long long)r->calls, (long long)r->total, (long long)r->ioctl_ns);
			json_seq(b, strchr(strtab_key(g.seqs, sorder[k]), '\t') + 1);
			buf_addc(b, '}');
			if (b->len >= 1 << 16)
				cut_write_buf(b);
		}
		buf_adds(b, fn == SIZE_MAX ? "]}\n" : "]}]}\n");
	} else {
		printf("API -> ioctl map; NVIDIA ioctl names from open-gpu-kernel-modules %s",
		       ioctl_tables_version());
		if (g.driver[0])
			printf("; the trace's driver is %s", cut_esc(g.driver));
		printf("\n");
		size_t fn = SIZE_MAX;
		for (size_t k = 0; k < ns; k++) {
			const struct seqrow *r = &g.seqrows[sorder[k]];
			if (r->fn != fn) {
				const struct fnrow *f = &g.fnrows[r->fn];
				printf("\n%s (%s): %lld call%s, %.6f s, %lld sequence%s\n"
				       "    calls     seconds  ioctl secs ioctls\n",
				       cut_esc(fn_name(r->fn)), cut_layer_label(f->layer),
				       (long long)f->calls, f->calls == 1 ? "" : "s",
				       (double)f->total / 1e9, (long long)f->nseq,
				       f->nseq == 1 ? "" : "s");
				fn = r->fn;
			}
			printf("%9lld %11.6f %11.6f ", (long long)r->calls, (double)r->total / 1e9,
			       (double)r->ioctl_ns / 1e9);
			print_seq(strchr(strtab_key(g.seqs, sorder[k]), '\t') + 1);
			putchar('\n');
		}
	}
	free(forder);
	free(sorder);
	free(fnrank);
}

static void
handle(struct cut_event *ev)
{
	struct cut_ioctl_info in;
	if (ev->layer == CUT_META && !g.driver[0])
		read_driver(ev);
	bool decoded = ev->layer == CUT_IOCTL && ioctl_decode_args(ev->args, &in) == 0;
	if (g.map) {
		map_event(ev, decoded ? &in : NULL);
		return;
	}
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

/* Reads one file of strace output. Returns CUT_EXIT_OK, CUT_EXIT_BADINPUT when lines could
 * not be read, or CUT_EXIT_LOST when the file, or the rest of it, could not (reported), as
 * the trace reader does. */
static int
read_strace(const char *path)
{
	FILE *f = path && strcmp(path, "-") != 0 ? fopen(path, "r") : stdin;
	const char *name = path && strcmp(path, "-") != 0 ? path : "<stdin>";
	if (!f) {
		warn("%s", cut_esc(name));
		return CUT_EXIT_LOST;
	}
	struct cut_strace *s = strace_new();
	if (!s)
		err(CUT_EXIT_FATAL, "strace import");
	char *line = NULL, why[128];
	size_t cap = 0;
	ssize_t len;
	uint64_t lineno = 0, bad = 0, ul;
	bool lost = false;
	struct cut_event ev;
	for (;;) {
		len = getline(&line, &cap, f);
		if (len >= 0) {
			lineno++;
			if (len && line[len - 1] == '\n')
				len--;
			/* A cut trace given to -s would be refused line by line (77,000 messages
			 * for a PyTorch capture): say once what it is. */
			if (lineno == 1 && len > 1 && line[0] == '{' && line[1] == '"')
				errx(CUT_EXIT_FATAL,
				     "%s:1: a trace in cut's format, not strace output: leave out "
				     "-s",
				     cut_esc(name));
			if (strace_feed(s, line, (size_t)len, lineno, why, sizeof(why)) < 0) {
				warnx("%s:%llu: %s", cut_esc(name), (unsigned long long)lineno,
				      cut_esc(why));
				bad++;
			}
		} else {
			if (ferror(f)) {
				warn("%s: read", cut_esc(name));
				lost = true;
			}
			strace_finish(s);
		}
		while (strace_next(s, &ev, &ul) > 0) {
			if (ul) {
				warnx("%s:%llu: ioctl never resumed: kept without its result",
				      cut_esc(name), (unsigned long long)ul);
				bad++;
			}
			handle(&ev);
		}
		if (len < 0)
			break;
	}
	struct cut_strace_counts n = strace_counts(s);
	if (n.other)
		warnx("%s: left out %llu ioctls on files that are not NVIDIA devices",
		      cut_esc(name), (unsigned long long)n.other);
	free(line);
	strace_free(s);
	if (f != stdin)
		fclose(f);
	return lost ? CUT_EXIT_LOST : bad ? CUT_EXIT_BADINPUT : CUT_EXIT_OK;
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
	size_t *order = cut_xcalloc(n, sizeof(*order));
	int64_t calls = 0, errors = 0, total = 0;
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
		printf("; the trace's driver is %s", cut_esc(g.driver));
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
		printf("%s\n", cut_esc(strtab_key(g.names, order[k])));
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
	static uint64_t file;
	(void)arg;
	if (g.map && cut_reader_serial(r) != file) {
		/* a call of one file holds nothing of the next (the same pid on two hosts that
		 * name theirs in the header only) */
		file = cut_reader_serial(r);
		map_flush(INT64_MAX);
		cut_calls_free(g.calls);
		g.calls = cut_calls_new(1u << CUT_API | 1u << CUT_RUNTIME);
	}
	handle(ev);
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
	    {"summary", no_argument, NULL, 'c'}, {"json", no_argument, NULL, 'j'},
	    {"strace", no_argument, NULL, 's'},  {"list", no_argument, NULL, 'l'},
	    {"map", no_argument, NULL, 'm'},     {NULL, 0, NULL, 0},
	};
	int ch, status = CUT_EXIT_OK;
	bool list = false;

	cut_std_args_help(argc, argv, usage, opts);

	while ((ch = getopt_long(argc, argv, "cjlms", longopts, NULL)) != -1) {
		switch (ch) {
		case 'c': g.summary = true; break;
		case 'j': g.json = true; break;
		case 'm': g.map = true; break;
		case 's': g.strace = true; break;
		case 'l': list = true; break;
		default: usage();
		}
	}
	argc -= optind;
	argv += optind;
	if (g.json && !g.map)
		g.summary = true;
	if (g.map && g.summary)
		usage();
	if (list) {
		if (argc || g.summary || g.strace || g.map)
			usage();
		list_tables();
		return cut_finish_output(CUT_EXIT_OK);
	}

	g.names = strtab_new();
	if (g.map) {
		g.calls = cut_calls_new(1u << CUT_API | 1u << CUT_RUNTIME);
		g.open = idmap_new();
		g.fns = strtab_new();
		g.seqs = strtab_new();
		heap_init(&g.ends, sizeof(struct cut_heap_key));
	}
	if (g.strace) {
		cut_check_inputs(argc, argv, 0);
		for (int i = 0; i < (argc ? argc : 1); i++) {
			int rc = read_strace(argc ? argv[i] : NULL);
			if (rc > status)
				status = rc;
		}
	} else {
		status = cut_read_all(argc, argv, read_event, NULL);
	}
	if (g.map)
		print_map();
	else if (g.summary)
		print_summary();
	else if (g.strace && !g.header_done)
		header(0, false);
	cut_write_buf(&g.out);
	strtab_free(g.names);
	free(g.rows);
	if (g.map) {
		for (size_t i = 0; i < g.ncall; i++)
			buf_free(&g.call[i].seq);
		free(g.call);
		free(g.fnrows);
		free(g.seqrows);
		strtab_free(g.fns);
		strtab_free(g.seqs);
		idmap_free(g.open);
		cut_calls_free(g.calls);
		heap_free(&g.ends);
	}
	buf_free(&g.args);
	buf_free(&g.out);
	return cut_finish_output(status);
}
