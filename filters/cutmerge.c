/* cutmerge: one ts-ordered stream from several traces, with every event tied to what holds it
 * on its thread (an ioctl to its driver call, a driver call to its runtime call, a call to its
 * NVTX range), and every runtime and driver call told how many ioctls it made and how long it
 * spent in them. */
#include <err.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "calls.h"
#include "cut.h"
#include "event.h"
#include "heap.h"
#include "meta.h"
#include "parse.h"
#include "reader.h"
#include "units.h"

static void
usage(void)
{
	fprintf(stderr, "usage: cutmerge [-A] [-m held] [-w window] [file ...]\n");
	exit(CUT_EXIT_FATAL);
}

/* An event held in a reorder window: its canonical line, parsed again when it leaves. */
struct pending {
	struct cut_heap_key key; /* its ts, and its place in the input */
	char *line;
	size_t len;
};

/* An input in the heap of inputs by their next event. */
struct head {
	struct cut_heap_key key; /* see head_key() */
	int in;
};

struct input {
	struct cut_reader *rd;
	const char *path;
	struct cut_event ev; /* the head, valid while has */
	bool has, eof, late;
	int64_t shift, last_ts;
	bool clock;
	int64_t mono, real;
	char host[128], tool[32];
	struct cut_heap win; /* -w: pending events by (ts, place in the input) */
	uint64_t seq;
	int64_t max_ts;
	char *line; /* the released line the head points into */
	struct cut_parser *parser;
	struct cut_buf fmt;
};

/* The held queue: events wait here while a call before them is still open. */
struct slot {
	int64_t ts, end;
	bool counted, dropped; /* counted: a call that gets nioctl and ioctl_ns */
	int64_t nioctl, ioctl_ns;
	struct cut_buf text; /* canonical line without nioctl/ioctl_ns, args and extra */
	size_t split;        /* text[split, len) is the args/extra tail and the closing brace */
};

static struct {
	int64_t window;
	size_t maxheld;
	bool align;
	struct input *in;
	int nin;
	struct cut_heap heads;  /* inputs by their head event */
	struct cut_calls *open; /* spans open on each thread; user[0] the slot, user[1] the input */
	struct slot *q;
	size_t qcap;
	uint64_t qhead, qtail; /* sequence numbers: slots qhead..qtail-1 are held */
	int64_t next_id, last_out;
	uint64_t written, unsorted, partial;
	uint64_t *dups; /* [kept * nin + dropped] */
	struct cut_buf out;
	bool stop;
} g;

/* ---- reading: clock shift, order check, reorder window ---- */

/* What an input's header says of its host, its tool and its clock. */
static void
read_header(struct input *in, const struct cut_event *ev)
{
	struct cut_meta m;
	if (cut_meta_read(ev, &m) == CUT_META_HEADER) {
		const struct cut_header *h = &m.header;
		snprintf(in->host, sizeof(in->host), "%s", h->host ? h->host : "");
		snprintf(in->tool, sizeof(in->tool), "%s", h->tool ? h->tool : "");
		in->clock = h->monotonic_ns != CUT_ABSENT && h->realtime_ns != CUT_ABSENT;
		in->mono = h->monotonic_ns;
		in->real = h->realtime_ns;
	}
	cut_meta_release(&m);
}

/* Moves an event onto the reference clock. Returns false, having reported it, when it would
 * land before time 0 or its end past the largest time. */
static bool
shift(struct input *in, struct cut_event *ev)
{
	if (!in->shift) /* the reference, and inputs of its boot */
		return true;
	int64_t dur = ev->has & CUT_HAS_DUR ? ev->dur : 0;
	if (in->shift < 0 ? ev->ts < -in->shift : ev->ts > INT64_MAX - dur - in->shift) {
		cut_reader_warn(in->rd,
		                "out of range once aligned to the first trace's clock "
		                "(shift %lld ns): left out",
		                (long long)in->shift);
		return false;
	}
	ev->ts += in->shift;
	return true;
}

/* The next event of an input as read, with its clock shift applied. */
static int
next_raw(struct input *in, struct cut_event *ev)
{
	int rc;
	while ((rc = cut_reader_next(in->rd, ev)) > 0)
		if (shift(in, ev))
			return 1;
	if (rc < 0)
		g.stop = true;
	return 0;
}

static void
pend_push(struct input *in, const struct cut_event *ev)
{
	buf_reset(&in->fmt);
	cut_event_format(&in->fmt, ev);
	struct pending p = {{ev->ts, in->seq++}, malloc(in->fmt.len + 1), in->fmt.len};
	if (!p.line)
		err(CUT_EXIT_FATAL, "reorder window");
	memcpy(p.line, in->fmt.s, in->fmt.len + 1);
	heap_push(&in->win, &p);
}

/* The ts of the oldest pending event; the window is not empty. */
static int64_t
pend_oldest(const struct input *in)
{
	return ((const struct pending *)heap_top(&in->win))->key.ts;
}

/* Makes the input's head the next event in order, or marks it finished. */
static void
advance(struct input *in)
{
	in->has = false;
	if (g.window == 0) {
		if (!in->eof && !g.stop && next_raw(in, &in->ev))
			in->has = true;
		else
			in->eof = true;
	} else {
		struct cut_event ev;
		while (!in->eof && !g.stop &&
		       (!heap_len(&in->win) || in->max_ts - pend_oldest(in) < g.window)) {
			if (!next_raw(in, &ev)) {
				in->eof = true;
				break;
			}
			if (ev.ts < in->last_ts && ++g.unsorted)
				cut_reader_warn(in->rd,
				                "ts %lld is %lld ns before an event already "
				                "taken (beyond the -w window): written out of "
				                "order",
				                (long long)ev.ts, (long long)(in->last_ts - ev.ts));
			if (ev.ts > in->max_ts)
				in->max_ts = ev.ts;
			pend_push(in, &ev);
		}
		struct pending p;
		if (!heap_pop(&in->win, &p))
			return;
		char why[256];
		free(in->line);
		in->line = p.line;
		if (cut_parse(in->parser, p.line, p.len, &in->ev, CUT_PARSE_AUTO, why,
		              sizeof(why)) != CUT_PARSE_EVENT)
			errx(CUT_EXIT_FATAL, "%s: reorder window: %s", in->path, why);
		in->has = true;
	}
	/* An event before one already taken cannot be placed: written where met, uncorrelated. */
	in->late = in->has && in->ev.ts < in->last_ts;
	if (in->late && g.window == 0) {
		cut_reader_warn(in->rd,
		                "ts %lld is %lld ns before an earlier event: input not "
		                "sorted (try -w): written out of order",
		                (long long)in->ev.ts, (long long)(in->last_ts - in->ev.ts));
		g.unsorted++;
	}
	if (in->has && in->ev.ts > in->last_ts)
		in->last_ts = in->ev.ts;
}

/* ---- the merge heap over inputs ---- */

/* Inputs in order of their heads' ts; at equal ts the higher layer first (an NVTX range, then
 * a runtime call, then a driver call, then the rest), so a call can hold what starts with it
 * on another trace; then in command-line order. */
static struct cut_heap_key
head_key(int in)
{
	const struct cut_event *ev = &g.in[in].ev;
	int rank = cut_layer_rank(ev->layer);
	return (struct cut_heap_key){ev->ts,
	                             (uint64_t)(3 - (rank > 0 ? rank : 0)) << 32 | (unsigned)in};
}

/* The ts of the next event in merged order, or INT64_MAX when every input is finished. */
static int64_t
next_ts(void)
{
	const struct head *h = heap_top(&g.heads);
	return h ? h->key.ts : INT64_MAX;
}

/* The held slot of sequence number seq, or NULL once it was written. */
static struct slot *
held(uint64_t seq)
{
	return seq >= g.qhead && seq < g.qtail ? &g.q[seq % g.qcap] : NULL;
}

/* ---- output ---- */

static void
written(int64_t ts)
{
	g.written++;
	g.last_out = ts;
	if (g.out.len >= 1 << 16)
		cut_write_buf(&g.out);
}

static void
write_event(const struct cut_event *ev)
{
	cut_event_format(&g.out, ev);
	buf_addc(&g.out, '\n');
	written(ev->ts);
}

static void
write_slot(struct slot *s, bool counts)
{
	if (s->dropped)
		return;
	buf_add(&g.out, s->text.s, s->split);
	if (s->counted && counts) {
		buf_add(&g.out, ",\"nioctl\":", 10);
		buf_addi64(&g.out, s->nioctl);
		buf_add(&g.out, ",\"ioctl_ns\":", 12);
		buf_addi64(&g.out, s->ioctl_ns);
	}
	buf_add(&g.out, s->text.s + s->split, s->text.len - s->split);
	written(s->ts);
}

/* Writes held events from the front while nothing before them can still change: a call is
 * complete once every input has moved past its end. */
static void
release(int64_t now, bool all)
{
	while (g.qhead < g.qtail) {
		struct slot *s = &g.q[g.qhead % g.qcap];
		bool full = g.qtail - g.qhead > g.maxheld;
		if (!all && s->counted && !s->dropped && s->end > now && !full)
			break;
		if (s->counted && !s->dropped && s->end > now && !all)
			g.partial++;
		write_slot(s, all || s->end <= now);
		g.qhead++;
	}
}

static struct slot *
hold(const struct cut_event *ev, bool counted)
{
	if (g.qtail - g.qhead == g.qcap) {
		size_t cap = g.qcap ? g.qcap * 2 : 1024;
		struct slot *q = calloc(cap, sizeof(*q));
		if (!q)
			err(CUT_EXIT_FATAL, "held events");
		/* The queue is full: every old slot is held and moves to its new place. */
		for (uint64_t i = g.qhead; i < g.qtail; i++)
			q[i % cap] = g.q[i % g.qcap];
		free(g.q);
		g.q = q;
		g.qcap = cap;
	}
	struct slot *s = &g.q[g.qtail++ % g.qcap];
	struct cut_buf text = s->text;
	struct cut_event e = *ev;
	*s =
	    (struct slot){.ts = ev->ts, .end = cut_event_end(ev), .counted = counted, .text = text};
	e.args = NULL;
	e.extra = NULL;
	e.has &= ~CUT_HAS_NIOCTL;
	buf_reset(&s->text);
	cut_event_format(&s->text, &e);
	s->split = --s->text.len; /* drop the closing brace */
	if (ev->args) {
		buf_add(&s->text, ",\"args\":", 8);
		buf_adds(&s->text, ev->args);
	}
	if (ev->extra && *ev->extra) {
		buf_addc(&s->text, ',');
		buf_adds(&s->text, ev->extra);
	}
	buf_add(&s->text, "}\n", 2);
	return s;
}

/* An ioctl proper, not an open, close or mmap of a device file (those carry no "cmd"). */
static bool
is_ioctl_call(const struct cut_event *ev)
{
	if (ev->args)
		return cut_args_find(ev->args, "cmd") != NULL;
	return strcmp(ev->name, "open") && strcmp(ev->name, "openat") &&
	       strcmp(ev->name, "close") && strcmp(ev->name, "mmap") && strcmp(ev->name, "munmap");
}

static int
preference(int in)
{
	/* The eBPF record's span excludes the preload wrapper and the uprobe entry trap. */
	return strcmp(g.in[in].tool, "cutcapture") == 0;
}

/* What a call left out as a duplicate hands on to the copy kept in its place. */
struct kept {
	int64_t id, nioctl, ioctl_ns;
};

/* A call recorded by two inputs (both capture paths): same thread, layer and name, starting
 * while the other is open, so the other is its parent o. Returns true when ev is the copy
 * left out; when o is, o is forgotten and *k says what ev takes over from it. */
static bool
duplicate(const struct cut_event *ev, int in, struct cut_span *o, struct kept *k)
{
	int other = (int)o->user[1];
	struct slot *s = held(o->user[0]);
	if (preference(in) <= preference(other) || !s) {
		g.dups[other * g.nin + in]++;
		return true;
	}
	g.dups[in * g.nin + other]++;
	s->dropped = true;
	*k = (struct kept){o->id, s->nioctl, s->ioctl_ns};
	cut_calls_close(g.open, ev, o);
	return false;
}

/* An ioctl counts in the innermost driver call around it (its parent p when it has one: the
 * api layer comes first) and in the innermost runtime call around it. */
static void
count_ioctl(const struct cut_event *ev, struct cut_span *p)
{
	struct cut_span *calls[2] = {p && p->layer == CUT_API ? p : NULL,
	                             cut_calls_within(g.open, ev, CUT_RUNTIME)};
	for (int i = 0; i < 2; i++) {
		struct slot *s = calls[i] ? held(calls[i]->user[0]) : NULL;
		if (s) {
			s->nioctl++;
			s->ioctl_ns += ev->has & CUT_HAS_DUR ? ev->dur : 0;
		}
	}
}

/* Handles one event in merged order: its parent, its id, the ioctls of the calls around it,
 * duplicates; then writes it or holds it back. An event out of order is not correlated. */
static void
merge_one(struct cut_event *ev, int in)
{
	bool late = g.in[in].late, span = cut_layer_rank(ev->layer) > 0;
	bool counted = ev->layer == CUT_API || ev->layer == CUT_RUNTIME;
	struct kept k = {0};
	ev->has &= ~(CUT_HAS_PARENT | CUT_HAS_NIOCTL | CUT_HAS_ID);
	ev->pname = NULL;
	/* p and pname point into the tracker: used before the next cut_calls_open */
	struct cut_span *p = late ? NULL : cut_calls_parent(g.open, ev);
	if (p && counted && p->layer == ev->layer && (int)p->user[1] != in &&
	    strcmp(cut_span_name(p), ev->name) == 0) {
		if (duplicate(ev, in, p, &k))
			return;
		p = cut_calls_parent(g.open, ev);
	}
	if (p) {
		ev->parent = p->id;
		ev->pname = cut_span_name(p);
		ev->has |= CUT_HAS_PARENT;
	}
	if (!late && ev->layer == CUT_IOCTL && is_ioctl_call(ev))
		count_ioctl(ev, p);
	if (span) {
		ev->id = k.id ? k.id : ++g.next_id;
		ev->has |= CUT_HAS_ID;
	}
	uint64_t seq = UINT64_MAX; /* never held */
	if (counted || g.qhead != g.qtail) {
		struct slot *s = hold(ev, counted);
		s->nioctl = k.nioctl;
		s->ioctl_ns = k.ioctl_ns;
		seq = g.qtail - 1;
	} else {
		write_event(ev);
	}
	struct cut_span *o = span && !late ? cut_calls_open(g.open, ev) : NULL;
	if (o) {
		o->user[0] = seq;
		o->user[1] = (uint64_t)in;
	}
}

/* ---- header, trailer, main ---- */

/* Two traces of one host whose clock offsets differ by less than this share a boot. */
#define SAME_BOOT_NS 1000000000

static void
align_clocks(void)
{
	const struct input *ref = NULL;
	for (int i = 0; i < g.nin && !ref; i++)
		if (g.in[i].clock)
			ref = &g.in[i];
	for (int i = 0; i < g.nin; i++) {
		struct input *in = &g.in[i];
		if (!g.align || !ref || !in->clock || in == ref)
			continue;
		/* The same instant is real - mono on each host's monotonic clock. */
		int64_t off, ref_off, shift;
		if (__builtin_sub_overflow(in->real, in->mono, &off) ||
		    __builtin_sub_overflow(ref->real, ref->mono, &ref_off) ||
		    __builtin_sub_overflow(off, ref_off, &shift)) {
			warnx("%s: clock in the header out of range: not aligned", in->path);
			continue;
		}
		/* One host, one boot: the monotonic clock is shared, and the offsets differ only by
		 * how far the wall clock was adjusted between the captures, so nothing moves. A
		 * host name alone is not enough (machines are often all called "vm"). */
		if (in->host[0] && strcmp(in->host, ref->host) == 0 && shift > -SAME_BOOT_NS &&
		    shift < SAME_BOOT_NS)
			continue;
		in->shift = shift;
	}
}

/* A meta record of cutmerge itself (pid and tid 0) at ts. */
static void
write_meta(int64_t ts, const struct cut_meta *m)
{
	struct cut_event at;
	cut_event_init(&at);
	at.ts = ts;
	cut_meta_format(&g.out, &at, m);
	buf_addc(&g.out, '\n');
}

static void
header(int64_t ts)
{
	struct cut_buf inputs = {0};
	struct cut_meta m;
	const struct input *ref = NULL;
	for (int i = 0; i < g.nin && !ref; i++)
		if (g.in[i].clock)
			ref = &g.in[i];
	cut_meta_init(&m, CUT_META_HEADER);
	m.header.tool = "cutmerge";
	m.header.version = CUT_VERSION;
	if (ref && g.align) {
		m.header.monotonic_ns = ref->mono;
		m.header.realtime_ns = ref->real;
	}
	m.header.sorted = 1;
	buf_adds(&inputs, "\"inputs\":[");
	for (int i = 0; i < g.nin; i++) {
		buf_adds(&inputs, i ? ",{" : "{");
		buf_addkv_str(&inputs, "file", g.in[i].path);
		if (g.in[i].tool[0])
			buf_addkv_str(&inputs, "tool", g.in[i].tool);
		if (g.in[i].host[0])
			buf_addkv_str(&inputs, "host", g.in[i].host);
		buf_addkv_int(&inputs, "shift_ns", g.in[i].shift);
		buf_addc(&inputs, '}');
	}
	buf_addc(&inputs, ']');
	m.header.more = inputs.s;
	write_meta(ts, &m);
	buf_free(&inputs);
}

static void
trailer(void)
{
	uint64_t dups = 0;
	for (int i = 0; i < g.nin * g.nin; i++)
		dups += g.dups[i];
	char more[256];
	struct cut_meta m;
	cut_meta_init(&m, CUT_META_TRAILER);
	m.trailer.events = (int64_t)g.written;
	snprintf(more, sizeof(more), "\"duplicates\":%llu,\"unsorted\":%llu,\"partial\":%llu",
	         (unsigned long long)dups, (unsigned long long)g.unsorted,
	         (unsigned long long)g.partial);
	m.trailer.more = more;
	write_meta(g.last_out, &m);
	cut_write_buf(&g.out);
	for (int k = 0; k < g.nin; k++)
		for (int d = 0; d < g.nin; d++)
			if (g.dups[k * g.nin + d])
				warnx("%llu calls were recorded in both %s%s%s%s and %s%s%s%s: "
				      "kept those of %s",
				      (unsigned long long)g.dups[k * g.nin + d], g.in[k].path,
				      g.in[k].tool[0] ? " (" : "", g.in[k].tool,
				      g.in[k].tool[0] ? ")" : "", g.in[d].path,
				      g.in[d].tool[0] ? " (" : "", g.in[d].tool,
				      g.in[d].tool[0] ? ")" : "", g.in[k].path);
	if (g.partial)
		warnx("%llu calls were written without nioctl/ioctl_ns: more than %zu events "
		      "were held back while they were open (raise -m)",
		      (unsigned long long)g.partial, g.maxheld);
}

int
main(int argc, char *argv[])
{
	int ch, status = CUT_EXIT_OK;
	char *end;
	static char *stdin_only[] = {"-"};

	g.align = true;
	g.maxheld = 1000000;
	while ((ch = getopt(argc, argv, "Am:w:")) != -1) {
		switch (ch) {
		case 'A': g.align = false; break;
		case 'm':
			g.maxheld = strtoul(optarg, &end, 10);
			if (*optarg < '0' || *optarg > '9' || *end || g.maxheld < 1)
				errx(CUT_EXIT_FATAL, "-m: not a positive count: %s", optarg);
			break;
		case 'w':
			if ((g.window = cut_parse_duration(optarg)) < 0)
				errx(CUT_EXIT_FATAL,
				     "-w: not a duration (ns, or with s, ms, us, ns): %s", optarg);
			break;
		default: usage();
		}
	}
	argc -= optind;
	argv += optind;
	if (!argc)
		argc = 1, argv = stdin_only;

	g.nin = argc;
	g.in = calloc((size_t)argc, sizeof(*g.in));
	g.dups = calloc((size_t)argc * (size_t)argc, sizeof(*g.dups));
	g.open = cut_calls_new(CUT_CALLS_HOLDERS | CUT_CALLS_NAMES);
	heap_init(&g.heads, sizeof(struct head));
	if (!g.in || !g.dups)
		err(CUT_EXIT_FATAL, "inputs");
	for (int i = 0; i < argc; i++) {
		struct input *in = &g.in[i];
		in->path = strcmp(argv[i], "-") == 0 ? "<stdin>" : argv[i];
		if (!(in->rd = cut_reader_open(argv[i], 0)))
			err(CUT_EXIT_FATAL, "%s", argv[i]);
		if (g.window && !(in->parser = cut_parser_new()))
			err(CUT_EXIT_FATAL, "%s", argv[i]);
		heap_init(&in->win, sizeof(struct pending));
		in->last_ts = in->max_ts = INT64_MIN;
	}
	/* Each input's first record says its clock: read them all, then align. */
	struct cut_event *first = calloc((size_t)argc, sizeof(*first));
	bool *have = calloc((size_t)argc, sizeof(*have));
	if (!first || !have)
		err(CUT_EXIT_FATAL, "inputs");
	for (int i = 0; i < argc; i++) {
		struct input *in = &g.in[i];
		int rc = cut_reader_next(in->rd, &first[i]);
		if (rc < 0)
			g.stop = true;
		have[i] = rc > 0;
		if (have[i])
			read_header(in, &first[i]);
	}
	align_clocks();
	for (int i = 0; i < argc; i++) {
		struct input *in = &g.in[i];
		if (!have[i] || !shift(in, &first[i])) {
			advance(in);
		} else if (g.window) {
			in->max_ts = first[i].ts;
			pend_push(in, &first[i]);
			advance(in);
		} else {
			in->ev = first[i];
			in->has = true;
			in->last_ts = in->ev.ts;
		}
		if (in->has)
			heap_push(&g.heads, &(struct head){head_key(i), i});
	}
	free(first);
	free(have);

	header(heap_len(&g.heads) ? next_ts() : 0);
	struct head *h;
	while ((h = heap_top(&g.heads))) {
		int i = h->in;
		merge_one(&g.in[i].ev, i);
		advance(&g.in[i]);
		if (g.in[i].has) {
			h->key = head_key(i);
			heap_fix_top(&g.heads);
		} else {
			heap_pop(&g.heads, NULL);
		}
		release(next_ts(), !heap_len(&g.heads));
	}
	release(INT64_MAX, true);
	trailer();

	for (int i = 0; i < argc; i++) {
		struct input *in = &g.in[i];
		if (cut_reader_close(in->rd))
			status = CUT_EXIT_BADINPUT;
		cut_parser_free(in->parser);
		for (size_t k = 0; k < heap_len(&in->win); k++)
			free(((struct pending *)heap_at(&in->win, k))->line);
		heap_free(&in->win);
		free(in->line);
		buf_free(&in->fmt);
	}
	if (g.stop)
		status = CUT_EXIT_BADINPUT;
	for (size_t i = 0; i < g.qcap; i++)
		buf_free(&g.q[i].text);
	free(g.q);
	cut_calls_free(g.open);
	free(g.in);
	heap_free(&g.heads);
	free(g.dups);
	buf_free(&g.out);
	return cut_finish_output(status);
}
