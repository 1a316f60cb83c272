/* cutchrome: cut traces as Chrome trace-event JSON for ui.perfetto.dev and other viewers of
 * that format: ioctls nested in the API calls of each thread, flow arrows, GPU tracks, counters;
 * several inputs (the ranks of a job) merged by time into one timeline. The timeline is
 * timeline.h's; this is its writer: complete slices ("X"), names as metadata events at the end
 * of each file, the output split by window or count. */
#include <err.h>
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "buf.h"
#include "calls.h"
#include "classify.h"
#include "cut.h"
#include "demangle.h"
#include "event.h"
#include "idmap.h"
#include "outfile.h"
#include "reader.h"
#include "text.h"
#include "timeline.h"
#include "units.h"

/* Linux tids stay below PID_MAX_LIMIT; track ids from there up are ours. */
#define SYNTH_ID (1 << 22)
/* Beyond these the catapult viewer fails to load a file; Perfetto's UI fails near 1 GB. */
#define WARN_EVENTS 1000000
#define WARN_BYTES (256 << 20)

/*
 * What the output names, per track of the timeline, in the order it is first drawn or named
 * (so its metadata comes in that order): a process (a process, a machine's interrupts, a GPU:
 * its "pid"), a thread's API track, its off-CPU track, a CPU's interrupts, a process's stream
 * on a GPU (their lanes: a "tid" each, tl_lane.user). A process of the first machine whose
 * pid is a Linux pid keeps it in the output, as its threads their tids; the others get
 * made-up ones.
 */
static struct group {
	bool drawn;
	int64_t jpid; /* a process's "pid" */
	size_t order;
	int file;       /* a process: the last output file it was used in */
	int64_t sorted; /* a process: its place in the order of processes (sort_procs) */
} * groups;             /* by tl_track.order */
static size_t gcap;
static struct tl_track **drawn; /* in order */
static size_t ndrawn, dcap;
static int64_t nsynth, nflows, nasync;

static struct tl *tl;
static FILE *out;
static char out_name[4096]; /* the file out writes, for messages */
static const char *prefix;
static int nfile;
static uint64_t nout, outbytes, max_events;
static int64_t window, wstart = INT64_MIN;
static bool warned_size, mangled;
static struct cut_buf b;

static const struct cut_opt_help opts[] = {
    {"-m, --max-events=N", "start a new part after N trace events"},
    {"-w, --window=TIME", "start a new part every TIME of the trace (10ms, 2s)"},
    {"-o, --output=PREFIX", "write the parts to PREFIX-001.json... and print their names"},
    {"-M, --mangled", "name slices as the trace does, C++ names not demangled"},
    {NULL, NULL},
};

static void
usage(void)
{
	fprintf(stderr,
	        "usage: cutchrome [-M] [-m max-events] [-w window] [-o prefix] [file ...]\n");
	exit(CUT_EXIT_FATAL);
}

static bool
is_process(const struct tl_track *t)
{
	return t->kind == TL_PROCESS || t->kind == TL_IRQS || t->kind == TL_GPU;
}

/* The process a track is drawn in: its process, its machine's interrupts, its GPU. */
static struct tl_track *
process_of(struct tl_track *t)
{
	return is_process(t)                               ? t
	       : t->kind == TL_STREAM || t->kind == TL_IRQ ? t->parent
	                                                   : tl_up(t, TL_PROCESS);
}

/* Whether the process keeps its pid, and its threads their tids, in the output: those of the
 * first machine whose pid is a Linux pid (another machine's may be equal, and a viewer would
 * take a tid kept under a made-up pid for a thread of the process that has that tid's pid). */
static bool
keeps_ids(const struct tl_track *p)
{
	return p->kind == TL_PROCESS && p->m->index == 0 && p->pid > 0 && p->pid < SYNTH_ID;
}

/* Whether thread tid of process p keeps its tid in the output: its process keeps its pid, and
 * no other process has a thread of that tid (as in a trace made by hand, or of hosts without
 * names): viewers take a tid for one thread of one process. */
static bool
keeps_tid(const struct tl_track *p, int64_t tid)
{
	static struct cut_idmap *kept; /* tid -> index in owner */
	static size_t *owner, cap;     /* tl_track.order of the process */
	bool isnew;
	if (!keeps_ids(p) || tid <= 0 || tid >= SYNTH_ID)
		return false;
	if (!kept)
		kept = idmap_new();
	size_t i = idmap_put(kept, tid, &isnew);
	if (isnew) {
		CUT_GROW(owner, i + 1, cap);
		owner[i] = p->order;
	}
	return owner[i] == p->order;
}

/* t's group, or NULL before it is drawn. A lookup never grows the table (a group in hand would
 * move). */
static struct group *
group(const struct tl_track *t)
{
	return t->order < gcap && groups[t->order].drawn ? &groups[t->order] : NULL;
}

/* t's group, drawn from now on. */
static struct group *
draw(struct tl_track *t)
{
	if (!group(t)) {
		CUT_GROW(groups, t->order + 1, gcap);
		groups[t->order] = (struct group){.drawn = true, .order = ndrawn, .file = -1};
		if (is_process(t))
			groups[t->order].jpid = keeps_ids(t) ? t->pid : SYNTH_ID + nsynth++;
		CUT_GROW(drawn, ndrawn + 1, dcap);
		drawn[ndrawn++] = t;
	}
	return group(t);
}

/* Timestamps in microseconds with the nanoseconds kept as three decimals, from a base: a
 * whole second 10 s before the first event. Viewers read them as doubles, which drop
 * nanoseconds of CLOCK_MONOTONIC once a host has been up for weeks. */
static int64_t base = -1;

static void
set_base(int64_t ts)
{
	if (base < 0)
		base = ts / 1000000000 * 1000000000 > 10000000000
		           ? ts / 1000000000 * 1000000000 - 10000000000
		           : 0;
}

/* Writes ns as microseconds with three decimals at p (at most 25 bytes); returns the end. */
static char *
put_us(char *p, int64_t ns)
{
	if (ns < 0) {
		*p++ = '-';
		ns = ns == INT64_MIN ? INT64_MAX : -ns;
	}
	p = buf_put_i64(p, ns / 1000);
	if (ns % 1000) {
		p[0] = '.', p[1] = (char)('0' + ns % 1000 / 100);
		p[2] = (char)('0' + ns % 100 / 10), p[3] = (char)('0' + ns % 10);
		p += 4;
	}
	return p;
}

/* Writes a string literal at p; returns the end. */
#define PUT(p, lit) (memcpy((p), (lit), sizeof(lit) - 1), (p) + sizeof(lit) - 1)
/* Appends a string literal. */
#define ADD(lit) buf_add(&b, (lit), sizeof(lit) - 1)

/* A member "key":v of the args being built at p, after a comma unless first (*sep is ""). */
static char *
put_int(char *p, const char **sep, const char *key, size_t klen, int64_t v)
{
	if (**sep)
		*p++ = ',';
	memcpy(p, key, klen);
	*sep = ",";
	return buf_put_i64(p + klen, v);
}

/* Writes a member "key":"s" (s escaped, n bytes) at p after a comma unless first. */
static char *
put_str(char *p, const char **sep, const char *key, size_t klen, const char *s, size_t n)
{
	if (**sep)
		*p++ = ',';
	memcpy(p, key, klen);
	*sep = ",";
	return buf_put_jstr(p + klen, s, n);
}

/*
 * Starts an output event: phase (one letter), name, pid, tid and ts. Without printf, in room
 * made once: this runs for every event, and formatting was most of cutchrome's time. Events
 * gather in b, written out in blocks (end, flush).
 */
static size_t ev_start; /* where the event being built starts in b */

static void
begin(const char *ph, const char *name, int64_t jpid, int64_t jtid, int64_t ts)
{
	size_t n = strlen(name);
	ev_start = b.len;
	char *p = buf_room(&b, 48 + 6 * n + 3 * 25);
	p = nout ? PUT(p, ",\n{\"ph\":\"") : PUT(p, "{\"ph\":\"");
	*p++ = *ph;
	p = PUT(p, "\",\"name\":");
	p = buf_put_jstr(p, name, n);
	p = PUT(p, ",\"pid\":");
	p = buf_put_i64(p, jpid);
	p = PUT(p, ",\"tid\":");
	p = buf_put_i64(p, jtid);
	p = PUT(p, ",\"ts\":");
	p = put_us(p, *ph == 'M' ? 0 : ts - (base < 0 ? 0 : base));
	buf_commit(&b, p);
}

/* A failed write ends the run: one line naming the file. */
static void
write_failed(void)
{
	err(CUT_EXIT_FATAL, "write error on %s", prefix ? cut_esc(out_name) : "standard output");
}

/* Writes the events gathered in b. */
static void
flush(void)
{
	if (b.len && fwrite(b.s, 1, b.len, out) != b.len)
		write_failed();
	buf_reset(&b);
}

static void
end(void)
{
	buf_addc(&b, '}');
	nout++;
	outbytes += b.len - ev_start;
	if (b.len >= 1 << 16)
		flush();
}

/* A flow event: its start ("s") or end ("f"). */
static void
flow_event(const char *ph, const char *name, int64_t jpid, int64_t jtid, int64_t ts,
           const char *more)
{
	begin(ph, name, jpid, jtid, ts);
	size_t n = strlen(more);
	char *p = buf_room(&b, n + 20);
	memcpy(p, more, n);
	buf_commit(&b, buf_put_i64(p + n, *ph == 's' ? ++nflows : nflows));
	end();
}

static void
open_file(void)
{
	if (prefix) {
		if ((size_t)snprintf(out_name, sizeof(out_name), "%s-%03d.json", prefix,
		                     nfile + 1) >= sizeof(out_name)) /* never a name cut short */
			errx(CUT_EXIT_FATAL, "-o: %s: %s", cut_esc(prefix), strerror(ENAMETOOLONG));
		/* A fresh file, renamed into place when complete: never through a link (a
		 * shared directory), 0644 whatever the umask. */
		if (!(out = outfile_open(out_name)) && errno == ELOOP)
			errx(CUT_EXIT_FATAL, "%s: a symbolic link: not followed",
			     cut_esc(out_name));
		if (!out)
			err(CUT_EXIT_FATAL, "%s", cut_esc(out_name));
	}
	nout = outbytes = 0;
	fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n", out);
}

/* The name of lane i of t, a track with lanes; th: its thread, p: its process. */
static const char *
track_name(const struct tl_track *t, const struct tl_track *th, const struct tl_track *p, int i,
           char *s, size_t n)
{
	int len;
	switch (t->kind) {
	case TL_IRQ:
		len = t->key < 0 ? snprintf(s, n, "%s", cut_layer_name(CUT_IRQ))
		                 : snprintf(s, n, "%s cpu %lld", cut_layer_name(CUT_IRQ),
		                            (long long)t->key);
		break;
	case TL_STREAM: {
		/* "pid P stream S", and the name NVTX gave the stream */
		const char *host = tl_machines(tl) > 1 ? t->m->host : "";
		if (t->nostream)
			len = snprintf(s, n, "pid %lld%s%s no stream", (long long)t->pid,
			               *host ? " on " : "", host);
		else
			len = snprintf(s, n, "pid %lld%s%s stream 0x%llx%s%s", (long long)t->pid,
			               *host ? " on " : "", host, (unsigned long long)t->key,
			               t->nvtx ? ": " : "", t->nvtx ? t->nvtx : "");
		break;
	}
	default: {
		/* A lane with a made-up id says which thread it belongs to. */
		bool synth = t->kind == TL_OFFCPU || i > 0 || (int64_t)t->lanes->user != t->key;
		const char *name = th->label                      ? th->label
		                   : t->key == p->pid && p->label ? p->label
		                                                  : NULL;
		if (!name)
			len = snprintf(s, n, "tid %lld", (long long)t->key);
		else if (synth)
			len = snprintf(s, n, "%s (tid %lld)", name, (long long)t->key);
		else
			len = snprintf(s, n, "%s", name);
		if (t->kind == TL_OFFCPU && len > 0 && (size_t)len < n)
			len +=
			    snprintf(s + len, n - (size_t)len, " %s", cut_layer_label(CUT_SCHED));
	}
	}
	if (i > 0 && len > 0 && (size_t)len < n)
		snprintf(s + len, n - (size_t)len, " overlap %d", i);
	return s;
}

/* A metadata event: process_name, thread_name (args.name) or a sort index (args.sort_index). */
static void
metadata(const char *what, int64_t jpid, int64_t jtid, const char *name, int64_t sort_index)
{
	begin("M", what, jpid, jtid, 0);
	if (name) {
		buf_adds(&b, ",\"args\":{\"name\":");
		buf_addjstr(&b, name, strlen(name));
	} else {
		buf_adds(&b, ",\"args\":{\"sort_index\":");
		buf_addi64(&b, sort_index);
	}
	buf_adds(&b, "}");
	end();
}

/* A process's name: a rank of a distributed job "rank N on host: name", a process of one of
 * several hosts "name on host"; a GPU "GPU uuid (name)", else "GPU pid P device D" (" on host"
 * when there are several). */
static void
process_name(const struct tl_track *t, char *s, size_t n)
{
	char base[300];
	const char *host = t->m->host;
	if (t->kind == TL_GPU) {
		const char *th = tl_machines(tl) > 1 ? host : "";
		if (t->uuid)
			snprintf(s, n, "GPU %s%s%s%s%s%s", t->uuid, t->name ? " (" : "",
			         t->name ? t->name : "", t->name ? ")" : "", *th ? " on " : "", th);
		else
			snprintf(s, n, "GPU pid %lld%s%s device %lld", (long long)t->pid,
			         *th ? " on " : "", th, (long long)t->key);
		return;
	}
	if (t->label)
		snprintf(base, sizeof(base), "%s", t->label);
	else if (t->kind == TL_IRQS)
		snprintf(base, sizeof(base), "interrupts");
	else
		snprintf(base, sizeof(base), "pid %lld", (long long)t->pid);
	if (t->rank >= 0)
		snprintf(s, n, "rank %lld%s%s: %s", (long long)t->rank, *host ? " on " : "", host,
		         base);
	else if (tl_machines(tl) > 1 && *host)
		snprintf(s, n, "%s on %s", base, host);
	else
		snprintf(s, n, "%s", base);
}

/* A process's class in the order of a host's processes: its ranks, its other processes, its
 * GPUs, its interrupts. */
static int
proc_class(const struct tl_track *t)
{
	return t->kind == TL_PROCESS ? (t->rank >= 0 ? 0 : 1) : t->kind == TL_GPU ? 2 : 3;
}

/* The order of processes (qsort): by host, hosts by their lowest rank, those without ranks
 * after in the order they appear; on a host, by class, ranks by rank, GPUs by ordinal, the
 * rest in the order they were drawn. */
static int
proc_cmp(const void *pa, const void *pb)
{
	const struct tl_track *a = *(struct tl_track *const *)pa,
	                      *b = *(struct tl_track *const *)pb;
	int64_t ka[5] = {a->m->rank < 0, a->m->rank < 0 ? 0 : a->m->rank, (int64_t)a->m->index,
	                 proc_class(a), 0},
	        kb[5] = {b->m->rank < 0, b->m->rank < 0 ? 0 : b->m->rank, (int64_t)b->m->index,
	                 proc_class(b), 0};
	ka[4] = ka[3] == 0 ? a->rank : ka[3] == 2 ? a->key : 0;
	kb[4] = kb[3] == 0 ? b->rank : kb[3] == 2 ? b->key : 0;
	for (int i = 0; i < 5; i++)
		if (ka[i] != kb[i])
			return ka[i] < kb[i] ? -1 : 1;
	size_t oa = group(a)->order, ob = group(b)->order;
	return oa < ob ? -1 : oa > ob;
}

/* Whether processes are ordered (process_sort_index): in a job of ranks, or of several
 * hosts, by host then rank (proc_cmp); each group's place in sorted. */
static bool
sort_procs(void)
{
	static struct tl_track **v;
	static size_t cap;
	size_t n = 0;
	bool ranked = false;
	for (size_t k = 0; k < ndrawn; k++)
		if (is_process(drawn[k])) {
			CUT_GROW(v, n + 1, cap);
			v[n++] = drawn[k];
			ranked |= drawn[k]->m->rank >= 0;
		}
	if (!ranked && tl_machines(tl) < 2)
		return false;
	qsort(v, n, sizeof(*v), proc_cmp);
	for (size_t i = 0; i < n; i++)
		group(v[i])->sorted = (int64_t)i;
	return true;
}

/* Names the processes and tracks of this file, closes it and warns when it is too big. A
 * thread's tracks are ordered after it: its API track, overlaps, then its off-CPU track. */
static void
close_file(void)
{
	char name[512];
	tl_flush(tl);
	bool sorted = sort_procs();
	for (size_t k = 0; k < ndrawn; k++) {
		struct tl_track *t = drawn[k];
		struct group *g = group(t);
		if (is_process(t) && g->file == nfile) {
			process_name(t, name, sizeof(name));
			metadata("process_name", g->jpid, g->jpid, name, 0);
			if (sorted)
				metadata("process_sort_index", g->jpid, g->jpid, NULL, g->sorted);
			if (t->kind == TL_GPU) /* its counter's track */
				metadata("thread_name", g->jpid, g->jpid, "GPU work running", 0);
		}
		if (!t->lanes)
			continue;
		int i = 0;
		struct tl_track *p = process_of(t), *th = t->kind == TL_OFFCPU ? t->parent : t;
		const struct group *tg = group(th);
		int64_t order = (int64_t)(tg ? tg->order : g->order);
		for (struct tl_lane *l = t->lanes; l; l = l->next, i++) {
			if (l->epoch != (unsigned)nfile)
				continue;
			track_name(t, th, p, i, name, sizeof(name));
			metadata("thread_name", group(p)->jpid, (int64_t)l->user, name, 0);
			if (t->kind == TL_THREAD || t->kind == TL_OFFCPU)
				metadata("thread_sort_index", group(p)->jpid, (int64_t)l->user,
				         NULL,
				         order * 64 + (t->kind == TL_OFFCPU ? 32 : 0) +
				             (i < 31 ? i : 31));
		}
	}
	flush();
	fprintf(out,
	        "\n],\"otherData\":{\"generator\":\"cutchrome " CUT_VERSION
	        "\",\"base_ns\":%lld}}\n",
	        (long long)(base < 0 ? 0 : base));
	if (!warned_size && (nout > WARN_EVENTS || outbytes > WARN_BYTES)) {
		warnx("%s: %llu events, %llu MB: Perfetto's UI fails near 1 GB, the catapult "
		      "viewer past about 1M events or 256 MB; split with -o prefix and -m or -w, "
		      "or use cutperfetto",
		      prefix ? "output file" : "output", (unsigned long long)nout,
		      (unsigned long long)(outbytes >> 20));
		warned_size = true;
	}
	if (prefix) {
		if (outfile_commit(out))
			write_failed();
		printf("%s\n", out_name);
	}
}

/* Before an event at ts: begins a new output file when it is past the limits; false when
 * there is no next file (no -o): the output stops here. */
static bool
at(void *arg, int64_t ts)
{
	(void)arg;
	set_base(ts);
	if (wstart == INT64_MIN)
		wstart = ts;
	bool past_window = window && ts >= wstart && ts - wstart >= window;
	if (!past_window && !(max_events && nout >= max_events))
		return true;
	if (!prefix) {
		warnx("output stopped at %lld ns (-%c limit); use -o prefix to write every part",
		      (long long)ts, past_window ? 'w' : 'm');
		return false;
	}
	close_file();
	nfile++;
	tl_cut(tl);
	if (past_window) /* the next window, or one starting here when that one is empty */
		wstart = ts - (wstart + window) >= window ? ts : wstart + window;
	open_file();
	return true;
}

/* A process or thread is drawn once a record names or ranks it. */
static void
track(void *arg, struct tl_track *t, unsigned what)
{
	(void)arg;
	if ((t->kind == TL_PROCESS && (what & (TL_LABEL | TL_RANKED))) ||
	    (t->kind == TL_THREAD && (what & TL_LABEL)))
		draw(t);
}

/* A lane's "tid": a thread's first lane keeps its tid (see keeps_tid). Start/end ranges are
 * async slices of their process, on no track of theirs. */
static void
lane(void *arg, struct tl_lane *l)
{
	(void)arg;
	struct tl_track *t = l->t, *p = process_of(t);
	if (t->kind == TL_NVTX)
		return;
	draw(t->kind == TL_STREAM ? p : t); /* a GPU before its streams, a process after */
	draw(t->kind == TL_STREAM ? t : p);
	l->user = (uint64_t)(l->index == 0 && t->kind == TL_THREAD && keeps_tid(p, t->key)
	                         ? t->key
	                         : SYNTH_ID + nsynth++);
}

/* The name an event is shown by: demangled, unless -M or its args hold a "mangled" of their
 * own (the trace's name would be lost). */
static const char *
shown(const struct cut_event *ev)
{
	const char *d = mangled ? ev->name : cut_demangle(ev->name);
	return d == ev->name || cut_args_find(ev->args, "mangled") ? ev->name : d;
}

/* What the slice's args add to the event's: the name as the trace has it when it is shown
 * demangled ("mangled"), and the collective a GPU kernel is ("collective"). */
static void
add_names(const char **sep, const struct cut_event *ev, const char *name)
{
	const char *coll = ev->layer == CUT_GPU ? cut_collective(ev->name) : NULL;
	if (coll && cut_args_find(ev->args, "collective"))
		coll = NULL;
	if (name == ev->name && !coll)
		return;
	size_t nn = name != ev->name ? strlen(ev->name) : 0, cn = coll ? strlen(coll) : 0;
	char *p = buf_room(&b, 32 + 6 * nn + 6 * cn);
	if (name != ev->name)
		p = put_str(p, sep, "\"mangled\":", 10, ev->name, nn);
	if (coll)
		p = put_str(p, sep, "\"collective\":", 13, coll, cn);
	buf_commit(&b, p);
}

/* An NVTX start/end range: it need not nest with anything, and may end on another thread
 * than it started, so it is an async slice of its process ("b" and "e", an id of its own),
 * not a slice of a thread's track. */
static void
startend_range(struct tl_track *t, const struct cut_event *ev)
{
	struct group *p = draw(t->parent);
	int64_t id = ++nasync;
	char cat[300] = "nvtx";
	/* the domain as a second category: "nvtx,train" */
	if (cut_args_str(ev->args, "domain", cat + 5, sizeof(cat) - 5) > 0)
		cat[4] = ',';
	int64_t jtid = keeps_tid(t->parent, ev->tid) ? ev->tid : p->jpid;
	const char *name = shown(ev), *sep = "";
	begin("b", name, p->jpid, jtid, ev->ts);
	buf_adds(&b, ",\"cat\":");
	buf_addjstr(&b, cat, strlen(cat));
	buf_adds(&b, ",\"id\":");
	buf_addi64(&b, id);
	if ((ev->args && strlen(ev->args) > 2) || name != ev->name) {
		buf_adds(&b, ",\"args\":{");
		if (ev->args && strlen(ev->args) > 2) {
			buf_add(&b, ev->args + 1, strlen(ev->args) - 2);
			sep = ",";
		}
		add_names(&sep, ev, name);
		buf_addc(&b, '}');
	}
	end();
	begin("e", name, p->jpid, jtid, cut_event_end(ev));
	buf_adds(&b, ",\"cat\":");
	buf_addjstr(&b, cat, strlen(cat));
	buf_adds(&b, ",\"id\":");
	buf_addi64(&b, id);
	end();
	p->file = nfile;
}

/* A slice ("X") or instant ("i"); an ioctl's after an arrow from the call it was made in. */
static void
slice(void *arg, struct tl_lane *l, struct tl_open *o, const struct cut_event *ev,
      const struct tl_call *call)
{
	(void)arg, (void)o;
	if (l->t->kind == TL_NVTX) {
		startend_range(l->t, ev);
		return;
	}
	const char *name = shown(ev);
	struct group *p = group(process_of(l->t));
	p->file = nfile;
	/* The start binds to the slice enclosing it (the call, which starts there); the end, a
	 * nanosecond before the ioctl, to the next slice on its track: the ioctl. Both bindings
	 * hold however a viewer orders events with equal timestamps. */
	if (call && call->ts < ev->ts) {
		flow_event("s", "ioctl", p->jpid, (int64_t)call->lane->user, call->ts,
		           ",\"cat\":\"flow\",\"id\":");
		flow_event("f", "ioctl", p->jpid, (int64_t)l->user, ev->ts - 1,
		           ",\"cat\":\"flow\",\"id\":");
	}
	begin(ev->has & CUT_HAS_DUR ? "X" : "i", name, p->jpid, (int64_t)l->user, ev->ts);
	/* the rest in one room: dur, cat, the envelope's numbers, then the args */
	const char *cat = cut_event_category(ev), *sep = "";
	size_t cn = strlen(cat), an = ev->args ? strlen(ev->args) : 0;
	char *q = buf_room(&b, 64 + 6 * cn + 3 * 30 + an);
	if (ev->has & CUT_HAS_DUR)
		q = put_us(PUT(q, ",\"dur\":"), ev->dur);
	else
		q = PUT(q, ",\"s\":\"t\"");
	q = buf_put_jstr(PUT(q, ",\"cat\":"), cat, cn);
	q = PUT(q, ",\"args\":{");
	if (ev->has & CUT_HAS_RET)
		q = put_int(q, &sep, "\"ret\":", 6, ev->ret);
	if (ev->has & CUT_HAS_ID)
		q = put_int(q, &sep, "\"id\":", 5, ev->id);
	if (ev->has & CUT_HAS_PARENT)
		q = put_int(q, &sep, "\"parent\":", 9, ev->parent);
	if (an > 2) {
		if (*sep)
			*q++ = ',';
		memcpy(q, ev->args + 1, an - 2);
		q += an - 2;
		sep = ",";
	}
	buf_commit(&b, q);
	add_names(&sep, ev, name);
	if (ev->extra) {
		buf_adds(&b, sep);
		buf_adds(&b, ev->extra);
	}
	buf_addc(&b, '}');
	end();
}

/* A process's device memory, a GPU's work running. */
static void
counter(void *arg, struct tl_track *t, int64_t ts, int64_t value)
{
	(void)arg;
	struct group *p = draw(t);
	bool gpu = t->kind == TL_GPU;
	begin("C", gpu ? "GPU work running" : "device memory", p->jpid, p->jpid, ts);
	buf_adds(&b, gpu ? ",\"args\":{\"work\":" : ",\"args\":{\"allocated\":");
	buf_addi64(&b, value);
	buf_addc(&b, '}');
	end();
	p->file = nfile;
}

/* An arrow from a call to the GPU work it submitted. */
static void
flow(void *arg, struct tl_lane *from, int64_t ts, struct tl_lane *to, const struct cut_event *ev)
{
	(void)arg;
	flow_event("s", "submit", group(process_of(from->t))->jpid, (int64_t)from->user, ts,
	           ",\"cat\":\"flow\",\"id\":");
	flow_event("f", "submit", group(process_of(to->t))->jpid, (int64_t)to->user, ev->ts,
	           ",\"cat\":\"flow\",\"bp\":\"e\",\"id\":");
}

/* A marker where the capture lost events. */
static void
lost(void *arg, struct tl_track *t, const struct cut_event *ev, int64_t count)
{
	char what[64];
	(void)arg;
	struct group *g = draw(t);
	set_base(ev->ts);
	snprintf(what, sizeof(what), "lost %lld events", (long long)count);
	begin("i", what, g->jpid, g->jpid, ev->ts);
	buf_adds(&b, ",\"s\":\"g\",\"cat\":\"lost\",\"args\":");
	buf_adds(&b, ev->args ? ev->args : "{}");
	end();
	g->file = nfile;
}

/* A duration option ("10ms", "2s", "500us", "1000" nanoseconds), or exit. */
static int64_t
parse_dur(const char *s)
{
	int64_t v = cut_parse_duration(s);
	if (v <= 0)
		errx(CUT_EXIT_FATAL, "-w: not a positive duration such as 500us, 10ms or 2s: %s",
		     s);
	return v;
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
	    {"max-events", required_argument, NULL, 'm'},
	    {"window", required_argument, NULL, 'w'},
	    {"output", required_argument, NULL, 'o'},
	    {"mangled", no_argument, NULL, 'M'},
	    {NULL, 0, NULL, 0},
	};
	static const struct tl_sink sink = {
	    .flags = TL_COMPLETE,
	    .calls = CUT_CALLS_HOLDERS,
	    .at = at,
	    .track = track,
	    .lane = lane,
	    .slice = slice,
	    .counter = counter,
	    .flow = flow,
	    .lost = lost,
	};
	int ch;
	char *e;

	cut_std_args_help(argc, argv, usage, opts);

	while ((ch = getopt_long(argc, argv, "Mm:w:o:", longopts, NULL)) != -1) {
		switch (ch) {
		case 'm':
			max_events = strtoull(optarg, &e, 10);
			if (*optarg < '1' || *optarg > '9' || *e)
				errx(CUT_EXIT_FATAL, "-m: not a positive count: %s", optarg);
			break;
		case 'w': window = parse_dur(optarg); break;
		case 'o': prefix = optarg; break;
		case 'M': mangled = true; break;
		default: usage();
		}
	}
	argc -= optind;
	argv += optind;
	cut_check_inputs(argc, argv, CUT_INPUTS_DISTINCT);

	out = stdout;
	tl = tl_new(&sink);
	open_file();
	int status = tl_run(tl, argc, argv);
	close_file();
	return cut_finish_output(status);
}
