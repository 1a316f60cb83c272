/* cutmerge: one ts-ordered stream from several traces, with every event tied to what holds it
 * on its thread (an ioctl to its driver call, a driver call to its runtime call, a call to its
 * NVTX range), and every runtime and driver call told how many ioctls it made and how long it
 * spent in them. */
#include <err.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
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
#include "meta.h"
#include "parse.h"
#include "reader.h"
#include "sort.h"
#include "text.h"
#include "units.h"

static void
usage(void)
{
	fprintf(stderr, "usage: cutmerge [-AS] [-M MiB] [-m held] [file ...]\n");
	exit(CUT_EXIT_FATAL);
}

/* An input in the heap of inputs by their next event. */
struct head {
	struct cut_heap_key key; /* see head_key() */
	int in;
};

struct input {
	struct cut_reader *rd;
	struct cut_sorter *sort; /* the input read whole and sorted: it did not say it is sorted */
	const char *path;
	struct cut_event ev; /* the head, valid while has */
	uint64_t line;       /* of the head in its file */
	bool has, eof, late, sorted;
	int64_t shift, last_ts;
	bool clock;
	int64_t mono, real;
	uint64_t header_line; /* of the header the clock and host come from */
	/* host: the header's (a merge's: its inputs' one host); tool: the header's; capture:
	 * the capture path its calls come from (a merge's: its inputs' one tool), "" unknown */
	char host[128], tool[32], capture[32];
	int64_t gpu_error_ns; /* the largest GPU clock bound of its trailers; -1: none */
	struct cut_buf args;  /* the head's args when shifting rewrote them */
};

/* GPU work seen within the last GPU_SAME_NS, so that a copy of it from another input (the
 * same recording given twice) is recognised. */
struct gpu_seen {
	int64_t ts, end, pid, corr, stream, device, rank; /* the last three: CUT_ABSENT if absent */
	int in;
	uint64_t next;    /* the entry met before it in its bucket, or NONE */
	size_t name, cat; /* offsets in text, which holds host, name and cat NUL-terminated */
	struct cut_buf text;
};

/* Copies left out, per pair of inputs (kept, dropped): a map, not an nin x nin array, so that
 * a merge of ten thousand ranks' files takes no 800 MB for it. */
struct pairs {
	struct cut_idmap *map; /* (kept, dropped) -> index in v */
	struct pair {
		int kept, dropped;
		uint64_t n;
	} * v;
	size_t cap;
	uint64_t total;
};

/* The held queue: events wait here while a call before them is still open. */
struct slot {
	int64_t ts, end;
	bool counted, dropped; /* counted: a call that gets nioctl and ioctl_ns */
	int64_t nioctl, ioctl_ns;
	struct cut_buf text; /* canonical line without nioctl/ioctl_ns, args and extra */
	size_t split;        /* text[split, len) is the args/extra tail and the closing brace */
};

/* The host and rank a process's records say (cut-events(5): both or neither), learnt from
 * the first that says them, for its records that say neither (an older capture's runtime
 * calls): per input and pid. */
struct label {
	char *host; /* NULL: none */
	int64_t rank;
	bool mixed; /* the pid had two labels in this input: none is taken */
};

static struct {
	size_t maxheld, maxbytes, heldbytes;
	bool align, sort_all;
	bool label_hosts;     /* the inputs name different hosts: records without one get theirs */
	const char *one_host; /* the host of every input that names one, when they agree */
	struct cut_idmap *labelmap; /* (input, pid) -> labels */
	struct label *labels;
	size_t nlabels;
	struct input *in;
	int nin;
	struct cut_heap heads;  /* inputs by their head event */
	struct cut_calls *open; /* spans open on each thread; user[0] the slot, user[1] the input */
	struct slot *q;
	size_t qcap;
	uint64_t qhead, qtail; /* sequence numbers: slots qhead..qtail-1 are held */
	int64_t next_id, last_out;
	uint64_t written, unsorted, sorted_inputs, spilled, bad;
	uint64_t partial, partial_m, partial_M; /* written without counts; past -m, past -M */
	uint64_t untracked_m, untracked_M;      /* calls not followed: past -m, past -M */
	struct pairs dups;                      /* calls */
	struct gpu_seen *gq; /* a ring of entries gqhead..gqtail-1 in order of ts */
	size_t gqcap;
	uint64_t gqhead, gqtail;
	uint64_t *gbucket; /* [gqcap]: the latest entry of each (pid, corr) hash, or NONE */
	struct pairs gpudups;
	struct cut_buf out;
	bool stop, lost;
} g;

/* ---- reading: clock shift, order check, sorting ---- */

/* Reports a problem with the head of input in as "cutmerge: file:line: ...", a bad line. */
static void __attribute__((format(printf, 2, 3)))
in_warn(const struct input *in, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	warnx("%s:%llu: %s", cut_esc(in->path), (unsigned long long)in->line, cut_esc(msg));
	g.bad++;
}

/* The one value that every input of a merge's header gives for key, into out; "" when
 * they give different ones or any gives none. */
static void
inputs_agree(const char *more, const char *key, char *out, size_t n)
{
	out[0] = '\0';
	if (!more)
		return;
	char *text = NULL;
	if (asprintf(&text, "{%s}", more) < 0)
		err(CUT_EXIT_FATAL, "out of memory");
	json_t *root = json_loads(text, 0, NULL), *ins = json_object_get(root, "inputs");
	const char *one = NULL;
	size_t i;
	json_t *v;
	json_array_foreach(ins, i, v)
	{
		const char *s = json_string_value(json_object_get(v, key));
		if (!s || !*s || (one && strcmp(one, s) != 0)) {
			one = NULL;
			break;
		}
		one = s;
	}
	if (one && strlen(one) < n)
		snprintf(out, n, "%s", one);
	json_decref(root);
	free(text);
}

/* What an input's header says of its host, its tool and its clock. A merge's header names no
 * host of its own: the host its inputs all name, if they do, is the input's. */
static void
read_header(struct input *in, const struct cut_event *ev)
{
	struct cut_meta m;
	if (cut_meta_read(ev, &m) == CUT_META_HEADER) {
		const struct cut_header *h = &m.header;
		snprintf(in->host, sizeof(in->host), "%s", h->host ? h->host : "");
		snprintf(in->tool, sizeof(in->tool), "%s", h->tool ? h->tool : "");
		if (!h->host && strcmp(in->tool, "cutmerge") == 0)
			inputs_agree(h->more, "host", in->host, sizeof(in->host));
		if (strcmp(in->tool, "cutmerge") == 0)
			inputs_agree(h->more, "tool", in->capture, sizeof(in->capture));
		else
			snprintf(in->capture, sizeof(in->capture), "%s", in->tool);
		if (strcmp(in->capture, "cutcapture") != 0 && strcmp(in->capture, "cuthook") != 0)
			in->capture[0] = '\0';
		in->clock = h->monotonic_ns != CUT_ABSENT && h->realtime_ns != CUT_ABSENT;
		in->mono = h->monotonic_ns;
		in->real = h->realtime_ns;
		in->sorted = h->sorted == 1;
		in->header_line = in->line;
	}
	cut_meta_release(&m);
}

/* What an input's trailer (one per process in a file several wrote) says of the bound on
 * the error of its GPU times mapped onto the host clock. */
static void
read_trailer(struct input *in, const struct cut_event *ev)
{
	struct cut_meta m;
	if (cut_meta_read(ev, &m) == CUT_META_TRAILER && m.trailer.gpu_error_ns != CUT_ABSENT &&
	    m.trailer.gpu_error_ns > in->gpu_error_ns)
		in->gpu_error_ns = m.trailer.gpu_error_ns;
	cut_meta_release(&m);
}

/* GPU work's args.submit, the ts of the call that submitted it, moves with it, so that its
 * launch latency stays what it was. */
static void
shift_submit(struct input *in, struct cut_event *ev)
{
	const char *p = cut_args_find(ev->args, "submit");
	int64_t v;
	if (!p || *p == '"' || cut_args_int(ev->args, "submit", &v) < 0 ||
	    __builtin_add_overflow(v, in->shift, &v))
		return;
	const char *end = p + (*p == '-');
	while (*end >= '0' && *end <= '9')
		end++;
	buf_reset(&in->args);
	buf_add(&in->args, ev->args, (size_t)(p - ev->args));
	buf_addi64(&in->args, v);
	buf_adds(&in->args, end);
	ev->args = in->args.s;
}

/* Moves an event onto the reference clock. Returns false, having reported it, when it would
 * land before time 0 or its end past the largest time. */
static bool
shift(struct input *in, struct cut_event *ev)
{
	if (!in->shift) /* the reference, and inputs of its boot */
		return true;
	int64_t dur = ev->has & CUT_HAS_DUR ? ev->dur : 0, ts, end;
	if (__builtin_add_overflow(ev->ts, in->shift, &ts) || ts < 0 ||
	    __builtin_add_overflow(ts, dur, &end)) {
		in_warn(in,
		        "out of range once aligned to the first trace's clock (shift %lld ns): "
		        "left out",
		        (long long)in->shift);
		return false;
	}
	ev->ts += in->shift;
	if (ev->layer == CUT_GPU)
		shift_submit(in, ev);
	return true;
}

/* The next event of an input, from its file or its sorter. */
static int
next_event(struct input *in, struct cut_event *ev)
{
	if (in->sort) {
		int rc = cut_sorter_next(in->sort, ev, &in->line);
		if (rc < 0) {
			warn("%s: sorting", cut_esc(in->path));
			g.lost = true;
		}
		return rc > 0;
	}
	int rc = cut_reader_next(in->rd, ev);
	in->line = cut_reader_line(in->rd);
	if (rc < 0) {
		if (cut_reader_failed(in->rd))
			g.lost = true;
		else
			g.stop = true; /* strict mode */
	}
	return rc > 0;
}

/* The next event of an input with its clock shift applied. */
static int
next_raw(struct input *in, struct cut_event *ev)
{
	while (!g.stop && next_event(in, ev))
		if (shift(in, ev))
			return 1;
	return 0;
}

/* Makes the input's head its next event, or marks it finished. */
static void
advance(struct input *in)
{
	in->has = false;
	if (!in->eof && !g.stop && next_raw(in, &in->ev))
		in->has = true;
	else
		in->eof = true;
	/* An event before one already taken cannot be placed: written where met, uncorrelated. */
	in->late = in->has && in->ev.ts < in->last_ts;
	if (in->late) {
		in_warn(in,
		        "ts %lld is %lld ns before an earlier event, although its header says the "
		        "trace is sorted: written out of order (-S sorts every input)",
		        (long long)in->ev.ts, (long long)(in->last_ts - in->ev.ts));
		g.unsorted++;
	}
	if (in->has && in->ev.ts > in->last_ts)
		in->last_ts = in->ev.ts;
}

/* Reads the rest of an input that does not say it is sorted into a sorter, first its first
 * event; the input is then read from the sorter, in order. */
static void
sort_input(struct input *in, const struct cut_event *first, size_t mem)
{
	if (!(in->sort = cut_sorter_new(mem)))
		err(CUT_EXIT_FATAL, "%s: sorting", cut_esc(in->path));
	struct cut_event ev;
	int rc = 1;
	for (const struct cut_event *e = first; e; e = rc > 0 ? &ev : NULL) {
		if (cut_sorter_add(in->sort, e, cut_reader_line(in->rd)) < 0)
			err(CUT_EXIT_FATAL, "%s: sorting", cut_esc(in->path));
		rc = cut_reader_next(in->rd, &ev);
	}
	if (rc < 0 && cut_reader_failed(in->rd))
		g.lost = true;
	else if (rc < 0)
		g.stop = true;
	g.sorted_inputs += !cut_sorter_was_sorted(in->sort);
	g.spilled += cut_sorter_runs(in->sort) > 0;
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

/* What a held event takes, as -M counts it. */
static size_t
held_bytes(const struct slot *s)
{
	return sizeof(*s) + s->text.cap;
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
 * complete once every input has moved past its end. Past -m events, or -M MiB of them and
 * of the calls open (cut_calls_bytes), the oldest is written at once, without its counts. */
static void
release(int64_t now, bool all)
{
	while (g.qhead < g.qtail) {
		struct slot *s = &g.q[g.qhead % g.qcap];
		bool full_m = g.qtail - g.qhead > g.maxheld;
		bool full_M = g.heldbytes + cut_calls_bytes(g.open) > g.maxbytes;
		if (!all && s->counted && !s->dropped && s->end > now && !full_m && !full_M)
			break;
		if (s->counted && !s->dropped && s->end > now && !all) {
			g.partial++;
			g.partial_m += full_m;
			g.partial_M += !full_m;
		}
		write_slot(s, all || s->end <= now);
		g.heldbytes -= held_bytes(s);
		/* a line of many MiB leaves no buffer of its size behind in the ring */
		if (s->text.cap > 1 << 16)
			buf_free(&s->text);
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
	/* formatted apart (the writer asks for room to spare) and kept at its size, so that
	 * what is held is what -M counts */
	static struct cut_buf line;
	buf_reset(&line);
	cut_event_format(&line, &e);
	s->split = --line.len; /* drop the closing brace */
	if (ev->args) {
		buf_add(&line, ",\"args\":", 8);
		buf_adds(&line, ev->args);
	}
	if (ev->extra && *ev->extra) {
		buf_addc(&line, ',');
		buf_adds(&line, ev->extra);
	}
	buf_add(&line, "}\n", 2);
	if (s->text.cap < line.len + 1 || s->text.cap > 2 * (line.len + 1) + 64) {
		char *t = realloc(s->text.s, line.len + 1);
		if (!t)
			err(CUT_EXIT_FATAL, "held events");
		s->text.s = t;
		s->text.cap = line.len + 1;
	}
	memcpy(s->text.s, line.s, line.len + 1);
	s->text.len = line.len;
	if (line.cap > 1 << 16)
		buf_free(&line);
	g.heldbytes += held_bytes(s);
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
	return strcmp(g.in[in].capture, "cutcapture") == 0;
}

/* Whether two inputs may hold one call twice: they come from different capture paths, or one
 * path is not known (a trace without a header, a merge of both). Two traces of one path have
 * different calls, whatever their ids say (a container's trainer is pid 1 on every host). */
static bool
two_paths(int a, int b)
{
	const char *pa = g.in[a].capture, *pb = g.in[b].capture;
	return !*pa || !*pb || strcmp(pa, pb) != 0;
}

/* Counts a copy of input kept's left out from input dropped. */
static void
pair_count(struct pairs *p, int kept, int dropped)
{
	if (!p->map)
		p->map = idmap_new();
	bool isnew;
	size_t k = idmap_put2(p->map, kept, dropped, &isnew);
	if (k >= p->cap)
		p->v = cut_grow(p->v, &p->cap, k + 1, sizeof(*p->v));
	if (isnew)
		p->v[k] = (struct pair){kept, dropped, 0};
	p->v[k].n++;
	p->total++;
}

/* ---- hosts and ranks ---- */

#define LABELS_MAX (1 << 20)

/* Learns the host and rank that a record of input in says of its process. */
static void
learn_label(const struct cut_event *ev, int in)
{
	const char *host = ev->host && *ev->host ? ev->host : NULL;
	/* bounded whatever the input: a host name is at most 255 bytes, a job has fewer
	 * processes than this (past them, records that say no rank are keyed without one) */
	if (!(ev->has & CUT_HAS_RANK) || ev->pid <= 0 || (host && strlen(host) > 255) ||
	    (idmap_len(g.labelmap) >= LABELS_MAX &&
	     idmap_get2(g.labelmap, in, ev->pid) == IDMAP_NONE))
		return;
	bool isnew;
	size_t k = idmap_put2(g.labelmap, in, ev->pid, &isnew);
	if (k >= g.nlabels)
		g.labels = cut_grow(g.labels, &g.nlabels, k + 1, sizeof(*g.labels));
	struct label *l = &g.labels[k];
	if (isnew) {
		free(l->host);
		*l = (struct label){.host = host ? strdup(host) : NULL, .rank = ev->rank};
		if (host && !l->host)
			err(CUT_EXIT_FATAL, "out of memory");
	} else if (l->rank != ev->rank || (host && (!l->host || strcmp(host, l->host) != 0))) {
		l->mixed = true;
	}
}

/* The host of a record that names none: its process's label's, else its input's, else the
 * one host the other inputs name (an strace import merged with the capture of its run);
 * NULL when none of them is known. */
static const char *
host_for(const struct cut_event *ev, int in, const struct label **lp)
{
	size_t k = ev->pid > 0 ? idmap_get2(g.labelmap, in, ev->pid) : IDMAP_NONE;
	const struct label *l = k == IDMAP_NONE || g.labels[k].mixed ? NULL : &g.labels[k];
	if (lp)
		*lp = l;
	if (l && l->host)
		return l->host;
	return g.in[in].host[0] ? g.in[in].host : g.one_host;
}

/* The event as its thread is known by (cut_calls: host, rank, pid, tid): a record that does
 * not say its host or rank takes its process's, else its input header's host. */
static struct cut_event
thread_key(const struct cut_event *ev, int in)
{
	struct cut_event key = *ev;
	if (ev->has & CUT_HAS_RANK) {
		if (!ev->host || !*ev->host)
			key.host = g.in[in].host[0] ? g.in[in].host : g.one_host;
		return key;
	}
	const struct label *l;
	const char *host = host_for(ev, in, &l);
	if (l && (!ev->host || !*ev->host || (l->host && strcmp(ev->host, l->host) == 0))) {
		key.rank = l->rank;
		key.has |= CUT_HAS_RANK;
	}
	if (!ev->host || !*ev->host)
		key.host = host;
	return key;
}

/* What a call left out as a duplicate hands on to the copy kept in its place. */
struct kept {
	int64_t id, nioctl, ioctl_ns;
	int64_t corr; /* the left-out copy's args.corr (cuthook's link to GPU work); 0: none */
};

/* A call recorded by two inputs of different capture paths: same thread (host, rank, pid,
 * tid), layer and name, starting while the other is open, so the other is its parent o.
 * Returns true when ev is the copy left out; when o is, o is forgotten and *k says what ev
 * (key: its thread key) takes over from it. */
static bool
duplicate(const struct cut_event *key, int in, struct cut_span *o, struct kept *k)
{
	int other = (int)o->user[1];
	struct slot *s = held(o->user[0]);
	if (preference(in) <= preference(other) || !s) {
		pair_count(&g.dups, other, in);
		return true;
	}
	pair_count(&g.dups, in, other);
	s->dropped = true;
	*k = (struct kept){o->id, s->nioctl, s->ioctl_ns, 0};
	const char *c = strstr(s->text.s + s->split, "\"corr\":");
	if (c)
		k->corr = strtoll(c + 7, NULL, 10);
	cut_calls_close(g.open, key, o);
	return false;
}

/* An ioctl counts in the innermost driver call around it (its parent p when it has one: the
 * api layer comes first) and in the innermost runtime call around it. */
static void
count_ioctl(const struct cut_event *key, const struct cut_event *ev, struct cut_span *p)
{
	struct cut_span *calls[2] = {p && p->layer == CUT_API ? p : NULL,
	                             cut_calls_within(g.open, key, CUT_RUNTIME)};
	for (int i = 0; i < 2; i++) {
		struct slot *s = calls[i] ? held(calls[i]->user[0]) : NULL;
		if (s) {
			s->nioctl++;
			s->ioctl_ns += ev->has & CUT_HAS_DUR ? ev->dur : 0;
		}
	}
}

/* ---- GPU work recorded twice ---- */

/* Two records of GPU work whose starts, and ends, are this close are one piece of work, if
 * the rest agrees. The hook's GPU times are multiples of 32 ns and copies of one recording
 * are equal; work with the same corr on the same stream is not 1 us apart unless it is
 * the same work. */
#define GPU_SAME_NS 1000
#define NONE UINT64_MAX

static size_t
gpu_bucket(int64_t pid, int64_t corr, size_t n)
{
	uint64_t h = (uint64_t)pid * 0x9e3779b97f4a7c15u ^ (uint64_t)corr * 0xc2b2ae3d27d4eb4fu;
	return (size_t)(h ^ h >> 29) & (n - 1);
}

/* Makes room for one more entry: the ring doubles and the buckets are built again. */
static void
gpu_grow(void)
{
	size_t cap = g.gqcap ? g.gqcap * 2 : 256;
	struct gpu_seen *q = calloc(cap, sizeof(*q));
	uint64_t *b = malloc(cap * sizeof(*b));
	if (!q || !b)
		err(CUT_EXIT_FATAL, "gpu work");
	for (uint64_t i = g.gqhead; i < g.gqtail; i++) {
		q[i % cap] = g.gq[i % g.gqcap];
		g.gq[i % g.gqcap].text = (struct cut_buf){0};
	}
	for (size_t i = 0; i < g.gqcap; i++)
		buf_free(&g.gq[i].text);
	for (size_t i = 0; i < cap; i++)
		b[i] = NONE;
	/* in order, so each bucket's chain runs from the latest entry to older ones */
	for (uint64_t i = g.gqhead; i < g.gqtail; i++) {
		struct gpu_seen *e = &q[i % cap];
		size_t k = gpu_bucket(e->pid, e->corr, cap);
		e->next = b[k];
		b[k] = i;
	}
	free(g.gq);
	free(g.gbucket);
	g.gq = q;
	g.gbucket = b;
	g.gqcap = cap;
}

static bool
gpu_same(const struct gpu_seen *e, const struct cut_event *ev, const char *host, int64_t stream,
         int64_t device, int64_t rank)
{
	const char *cat = ev->cat ? ev->cat : "";
	int64_t end = cut_event_end(ev);
	return e->pid == ev->pid && llabs(e->ts - ev->ts) <= GPU_SAME_NS &&
	       llabs(e->end - end) <= GPU_SAME_NS && e->stream == stream && e->device == device &&
	       strcmp(e->text.s + e->name, ev->name) == 0 && strcmp(e->text.s + e->cat, cat) == 0 &&
	       (!*host || !e->text.s[0] || strcmp(e->text.s, host) == 0) &&
	       (rank == CUT_ABSENT || e->rank == CUT_ABSENT || e->rank == rank);
}

/* Whether ev, GPU work of input in, is a copy of work an earlier input already gave (the
 * same recording twice, or a trace that holds it merged with the file it came from): same
 * host and rank when both are known, pid, args.corr, name, cat, args.stream and args.device, its
 * start and end within GPU_SAME_NS. Counts the copy left out; remembers ev otherwise. Work without
 * corr is never taken for a copy. Entries are forgotten once the merge is GPU_SAME_NS past
 * them, so memory follows the work in that window, not the length of the traces. */
static bool
gpu_duplicate(const struct cut_event *ev, int in)
{
	int64_t corr, stream = CUT_ABSENT, device = CUT_ABSENT;
	if (cut_args_int(ev->args, "corr", &corr) < 0)
		return false;
	if (cut_args_int(ev->args, "stream", &stream) < 0)
		stream = CUT_ABSENT;
	if (cut_args_int(ev->args, "device", &device) < 0)
		device = CUT_ABSENT;
	const struct label *l = NULL;
	const char *host = ev->host && *ev->host ? ev->host : host_for(ev, in, &l);
	if (host == g.one_host && (!l || !l->host) && !g.in[in].host[0])
		host = NULL; /* only guessed: not compared */
	if (!host)
		host = "";
	struct cut_event key = thread_key(ev, in);
	int64_t rank = key.has & CUT_HAS_RANK ? key.rank : CUT_ABSENT;
	while (g.gqhead < g.gqtail && g.gq[g.gqhead % g.gqcap].ts < ev->ts - GPU_SAME_NS) {
		/* a name of many MiB leaves no buffer of its size behind in the ring */
		struct cut_buf *t = &g.gq[g.gqhead++ % g.gqcap].text;
		if (t->cap > 1 << 12)
			buf_free(t);
	}
	if (g.gqcap) {
		size_t k = gpu_bucket(ev->pid, corr, g.gqcap);
		for (uint64_t i = g.gbucket[k]; i != NONE && i >= g.gqhead;) {
			const struct gpu_seen *e = &g.gq[i % g.gqcap];
			if (e->corr == corr && e->in != in &&
			    gpu_same(e, ev, host, stream, device, rank)) {
				pair_count(&g.gpudups, e->in, in);
				return true;
			}
			i = e->next;
		}
	}
	if (g.gqtail - g.gqhead == g.gqcap)
		gpu_grow();
	uint64_t i = g.gqtail++;
	struct gpu_seen *e = &g.gq[i % g.gqcap];
	size_t k = gpu_bucket(ev->pid, corr, g.gqcap);
	struct cut_buf text = e->text;
	*e = (struct gpu_seen){.ts = ev->ts,
	                       .end = cut_event_end(ev),
	                       .pid = ev->pid,
	                       .corr = corr,
	                       .stream = stream,
	                       .device = device,
	                       .rank = rank,
	                       .in = in,
	                       .next = g.gbucket[k]};
	buf_reset(&text);
	buf_add(&text, host, strlen(host) + 1);
	e->name = text.len;
	buf_add(&text, ev->name, strlen(ev->name) + 1);
	e->cat = text.len;
	buf_add(&text, ev->cat ? ev->cat : "", strlen(ev->cat ? ev->cat : "") + 1);
	e->text = text;
	g.gbucket[k] = i;
	return false;
}

/* Handles one event in merged order: its parent, its id, the ioctls of the calls around it,
 * duplicates; then writes it or holds it back. An event out of order is not correlated. */
static void
merge_one(struct cut_event *ev, int in)
{
	bool late = g.in[in].late, span = cut_layer_rank(ev->layer) > 0;
	bool counted = ev->layer == CUT_API || ev->layer == CUT_RUNTIME;
	struct kept k = {0};
	learn_label(ev, in);
	if (ev->layer == CUT_GPU && !late && gpu_duplicate(ev, in))
		return;
	if (ev->layer == CUT_META && strcmp(ev->name, "trailer") == 0)
		read_trailer(&g.in[in], ev);
	ev->has &= ~(CUT_HAS_PARENT | CUT_HAS_NIOCTL | CUT_HAS_ID);
	ev->pname = NULL;
	struct cut_event key = thread_key(ev, in);
	/* Records of different hosts go out with their host, so that their pids stay apart. */
	if (g.label_hosts && (!ev->host || !*ev->host))
		ev->host = host_for(ev, in, NULL);
	/* p and pname point into the tracker: used before the next cut_calls_open */
	struct cut_span *p = late ? NULL : cut_calls_parent(g.open, &key);
	if (p && counted && p->layer == ev->layer && (int)p->user[1] != in &&
	    two_paths(in, (int)p->user[1]) && strcmp(cut_span_name(p), ev->name) == 0) {
		if (duplicate(&key, in, p, &k))
			return;
		p = cut_calls_parent(g.open, &key);
	}
	if (k.corr > 0 && !cut_args_find(ev->args, "corr")) {
		/* The copy kept takes over the left-out one's link to its GPU work. */
		static struct cut_buf a;
		buf_reset(&a);
		if (ev->args && strlen(ev->args) > 2) {
			buf_add(&a, ev->args, strlen(ev->args) - 1);
			buf_addc(&a, ',');
		} else
			buf_addc(&a, '{');
		buf_adds(&a, "\"corr\":");
		buf_addi64(&a, k.corr);
		buf_addc(&a, '}');
		ev->args = a.s;
	}
	if (p) {
		ev->parent = p->id;
		ev->pname = cut_span_name(p);
		ev->has |= CUT_HAS_PARENT;
	}
	if (!late && ev->layer == CUT_IOCTL && is_ioctl_call(ev))
		count_ioctl(&key, ev, p);
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
	if (!span || late)
		return;
	key.id = ev->id;
	key.has |= CUT_HAS_ID;
	uint64_t refused = cut_calls_refused(g.open);
	struct cut_span *o = cut_calls_open(g.open, &key);
	if (o) {
		o->user[0] = seq;
		o->user[1] = (uint64_t)in;
	} else if (cut_calls_refused(g.open) > refused) {
		/* not followed (past -m or -M): nothing gets it as parent, its ioctls are not
		 * counted */
		struct slot *s = held(seq);
		if (s && s->counted) {
			s->counted = false;
			g.partial++;
		}
		if (cut_calls_spans(g.open) >= g.maxheld)
			g.untracked_m++;
		else
			g.untracked_M++;
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
		    __builtin_sub_overflow(off, ref_off, &shift) || shift == INT64_MIN) {
			warnx("%s:%llu: clock out of range against %s's: not aligned",
			      cut_esc(in->path), (unsigned long long)in->header_line,
			      cut_esc(ref->path));
			g.bad++;
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
	/* one host for all: a merge of it and another host's trace still knows whose it is */
	m.header.host = g.one_host;
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

static int
by_inputs(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;
	if (x->kept != y->kept)
		return x->kept < y->kept ? -1 : 1;
	return (x->dropped > y->dropped) - (x->dropped < y->dropped);
}

/* One line per pair of inputs that recorded the same things: n of them, whose were kept;
 * in the order of the inputs kept, then left out. */
static void
report_dups(struct pairs *p, const char *what)
{
	size_t n = p->map ? idmap_span(p->map) : 0;
	if (!n)
		return;
	qsort(p->v, n, sizeof(*p->v), by_inputs);
	for (size_t i = 0; i < n; i++) {
		int k = p->v[i].kept, d = p->v[i].dropped;
		warnx("%llu %s were recorded in both %s%s%s%s and %s%s%s%s: kept those of %s",
		      (unsigned long long)p->v[i].n, what, cut_esc(g.in[k].path),
		      g.in[k].tool[0] ? " (" : "", cut_esc(g.in[k].tool),
		      g.in[k].tool[0] ? ")" : "", cut_esc(g.in[d].path),
		      g.in[d].tool[0] ? " (" : "", cut_esc(g.in[d].tool),
		      g.in[d].tool[0] ? ")" : "", cut_esc(g.in[k].path));
	}
}

static void
trailer(void)
{
	uint64_t dups = g.dups.total, gpudups = g.gpudups.total;
	struct cut_buf more = {0};
	struct cut_meta m;
	cut_meta_init(&m, CUT_META_TRAILER);
	m.trailer.events = (int64_t)g.written;
	buf_addf(&more,
	         "\"duplicates\":%llu,\"gpu_duplicates\":%llu,\"unsorted\":%llu,"
	         "\"partial\":%llu,\"sorted_inputs\":%llu",
	         (unsigned long long)dups, (unsigned long long)gpudups,
	         (unsigned long long)g.unsorted, (unsigned long long)g.partial,
	         (unsigned long long)g.sorted_inputs);
	/* The GPU clock bound of each input that stated one, and the largest as the trailer's
	 * own gpu.error_ns: the merge moves GPU work with its trace, so the bounds stand. */
	bool gpu = false;
	for (int i = 0; i < g.nin; i++)
		if (g.in[i].gpu_error_ns >= 0 &&
		    (!gpu || g.in[i].gpu_error_ns > m.trailer.gpu_error_ns))
			gpu = true, m.trailer.gpu_error_ns = g.in[i].gpu_error_ns;
	if (gpu) {
		buf_adds(&more, ",\"inputs\":[");
		for (int i = 0; i < g.nin; i++) {
			buf_adds(&more, i ? ",{" : "{");
			buf_addkv_str(&more, "file", g.in[i].path);
			if (g.in[i].gpu_error_ns >= 0)
				buf_addkv_int(&more, "gpu_error_ns", g.in[i].gpu_error_ns);
			buf_addc(&more, '}');
		}
		buf_addc(&more, ']');
	}
	m.trailer.more = more.s;
	write_meta(g.last_out, &m);
	buf_free(&more);
	cut_write_buf(&g.out);
	report_dups(&g.dups, "calls");
	report_dups(&g.gpudups, "GPU events");
	if (g.partial_m)
		warnx("%llu calls were written without nioctl/ioctl_ns: more than %zu events "
		      "were held back while they were open (raise -m)",
		      (unsigned long long)g.partial_m, g.maxheld);
	if (g.partial_M)
		warnx("%llu calls were written without nioctl/ioctl_ns: more than %zu MiB of "
		      "events held back and calls open while they were open (raise -M)",
		      (unsigned long long)g.partial_M, g.maxbytes >> 20);
	if (g.untracked_m)
		warnx("%llu calls and ranges were not followed: more than %zu were open at once "
		      "(raise -m): events inside them got no parent from them",
		      (unsigned long long)g.untracked_m, g.maxheld);
	if (g.untracked_M)
		warnx(
		    "%llu calls and ranges were not followed: more than %zu MiB of them were open "
		    "at once (raise -M): events inside them got no parent from them",
		    (unsigned long long)g.untracked_M, g.maxbytes >> 20);
}

/* Opens the inputs, reads each one's first record (its header: clock, tool, whether it is
 * sorted), reads the ones not known to be sorted whole into a sorter, aligns the clocks and
 * fills the heap of heads. */
static void
open_inputs(int argc, char *argv[])
{
	g.in = calloc((size_t)argc, sizeof(*g.in));
	struct cut_event *first = calloc((size_t)argc, sizeof(*first));
	bool *have = calloc((size_t)argc, sizeof(*have));
	if (!g.in || !first || !have)
		err(CUT_EXIT_FATAL, "inputs");
	for (int i = 0; i < argc; i++) {
		struct input *in = &g.in[g.nin];
		in->path = strcmp(argv[i], "-") == 0 ? "<stdin>" : argv[i];
		if (!(in->rd = cut_reader_open(argv[i], 0))) {
			warn("%s", cut_esc(in->path));
			g.lost = true;
			continue;
		}
		in->last_ts = INT64_MIN;
		in->gpu_error_ns = -1;
		int rc = cut_reader_next(in->rd, &first[g.nin]);
		in->line = cut_reader_line(in->rd);
		if (rc < 0 && cut_reader_failed(in->rd))
			g.lost = true;
		else if (rc < 0)
			g.stop = true;
		have[g.nin] = rc > 0;
		if (rc > 0)
			read_header(in, &first[g.nin]);
		g.nin++;
	}
	/* Memory for sorting, shared by the inputs that need it. */
	int unsorted = 0;
	for (int i = 0; i < g.nin; i++)
		unsorted += have[i] && (g.sort_all || !g.in[i].sorted);
	size_t mem = cut_sort_memory() / (unsorted ? (size_t)unsorted : 1);
	if (mem < 1u << 20)
		mem = 1u << 20;
	for (int i = 0; i < g.nin; i++)
		if (have[i] && (g.sort_all || !g.in[i].sorted) && !g.stop)
			sort_input(&g.in[i], &first[i], mem);
	align_clocks();
	const char *host = NULL;
	for (int i = 0; i < g.nin; i++)
		if (g.in[i].host[0] && !host)
			host = g.in[i].host;
		else if (g.in[i].host[0] && strcmp(g.in[i].host, host) != 0)
			g.label_hosts = true;
	g.one_host = g.label_hosts ? NULL : host;
	for (int i = 0; i < g.nin; i++) {
		struct input *in = &g.in[i];
		if (in->sort || !have[i] || !shift(in, &first[i])) {
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
}

int
main(int argc, char *argv[])
{
	int ch, status = CUT_EXIT_OK;
	char *end;
	static char *stdin_only[] = {"-"};

	cut_std_args(argc, argv, usage);

	g.align = true;
	g.maxheld = 1000000;
	g.maxbytes = (size_t)256 << 20;
	while ((ch = getopt(argc, argv, "AM:Sm:w:")) != -1) {
		switch (ch) {
		case 'A': g.align = false; break;
		case 'M':
			errno = 0;
			g.maxbytes = (size_t)strtoul(optarg, &end, 10);
			if (*optarg < '0' || *optarg > '9' || *end || g.maxbytes < 1 || errno ||
			    g.maxbytes > SIZE_MAX >> 20)
				errx(CUT_EXIT_FATAL, "-M: not a positive number of MiB: %s",
				     cut_esc(optarg));
			g.maxbytes <<= 20;
			break;
		case 'S': g.sort_all = true; break;
		case 'm':
			g.maxheld = strtoul(optarg, &end, 10);
			if (*optarg < '0' || *optarg > '9' || *end || g.maxheld < 1)
				errx(CUT_EXIT_FATAL, "-m: not a positive count: %s",
				     cut_esc(optarg));
			break;
		case 'w': /* a reorder window before inputs were sorted as needed: obsolete */
			if (cut_parse_duration(optarg) < 0)
				errx(CUT_EXIT_FATAL,
				     "-w: not a duration (ns, or with s, ms, us, ns): %s",
				     cut_esc(optarg));
			break;
		default: usage();
		}
	}
	argc -= optind;
	argv += optind;
	if (!argc)
		argc = 1, argv = stdin_only;
	/* an input named twice: its events would all be taken for duplicates of each other */
	cut_check_inputs(argc, argv, CUT_INPUTS_DISTINCT);

	g.open = cut_calls_new(CUT_CALLS_HOLDERS | CUT_CALLS_NAMES);
	cut_calls_limit(g.open, g.maxheld, g.maxbytes);
	g.labelmap = idmap_new();
	heap_init(&g.heads, sizeof(struct head));
	open_inputs(argc, argv);

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

	for (int i = 0; i < g.nin; i++) {
		if (cut_reader_close(g.in[i].rd))
			status = CUT_EXIT_BADINPUT;
		cut_sorter_free(g.in[i].sort);
		buf_free(&g.in[i].args);
	}
	if (g.stop || g.bad)
		status = CUT_EXIT_BADINPUT;
	if (g.lost)
		status = CUT_EXIT_LOST;
	for (size_t i = 0; i < g.qcap; i++)
		buf_free(&g.q[i].text);
	free(g.q);
	cut_calls_free(g.open);
	for (size_t i = 0; i < g.nlabels; i++)
		free(g.labels[i].host);
	free(g.labels);
	idmap_free(g.labelmap);
	free(g.in);
	heap_free(&g.heads);
	for (struct pairs *p = &g.dups; p; p = p == &g.dups ? &g.gpudups : NULL) {
		idmap_free(p->map);
		free(p->v);
	}
	for (size_t i = 0; i < g.gqcap; i++)
		buf_free(&g.gq[i].text);
	free(g.gq);
	free(g.gbucket);
	buf_free(&g.out);
	return cut_finish_output(status);
}
