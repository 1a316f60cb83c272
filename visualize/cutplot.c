/* cutplot: charts of a cut trace drawn by gnuplot: a timeline per thread and layer, driver
 * API time by category, call durations and idle gaps, as PNG, SVG or text in the terminal. */
#include <err.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "args.h"
#include "calls.h"
#include "classify.h"
#include "cut.h"
#include "event.h"
#include "idmap.h"
#include "meta.h"
#include "outfile.h"
#include "procs.h"
#include "reader.h"
#include "stats.h"
#include "strtab.h"
#include "text.h"
#include "timeline.h"
#include "units.h"

/* Time bins per row. The range doubles as the trace grows, so memory is per row, not per
 * event; it always spans at least NBINS/2 bins of data, more than the pixels of a chart. */
#define NBINS 2048
#define NHIST 40   /* call durations: 4 bins a decade from 10 ns */
#define DFLOOR 0.5 /* the bottom of their log count axis: half a call */
#define IDLE CUT_NLAYERS
#define TMAX ((int64_t)1 << 61)
/* GPU work has a row per process and stream: its "tid" is below every thread's and name's,
 * -16 - the stream's index in stream_ids. */
#define GPU_ROW(index) (-16 - (int64_t)(index))

/* Colour classes: the API categories, then the layers but api and meta (in their order),
 * then gap lengths, then GPU work that is a collective kernel (classify.h's rule). The
 * categories and layers are named by share/lib (init_classes). */
#define C_LAYER(l) (CUT_NCATS + (l) - ((l) > CUT_API))
enum { C_GAP = C_LAYER(CUT_META), C_COLL = C_GAP + 4, NCLASS = C_COLL + 1 };
static struct {
	const char *label, *rgb, *ch;
} classes[NCLASS] = {
    [CUT_CAT_INIT] = {0, "#7f7f7f", "I"},
    [CUT_CAT_CONTEXT] = {0, "#8c564b", "C"},
    [CUT_CAT_DEVICE] = {0, "#e377c2", "D"},
    [CUT_CAT_MEMORY] = {0, "#bcbd22", "M"},
    [CUT_CAT_TRANSFER] = {0, "#17becf", "T"},
    [CUT_CAT_LAUNCH] = {0, "#1f77b4", "L"},
    [CUT_CAT_SYNC] = {0, "#d62728", "S"},
    [CUT_CAT_STREAM] = {0, "#9467bd", "s"},
    [CUT_CAT_EVENT] = {0, "#ff7f0e", "e"},
    [CUT_CAT_MODULE] = {0, "#aec7e8", "m"},
    [CUT_CAT_GRAPH] = {0, "#98df8a", "g"},
    [CUT_CAT_QUERY] = {0, "#2ca02c", "q"},
    [CUT_CAT_OTHER] = {0, "#c7c7c7", "o"},
    [C_LAYER(CUT_NVTX)] = {0, "#76b900", "N"},
    [C_LAYER(CUT_RUNTIME)] = {0, "#393b79", "R"},
    [C_LAYER(CUT_IOCTL)] = {0, "#ff9896", "i"},
    [C_LAYER(CUT_KERNEL)] = {0, "#c5b0d5", "k"},
    [C_LAYER(CUT_IRQ)] = {0, "#f7b6d2", "!"},
    [C_LAYER(CUT_SCHED)] = {0, "#dbdb8d", "z"},
    [C_LAYER(CUT_GPU)] = {0, "#9edae5", "G"},
    [C_GAP] = {"gap < 100 us", "#fdd0a2", "."},
    {"gap < 1 ms", "#fd8d3c", "-"},
    {"gap < 10 ms", "#e6550d", "="},
    {"gap >= 10 ms", "#a63603", "#"},
    [C_COLL] = {"collective kernels", "#c51b7d", "@"},
};

/* A chart row (a thread's layer, or its idle gaps), or with layer < 0 a thread's (-1) or
 * process's (-2) name. */
struct row {
	int64_t pid, tid; /* pid: the process's index in procs (-1: other threads) */
	int layer;
	uint64_t stream; /* GPU rows: the stream's handle */
	char *comm;
	float *t;                            /* NBINS x NCLASS ns, allocated on first use */
	int64_t from, to;                    /* the span of its events */
	int64_t first, last, prev_end, idle; /* IDLE rows: the thread's API calls and gaps */
	int64_t latest;                      /* IDLE rows: the latest start of a call */
};

static struct row **rows; /* every row, in order of creation */
static size_t nrows, rowcap;
/* A thread's rows by layer + 3 (a mark that it went to "other threads", its name, its
 * process's name, its layers, its gaps). */
static struct thread_rows {
	struct row *rows[IDLE + 4];
} * threads;
static size_t threadcap;
static struct cut_idmap *thread_ids; /* (proc, tid) -> index in threads */
/* The processes: a pid of a host, or a host's interrupts. Rows key by the index here, never
 * by the input's pid, which two hosts may share. */
static struct proc {
	size_t host; /* index in hosts */
	int64_t pid; /* -1: the interrupts */
} * procs;
static size_t proccap;
static struct cut_idmap *proc_ids;   /* (host, pid) -> index in procs; (-1 - host, 0): irq */
static struct cut_strtab *hosts;     /* names, "" when unknown */
static struct cut_idmap *stream_ids; /* (proc, stream handle) -> index, for GPU_ROW */
static struct {
	const struct cut_reader *r; /* the input being read, its latest line, its host */
	uint64_t line;
	size_t host;
	/* its processes by procs.h's rule, and 1 + the index in procs of each (0: none yet) */
	struct cut_procs *procs;
	size_t *proc, cap;
} input;
static struct cut_calls *open_calls; /* the top-level API calls, for host gaps */
static int64_t origin, width, tmin = INT64_MAX, tmax = INT64_MIN, threshold = 10000;
static int64_t hist[NHIST][CUT_NCATS];
static struct cut_stats *st;
static const char *term, *title = "<stdin>";
static int wid, hei;
static bool ansi, multiplot, every_thread;

static const struct cut_opt_help opts[] = {
    {"-a", "draw every thread, those without driver calls too"},
    {"-S", "write the gnuplot script instead of running gnuplot"},
    {"-c chart", "timeline, categories, durations, gaps, gpu or all (timeline)"},
    {"-T terminal", "png, svg or dumb (text); by default from -o's extension"},
    {"-o file", "write the chart to file"},
    {"-s width,height", "size in pixels, or characters for dumb"},
    {"-t threshold", "the shortest gap the gaps chart shows (10us)"},
    {NULL, NULL},
};

static void
usage(void)
{
	fprintf(stderr, "usage: cutplot [-aS] [-c chart] [-T terminal] [-o file] [-s width,height] "
	                "[-t threshold] [file ...]\n");
	exit(CUT_EXIT_FATAL);
}

/* The row, or NULL. */
static struct row *
row_find(int64_t pid, int64_t tid, int layer)
{
	size_t i = idmap_get2(thread_ids, pid, tid);
	return i == IDMAP_NONE ? NULL : threads[i].rows[layer + 3];
}

/* Rows with bins cost NBINS x NCLASS floats (some 200 KB): past MAX_ROWS of them, the rows of
 * further threads are one row per layer, "other threads", so memory stays bounded however
 * many threads a trace has (cutplot(1) says so). */
#define MAX_ROWS 512
#define OTHER_TID INT64_MIN
static int64_t other_threads;
static size_t nbinned; /* rows whose bins are allocated */

static struct row *row_make(int64_t pid, int64_t tid, int layer);

static struct row *
row_get(int64_t pid, int64_t tid, int layer)
{
	if (layer >= 0 && tid != OTHER_TID) {
		/* A thread keeps the rows it began with; one first seen past the cap goes to
		 * the shared rows (counted once, marked by its row -3). */
		size_t i = idmap_get2(thread_ids, pid, tid);
		bool other = i != IDMAP_NONE && threads[i].rows[0];
		bool has_rows = false;
		for (int l = 0; i != IDMAP_NONE && !other && l <= IDLE; l++)
			has_rows |= threads[i].rows[l + 3] != NULL;
		if (other || (!has_rows && nbinned >= MAX_ROWS)) {
			if (!other) {
				row_make(pid, tid, -3);
				other_threads++;
			}
			return row_make(-1, OTHER_TID, layer);
		}
	}
	return row_make(pid, tid, layer);
}

static struct row *
row_make(int64_t pid, int64_t tid, int layer)
{
	bool isnew;
	size_t i = idmap_put2(thread_ids, pid, tid, &isnew);
	CUT_GROW(threads, i + 1, threadcap);
	struct row **r = &threads[i].rows[layer + 3];
	if (*r)
		return *r;
	CUT_GROW(rows, nrows + 1, rowcap);
	*r = rows[nrows++] = cut_xcalloc(1, sizeof(**rows));
	**r = (struct row){.pid = pid,
	                   .tid = tid,
	                   .layer = layer,
	                   .from = INT64_MAX,
	                   .to = INT64_MIN,
	                   .first = INT64_MAX,
	                   .last = INT64_MIN,
	                   .prev_end = INT64_MIN,
	                   .latest = INT64_MIN};
	return *r;
}

/* Re-bins every row to a range twice as wide, to the left or to the right. */
static void
widen(bool left)
{
	int64_t norigin = left ? origin - NBINS * width : origin;
	for (size_t r = 0; r < nrows; r++) {
		float *t = rows[r]->t, tmp[NCLASS];
		if (!t)
			continue;
		for (int64_t i = left ? NBINS - 1 : 0; left ? i >= 0 : i < NBINS;
		     i += left ? -1 : 1) {
			int64_t j = (origin + i * width - norigin) / (2 * width);
			memcpy(tmp, t + i * NCLASS, sizeof(tmp));
			memset(t + i * NCLASS, 0, sizeof(tmp));
			for (int c = 0; c < NCLASS; c++)
				t[j * NCLASS + c] += tmp[c];
		}
	}
	origin = norigin;
	width *= 2;
}

static void
add_span(struct row *r, int c, int64_t ts, int64_t end)
{
	int64_t stop = end > ts ? end : ts + 1; /* instants count as a nanosecond */
	if (!r->t) {
		r->t = cut_xcalloc((size_t)NBINS * NCLASS, sizeof(float));
		nbinned++;
	}
	if (width == 0) {
		origin = ts;
		width = 1;
	}
	while (ts < origin)
		widen(true);
	while (stop > origin + NBINS * width)
		widen(false);
	r->from = ts < r->from ? ts : r->from;
	r->to = end > r->to ? end : ts > r->to ? ts : r->to;
	for (int64_t i = (ts - origin) / width; i < NBINS && origin + i * width < stop; i++) {
		int64_t lo = origin + i * width, hi = lo + width;
		r->t[i * NCLASS + c] += (float)((stop < hi ? stop : hi) - (ts > lo ? ts : lo));
	}
}

/* Names the classes of the categories and the layers. */
static void
init_classes(void)
{
	for (int c = 0; c < CUT_NCATS; c++)
		classes[c].label = cut_category_name(c);
	for (int l = 0; l < CUT_NLAYERS; l++)
		if (l != CUT_API && l != CUT_META)
			classes[C_LAYER(l)].label = cut_layer_label(l);
}

static int
class_of(const struct cut_event *ev)
{
	if (ev->layer == CUT_GPU && cut_is_collective(ev->name))
		return C_COLL;
	if (ev->layer != CUT_API)
		return C_LAYER(ev->layer);
	int c = cut_category_from_name(cut_event_category(ev));
	return c < 0 ? CUT_CAT_OTHER : c;
}

/* The index in procs of (a, b) (see proc_ids), added as p when new. */
static int64_t
proc_index(int64_t a, int64_t b, struct proc p)
{
	bool isnew;
	size_t i = idmap_put2(proc_ids, a, b, &isnew);
	if (isnew) {
		CUT_GROW(procs, i + 1, proccap);
		procs[i] = p;
	}
	return (int64_t)i;
}

/*
 * The index in procs of an event's process by procs.h's rule (for records without a host,
 * the process of their pid that other records name): its pid on the host known of it when
 * first met, as the timeline writers draw it, else on the one its input's header names when
 * the input starts with one (later headers are other processes' of the same capture, or a
 * merge's inputs). A new input shows as a new reader or a line not after the last one: each
 * event is a line of its own.
 */
static int64_t
proc_of(const struct cut_reader *r, const struct cut_event *ev)
{
	uint64_t line = cut_reader_line(r);
	if (r != input.r || line <= input.line) {
		struct cut_meta m;
		input.host = strtab_intern(hosts, "");
		if (ev->layer == CUT_META && cut_meta_kind(ev) == CUT_META_HEADER) {
			if (cut_meta_read(ev, &m) == CUT_META_HEADER && m.header.host)
				input.host = strtab_intern(hosts, m.header.host);
			cut_meta_release(&m);
		}
		cut_procs_free(input.procs);
		input.procs = cut_procs_new();
		if (input.proc)
			memset(input.proc, 0, input.cap * sizeof(*input.proc));
	}
	input.r = r;
	input.line = line;
	size_t i = cut_procs_of(input.procs, ev);
	CUT_GROW(input.proc, i + 1, input.cap);
	if (!input.proc[i]) {
		const char *h = cut_procs_host(input.procs, i);
		size_t host = h ? strtab_intern(hosts, h) : input.host;
		input.proc[i] = 1 + (size_t)proc_index((int64_t)host, ev->pid,
		                                       (struct proc){.host = host, .pid = ev->pid});
	}
	return (int64_t)input.proc[i] - 1;
}

/* The name of a process (row layer -2) or thread (-1) from its meta record. */
static void
name_row(const struct cut_event *ev)
{
	struct cut_meta m;
	enum cut_meta_kind k = cut_meta_read(ev, &m);
	const char *name =
	    k == CUT_META_PROCESS || k == CUT_META_THREAD ? cut_task_label(&m.task) : NULL;
	if (name) {
		bool proc = k == CUT_META_PROCESS;
		struct row *r = row_get(ev->pid, proc ? 0 : ev->tid, proc ? -2 : -1);
		free(r->comm);
		r->comm = cut_xstrdup(name);
	}
	cut_meta_release(&m);
}

/* An event whose pid is its process's index in procs. */
static void
add_event(const struct cut_event *ev)
{
	struct row *r;
	if (ev->layer == CUT_META) {
		name_row(ev);
		return;
	}
	/* Times past 2^61 ns (73 years) are drawn there, so bin arithmetic cannot overflow. */
	int64_t ts = ev->ts < TMAX ? ev->ts : TMAX, end = cut_event_end(ev);
	end = end < TMAX ? end : TMAX;
	tmin = ts < tmin ? ts : tmin;
	tmax = end > tmax ? end : tmax;
	bool irq = ev->layer == CUT_IRQ;
	if (ev->layer == CUT_GPU) { /* a row per process and stream, as the device ran it */
		int64_t stream = 0;
		cut_args_int(ev->args, "stream", &stream);
		r = row_get(ev->pid, GPU_ROW(idmap_put2(stream_ids, ev->pid, stream, NULL)),
		            CUT_GPU);
		r->stream = (uint64_t)stream;
		add_span(r, class_of(ev), ts, end);
		return;
	}
	/* (interrupts are of the host the record names, else its process's) */
	size_t host = ev->host ? strtab_intern(hosts, ev->host) : procs[ev->pid].host;
	int64_t irqs =
	    irq ? proc_index(-1 - (int64_t)host, 0, (struct proc){.host = host, .pid = -1}) : 0;
	add_span(row_get(irq ? irqs : ev->pid, irq ? 0 : ev->tid, ev->layer), class_of(ev), ts,
	         end);
	if (ev->layer != CUT_API || !(ev->has & CUT_HAS_DUR))
		return;
	int h = ev->dur < 10 ? 0 : (int)(4 * log10((double)ev->dur)) - 4;
	hist[h < NHIST ? h : NHIST - 1][class_of(ev)]++;
	/* Host gaps, by cutgaps' rule: from the end of a thread's top-level calls so far to the
	 * start of its next one (a nested call is covered by its caller). All of them count
	 * as idle; those over the threshold are drawn. */
	r = row_get(ev->pid, ev->tid, IDLE);
	/* Gaps need time to run forwards: a call starting before the thread's latest one
	 * (unsorted input) is left out of them, and of the open-call tracker, which would keep
	 * every call of a trace sorted backwards open. */
	if (ts < r->latest)
		return;
	r->latest = ts;
	/* (its pid tells hosts apart: the tracker needs neither host nor rank) */
	struct cut_event e = *ev;
	e.host = NULL;
	e.has &= ~(unsigned)CUT_HAS_RANK;
	if (cut_calls_within(open_calls, &e, CUT_API))
		return;
	cut_calls_open(open_calls, &e);
	int64_t gap = r->prev_end == INT64_MIN ? 0 : ts - r->prev_end;
	if (gap > 0) {
		r->idle += gap;
		if (gap >= threshold)
			add_span(r, C_GAP + (gap >= 100000) + (gap >= 1000000) + (gap >= 10000000),
			         r->prev_end, ts);
	}
	r->prev_end = end > r->prev_end ? end : r->prev_end;
	r->first = ts < r->first ? ts : r->first;
	r->last = r->prev_end;
}

/* Where a row's process sorts: by pid, those of pid 0, the interrupts and the other
 * threads last. */
static int64_t
pid_order(const struct row *r)
{
	return r->pid < 0 || procs[r->pid].pid <= 0 ? INT64_MAX : procs[r->pid].pid;
}

static int
row_order(const void *a, const void *b)
{
	const struct row *x = *(struct row *const *)a, *y = *(struct row *const *)b;
	int64_t px = pid_order(x), py = pid_order(y);
	size_t hx = x->pid < 0 ? 0 : procs[x->pid].host, hy = y->pid < 0 ? 0 : procs[y->pid].host;
	if (px != py)
		return px < py ? -1 : 1;
	if (hx != hy)
		return hx < hy ? -1 : 1;
	if (x->pid != y->pid) /* (a host's pid 0 and its interrupts) */
		return x->pid < y->pid ? -1 : 1;
	if (x->layer == CUT_GPU && y->layer == CUT_GPU && x->tid <= -16 && y->tid <= -16 &&
	    x->stream != y->stream) /* streams by handle, the highest first */
		return x->stream > y->stream ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->layer - y->layer;
}

/* A label gnuplot can quote and print as is: printable ASCII without quotes, backslashes or
 * the percent signs of tic label formats. */
static const char *
clean(const char *s, char *buf, size_t n)
{
	size_t i = 0;
	for (; s[i] && i + 1 < n; i++)
		buf[i] = s[i] >= ' ' && s[i] < 127 && s[i] != '"' && s[i] != '\\' && s[i] != '%'
		             ? s[i]
		             : '?';
	buf[i] = 0;
	return buf;
}

/* The unit that keeps the time axis readable. */
static double
time_unit(int64_t span, const char **name)
{
	static const struct {
		double ns;
		const char *name;
	} u[] = {{1, "ns"}, {1e3, "us"}, {1e6, "ms"}, {1e9, "s"}};
	int i = 3;
	while (i > 0 && (double)span < 10 * u[i].ns)
		i--;
	*name = u[i].name;
	return u[i].ns;
}

/* The lines of a chart's title: what and the input, the note when there is one, and a word
 * on the events the capture lost when it lost some, as every chart misses them. */
static int
title_lines(const char *note)
{
	return 1 + (note != NULL) + (st->lost > 0);
}

/* Starts a chart: the terminal (unless one multiplot holds them all), title and frame. */
static void
chart(FILE *sc, const char *what, const char *note, int height, const double frame[4])
{
	bool dumb = strcmp(term, "dumb") == 0;
	int w = wid ? wid : dumb ? 120 : 1200, h = height;
	if (dumb)
		fprintf(sc, "set terminal dumb size %d,%d%s\n", w, h, ansi ? " ansi256" : "");
	else if (!multiplot && strcmp(term, "png") == 0)
		fprintf(sc,
		        "if (strstrt(GPVAL_TERMINALS, \"pngcairo\") > 0) {\n"
		        "  set terminal pngcairo size %d,%d font \",10\"\n} else {\n"
		        "  set terminal png size %d,%d\n}\n",
		        w, h, w, h);
	else if (!multiplot)
		fprintf(sc, "set terminal svg size %d,%d font \",10\" background rgb \"white\"\n",
		        w, h);
	fprintf(sc, "set termoption noenhanced\nreset\nset title \"%s: %s", what, title);
	if (note)
		fprintf(sc, "\\n%s", note);
	if (st->lost)
		fprintf(sc, "\\nthe capture lost %lld events: they are missing here",
		        (long long)st->lost);
	fprintf(sc, "\"\n");
	if (frame && !dumb)
		fprintf(sc, "set origin %g,%g\nset size %g,%g\n", frame[0], frame[1], frame[2],
		        frame[3]);
}

static void
no_data(FILE *sc, const char *why)
{
	fprintf(sc,
	        "set label 1 \"%s\" at graph 0.5,0.5 center\nunset key\n"
	        "plot [0:1][0:1] NaN notitle\n",
	        why);
}

/* Whether a row is drawn: by default the off-CPU row of a thread only when the thread has
 * another row (driver calls, ioctls, driver functions or GPU work), so that the many threads
 * of a runtime that only sleep do not crowd out the few that call the driver. */
static bool
drawn(const struct row *r)
{
	static const int active[] = {CUT_NVTX,  CUT_RUNTIME, CUT_API,
	                             CUT_IOCTL, CUT_KERNEL,  CUT_GPU};
	if (!r->t)
		return false;
	if (every_thread || r->layer != CUT_SCHED)
		return true;
	for (size_t i = 0; i < sizeof(active) / sizeof(active[0]); i++) {
		const struct row *o = row_find(r->pid, r->tid, active[i]);
		if (o && o->t)
			return true;
	}
	return false;
}

/* The threads none of whose rows are drawn. */
static size_t
hidden_threads(void)
{
	size_t n = 0;
	for (size_t i = 0; i < nrows; i++)
		n += rows[i]->t && rows[i]->layer == CUT_SCHED && !drawn(rows[i]);
	return n;
}

/* The time the drawn rows span, so that hidden threads do not stretch the time axis. */
static void
drawn_span(void)
{
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	for (size_t i = 0; i < nrows; i++)
		if (rows[i]->layer != IDLE && drawn(rows[i])) {
			lo = rows[i]->from < lo ? rows[i]->from : lo;
			hi = rows[i]->to > hi ? rows[i]->to : hi;
		}
	if (lo <= hi) {
		tmin = lo;
		tmax = hi;
	}
}

static size_t
select_rows(struct row **sel, bool gaps)
{
	size_t n = 0;
	for (size_t i = 0; i < nrows; i++)
		if (drawn(rows[i]) && (rows[i]->layer == IDLE) == gaps)
			sel[n++] = rows[i];
	qsort(sel, n, sizeof(*sel), row_order);
	return n;
}

/* A row's tic label (a gnuplot format: a percent sign is written twice). */
static const char *
row_label(const struct row *r, char *label, size_t n)
{
	if (r->tid == OTHER_TID) {
		snprintf(label, n, "%lld other threads %s", (long long)other_threads,
		         cut_layer_name(r->layer));
		return label;
	}
	struct row *t = row_find(r->pid, r->tid, -1), *p = row_find(r->pid, 0, -2);
	int64_t pid = procs[r->pid].pid;
	const char *who = t && t->comm ? t->comm : r->tid == pid && p && p->comm ? p->comm : "tid";
	char c[64], on[80] = "", h[64];
	clean(who, c, sizeof(c));
	if (strtab_len(hosts) > 1) /* " on host" after the id, when hosts may share them */
		snprintf(on, sizeof(on), " on %s",
		         clean(strtab_key(hosts, procs[r->pid].host), h, sizeof(h)));
	if (r->layer == CUT_IRQ)
		snprintf(label, n, "interrupts%s", on);
	else if (r->layer == CUT_GPU && r->tid <= -16)
		snprintf(label, n, "%s %lld%s GPU stream 0x%llx",
		         p && p->comm ? clean(p->comm, c, sizeof(c)) : "pid", (long long)pid, on,
		         (unsigned long long)r->stream);
	else if (r->layer == IDLE)
		snprintf(label, n, "%s %lld%s (%.0f%%%% idle)", c, (long long)r->tid, on,
		         r->last > r->first ? 100.0 * (double)r->idle / (double)(r->last - r->first)
		                            : 0.0);
	else
		snprintf(label, n, "%s %lld%s %s", c, (long long)r->tid, on,
		         cut_layer_name(r->layer));
	return label;
}

/* The longest row label of the timeline and gap charts. */
static size_t
label_width(void)
{
	char label[160];
	size_t w = 0;
	for (size_t i = 0; i < nrows; i++)
		if (drawn(rows[i]) && strlen(row_label(rows[i], label, sizeof(label))) > w)
			w = strlen(label);
	return w;
}

/* The height of a chart: -s's, else what the chart needs (the panels of one image are
 * sized by their image). */
static int
height_or(int need)
{
	return hei && !multiplot ? hei : need;
}

/* The height of a text chart that gives each of its n rows a line: -s's, unless that is too
 * few lines, which would put rows on the borders or on each other. */
static int
text_height(int need, size_t n, const char *what)
{
	if (hei && hei < need)
		warnx("-s: %d lines are too few for the %zu rows of the %s chart; drawing %d", hei,
		      n, what, need);
	return hei > need ? hei : need;
}

/* An image's timeline: a title, an axis and a key around 24 pixels a row. */
static int
timeline_height(size_t n)
{
	return 140 + 24 * (int)(n < 5 ? 5 : n);
}

/* One row per thread and layer (or per thread's idle gaps), each column of time coloured by
 * the class that takes most of it: character points on the text terminal, boxes elsewhere. */
static void
plot_timeline(FILE *sc, bool gaps, const double frame[4])
{
	bool dumb = strcmp(term, "dumb") == 0, used[NCLASS] = {false};
	struct row **sel = cut_xcalloc(nrows + 1, sizeof(*sel));
	size_t n = select_rows(sel, gaps), lw = 0;
	char label[160], *tics, note[128], *nt = NULL;
	const char *what = gaps ? "host idle gaps between driver calls" : "timeline";
	size_t hidden = gaps ? 0 : hidden_threads();
	if (hidden)
		snprintf(nt = note, sizeof(note),
		         "%zu thread%s without driver calls not drawn (-a draws %s)", hidden,
		         hidden == 1 ? "" : "s", hidden == 1 ? "it" : "them");
	if (n == 0) {
		chart(sc, what, nt, height_or(dumb ? 12 : timeline_height(n)), frame);
		no_data(sc, gaps ? "no gaps over the threshold" : "no events");
		free(sel);
		return;
	}
	size_t ticslen;
	FILE *ts = open_memstream(&tics, &ticslen);
	if (!ts)
		cut_out_of_memory();
	fprintf(ts, "set ytics nomirror (");
	for (size_t k = 0; k < n; k++) {
		fprintf(ts, "%s\"%s\" %zu", k ? ", " : "", row_label(sel[k], label, sizeof(label)),
		        n - k);
		lw = strlen(label) > lw ? strlen(label) : lw;
	}
	fprintf(ts, ")\n");
	fclose(ts);
	/* Panels of one image share their left margin, so their time axes line up. */
	if (multiplot)
		lw = label_width();

	const char *uname;
	int64_t span = tmax > tmin ? tmax - tmin : 1;
	double unit = time_unit(span, &uname);
	int w = wid ? wid : dumb ? 120 : 1200;
	/* Columns: the characters between the borders (margins lw + 2 and 2), or about a
	 * pixel each. */
	int cols = dumb ? w - (int)lw - 6 : (int)((frame ? frame[2] : 1) * w) - 7 * (int)lw - 140;
	int64_t lo = (tmin - origin) / width, hi = (tmax - 1 - origin) / width + 1;
	cols = cols < 10 ? 10 : cols > hi - lo ? (int)(hi - lo) : cols;
	double *sum = cut_xcalloc((size_t)NCLASS * (size_t)cols, sizeof(double)),
	       x = (double)span / cols / unit;
	int *nbin = cut_xcalloc((size_t)cols, sizeof(int));
	char *data[NCLASS];
	size_t dlen[NCLASS];
	FILE *ds[NCLASS];
	for (int c = 0; c < NCLASS; c++)
		if (!(ds[c] = open_memstream(&data[c], &dlen[c])))
			cut_out_of_memory();
	for (size_t k = 0; k < n; k++) {
		memset(sum, 0, sizeof(double) * NCLASS * (size_t)cols);
		memset(nbin, 0, sizeof(int) * (size_t)cols);
		for (int64_t i = lo; i < hi; i++) {
			double mid =
			    (double)(origin + i * width) + (double)width / 2 - (double)tmin;
			int64_t col = (int64_t)(mid * cols / (double)span);
			col = col < 0 ? 0 : col >= cols ? cols - 1 : col;
			nbin[col]++;
			for (int c = 0; c < NCLASS; c++)
				sum[col * NCLASS + c] += sel[k]->t[i * NCLASS + c];
		}
		/* Runs of columns of one class and busy quarter become one box, as high as the
		 * share of the column the row was busy (or idle, for gaps). */
		for (int col = 0, start = 0, prev = -1; col <= cols; col++) {
			int best = -1, key = -1;
			double busy = 0;
			for (int c = 0; col < cols && c < NCLASS; c++) {
				busy += sum[col * NCLASS + c];
				if (sum[col * NCLASS + c] > 0 &&
				    (best < 0 || sum[col * NCLASS + c] > sum[col * NCLASS + best]))
					best = c;
			}
			if (best >= 0) {
				double share = busy / ((double)nbin[col] * (double)width);
				key = 4 * best + (int)ceil(4 * fmin(share, 1)) - 1;
				used[best] = true;
			}
			if (dumb && best >= 0) /* on the character cells, borders excluded */
				fprintf(ds[best], "%g %zu\n", (col + 1.0) * cols / (cols + 1) * x,
				        n - k);
			if (!dumb && key != prev && prev >= 0)
				fprintf(ds[prev / 4], "%g %zu %g %g\n", (start + col) / 2.0 * x,
				        n - k, (col - start) / 2.0 * x, 0.1 * (prev % 4 + 1));
			if (key != prev)
				start = col;
			prev = key;
		}
	}
	free(sum);
	free(nbin);
	free(sel);
	int nused = 0, keylen = 0;
	for (int c = 0; c < NCLASS; c++)
		if (used[c]) {
			nused++;
			keylen = (int)strlen(classes[c].label) > keylen
			             ? (int)strlen(classes[c].label)
			             : keylen;
		}
	/* gnuplot balances a horizontal key over as few lines as fit, as many entries a line
	 * as the plot's width holds (on text, the longest title and 9 characters each). */
	int perline = dumb ? (w - (int)lw - 4) / (keylen + 9)
	                   : (int)((frame ? frame[2] : 1) * w - 160) / ((keylen + 6) * 8);
	int keylines = (nused - 1) / (perline > 0 ? perline : 1) + 1;
	/* A text chart: a line per row between the borders, under the form feed line and the
	 * title's lines, over the tic labels, the axis label and the key's lines. Fewer lines
	 * would put rows on the borders or on each other. */
	int tm = 1 + title_lines(nt), bm = 3 + keylines;
	chart(sc, what, nt,
	      dumb ? text_height((int)n + 2 + tm + bm, n, gaps ? "gaps" : "timeline")
	           : height_or(timeline_height(n)),
	      frame);
	fputs(tics, sc);
	free(tics);
	for (int c = 0; c < NCLASS; c++) {
		fclose(ds[c]);
		if (used[c])
			fprintf(sc, "$%c%d << EOD\n%sEOD\n", gaps ? 'g' : 't', c, data[c]);
		free(data[c]);
	}
	fprintf(sc,
	        "set xlabel \"time since the first event (%s)\"\nset xrange [0:%g]\n"
	        "set key outside bottom center horizontal\n",
	        uname, (double)span / unit);
	/* On the text terminal a row is a line, the borders at 0 and n + 1: no tic marks or
	 * grid over the data. */
	if (dumb)
		fprintf(sc,
		        "set yrange [0:%zu]\nset lmargin %zu\nset rmargin 2\nset tmargin %d\n"
		        "set bmargin %d\nset tics scale 0\n",
		        n + 1, lw + 2, tm, bm);
	else
		fprintf(sc, "set yrange [0.5:%zu.5]\nset grid xtics\nset bmargin %.1f\n", n,
		        4 + 1.2 * keylines);
	if (multiplot)
		fprintf(sc, "set lmargin %zu\n", lw + 1);
	const char *sep = "plot ";
	for (int c = 0; c < NCLASS; c++, sep = used[c - 1] ? ", \\\n  " : sep) {
		if (!used[c])
			continue;
		fprintf(sc, "%s$%c%d ", sep, gaps ? 'g' : 't', c);
		if (dumb)
			fprintf(sc, "using 1:2 with points pt \"%s\"", classes[c].ch);
		else
			fprintf(sc, "using 1:2:3:4 with boxxyerror fs solid 1.0 noborder");
		fprintf(sc, " lc rgb \"%s\" title \"%s\"", classes[c].rgb, classes[c].label);
	}
	fprintf(sc, "\n");
}

/* Driver API time per category, from the numbers cutstat prints: a bar a category, the
 * longest on top, each labelled on its line with its share of API time and its calls, so
 * that the labels of a dozen categories do not run into each other. */
static void
plot_categories(FILE *sc, const double frame[4])
{
	const char *uname;
	int order[CUT_NCATS], n = 0;
	int64_t top = 0;
	for (int c = 0; c < CUT_NCATS; c++) {
		if (!st->cat_calls[c])
			continue;
		top = st->cat_total[c] > top ? st->cat_total[c] : top;
		int k = n++;
		for (; k > 0 && st->cat_total[order[k - 1]] < st->cat_total[c]; k--)
			order[k] = order[k - 1];
		order[k] = c;
	}
	double unit = time_unit(top, &uname);
	bool dumb = strcmp(term, "dumb") == 0;
	chart(sc, "driver API time by category", NULL,
	      dumb ? text_height(n + 6 + title_lines(NULL), (size_t)n, "categories")
	           : height_or(480),
	      frame);
	if (!st->api_total) {
		no_data(sc, "no timed driver API calls");
		return;
	}
	fprintf(sc, "$cat << EOD\n");
	for (int k = 0; k < n; k++) {
		int c = order[k];
		double share = 100.0 * (double)st->cat_total[c] / (double)st->api_total;
		char pct[16];
		/* A share that rounds to 0.0% is not none. */
		if (st->cat_total[c] && share < 0.05)
			snprintf(pct, sizeof(pct), "<0.1%%");
		else
			snprintf(pct, sizeof(pct), "%.1f%%", share);
		fprintf(sc, "\"%s\" %g %d %ld \"%s, %lld call%s\"\n", cut_category_name(c),
		        (double)st->cat_total[c] / unit, n - 1 - k,
		        strtol(classes[c].rgb + 1, NULL, 16), pct, (long long)st->cat_calls[c],
		        st->cat_calls[c] == 1 ? "" : "s");
	}
	fprintf(sc,
	        "EOD\nset style fill solid 1.0 border -1\nunset key\n"
	        "set xlabel \"time inside the calls (%s)\"\nset xrange [0:*]\n"
	        "set offsets 0,graph 0.35,0,0\nset ytics nomirror scale 0\nset xtics nomirror\n",
	        uname);
	/* On the text terminal a bar is a line of characters, one line a category (as on the
	 * timeline: the borders at -1 and n). */
	if (dumb)
		fprintf(sc, "set yrange [-1:%d]\nset tmargin %d\nset bmargin 3\nset tics scale 0\n",
		        n, 1 + title_lines(NULL));
	else
		fprintf(sc, "set yrange [-0.6:%g]\nset grid xtics\n", n - 0.4);
	fprintf(sc,
	        "plot $cat using ($2/2):3:($2/2):(%s):4:ytic(1) with boxxyerror lc rgb variable, "
	        "\\\n  $cat using 2:3:5 with labels left offset %d,0\n",
	        dumb ? "0" : "0.35", dumb ? 2 : 1);
}

/* GPU utilisation over time, per process: the share of each time column its GPU work took
 * (the rows keep time per bin, not intervals: work on several streams at once adds up, capped
 * at 100 %; cutstat gives the exact union). */
static void
plot_gpu(FILE *sc, const double frame[4])
{
	bool dumb = strcmp(term, "dumb") == 0;
	chart(sc, "GPU utilisation (layer gpu)", NULL, height_or(dumb ? 24 : 480), frame);
	/* A line per process with GPU work, each GPU row adding its bins to its process's
	 * columns: linear in the rows, however many processes. */
	size_t *line_of = cut_xcalloc(nrows + 1, sizeof(*line_of)), np = 0;
	int64_t *pids = cut_xcalloc(nrows + 1, sizeof(*pids));
	struct cut_idmap *lines = idmap_new();
	for (size_t i = 0; i < nrows; i++) {
		const struct row *r = rows[i];
		bool isnew;
		if (r->layer != CUT_GPU || !r->t)
			continue;
		line_of[i] = idmap_put(lines, r->pid, &isnew);
		if (isnew)
			pids[np++] = r->pid;
	}
	if (!np) {
		no_data(sc, "no GPU work in the trace (the gpu layer was off)");
		free(line_of);
		free(pids);
		idmap_free(lines);
		return;
	}
	const char *uname;
	int64_t span = tmax > tmin ? tmax - tmin : 1;
	double unit = time_unit(span, &uname);
	int64_t lo = (tmin - origin) / width, hi = (tmax - 1 - origin) / width + 1;
	int cols = dumb ? (wid ? wid : 120) - 12 : 600;
	cols = cols > hi - lo ? (int)(hi - lo) : cols < 10 ? 10 : cols;
	double per = (double)(hi - lo) / cols; /* bins per column */
	double *busy = cut_xcalloc(np * (size_t)cols, sizeof(*busy));
	for (size_t i = 0; i < nrows; i++) {
		const struct row *r = rows[i];
		if (r->layer != CUT_GPU || !r->t)
			continue;
		for (int col = 0; col < cols; col++) {
			int64_t b0 = lo + (int64_t)(col * per),
			        b1 = lo + (int64_t)((col + 1) * per);
			if (b1 <= b0)
				b1 = b0 + 1;
			for (int64_t b = b0; b < b1 && b < NBINS; b++)
				for (int c = 0; c < NCLASS; c++)
					busy[line_of[i] * (size_t)cols + (size_t)col] +=
					    r->t[b * NCLASS + c];
		}
	}
	fprintf(sc, "$gpu << EOD\n");
	for (size_t k = 0; k < np; k++) {
		for (int col = 0; col < cols; col++) {
			int64_t b0 = lo + (int64_t)(col * per),
			        b1 = lo + (int64_t)((col + 1) * per);
			if (b1 <= b0)
				b1 = b0 + 1;
			double u = 100 * busy[k * (size_t)cols + (size_t)col] /
			           ((double)(b1 - b0) * (double)width);
			fprintf(sc, "%g %g\n", (double)(origin + b0 * width - tmin) / unit,
			        u > 100 ? 100 : u);
		}
		fprintf(sc, "\n\n");
	}
	fprintf(sc,
	        "EOD\nset xlabel \"time (%s)\"\nset ylabel \"%% busy\"\nset yrange [0:105]\n"
	        "set key outside right top\nplot ",
	        uname);
	for (size_t k = 0; k < np; k++) {
		fprintf(sc, "%s$gpu index %zu using 1:2 with %s title ", k ? ", " : "", k,
		        dumb ? "lines" : "steps");
		if (pids[k] < 0) { /* the GPU rows past MAX_ROWS, summed */
			fprintf(sc, "\"other threads\"");
			continue;
		}
		const struct row *p = row_find(pids[k], 0, -2);
		char c[64], h[64];
		fprintf(sc, "\"%s %lld%s%s\"", p && p->comm ? clean(p->comm, c, sizeof(c)) : "pid",
		        (long long)procs[pids[k]].pid, strtab_len(hosts) > 1 ? " on " : "",
		        strtab_len(hosts) > 1
		            ? clean(strtab_key(hosts, procs[pids[k]].host), h, sizeof(h))
		            : "");
	}
	fprintf(sc, "\n");
	free(busy);
	free(line_of);
	free(pids);
	idmap_free(lines);
}

/* How long driver API calls take: a histogram on a log time scale, stacked by category. The
 * counts are on a log scale too, so that the few slow calls that take the time show next to
 * thousands of fast ones; a bar is as high as its calls, and split between its categories in
 * proportion to their calls (a stack of log-scaled parts would swell the lowest). */
static void
plot_durations(FILE *sc, const double frame[4])
{
	int lo = NHIST, hi = -1;
	bool used[CUT_NCATS] = {false};
	for (int h = 0; h < NHIST; h++)
		for (int c = 0; c < CUT_NCATS; c++)
			if (hist[h][c]) {
				lo = h < lo ? h : lo;
				hi = h;
				used[c] = true;
			}
	chart(sc, "driver API call durations", NULL, height_or(strcmp(term, "dumb") ? 480 : 24),
	      frame);
	if (hi < 0) {
		no_data(sc, "no timed driver API calls");
		return;
	}
	for (int c = 0; c < CUT_NCATS; c++) {
		if (!used[c])
			continue;
		fprintf(sc, "$d%d << EOD\n", c);
		for (int h = lo; h <= hi; h++) {
			int64_t cum = 0, total = 0;
			for (int j = 0; j < CUT_NCATS; j++) {
				cum += j <= c ? hist[h][j] : 0;
				total += hist[h][j];
			}
			if (hist[h][c])
				fprintf(sc, "%g %.4g\n", 1 + (h + 0.5) / 4,
				        DFLOOR * pow((double)total / DFLOOR,
				                     (double)cum / (double)total));
		}
		fprintf(sc, "EOD\n");
	}
	fprintf(sc,
	        "set style fill solid 1.0 border -1\nset boxwidth 0.22\nset xtics (\"10 ns\" 1, "
	        "\"100 ns\" 2, \"1 us\" 3, \"10 us\" 4, \"100 us\" 5, \"1 ms\" 6, \"10 ms\" 7, "
	        "\"100 ms\" 8, \"1 s\" 9, \"10 s\" 10, \"100 s\" 11)\nset xrange [%g:%g]\n"
	        "set logscale y\nset yrange [%g:*]\nset xlabel \"duration of the call\"\n"
	        "set ylabel \"calls (log scale)\"\n%sset key outside right top vertical\n",
	        1 + lo / 4.0 - 0.1, 1 + (hi + 1) / 4.0 + 0.1, DFLOOR,
	        strcmp(term, "dumb") ? "set grid ytics\n" : "set tics scale 0\n");
	/* Tallest stack first, so each category's box shows above the ones below it. */
	const char *sep = "plot ";
	for (int c = CUT_NCATS - 1; c >= 0; c--) {
		if (!used[c])
			continue;
		fprintf(sc, "%s$d%d using 1:2 with boxes lc rgb \"%s\" title \"%s\"", sep, c,
		        classes[c].rgb, classes[c].label);
		sep = ", \\\n  ";
	}
	fprintf(sc, "\n");
}

/* Feeds the script to gnuplot ($GNUPLOT, else gnuplot on PATH) drawing to fd out. */
static void
run_gnuplot(const char *script, size_t len, int out)
{
	const char *prog = getenv("GNUPLOT");
	int p[2], status;
	if (!prog || !*prog)
		prog = "gnuplot";
	if (pipe(p) < 0)
		err(CUT_EXIT_FATAL, "pipe");
	pid_t pid = fork();
	if (pid < 0)
		err(CUT_EXIT_FATAL, "fork");
	if (pid == 0) {
		if (dup2(p[0], 0) < 0 || dup2(out, 1) < 0)
			_exit(126);
		close(p[0]);
		close(p[1]);
		execlp(prog, prog, (char *)NULL);
		_exit(127);
	}
	close(p[0]);
	signal(SIGPIPE, SIG_IGN);
	for (size_t off = 0; off < len;) {
		ssize_t n = write(p[1], script + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; /* gnuplot is gone: its status says why */
		off += (size_t)n;
	}
	close(p[1]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			err(CUT_EXIT_FATAL, "waitpid");
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
		errx(CUT_EXIT_FATAL,
		     "cannot run %s: install gnuplot (Debian: apt-get install "
		     "gnuplot-nox) or name it in GNUPLOT",
		     cut_esc(prog));
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		errx(CUT_EXIT_FATAL,
		     "%s failed on the chart script (see above; cutplot -S shows it)",
		     cut_esc(prog));
}

/* A duration option ("10ms", "2s", "500us", "1000" nanoseconds), or exit. */
static int64_t
parse_dur(const char *s)
{
	int64_t v = cut_parse_duration(s);
	if (v < 0)
		errx(CUT_EXIT_FATAL, "-t: not a duration such as 500us, 10ms or 2s: %s", s);
	return v;
}

static void
read_event(struct cut_reader *r, struct cut_event *ev, void *arg)
{
	(void)arg;
	stats_add(st, ev);
	/* From here on its pid is its process's index in procs: two hosts' pids may be equal. */
	ev->pid = proc_of(r, ev);
	add_event(ev);
}

int
main(int argc, char *argv[])
{
	static const char *const charts[] = {"timeline", "categories", "durations",
	                                     "gaps",     "all",        "gpu"};
	const char *chartname = "timeline", *outfile = NULL, *ext;
	bool script_only = false;
	int ch, which = -1, status = CUT_EXIT_OK;
	char tbuf[256], *e;

	cut_std_args_help(argc, argv, usage, opts);

	while ((ch = getopt(argc, argv, "aSc:T:o:s:t:")) != -1) {
		switch (ch) {
		case 'a': every_thread = true; break;
		case 'S': script_only = true; break;
		case 'c': chartname = optarg; break;
		case 'T': term = optarg; break;
		case 'o': outfile = optarg; break;
		case 's':
			wid = (int)strtol(optarg, &e, 10);
			if (*e == ',' || *e == 'x')
				hei = (int)strtol(e + 1, &e, 10);
			if (*e || wid < 20 || hei < 0 || wid > 20000 || hei > 20000)
				errx(CUT_EXIT_FATAL, "-s: not a size such as 1200,800 or 100: %s",
				     optarg);
			break;
		case 't': threshold = parse_dur(optarg); break;
		default: usage();
		}
	}
	argc -= optind;
	argv += optind;
	cut_check_inputs(argc, argv, CUT_INPUTS_DISTINCT);
	for (int i = 0; i < 6; i++)
		if (strcmp(chartname, charts[i]) == 0)
			which = i;
	if (which < 0)
		errx(CUT_EXIT_FATAL,
		     "-c: no chart %s (timeline, categories, durations, gaps, gpu, all)",
		     chartname);
	if (!term)
		term = outfile && (ext = strrchr(outfile, '.')) &&
		               (strcmp(ext, ".png") == 0 || strcmp(ext, ".svg") == 0)
		           ? ext + 1
		       : isatty(1) && !outfile ? "dumb"
		                               : "png";
	if (strcmp(term, "png") && strcmp(term, "svg") && strcmp(term, "dumb"))
		errx(CUT_EXIT_FATAL, "-T: no terminal %s (png, svg, dumb)", term);
	if (!script_only && !outfile && strcmp(term, "dumb") && isatty(1))
		errx(CUT_EXIT_FATAL, "not writing %s to a terminal: use -o file or redirect", term);
	ansi = !script_only && !outfile && isatty(1);
	if (!wid && ansi) {
		struct winsize ws;
		if (ioctl(1, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40)
			wid = ws.ws_col;
	}
	if (argc)
		title = clean(argv[0], tbuf, sizeof(tbuf));

	init_classes();
	st = stats_new(0);
	thread_ids = idmap_new();
	proc_ids = idmap_new();
	stream_ids = idmap_new();
	hosts = strtab_new();
	open_calls = cut_calls_new(1u << CUT_API);
	status = cut_read_all(argc, argv, read_event, NULL);
	cut_procs_free(input.procs);
	free(input.proc);
	stats_finish(st);
	drawn_span();

	char *script;
	size_t len;
	FILE *sc = open_memstream(&script, &len);
	if (!sc)
		cut_out_of_memory();
	if (which == 4 && strcmp(term, "dumb")) {
		/* One image: the timeline and the gaps over the whole width, then two charts. */
		struct row **sel = cut_xcalloc(nrows + 1, sizeof(*sel));
		double th = timeline_height(select_rows(sel, false)),
		       gh = 40 + timeline_height(select_rows(sel, true)), bh = 460,
		       h = th + gh + bh;
		free(sel);
		int ih = hei ? hei : (int)h;
		chart(sc, "overview", NULL, ih, NULL);
		fprintf(sc, "set multiplot\n");
		multiplot = true;
		plot_timeline(sc, false, (double[]){0, (gh + bh) / h, 1, th / h});
		plot_timeline(sc, true, (double[]){0, bh / h, 1, gh / h});
		plot_categories(sc, (double[]){0, 0, 0.5, bh / h});
		plot_durations(sc, (double[]){0.5, 0, 0.5, bh / h});
		fprintf(sc, "unset multiplot\n");
	} else {
		if (which == 0 || which == 4)
			plot_timeline(sc, false, NULL);
		if (which == 1 || which == 4)
			plot_categories(sc, NULL);
		if (which == 2 || which == 4)
			plot_durations(sc, NULL);
		if (which == 3 || which == 4)
			plot_timeline(sc, true, NULL);
		if (which == 5 || (which == 4 && strcmp(term, "dumb") == 0))
			plot_gpu(sc, NULL);
	}
	if (fclose(sc))
		cut_out_of_memory();
	if (script_only) {
		fwrite(script, 1, len, stdout);
	} else {
		/* gnuplot draws to its standard output: the terminal or pipe, or with -o a fresh
		 * file beside the name, renamed to it once gnuplot has succeeded (never through a
		 * link, 0644 whatever the umask; removed when it fails or a signal ends us). */
		FILE *f = NULL;
		fflush(stdout);
		if (outfile && !(f = outfile_open(outfile)) && errno == ELOOP)
			errx(CUT_EXIT_FATAL, "%s: a symbolic link: not followed", cut_esc(outfile));
		if (outfile && !f)
			err(CUT_EXIT_FATAL, "%s", cut_esc(outfile));
		run_gnuplot(script, len, f ? fileno(f) : 1);
		if (f && outfile_commit(f))
			err(CUT_EXIT_FATAL, "write error on %s", cut_esc(outfile));
	}
	free(script);
	stats_free(st);
	return cut_finish_output(status);
}
