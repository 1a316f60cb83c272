/* cutchrome: cut traces as Chrome trace-event JSON for ui.perfetto.dev and other viewers of
 * that format: ioctls nested in the API calls of each thread, flow arrows, GPU tracks, counters;
 * several inputs (the ranks of a job) merged by time into one timeline. */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "args.h"
#include "buf.h"
#include "calls.h"
#include "cut.h"
#include "event.h"
#include "heap.h"
#include "idmap.h"
#include "meta.h"
#include "outfile.h"
#include "reader.h"
#include "strtab.h"
#include "text.h"
#include "units.h"

/* Linux tids stay below PID_MAX_LIMIT; track ids from there up are ours. */
#define SYNTH_ID (1 << 22)
/* Beyond these the catapult viewer fails to load a file; Perfetto's UI fails near 1 GB. */
#define WARN_EVENTS 1000000
#define WARN_BYTES (256 << 20)

enum kind { PROCESS, THREAD, OFFCPU, GPU, IRQ, NKINDS };

/* One output track: the slices on it always nest. */
struct lane {
	int64_t jtid;  /* its "tid" in the output */
	int64_t last;  /* start of the latest slice placed on it */
	int64_t lo;    /* start of the earliest one */
	int64_t *ends; /* ends of the slices still open on it, outermost first */
	size_t depth, cap;
	int file; /* the last output file it was used in */
	struct lane *next;
};

/* What shares a name: a process, a thread's API track (ioctls and driver functions inside),
 * its off-CPU track, a process's GPU track, a CPU's interrupts. Overlaps spill into lanes. */
struct group {
	enum kind kind;
	int64_t pid, key; /* pid: its process's index in procs; key: the tid, or the CPU (IRQ) */
	char *comm;       /* from meta process/thread records */
	struct lane *lanes;
	int64_t jpid, mem;    /* PROCESS: its "pid" in the output, device bytes allocated */
	int64_t rank;         /* PROCESS: its rank in a distributed job, or -1 */
	int64_t spid, stream; /* GPU: the process (index in procs) and stream of the track */
	bool nostream;        /* GPU: work without a stream */
	size_t order;         /* of creation */
	struct lane **spill;  /* lanes past the scanned ones, see place() */
	size_t nspill, spillcap;
	int file;
};

/* The hosts of the inputs, by name ("" when unknown), in order of appearance. */
static struct cut_strtab *hosts;

/* The processes of the output: a pid of a host, a host's interrupts, a GPU. Everything else
 * keys by the index here, never by the input's pid, which two hosts may share and which may
 * be any value of 64 bits. A process of the first host whose pid is a Linux pid keeps it in
 * the output; the others get a made-up one, as do the threads of theirs. */
enum proc_kind { TASK, INTERRUPTS, DEVICE };
static struct proc {
	enum proc_kind kind;
	size_t host;   /* index in hosts (TASK, INTERRUPTS) */
	int64_t pid;   /* the input's (TASK) */
	size_t device; /* index in devices (DEVICE) */
} * procs;
static size_t nprocs;
/* (host, pid) of a TASK, (-2 - host, 0) of INTERRUPTS, (-1, device) of a DEVICE -> index in
 * procs: the three never meet, whatever the pids. */
static struct cut_idmap *proc_ids;

static struct group **groups; /* in order of creation */
static size_t ngroups;
static struct {
	struct cut_idmap *ids; /* (pid, key) -> index in g */
	struct group **g;
} kinds[NKINDS];
static struct cut_idmap *allocs; /* (proc, dptr) of live allocations -> index in alloc_bytes */
static int64_t *alloc_bytes;
static size_t alloc_cap;
static int64_t nsynth, nflows;

/* The gpu layer: a process per GPU (the physical one, by its device records' uuid, when
 * known: processes sharing it share its tracks), a track per process and stream on it, a
 * flow from each submitting call to its work, and a counter of the work running. As many
 * GPUs as the trace names. */
static struct device {
	size_t uuid; /* index in gpus, or IDMAP_NONE: the GPU of task's ordinal */
	size_t task; /* the process (index in procs) whose ordinal it is */
	int64_t ordinal;
	int64_t *ends; /* ends of the work running, for the counter */
	size_t nends, cap;
	size_t proc; /* its index in procs */
} * devices;
static size_t ndevices;
/* (-1, index in gpus) of a GPU named by uuid, (proc, ordinal) of one that is not -> index
 * in devices. */
static struct cut_idmap *device_ids;
/* The GPUs the device records name by uuid: (host, index in uuids) -> index in gpus; a
 * process's ordinal -> the GPU its latest record named. */
static struct cut_strtab *uuids;
static struct cut_idmap *gpu_ids;
static struct gpu {
	size_t uuid; /* index in uuids */
	char *name;  /* the latest given, or NULL */
} * gpus;
static struct cut_idmap *uuid_ids; /* (proc, ordinal) -> index in uuid_of */
static size_t *uuid_of;            /* -> index in gpus */
/* (proc, stream), or (-1 - proc, 0) for work without a stream -> key of the GPU group of its
 * track */
static struct cut_idmap *streams;
static struct cut_idmap *subs;       /* (proc, corr) -> index in sub_at: submitting calls */
#define MAX_SUBS (1 << 18)           /* of them, the latest kept */
static struct cut_idmap *stream_ids; /* (proc, handle) -> index in stream_names (NVTX) */
static char **stream_names;
static size_t nstream_names;
static struct sub {
	int64_t jpid, jtid, ts;
} * sub_at;
static size_t sub_cap;
static int64_t last_jtid; /* the track slice() last placed on */
/* The calls and ranges open in this output file, for flows to their ioctls; user[0] is the
 * track ("tid") of the slice. */
static struct cut_calls *open_calls;

static FILE *out;
static char out_name[4096]; /* the file out writes, for messages */
static const char *prefix;
static int nfile;
static uint64_t nout, outbytes, max_events;
static int64_t window, wstart = INT64_MIN, lastts = INT64_MIN;
static bool warned_size, warned_order;
static struct cut_buf b;

static void
usage(void)
{
	fprintf(stderr, "usage: cutchrome [-m max-events] [-w window] [-o prefix] [file ...]\n");
	exit(CUT_EXIT_FATAL);
}

/* The index in procs of (a, b) (see proc_ids), added as p when new. */
static size_t
proc_index(int64_t a, int64_t b, struct proc p)
{
	bool isnew;
	size_t i = idmap_put2(proc_ids, a, b, &isnew);
	if (isnew) {
		if (!(procs = realloc(procs, (i + 1) * sizeof(*procs))))
			err(CUT_EXIT_FATAL, "out of memory");
		procs[i] = p;
		nprocs = i + 1;
	}
	return i;
}

/* The process of pid on host h. */
static size_t
task_of(size_t h, int64_t pid)
{
	return proc_index((int64_t)h, pid, (struct proc){.kind = TASK, .host = h, .pid = pid});
}

/* Whether the process keeps its pid, and its threads their tids, in the output: those of the
 * first host whose pid is a Linux pid (another host's may be equal, and a viewer would take a
 * tid kept under a made-up pid for a thread of the process that has that tid's pid). */
static bool
keeps_ids(size_t proc)
{
	return procs[proc].kind == TASK && procs[proc].host == 0 && procs[proc].pid > 0 &&
	       procs[proc].pid < SYNTH_ID;
}

/* Whether thread tid of process proc keeps its tid in the output: its process keeps its pid,
 * and no other process has a thread of that tid (as in a trace made by hand, or of hosts
 * without names): viewers take a tid for one thread of one process. */
static bool
keeps_tid(size_t proc, int64_t tid)
{
	static struct cut_idmap *kept; /* tid -> index in owner */
	static size_t *owner;
	bool isnew;
	if (!keeps_ids(proc) || tid <= 0 || tid >= SYNTH_ID)
		return false;
	if (!kept)
		kept = idmap_new();
	size_t i = idmap_put(kept, tid, &isnew);
	if (isnew) {
		if (!(owner = realloc(owner, (i + 1) * sizeof(*owner))))
			err(CUT_EXIT_FATAL, "out of memory");
		owner[i] = proc;
	}
	return owner[i] == proc;
}

/* The thread's "tid" in the output, where one is given without a track of its own. */
static int64_t
out_tid(size_t proc, int64_t tid, int64_t jpid)
{
	return keeps_tid(proc, tid) ? tid : jpid;
}

/* The group of this kind for pid and key, created when absent if create is set. */
static struct group *
group_find(enum kind kind, int64_t pid, int64_t key, bool create)
{
	struct cut_idmap *ids = kinds[kind].ids;
	bool isnew = false;
	size_t i = create ? idmap_put2(ids, pid, key, &isnew) : idmap_get2(ids, pid, key);
	if (i == IDMAP_NONE)
		return NULL;
	if (!isnew) /* (a lookup without create found it) */
		return kinds[kind].g[i];
	struct group *g = calloc(1, sizeof(*g));
	if (!g || !(kinds[kind].g = realloc(kinds[kind].g, (i + 1) * sizeof(g))) ||
	    !(groups = realloc(groups, (ngroups + 1) * sizeof(g))))
		err(CUT_EXIT_FATAL, "out of memory");
	*g = (struct group){.kind = kind, .pid = pid, .key = key, .file = -1, .order = ngroups};
	g->rank = -1;
	if (kind == PROCESS)
		g->jpid = keeps_ids((size_t)pid) ? procs[pid].pid : SYNTH_ID + nsynth++;
	return kinds[kind].g[i] = groups[ngroups++] = g;
}

static struct group *
group_get(enum kind kind, int64_t pid, int64_t key)
{
	return group_find(kind, pid, key, true);
}

static struct group *
process_of(const struct group *g)
{
	return group_get(PROCESS, g->pid, 0);
}

static struct lane *
lane_new(struct group *g, bool first)
{
	struct lane *l = calloc(1, sizeof(*l));
	if (!l)
		err(CUT_EXIT_FATAL, "out of memory");
	/* A thread of the first host keeps its tid; two hosts' tids may be equal. */
	l->jtid = first && g->kind == THREAD && keeps_tid((size_t)g->pid, g->key)
	              ? g->key
	              : SYNTH_ID + nsynth++;
	l->file = -1;
	return l;
}

/* Puts [ts, end] on l, where it nests. */
static struct lane *
put(struct group *g, struct lane *l, int64_t ts, int64_t end)
{
	if (l->depth == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 8;
		if (!(l->ends = realloc(l->ends, l->cap * sizeof(*l->ends))))
			err(CUT_EXIT_FATAL, "out of memory");
	}
	l->ends[l->depth++] = end;
	l->last = ts;
	if (ts < l->lo)
		l->lo = ts;
	process_of(g)->file = nfile;
	return l;
}

/* The spill lanes of a group, a min-heap by the end of their latest slice. */
static bool
spill_free(const struct lane *l, int64_t ts)
{
	return l->file != nfile || (l->ends[0] <= ts && l->last <= ts);
}

static int64_t
spill_key(const struct lane *l)
{
	return l->file != nfile ? INT64_MIN : l->ends[0];
}

static void
spill_fix(struct group *g, size_t i)
{
	struct lane **h = g->spill, *x = h[i];
	for (size_t c; (c = 2 * i + 1) < g->nspill; i = c) {
		if (c + 1 < g->nspill && spill_key(h[c + 1]) < spill_key(h[c]))
			c++;
		if (spill_key(x) <= spill_key(h[c]))
			break;
		h[i] = h[c];
	}
	h[i] = x;
}

static void
spill_push(struct group *g, struct lane *l)
{
	if (g->nspill == g->spillcap) {
		g->spillcap = g->spillcap ? 2 * g->spillcap : 16;
		if (!(g->spill = realloc(g->spill, g->spillcap * sizeof(*g->spill))))
			err(CUT_EXIT_FATAL, "out of memory");
	}
	size_t i = g->nspill++;
	for (; i && spill_key(l) < spill_key(g->spill[(i - 1) / 2]); i = (i - 1) / 2)
		g->spill[i] = g->spill[(i - 1) / 2];
	g->spill[i] = l;
}

/* The first of g's first SCAN_LANES lanes where a slice [ts, end] nests, given the slices
 * already placed. A lane refuses a slice that starts before its latest one, so unsorted input
 * costs lanes, never nesting. Past those lanes, slices that overlap without nesting (GPU work
 * queued deep) take the spill lane free the longest, or a new one, one slice at a time: a
 * heap keeps that linear in the lanes. */
#define SCAN_LANES 16
static struct lane *
place(struct group *g, int64_t ts, int64_t end)
{
	struct lane **lp = &g->lanes, *l;
	for (int n = 0; n < SCAN_LANES; n++, lp = &l->next) {
		if (!(l = *lp))
			l = *lp = lane_new(g, n == 0);
		if (l->file != nfile) {
			l->file = nfile;
			l->depth = 0;
			l->last = INT64_MIN;
			l->lo = INT64_MAX;
		}
		/* Wholly before everything on the lane (input sorted backwards): it nests with
		 * nothing there, so it can go there, and reverse-sorted input costs no lane. */
		if (ts < l->last && end <= l->lo && end > ts) {
			l->lo = ts;
			process_of(g)->file = nfile;
			return l;
		}
		if (ts < l->last)
			continue;
		while (l->depth && l->ends[l->depth - 1] <= ts)
			l->depth--;
		if (l->depth && end > l->ends[l->depth - 1])
			continue;
		return put(g, l, ts, end);
	}
	if (g->nspill && spill_free(g->spill[0], ts)) {
		l = g->spill[0];
		l->file = nfile;
		l->depth = 0;
		l->lo = INT64_MAX;
		put(g, l, ts, end);
		spill_fix(g, 0);
		return l;
	}
	l = lane_new(g, false);
	l->next = *lp; /* after the scanned lanes: the order of the lanes' names is kept */
	*lp = l;
	l->file = nfile;
	l->lo = INT64_MAX;
	put(g, l, ts, end);
	spill_push(g, l);
	return l;
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

static void
add_us(int64_t ns)
{
	if (ns < 0) {
		buf_addc(&b, '-');
		ns = ns == INT64_MIN ? INT64_MAX : -ns;
	}
	buf_addi64(&b, ns / 1000);
	if (ns % 1000) {
		char frac[4] = {'.', (char)('0' + ns % 1000 / 100), (char)('0' + ns % 100 / 10),
		                (char)('0' + ns % 10)};
		buf_add(&b, frac, 4);
	}
}

/* A member "key":v of the args being built, after a comma unless first (*sep is ""). */
static void
add_int(const char **sep, const char *key, int64_t v)
{
	buf_adds(&b, *sep);
	buf_adds(&b, key);
	buf_addi64(&b, v);
	*sep = ",";
}

/* Starts an output event: phase, name, pid, tid and ts. Without printf: this runs for every
 * event, and formatting was most of cutchrome's time. */
static void
begin(const char *ph, const char *name, int64_t jpid, int64_t jtid, int64_t ts)
{
	buf_reset(&b);
	buf_adds(&b, nout ? ",\n{\"ph\":\"" : "{\"ph\":\"");
	buf_adds(&b, ph);
	buf_adds(&b, "\",\"name\":");
	buf_addjstr(&b, name, strlen(name));
	buf_adds(&b, ",\"pid\":");
	buf_addi64(&b, jpid);
	buf_adds(&b, ",\"tid\":");
	buf_addi64(&b, jtid);
	buf_adds(&b, ",\"ts\":");
	add_us(*ph == 'M' ? 0 : ts - (base < 0 ? 0 : base));
}

/* A failed write ends the run: one line naming the file. */
static void
write_failed(void)
{
	err(CUT_EXIT_FATAL, "write error on %s", prefix ? cut_esc(out_name) : "standard output");
}

static void
end(void)
{
	buf_adds(&b, "}");
	if (fwrite(b.s, 1, b.len, out) != b.len)
		write_failed();
	nout++;
	outbytes += b.len;
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

static const char *
track_name(const struct group *g, const struct group *thread, const struct group *process, int lane,
           char *s, size_t n)
{
	int len;
	switch (g->kind) {
	case IRQ:
		len = g->key < 0 ? snprintf(s, n, "%s", cut_layer_name(CUT_IRQ))
		                 : snprintf(s, n, "%s cpu %lld", cut_layer_name(CUT_IRQ),
		                            (long long)g->key);
		break;
	case GPU: {
		/* "pid P stream S", and the name NVTX gave the stream */
		size_t i = idmap_get2(stream_ids, g->spid, g->stream);
		const struct proc *sp = &procs[g->spid];
		const char *host = strtab_len(hosts) > 1 ? strtab_key(hosts, sp->host) : "";
		if (g->nostream)
			len = snprintf(s, n, "pid %lld%s%s no stream", (long long)sp->pid,
			               *host ? " on " : "", host);
		else
			len = snprintf(s, n, "pid %lld%s%s stream 0x%llx%s%s", (long long)sp->pid,
			               *host ? " on " : "", host, (unsigned long long)g->stream,
			               i != IDMAP_NONE ? ": " : "",
			               i != IDMAP_NONE ? stream_names[i] : "");
		break;
	}
	default: {
		/* A lane with a made-up id says which thread it belongs to. */
		bool synth = g->kind == OFFCPU || lane > 0 || g->lanes->jtid != g->key;
		const char *name =
		    thread && thread->comm ? thread->comm
		    : procs[g->pid].kind == TASK && g->key == procs[g->pid].pid && process->comm
		        ? process->comm
		        : NULL;
		if (!name)
			len = snprintf(s, n, "tid %lld", (long long)g->key);
		else if (synth)
			len = snprintf(s, n, "%s (tid %lld)", name, (long long)g->key);
		else
			len = snprintf(s, n, "%s", name);
		if (g->kind == OFFCPU && len > 0 && (size_t)len < n)
			len +=
			    snprintf(s + len, n - (size_t)len, " %s", cut_layer_label(CUT_SCHED));
	}
	}
	if (lane > 0 && len > 0 && (size_t)len < n)
		snprintf(s + len, n - (size_t)len, " overlap %d", lane);
	return s;
}

/* The ends of the work running on a GPU, a min-heap. */
static void
ends_push(struct device *d, int64_t end)
{
	if (d->nends == d->cap) {
		d->cap = d->cap ? 2 * d->cap : 16;
		if (!(d->ends = realloc(d->ends, d->cap * sizeof(*d->ends))))
			err(CUT_EXIT_FATAL, "out of memory");
	}
	size_t i = d->nends++;
	for (; i && end < d->ends[(i - 1) / 2]; i = (i - 1) / 2)
		d->ends[i] = d->ends[(i - 1) / 2];
	d->ends[i] = end;
}

static int64_t
ends_pop(struct device *d)
{
	int64_t top = d->ends[0], last = d->ends[--d->nends];
	size_t i = 0, c;
	while ((c = 2 * i + 1) < d->nends) {
		if (c + 1 < d->nends && d->ends[c + 1] < d->ends[c])
			c++;
		if (last <= d->ends[c])
			break;
		d->ends[i] = d->ends[c];
		i = c;
	}
	d->ends[i] = last;
	return top;
}

/* A value of a GPU's counter of the work running on it. */
static void
busy_value(struct device *d, int64_t ts)
{
	struct group *p = group_get(PROCESS, (int64_t)d->proc, 0);
	begin("C", "GPU work running", p->jpid, p->jpid, ts);
	buf_adds(&b, ",\"args\":{\"work\":");
	buf_addi64(&b, (int64_t)d->nends);
	buf_addc(&b, '}');
	end();
	p->file = nfile;
}

/* The counters' values where work ended, up to limit. */
static void
flush_busy(int64_t limit)
{
	for (size_t i = 0; i < ndevices; i++) {
		struct device *d = &devices[i];
		while (d->nends && d->ends[0] <= limit) {
			int64_t at = ends_pop(d);
			busy_value(d, at);
		}
	}
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
 * several hosts "name on host". */
static void
process_name(const struct group *g, char *s, size_t n)
{
	char base[300];
	const struct proc *pr = &procs[g->pid];
	const char *host = pr->kind != DEVICE ? strtab_key(hosts, pr->host) : "";
	if (pr->kind == DEVICE) {
		const struct device *d = &devices[pr->device];
		const struct proc *t = &procs[d->task];
		const char *th = strtab_len(hosts) > 1 ? strtab_key(hosts, t->host) : "";
		if (d->uuid != IDMAP_NONE && gpus[d->uuid].name)
			snprintf(s, n, "GPU %s (%s)", strtab_key(uuids, gpus[d->uuid].uuid),
			         gpus[d->uuid].name);
		else if (d->uuid != IDMAP_NONE)
			snprintf(s, n, "GPU %s", strtab_key(uuids, gpus[d->uuid].uuid));
		else
			snprintf(s, n, "GPU pid %lld%s%s device %lld", (long long)t->pid,
			         *th ? " on " : "", th, (long long)d->ordinal);
		return;
	}
	if (g->comm)
		snprintf(base, sizeof(base), "%s", g->comm);
	else if (pr->kind == INTERRUPTS)
		snprintf(base, sizeof(base), "interrupts");
	else
		snprintf(base, sizeof(base), "pid %lld", (long long)pr->pid);
	if (g->rank >= 0)
		snprintf(s, n, "rank %lld%s%s: %s", (long long)g->rank, *host ? " on " : "", host,
		         base);
	else if (strtab_len(hosts) > 1 && *host)
		snprintf(s, n, "%s on %s", base, host);
	else
		snprintf(s, n, "%s", base);
}

/* Names the processes and tracks of this file, closes it and warns when it is too big. A
 * thread's tracks are ordered after it: its API track, overlaps, then its off-CPU track. */
static void
close_file(void)
{
	char name[512];
	flush_busy(INT64_MAX);
	for (size_t k = 0; k < ngroups; k++) {
		struct group *g = groups[k];
		if (g->kind == PROCESS && g->file == nfile) {
			process_name(g, name, sizeof(name));
			metadata("process_name", g->jpid, g->jpid, name, 0);
			if (g->rank >= 0)
				metadata("process_sort_index", g->jpid, g->jpid, NULL, g->rank);
			if (procs[g->pid].kind == DEVICE) /* its counter's track */
				metadata("thread_name", g->jpid, g->jpid, "GPU work running", 0);
		}
		if (!g->lanes)
			continue;
		int i = 0;
		struct group *p = process_of(g);
		struct group *t = g->kind == OFFCPU ? group_find(THREAD, g->pid, g->key, false) : g;
		for (struct lane *l = g->lanes; l; l = l->next, i++) {
			if (l->file != nfile)
				continue;
			track_name(g, t, p, i, name, sizeof(name));
			metadata("thread_name", p->jpid, l->jtid, name, 0);
			if (g->kind == THREAD || g->kind == OFFCPU)
				metadata("thread_sort_index", p->jpid, l->jtid, NULL,
				         (int64_t)(t ? t->order : g->order) * 64 +
				             (g->kind == OFFCPU ? 32 : 0) + (i < 31 ? i : 31));
		}
	}
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

/* Begins a new output file when this event is past the limits; false when there is no next
 * file (no -o): the output stops here. */
static bool
split(int64_t ts)
{
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
	cut_calls_free(open_calls); /* a flow cannot start in another file */
	open_calls = cut_calls_new(CUT_CALLS_HOLDERS);
	if (past_window) /* the next window, or one starting here when that one is empty */
		wstart = ts - (wstart + window) >= window ? ts : wstart + window;
	open_file();
	return true;
}

/* Device memory allocated per process: successful allocations minus frees, matched by dptr. */
static void
count_memory(const struct cut_event *ev)
{
	int64_t dptr, bytes;
	bool alloc = strncmp(ev->name, "cuMemAlloc", 10) == 0, host = strstr(ev->name, "Host");
	if ((!alloc && strncmp(ev->name, "cuMemFree", 9) != 0) || host ||
	    ((ev->has & CUT_HAS_RET) && ev->ret != 0) || cut_args_int(ev->args, "dptr", &dptr))
		return;
	size_t i = idmap_get2(allocs, ev->pid, dptr);
	struct group *p = group_get(PROCESS, ev->pid, 0);
	if (i != IDMAP_NONE) { /* a free, or a reuse whose free was not traced */
		p->mem = (int64_t)((uint64_t)p->mem - (uint64_t)alloc_bytes[i]);
		idmap_del2(allocs, ev->pid, dptr);
	}
	if (alloc && cut_args_int(ev->args, "bytes", &bytes) == 0) {
		size_t j = idmap_put2(allocs, ev->pid, dptr, NULL);
		if (j >= alloc_cap) {
			alloc_cap = alloc_cap ? 2 * alloc_cap : 1024;
			if (!(alloc_bytes = realloc(alloc_bytes, alloc_cap * sizeof(*alloc_bytes))))
				err(CUT_EXIT_FATAL, "out of memory");
		}
		alloc_bytes[j] = bytes;
		p->mem = (int64_t)((uint64_t)p->mem + (uint64_t)bytes); /* no UB on nonsense */
	} else if (i == IDMAP_NONE) {
		return;
	}
	begin("C", "device memory", p->jpid, p->jpid, alloc ? cut_event_end(ev) : ev->ts);
	buf_adds(&b, ",\"args\":{\"allocated\":");
	buf_addi64(&b, p->mem);
	buf_addc(&b, '}');
	end();
	p->file = nfile;
}

/* An event as the tracker of open calls sees it: its pid is its process's index in procs,
 * which tells hosts apart, so without host or rank. */
static struct cut_event
on_thread(const struct cut_event *ev)
{
	struct cut_event e = *ev;
	e.host = NULL;
	e.has &= ~(unsigned)CUT_HAS_RANK;
	return e;
}

/* An arrow from the call an ioctl was made in (its parent: cutmerge's, else the call open
 * around it) to the ioctl's slice on track jtid. */
static void
flow(const struct group *p, const struct cut_event *ev, int64_t jtid)
{
	struct cut_event e = on_thread(ev);
	struct cut_span *a = cut_calls_parent(open_calls, &e);
	if (!a || a->ts >= ev->ts)
		return;
	/* The start binds to the slice enclosing it (the call, which starts there); the end, a
	 * nanosecond before the ioctl, to the next slice on its track: the ioctl. Both
	 * bindings hold however a viewer orders events with equal timestamps. */
	begin("s", "ioctl", p->jpid, (int64_t)a->user[0], a->ts);
	buf_adds(&b, ",\"cat\":\"flow\",\"id\":");
	buf_addi64(&b, ++nflows);
	end();
	begin("f", "ioctl", p->jpid, jtid, ev->ts - 1);
	buf_adds(&b, ",\"cat\":\"flow\",\"id\":");
	buf_addi64(&b, nflows);
	end();
}

static void
slice(struct group *g, const struct cut_event *ev)
{
	struct group *p = process_of(g);
	struct lane *l = place(g, ev->ts, cut_event_end(ev));
	struct cut_span *s;
	if (ev->layer == CUT_IOCTL)
		flow(p, ev, l->jtid);
	begin(ev->has & CUT_HAS_DUR ? "X" : "i", ev->name, p->jpid, l->jtid, ev->ts);
	if (ev->has & CUT_HAS_DUR) {
		buf_adds(&b, ",\"dur\":");
		add_us(ev->dur);
	} else {
		buf_adds(&b, ",\"s\":\"t\"");
	}
	const char *cat = cut_event_category(ev);
	buf_adds(&b, ",\"cat\":");
	buf_addjstr(&b, cat, strlen(cat));
	buf_adds(&b, ",\"args\":{");
	const char *sep = "";
	if (ev->has & CUT_HAS_RET)
		add_int(&sep, "\"ret\":", ev->ret);
	if (ev->has & CUT_HAS_ID)
		add_int(&sep, "\"id\":", ev->id);
	if (ev->has & CUT_HAS_PARENT)
		add_int(&sep, "\"parent\":", ev->parent);
	if (ev->args && strlen(ev->args) > 2) {
		buf_adds(&b, sep);
		buf_add(&b, ev->args + 1, strlen(ev->args) - 2);
		sep = ",";
	}
	if (ev->extra) {
		buf_adds(&b, sep);
		buf_adds(&b, ev->extra);
	}
	buf_adds(&b, "}");
	end();
	struct cut_event e = on_thread(ev);
	if ((s = cut_calls_open(open_calls, &e)))
		s->user[0] = (uint64_t)l->jtid;
	last_jtid = l->jtid;
	if (ev->layer == CUT_API)
		count_memory(ev);
}

/* A marker where the capture lost events. */
static void
lost(const struct cut_event *ev, const struct cut_lost *l)
{
	char what[64];
	struct group *g = group_get(PROCESS, ev->pid, 0);
	set_base(ev->ts);
	snprintf(what, sizeof(what), "lost %lld events",
	         (long long)(l->count == CUT_ABSENT ? 0 : l->count));
	begin("i", what, g->jpid, g->jpid, ev->ts);
	buf_adds(&b, ",\"s\":\"g\",\"cat\":\"lost\",\"args\":");
	buf_adds(&b, ev->args ? ev->args : "{}");
	end();
	g->file = nfile;
}

/* Lost events, and the names of processes and threads. */
static void
meta(const struct cut_event *ev)
{
	struct cut_meta m;
	char kind[8];
	enum cut_meta_kind k = cut_meta_kind(ev);
	/* Symbol records name every kernel (most of a PyTorch trace's bytes): only a stream's
	 * name is drawn, so the others are not read whole. */
	if ((k == CUT_META_SYMBOL && (cut_args_str(ev->args, "kind", kind, sizeof(kind)) != 6 ||
	                              strcmp(kind, "stream") != 0)) ||
	    k == CUT_META_HEADER || k == CUT_META_TRAILER || k == CUT_META_OTHER)
		return;
	k = cut_meta_read(ev, &m);
	const char *name =
	    k == CUT_META_PROCESS || k == CUT_META_THREAD ? cut_task_label(&m.task) : NULL;
	if (k == CUT_META_LOST)
		lost(ev, &m.lost);
	if (k == CUT_META_DEVICE && m.device.uuid && *m.device.uuid &&
	    m.device.device != CUT_ABSENT) {
		/* A GPU of the process's host; the latest record of a process's ordinal holds, and
		 * the latest name given. */
		bool isnew;
		size_t u = strtab_intern(uuids, m.device.uuid);
		size_t j = idmap_put2(gpu_ids, (int64_t)procs[ev->pid].host, (int64_t)u, &isnew);
		if (isnew) {
			if (!(gpus = realloc(gpus, (j + 1) * sizeof(*gpus))))
				err(CUT_EXIT_FATAL, "out of memory");
			gpus[j] = (struct gpu){.uuid = u};
		}
		if (m.device.name && *m.device.name) {
			free(gpus[j].name);
			if (!(gpus[j].name = strdup(m.device.name)))
				err(CUT_EXIT_FATAL, "out of memory");
		}
		size_t i = idmap_put2(uuid_ids, ev->pid, m.device.device, &isnew);
		if (isnew && !(uuid_of = realloc(uuid_of, (i + 1) * sizeof(*uuid_of))))
			err(CUT_EXIT_FATAL, "out of memory");
		uuid_of[i] = j;
	} else if (k == CUT_META_DEVICE && m.device.device != CUT_ABSENT && m.device.name &&
	           *m.device.name) { /* a record without uuid names the GPU of the ordinal */
		size_t i = idmap_get2(uuid_ids, ev->pid, m.device.device);
		if (i != IDMAP_NONE) {
			free(gpus[uuid_of[i]].name);
			if (!(gpus[uuid_of[i]].name = strdup(m.device.name)))
				err(CUT_EXIT_FATAL, "out of memory");
		}
	}
	if (k == CUT_META_SYMBOL && m.symbol.kind && strcmp(m.symbol.kind, "stream") == 0 &&
	    m.symbol.name && *m.symbol.name) {
		size_t i = idmap_put2(stream_ids, ev->pid, m.symbol.handle, NULL);
		if (i >= nstream_names) {
			if (!(stream_names =
			          realloc(stream_names, (i + 1) * sizeof(*stream_names))))
				err(CUT_EXIT_FATAL, "out of memory");
			while (nstream_names <= i)
				stream_names[nstream_names++] = NULL;
		}
		free(stream_names[i]);
		if (!(stream_names[i] = strdup(m.symbol.name)))
			err(CUT_EXIT_FATAL, "out of memory");
	}
	if (k == CUT_META_PROCESS && (ev->has & CUT_HAS_RANK))
		group_get(PROCESS, ev->pid, 0)->rank = ev->rank;
	else if (k == CUT_META_PROCESS && m.task.rank != CUT_ABSENT && m.task.rank >= 0)
		group_get(PROCESS, ev->pid, 0)->rank = m.task.rank;
	if (name) {
		struct group *g = k == CUT_META_PROCESS ? group_get(PROCESS, ev->pid, 0)
		                                        : group_get(THREAD, ev->pid, ev->tid);
		free(g->comm);
		if (!(g->comm = strdup(name)))
			err(CUT_EXIT_FATAL, "out of memory");
	}
	cut_meta_release(&m);
}

/* The GPU a piece of work of process proc ran on: by uuid when the process's device record
 * named it, else the process's own. */
static struct device *
device_of(size_t proc, int64_t ordinal)
{
	size_t u = idmap_get2(uuid_ids, (int64_t)proc, ordinal);
	bool isnew;
	size_t i = u != IDMAP_NONE ? idmap_put2(device_ids, -1, (int64_t)uuid_of[u], &isnew)
	                           : idmap_put2(device_ids, (int64_t)proc, ordinal, &isnew);
	if (!isnew)
		return &devices[i];
	if (!(devices = realloc(devices, (i + 1) * sizeof(*devices))))
		err(CUT_EXIT_FATAL, "out of memory");
	ndevices = i + 1;
	struct device *d = &devices[i];
	*d = (struct device){
	    .uuid = u != IDMAP_NONE ? uuid_of[u] : IDMAP_NONE,
	    .task = proc,
	    .ordinal = ordinal,
	    .proc = proc_index(-1, (int64_t)i, (struct proc){.kind = DEVICE, .device = i})};
	group_get(PROCESS, (int64_t)d->proc, 0);
	return d;
}

/* The count of work running on d, as a counter track: ends up to ts first, then the start;
 * the last ends when the output file closes. */
static void
busy(struct device *d, int64_t ts, int64_t work_end)
{
	while (d->nends && d->ends[0] <= ts) {
		int64_t at = ends_pop(d);
		busy_value(d, at);
	}
	ends_push(d, work_end);
	busy_value(d, ts);
}

/* Notes where a call that submitted GPU work (args.corr) was drawn, for the flow to it. */
static void
note_submit(const struct cut_event *ev, int64_t jtid)
{
	int64_t corr;
	if (cut_args_int(ev->args, "corr", &corr))
		return;
	/* Memory stays bounded when the trace has no GPU work for the calls (no gpu layer): the
	 * oldest of MAX_SUBS calls waiting for their work is forgotten. */
	static struct {
		int64_t pid, corr;
	} ring[MAX_SUBS];
	static size_t head, n;
	if (n == MAX_SUBS) {
		idmap_del2(subs, ring[head].pid, ring[head].corr);
		head = (head + 1) % MAX_SUBS;
		n--;
	}
	ring[(head + n) % MAX_SUBS].pid = ev->pid;
	ring[(head + n++) % MAX_SUBS].corr = corr;
	size_t i = idmap_put2(subs, ev->pid, corr, NULL);
	if (i >= sub_cap) {
		sub_cap = sub_cap ? 2 * sub_cap : 1024;
		while (sub_cap <= i)
			sub_cap *= 2;
		if (!(sub_at = realloc(sub_at, sub_cap * sizeof(*sub_at))))
			err(CUT_EXIT_FATAL, "out of memory");
	}
	sub_at[i] =
	    (struct sub){process_of(group_get(THREAD, ev->pid, ev->tid))->jpid, jtid, ev->ts};
}

/* A piece of GPU work: on its device's track for its process and stream, with a flow from
 * the call that submitted it and the device's busy counter. */
static void
gpu_work(const struct cut_event *ev)
{
	int64_t ordinal = -1, stream = 0, corr;
	cut_args_int(ev->args, "device", &ordinal);
	bool nostream = cut_args_int(ev->args, "stream", &stream) != 0;
	struct device *d = device_of((size_t)ev->pid, ordinal);
	/* One track per process and stream on the GPU; work without a stream apart. */
	int64_t key = (int64_t)(nostream ? idmap_put2(streams, -1 - ev->pid, 0, NULL)
	                                 : idmap_put2(streams, ev->pid, stream, NULL));
	struct group *g = group_get(GPU, (int64_t)d->proc, key);
	g->spid = ev->pid;
	g->stream = stream;
	g->nostream = nostream;
	slice(g, ev);
	int64_t jtid = last_jtid;
	busy(d, ev->ts, cut_event_end(ev));
	size_t i;
	if (cut_args_int(ev->args, "corr", &corr) == 0 &&
	    (i = idmap_get2(subs, ev->pid, corr)) != IDMAP_NONE) {
		struct sub *s = &sub_at[i];
		if (s->ts <= ev->ts) { /* (a copy can start as its call does) */
			begin("s", "submit", s->jpid, s->jtid, s->ts);
			buf_adds(&b, ",\"cat\":\"flow\",\"id\":");
			buf_addi64(&b, ++nflows);
			end();
			begin("f", "submit", process_of(g)->jpid, jtid, ev->ts);
			buf_adds(&b, ",\"cat\":\"flow\",\"bp\":\"e\",\"id\":");
			buf_addi64(&b, nflows);
			end();
		}
		idmap_del2(subs, ev->pid, corr);
	}
}

/* An NVTX start/end range: it need not nest with anything, and may end on another thread
 * than it started, so it is an async slice of its process ("b" and "e", an id of its own),
 * not a slice of a thread's track. */
static void
startend_range(const struct cut_event *ev)
{
	static int64_t nasync;
	struct group *p = group_get(PROCESS, ev->pid, 0);
	int64_t id = ++nasync;
	char cat[300] = "nvtx";
	/* the domain as a second category: "nvtx,train" */
	if (cut_args_str(ev->args, "domain", cat + 5, sizeof(cat) - 5) > 0)
		cat[4] = ',';
	int64_t jtid = out_tid((size_t)ev->pid, ev->tid, p->jpid);
	begin("b", ev->name, p->jpid, jtid, ev->ts);
	buf_adds(&b, ",\"cat\":");
	buf_addjstr(&b, cat, strlen(cat));
	buf_adds(&b, ",\"id\":");
	buf_addi64(&b, id);
	if (ev->args && strlen(ev->args) > 2) {
		buf_adds(&b, ",\"args\":");
		buf_adds(&b, ev->args);
	}
	end();
	begin("e", ev->name, p->jpid, jtid, cut_event_end(ev));
	buf_adds(&b, ",\"cat\":");
	buf_addjstr(&b, cat, strlen(cat));
	buf_adds(&b, ",\"id\":");
	buf_addi64(&b, id);
	end();
	p->file = nfile;
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

/* An input: its reader, its next event, the host its header named. */
struct input {
	struct cut_reader *r;
	struct cut_event ev;
	size_t host;          /* index in hosts of the header's host */
	const char *env_host; /* the envelope host last seen, and its index */
	size_t env_index;
	bool stopped; /* reading must stop (strict mode) */
	bool headed;  /* its host is known */
};

/* An input in the heap of the next events: by time, then input order. */
struct head {
	struct cut_heap_key k;
	size_t i;
};

/* The index of host name h in hosts, added when new. */
static size_t
host_index(const char *h)
{
	return strtab_intern(hosts, h);
}

/* Reads src's next event into the heap; false at its end (or when it must stop). */
static bool
advance(struct input *src, struct cut_heap *heads, int i, int *status)
{
	int rc = cut_reader_next(src->r, &src->ev);
	if (rc > 0) {
		heap_push(heads, &(struct head){{src->ev.ts, (uint64_t)i}, (size_t)i});
		return true;
	}
	if (rc < 0 && !cut_reader_failed(src->r))
		src->stopped = true; /* strict mode: a bad line stops everything */
	if (rc < 0 && *status == CUT_EXIT_OK)
		*status = CUT_EXIT_BADINPUT;
	return false;
}

/* Closes an input, its bad lines and read errors in the exit status. */
static void
finish(struct input *src, int *status)
{
	bool failed = cut_reader_failed(src->r);
	if (cut_reader_close(src->r) && *status == CUT_EXIT_OK)
		*status = CUT_EXIT_BADINPUT;
	if (failed)
		*status = CUT_EXIT_LOST; /* a read error loses that input only */
	src->r = NULL;
}

/* The host of an event: its envelope's, else its input's header's. */
static size_t
event_host(struct input *src, const struct cut_event *ev)
{
	if (!ev->host)
		return src->host;
	if (!src->env_host || strcmp(src->env_host, ev->host) != 0) {
		src->env_index = host_index(ev->host);
		free((char *)src->env_host);
		if (!(src->env_host = strdup(ev->host)))
			err(CUT_EXIT_FATAL, "out of memory");
	}
	return src->env_index;
}

/* Refuses an input named twice (standard input, or one file under two names), as cutmerge
 * does: the inputs are read at once, so two readers of one pipe would split it between them,
 * and a file read twice would draw each event twice. */
static void
check_inputs(int argc, char *argv[])
{
	struct stat *st = calloc((size_t)argc + 1, sizeof(*st));
	bool *known = calloc((size_t)argc + 1, sizeof(*known));
	if (!st || !known)
		err(CUT_EXIT_FATAL, "out of memory");
	for (int i = 0; i < argc; i++) {
		bool in = strcmp(argv[i], "-") == 0;
		known[i] = in ? fstat(0, &st[i]) == 0 : stat(argv[i], &st[i]) == 0;
		for (int j = 0; j < i; j++) {
			bool same = in && strcmp(argv[j], "-") == 0;
			same |= known[i] && known[j] && st[i].st_dev == st[j].st_dev &&
			        st[i].st_ino == st[j].st_ino && !S_ISDIR(st[i].st_mode);
			if (same)
				errx(CUT_EXIT_FATAL, "%s and %s are the same input: name each once",
				     cut_esc(argv[j]), cut_esc(argv[i]));
		}
	}
	free(st);
	free(known);
}

/* One event of src; false when the output stops here (a limit without -o). */
static bool
event(struct input *src, struct cut_event *ev)
{
	/* The first header says the input's host; later ones are other processes' of the same
	 * capture, or the inputs' of a merge, whose events carry their host in the envelope. */
	if (ev->layer == CUT_META && cut_meta_kind(ev) == CUT_META_HEADER) {
		struct cut_meta m;
		if (!src->headed && cut_meta_read(ev, &m) == CUT_META_HEADER) {
			src->host = host_index(m.header.host ? m.header.host : "");
			cut_meta_release(&m);
		}
		src->headed = true;
		return true;
	}
	if (!src->headed) { /* no header: an unknown host */
		src->host = host_index("");
		src->headed = true;
	}
	/* From here on an event's pid is its process's index in procs. */
	size_t host = event_host(src, ev);
	ev->pid = (int64_t)task_of(host, ev->pid);
	if (ev->layer == CUT_META) {
		meta(ev);
		return true;
	}
	set_base(ev->ts);
	if (!split(ev->ts))
		return false;
	if (ev->ts < lastts && !warned_order) {
		warnx("%s:%llu: input not sorted by time: tracks multiply to keep slices nested; "
		      "sort it with cutmerge",
		      cut_reader_path(src->r), (unsigned long long)cut_reader_line(src->r));
		warned_order = true;
	}
	if (ev->ts > lastts)
		lastts = ev->ts;
	if (ev->has & CUT_HAS_RANK)
		group_get(PROCESS, ev->pid, 0)->rank = ev->rank;
	int64_t cpu = -1;
	switch (ev->layer) {
	case CUT_IRQ:
		cut_args_int(ev->args, "cpu", &cpu);
		slice(
		    group_get(IRQ,
		              (int64_t)proc_index(-2 - (int64_t)host, 0,
		                                  (struct proc){.kind = INTERRUPTS, .host = host}),
		              cpu),
		    ev);
		break;
	case CUT_SCHED: slice(group_get(OFFCPU, ev->pid, ev->tid), ev); break;
	case CUT_GPU: gpu_work(ev); break;
	case CUT_NVTX:
		if (ev->cat && strcmp(ev->cat, "startend") == 0 && (ev->has & CUT_HAS_DUR)) {
			startend_range(ev);
			break;
		}
		__attribute__((fallthrough)); /* push/pop ranges nest on their thread's track */
	default:
		slice(group_get(THREAD, ev->pid, ev->tid), ev);
		if (ev->layer == CUT_API)
			note_submit(ev, last_jtid);
	}
	return true;
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
	    {"max-events", required_argument, NULL, 'm'},
	    {"window", required_argument, NULL, 'w'},
	    {"output", required_argument, NULL, 'o'},
	    {NULL, 0, NULL, 0},
	};
	int ch, status = CUT_EXIT_OK;
	char *e;

	cut_std_args(argc, argv, usage);

	while ((ch = getopt_long(argc, argv, "m:w:o:", longopts, NULL)) != -1) {
		switch (ch) {
		case 'm':
			max_events = strtoull(optarg, &e, 10);
			if (*optarg < '1' || *optarg > '9' || *e)
				errx(CUT_EXIT_FATAL, "-m: not a positive count: %s", optarg);
			break;
		case 'w': window = parse_dur(optarg); break;
		case 'o': prefix = optarg; break;
		default: usage();
		}
	}
	argc -= optind;
	argv += optind;
	check_inputs(argc, argv);

	out = stdout;
	allocs = idmap_new();
	hosts = strtab_new();
	proc_ids = idmap_new();
	device_ids = idmap_new();
	streams = idmap_new();
	uuids = strtab_new();
	gpu_ids = idmap_new();
	uuid_ids = idmap_new();
	subs = idmap_new();
	stream_ids = idmap_new();
	open_calls = cut_calls_new(CUT_CALLS_HOLDERS);
	for (int k = 0; k < NKINDS; k++)
		kinds[k].ids = idmap_new();
	open_file();

	/* Every input open at once, merged by time: each is sorted, or nearly (cuthook, cutmerge
	 * and cutcapture write them so), and the ranks of a job become one timeline. */
	int n = argc ? argc : 1;
	struct input *in = calloc((size_t)n, sizeof(*in));
	struct cut_heap heads;
	struct head h;
	if (!in)
		err(CUT_EXIT_FATAL, "out of memory");
	heap_init(&heads, sizeof(struct head));
	for (int i = 0; i < n; i++) {
		if (!(in[i].r = cut_reader_open(argc ? argv[i] : NULL, 0))) {
			warn("%s", argc ? cut_esc(argv[i]) : "<stdin>");
			status = CUT_EXIT_LOST;
			continue;
		}
		advance(&in[i], &heads, i, &status);
	}
	while (heap_pop(&heads, &h)) {
		struct input *src = &in[h.i];
		if (!event(src, &src->ev) ||
		    (!advance(src, &heads, (int)h.i, &status) && src->stopped))
			break;
	}
	for (int i = 0; i < n; i++) {
		if (in[i].r)
			finish(&in[i], &status);
		free((char *)in[i].env_host);
	}
	free(in);
	heap_free(&heads);
	close_file();
	return cut_finish_output(status);
}
