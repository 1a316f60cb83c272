/* timeline.c: the timeline model (timeline.h): inputs merged by time, tracks keyed in idmaps,
 * slices placed on lanes, ends and spill lanes in heaps, names from cut_meta_read, the call an
 * ioctl was made in from calls.h. */
#include <err.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "args.h"
#include "calls.h"
#include "classify.h"
#include "cut.h"
#include "heap.h"
#include "idmap.h"
#include "meta.h"
#include "procs.h"
#include "reader.h"
#include "strtab.h"
#include "text.h"
#include "timeline.h"

/* The lanes of a track that placement scans for one where a slice nests. */
#define SCAN_LANES 16
/* Calls that submitted GPU work (args.corr) waiting for it; of them, the latest are kept, so
 * that memory stays bounded in traces without the gpu layer. */
#define MAX_SUBS (1 << 18)
/* Two traces of one host whose clock offsets differ by less than this share a boot (as in
 * cutmerge). */
#define SAME_BOOT_NS 1000000000

/* An input: its reader, its next event, its machine, its processes. */
struct input {
	struct cut_reader *r;
	struct cut_event ev;
	bool stopped; /* reading must stop (strict mode) */
	bool headed;  /* its first header was read: */
	bool clock;   /* that header's clock pair, and its host (NULL when none) */
	int64_t mono, real;
	const char *host;
	struct tl_machine *m; /* the machine of host ("" when none); NULL until needed */
	const char *env;      /* the host last named apart from host, and its machine */
	struct tl_machine *env_m;
	int64_t writer; /* the pid of its latest header's writer, and the tool */
	const char *tool;
	/* Its processes by procs.h's rule (the host and rank of records that lack them), and
	 * the model's process of each, as it was when first met (its host then, else the
	 * input's), and the rank last said of it */
	struct cut_procs *procs;
	struct vproc {
		size_t p; /* 1 + its index in tl->procs; 0: none yet */
		int64_t rank;
	} * vp;
	size_t vpcap;
};

/* Tracks by a key pair. */
struct map {
	struct cut_idmap *ids;
	struct tl_track **t;
	size_t cap;
};

/* A stream of a process that NVTX can name: its tracks, one per GPU it is used on. */
struct sname {
	const char *name;
	struct tl_track *first;
};

/* A lane past the scanned ones, in a track's heap by the end of its slice; an end of a slice
 * in the heap of ends, the deepest first among equal ends (its seq is ~depth). */
struct spill {
	struct cut_heap_key k;
	struct tl_lane *l;
};
struct end {
	struct cut_heap_key k;
	struct tl_lane *l;
	size_t depth;
};

struct tl {
	struct tl_sink s;
	struct cut_strtab *strs; /* every name, host and domain: stable strings */
	struct cut_buf scratch;
	struct tl_machine **machines, **by_host; /* by_host: the first of each host (by strs) */
	size_t nmachines, mcap, hcap;
	struct tl_track **tracks;
	size_t ntracks, tcap;
	/* (machine, pid) -> a process id: the key of all the process's data */
	struct cut_idmap *proc_ids;
	struct proc {
		struct tl_machine *m;
		int64_t pid;
		int64_t rank;       /* -1: none known */
		struct tl_track *t; /* its track, made when first needed */
	} * procs;
	size_t proccap;
	/* THREAD, OFFCPU: (proc, tid); NVTX: (proc, domain or -1); IRQS: (machine, 0); IRQ:
	 * (machine, cpu); GPU: by uuid (machine, uuid), by ordinal (proc, ordinal), and the one
	 * an ordinal names (proc, ordinal); STREAM: (proc, key in stream_keys) */
	struct map threads, offcpus, nvtxs, irqs, irqcpus, gpus, gpu_ords, gpu_refs, streams;
	struct cut_idmap *stream_keys; /* (GPU, handle), (-1 - GPU, 0) without a stream */
	struct cut_idmap *sname_ids;   /* (proc, handle) -> index in snames */
	struct sname *snames;
	size_t sncap;
	struct cut_idmap *allocs; /* (proc, dptr) of live device allocations -> index in bytes */
	int64_t *alloc_bytes;
	size_t alloc_cap;
	struct cut_calls *calls; /* the calls open, user: lane and depth of the slice */
	struct cut_heap ends;    /* of the slices open, without TL_COMPLETE */
	struct tl_track **busy;  /* TL_COMPLETE: the GPUs with work, in order of their first */
	size_t nbusy, busycap;
	struct cut_submits *subs; /* sink.flow: the calls that submitted work, by (proc, corr) */
	unsigned epoch;
	int64_t last; /* the latest start of an event so far (not of a meta record) */
	bool warned_order;
};

static const char *
str(struct tl *tl, const char *s)
{
	return strtab_key(tl->strs, strtab_intern(tl->strs, s));
}

/* Whether s, a name a record gives, is one (not empty) and not cur. */
static bool
differs(const char *cur, const char *s)
{
	return s && *s && (!cur || strcmp(cur, s) != 0);
}

/* The string value of key in args, whole, or NULL when absent or not a string. */
static const char *
args_str(struct tl *tl, const char *args, const char *key)
{
	char small[256];
	int n = cut_args_str(args, key, small, sizeof(small));
	if (n < 0)
		return NULL;
	if ((size_t)n < sizeof(small))
		return str(tl, small);
	buf_reset(&tl->scratch);
	char *s = buf_room(&tl->scratch, (size_t)n + 1);
	cut_args_str(args, key, s, (size_t)n + 1);
	return str(tl, s);
}

/* ---- tracks ---- */

static void
say(struct tl *tl, struct tl_track *t, unsigned what)
{
	if (tl->s.track)
		tl->s.track(tl->s.arg, t, what);
}

static void
counter(struct tl *tl, struct tl_track *t, int64_t ts, int64_t value)
{
	if (tl->s.counter)
		tl->s.counter(tl->s.arg, t, ts, value);
}

/* The slot of (a, b) in map mp, added (empty) when absent if create is set, else NULL. */
static struct tl_track **
slot(struct map *mp, int64_t a, int64_t b, bool create)
{
	size_t i = create ? idmap_put2(mp->ids, a, b, NULL) : idmap_get2(mp->ids, a, b);
	if (i == IDMAP_NONE)
		return NULL;
	CUT_GROW(mp->t, i + 1, mp->cap);
	return &mp->t[i];
}

/* A new track of kind for (m, pid, key), told to the sink before its parent is made; the
 * caller makes that, then says TL_NEW. */
static struct tl_track *
made(struct tl *tl, enum tl_kind kind, struct tl_machine *m, int64_t pid, int64_t key)
{
	struct tl_track *t = cut_xcalloc(1, sizeof(*t));
	*t = (struct tl_track){
	    .kind = kind, .order = tl->ntracks, .m = m, .pid = pid, .key = key, .rank = -1};
	CUT_GROW(tl->tracks, tl->ntracks + 1, tl->tcap);
	tl->tracks[tl->ntracks++] = t;
	say(tl, t, TL_MADE);
	return t;
}

/* The process id of pid on machine m. */
static size_t
proc_of(struct tl *tl, struct tl_machine *m, int64_t pid)
{
	bool isnew;
	size_t p = idmap_put2(tl->proc_ids, (int64_t)m->index, pid, &isnew);
	if (isnew) {
		CUT_GROW(tl->procs, p + 1, tl->proccap);
		tl->procs[p] = (struct proc){.m = m, .pid = pid, .rank = -1};
	}
	return p;
}

static struct tl_track *
process(struct tl *tl, size_t p)
{
	if (!tl->procs[p].t) {
		struct tl_track *t = made(tl, TL_PROCESS, tl->procs[p].m, tl->procs[p].pid, 0);
		t->rank = tl->procs[p].rank;
		tl->procs[p].t = t;
		say(tl, t, TL_NEW);
	}
	return tl->procs[p].t;
}

/* Process p is of rank (-1: none), and its machine of that rank or a lower one. */
static void
set_rank(struct tl *tl, size_t p, int64_t rank)
{
	struct tl_track *t = tl->procs[p].t;
	struct tl_machine *m = tl->procs[p].m;
	tl->procs[p].rank = rank;
	if (rank >= 0 && (m->rank < 0 || rank < m->rank))
		m->rank = rank;
	if (t && t->rank != rank) {
		t->rank = rank;
		say(tl, t, TL_RANKED);
	}
}

/* The track of a process's (or machine's) data for key in mp, of this kind under parent
 * (made by up from p when new). */
static struct tl_track *
child(struct tl *tl, struct map *mp, enum tl_kind kind, int64_t a, int64_t key,
      struct tl_machine *m, int64_t pid, struct tl_track *(*up)(struct tl *, size_t, int64_t),
      size_t p, int64_t upkey)
{
	struct tl_track **sp = slot(mp, a, key, true), *t = *sp;
	if (t)
		return t;
	t = *sp = made(tl, kind, m, pid, key);
	if (up)
		t->parent = up(tl, p, upkey);
	say(tl, t, TL_NEW);
	return t;
}

static struct tl_track *
process_up(struct tl *tl, size_t p, int64_t unused)
{
	(void)unused;
	return process(tl, p);
}

static struct tl_track *
thread(struct tl *tl, size_t p, int64_t tid)
{
	return child(tl, &tl->threads, TL_THREAD, (int64_t)p, tid, tl->procs[p].m, tl->procs[p].pid,
	             process_up, p, 0);
}

static struct tl_track *
offcpu(struct tl *tl, size_t p, int64_t tid)
{
	return child(tl, &tl->offcpus, TL_OFFCPU, (int64_t)p, tid, tl->procs[p].m, tl->procs[p].pid,
	             thread, p, tid);
}

static struct tl_track *
irqs(struct tl *tl, size_t m, int64_t unused)
{
	(void)unused;
	return child(tl, &tl->irqs, TL_IRQS, (int64_t)m, 0, tl->machines[m], -1, NULL, 0, 0);
}

static struct tl_track *
irqcpu(struct tl *tl, struct tl_machine *m, int64_t cpu)
{
	return child(tl, &tl->irqcpus, TL_IRQ, (int64_t)m->index, cpu, m, -1, irqs, m->index, 0);
}

/* The track of a process's NVTX start/end ranges of domain (NULL: the default). */
static struct tl_track *
nvtx(struct tl *tl, size_t p, const char *domain)
{
	int64_t key = domain ? (int64_t)strtab_intern(tl->strs, domain) : -1;
	struct tl_track **sp = slot(&tl->nvtxs, (int64_t)p, key, true), *t = *sp;
	if (!t) {
		t = *sp = made(tl, TL_NVTX, tl->procs[p].m, tl->procs[p].pid, key);
		t->domain = domain;
		t->parent = process(tl, p);
		say(tl, t, TL_NEW);
	}
	return t;
}

/* The GPU of a process's ordinal: the one its latest device record named by uuid, else the
 * process's own. */
static struct tl_track *
gpu_of(struct tl *tl, size_t p, int64_t ordinal)
{
	struct tl_track **r = slot(&tl->gpu_refs, (int64_t)p, ordinal, false);
	if (r && *r)
		return *r;
	return child(tl, &tl->gpu_ords, TL_GPU, (int64_t)p, ordinal, tl->procs[p].m,
	             tl->procs[p].pid, process_up, p, 0);
}

/* The track of a process's stream on GPU g (has: the work named one), named as NVTX named
 * the stream. */
static struct tl_track *
stream_of(struct tl *tl, struct tl_track *g, size_t p, bool has, int64_t handle)
{
	int64_t k =
	    (int64_t)idmap_put2(tl->stream_keys, has ? (int64_t)g->order : -1 - (int64_t)g->order,
	                        has ? handle : 0, NULL);
	struct tl_track **sp = slot(&tl->streams, (int64_t)p, k, true), *t = *sp;
	if (t)
		return t;
	t = *sp = made(tl, TL_STREAM, tl->procs[p].m, tl->procs[p].pid, has ? handle : 0);
	t->parent = g;
	t->nostream = !has;
	if (has) {
		size_t i = idmap_put2(tl->sname_ids, (int64_t)p, handle, NULL);
		CUT_GROW(tl->snames, i + 1, tl->sncap);
		t->same = tl->snames[i].first;
		tl->snames[i].first = t;
		t->nvtx = tl->snames[i].name;
	}
	say(tl, t, TL_NEW);
	return t;
}

struct tl_track *
tl_up(struct tl_track *t, enum tl_kind kind)
{
	while (t && t->kind != kind)
		t = t->parent;
	return t;
}

/* ---- machines and inputs ---- */

/* The machine of a host (with TL_BOOTS, and boot: the offset between its clocks), made when
 * new. */
static struct tl_machine *
machine(struct tl *tl, const char *host, bool clock, int64_t mono, int64_t real)
{
	size_t h = strtab_intern(tl->strs, host);
	CUT_GROW(tl->by_host, h + 1, tl->hcap);
	struct tl_machine **mp = &tl->by_host[h];
	for (; *mp; mp = &(*mp)->same) {
		struct tl_machine *m = *mp;
		int64_t d = (int64_t)((uint64_t)real - (uint64_t)mono - (uint64_t)m->real +
		                      (uint64_t)m->mono);
		if (!(tl->s.flags & TL_BOOTS) ||
		    (m->clock == clock && (!clock || (d > -SAME_BOOT_NS && d < SAME_BOOT_NS))))
			return m;
	}
	struct tl_machine *m = *mp = cut_xcalloc(1, sizeof(*m));
	*m = (struct tl_machine){.host = strtab_key(tl->strs, h),
	                         .clock = clock,
	                         .mono = clock ? mono : 0,
	                         .real = clock ? real : 0,
	                         .index = tl->nmachines,
	                         .rank = -1};
	CUT_GROW(tl->machines, tl->nmachines + 1, tl->mcap);
	tl->machines[tl->nmachines++] = m;
	if (tl->s.machine)
		tl->s.machine(tl->s.arg, m);
	return m;
}

/* The input's machine: its first header's host ("" when it names none, or there is no
 * header), made when first needed. */
static struct tl_machine *
input_machine(struct tl *tl, struct input *in)
{
	if (!in->m)
		in->m = machine(tl, in->host ? in->host : "", in->clock, in->mono, in->real);
	return in->m;
}

/* The machine of host in input in: the input's, or another host's of a merged trace of
 * several, on the input's clock ("": a host without a name). */
static struct tl_machine *
host_machine(struct tl *tl, struct input *in, const char *host)
{
	if (strcmp(host, in->host ? in->host : "") == 0)
		return input_machine(tl, in);
	if (!in->env || strcmp(in->env, host) != 0) {
		in->env = str(tl, host);
		in->env_m = machine(tl, host, in->clock, in->mono, in->real);
	}
	return in->env_m;
}

/*
 * The model's process of a record of in that is of the input's process i (procs.h's rule:
 * a record without a host or rank is of the process of its pid that others name, writers
 * having left them off some records, as in samples/ddp-2gpu-hook.jsonl.zst), on the machine
 * of the host known of that process when first met, else the input's; a process of another
 * input of the same machine and pid is the same one. What the input says of its rank, as it
 * learns it, is the process's rank.
 */
static size_t
proc_for(struct tl *tl, struct input *in, const struct cut_event *ev, size_t i)
{
	CUT_GROW(in->vp, i + 1, in->vpcap);
	struct vproc *v = &in->vp[i];
	if (!v->p) {
		const char *host = cut_procs_host(in->procs, i);
		struct tl_machine *m = host ? host_machine(tl, in, host) : input_machine(tl, in);
		*v = (struct vproc){1 + proc_of(tl, m, ev->pid), -1};
	}
	int64_t rank = cut_procs_rank(in->procs, i);
	if (rank != v->rank)
		set_rank(tl, v->p - 1, v->rank = rank);
	return v->p - 1;
}

/* A header: the first of an input says its machine by its host and clock. Later ones are
 * other processes' of the same capture (cuthook) or the inputs' of a merge, whose events
 * carry their host in the envelope and cutmerge moved onto its own clock: they change only
 * the writer (and, through procs.h, say the host of the writer's process). */
static void
header(struct tl *tl, struct input *in, const struct cut_event *ev)
{
	struct cut_meta m;
	cut_meta_read(ev, &m);
	const struct cut_header *h = &m.header;
	if (!in->headed && !in->m) { /* (records before it made the machine of no host) */
		in->clock = h->monotonic_ns != CUT_ABSENT && h->realtime_ns != CUT_ABSENT &&
		            h->monotonic_ns >= 0 && h->realtime_ns >= 0;
		in->mono = in->clock ? h->monotonic_ns : 0;
		in->real = in->clock ? h->realtime_ns : 0;
		in->host = h->host && *h->host ? str(tl, h->host) : NULL;
		if (in->host) /* (a header without one: its machine when needed) */
			input_machine(tl, in);
	}
	in->headed = true;
	in->writer = ev->pid;
	in->tool = h->tool && *h->tool ? str(tl, h->tool) : NULL;
	cut_meta_release(&m);
}

/* ---- meta records ---- */

/* A process's names (its rank is procs.h's). */
static void
process_record(struct tl *tl, const struct cut_task *task, size_t p)
{
	struct tl_track *t = process(tl, p);
	const char *cur = t->label ? t->label : t->tool, *label = cut_task_label(task);
	unsigned what = 0;
	if (differs(cur, task->comm))
		what |= TL_NAMED, cur = task->comm;
	if (differs(cur, task->name))
		what |= TL_NAMED;
	if (label && differs(t->label, label))
		what |= TL_LABEL, t->label = str(tl, label);
	if (differs(t->cmdline, task->cmdline))
		what |= TL_NAMED, t->cmdline = str(tl, task->cmdline);
	if (what)
		say(tl, t, what);
}

static void
thread_record(struct tl *tl, const struct cut_event *ev, const struct cut_task *task, size_t p)
{
	struct tl_track *t = thread(tl, p, ev->tid);
	const char *label = cut_task_label(task);
	unsigned what = 0;
	if (differs(t->comm, task->comm))
		what |= TL_NAMED, t->comm = str(tl, task->comm);
	if (differs(t->nvtx, task->name))
		what |= TL_NAMED, t->nvtx = str(tl, task->name);
	if (label && differs(t->label, label))
		what |= TL_LABEL, t->label = str(tl, label);
	if (what)
		say(tl, t, what);
}

/* A GPU a process's ordinal names: by its uuid, one GPU of the machine for every process
 * that names it (of any ordinal), named by the latest name given; without one, the
 * process's own. */
static void
device_record(struct tl *tl, const struct cut_device *d, struct tl_machine *m, size_t p)
{
	struct tl_track *g;
	bool isnew = false;
	if (d->device == CUT_ABSENT)
		return;
	if (d->uuid && *d->uuid) {
		struct tl_track **sp = slot(&tl->gpus, (int64_t)m->index,
		                            (int64_t)strtab_intern(tl->strs, d->uuid), true);
		if ((isnew = !*sp)) {
			g = *sp = made(tl, TL_GPU, m, -1, d->device);
			g->uuid = str(tl, d->uuid);
		}
		g = *sp;
		*slot(&tl->gpu_refs, (int64_t)p, d->device, true) = g;
	} else {
		g = gpu_of(tl, p, d->device);
	}
	bool named = differs(g->name, d->name);
	if (named)
		g->name = str(tl, d->name);
	if (isnew || named)
		say(tl, g, isnew ? TL_NEW : TL_NAMED);
}

/* A stream named through NVTX (a symbol record of kind "stream"): its tracks, on each GPU the
 * process has used it on so far, are renamed. */
static void
stream_record(struct tl *tl, const struct cut_symbol *s, size_t p)
{
	if (s->handle == CUT_ABSENT)
		return;
	size_t i = idmap_put2(tl->sname_ids, (int64_t)p, s->handle, NULL);
	CUT_GROW(tl->snames, i + 1, tl->sncap);
	struct sname *n = &tl->snames[i];
	if (!differs(n->name, s->name))
		return;
	n->name = str(tl, s->name);
	for (struct tl_track *t = n->first; t; t = t->same)
		if (differs(t->nvtx, n->name)) {
			t->nvtx = n->name;
			say(tl, t, TL_NAMED);
		}
}

/* Lost events, on the process of the record; an unnamed process that wrote the trace is
 * named after its tool. */
static void
lost_record(struct tl *tl, struct input *in, const struct cut_event *ev, const struct cut_lost *l,
            size_t p)
{
	struct tl_track *t = process(tl, p);
	if (!t->label && !t->tool && in->tool && ev->pid == in->writer) {
		t->tool = in->tool;
		say(tl, t, TL_NAMED);
	}
	if (tl->s.lost)
		tl->s.lost(tl->s.arg, t, ev, l->count == CUT_ABSENT ? 0 : l->count);
}

/* Whether the timeline shows what a meta record (not a header) says: lost events, the names
 * of processes, threads, GPUs and streams. Symbol records name every kernel (most of a
 * PyTorch trace's bytes): only a stream's name is kept, so the others are not read whole. */
static bool
shown_meta(const struct cut_event *ev)
{
	char kind[8];
	enum cut_meta_kind k = cut_meta_kind(ev);
	return k == CUT_META_SYMBOL ? cut_args_str(ev->args, "kind", kind, sizeof(kind)) == 6 &&
	                                  strcmp(kind, "stream") == 0
	                            : k != CUT_META_TRAILER && k != CUT_META_OTHER;
}

/* A meta record that shown_meta() keeps. */
static void
meta(struct tl *tl, struct input *in, const struct cut_event *ev, struct tl_machine *mach, size_t p)
{
	struct cut_meta m;
	switch (cut_meta_read(ev, &m)) {
	case CUT_META_PROCESS: process_record(tl, &m.task, p); break;
	case CUT_META_THREAD: thread_record(tl, ev, &m.task, p); break;
	case CUT_META_DEVICE: device_record(tl, &m.device, mach, p); break;
	case CUT_META_SYMBOL: stream_record(tl, &m.symbol, p); break;
	case CUT_META_LOST: lost_record(tl, in, ev, &m.lost, p); break;
	default: break;
	}
	cut_meta_release(&m);
}

/* ---- slices ---- */

static struct tl_lane *
lane_new(struct tl *tl, struct tl_track *t)
{
	struct tl_lane *l = cut_xcalloc(1, sizeof(*l));
	*l = (struct tl_lane){.t = t,
	                      .index = t->nlanes++,
	                      .epoch = tl->epoch,
	                      .last = INT64_MIN,
	                      .lo = INT64_MAX,
	                      .floor = INT64_MIN};
	if (tl->s.lane)
		tl->s.lane(tl->s.arg, l);
	return l;
}

/*
 * The first of t's first SCAN_LANES lanes where a slice [ts, end] nests, given the slices
 * open on each. A lane refuses a slice that starts before its latest one (or, without
 * TL_COMPLETE, before the end of one it closed), so unsorted input costs lanes, never
 * nesting; with TL_COMPLETE, a slice wholly before all of a lane's goes there (*before),
 * so input sorted backwards costs none. Past those lanes, slices that overlap without nesting
 * (GPU work queued deep) take the spill lane free the longest, or a new one, one slice at a
 * time: a heap keeps that linear in the lanes.
 */
static struct tl_lane *
place(struct tl *tl, struct tl_track *t, int64_t ts, int64_t end, bool *before)
{
	bool whole = tl->s.flags & TL_COMPLETE;
	struct tl_lane **lp = &t->lanes, *l;
	*before = false;
	for (int n = 0; n < SCAN_LANES; n++, lp = &l->next) {
		if (!(l = *lp))
			l = *lp = lane_new(tl, t);
		if (l->epoch != tl->epoch) { /* first scanned in this part of the output */
			l->epoch = tl->epoch;
			l->depth = 0;
			l->last = INT64_MIN;
			l->lo = INT64_MAX;
		}
		if (whole && ts < l->last && end <= l->lo && end > ts) {
			l->lo = ts;
			*before = true;
			return l;
		}
		if (ts < l->last || ts < l->floor)
			continue;
		while (whole && l->depth && l->stack[l->depth - 1].end <= ts)
			l->depth--;
		if (l->depth && end > l->stack[l->depth - 1].end)
			continue;
		return l;
	}
	struct cut_heap *h = t->spill;
	if (!h) {
		h = t->spill = cut_xcalloc(1, sizeof(*h));
		heap_init(h, sizeof(struct spill));
	}
	struct spill *top = heap_top(h);
	/* without TL_COMPLETE every slice that ended by ts was ended: a spill lane past its
	 * slice's end is empty */
	if (top && (top->l->epoch != tl->epoch || (top->l->until <= ts && top->l->last <= ts))) {
		l = top->l;
		l->epoch = tl->epoch;
		l->depth = 0;
		l->lo = INT64_MAX;
		l->until = top->k.ts = end;
		heap_fix_top(h);
		return l;
	}
	l = lane_new(tl, t);
	l->next = *lp; /* after the scanned lanes: the order of the lanes' names is kept */
	*lp = l;
	l->until = end;
	heap_push(h, &(struct spill){{end, 0}, l});
	return l;
}

/* Opens [ts, end] on l. */
static struct tl_open *
push(struct tl *tl, struct tl_lane *l, int64_t ts, int64_t end)
{
	if (l->depth == l->cap) { /* from 4, not cut_grow's 16: a lane per thread */
		l->cap = l->cap ? 2 * l->cap : 4;
		l->stack = cut_xrealloc(l->stack, l->cap, sizeof(*l->stack));
	}
	struct tl_open *o = &l->stack[l->depth];
	*o = (struct tl_open){.ts = ts, .end = end};
	if (!(tl->s.flags & TL_COMPLETE))
		heap_push(&tl->ends, &(struct end){{end, ~(uint64_t)l->depth}, l, l->depth});
	l->depth++;
	return o;
}

/* Ends every slice that ends by ts, innermost first; a GPU's busy counter falls with its
 * work. */
static void
drain(struct tl *tl, int64_t ts)
{
	struct end *top, e;
	while ((top = heap_top(&tl->ends)) && top->k.ts <= ts) {
		heap_pop(&tl->ends, &e);
		struct tl_lane *l = e.l;
		struct tl_open *o = &l->stack[e.depth];
		if (tl->s.slice_end)
			tl->s.slice_end(tl->s.arg, l, o);
		if (o->gpu)
			counter(tl, o->gpu, o->end, --o->gpu->value);
		l->depth = e.depth;
		if (o->end > l->floor)
			l->floor = o->end;
	}
}

/* An event as the tracker of open calls sees it: its pid is its process id, which tells
 * machines apart, so without host or rank. */
static struct cut_event
on_thread(const struct cut_event *ev, size_t p)
{
	struct cut_event e = *ev;
	e.pid = (int64_t)p;
	e.host = NULL;
	e.has &= ~(unsigned)CUT_HAS_RANK;
	return e;
}

/* The call an ioctl was made in (its parent: cutmerge's, else the call open around it), into
 * c; NULL when there is none. */
static const struct tl_call *
parent_call(struct tl *tl, const struct cut_event *ev, size_t p, struct tl_call *c)
{
	struct cut_event e = on_thread(ev, p);
	struct cut_span *s = cut_calls_parent(tl->calls, &e);
	if (!s)
		return NULL;
	struct tl_lane *l = (struct tl_lane *)(uintptr_t)s->user[0];
	size_t d = (size_t)s->user[1];
	*c = (struct tl_call){l, s->ts, s->layer, NULL};
	/* (still the call's entry: unsorted input could have closed it and opened another) */
	if (d < l->depth && l->stack[d].ts == s->ts && l->stack[d].end == s->end)
		c->open = &l->stack[d];
	return c;
}

/* The count of work running on GPU g. With TL_COMPLETE: ends up to ts first, then the start
 * (the last end at tl_flush); else the start, and each end as it is passed. */
static void
busy(struct tl *tl, struct tl_track *g, struct tl_open *o, const struct cut_event *ev)
{
	struct cut_heap_key k;
	if (!(tl->s.flags & TL_COMPLETE)) {
		if (o) {
			o->gpu = g;
			counter(tl, g, ev->ts, ++g->value);
		}
		return;
	}
	struct cut_heap *h = g->busy;
	if (!h) {
		h = g->busy = cut_xcalloc(1, sizeof(*h));
		heap_init(h, sizeof(k));
		CUT_GROW(tl->busy, tl->nbusy + 1, tl->busycap);
		tl->busy[tl->nbusy++] = g;
	}
	while (heap_top(h) && ((struct cut_heap_key *)heap_top(h))->ts <= ev->ts) {
		heap_pop(h, &k);
		counter(tl, g, k.ts, (int64_t)heap_len(h));
	}
	heap_push(h, &(struct cut_heap_key){cut_event_end(ev), 0});
	counter(tl, g, ev->ts, (int64_t)heap_len(h));
}

/* A call that submitted GPU work, where it was drawn. */
struct sub {
	struct cut_submit k;
	struct tl_lane *l;
	int64_t ts;
};

/* Notes where a call that submitted GPU work (args.corr) was drawn, for the flow to it. */
static void
note_submit(struct tl *tl, const struct cut_event *ev, size_t p, struct tl_lane *l)
{
	struct sub *s = cut_calls_submit(tl->subs, (int64_t)p, ev);
	if (s)
		s->l = l, s->ts = ev->ts;
}

/* The flow from the call that submitted GPU work ev (on lane l) to it: one, from the latest
 * call of its corr, to its first piece. */
static void
submitted(struct tl *tl, const struct cut_event *ev, size_t p, struct tl_lane *l)
{
	struct sub *s = cut_calls_submitter(tl->subs, (int64_t)p, ev);
	if (s && s->ts <= ev->ts) /* (a copy can start as its call does) */
		tl->s.flow(tl->s.arg, s->l, s->ts, l, ev);
	for (; s; s = cut_calls_submitter(tl->subs, (int64_t)p, ev))
		cut_submits_forget(tl->subs, s);
}

/* What a driver API call does to device memory, as its flags say: 1 allocates, -1 frees, 0
 * neither (host memory, pinned or mapped, counts as neither). */
static int
memory_call(const char *name)
{
	unsigned f = cut_api_flags(name);
	return f & CUT_API_ALLOCATES ? 1 : f & CUT_API_FREES ? -1 : 0;
}

/* Device memory allocated per process: successful allocations minus frees, matched by dptr. */
static void
memory(struct tl *tl, const struct cut_event *ev, size_t p)
{
	int64_t dptr, bytes;
	int call = memory_call(ev->name);
	if (!call || ((ev->has & CUT_HAS_RET) && ev->ret != 0) ||
	    cut_args_int(ev->args, "dptr", &dptr))
		return;
	struct tl_track *t = process(tl, p);
	size_t i = idmap_get2(tl->allocs, (int64_t)p, dptr);
	if (i != IDMAP_NONE) { /* a free, or a reuse whose free was not traced */
		t->value = (int64_t)((uint64_t)t->value - (uint64_t)tl->alloc_bytes[i]);
		idmap_del2(tl->allocs, (int64_t)p, dptr);
	}
	if (call > 0 && cut_args_int(ev->args, "bytes", &bytes) == 0) {
		size_t j = idmap_put2(tl->allocs, (int64_t)p, dptr, NULL);
		CUT_GROW(tl->alloc_bytes, j + 1, tl->alloc_cap);
		tl->alloc_bytes[j] = bytes;
		t->value = (int64_t)((uint64_t)t->value + (uint64_t)bytes); /* no UB on nonsense */
	} else if (i == IDMAP_NONE) {
		return;
	}
	counter(tl, t, call > 0 ? cut_event_end(ev) : ev->ts, t->value);
}

/* One event as a slice (or instant) on track t, and what follows from it: the flow from the
 * call an ioctl was made in, the GPU's busy counter, the flow from a call to the GPU work it
 * submitted, device memory. */
static void
slice(struct tl *tl, struct tl_track *t, const struct cut_event *ev, size_t p)
{
	bool span = ev->has & CUT_HAS_DUR, before;
	int64_t end = cut_event_end(ev);
	struct tl_lane *l = place(tl, t, ev->ts, end, &before);
	struct tl_open *o = NULL;
	struct tl_call c;
	const struct tl_call *call = NULL;
	if (!before) {
		l->last = ev->ts;
		if (ev->ts < l->lo)
			l->lo = ev->ts;
		if (span)
			o = push(tl, l, ev->ts, end);
	}
	if (ev->layer == CUT_IOCTL && t->kind == TL_THREAD)
		call = parent_call(tl, ev, p, &c);
	if (tl->s.slice)
		tl->s.slice(tl->s.arg, l, o, ev, call);
	if (t->kind == TL_STREAM)
		busy(tl, t->parent, o, ev);
	struct cut_span *s;
	struct cut_event e = on_thread(ev, p);
	if (t->kind == TL_THREAD && (s = cut_calls_open(tl->calls, &e))) {
		s->user[0] = (uint64_t)(uintptr_t)l;
		s->user[1] = o ? (uint64_t)(o - l->stack) : UINT64_MAX;
	}
	if (tl->s.flow && t->kind == TL_THREAD && ev->layer == CUT_API)
		note_submit(tl, ev, p, l);
	if (tl->s.flow && t->kind == TL_STREAM)
		submitted(tl, ev, p, l);
	if (ev->layer == CUT_API)
		memory(tl, ev, p);
}

/* The kind of track each layer's events go to: the layer decides. */
static enum tl_kind
placed(const struct cut_event *ev)
{
	switch (ev->layer) {
	case CUT_SCHED: return TL_OFFCPU;
	case CUT_IRQ: return TL_IRQ;
	case CUT_GPU: return TL_STREAM;
	case CUT_NVTX: /* start/end ranges need not nest, and may end on another thread */
		return (ev->has & CUT_HAS_DUR) && ev->cat && strcmp(ev->cat, "startend") == 0
		           ? TL_NVTX
		           : TL_THREAD;
	case CUT_RUNTIME:
	case CUT_API:
	case CUT_IOCTL:
	case CUT_KERNEL:
	case CUT_META:
	case CUT_NLAYERS: break;
	}
	return TL_THREAD;
}

/* One event of in; false when the sink stops the reading here. */
static bool
event(struct tl *tl, struct input *in, const struct cut_event *ev)
{
	size_t i = cut_procs_of(in->procs, ev); /* (every record says what it knows) */
	if (ev->layer == CUT_META && cut_meta_kind(ev) == CUT_META_HEADER) {
		header(tl, in, ev);
		return true;
	}
	if (ev->layer == CUT_META && !shown_meta(ev))
		return true;
	size_t p = proc_for(tl, in, ev, i);
	/* (a record of interrupts or a device is of the host it names) */
	struct tl_machine *m = ev->host ? host_machine(tl, in, ev->host) : tl->procs[p].m;
	if (ev->layer == CUT_META) {
		meta(tl, in, ev, m, p);
		return true;
	}
	if (tl->s.at && !tl->s.at(tl->s.arg, ev->ts))
		return false;
	if (ev->ts < tl->last && !tl->warned_order) {
		warnx("%s:%llu: input not sorted by time: tracks multiply to keep slices nested; "
		      "sort it with cutmerge",
		      cut_reader_path(in->r), (unsigned long long)cut_reader_line(in->r));
		tl->warned_order = true;
	}
	if (ev->ts > tl->last)
		tl->last = ev->ts;
	if (!(tl->s.flags & TL_COMPLETE))
		drain(tl, ev->ts);
	int64_t cpu = -1, dev = -1, stream = 0;
	struct tl_track *t;
	switch (placed(ev)) {
	case TL_OFFCPU: t = offcpu(tl, p, ev->tid); break;
	case TL_IRQ:
		cut_args_int(ev->args, "cpu", &cpu);
		t = irqcpu(tl, m, cpu);
		break;
	case TL_STREAM: {
		cut_args_int(ev->args, "device", &dev);
		bool has = cut_args_int(ev->args, "stream", &stream) == 0;
		t = stream_of(tl, gpu_of(tl, p, dev), p, has, stream);
		break;
	}
	case TL_NVTX: {
		const char *domain = args_str(tl, ev->args, "domain");
		t = nvtx(tl, p, domain && *domain ? domain : NULL);
		break;
	}
	default: t = thread(tl, p, ev->tid);
	}
	slice(tl, t, ev, p);
	return true;
}

/* ---- reading ---- */

/* An input in the heap of the next events: by time, then input order. */
struct head {
	struct cut_heap_key k;
	size_t i;
};

/* Reads src's next event into the heap; false at its end (or when it must stop). */
static bool
advance(struct input *src, struct cut_heap *heads, size_t i, int *status)
{
	int rc = cut_reader_next(src->r, &src->ev);
	if (rc > 0) {
		heap_push(heads, &(struct head){{src->ev.ts, i}, i});
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

int
tl_run(struct tl *tl, int argc, char *argv[])
{
	/* Every input open at once, merged by time: each is sorted, or nearly (cuthook, cutmerge
	 * and cutcapture write them so), and the ranks of a job become one timeline. */
	int status = CUT_EXIT_OK;
	size_t n = argc ? (size_t)argc : 1;
	struct input *in = cut_xcalloc(n, sizeof(*in));
	struct cut_heap heads;
	struct head h;
	heap_init(&heads, sizeof(struct head));
	for (size_t i = 0; i < n; i++) {
		in[i].procs = cut_procs_new();
		if (!(in[i].r = cut_reader_open(argc ? argv[i] : NULL, 0))) {
			warn("%s", argc ? cut_esc(argv[i]) : "<stdin>");
			status = CUT_EXIT_LOST;
			continue;
		}
		advance(&in[i], &heads, i, &status);
	}
	while (heap_pop(&heads, &h)) {
		struct input *src = &in[h.i];
		if (!event(tl, src, &src->ev) ||
		    (!advance(src, &heads, h.i, &status) && src->stopped))
			break;
	}
	for (size_t i = 0; i < n; i++) {
		if (in[i].r)
			finish(&in[i], &status);
		cut_procs_free(in[i].procs);
		free(in[i].vp);
	}
	free(in);
	heap_free(&heads);
	return status;
}

/* ---- the timeline ---- */

struct tl *
tl_new(const struct tl_sink *sink)
{
	struct tl *tl = cut_xcalloc(1, sizeof(*tl));
	tl->s = *sink;
	tl->last = INT64_MIN;
	tl->strs = strtab_new();
	tl->proc_ids = idmap_new();
	struct map *maps[] = {&tl->threads, &tl->offcpus,  &tl->nvtxs,    &tl->irqs,   &tl->irqcpus,
	                      &tl->gpus,    &tl->gpu_ords, &tl->gpu_refs, &tl->streams};
	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++)
		maps[i]->ids = idmap_new();
	tl->stream_keys = idmap_new();
	tl->sname_ids = idmap_new();
	tl->allocs = idmap_new();
	tl->subs = cut_submits_new(sizeof(struct sub), MAX_SUBS);
	tl->calls = cut_calls_new(sink->calls);
	heap_init(&tl->ends, sizeof(struct end));
	return tl;
}

void
tl_flush(struct tl *tl)
{
	struct cut_heap_key k;
	if (!(tl->s.flags & TL_COMPLETE)) {
		drain(tl, INT64_MAX);
		return;
	}
	for (size_t i = 0; i < tl->nbusy; i++)
		while (heap_pop(tl->busy[i]->busy, &k))
			counter(tl, tl->busy[i], k.ts, (int64_t)heap_len(tl->busy[i]->busy));
}

void
tl_cut(struct tl *tl)
{
	tl->epoch++;
	cut_calls_free(tl->calls); /* a flow cannot start in another part */
	tl->calls = cut_calls_new(tl->s.calls);
	for (size_t i = 0; i < tl->ntracks; i++) { /* the spill lanes are all free */
		struct cut_heap *h = tl->tracks[i]->spill;
		for (size_t j = 0; h && j < heap_len(h); j++)
			((struct spill *)heap_at(h, j))->k.ts = INT64_MIN;
	}
}

unsigned
tl_epoch(const struct tl *tl)
{
	return tl->epoch;
}

size_t
tl_machines(const struct tl *tl)
{
	return tl->nmachines;
}

void
tl_free(struct tl *tl)
{
	if (!tl)
		return;
	for (size_t i = 0; i < tl->ntracks; i++) {
		struct tl_track *t = tl->tracks[i];
		for (struct tl_lane *l = t->lanes, *next; l; l = next) {
			next = l->next;
			free(l->stack);
			free(l);
		}
		if (t->spill)
			heap_free(t->spill);
		if (t->busy)
			heap_free(t->busy);
		free(t->spill);
		free(t->busy);
		free(t);
	}
	for (size_t i = 0; i < tl->nmachines; i++)
		free(tl->machines[i]);
	struct map *maps[] = {&tl->threads, &tl->offcpus,  &tl->nvtxs,    &tl->irqs,   &tl->irqcpus,
	                      &tl->gpus,    &tl->gpu_ords, &tl->gpu_refs, &tl->streams};
	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
		idmap_free(maps[i]->ids);
		free(maps[i]->t);
	}
	idmap_free(tl->proc_ids);
	idmap_free(tl->stream_keys);
	idmap_free(tl->sname_ids);
	idmap_free(tl->allocs);
	cut_submits_free(tl->subs);
	cut_calls_free(tl->calls);
	heap_free(&tl->ends);
	strtab_free(tl->strs);
	buf_free(&tl->scratch);
	free(tl->tracks);
	free(tl->machines);
	free(tl->by_host);
	free(tl->procs);
	free(tl->snames);
	free(tl->alloc_bytes);
	free(tl->busy);
	free(tl);
}
