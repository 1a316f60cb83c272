/* cutmerge: one ts-ordered stream from several traces, with every event tied to what holds it
 * on its thread (an ioctl to its driver call, a driver call to its runtime call, a call to its
 * NVTX range), and every runtime and driver call told how many ioctls it made and how long it
 * spent in them; the hosts of a job put on one clock by the ends of their collectives. */
#include <err.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "args.h"
#include "calls.h"
#include "classify.h"
#include "cut.h"
#include "event.h"
#include "heap.h"
#include "idmap.h"
#include "meta.h"
#include "parse.h"
#include "reader.h"
#include "sort.h"
#include "strtab.h"
#include "text.h"
#include "units.h"

static const struct cut_opt_help opts[] = {
    {"-a how", "align the inputs' clocks by collectives (default), clock or none"},
    {"-A", "the same as -a none"},
    {"-M MiB", "hold at most MiB mebibytes of events back and of calls open (256)"},
    {"-m held", "hold at most held events back and calls open (1000000)"},
    {"-S", "sort every input whole, also those whose header says they are sorted"},
    {NULL, NULL},
};

static void
usage(void)
{
	fprintf(stderr, "usage: cutmerge [-AS] [-a how] [-M MiB] [-m held] [file ...]\n");
	exit(CUT_EXIT_FATAL);
}

/* How clocks are aligned (-a). */
enum align { ALIGN_NONE, ALIGN_CLOCK, ALIGN_COLLECTIVES };

/* An input in the heap of inputs by their next event. */
struct head {
	struct cut_heap_key key; /* see head_key() */
	int in;
};

/* An event held in an input's reorder window, and its place in the window's heap. */
struct wev {
	struct cut_event ev;
	uint64_t line;
	size_t cost;         /* WINDOW_COST of its line */
	struct cut_buf text; /* its strings */
};
struct wkey {
	struct cut_heap_key key; /* ts, order read */
	uint32_t slot;
};

struct input {
	struct cut_reader *rd;
	struct cut_sorter *sort; /* the rest of the input, sorted: it was out of order there */
	const char *path;
	struct cut_event ev; /* the head, valid while has */
	uint64_t line;       /* of the head in its file */
	bool has, eof, late, sorted;
	int64_t last_ts;
	bool clock;
	int64_t mono, real;
	uint64_t header_line; /* of the header the clock and host come from */
	/* host: the header's (a merge's: its inputs' one host); tool: the header's; capture:
	 * the capture path its calls come from (a merge's: its inputs' one tool), "" unknown */
	char host[128], tool[32], capture[32];
	int64_t gpu_error_ns; /* the largest GPU clock bound of its trailers; -1: none */
	struct cut_buf args;  /* the head's args when moving it rewrote them */
	int64_t shift_ns;     /* how far its first record moved */
	/* its clock: the boot group of its file, the unit of its records that name no other
	 * host; multi: some name another (a merge's records of several hosts) */
	int group, unit;
	bool multi, aligned;   /* aligned: a merge whose hosts were put on one clock already */
	const char *last_host; /* the last other host a record named, and its unit */
	int last_unit;
	/* its order, as the first reading found it: events from hold_line on pass through the
	 * window; from break_line on, or past break_at (break_min moved), they are sorted */
	bool disorder;
	uint64_t hold_line, break_line;
	int64_t break_min, break_at;
	struct cut_event first; /* read with the header, not yet taken */
	uint64_t first_line;
	size_t first_len, cost; /* its line's bytes; WINDOW_COST of the last event read */
	bool have_first, rdone;
	uint64_t errors; /* bad lines its reader of the first reading counted (standard input) */
	/* the window: events in wv's slots, ordered by win; wfree: free slots; wout: the slot
	 * handed out last, freed on the next call */
	struct cut_heap win;
	struct wev *wv;
	uint32_t *wfree, nfree, wout;
	size_t wcap, wbytes;
};

/* GPU work seen within the last GPU_SAME_NS, so that a copy of it from another input (the
 * same recording given twice) is recognised: by (pid, corr) in calls.h's index. */
struct gpu_seen {
	struct cut_submit k;
	int64_t ts, end, stream, device, rank; /* the last three: CUT_ABSENT if absent */
	int in;
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

/* A clock of the merge: the records of one host in the files of one boot of it (inputs whose
 * headers name the host and whose clock offsets agree to SAME_BOOT_NS: a group), or those of
 * a host that records name in a file of several hosts (a merge not aligned). Its records move
 * onto the reference's clock by the group's clock-pair shift, then by the collectives' fit. */
struct unit {
	int group, in; /* its boot group, and the group's first input */
	size_t host;   /* in g.hosts; "" for none */
	int64_t shift; /* the group's clock-pair shift */
	int64_t a, x0; /* the fit: t + shift moves on by a + b (t + shift - x0) */
	double b;
	const char *method; /* "reference", "collectives", "clock", "none" */
	int alias;          /* the unit whose clock it goes by, or -1 (see alias_units) */
	bool drift;         /* the fit resolved a drift (else b is 0) */
	uint64_t instances, used, kernels;
	int64_t span, residual;
};

/* A collective kernel, as the first reading keeps it: its participant (a rank, else a
 * process, of a unit) and name, its start and end. */
struct coll {
	int64_t start, end;
	uint32_t part, name;
};

/* The kernels kept of one participant at most: enough for days of steps. */
#define PART_MAX (1u << 18)

static struct {
	size_t maxheld, maxbytes, heldbytes;
	enum align align;
	bool sort_all;
	struct cut_strtab *hosts;  /* host names of units, "" first */
	struct cut_idmap *unitmap; /* (group, host) -> unit */
	struct unit *units;
	size_t nunits, capunits;
	int anchor;      /* the unit the others are fitted to; -1: none */
	int64_t *gshift; /* per group: its clock-pair shift */
	bool *gpair;     /* per group: it has a clock pair, and the shift came from it */
	int ngroups;
	struct coll *coll; /* collective kernels */
	size_t ncoll, capcoll;
	struct cut_idmap *partmap;  /* (unit, rank or -1 - pid) -> participant */
	uint32_t *partunit, *partn; /* per participant: its unit, its kernels kept */
	size_t capparts;
	struct cut_strtab *collnames;
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
	struct cut_submits *gpu;                /* struct gpu_seen, in order of ts */
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
		cut_out_of_memory();
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

/* Whether a merge's header says it left the clocks as they were (-a none). */
static bool
merged_unaligned(const char *more)
{
	return more && strstr(more, "\"align\":\"none\"") != NULL;
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
		/* a merge put its hosts on one clock unless it was told not to */
		in->aligned = strcmp(in->tool, "cutmerge") == 0 && !merged_unaligned(h->more);
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

/* ---- moving records onto the reference's clock ---- */

/* The unit of a record of input in: its input's, unless the input holds records of several
 * hosts and this one names another. */
static const struct unit *
unit_of(struct input *in, const struct cut_event *ev)
{
	if (!in->multi || !ev->host || !*ev->host || strcmp(ev->host, in->host) == 0)
		return &g.units[in->unit];
	if (in->last_host && strcmp(in->last_host, ev->host) == 0)
		return &g.units[in->last_unit];
	size_t h = strtab_find(g.hosts, ev->host);
	size_t k = h == (size_t)-1 ? IDMAP_NONE : idmap_get2(g.unitmap, in->group, (int64_t)h);
	if (k == IDMAP_NONE)
		return &g.units[in->unit];
	in->last_host = strtab_key(g.hosts, h);
	in->last_unit = (int)k;
	return &g.units[k];
}

/* Whether unit u's records move at all. */
static bool
moves(const struct unit *u)
{
	return u->shift || u->a || u->b != 0;
}

/* Where time t of unit u's clock lands on the reference's: its group's shift, then the fit.
 * False when that is past the range of a time. */
static bool
map_time(const struct unit *u, int64_t t, int64_t *out)
{
	int64_t x, d, c;
	if (__builtin_add_overflow(t, u->shift, &x))
		return false;
	if (u->a || u->b != 0) {
		if (__builtin_sub_overflow(x, u->x0, &d))
			return false;
		double m = u->b * (double)d;
		if (!(fabs(m) < 9e18) || __builtin_add_overflow(u->a, (int64_t)llround(m), &c) ||
		    __builtin_add_overflow(x, c, &x))
			return false;
	}
	*out = x;
	return true;
}

/* Members of meta records that hold times of their trace's clock, moved with them: a
 * header's clock.monotonic_ns (its pair then still reads one instant, on the merge's clock),
 * a slice's window (cutslice(1)). GPU work's args.submit is moved apart, by move_submit. */
static bool
time_key(const struct cut_event *ev, const char *k, size_t n)
{
#define KEY_IS(s) (n == sizeof(s) - 1 && memcmp(k, s, n) == 0)
	if (strcmp(ev->name, "header") == 0)
		return KEY_IS("monotonic_ns");
	if (strcmp(ev->name, "slice") == 0)
		return KEY_IS("origin_ns") || KEY_IS("from_ns") || KEY_IS("to_ns");
	return false;
#undef KEY_IS
}

static const char *
skip_ws(struct cut_buf *out, const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		buf_addc(out, *p++);
	return p;
}

/* Copies the JSON value at p to out, the integers of the members time_key names (at any
 * depth) moved by unit u (time: the value is one). Returns what follows the value, or NULL
 * when the text is not JSON. */
static const char *
move_json(struct cut_buf *out, const char *p, const struct cut_event *ev, const struct unit *u,
          bool time)
{
	const char *start = p;
	if (*p == '"') {
		for (p++; *p && *p != '"'; p++)
			if (*p == '\\' && !*++p)
				return NULL;
		if (!*p)
			return NULL;
		buf_add(out, start, (size_t)(++p - start));
		return p;
	}
	if (*p == '{' || *p == '[') {
		char close = *p == '{' ? '}' : ']';
		buf_addc(out, *p++);
		p = skip_ws(out, p);
		if (*p == close) {
			buf_addc(out, *p);
			return p + 1;
		}
		for (;;) {
			bool t = false;
			if (close == '}') {
				const char *k = p;
				if (*p != '"' || !(p = move_json(out, p, ev, u, false)))
					return NULL;
				t = time_key(ev, k + 1, (size_t)(p - k - 2));
				p = skip_ws(out, p);
				if (*p != ':')
					return NULL;
				buf_addc(out, *p++);
				p = skip_ws(out, p);
			}
			if (!(p = move_json(out, p, ev, u, t)))
				return NULL;
			p = skip_ws(out, p);
			if (*p == close) {
				buf_addc(out, *p);
				return p + 1;
			}
			if (*p != ',')
				return NULL;
			buf_addc(out, *p++);
			p = skip_ws(out, p);
		}
	}
	while (*p && !strchr(",}] \t\r\n", *p))
		p++;
	if (p == start)
		return NULL;
	char *end;
	errno = 0;
	long long v = strtoll(start, &end, 10);
	int64_t m;
	if (time && end == p && !errno && map_time(u, v, &m))
		buf_addi64(out, m);
	else
		buf_add(out, start, (size_t)(p - start));
	return p;
}

/* GPU work's args.submit, the ts of the call that submitted it, moves with it, so that its
 * launch latency stays what it was. */
static void
move_submit(struct input *in, const struct unit *u, struct cut_event *ev)
{
	const char *p = cut_args_find(ev->args, "submit");
	int64_t v;
	if (!p || *p == '"' || cut_args_int(ev->args, "submit", &v) < 0 || !map_time(u, v, &v))
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

/* Moves an event onto the reference clock: its start and end (a drift stretches it), and the
 * times its args hold. Returns false, having reported it, when it would land before time 0
 * or its end past the largest time. */
static bool
move(struct input *in, struct cut_event *ev)
{
	const struct unit *u = unit_of(in, ev);
	if (!moves(u))
		return true;
	int64_t ts, end = 0, dur = ev->has & CUT_HAS_DUR ? ev->dur : 0;
	if (!map_time(u, ev->ts, &ts) || ts < 0 || __builtin_add_overflow(ev->ts, dur, &end) ||
	    !map_time(u, end, &end)) {
		in_warn(in,
		        "out of range once aligned to the first trace's clock (shift %lld ns): "
		        "left out",
		        (long long)(u->shift + u->a));
		return false;
	}
	ev->ts = ts;
	if (ev->has & CUT_HAS_DUR)
		ev->dur = end - ts;
	if (ev->layer == CUT_GPU) {
		move_submit(in, u, ev);
	} else if (ev->layer == CUT_META && ev->args &&
	           (strcmp(ev->name, "header") == 0 || strcmp(ev->name, "slice") == 0)) {
		static struct cut_buf a;
		buf_reset(&a);
		if (move_json(&a, ev->args, ev, u, false)) {
			buf_reset(&in->args);
			buf_add(&in->args, a.s, a.len);
			ev->args = in->args.s;
		}
	}
	return true;
}

/* ---- reading: the window, sorting what is out of order ---- */

/* How far an input may be out of order and still be put in order as it streams: the window
 * holds at most this many events, and at most WINDOW_BYTES of them, each counted as its line
 * and WINDOW_COST (about what its copy takes); past either it lets go of its least. */
#define WINDOW_EVENTS 16384
#define WINDOW_BYTES ((size_t)8 << 20)
#define WINDOW_COST(len) ((size_t)(len) + 160)
#define NO_SLOT UINT32_MAX

/* The next event of an input's file, moved onto the merge's clock (the one read with the
 * header first). Returns 1, or 0 at the end or when reading must stop. */
static int
read_moved(struct input *in, struct cut_event *ev)
{
	while (!g.stop) {
		if (in->have_first) {
			*ev = in->first;
			in->line = in->first_line;
			in->cost = WINDOW_COST(in->first_len);
			in->have_first = false;
		} else {
			int rc = cut_reader_next(in->rd, ev);
			in->line = cut_reader_line(in->rd);
			in->cost = WINDOW_COST(cut_reader_line_bytes(in->rd));
			if (rc < 0 && cut_reader_failed(in->rd))
				g.lost = true;
			else if (rc < 0)
				g.stop = true; /* strict mode */
			if (rc <= 0)
				return 0;
		}
		if (move(in, ev))
			return 1;
	}
	return 0;
}

/* A copy of ev in slot w, its strings in the slot's buffer. */
static void
copy_event(struct wev *w, const struct cut_event *ev, uint64_t line)
{
	const char *src[6] = {ev->host, ev->name, ev->cat, ev->pname, ev->args, ev->extra};
	size_t off[6];
	buf_reset(&w->text);
	for (int k = 0; k < 6; k++)
		if (src[k]) {
			off[k] = w->text.len;
			buf_add(&w->text, src[k], strlen(src[k]) + 1);
		}
	w->ev = *ev;
	w->line = line;
	const char **dst[6] = {&w->ev.host,  &w->ev.name, &w->ev.cat,
	                       &w->ev.pname, &w->ev.args, &w->ev.extra};
	for (int k = 0; k < 6; k++)
		if (src[k])
			*dst[k] = w->text.s + off[k];
}

static void
window_push(struct input *in, const struct cut_event *ev)
{
	if (!in->nfree) {
		size_t old = in->wcap;
		CUT_GROW(in->wv, old + 1, in->wcap);
		in->wfree = cut_xrealloc(in->wfree, in->wcap, sizeof(*in->wfree));
		for (size_t i = in->wcap; i > old; i--)
			in->wfree[in->nfree++] = (uint32_t)(i - 1);
		if (!in->win.size)
			heap_init(&in->win, sizeof(struct wkey));
	}
	uint32_t slot = in->wfree[--in->nfree];
	struct wev *w = &in->wv[slot];
	copy_event(w, ev, in->line);
	w->cost = in->cost;
	in->wbytes += w->cost;
	static uint64_t seq;
	heap_push(&in->win, &(struct wkey){{ev->ts, seq++}, slot});
}

/* Frees the slot of the event handed out last. */
static void
window_release(struct input *in)
{
	if (in->wout == NO_SLOT)
		return;
	struct wev *w = &in->wv[in->wout];
	if (w->text.cap > 1 << 10) /* the slots idle hold a KiB each at most */
		buf_free(&w->text);
	in->wfree[in->nfree++] = in->wout;
	in->wout = NO_SLOT;
}

static int
by_seq(const void *a, const void *b)
{
	const struct wkey *x = a, *y = b;
	return (x->key.seq > y->key.seq) - (x->key.seq < y->key.seq);
}

static size_t sort_mem; /* each sorter's memory */

static void
sort_add(struct input *in, const struct cut_event *ev, uint64_t line)
{
	if (cut_sorter_add(in->sort, ev, line) < 0)
		err(CUT_EXIT_FATAL, "%s: sorting", cut_esc(in->path));
}

/* Sorts the rest of an input, in bounded memory: ev (popped: the least of the window, the
 * rest of which follows it; else read after all the window holds), the window, then what is
 * left of the file. */
static void
start_sort(struct input *in, const struct cut_event *ev, uint64_t line, bool popped)
{
	if (!(in->sort = cut_sorter_new(sort_mem)))
		err(CUT_EXIT_FATAL, "%s: sorting", cut_esc(in->path));
	if (popped)
		sort_add(in, ev, line);
	size_t n = heap_len(&in->win);
	if (n) {
		struct wkey *k = (struct wkey *)in->win.v;
		qsort(k, n, sizeof(*k), by_seq); /* the order read: equal times keep it */
		for (size_t i = 0; i < n; i++)
			sort_add(in, &in->wv[k[i].slot].ev, in->wv[k[i].slot].line);
	}
	if (!popped)
		sort_add(in, ev, line);
	heap_free(&in->win);
	for (size_t i = 0; i < in->wcap; i++)
		buf_free(&in->wv[i].text);
	free(in->wv);
	free(in->wfree);
	in->wv = NULL;
	in->wfree = NULL;
	in->nfree = 0;
	in->wcap = 0;
	in->wout = NO_SLOT;
	in->wbytes = 0;
	struct cut_event e;
	while (read_moved(in, &e))
		sort_add(in, &e, in->line);
	in->rdone = true;
}

/* The next event of an input in order, moved onto the merge's clock: read as it is up to
 * hold_line, through the window from there, from its sorter once the first reading found the
 * rest out of order beyond what the window mends (break_line, break_at). */
static int
next_event(struct input *in, struct cut_event *ev)
{
	window_release(in);
	for (;;) {
		if (in->sort) {
			int rc = cut_sorter_next(in->sort, ev, &in->line);
			if (rc < 0) {
				warn("%s: sorting", cut_esc(in->path));
				g.lost = true;
			}
			return rc > 0;
		}
		size_t n = heap_len(&in->win);
		if (n && (n > WINDOW_EVENTS || in->wbytes > WINDOW_BYTES || in->rdone)) {
			struct wkey k;
			heap_pop(&in->win, &k);
			struct wev *w = &in->wv[k.slot];
			in->wout = k.slot;
			in->wbytes -= w->cost;
			if (w->ev.ts > in->break_at) {
				start_sort(in, &w->ev, w->line, true);
				continue;
			}
			*ev = w->ev;
			in->line = w->line;
			return 1;
		}
		if (in->rdone || !read_moved(in, ev)) {
			in->rdone = true;
			if (!heap_len(&in->win))
				return 0;
			continue;
		}
		if (in->line >= in->break_line || ev->ts > in->break_at) {
			start_sort(in, ev, in->line, false);
			continue;
		}
		if (in->line < in->hold_line)
			return 1;
		window_push(in, ev);
	}
}

/* Makes the input's head its next event, or marks it finished. */
static void
advance(struct input *in)
{
	in->has = false;
	if (!in->eof && !g.stop && next_event(in, &in->ev))
		in->has = true;
	else
		in->eof = true;
	/* An event before one already taken cannot be placed: written where met, uncorrelated. */
	in->late = in->has && in->ev.ts < in->last_ts;
	if (in->late) {
		if (in->sorted && !in->sort)
			in_warn(
			    in,
			    "ts %lld is %lld ns before an earlier event, although its header says "
			    "the trace is sorted: written out of order (-S sorts every input)",
			    (long long)in->ev.ts, (long long)(in->last_ts - in->ev.ts));
		else
			in_warn(
			    in,
			    "ts %lld is %lld ns before an earlier event: written out of order (-S "
			    "sorts every input whole)",
			    (long long)in->ev.ts, (long long)(in->last_ts - in->ev.ts));
		g.unsorted++;
	}
	if (in->has && in->ev.ts > in->last_ts)
		in->last_ts = in->ev.ts;
}

/* ---- the first reading: order, hosts and collectives ---- */

/* The unit of the records of a group that name host (made when new). */
static int
unit_get(int group, const char *host, int in)
{
	size_t h = strtab_intern(g.hosts, host);
	bool isnew;
	size_t k = idmap_put2(g.unitmap, group, (int64_t)h, &isnew);
	if (isnew) {
		CUT_GROW(g.units, k + 1, g.capunits);
		g.units[k] = (struct unit){.group = group,
		                           .in = in,
		                           .host = h,
		                           .shift = g.gshift[group],
		                           .method = "none",
		                           .alias = -1};
		g.nunits = k + 1;
	}
	return (int)k;
}

/* Units at most: past them, records of yet other hosts stay with their input's. */
#define UNITS_MAX 65536

/* The unit of a record of input i that names host (n bytes, not terminated; n 0: none). */
static int
record_unit(int i, const char *host, size_t n)
{
	struct input *in = &g.in[i];
	if (!n || in->aligned || (strlen(in->host) == n && memcmp(host, in->host, n) == 0))
		return in->unit;
	if (in->last_host && strlen(in->last_host) == n && memcmp(host, in->last_host, n) == 0)
		return in->last_unit;
	if (n > 255 || g.nunits >= UNITS_MAX)
		return in->unit;
	char name[256];
	memcpy(name, host, n);
	name[n] = '\0';
	int u = unit_get(in->group, name, i);
	in->multi = true;
	in->last_host = strtab_key(g.hosts, g.units[u].host);
	in->last_unit = u;
	return u;
}

/* Keeps a collective kernel's start and end, for the fit of its unit's clock: the k-th
 * kernel of a name on one participant (a rank, else a process) is one collective with the
 * k-th of that name on every other (cutgaps(1)'s rule). Sends and receives are left out:
 * they end with their peer only, not with every rank. */
static void
add_coll(int u, const struct cut_event *ev)
{
	int64_t end;
	if (ev->layer != CUT_GPU || !(ev->has & CUT_HAS_DUR) || !ev->cat ||
	    strcmp(ev->cat, "kernel") != 0 || __builtin_add_overflow(ev->ts, ev->dur, &end))
		return;
	const char *kind = cut_collective(ev->name);
	if (!kind || strcmp(kind, "SendRecv") == 0 || strcmp(kind, "Send") == 0 ||
	    strcmp(kind, "Recv") == 0)
		return;
	bool isnew;
	size_t p =
	    idmap_put2(g.partmap, u, ev->has & CUT_HAS_RANK ? ev->rank : -1 - ev->pid, &isnew);
	if (p >= g.capparts) {
		size_t cap = g.capparts;
		CUT_GROW(g.partunit, p + 1, cap);
		CUT_GROW(g.partn, p + 1, g.capparts);
	}
	if (isnew) {
		g.partunit[p] = (uint32_t)u;
		g.partn[p] = 0;
	}
	if (g.partn[p] >= PART_MAX)
		return;
	g.partn[p]++;
	CUT_GROW(g.coll, g.ncoll + 1, g.capcoll);
	g.coll[g.ncoll++] =
	    (struct coll){ev->ts, end, (uint32_t)p, (uint32_t)strtab_intern(g.collnames, ev->name)};
	g.units[u].kernels++;
}

/* The first reading's model of the window (next_event): while the input is in order, the
 * events the window would hold in a ring; from the first event out of order, the window as a
 * heap; broken once an event comes before one the window let go. */
struct wts {
	struct cut_heap_key key; /* ts, order read */
	uint64_t line;
	size_t cost;
};
struct scan {
	struct wts *ring;
	size_t head, n, bytes;
	struct cut_heap heap;
	int64_t last, out; /* the latest ts while in order; the latest the window let go */
	bool out_set;
	uint64_t seq;
	enum { SCAN_IN_ORDER, SCAN_WINDOW, SCAN_BROKEN } state;
};

/* One event of the first reading, for the order of input in. The window's rule is the second
 * reading's (by count and cost of lines, least ts first, then order read), so it lets the same
 * events go at the same points; and what it puts in order stays in order without events left
 * out (bad lines): fewer events can only hold the window back less. */
static void
scan_order(struct input *in, struct scan *s, int64_t ts, uint64_t line, size_t cost)
{
	if (s->state == SCAN_BROKEN) {
		if (ts < in->break_min)
			in->break_min = ts;
		return;
	}
	struct wts e = {{ts, s->seq++}, line, cost};
	if (s->state == SCAN_IN_ORDER && (s->seq == 1 || ts >= s->last)) {
		s->ring[(s->head + s->n++) % (WINDOW_EVENTS + 1)] = e;
		s->bytes += cost;
		s->last = ts;
		while (s->n > WINDOW_EVENTS || s->bytes > WINDOW_BYTES) {
			const struct wts *o = &s->ring[s->head];
			s->out = o->key.ts;
			s->out_set = true;
			s->bytes -= o->cost;
			s->head = (s->head + 1) % (WINDOW_EVENTS + 1);
			s->n--;
		}
		return;
	}
	if (s->state == SCAN_IN_ORDER) {
		/* out of order: the window holds the events read since the oldest it kept */
		in->disorder = true;
		in->hold_line = s->n ? s->ring[s->head].line : line;
		heap_init(&s->heap, sizeof(struct wts));
		for (size_t i = 0; i < s->n; i++)
			heap_push(&s->heap, &s->ring[(s->head + i) % (WINDOW_EVENTS + 1)]);
		s->state = SCAN_WINDOW;
	}
	if (s->out_set && ts < s->out) {
		s->state = SCAN_BROKEN;
		in->break_line = line;
		in->break_min = ts;
		return;
	}
	heap_push(&s->heap, &e);
	s->bytes += cost;
	while (heap_len(&s->heap) > WINDOW_EVENTS || s->bytes > WINDOW_BYTES) {
		struct wts o;
		heap_pop(&s->heap, &o);
		s->out = o.key.ts;
		s->out_set = true;
		s->bytes -= o.cost;
	}
}

/* A decimal integer that a comma follows, as cut_event_format writes them. */
static bool
scan_int(const char **pp, const char *e, int64_t *v)
{
	const char *p = *pp, *d;
	bool neg = p < e && *p == '-';
	uint64_t x = 0;
	for (d = p += neg; p < e && *p >= '0' && *p <= '9' && p - d < 19; p++)
		x = x * 10 + (uint64_t)(*p - '0');
	if (p == d || p == e || *p != ',' || x > (uint64_t)INT64_MAX + neg)
		return false;
	*v = neg ? (int64_t)(0 - x) : (int64_t)x;
	*pp = p;
	return true;
}

/* The ts and host of a line that starts as cut_event_format writes it, read without parsing
 * the rest, and whether it is GPU work; false for any other line (parsed whole then). */
static bool
scan_line(const char *p, const char *e, int64_t *ts, const char **host, size_t *hostlen, bool *gpu)
{
#define LIT(s)                                                                                     \
	(e - p >= (ptrdiff_t)sizeof(s) - 1 && memcmp(p, s, sizeof(s) - 1) == 0                     \
	     ? (p += sizeof(s) - 1, true)                                                          \
	     : false)
	int64_t v;
	*host = NULL;
	*hostlen = 0;
	if (!LIT("{\"ts\":") || !scan_int(&p, e, ts) || (LIT(",\"dur\":") && !scan_int(&p, e, &v)))
		return false;
	if (LIT(",\"host\":\"")) {
		*host = p;
		while (p < e && *p != '"' && *p != '\\')
			p++;
		if (p == e || *p != '"')
			return false;
		*hostlen = (size_t)(p++ - *host);
	}
	if ((LIT(",\"rank\":") && !scan_int(&p, e, &v)) || !LIT(",\"pid\":") ||
	    !scan_int(&p, e, &v) || !LIT(",\"tid\":") || !scan_int(&p, e, &v) ||
	    !LIT(",\"layer\":\""))
		return false;
	*gpu = LIT("gpu\"");
	return true;
#undef LIT
}

/* An event of the first reading of input i. */
static void
scan_event(int i, struct scan *s, const struct cut_event *ev, uint64_t line, size_t cost,
           bool order, bool coll)
{
	if (order)
		scan_order(&g.in[i], s, ev->ts, line, cost);
	if (coll)
		add_coll(record_unit(i, ev->host, ev->host ? strlen(ev->host) : 0), ev);
}

/* A temporary file, unlinked at once, for an input that can be read only once. */
static FILE *
spool_new(const struct input *in)
{
	const char *dir = getenv("TMPDIR");
	char *path = NULL;
	if (asprintf(&path, "%s/cutmerge.XXXXXX", dir && *dir ? dir : "/tmp") < 0)
		cut_out_of_memory();
	int fd = mkstemp(path);
	FILE *f = fd < 0 ? NULL : fdopen(fd, "w+");
	if (!f)
		err(CUT_EXIT_FATAL, "%s: keeping it to read twice: %s", cut_esc(in->path),
		    cut_esc(path));
	unlink(path);
	free(path);
	return f;
}

/* The first reading of input i: its order, as the window would put it (order), and the hosts
 * its records name and its collective kernels (coll). An input that can be read only once
 * (standard input, a pipe) is kept in a temporary file as it is read, line for line, and the
 * merge reads that. */
static void
scan_input(int i, bool order, bool coll, bool once)
{
	struct input *in = &g.in[i];
	struct cut_reader *rd = in->rd;
	FILE *spool = NULL;
	uint64_t spooled = 0;
	size_t firstcost = 0;
	if (once) {
		spool = spool_new(in);
		if (in->have_first) {
			/* what was read before its first event was reported then: blank lines */
			static struct cut_buf line;
			buf_reset(&line);
			cut_event_format(&line, &in->first);
			for (spooled = 1; spooled < in->first_line; spooled++)
				putc('\n', spool);
			fprintf(spool, "%s\n", line.s);
			in->first_len = line.len;
			firstcost = WINDOW_COST(line.len);
		}
	} else if (!(rd = cut_reader_open(in->path, CUT_READ_SILENT))) {
		if (order) { /* the second reading says why, if it fails too */
			in->break_line = 0;
			in->break_min = INT64_MIN;
		}
		return;
	}
	struct scan s = {.state = SCAN_IN_ORDER};
	if (order)
		s.ring = cut_xcalloc(WINDOW_EVENTS + 1, sizeof(*s.ring));
	if (once && in->have_first)
		scan_event(i, &s, &in->first, in->first_line, firstcost, order, coll);
	struct cut_parser *parser = cut_parser_new();
	if (!parser)
		cut_out_of_memory();
	char *line, why[256];
	size_t len, hostlen;
	const char *host;
	int64_t ts;
	bool gpu;
	struct cut_event ev;
	while (cut_reader_next_line(rd, &line, &len) > 0) {
		uint64_t ln = cut_reader_line(rd);
		if (spool) {
			for (; spooled + 1 < ln; spooled++)
				putc('\n', spool); /* a line too long, skipped: said already */
			fwrite(line, 1, len, spool);
			putc('\n', spool);
			spooled = ln;
		}
		if (scan_line(line, line + len, &ts, &host, &hostlen, &gpu) && !(gpu && coll)) {
			if (order)
				scan_order(in, &s, ts, ln, WINDOW_COST(len));
			if (coll)
				record_unit(i, host, hostlen);
		} else if (cut_parse(parser, line, len, &ev, CUT_PARSE_AUTO, why, sizeof(why)) ==
		           CUT_PARSE_EVENT) {
			scan_event(i, &s, &ev, ln, WINDOW_COST(len), order, coll);
		}
	}
	uint64_t bline;
	if (order && cut_parse_flush(parser, &ev, &bline) == CUT_PARSE_EVENT) {
		/* an older format's begin without its end comes last, with its begin's line */
		in->break_line = 0;
		in->break_min = INT64_MIN;
	}
	cut_parser_free(parser);
	free(s.ring);
	heap_free(&s.heap);
	if (!once) {
		cut_reader_close(rd);
		return;
	}
	if (cut_reader_failed(rd))
		g.lost = true;
	in->errors += cut_reader_close(rd);
	if (fflush(spool) || ferror(spool) || fseek(spool, 0, SEEK_SET) < 0)
		err(CUT_EXIT_FATAL, "%s: keeping it to read twice", cut_esc(in->path));
	int fd = dup(fileno(spool));
	fclose(spool);
	if (fd < 0 || !(in->rd = cut_reader_open_fd(fd, cut_esc(in->path), 0)))
		err(CUT_EXIT_FATAL, "%s: keeping it to read twice", cut_esc(in->path));
	in->have_first = false;
}

/* ---- the hosts' clocks fitted to their collectives ---- */

/* The k-th least of v[0, n) (v is reordered): Hoare's selection. */
static double
select_kth(double *v, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1;
	while (lo < hi) {
		double pivot = v[lo + (hi - lo) / 2];
		size_t i = lo, j = hi;
		for (;;) {
			while (v[i] < pivot)
				i++;
			while (v[j] > pivot)
				j--;
			if (i >= j)
				break;
			double t = v[i];
			v[i++] = v[j];
			v[j--] = t;
		}
		if (k <= j)
			hi = j;
		else
			lo = j + 1;
	}
	return v[k];
}

/* The median of v[0, n), n > 0 (v is reordered). */
static double
median(double *v, size_t n)
{
	double hi = select_kth(v, n, n / 2);
	return n % 2 ? hi : (select_kth(v, n / 2, n / 2 - 1) + hi) / 2;
}

/* Points at most for Theil-Sen's median of slopes (their pairs grow as the square). */
#define FIT_POINTS 1024
/* A collective is used when its end is within 4 robust standard deviations of the line, or
 * within FIT_FLOOR_NS, but never past FIT_REACH_NS: the ends of one collective agree to a few
 * microseconds, and GPU times are off by tens at most. */
#define FIT_FLOOR_NS 1000.0
#define FIT_REACH_NS 100000.0
/* A drift past this is no quartz clock's: taken for collectives that do not match. */
#define DRIFT_MAX 500e-6

/* One collective as a unit and the anchor saw it: x where it ended on the unit's clock
 * (moved by its group's shift), y how far after that the anchor saw it end. */
struct obs {
	int64_t x, y;
};

static int
by_x(const void *a, const void *b)
{
	const struct obs *p = a, *q = b;
	return (p->x > q->x) - (p->x < q->x);
}

/* Least squares of y = a + b dx over the points used (b stays 0 when !slope); the used points'
 * count, the root mean square of their residuals, the standard error of b and their span. */
static size_t
least_squares(const double *dx, const double *y, const bool *use, size_t n, bool slope, double *a,
              double *b, double *rms, double *se, double *span)
{
	size_t k = 0;
	double mx = 0, my = 0, lo = INFINITY, hi = -INFINITY;
	for (size_t i = 0; i < n; i++)
		if (use[i]) {
			k++;
			mx += dx[i];
			my += y[i];
			lo = fmin(lo, dx[i]);
			hi = fmax(hi, dx[i]);
		}
	if (!k)
		return 0;
	mx /= (double)k;
	my /= (double)k;
	double sxx = 0, sxy = 0, ss = 0;
	for (size_t i = 0; i < n; i++)
		if (use[i]) {
			sxx += (dx[i] - mx) * (dx[i] - mx);
			sxy += (dx[i] - mx) * (y[i] - my);
		}
	*b = slope && k >= 3 && sxx > 0 ? sxy / sxx : 0;
	*a = my - *b * mx;
	for (size_t i = 0; i < n; i++)
		if (use[i])
			ss += pow(y[i] - *a - *b * dx[i], 2);
	size_t dof = k > 2 && slope ? k - 2 : k > 1 ? k - 1 : 1;
	*rms = sqrt(ss / (double)dof);
	*se = sxx > 0 ? *rms / sqrt(sxx) : INFINITY;
	*span = hi - lo;
	return k;
}

/* Marks the points within reach of the line a + b dx (see FIT_FLOOR_NS); r is scratch. */
static void
near_line(const double *dx, const double *y, size_t n, double a, double b, double *r, bool *use)
{
	for (size_t i = 0; i < n; i++)
		r[i] = fabs(y[i] - a - b * dx[i]);
	double reach = fmin(fmax(4 * 1.4826 * median(r, n), FIT_FLOOR_NS), FIT_REACH_NS);
	for (size_t i = 0; i < n; i++)
		use[i] = fabs(y[i] - a - b * dx[i]) <= reach;
}

/*
 * Fits unit u's clock to the anchor's: y = a + b (x - x0) over the n collectives, robustly.
 * Theil-Sen's median of slopes (on at most FIT_POINTS of them, spread over the run) and the
 * median intercept find the line the most agree on; least squares over the collectives near
 * it, three times, refine it. The drift is kept only when the collectives resolve it: at
 * least 3 used, and b at least 3 times its uncertainty, the larger of its standard error and
 * twice the residual over the span (what a few microseconds of systematic error in the GPU
 * times could fake), and within DRIFT_MAX; else the offset alone is fitted, b = 0.
 * Returns false when fewer than half the collectives are near the line: they do not match.
 */
static bool
fit(struct unit *u, struct obs *o, size_t n)
{
	qsort(o, n, sizeof(*o), by_x);
	int64_t x0 = o[n / 2].x;
	size_t m = n < FIT_POINTS ? n : FIT_POINTS, pairs = m * (m - 1) / 2;
	double *dx = cut_xcalloc(n, sizeof(*dx)), *y = cut_xcalloc(n, sizeof(*y));
	double *r = cut_xcalloc(pairs > n ? pairs : n, sizeof(*r));
	bool *use = cut_xcalloc(n, sizeof(*use));
	for (size_t i = 0; i < n; i++) {
		dx[i] = (double)o[i].x - (double)x0;
		y[i] = (double)o[i].y;
	}
	size_t ns = 0;
	for (size_t p = 0; p < m; p++)
		for (size_t q = p + 1; q < m; q++) {
			size_t i = p * n / m, j = q * n / m;
			if (dx[j] > dx[i])
				r[ns++] = (y[j] - y[i]) / (dx[j] - dx[i]);
		}
	double b = ns ? median(r, ns) : 0, a, rms = 0, se = 0, span = 0;
	for (size_t i = 0; i < n; i++)
		r[i] = y[i] - b * dx[i];
	a = median(r, n);
	size_t used = 0;
	for (int round = 0; round < 3; round++) {
		near_line(dx, y, n, a, b, r, use);
		used = least_squares(dx, y, use, n, true, &a, &b, &rms, &se, &span);
	}
	double unsure = fmax(se, span > 0 ? 2 * rms / span : INFINITY);
	u->drift = used >= 3 && fabs(b) >= 3 * unsure && fabs(b) <= DRIFT_MAX;
	if (!u->drift) {
		for (size_t i = 0; i < n; i++)
			r[i] = y[i];
		a = median(r, n);
		b = 0;
		for (int round = 0; round < 2; round++) {
			near_line(dx, y, n, a, 0, r, use);
			used = least_squares(dx, y, use, n, false, &a, &b, &rms, &se, &span);
		}
	}
	free(dx);
	free(y);
	free(r);
	free(use);
	u->instances = n;
	u->used = used;
	if (2 * used < n)
		return false;
	u->a = llround(a);
	u->b = b;
	u->x0 = x0;
	u->span = llround(span);
	u->residual = llround(rms);
	return true;
}

static int
by_name_part(const void *a, const void *b)
{
	const struct coll *x = a, *y = b;
	if (x->name != y->name)
		return x->name < y->name ? -1 : 1;
	if (x->part != y->part)
		return x->part < y->part ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (x->end > y->end) - (x->end < y->end);
}

/* The median of the q-th ends of the participants (their runs start at first[], in g.coll). */
static int64_t
median_end(const size_t *first, size_t np, size_t q, int64_t *v)
{
	for (size_t k = 0; k < np; k++)
		v[k] = g.coll[first[k] + q].end;
	qsort(v, np, sizeof(*v), cut_cmp_i64);
	return np % 2 ? v[np / 2] : v[np / 2 - 1] + (v[np / 2] - v[np / 2 - 1]) / 2;
}

/* The collectives unit u and the anchor both took part in (g.coll sorted by_name_part): per
 * kernel name, the q-th instance on each participant of either, for q up to the fewest any
 * of them ran; on each side the median of its participants' ends. Returns how many. */
static size_t
observe(int u, struct obs **out, size_t *cap)
{
	size_t n = 0, npart = idmap_span(g.partmap);
	size_t *fu = cut_xcalloc(npart + 1, sizeof(*fu)), *fa = cut_xcalloc(npart + 1, sizeof(*fa));
	int64_t *v = cut_xcalloc(npart + 1, sizeof(*v));
	const int64_t su = g.units[u].shift, sa = g.units[g.anchor].shift;
	for (size_t i = 0, j; i < g.ncoll; i = j) {
		size_t nu = 0, na = 0, least = SIZE_MAX;
		for (j = i; j < g.ncoll && g.coll[j].name == g.coll[i].name;) {
			size_t k = j;
			while (k < g.ncoll && g.coll[k].name == g.coll[j].name &&
			       g.coll[k].part == g.coll[j].part)
				k++;
			uint32_t pu = g.partunit[g.coll[j].part];
			if (pu == (uint32_t)u || pu == (uint32_t)g.anchor) {
				if (pu == (uint32_t)u)
					fu[nu++] = j;
				else
					fa[na++] = j;
				if (k - j < least)
					least = k - j;
			}
			j = k;
		}
		if (!nu || !na)
			continue;
		for (size_t q = 0; q < least; q++) {
			int64_t x = median_end(fu, nu, q, v), ya = median_end(fa, na, q, v), y;
			if (__builtin_add_overflow(x, su, &x) ||
			    __builtin_add_overflow(ya, sa, &ya) ||
			    __builtin_sub_overflow(ya, x, &y))
				continue;
			CUT_GROW(*out, n + 1, *cap);
			(*out)[n++] = (struct obs){x, y};
		}
	}
	free(fu);
	free(fa);
	free(v);
	return n;
}

/* The records of a host in a file without a clock pair (a trace without a header) are on that
 * host's clock, as its files with a pair give it: their unit goes by that one's, and its
 * collectives count for it. A host name alone sets two clocks apart only where the pairs say
 * they are two boots. */
static void
alias_units(void)
{
	for (size_t u = 0; u < g.nunits; u++) {
		struct unit *un = &g.units[u];
		for (size_t v = 0; v < g.nunits && !g.in[un->in].clock && un->alias < 0; v++)
			if (v != u && g.units[v].host == un->host && g.in[g.units[v].in].clock)
				un->alias = (int)v;
		if (un->alias >= 0) {
			g.units[un->alias].kernels += un->kernels;
			un->kernels = 0;
		}
	}
	for (size_t p = 0; p < idmap_span(g.partmap); p++)
		if (g.units[g.partunit[p]].alias >= 0)
			g.partunit[p] = (uint32_t)g.units[g.partunit[p]].alias;
}

/* Fits every unit with collectives in common with the anchor (the reference input's unit
 * when it ran any, else the first unit that did) to it; the others keep their clock pair. */
static void
fit_units(int ref)
{
	g.anchor = -1;
	if (ref >= 0 && g.units[g.in[ref].unit].kernels)
		g.anchor = g.in[ref].unit;
	for (size_t u = 0; u < g.nunits && g.anchor < 0; u++)
		if (g.units[u].kernels)
			g.anchor = (int)u;
	if (g.anchor < 0)
		return;
	qsort(g.coll, g.ncoll, sizeof(*g.coll), by_name_part);
	struct obs *o = NULL;
	size_t cap = 0;
	for (size_t u = 0; u < g.nunits; u++) {
		struct unit *un = &g.units[u];
		size_t n = (int)u == g.anchor || !un->kernels ? 0 : observe((int)u, &o, &cap);
		if (!n)
			continue;
		if (fit(un, o, n)) {
			un->method = "collectives";
			continue;
		}
		warnx(
		    "%s: host %s: its collectives do not line up with those of host %s (fewer than "
		    "half of %zu within reach of one line): aligned by %s",
		    cut_esc(g.in[un->in].path), cut_esc(strtab_key(g.hosts, un->host)),
		    cut_esc(strtab_key(g.hosts, g.units[g.anchor].host)), n,
		    strcmp(un->method, "none") ? "its clock pair" : "nothing");
		un->drift = false;
	}
	free(o);
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
		struct slot *q = cut_xcalloc(cap, sizeof(*q));
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
		s->text.s = cut_xrealloc(s->text.s, line.len + 1, 1);
		s->text.cap = line.len + 1;
	}
	memcpy(s->text.s, line.s, line.len + 1);
	s->text.len = line.len;
	if (line.cap > 1 << 16)
		buf_free(&line);
	g.heldbytes += held_bytes(s);
	return s;
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
	CUT_GROW(p->v, k + 1, p->cap);
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
	CUT_GROW(g.labels, k + 1, g.nlabels);
	struct label *l = &g.labels[k];
	if (isnew) {
		free(l->host);
		*l = (struct label){.host = host ? cut_xstrdup(host) : NULL, .rank = ev->rank};
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

static bool
gpu_same(const struct gpu_seen *e, const struct cut_event *ev, const char *host, int64_t stream,
         int64_t device, int64_t rank)
{
	const char *cat = ev->cat ? ev->cat : "";
	int64_t end = cut_event_end(ev);
	return llabs(e->ts - ev->ts) <= GPU_SAME_NS && llabs(e->end - end) <= GPU_SAME_NS &&
	       e->stream == stream && e->device == device &&
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
	int64_t stream = CUT_ABSENT, device = CUT_ABSENT;
	if (!cut_args_find(ev->args, "corr"))
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
	struct gpu_seen *e;
	while ((e = cut_submits_oldest(g.gpu)) && e->ts < ev->ts - GPU_SAME_NS) {
		buf_free(&e->text);
		cut_submits_forget(g.gpu, e);
	}
	for (e = cut_calls_submitter(g.gpu, ev->pid, ev); e; e = cut_submits_older(g.gpu, e))
		if (e->in != in && gpu_same(e, ev, host, stream, device, rank)) {
			pair_count(&g.gpudups, e->in, in);
			return true;
		}
	if (!(e = cut_calls_submit(g.gpu, ev->pid, ev)))
		return false;
	e->ts = ev->ts;
	e->end = cut_event_end(ev);
	e->stream = stream;
	e->device = device;
	e->rank = rank;
	e->in = in;
	buf_add(&e->text, host, strlen(host) + 1);
	e->name = e->text.len;
	buf_add(&e->text, ev->name, strlen(ev->name) + 1);
	e->cat = e->text.len;
	buf_add(&e->text, ev->cat ? ev->cat : "", strlen(ev->cat ? ev->cat : "") + 1);
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
	if (!late && ev->layer == CUT_IOCTL && cut_is_ioctl_call(ev))
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

/* The reference input: the first with a clock pair, else -1. */
static int
reference(void)
{
	for (int i = 0; i < g.nin; i++)
		if (g.in[i].clock)
			return i;
	return -1;
}

/* How far input in's clock pair moves it onto the reference's, into *shift: the same instant
 * is realtime - monotonic on each host's monotonic clock. Returns whether the pair gave it. */
static bool
pair_shift(const struct input *in, const struct input *ref, int64_t *shift)
{
	int64_t off, ref_off;
	*shift = 0;
	if (g.align == ALIGN_NONE || !ref || !in->clock)
		return false;
	if (__builtin_sub_overflow(in->real, in->mono, &off) ||
	    __builtin_sub_overflow(ref->real, ref->mono, &ref_off) ||
	    __builtin_sub_overflow(off, ref_off, shift) || *shift == INT64_MIN) {
		warnx("%s:%llu: clock out of range against %s's: not aligned", cut_esc(in->path),
		      (unsigned long long)in->header_line, cut_esc(ref->path));
		g.bad++;
		*shift = 0;
		return false;
	}
	return true;
}

/* Puts the inputs in boot groups, each with the clock-pair shift of its first input: inputs
 * whose headers name one host and whose clock offsets differ by less than SAME_BOOT_NS share
 * a monotonic clock (the offsets then differ only by how far the wall clock was adjusted
 * between the captures), so they move together, and not at all with the reference. A host
 * name alone is not enough (machines are often all called "vm"). Every other input is a
 * group of its own. */
static void
make_groups(void)
{
	int ref = reference();
	g.gshift = cut_xcalloc((size_t)g.nin + 1, sizeof(*g.gshift));
	g.gpair = cut_xcalloc((size_t)g.nin + 1, sizeof(*g.gpair));
	for (int i = 0; i < g.nin; i++) {
		struct input *in = &g.in[i];
		in->group = -1;
		for (int j = 0; j < i && in->clock && in->host[0] && in->group < 0; j++) {
			const struct input *o = &g.in[j];
			int64_t a, b, d;
			if (o->clock && strcmp(o->host, in->host) == 0 &&
			    !__builtin_sub_overflow(in->real, in->mono, &a) &&
			    !__builtin_sub_overflow(o->real, o->mono, &b) &&
			    !__builtin_sub_overflow(a, b, &d) && d > -SAME_BOOT_NS &&
			    d < SAME_BOOT_NS)
				in->group = o->group;
		}
		if (in->group < 0) {
			in->group = g.ngroups++;
			g.gpair[in->group] =
			    pair_shift(in, ref >= 0 ? &g.in[ref] : NULL, &g.gshift[in->group]);
		}
		in->unit = unit_get(in->group, in->host, i);
	}
	/* what each unit's records go by until collectives say better */
	for (size_t u = 0; u < g.nunits; u++) {
		struct unit *un = &g.units[u];
		const struct input *in = &g.in[un->in];
		if (ref >= 0 && (int)u == g.in[ref].unit)
			un->method = "reference";
		else if (g.gpair[un->group] && (int)u == in->unit)
			un->method = "clock";
	}
}

/* Whether the inputs may hold records of several hosts: their headers name two, or one names
 * none (a trace without a header, a merge of several hosts) while the clocks are aligned. */
static bool
many_hosts(void)
{
	if (g.align != ALIGN_COLLECTIVES)
		return false;
	for (int i = 0; i < g.nin; i++)
		if (!g.in[i].host[0] || g.in[i].unit != g.in[0].unit)
			return true;
	return false;
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

static const char *const align_names[] = {"none", "clock", "collectives"};

static void
header(int64_t ts)
{
	struct cut_buf inputs = {0};
	struct cut_meta m;
	int ref = reference();
	cut_meta_init(&m, CUT_META_HEADER);
	m.header.tool = "cutmerge";
	m.header.version = CUT_VERSION;
	if (ref >= 0 && g.align != ALIGN_NONE) {
		m.header.monotonic_ns = g.in[ref].mono;
		m.header.realtime_ns = g.in[ref].real;
	}
	m.header.sorted = 1;
	/* one host for all: a merge of it and another host's trace still knows whose it is */
	m.header.host = g.one_host;
	/* a merge of it then knows whether its hosts are on one clock (see merged_unaligned) */
	if (g.align != ALIGN_COLLECTIVES)
		buf_addf(&inputs, "\"align\":\"%s\",", align_names[g.align]);
	buf_adds(&inputs, "\"inputs\":[");
	for (int i = 0; i < g.nin; i++) {
		buf_adds(&inputs, i ? ",{" : "{");
		buf_addkv_str(&inputs, "file", g.in[i].path);
		if (g.in[i].tool[0])
			buf_addkv_str(&inputs, "tool", g.in[i].tool);
		if (g.in[i].host[0])
			buf_addkv_str(&inputs, "host", g.in[i].host);
		buf_addkv_int(&inputs, "shift_ns", g.in[i].shift_ns);
		buf_addc(&inputs, '}');
	}
	buf_addc(&inputs, ']');
	m.header.more = inputs.s;
	write_meta(ts, &m);
	buf_free(&inputs);
}

/* The clock of each host, after the header when the merge holds several: how its records
 * were moved (see cut-events(5), "align"). */
static void
align_records(int64_t ts)
{
	size_t named = 0;
	for (size_t u = 0; u < g.nunits; u++)
		named += *strtab_key(g.hosts, g.units[u].host) && g.units[u].alias < 0;
	if (named < 2 || g.align == ALIGN_NONE)
		return;
	int ref = reference();
	const struct unit *r = &g.units[ref >= 0 ? g.in[ref].unit : g.in[0].unit];
	struct cut_buf a = {0};
	for (size_t u = 0; u < g.nunits; u++) {
		const struct unit *un = &g.units[u];
		const char *host = strtab_key(g.hosts, un->host);
		if (!*host || un->alias >= 0)
			continue;
		buf_reset(&a);
		buf_addkv_str(&a, "host", host);
		buf_addkv_str(&a, "file", g.in[un->in].path);
		/* the reference's host, or its file when it names none (an strace import) */
		const char *rh = strtab_key(g.hosts, r->host);
		buf_addkv_str(&a, "reference", *rh ? rh : g.in[r->in].path);
		buf_addkv_str(&a, "method", un->method);
		bool fitted = strcmp(un->method, "collectives") == 0;
		int64_t offset = un->shift, at = 0;
		if (fitted && (__builtin_add_overflow(un->shift, un->a, &offset) ||
		               __builtin_sub_overflow(un->x0, un->shift, &at)))
			offset = un->shift, at = un->x0;
		buf_addkv_int(&a, "offset_ns", offset);
		/* the fit's slope b: the host's clock runs -b / (1 + b) faster than the reference's
		 */
		buf_addf(&a, ",\"drift_ppm\":%.6f", un->b != 0 ? -un->b / (1 + un->b) * 1e6 : 0.0);
		if (fitted) {
			buf_addkv_int(&a, "at_ns", at);
			buf_addf(&a, ",\"drift_fitted\":%s", un->drift ? "true" : "false");
		}
		buf_addkv_int(&a, "kernels", (int64_t)un->kernels);
		if (un->instances) {
			buf_addkv_int(&a, "collectives", (int64_t)un->instances);
			buf_addkv_int(&a, "used", (int64_t)un->used);
		}
		if (fitted) {
			buf_addkv_int(&a, "span_ns", un->span);
			buf_addkv_int(&a, "residual_ns", un->residual);
		}
		buf_addc(&a, '}');
		struct cut_event ev;
		cut_event_init(&ev);
		ev.ts = ts;
		ev.layer = CUT_META;
		ev.name = "align";
		ev.args = a.s;
		cut_event_format(&g.out, &ev); /* cutmerge's own: not counted, as its header */
		buf_addc(&g.out, '\n');
	}
	buf_free(&a);
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
	for (int i = 0; i < g.nin; i++)
		g.sorted_inputs +=
		    g.in[i].disorder || (g.in[i].sort && !cut_sorter_was_sorted(g.in[i].sort));
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

/* Whether an input can be read only once (standard input, a pipe): then its first reading
 * keeps it in a temporary file. */
static bool
read_once(const char *arg)
{
	struct stat st;
	return strcmp(arg, "-") == 0 || stat(arg, &st) < 0 || !S_ISREG(st.st_mode);
}

/* Opens the inputs and reads each one's first record (its header: clock, host, tool, whether
 * it is sorted); puts them in boot groups; reads those that do not say they are sorted once
 * before the merge, to find what is out of order, and every input when the merge may hold
 * several hosts, for their collectives; fits the hosts' clocks; fills the heap of heads. */
static void
open_inputs(int argc, char *argv[])
{
	g.in = cut_xcalloc((size_t)argc, sizeof(*g.in));
	const char **args = cut_xcalloc((size_t)argc, sizeof(*args));
	for (int i = 0; i < argc; i++) {
		struct input *in = &g.in[g.nin];
		in->path = strcmp(argv[i], "-") == 0 ? "<stdin>" : argv[i];
		if (!(in->rd = cut_reader_open(argv[i], 0))) {
			warn("%s", cut_esc(in->path));
			g.lost = true;
			continue;
		}
		args[g.nin] = argv[i];
		in->last_ts = INT64_MIN;
		in->gpu_error_ns = -1;
		in->hold_line = in->break_line = UINT64_MAX;
		in->break_min = in->break_at = INT64_MAX;
		in->wout = NO_SLOT;
		int rc = cut_reader_next(in->rd, &in->first);
		in->line = in->first_line = cut_reader_line(in->rd);
		in->first_len = cut_reader_line_bytes(in->rd);
		if (rc < 0 && cut_reader_failed(in->rd))
			g.lost = true;
		else if (rc < 0)
			g.stop = true;
		in->have_first = rc > 0;
		if (rc > 0)
			read_header(in, &in->first);
		g.nin++;
	}
	make_groups();
	bool coll = many_hosts();
	int64_t *first_ts = cut_xcalloc((size_t)g.nin + 1, sizeof(*first_ts));
	for (int i = 0; i < g.nin && !g.stop; i++) {
		struct input *in = &g.in[i];
		first_ts[i] = in->have_first ? in->first.ts : INT64_MIN;
		bool order = in->have_first && !in->sorted && !g.sort_all;
		if (in->have_first && g.sort_all) {
			in->break_line = 0;
			in->break_min = INT64_MIN;
		}
		if (in->have_first && (order || coll))
			scan_input(i, order, coll, read_once(args[i]));
	}
	if (coll) {
		alias_units();
		fit_units(reference());
		for (size_t u = 0; u < g.nunits; u++)
			if (g.units[u].alias >= 0) {
				struct unit *un = &g.units[u];
				int group = un->group, in = un->in, alias = un->alias;
				size_t host = un->host;
				*un = g.units[alias];
				un->group = group;
				un->in = in;
				un->host = host;
				un->alias = alias;
			}
	}
	/* Memory for sorting, shared by the inputs that need it. An input holding records of
	 * several hosts whose clocks differ is sorted whole, once moved. */
	size_t sorting = 0;
	for (int i = 0; i < g.nin; i++) {
		struct input *in = &g.in[i];
		for (size_t u = 0; u < g.nunits && in->multi && in->break_line; u++)
			if (g.units[u].group == in->group && moves(&g.units[u])) {
				in->break_line = 0;
				in->break_min = INT64_MIN;
			}
		const struct unit *un = &g.units[in->unit];
		if (in->break_min == INT64_MIN ||
		    (in->break_min != INT64_MAX && !map_time(un, in->break_min, &in->break_at)))
			in->break_at = INT64_MIN;
		sorting += in->break_line != UINT64_MAX;
		in->shift_ns = un->shift;
		if (first_ts[i] != INT64_MIN && map_time(un, first_ts[i], &in->shift_ns))
			in->shift_ns -= first_ts[i];
	}
	sort_mem = cut_sort_memory() / (sorting ? sorting : 1);
	if (sort_mem < 1u << 20)
		sort_mem = 1u << 20;
	const char *host = NULL;
	for (int i = 0; i < g.nin; i++)
		if (g.in[i].host[0] && !host)
			host = g.in[i].host;
		else if (g.in[i].host[0] && strcmp(g.in[i].host, host) != 0)
			g.label_hosts = true;
	g.one_host = g.label_hosts ? NULL : host;
	for (int i = 0; i < g.nin; i++) {
		struct input *in = &g.in[i];
		advance(in);
		if (in->has)
			heap_push(&g.heads, &(struct head){head_key(i), i});
	}
	free(first_ts);
	free(args);
}

int
main(int argc, char *argv[])
{
	int ch, status = CUT_EXIT_OK;
	char *end;
	static char *stdin_only[] = {"-"};

	cut_std_args_help(argc, argv, usage, opts);

	g.align = ALIGN_COLLECTIVES;
	g.maxheld = 1000000;
	g.maxbytes = (size_t)256 << 20;
	while ((ch = getopt(argc, argv, "AM:Sa:m:w:")) != -1) {
		switch (ch) {
		case 'A': g.align = ALIGN_NONE; break;
		case 'a':
			if (strcmp(optarg, "collectives") == 0)
				g.align = ALIGN_COLLECTIVES;
			else if (strcmp(optarg, "clock") == 0)
				g.align = ALIGN_CLOCK;
			else if (strcmp(optarg, "none") == 0)
				g.align = ALIGN_NONE;
			else
				errx(CUT_EXIT_FATAL, "-a: not collectives, clock or none: %s",
				     cut_esc(optarg));
			break;
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
	g.gpu = cut_submits_new(sizeof(struct gpu_seen), SIZE_MAX); /* bounded by time */
	cut_calls_limit(g.open, g.maxheld, g.maxbytes);
	g.labelmap = idmap_new();
	g.hosts = strtab_new();
	g.unitmap = idmap_new();
	g.partmap = idmap_new();
	g.collnames = strtab_new();
	heap_init(&g.heads, sizeof(struct head));
	open_inputs(argc, argv);

	int64_t t0 = heap_len(&g.heads) ? next_ts() : 0;
	header(t0);
	align_records(t0);
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
		struct input *in = &g.in[i];
		if (cut_reader_close(in->rd) || in->errors)
			status = CUT_EXIT_BADINPUT;
		cut_sorter_free(in->sort);
		buf_free(&in->args);
		heap_free(&in->win);
		for (size_t k = 0; k < in->wcap; k++)
			buf_free(&in->wv[k].text);
		free(in->wv);
		free(in->wfree);
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
	for (struct gpu_seen *e; (e = cut_submits_oldest(g.gpu));) {
		buf_free(&e->text);
		cut_submits_forget(g.gpu, e);
	}
	cut_submits_free(g.gpu);
	free(g.units);
	free(g.gshift);
	free(g.gpair);
	free(g.coll);
	free(g.partunit);
	free(g.partn);
	strtab_free(g.hosts);
	strtab_free(g.collnames);
	idmap_free(g.unitmap);
	idmap_free(g.partmap);
	buf_free(&g.out);
	return cut_finish_output(status);
}
