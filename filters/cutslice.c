/* cutslice: the part of a trace inside a time window, or inside instances of an NVTX range, as
 * a trace every tool reads: what starts in it, the GPU work its calls submitted, the records
 * that name its processes, threads, devices and handles, and a slice record saying what. */
#include <err.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "cut.h"
#include "event.h"
#include "heap.h"
#include "idmap.h"
#include "meta.h"
#include "parse.h"
#include "reader.h"
#include "sort.h"
#include "procs.h"
#include "strtab.h"
#include "text.h"
#include "units.h"

static const struct cut_opt_help opts[] = {
    {"-t from..to", "keep what starts in this window after the first event (ns, us, ms, s)"},
    {"-r range", "keep what starts inside instances of this NVTX range, per process"},
    {"-n first..last", "with -r, only these instances, counted from 1 in each process"},
    {NULL, NULL},
};

static void
usage(void)
{
	fprintf(stderr, "usage: cutslice [-t from..to] [-r range [-n first..last]] [file ...]\n");
	exit(CUT_EXIT_FATAL);
}

/* An event copied out of the reader, its strings in s. */
struct held {
	struct cut_event ev;
	struct cut_buf s;
};

struct span {
	int64_t from, to;
};

/* Spans [from, to), sorted and disjoint: the union of selected instances' windows. */
struct spans {
	struct span *v;
	size_t n, cap;
};

/* A record naming something (N_*), written before the first kept event that needs it: its
 * canonical line in the file of names, at off. */
struct named {
	uint64_t off;
	uint32_t len;
	bool present; /* false: a place kept for a thread's record to come */
	bool written;
};

/* A handle a kept event needed before any record named it, until the event's end. */
struct wanted {
	struct cut_heap_key key; /* ts: the end */
	size_t proc;
	int64_t h;
};

enum { N_PROCESS, N_THREAD, N_DEVICE, N_SYMBOL, N_KINDS };

struct owned {
	int kind;
	size_t i;
};

/* A process: a pid on a host. */
struct proc {
	int64_t pid;
	int64_t ninst; /* instances of the range met */
	struct spans win;
	struct owned *own; /* the records that name it as a whole (process, devices, streams) */
	size_t nown, capown;
	bool dirty;  /* one of them not written since it last changed */
	bool active; /* an event of it was kept */
};

/* A record on its way through the queue, where it waits until what decides it is known. */
enum what { EVENT, LOST, NAMES, PASS, TRAILER };
struct slot {
	struct held h;
	enum what what;
	int64_t key; /* the time that decides it: its ts; GPU work's call's (args.submit) */
	size_t proc;
	bool instance; /* a selected instance of the range */
};

struct instance {
	size_t proc;
	int64_t n, from, to;
};

#define MAX_LISTED 10000             /* instances the slice record lists */
#define MAX_QUEUED ((size_t)1 << 20) /* records waiting, and their bytes below */
#define MAX_QUEUED_BYTES ((size_t)256 << 20)

static struct {
	bool has_t, from_open, to_open;
	int64_t from, to, first, last;
	const char *topt, *range, *nopt;
	int nfiles;
	enum { UNDECIDED, STREAM, SORT } mode;
	struct cut_sorter *sort;
	bool origin_known, met;
	int64_t origin, now; /* now: the latest ts read; no range to come starts before it */
	uint64_t unsorted;
	struct cut_procs *labels; /* the processes by procs.h's rule; procs below by its index */
	struct proc *procs;
	size_t nprocs, capprocs;
	struct spans all; /* every selected window: for events of no process */
	struct instance *inst;
	size_t ninst, capinst;
	uint64_t nselected;
	struct cut_idmap *names[N_KINDS];
	struct named *named[N_KINDS];
	size_t capnamed[N_KINDS];
	int namesfd; /* the file of names, unlinked: they can be most of a trace */
	uint64_t namesend;
	struct cut_buf name;
	struct cut_parser *parser;
	struct cut_idmap *wanted; /* (process, handle) -> index in until */
	int64_t *until;
	size_t capuntil;
	struct cut_heap wants;
	struct slot *q;
	size_t qcap, qbytes;
	uint64_t qhead, qtail;
	struct cut_buf out, trail; /* trail: trailers held back so that one stays last */
	int64_t last_out, trail_ts;
	uint64_t kept, dropped, names_kept, names_dropped, lost_kept, lost_dropped;
} g;

/* ---- options ---- */

/* Splits "a..b" into a and b (each NUL-terminated, at most n bytes). */
static bool
split_dots(const char *s, char *a, char *b, size_t n)
{
	const char *dots = strstr(s, "..");
	if (!dots || (size_t)(dots - s) >= n || strlen(dots + 2) >= n)
		return false;
	memcpy(a, s, (size_t)(dots - s));
	a[dots - s] = '\0';
	strcpy(b, dots + 2);
	return true;
}

static void
parse_window(const char *s)
{
	char a[64], b[64];
	if (!split_dots(s, a, b, sizeof(a)) || (*a && (g.from = cut_parse_duration(a)) < 0) ||
	    (*b && (g.to = cut_parse_duration(b)) < 0)) {
		warnx("-t: not from..to, times in ns, us, ms or s (ns without a unit): %s", s);
		usage();
	}
	g.from_open = !*a;
	g.to_open = !*b;
	if (*a && *b && g.from >= g.to) {
		warnx("-t: the window ends where it starts or before: %s", s);
		usage();
	}
	g.has_t = true;
	g.topt = s;
}

static bool
parse_count(const char *s, int64_t *v)
{
	char *end;
	if (*s < '0' || *s > '9')
		return false;
	long long n = strtoll(s, &end, 10);
	*v = n;
	return !*end && n >= 1 && n < INT64_MAX;
}

static void
parse_instances(const char *s)
{
	char a[32], b[32];
	bool range = split_dots(s, a, b, sizeof(a));
	if (!range && strlen(s) < sizeof(a)) /* one instance */
		strcpy(a, s), strcpy(b, s);
	g.first = 1;
	g.last = INT64_MAX;
	if ((!range && strlen(s) >= sizeof(a)) || (range && !*a && !*b) ||
	    (*a && !parse_count(a, &g.first)) || (*b && !parse_count(b, &g.last)) ||
	    g.first > g.last) {
		warnx("-n: not first..last, instances counted from 1: %s", s);
		usage();
	}
	g.nopt = s;
}

/* ---- processes and their windows ---- */

static void
spans_add(struct spans *s, int64_t from, int64_t to)
{
	if (from >= to)
		return;
	size_t lo = 0, hi = s->n, j;
	while (lo < hi) { /* the first span ending at or after from */
		size_t m = lo + (hi - lo) / 2;
		if (s->v[m].to < from)
			lo = m + 1;
		else
			hi = m;
	}
	for (j = lo; j < s->n && s->v[j].from <= to; j++) { /* those it touches become one */
		from = s->v[j].from < from ? s->v[j].from : from;
		to = s->v[j].to > to ? s->v[j].to : to;
	}
	if (j == lo) {
		CUT_GROW(s->v, s->n + 1, s->cap);
		memmove(s->v + lo + 1, s->v + lo, (s->n - lo) * sizeof(*s->v));
		s->n++;
	} else {
		memmove(s->v + lo + 1, s->v + j, (s->n - j) * sizeof(*s->v));
		s->n -= j - lo - 1;
	}
	s->v[lo] = (struct span){from, to};
}

static bool
spans_has(const struct spans *s, int64_t t)
{
	size_t lo = 0, hi = s->n;
	while (lo < hi) { /* the first span ending after t */
		size_t m = lo + (hi - lo) / 2;
		if (s->v[m].to <= t)
			lo = m + 1;
		else
			hi = m;
	}
	return lo < s->n && s->v[lo].from <= t;
}

/* The process of a record: its pid on its host, by procs.h's rule (the one every tool that
 * groups by process follows). */
static size_t
proc_of(const struct cut_event *ev)
{
	size_t i = cut_procs_of(g.labels, ev);
	CUT_GROW(g.procs, i + 1, g.capprocs);
	if (i >= g.nprocs) {
		for (size_t j = g.nprocs; j <= i; j++)
			g.procs[j].pid = cut_procs_pid(g.labels, j);
		g.nprocs = i + 1;
	}
	return i;
}

/* ---- output ---- */

/* The trailers held back go out before anything else is written. */
static void
flush_trail(void)
{
	if (!g.trail.len)
		return;
	buf_add(&g.out, g.trail.s, g.trail.len);
	buf_reset(&g.trail);
	if (g.trail_ts > g.last_out)
		g.last_out = g.trail_ts;
}

static void
write_event(const struct cut_event *ev, bool trailer)
{
	if (trailer) {
		if (!g.trail.len || ev->ts > g.trail_ts)
			g.trail_ts = ev->ts;
		cut_event_format(&g.trail, ev);
		buf_addc(&g.trail, '\n');
		return;
	}
	flush_trail();
	if (g.mode == SORT && ev->layer == CUT_META && cut_meta_kind(ev) == CUT_META_HEADER) {
		cut_meta_sorted_header(&g.out, ev);
	} else {
		cut_event_format(&g.out, ev);
		buf_addc(&g.out, '\n');
	}
	if (ev->ts > g.last_out)
		g.last_out = ev->ts;
	if (g.out.len >= 1 << 16)
		cut_write_buf(&g.out);
}

/* Writes a naming record unless it was, at the latest time written so far (never later than
 * the event that needs it), so that the output stays sorted. */
static void
emit(int kind, size_t i)
{
	struct named *n = &g.named[kind][i];
	if (n->written || !n->present)
		return;
	n->written = true;
	g.names_kept++;
	flush_trail();
	buf_reset(&g.name);
	char *p = buf_room(&g.name, n->len);
	if (pread(g.namesfd, p, n->len, (off_t)n->off) != (ssize_t)n->len)
		err(CUT_EXIT_FATAL, "names: temporary file");
	buf_commit(&g.name, p + n->len);
	struct cut_event ev;
	char why[256];
	if (cut_parse(g.parser, g.name.s, g.name.len, &ev, CUT_PARSE_AUTO, why, sizeof(why)) !=
	    CUT_PARSE_EVENT)
		errx(CUT_EXIT_FATAL, "names: temporary file: %s", why);
	if (ev.ts < g.last_out)
		ev.ts = g.last_out;
	write_event(&ev, false);
}

/* A handle a kept event holds that no record has named yet: the record that names it may
 * follow, up to the event's end (a call writes the name of what it returned when it returns).
 * Remembered until the records pass that end, so memory follows the events open at a time. */
static void
want(size_t proc, int64_t h, int64_t until)
{
	bool isnew;
	size_t i = idmap_put2(g.wanted, (int64_t)proc, h, &isnew);
	CUT_GROW(g.until, i + 1, g.capuntil);
	if (!isnew && g.until[i] >= until)
		return;
	g.until[i] = until;
	heap_push(&g.wants, &(struct wanted){{until, 0}, proc, h});
}

static void
forget_wants(int64_t ts)
{
	struct wanted *w;
	while ((w = heap_top(&g.wants)) && w->key.ts < ts) {
		size_t i = idmap_get2(g.wanted, (int64_t)w->proc, w->h);
		if (i != IDMAP_NONE && g.until[i] == w->key.ts)
			idmap_del2(g.wanted, (int64_t)w->proc, w->h);
		heap_pop(&g.wants, NULL);
	}
}

static void
need_handle(const struct slot *s, int64_t h)
{
	size_t i = idmap_get2(g.names[N_SYMBOL], (int64_t)s->proc, h);
	if (i != IDMAP_NONE && g.named[N_SYMBOL][i].present)
		emit(N_SYMBOL, i);
	else
		want(s->proc, h, cut_event_end(&s->h.ev));
}

/* Writes what a kept event needs named first: its process (its process, device and stream
 * records), its thread, and the handles its args and name hold; marks what is not named yet,
 * so that its record is written when it comes. */
static void
need(const struct slot *s)
{
	const struct cut_event *ev = &s->h.ev;
	struct proc *p = &g.procs[s->proc];
	for (size_t k = 0; p->dirty && k < p->nown; k++)
		emit(p->own[k].kind, p->own[k].i);
	p->dirty = false;
	p->active = true;
	size_t i = idmap_put2(g.names[N_THREAD], (int64_t)s->proc, ev->tid, NULL);
	CUT_GROW(g.named[N_THREAD], i + 1, g.capnamed[N_THREAD]);
	emit(N_THREAD, i); /* when new, a place for the record to come */
	const char *key, *val, *a = ev->args;
	size_t klen;
	int64_t h;
	while ((a = cut_args_next(a, &key, &klen, &val)))
		if (val[0] == '"' && val[1] == '0' && val[2] == 'x' &&
		    cut_args_int_at(val, &h) == 0)
			need_handle(s, h);
	/* GPU work of an unnamed function is named by its handle, a graph launch "graph 0x..." */
	const char *name = ev->layer == CUT_GPU ? ev->name : "";
	name += strncmp(name, "graph ", 6) == 0 ? 6 : 0;
	char *end;
	if (name[0] == '0' && name[1] == 'x' && (h = (int64_t)strtoull(name, &end, 16), !*end))
		need_handle(s, h);
}

/* ---- deciding ---- */

static int64_t
add_sat(int64_t a, int64_t b)
{
	int64_t r;
	return __builtin_add_overflow(a, b, &r) ? (b > 0 ? INT64_MAX : INT64_MIN) : r;
}

/* Whether an event or lost record is kept: its key in the time window, and with -r in a
 * selected window of its process (of any process for events of none). */
static bool
keep(const struct slot *s)
{
	int64_t k = s->key, origin = g.origin_known ? g.origin : s->h.ev.ts;
	if (g.has_t && ((!g.from_open && k < add_sat(origin, g.from)) ||
	                (!g.to_open && k >= add_sat(origin, g.to))))
		return false;
	if (!g.range || s->instance)
		return true;
	return spans_has(s->h.ev.pid ? &g.procs[s->proc].win : &g.all, k);
}

/* Keeps the latest record naming each process, thread, device and handle; writes it at once
 * when a kept event went without it: a thread's or process's first, a handle's that a kept
 * event still open holds. */
static void
store(struct slot *s)
{
	const struct cut_event *ev = &s->h.ev;
	int kind = N_SYMBOL;
	int64_t id = 0;
	bool whole = true;
	char what[16];
	switch (cut_meta_kind(ev)) {
	case CUT_META_PROCESS: kind = N_PROCESS; break;
	case CUT_META_THREAD: kind = N_THREAD, id = ev->tid, whole = false; break;
	case CUT_META_DEVICE:
		kind = N_DEVICE;
		if (cut_args_int(ev->args, "device", &id) < 0)
			id = CUT_ABSENT;
		break;
	default:
		/* A handle that NVTX named (a stream, device, context or event) names the process's
		 * tracks, needed as soon as it is; others (functions, kernels, modules) by use. */
		if (cut_args_int(ev->args, "handle", &id) < 0)
			id = CUT_ABSENT;
		else if (cut_args_str(ev->args, "kind", what, sizeof(what)) < 0 ||
		         (strcmp(what, "stream") && strcmp(what, "device") &&
		          strcmp(what, "context") && strcmp(what, "event")))
			whole = false;
	}
	bool isnew;
	size_t i = idmap_put2(g.names[kind], (int64_t)s->proc, id, &isnew);
	CUT_GROW(g.named[kind], i + 1, g.capnamed[kind]);
	struct named *n = &g.named[kind][i];
	bool waited = !isnew && !n->present; /* a thread whose events went without it */
	if (n->present && !n->written)
		g.names_dropped++; /* renamed before anything needed the name */
	buf_reset(&g.name);
	cut_event_format(&g.name, ev);
	if (g.name.len > UINT32_MAX ||
	    pwrite(g.namesfd, g.name.s, g.name.len, (off_t)g.namesend) != (ssize_t)g.name.len)
		err(CUT_EXIT_FATAL, "names: temporary file");
	n->off = g.namesend;
	n->len = (uint32_t)g.name.len;
	g.namesend += g.name.len;
	n->written = false;
	n->present = true;
	struct proc *p = &g.procs[s->proc];
	if (whole && isnew) {
		CUT_GROW(p->own, p->nown + 1, p->capown);
		p->own[p->nown++] = (struct owned){kind, i};
	}
	p->dirty |= whole;
	size_t w;
	if (waited || (whole && isnew && p->active) ||
	    (kind == N_SYMBOL && (w = idmap_get2(g.wanted, (int64_t)s->proc, id)) != IDMAP_NONE &&
	     g.until[w] >= ev->ts))
		emit(kind, i);
}

static void
handle(struct slot *s)
{
	struct cut_meta m;
	switch (s->what) {
	case PASS: write_event(&s->h.ev, false); break;
	case TRAILER: write_event(&s->h.ev, true); break;
	case NAMES: store(s); break;
	case LOST:
		if (keep(s)) {
			need(s);
			write_event(&s->h.ev, false);
			g.lost_kept++;
		} else {
			cut_meta_read(&s->h.ev, &m);
			g.lost_dropped += m.lost.count > 0 ? (uint64_t)m.lost.count : 0;
			cut_meta_release(&m);
		}
		break;
	case EVENT:
		if (keep(s)) {
			need(s);
			write_event(&s->h.ev, false);
			g.kept++;
		} else {
			g.dropped++;
		}
		break;
	}
}

/* Whether what decides the queue's first record is known: for an event or a lost record the
 * origin of -t, and with -r every range that starts at or before its key (all met once a
 * record after that time is read); other meta records wait for nothing. */
static bool
ready(const struct slot *s)
{
	if (s->what == NAMES || s->what == PASS || s->what == TRAILER)
		return true;
	if (!g.origin_known)
		return false;
	if (!g.range)
		return true;
	int64_t t = s->key > s->h.ev.ts ? s->key : s->h.ev.ts;
	return t < g.now;
}

/* Decides the records at the front of the queue whose turn has come; all of them at the
 * end, and any when too many wait (then with what is known). */
static void
release(bool all)
{
	while (g.qhead < g.qtail) {
		struct slot *s = &g.q[g.qhead % g.qcap];
		bool full = g.qtail - g.qhead > MAX_QUEUED || g.qbytes > MAX_QUEUED_BYTES;
		if (!all && !full && !ready(s))
			break;
		size_t bytes = s->h.s.cap;
		forget_wants(s->h.ev.ts);
		handle(s);
		g.qbytes -= bytes;
		g.qhead++;
	}
}

static struct slot *
enqueue(void)
{
	if (g.qtail - g.qhead == g.qcap) {
		size_t cap = g.qcap ? g.qcap * 2 : 1024;
		struct slot *q = cut_xcalloc(cap, sizeof(*q));
		for (uint64_t i = g.qhead; i < g.qtail; i++)
			q[i % cap] = g.q[i % g.qcap];
		free(g.q);
		g.q = q;
		g.qcap = cap;
	}
	return &g.q[g.qtail++ % g.qcap];
}

static void
hold(struct held *h, const struct cut_event *ev)
{
	const char *str[] = {ev->host, ev->name, ev->cat, ev->pname, ev->args, ev->extra};
	size_t off[6];
	buf_reset(&h->s);
	for (int i = 0; i < 6; i++) {
		off[i] = h->s.len;
		if (str[i])
			buf_add(&h->s, str[i], strlen(str[i]) + 1);
	}
	h->ev = *ev;
	const char **dst[] = {&h->ev.host,  &h->ev.name, &h->ev.cat,
	                      &h->ev.pname, &h->ev.args, &h->ev.extra};
	for (int i = 0; i < 6; i++)
		*dst[i] = str[i] ? h->s.s + off[i] : NULL;
}

/* A record read, in sorted order: queued, and counted as an instance of the range now, so
 * that records of its time decided after it know of it. */
static void
arrive(struct cut_reader *r, const struct cut_event *ev)
{
	if (g.mode == STREAM && g.met && ev->ts < g.now && !g.unsorted++)
		cut_reader_warn(r,
		                "ts %lld is %lld ns before an earlier record, although the header "
		                "says the trace is sorted: decided by the ranges met so far",
		                (long long)ev->ts, (long long)(g.now - ev->ts));
	if (!g.met || ev->ts > g.now)
		g.now = ev->ts;
	g.met = true;
	struct slot *s = enqueue();
	hold(&s->h, ev);
	g.qbytes += s->h.s.cap;
	ev = &s->h.ev;
	s->key = ev->ts;
	s->instance = false;
	s->proc = proc_of(ev);
	if (ev->layer == CUT_META) {
		enum cut_meta_kind k = cut_meta_kind(ev);
		s->what = k == CUT_META_HEADER || k == CUT_META_OTHER ? PASS
		          : k == CUT_META_TRAILER                     ? TRAILER
		          : k == CUT_META_LOST                        ? LOST
		                                                      : NAMES;
		release(false);
		return;
	}
	s->what = EVENT;
	if (!g.origin_known)
		g.origin_known = true, g.origin = ev->ts;
	int64_t corr, submit;
	if (ev->layer == CUT_GPU && cut_args_int(ev->args, "corr", &corr) == 0 &&
	    cut_args_int(ev->args, "submit", &submit) == 0)
		s->key = submit;
	if (g.range && ev->layer == CUT_NVTX && (ev->has & CUT_HAS_DUR) &&
	    !(ev->cat && strcmp(ev->cat, "mark") == 0) && strcmp(ev->name, g.range) == 0) {
		struct proc *p = &g.procs[s->proc];
		int64_t n = ++p->ninst, end = add_sat(ev->ts, ev->dur);
		if (n >= g.first && n <= g.last) {
			s->instance = true;
			spans_add(&p->win, ev->ts, end);
			spans_add(&g.all, ev->ts, end);
			if (g.nselected++ < MAX_LISTED) {
				CUT_GROW(g.inst, g.ninst + 1, g.capinst);
				g.inst[g.ninst++] = (struct instance){s->proc, n, ev->ts, end};
			}
		}
	}
	release(false);
}

/* ---- input, the slice record, main ---- */

static bool
says_sorted(const struct cut_event *ev)
{
	struct cut_meta m;
	bool sorted = cut_meta_read(ev, &m) == CUT_META_HEADER && m.header.sorted == 1;
	cut_meta_release(&m);
	return sorted;
}

/* One input whose header says it is sorted is read as it comes; anything else is sorted
 * first (in bounded memory), its first header written first. */
static void
read_event(struct cut_reader *r, struct cut_event *ev, void *arg)
{
	(void)arg;
	if (g.mode == UNDECIDED) {
		g.mode = g.nfiles <= 1 && ev->layer == CUT_META && says_sorted(ev) ? STREAM : SORT;
		if (g.mode == SORT && !(g.sort = cut_sorter_new(0)))
			err(CUT_EXIT_FATAL, "sorting");
		if (g.mode == SORT && ev->layer == CUT_META &&
		    cut_meta_kind(ev) == CUT_META_HEADER) {
			cut_meta_sorted_header(&g.out, ev);
			return;
		}
	}
	if (g.mode == STREAM)
		arrive(r, ev);
	else if (cut_sorter_add(g.sort, ev, cut_reader_line(r)) < 0)
		err(CUT_EXIT_FATAL, "sorting");
}

static void
slice_record(void)
{
	struct cut_buf a = {0}, w = {0};
	buf_addkv_str(&a, "tool", "cutslice");
	buf_addkv_str(&a, "version", CUT_VERSION);
	if (g.origin_known)
		buf_addkv_int(&a, "origin_ns", g.origin);
	if (g.has_t) {
		buf_addkv_str(&a, "t", g.topt);
		if (g.origin_known && !g.from_open)
			buf_addkv_int(&a, "from_ns", add_sat(g.origin, g.from));
		if (g.origin_known && !g.to_open)
			buf_addkv_int(&a, "to_ns", add_sat(g.origin, g.to));
	}
	if (g.range) {
		buf_addkv_str(&a, "range", g.range);
		if (g.nopt)
			buf_addkv_str(&a, "n", g.nopt);
		buf_addkv_int(&a, "instances", (int64_t)g.nselected);
		buf_addkey(&a, "windows");
		buf_addc(&a, '[');
		for (size_t i = 0; i < g.ninst; i++) {
			const struct instance *in = &g.inst[i];
			const struct proc *p = &g.procs[in->proc];
			buf_reset(&w);
			const char *host = cut_procs_host(g.labels, in->proc);
			int64_t rank = cut_procs_rank(g.labels, in->proc);
			if (host)
				buf_addkv_str(&w, "host", host);
			if (rank >= 0)
				buf_addkv_int(&w, "rank", rank);
			buf_addkv_int(&w, "pid", p->pid);
			buf_addkv_int(&w, "n", in->n);
			buf_addkv_int(&w, "from_ns", in->from);
			buf_addkv_int(&w, "to_ns", in->to);
			buf_addc(&w, '}');
			if (i)
				buf_addc(&a, ',');
			buf_add(&a, w.s, w.len);
		}
		buf_addc(&a, ']');
		if (g.nselected > g.ninst)
			buf_addkv_int(&a, "windows_left_out", (int64_t)(g.nselected - g.ninst));
	}
	buf_addkv_int(&a, "kept", (int64_t)g.kept);
	buf_addkv_int(&a, "dropped", (int64_t)g.dropped);
	buf_addkv_int(&a, "names_kept", (int64_t)g.names_kept);
	buf_addkv_int(&a, "names_dropped", (int64_t)g.names_dropped);
	buf_addkv_int(&a, "lost_kept", (int64_t)g.lost_kept);
	buf_addkv_int(&a, "lost_dropped", (int64_t)g.lost_dropped);
	buf_addc(&a, '}');
	struct cut_event ev;
	cut_event_init(&ev);
	ev.ts = g.last_out;
	ev.layer = CUT_META;
	ev.name = "slice";
	ev.args = a.s;
	cut_event_format(&g.out, &ev);
	buf_addc(&g.out, '\n');
	buf_free(&a);
	buf_free(&w);
}

/* The file of names, in $TMPDIR (else /tmp), unlinked at once so nothing is left behind. */
static void
names_file(void)
{
	const char *dir = getenv("TMPDIR");
	char path[4096];
	snprintf(path, sizeof(path), "%s/cutslice.XXXXXX", dir && *dir ? dir : "/tmp");
	if ((g.namesfd = mkstemp(path)) < 0)
		err(CUT_EXIT_FATAL, "names: temporary file in %s",
		    cut_esc(dir && *dir ? dir : "/tmp"));
	unlink(path);
	if (!(g.parser = cut_parser_new()))
		err(CUT_EXIT_FATAL, "names");
}

static void
cleanup(void)
{
	for (size_t i = 0; i < g.qcap; i++)
		buf_free(&g.q[i].h.s);
	free(g.q);
	for (int k = 0; k < N_KINDS; k++) {
		free(g.named[k]);
		idmap_free(g.names[k]);
	}
	for (size_t i = 0; i < g.nprocs; i++) {
		free(g.procs[i].own);
		free(g.procs[i].win.v);
	}
	free(g.procs);
	cut_procs_free(g.labels);
	free(g.all.v);
	free(g.inst);
	idmap_free(g.wanted);
	free(g.until);
	heap_free(&g.wants);
	buf_free(&g.out);
	buf_free(&g.trail);
	buf_free(&g.name);
	cut_parser_free(g.parser);
	close(g.namesfd);
}

int
main(int argc, char *argv[])
{
	int ch;

	cut_std_args_help(argc, argv, usage, opts);
	g.first = 1;
	g.last = INT64_MAX;
	while ((ch = getopt(argc, argv, "n:r:t:")) != -1) {
		switch (ch) {
		case 'n': parse_instances(optarg); break;
		case 'r':
			if (!*optarg) {
				warnx("-r: no range name");
				usage();
			}
			g.range = optarg;
			break;
		case 't': parse_window(optarg); break;
		default: usage();
		}
	}
	if (g.nopt && !g.range) {
		warnx("-n: counts instances of the range of -r");
		usage();
	}
	argc -= optind;
	argv += optind;

	g.nfiles = argc;
	g.labels = cut_procs_new();
	for (int k = 0; k < N_KINDS; k++)
		g.names[k] = idmap_new();
	g.wanted = idmap_new();
	names_file();
	heap_init(&g.wants, sizeof(struct wanted));
	int status = cut_read_all(argc, argv, read_event, NULL);
	if (g.mode == SORT) {
		struct cut_event ev;
		int rc;
		while ((rc = cut_sorter_next(g.sort, &ev, NULL)) > 0)
			arrive(NULL, &ev);
		if (rc < 0) {
			warn("sorting");
			status = CUT_EXIT_LOST;
		}
		cut_sorter_free(g.sort);
	}
	release(true);
	for (int k = 0; k < N_KINDS; k++)
		for (size_t i = 0; i < idmap_span(g.names[k]); i++)
			g.names_dropped += g.named[k][i].present && !g.named[k][i].written;
	slice_record();
	flush_trail();
	cut_write_buf(&g.out);
	if (g.unsorted > 1)
		warnx("%llu records out of order", (unsigned long long)g.unsorted);
	if (g.unsorted && status == CUT_EXIT_OK)
		status = CUT_EXIT_BADINPUT;
	cleanup();
	return cut_finish_output(status);
}
