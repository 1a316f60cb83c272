/* cutgaps: idle periods of a trace and what the host was doing in them: per thread, the gaps
 * between driver API calls; per stream and per process, the time the GPU had no work: measured
 * from the gpu layer's intervals where the trace has it, else the time with no submitted work
 * outstanding as far as the host-side events show (an upper bound). */
#include <err.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "args.h"
#include "calls.h"
#include "classify.h"
#include "collwait.h"
#include "cut.h"
#include "demangle.h"
#include "event.h"
#include "heap.h"
#include "idmap.h"
#include "procs.h"
#include "reader.h"
#include "strtab.h"
#include "table.h"
#include "text.h"
#include "units.h"

static const struct cut_opt_help opts[] = {
    {"-j, --json", "print everything as one JSON object"},
    {"-t, --threshold=threshold", "list the gaps this long or longer (1ms; ns, us, ms, s)"},
    {"-w, --wide", "print names whole, lines as long as they come, not fitted to 160 columns"},
    {"-M, --mangled", "print C++ names as the trace has them, not demangled"},
    {NULL, NULL},
};

static void
usage(void)
{
	fprintf(stderr, "usage: cutgaps [-jwM] [-t threshold] [file ...]\n");
	exit(CUT_EXIT_FATAL);
}

/* What a thread is doing, as far as the trace shows; the rest of the time is host code. */
enum state { ST_SYNC, ST_API, ST_IOCTL, ST_OFFCPU, NSTATES };
static const char *const state_names[] = {"sync", "driver", "ioctl", "off-cpu", "host"};

enum kind { K_THREAD, K_STREAM, K_PROCESS, NKINDS };
static const char *const kind_names[NKINDS] = {"thread", "stream", "process"};

#define NONE INT64_MIN
#define ALL_STREAMS UINT64_MAX
/* Streams measured by the gpu layer are kept apart from the host-side estimate: their handles
 * carry this bit, and ALL_MEASURED is their process's all. */
#define MEASURED (UINT64_C(1) << 62)
#define ALL_MEASURED (UINT64_MAX - 1)
#define NBUCKETS 8 /* <1us, 1-10us, ... 100ms-1s, >=1s */

struct thread {
	int64_t pid, tid;
	int64_t first, last; /* first start, last end of its top-level calls */
	int64_t busy;        /* time in top-level calls */
	size_t last_name;    /* the call that ended at last */
	/* time in each state so far, and each state's latest span (the only one that can still
	 * be running), so the time in a state up to any recent instant can be computed */
	int64_t acc[NSTATES], cur_start[NSTATES], cur_end[NSTATES];
	int64_t mark_ioctl, mark_off; /* acc[] at the start of its last call */
	int64_t gaps, idle;
	/* What the device part needs of it for gaps that began in the past (a stream went idle
	 * at epoch e, idle_since): its state then, kept only when it changes afterwards. */
	size_t proc;              /* its process */
	int64_t created, changed; /* epochs of its process when made and when last changed */
	struct checkpoint *ck;    /* by hi: its state for the epochs up to hi */
	size_t nck, capck, kept;  /* kept: how many the last pruning kept */
	/* NVTX ranges of the thread that may still be open, in start order (gapnvtx below) */
	struct nvtx_open {
		int64_t s, e;
		size_t name;
	} * nv;
	size_t nnv, capnv;
};

/* A thread's state, acc[], cur_start[] and cur_end[], as it was up to an epoch. */
struct checkpoint {
	int64_t hi;
	int64_t v[3][NSTATES];
};

/* A stream of a process, or (handle ALL_STREAMS) all of them. */
struct stream {
	int64_t pid;
	uint64_t handle;
	int64_t busy_since, idle_since, last_submit, first;
	int64_t until; /* measured: the latest end of its work so far */
	int64_t busy, idle, gaps;
	size_t before; /* the call that observed completion */
	int64_t before_tid;
	int nbusy;     /* process: streams with work outstanding */
	size_t proc;   /* its process */
	int64_t epoch; /* idle: the epoch it went idle at, the threads' state then; 0 when busy */
	size_t at;     /* busy, one stream: where it is in its process's busy list */
};

/*
 * A process: the epochs of its idle streams, and its busy streams. Epochs count the instants
 * streams went idle; a thread keeps its state as it was at an epoch only when it changes after
 * it while a stream that went idle then is still idle (a snapshot of every thread at every sync
 * was threads x syncs). The live epochs are appended in increasing order and deleted anywhere:
 * a deleted one is skipped through next[] (path halving), and the array compacted when half is
 * deleted.
 */
struct proc {
	int64_t last; /* the latest epoch of its streams */
	int64_t *ep;  /* live epochs, increasing */
	size_t *next; /* next[i] == i: ep[i] live; else a later index to look at */
	size_t nep, nlive, capep, capnext;
	size_t *busy[2]; /* [measured] indices of its streams with work outstanding */
	size_t nbusy[2], capbusy[2];
};

struct gap {
	enum kind kind;
	bool ranged;  /* an NVTX range was open on the thread that ended it */
	size_t range; /* its name */
	int64_t pid, tid, start, end, st[NSTATES + 1];
	uint64_t stream;
	size_t before, after;
	int64_t before_tid, after_tid;
	int reason;
};

/* Work of a stream (or all of a process's) known complete at key.ts. */
struct completion {
	struct cut_heap_key key; /* the instant, and the order it was learnt in */
	int64_t cover, pid, tid;
	uint64_t stream;
	size_t name;
};

static struct {
	int64_t threshold;
	bool json;
	struct cut_strtab *names;
	struct cut_idmap *tids, *ekeys; /* threads by pid and tid; CUevents by pid and handle */
	struct cut_idmap *sids;         /* streams by pid and handle */
	struct cut_idmap *pids;         /* processes by pid */
	struct proc *procs;
	size_t nprocs, capprocs;
	int64_t epoch;          /* the last epoch given */
	struct cut_calls *open; /* top-level API calls, and ioctls made outside them */
	struct thread *thr;
	size_t nthr, capthr;
	struct stream *str;
	size_t nstr, capstr;
	struct gap *gaps;
	size_t ngaps, capgaps;
	struct cut_heap pend; /* completions by time */
	uint64_t npend;       /* completions learnt */
	struct {
		int64_t pid, stream, ts;
	} * events; /* cuEventRecord: event -> stream, time */
	int64_t hist[2][NKINDS][NBUCKETS], histns[2][NKINDS][NBUCKETS]; /* [measured] */
	bool measured;           /* the trace has gpu work: the device part comes from it */
	struct cut_collwait *cw; /* NCCL kernels across ranks: time waiting for the last rank */
	/* The processes, a pid on a host (procs.h): every "pid" below, from an event's on, is
	 * the index of its process here, two hosts' pid 100 apart and a record without host or
	 * rank with the process whose records carry them. */
	struct cut_procs *pr;
	int64_t first, last, last_ts, untimed;
	uint64_t unsorted;
	bool saturated; /* a sum reached INT64_MAX and stayed there */
} g;

/* Adds b to *a, saturating at INT64_MAX (as cutstat's sums do): gaps of a hostile trace can
 * add up past it. */
static void
sat_add(int64_t *a, int64_t b)
{
	if (__builtin_add_overflow(*a, b, a)) {
		*a = b > 0 ? INT64_MAX : INT64_MIN;
		g.saturated = true;
	}
}

/* a + b, saturated. */
static int64_t
sat_sum(int64_t a, int64_t b)
{
	sat_add(&a, b);
	return a;
}

/* The process, by pid: its index in g.procs. */
static size_t
proc(int64_t pid)
{
	bool isnew;
	size_t i = idmap_put(g.pids, pid, &isnew);
	if (isnew) {
		CUT_GROW(g.procs, i + 1, g.capprocs);
		memset(&g.procs[i], 0, sizeof(g.procs[i]));
		g.nprocs = i + 1 > g.nprocs ? i + 1 : g.nprocs;
	}
	return i;
}

/* The first live index at or after i (p->nep when none). */
static size_t
live_from(struct proc *p, size_t i)
{
	while (i < p->nep && p->next[i] != i) {
		size_t j = p->next[i];
		if (j < p->nep && p->next[j] != j)
			p->next[i] = p->next[j];
		i = j;
	}
	return i;
}

/* The index of the first epoch after e. */
static size_t
epoch_after(const struct proc *p, int64_t e)
{
	size_t lo = 0, hi = p->nep;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->ep[mid] <= e)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Whether a stream of p went idle at an epoch in (lo, hi] and is idle still. */
static bool
live_between(struct proc *p, int64_t lo, int64_t hi)
{
	size_t i = live_from(p, epoch_after(p, lo));
	return i < p->nep && p->ep[i] <= hi;
}

static void
live_add(struct proc *p, int64_t e)
{
	CUT_GROW(p->ep, p->nep + 1, p->capep);
	CUT_GROW(p->next, p->nep + 1, p->capnext);
	p->ep[p->nep] = e;
	p->next[p->nep] = p->nep;
	p->nep++;
	p->nlive++;
}

static void
live_del(struct proc *p, int64_t e)
{
	size_t i = epoch_after(p, e - 1);
	if (i == p->nep || p->ep[i] != e || p->next[i] != i)
		return;
	p->next[i] = i + 1;
	p->nlive--;
	if (p->nep > 64 && 2 * p->nlive < p->nep) { /* compact */
		size_t k = 0;
		for (size_t j = live_from(p, 0); j < p->nep; j = live_from(p, j + 1))
			p->ep[k] = p->ep[j], p->next[k] = k, k++;
		p->nep = k;
	}
}

/* The thread, by pid and tid (every event needs one); in order of their first event. */
static struct thread *
thread(int64_t pid, int64_t tid)
{
	bool isnew;
	size_t i = idmap_put2(g.tids, pid, tid, &isnew);
	if (isnew) {
		CUT_GROW(g.thr, i + 1, g.capthr);
		struct thread *t = &g.thr[g.nthr++];
		memset(t, 0, sizeof(*t));
		t->pid = pid, t->tid = tid;
		t->first = t->last = NONE;
		t->proc = proc(pid);
		t->created = t->changed = g.procs[t->proc].last;
	}
	return &g.thr[i];
}

/* ---- NVTX: the range a gap fell in ----
 * Each gap names the innermost NVTX range open on the thread that ended it, when it ended (the
 * range of the call that ended it): the open range that started last. Ranges arrive in start
 * order (the trace is sorted), so a thread keeps those that may still be open. */

static void
nvtx_drop_ended(struct thread *t, int64_t now)
{
	while (t->nnv && t->nv[t->nnv - 1].e <= now)
		t->nnv--;
}

static void
nvtx_range(const struct cut_event *ev, struct thread *t)
{
	nvtx_drop_ended(t, ev->ts);
	CUT_GROW(t->nv, t->nnv + 1, t->capnv);
	t->nv[t->nnv++] =
	    (struct nvtx_open){ev->ts, cut_event_end(ev), strtab_intern(g.names, ev->name)};
}

/* Names on gp the innermost range open on t at instant now. */
static void
nvtx_name_gap(struct gap *gp, struct thread *t, int64_t now)
{
	nvtx_drop_ended(t, now);
	for (size_t i = t->nnv; i-- > 0;)
		if (t->nv[i].s <= now && now < t->nv[i].e) {
			gp->ranged = true;
			gp->range = t->nv[i].name;
			return;
		}
}

/* The stream, by pid and handle: a map, for a program may make thousands. */
static struct stream *
stream(int64_t pid, uint64_t handle)
{
	bool isnew;
	size_t i = idmap_put2(g.sids, pid, (int64_t)handle, &isnew);
	if (!isnew)
		return &g.str[i];
	CUT_GROW(g.str, i + 1, g.capstr);
	g.nstr++;
	struct stream *s = &g.str[i];
	memset(s, 0, sizeof(*s));
	s->pid = pid, s->handle = handle;
	s->busy_since = s->idle_since = s->first = s->until = NONE;
	s->proc = proc(pid);
	return s;
}

/* Time in a state up to instant at, from the state's total acc and its latest span (at most
 * one span per state still runs). */
static int64_t
time_until(int64_t acc, int64_t cur_start, int64_t cur_end, int64_t at)
{
	int64_t future = cur_end - (cur_start > at ? cur_start : at);
	return acc - (future > 0 ? future : 0);
}

/* Time thread t spent in state s up to instant at. */
static int64_t
state_time(const struct thread *t, int s, int64_t at)
{
	return time_until(t->acc[s], t->cur_start[s], t->cur_end[s], at);
}

/* Time thread t had spent in each state up to instant at, as its state was at epoch e (when a
 * stream went idle at at): 0 for a thread made after. */
static void
state_times_then(const struct thread *t, int64_t e, int64_t at, int64_t out[NSTATES])
{
	const int64_t *v[3] = {t->acc, t->cur_start, t->cur_end};
	if (e <= t->created) {
		memset(out, 0, NSTATES * sizeof(*out));
		return;
	}
	if (e <= t->changed) { /* the first checkpoint of an epoch at or after e */
		size_t lo = 0, hi = t->nck;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (t->ck[mid].hi < e)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < t->nck)
			v[0] = t->ck[lo].v[0], v[1] = t->ck[lo].v[1], v[2] = t->ck[lo].v[2];
	}
	for (int k = 0; k < NSTATES; k++)
		out[k] = time_until(v[0][k], v[1][k], v[2][k], at);
}

/* Drops the checkpoints of t that no idle stream needs any more: after it, t holds at most one
 * for each, so that threads x streams bounds them, and pushing them stays linear. */
static void
prune(struct thread *t, struct proc *p)
{
	size_t k = 0;
	int64_t lo = t->created;
	for (size_t i = 0; i < t->nck; i++) {
		int64_t hi = t->ck[i].hi;
		if (live_between(p, lo, hi))
			t->ck[k++] = t->ck[i];
		lo = hi;
	}
	t->nck = t->kept = k;
}

/* Keeps t's state as it is, before it changes, for the streams that went idle since its last
 * change and are idle still. */
static void
checkpoint(struct thread *t)
{
	struct proc *p = &g.procs[t->proc];
	if (p->last <= t->changed)
		return;
	if (p->nlive == 0) /* no gap of its process is open: nothing will ask */
		t->nck = t->kept = 0;
	else {
		CUT_GROW(t->ck, t->nck + 1, t->capck);
		struct checkpoint *c = &t->ck[t->nck++];
		c->hi = p->last;
		memcpy(c->v[0], t->acc, sizeof(t->acc));
		memcpy(c->v[1], t->cur_start, sizeof(t->cur_start));
		memcpy(c->v[2], t->cur_end, sizeof(t->cur_end));
		if (t->nck >= 2 * t->kept + 8)
			prune(t, p);
	}
	t->changed = p->last;
}

static void
add_span(struct thread *t, int s, int64_t start, int64_t dur)
{
	checkpoint(t);
	sat_add(&t->acc[s], dur);
	t->cur_start[s] = start;
	t->cur_end[s] = start + dur;
}

static int
bucket(int64_t len)
{
	int b = 0;
	for (int64_t lim = 1000; b < NBUCKETS - 1 && len >= lim; lim *= 10)
		b++;
	return b;
}

/* A gap of thread tid of process pid from start to end, ended by that thread; the rest
 * zero. A store a member: a gap starts at every call, and zeroing the struct whole
 * compiles to a slow rep stos. */
static void
gap_init(struct gap *gp, enum kind kind, int64_t pid, int64_t tid, int64_t start, int64_t end)
{
	gp->kind = kind;
	gp->pid = pid;
	gp->tid = gp->after_tid = tid;
	gp->start = start;
	gp->end = end;
	for (int s = 0; s <= NSTATES; s++)
		gp->st[s] = 0;
	gp->stream = 0;
	gp->before = gp->after = 0;
	gp->before_tid = 0;
	gp->reason = 0;
	gp->ranged = false;
}

static bool
is_measured(uint64_t handle)
{
	return handle != ALL_STREAMS && (handle & MEASURED);
}

/* Whether a stream or gap of the device part is to be shown: the measured ones when the
 * trace has them, else the estimated ones. */
static bool
shown(uint64_t handle)
{
	return is_measured(handle) == g.measured;
}

/* Counts a gap; keeps it for the listing when it reaches the threshold. */
static void
record(struct gap *gp)
{
	int64_t len = gp->end - gp->start, known = 0;
	int b = bucket(len), m = is_measured(gp->stream);
	g.hist[m][gp->kind][b]++;
	sat_add(&g.histns[m][gp->kind][b], len);
	for (int s = 0; s < NSTATES; s++) {
		if (gp->st[s] > len)
			gp->st[s] = len;
		if (gp->st[s] < 0)
			gp->st[s] = 0;
		sat_add(&known, gp->st[s]);
	}
	gp->st[NSTATES] = known < len ? len - known : 0;
	gp->reason = NSTATES;
	for (int s = NSTATES; s-- > 0;)
		if (gp->st[s] > gp->st[gp->reason])
			gp->reason = s;
	if (len < g.threshold)
		return;
	CUT_GROW(g.gaps, g.ngaps + 1, g.capgaps);
	g.gaps[g.ngaps++] = *gp;
}

/* ---- devices: submissions, completions, idle streams ---- */

static bool
is_all(const struct stream *s)
{
	return s->handle == ALL_STREAMS || s->handle == ALL_MEASURED;
}

/* The busy list of s's process that s belongs in. */
static int
busy_list(const struct stream *s)
{
	return is_measured(s->handle);
}

static void
went_idle(struct stream *s, int64_t at, size_t name, int64_t tid)
{
	struct proc *p = &g.procs[s->proc];
	sat_add(&s->busy, at - s->busy_since);
	s->busy_since = NONE;
	s->idle_since = at;
	s->before = name;
	s->before_tid = tid;
	s->epoch = ++g.epoch;
	p->last = s->epoch;
	live_add(p, s->epoch);
	if (!is_all(s)) { /* out of the busy list: the last one takes its place */
		int m = busy_list(s);
		size_t last = p->busy[m][--p->nbusy[m]];
		p->busy[m][s->at] = last;
		g.str[last].at = s->at;
	}
}

/* s has work outstanding again: into its process's busy list, and its idle epoch is over. */
static void
went_busy(struct stream *s)
{
	struct proc *p = &g.procs[s->proc];
	if (s->epoch)
		live_del(p, s->epoch);
	s->epoch = 0;
	if (!is_all(s)) {
		int m = busy_list(s);
		CUT_GROW(p->busy[m], p->nbusy[m] + 1, p->capbusy[m]);
		s->at = p->nbusy[m];
		p->busy[m][p->nbusy[m]++] = (size_t)(s - g.str);
	}
}

/* Work submitted at ts by thread t: ends an idle period of the stream (and the process). */
static void
busy_again(struct stream *s, enum kind kind, int64_t ts, struct thread *t, size_t name)
{
	if (s->busy_since != NONE)
		return;
	if (s->first == NONE)
		s->first = ts;
	s->busy_since = ts;
	if (s->idle_since == NONE || ts <= s->idle_since) {
		went_busy(s);
		return;
	}
	struct gap gp;
	gap_init(&gp, kind, s->pid, t->tid, s->idle_since, ts);
	gp.stream = s->handle;
	gp.before = s->before;
	gp.before_tid = s->before_tid;
	gp.after = name;
	int64_t then[NSTATES];
	state_times_then(t, s->epoch, s->idle_since, then);
	went_busy(s);
	for (int k = 0; k < NSTATES; k++)
		gp.st[k] = state_time(t, k, ts) - then[k];
	nvtx_name_gap(&gp, t, ts);
	sat_add(&s->idle, ts - s->idle_since);
	s->gaps++;
	record(&gp);
}

static void
submit(int64_t pid, uint64_t handle, int64_t ts, struct thread *t, size_t name)
{
	uint64_t all = is_measured(handle) ? ALL_MEASURED : ALL_STREAMS;
	stream(pid, handle); /* both made first: making one may move the other */
	struct stream *p = stream(pid, all), *s = stream(pid, handle);
	if (s->busy_since == NONE) {
		busy_again(s, K_STREAM, ts, t, name);
		if (p->nbusy++ == 0)
			busy_again(p, K_PROCESS, ts, t, name);
	}
	s->last_submit = ts;
}

/* Work of the stream submitted before cover is known complete at instant at. */
static void
complete_at(int64_t at, int64_t cover, int64_t pid, uint64_t handle, int64_t tid, size_t name)
{
	heap_push(&g.pend, &(struct completion){{at, g.npend++}, cover, pid, tid, handle, name});
}

static void
apply(const struct completion *c)
{
	bool m = is_measured(c->stream);
	struct stream *p = stream(c->pid, m ? ALL_MEASURED : ALL_STREAMS);
	if (c->stream != ALL_STREAMS) { /* one stream: no need to look at the others */
		size_t i = idmap_get2(g.sids, c->pid, (int64_t)c->stream);
		if (i == IDMAP_NONE)
			return;
		struct stream *s = &g.str[i];
		/* A measured stream is idle when the last of its work ends, not when any
		 * piece does: pieces of one stream may overlap (a copy engine's and a
		 * kernel's, work of length 0 inside another). */
		bool done =
		    is_measured(c->stream) ? c->key.ts >= s->until : s->last_submit < c->cover;
		if (s->busy_since != NONE && done) {
			went_idle(s, c->key.ts, c->name, c->tid);
			if (--p->nbusy == 0)
				went_idle(p, c->key.ts, c->name, c->tid);
		}
		return;
	}
	/* every stream of the process with work outstanding (went_idle moves the list's last
	 * into the place of the one it takes out: from the end, each is looked at once) */
	struct proc *pr = &g.procs[p->proc];
	for (size_t i = pr->nbusy[m]; i-- > 0;) {
		struct stream *s = &g.str[pr->busy[m][i]];
		if (s->busy_since == NONE || s->last_submit >= c->cover)
			continue;
		went_idle(s, c->key.ts, c->name, c->tid);
		if (--p->nbusy == 0)
			went_idle(p, c->key.ts, c->name, c->tid);
	}
}

/* Applies the completions known by instant now, in time order. */
static void
complete_until(int64_t now)
{
	struct completion *c, done;
	while ((c = heap_top(&g.pend)) && c->key.ts <= now) {
		heap_pop(&g.pend, &done);
		apply(&done);
	}
}

static uint64_t
arg_handle(const char *args, const char *key)
{
	int64_t v = 0;
	return cut_args_int(args, key, &v) == 0 ? (uint64_t)v : 0;
}

/* A stream handle of a host-side call: its top bits cleared, so that none is taken for all of
 * a process's streams or for one the gpu layer measured. */
static uint64_t
host_stream(const char *args)
{
	return arg_handle(args, "stream") & (MEASURED - 1);
}

/* What a driver API function means for the device, worked out once per name from its flags
 * (share/data/api-categories.tsv). */
enum role { R_NONE, R_SUBMIT, R_COPY_SYNC, R_CTX_SYNC, R_STREAM_SYNC, R_RECORD, R_EVENT_SYNC };

static enum role
role_of(size_t name)
{
	static unsigned char *roles; /* role + 1; 0 = not worked out yet */
	static size_t cap;
	CUT_GROW(roles, name + 1, cap);
	if (roles[name])
		return (enum role)(roles[name] - 1);
	const char *n = strtab_key(g.names, name);
	unsigned f = cut_api_flags(n);
	enum role r = R_NONE;
	if (f & CUT_API_SUBMITS)
		r = R_SUBMIT;
	else if (cut_api_category_id(n) == CUT_CAT_TRANSFER)
		r = R_COPY_SYNC;
	else if (f & CUT_API_SYNCS_CONTEXT)
		r = R_CTX_SYNC;
	else if (f & CUT_API_SYNCS_STREAM)
		r = R_STREAM_SYNC;
	else if (f & CUT_API_RECORDS_EVENT)
		r = R_RECORD;
	else if (f & CUT_API_SYNCS_EVENT)
		r = R_EVENT_SYNC;
	roles[name] = (unsigned char)(r + 1);
	return r;
}

/* What an API call means for the device: submissions, syncs, event records and queries. */
static void
device_call(const struct cut_event *ev, struct thread *t, size_t name)
{
	int64_t end = cut_event_end(ev);
	enum role r = role_of(name);
	if (r == R_NONE || ((ev->has & CUT_HAS_RET) && ev->ret != 0))
		return;
	switch (r) {
	case R_SUBMIT: submit(ev->pid, host_stream(ev->args), ev->ts, t, name); break;
	case R_COPY_SYNC: /* submitted and complete within the call */
		submit(ev->pid, 0, ev->ts, t, name);
		complete_at(end, end, ev->pid, 0, t->tid, name);
		break;
	case R_CTX_SYNC: complete_at(end, ev->ts, ev->pid, ALL_STREAMS, t->tid, name); break;
	case R_STREAM_SYNC:
		complete_at(end, ev->ts, ev->pid, host_stream(ev->args), t->tid, name);
		break;
	case R_RECORD: {
		size_t k =
		    idmap_put2(g.ekeys, ev->pid, (int64_t)arg_handle(ev->args, "event"), NULL);
		static size_t cap;
		CUT_GROW(g.events, k + 1, cap);
		g.events[k].pid = ev->pid;
		g.events[k].stream = (int64_t)host_stream(ev->args);
		g.events[k].ts = ev->ts;
		break;
	}
	case R_EVENT_SYNC: {
		size_t k = idmap_get2(g.ekeys, ev->pid, (int64_t)arg_handle(ev->args, "event"));
		if (k != IDMAP_NONE)
			complete_at(end, g.events[k].ts, ev->pid, (uint64_t)g.events[k].stream,
			            t->tid, name);
		break;
	}
	default: break;
	}
}

/* ---- threads ---- */

/* Whether a function is of the sync category (cached per name). */
static bool
is_sync(size_t name)
{
	static unsigned char *sync; /* 1 + answer; 0 = not looked up */
	static size_t cap;
	CUT_GROW(sync, name + 1, cap);
	if (!sync[name])
		sync[name] = 1 + (cut_api_category_id(strtab_key(g.names, name)) == CUT_CAT_SYNC);
	return sync[name] == 2;
}

/* A top-level API call: it ends the thread's gap since the last one. */
static void
api_call(const struct cut_event *ev, struct thread *t)
{
	size_t name = strtab_intern(g.names, ev->name);
	if (t->last != NONE && ev->ts > t->last) {
		struct gap gp;
		gap_init(&gp, K_THREAD, t->pid, t->tid, t->last, ev->ts);
		gp.before = t->last_name;
		gp.before_tid = t->tid;
		gp.after = name;
		gp.st[ST_IOCTL] = t->acc[ST_IOCTL] - t->mark_ioctl;
		gp.st[ST_OFFCPU] = t->acc[ST_OFFCPU] - t->mark_off;
		nvtx_name_gap(&gp, t, ev->ts);
		sat_add(&t->idle, ev->ts - t->last);
		t->gaps++;
		record(&gp);
	}
	if (t->first == NONE)
		t->first = ev->ts;
	int64_t end = cut_event_end(ev);
	add_span(t, is_sync(name) ? ST_SYNC : ST_API, ev->ts, ev->dur);
	t->mark_ioctl = t->acc[ST_IOCTL];
	t->mark_off = t->acc[ST_OFFCPU];
	sat_add(&t->busy, ev->dur);
	t->last = end;
	t->last_name = name;
	device_call(ev, t, name);
}

/* A piece of GPU work, timed on the device: its stream is busy from its start to its end, as
 * the device measured, and so from the start of the first of overlapping pieces to the last
 * end among them (the union of their intervals; the work's name stands before and after the
 * gaps it bounds). */
static void
gpu_work(const struct cut_event *ev)
{
	struct thread *t = thread(ev->pid, ev->tid);
	size_t name = strtab_intern(g.names, ev->name);
	uint64_t handle = (arg_handle(ev->args, "stream") & (MEASURED - 1)) | MEASURED;
	g.measured = true;
	submit(ev->pid, handle, ev->ts, t, name);
	struct stream *s = stream(ev->pid, handle);
	int64_t end = cut_event_end(ev);
	if (s->until < end)
		s->until = end;
	complete_at(end, ev->ts + 1, ev->pid, handle, ev->tid, name);
}

static void
event(const struct cut_event *ev)
{
	if (ev->layer == CUT_META)
		return;
	int64_t end = cut_event_end(ev);
	if (g.first == NONE || ev->ts < g.first)
		g.first = ev->ts;
	if (end > g.last)
		g.last = end;
	complete_until(ev->ts);
	if (ev->tid <= 0)
		return;
	if (ev->layer == CUT_GPU && (ev->has & CUT_HAS_DUR)) {
		gpu_work(ev);
		return;
	}
	if (ev->layer == CUT_NVTX && (ev->has & CUT_HAS_DUR)) {
		nvtx_range(ev, thread(ev->pid, ev->tid));
		return;
	}
	if (ev->layer == CUT_API && !(ev->has & CUT_HAS_DUR)) {
		g.untimed++;
		return;
	}
	if (ev->layer != CUT_API && ev->layer != CUT_IOCTL && ev->layer != CUT_SCHED)
		return;
	if (!(ev->has & CUT_HAS_DUR))
		return;
	struct thread *t = thread(ev->pid, ev->tid);
	/* inside an API call, the call covers it (a nested one too); off the CPU inside an
	 * ioctl, the ioctl does */
	if (cut_calls_within(g.open, ev, CUT_API))
		return;
	if (ev->layer == CUT_API) {
		api_call(ev, t);
		cut_calls_open(g.open, ev);
	} else if (ev->layer == CUT_IOCTL) {
		add_span(t, ST_IOCTL, ev->ts, ev->dur);
		cut_calls_open(g.open, ev);
	} else if (!cut_calls_within(g.open, ev, CUT_IOCTL)) {
		add_span(t, ST_OFFCPU, ev->ts, ev->dur);
	}
}

/* At the end: work never seen complete stays outstanding to the end of the trace. */
static void
finish(void)
{
	complete_until(INT64_MAX);
	collwait_finish(g.cw);
	for (size_t i = 0; i < g.nstr; i++)
		if (g.str[i].busy_since != NONE)
			sat_add(&g.str[i].busy, g.last - g.str[i].busy_since);
}

/* ---- output ---- */

static double
pct(int64_t part, int64_t whole)
{
	return whole > 0 ? 100.0 * (double)part / (double)whole : 0;
}

static int
by_start(const void *a, const void *b)
{
	const struct gap *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

static const char *
where(const struct gap *gp, char *buf, size_t n)
{
	if (gp->kind == K_THREAD)
		snprintf(buf, n, "%lld", (long long)gp->tid);
	else if (gp->kind == K_STREAM)
		snprintf(buf, n, "0x%llx", (unsigned long long)(gp->stream & ~MEASURED));
	else
		snprintf(buf, n, "all");
	return buf;
}

static void
set_int(json_t *o, const char *k, int64_t v)
{
	json_object_set_new(o, k, json_integer(v));
}

/* Whether the trace shows collectives of several ranks (the rank_waits section). */
static bool
ranked(void)
{
	return g.cw->nranks >= 2;
}

/* ---- the tables: each written once, printed as text or JSON ---- */

/* The cells that say which process a row is of (p: its index in g.pr): its host, pid, rank. */
#define HOST(p) CUT_S(cut_procs_host(g.pr, (size_t)(p)))
#define PID(p) CUT_I(cut_procs_pid(g.pr, (size_t)(p)))
#define RANK(p)                                                                                    \
	CUT_IF(cut_procs_rank(g.pr, (size_t)(p)) >= 0, CUT_I(cut_procs_rank(g.pr, (size_t)(p))))

/* A table whose text shows the host column only when the processes are on several hosts. */
static struct cut_table *
new_table(const struct cut_table_def *def, enum cut_fmt fmt)
{
	struct cut_table *t = cut_table_new(def, fmt);
	if (fmt == CUT_FMT_TEXT && cut_procs_hosts(g.pr) < 2)
		cut_table_hide(t, "host");
	return t;
}

/* Per thread, the time between its driver API calls. */
static const struct cut_col thread_cols[] = {
    {"host", NULL, "host", CUT_COL_STR, -12, 0, 0}, /* text: of several hosts */
    {"pid", NULL, "pid", CUT_COL_INT, 8, 0, 0},
    {"rank", NULL, NULL, CUT_COL_INT, 0, 0, 0},
    {"tid", NULL, "tid", CUT_COL_INT, 8, 0, 0},
    {"window_ns", NULL, "window", CUT_COL_DUR, 14, 0, 0},
    {"busy_ns", NULL, "in calls", CUT_COL_DUR, 14, 0, 0},
    {"idle_ns", NULL, "idle", CUT_COL_DUR, 14, 0, 0},
    {NULL, NULL, "idle%", CUT_COL_PCT, 7, 0, 0},
    {"gaps", NULL, "gaps", CUT_COL_INT, 7, 0, 0},
};
static const struct cut_table_def thread_def = {thread_cols, CUT_NCOLS(thread_cols), NULL, NULL};

static json_t *
thread_table(enum cut_fmt fmt)
{
	struct cut_table *t = new_table(&thread_def, fmt);
	for (size_t i = 0; i < g.nthr; i++) {
		const struct thread *th = &g.thr[i];
		if (th->first == NONE)
			continue;
		cut_table_add(t,
		              CUT_ROW(HOST(th->pid), PID(th->pid), RANK(th->pid), CUT_I(th->tid),
		                      CUT_I(th->last - th->first), CUT_I(th->busy), CUT_I(th->idle),
		                      CUT_R(pct(th->idle, th->last - th->first)), CUT_I(th->gaps)));
	}
	return cut_table_end(t);
}

/* Per stream and per process (all), the time with no work. */
static const struct cut_col stream_cols[] = {
    {"host", NULL, "host", CUT_COL_STR, -12, 0, 0}, /* text: of several hosts */
    {"pid", NULL, "pid", CUT_COL_INT, 8, 0, 0},
    {"rank", NULL, NULL, CUT_COL_INT, 0, 0, 0},
    {"stream", NULL, "stream", CUT_COL_STR, 18, 0, 0},
    {"window_ns", NULL, "window", CUT_COL_DUR, 14, 0, 0},
    {"busy_ns", NULL, "busy", CUT_COL_DUR, 14, 0, 0},
    {"idle_ns", NULL, "idle", CUT_COL_DUR, 14, 0, 0},
    {NULL, NULL, "idle%", CUT_COL_PCT, 7, 0, 0},
    {"gaps", NULL, "gaps", CUT_COL_INT, 7, 0, 0},
    {NULL, NULL, "%traced", CUT_COL_PCT, 9, 0, 0}, /* of a process (all) */
    {"idle_traced_ns", NULL, NULL, CUT_COL_INT, 0, 0, 0},
};
static const struct cut_table_def stream_def = {stream_cols, CUT_NCOLS(stream_cols), NULL, NULL};

/* Text lists the streams, then the processes; JSON them in the order they came. */
static json_t *
stream_table(int64_t traced, enum cut_fmt fmt)
{
	struct cut_table *t = new_table(&stream_def, fmt);
	char w[32];
	for (int pass = fmt == CUT_FMT_JSON; pass < 2; pass++)
		for (size_t i = 0; i < g.nstr; i++) {
			const struct stream *s = &g.str[i];
			bool all = is_all(s);
			if ((fmt != CUT_FMT_JSON && all != pass) || s->first == NONE ||
			    !shown(s->handle == ALL_MEASURED ? MEASURED : s->handle))
				continue;
			if (all)
				snprintf(w, sizeof(w), "all");
			else
				snprintf(w, sizeof(w), "0x%llx",
				         (unsigned long long)(s->handle & ~MEASURED));
			int64_t window = sat_sum(s->busy, s->idle);
			cut_table_add(t, CUT_ROW(HOST(s->pid), PID(s->pid), RANK(s->pid), CUT_S(w),
			                         CUT_I(window), CUT_I(s->busy), CUT_I(s->idle),
			                         CUT_R(pct(s->idle, window)), CUT_I(s->gaps),
			                         CUT_IF(all, CUT_R(pct(traced - s->busy, traced))),
			                         CUT_IF(all, CUT_I(traced - s->busy))));
		}
	return cut_table_end(t);
}

/* Per rank, the time inside NCCL kernels waiting for the last rank. */
static const struct cut_col rwait_cols[] = {
    {"rank", NULL, "rank", CUT_COL_INT, 8, 0, 0},
    {"collectives", NULL, "collectives", CUT_COL_INT, 11, 0, 0},
    {"in_ns", NULL, "in NCCL", CUT_COL_DUR, 14, 0, 0},
    {"wait_ns", NULL, "waiting", CUT_COL_DUR, 14, 0, 0},
    {NULL, NULL, "wait%", CUT_COL_PCT, 7, 0, 0},
    {"last", NULL, "last", CUT_COL_INT, 7, 0, 0},
    {"early", NULL, "early", CUT_COL_INT, 7, 0, 0},
    {"unmatched", NULL, "unmatched", CUT_COL_INT, 9, 0, 0},
    {"streams", NULL, "streams", CUT_COL_INT, 8, 0, 0},
    {"waited_most_for", NULL, "waited for", CUT_COL_INT, 11, 0, CUT_COL_NULL},
};
static const struct cut_table_def rwait_def = {rwait_cols, CUT_NCOLS(rwait_cols), NULL, NULL};

/* Per rank and rank waited for, how often and how long. */
static const struct cut_col pair_cols[] = {
    {"rank", NULL, "rank", CUT_COL_INT, 8, 0, 0},
    {"waited_for", NULL, "waited for", CUT_COL_INT, 11, 0, 0},
    {"count", NULL, "count", CUT_COL_INT, 7, 0, 0},
    {"wait_ns", NULL, "total", CUT_COL_DUR, 14, 0, 0},
};
static const struct cut_table_def pair_def = {pair_cols, CUT_NCOLS(pair_cols), NULL, NULL};

static json_t *
rank_waits(enum cut_fmt fmt)
{
	const struct cut_collwait *w = g.cw;
	json_t *o = NULL;
	if (fmt == CUT_FMT_JSON) {
		o = json_object();
		set_int(o, "instances", w->instances);
		set_int(o, "unmatched", w->unmatched);
		set_int(o, "unranked", w->unranked);
		if (w->most >= 0) {
			set_int(o, "waited_most", w->most);
			set_int(o, "straggler", w->straggler);
		}
	} else
		cut_table_say(
		    "\nGPU time waiting for other ranks: inside NCCL kernels, from the rank's "
		    "start of a collective to the last rank's (the k-th kernel of a name on "
		    "each rank is one collective: %lld matched, %lld kernels unmatched)",
		    (long long)w->instances, (long long)w->unmatched);
	struct cut_table *t = cut_table_new(&rwait_def, fmt);
	for (size_t i = 0; i < w->nranks; i++) {
		const struct cut_collwait_rank *r = &w->ranks[i];
		cut_table_add(t, CUT_ROW(CUT_I(r->rank), CUT_I(r->collectives), CUT_I(r->in_ns),
		                         CUT_I(r->wait_ns), CUT_R(pct(r->wait_ns, r->in_ns)),
		                         CUT_I(r->last), CUT_I(r->early), CUT_I(r->unmatched),
		                         CUT_I(r->streams), CUT_IF(r->most >= 0, CUT_I(r->most))));
	}
	json_t *ranks = cut_table_end(t);
	if (fmt != CUT_FMT_JSON && w->most >= 0)
		cut_table_say(
		    "waited most: rank %lld; straggler: rank %lld (the most and the least time "
		    "inside NCCL kernels in total: cutstat's rule)",
		    (long long)w->most, (long long)w->straggler);
	t = cut_table_new(&pair_def, fmt);
	for (size_t i = 0; i < w->npairs; i++) {
		const struct cut_collwait_pair *pr = &w->pairs[i];
		cut_table_add(t, CUT_ROW(CUT_I(pr->rank), CUT_I(pr->waited_for), CUT_I(pr->count),
		                         CUT_I(pr->wait_ns)));
	}
	json_t *pairs = cut_table_end(t);
	if (o) {
		json_object_set_new(o, "ranks", ranks);
		json_object_set_new(o, "pairs", pairs);
		return o;
	}
	for (size_t i = 0; i < w->nranks; i++)
		if (w->ranks[i].streams > 1)
			cut_table_say(
			    "note: rank %lld ran NCCL kernels on %lld streams: collectives of "
			    "different communicators with one name are matched as one sequence",
			    (long long)w->ranks[i].rank, (long long)w->ranks[i].streams);
	if (w->unranked)
		cut_table_say("note: %lld NCCL kernels of no known rank were left out",
		              (long long)w->unranked);
	return NULL;
}

/* The gaps of the threshold or more, by start. */
static const struct cut_col gap_cols[] = {
    {"kind", NULL, "kind", CUT_COL_STR, -7, 0, 0},
    {"host", NULL, "host", CUT_COL_STR, -12, 0, 0}, /* text: of several hosts */
    {"pid", NULL, "pid", CUT_COL_INT, 7, 0, 0},
    {"rank", NULL, NULL, CUT_COL_INT, 0, 0, 0},
    {"tid", NULL, NULL, CUT_COL_INT, 0, 0, 0},         /* of a thread's gap */
    {NULL, NULL, "tid", CUT_COL_INT, 8, 0, 0},         /* the thread that ended it */
    {"stream", NULL, "stream", CUT_COL_STR, 12, 0, 0}, /* of a device gap */
    {"start", NULL, "start(ns)", CUT_COL_INT, 16, 0, 0},
    {"end", NULL, NULL, CUT_COL_INT, 0, 0, 0}, /* text: start + length */
    {"length_ns", NULL, "length", CUT_COL_DUR, 12, 0, 0},
    {"reason", NULL, "reason", CUT_COL_STR, -8, 0, CUT_COL_GAP},
    {"before.name", NULL, NULL, CUT_COL_STR, 0, 0, 0},
    {"before.tid", NULL, NULL, CUT_COL_INT, 0, 0, 0},
    {"before.mangled", NULL, NULL, CUT_COL_STR, 0, 0, 0}, /* where the name is demangled */
    {"after.name", NULL, NULL, CUT_COL_STR, 0, 0, 0},
    {"after.tid", NULL, NULL, CUT_COL_INT, 0, 0, 0},
    {"after.mangled", NULL, NULL, CUT_COL_STR, 0, 0, 0},
    {"time_ns.sync", NULL, NULL, CUT_COL_INT, 0, 0, 0},
    {"time_ns.driver", NULL, NULL, CUT_COL_INT, 0, 0, 0},
    {"time_ns.ioctl", NULL, NULL, CUT_COL_INT, 0, 0, 0},
    {"time_ns.off-cpu", NULL, NULL, CUT_COL_INT, 0, 0, 0},
    {"time_ns.host", NULL, NULL, CUT_COL_INT, 0, 0, 0},
    {"nvtx_range", NULL, NULL, CUT_COL_STR, 0, 0, 0},
    {"nvtx_range_mangled", NULL, NULL, CUT_COL_STR, 0, 0, 0},
    {NULL, NULL, "before -> after, and the next thread's time", CUT_COL_STR, 0, 0, CUT_COL_RAW},
};
static const struct cut_table_def gap_def = {gap_cols, CUT_NCOLS(gap_cols), NULL, NULL};

/* Shortens the names of a line to fit avail columns between them, each to no fewer than 40
 * (so that what is left of a name still says what it is): each gets as many as it needs, up
 * to an equal share of what the shorter ones leave. */
static void
fit_names(const char **name, int n, size_t avail)
{
	size_t len[3], total = 0;
	for (int i = 0; i < n; i++)
		total += len[i] = cut_name_cols(name[i]);
	if (total <= avail)
		return;
	for (int left = n; left > 0; left--) { /* the shortest first */
		int k = -1;
		for (int i = 0; i < n; i++)
			if (len[i] != SIZE_MAX && (k < 0 || len[i] < len[k]))
				k = i;
		size_t share = avail / (size_t)left > 40 ? avail / (size_t)left : 40;
		if (len[k] > share)
			name[k] = cut_table_fit(name[k], share);
		avail -= len[k] < share ? len[k] : share < avail ? share : avail;
		len[k] = SIZE_MAX;
	}
}

/* A gap in words: the call before it (and its thread when it is not the one that ended the
 * gap), the call after it, the time of the thread that ended it in each state, and its NVTX
 * range. To fit room columns (0: any), its names are shortened, then what still passes the
 * room is cut off at the end. */
static const char *
gap_text(const struct gap *gp, size_t room)
{
	static struct cut_buf b, states;
	char a[32], tid[32] = "";
	const char *name[3] = {cut_table_name(strtab_key(g.names, gp->before)),
	                       cut_table_name(strtab_key(g.names, gp->after)),
	                       gp->ranged ? cut_table_name(strtab_key(g.names, gp->range)) : ""};
	buf_reset(&states);
	buf_add(&states, "", 0);
	for (int s = 0; s <= NSTATES; s++)
		if (gp->st[s])
			buf_addf(&states, " %s %s", state_names[s],
			         cut_format_duration((double)gp->st[s], a, sizeof(a)));
	if (gp->before_tid != gp->after_tid)
		snprintf(tid, sizeof(tid), " (%lld)", (long long)gp->before_tid);
	for (int i = 0; i < 3; i++)
		name[i] = cut_esc(name[i]);
	size_t fixed = strlen(tid) + 5 + states.len + (gp->ranged ? 16 : 0);
	if (room)
		fit_names(name, gp->ranged ? 3 : 2, room > fixed ? room - fixed : 0);
	buf_reset(&b);
	buf_addf(&b, "%s%s -> %s:%s", name[0], tid, name[1], states.s);
	if (gp->ranged)
		buf_addf(&b, "; in NVTX range %s", name[2]);
	if (room && cut_name_cols(b.s) > room) { /* the rest cut off at the end */
		size_t i = 0;
		for (size_t cols = 0; cols < room - 1; i++)
			cols += (b.s[i + 1] & 0xC0) != 0x80;
		b.len = i;
		buf_adds(&b, "…");
	}
	return b.s;
}

static json_t *
gap_table(enum cut_fmt fmt)
{
	struct cut_table *t = new_table(&gap_def, fmt);
	char w[32];
	if (g.ngaps)
		qsort(g.gaps, g.ngaps, sizeof(*g.gaps), by_start);
	for (size_t i = 0; i < g.ngaps; i++) {
		const struct gap *gp = &g.gaps[i];
		if (gp->kind != K_THREAD && !shown(gp->stream))
			continue;
		bool thr = gp->kind == K_THREAD;
		const int64_t *st = gp->st;
		const char *before = strtab_key(g.names, gp->before),
		           *after = strtab_key(g.names, gp->after);
		struct cut_cell row[CUT_TABLE_MAX] = {
		    CUT_S(kind_names[gp->kind]),
		    HOST(gp->pid),
		    PID(gp->pid),
		    RANK(gp->pid),
		    CUT_IF(thr, CUT_I(gp->tid)),
		    CUT_I(gp->after_tid),
		    CUT_S(thr ? NULL : where(gp, w, sizeof(w))),
		    CUT_I(gp->start),
		    CUT_I(gp->end),
		    CUT_I(gp->end - gp->start),
		    CUT_S(state_names[gp->reason]),
		    CUT_S(cut_table_name(before)),
		    CUT_I(gp->before_tid),
		    CUT_S(cut_table_mangled(before)),
		    CUT_S(cut_table_name(after)),
		    CUT_I(gp->after_tid),
		    CUT_S(cut_table_mangled(after)),
		    CUT_I(st[ST_SYNC]),
		    CUT_I(st[ST_API]),
		    CUT_I(st[ST_IOCTL]),
		    CUT_I(st[ST_OFFCPU]),
		    CUT_I(st[NSTATES]),
		    CUT_S(gp->ranged ? cut_table_name(strtab_key(g.names, gp->range)) : NULL),
		    CUT_S(gp->ranged ? cut_table_mangled(strtab_key(g.names, gp->range)) : NULL)};
		if (fmt == CUT_FMT_TEXT) /* the last column, in words */
			row[CUT_NCOLS(gap_cols) - 1] = CUT_S(gap_text(gp, cut_table_room(t, row)));
		cut_table_add(t, row);
	}
	return cut_table_end(t);
}

static const char *const bucket_names[NBUCKETS] = {"< 1 us",  "1-10 us",   "10-100 us", "0.1-1 ms",
                                                   "1-10 ms", "10-100 ms", "0.1-1 s",   ">= 1 s"};

/* The gaps of each kind by length: how many and how long in all. */
static const struct cut_col hist_cols[] = {
    {"length", NULL, "length", CUT_COL_STR, -10, 0, 0},
    {"thread.gaps", NULL, "thread", CUT_COL_INT, 9, 0, 0},
    {"thread.total_ns", NULL, "time", CUT_COL_DUR, 14, 0, 0},
    {"stream.gaps", NULL, "stream", CUT_COL_INT, 9, 0, 0},
    {"stream.total_ns", NULL, "time", CUT_COL_DUR, 14, 0, 0},
    {"process.gaps", NULL, "process", CUT_COL_INT, 9, 0, 0},
    {"process.total_ns", NULL, "time", CUT_COL_DUR, 14, 0, 0},
};
static const struct cut_table_def hist_def = {hist_cols, CUT_NCOLS(hist_cols), NULL, NULL};

static json_t *
hist_table(enum cut_fmt fmt)
{
	struct cut_table *t = cut_table_new(&hist_def, fmt);
	for (int k = 0; k < NBUCKETS; k++) {
		int m = g.measured; /* the device part: measured or estimated */
		cut_table_add(
		    t, CUT_ROW(CUT_S(bucket_names[k]), CUT_I(g.hist[0][K_THREAD][k]),
		               CUT_I(g.histns[0][K_THREAD][k]), CUT_I(g.hist[m][K_STREAM][k]),
		               CUT_I(g.histns[m][K_STREAM][k]), CUT_I(g.hist[m][K_PROCESS][k]),
		               CUT_I(g.histns[m][K_PROCESS][k])));
	}
	return cut_table_end(t);
}

static void
print_text(int64_t traced)
{
	char a[32], b[32];
	cut_table_say("%s traced (first start to last end); gaps of %s or more are listed",
	              cut_format_duration((double)traced, a, sizeof(a)),
	              cut_format_duration((double)g.threshold, b, sizeof(b)));
	if (g.untimed)
		cut_table_say("note: %lld API events without a duration were left out",
		              (long long)g.untimed);
	if (g.saturated || g.cw->saturated)
		cut_table_say(
		    "note: some sums reached the largest 64-bit integer and stopped there: they "
		    "are lower bounds");
	cut_table_say("\nHost: per thread, time between driver API calls (first call to last)");
	thread_table(CUT_FMT_TEXT);
	if (g.measured)
		cut_table_say(
		    "\nDevice: per stream and per process (all), time with no work running, "
		    "measured on the GPU (layer gpu; first work's start to last work's end)");
	else
		cut_table_say(
		    "\nDevice: per stream and per process (all), time with no submitted work "
		    "outstanding, estimated from the host's calls (an upper bound: no gpu layer; "
		    "first submission to last completion)");
	stream_table(traced, CUT_FMT_TEXT);
	if (ranked())
		rank_waits(CUT_FMT_TEXT);
	cut_table_say("\nGaps of %s or more, by start",
	              cut_format_duration((double)g.threshold, a, sizeof(a)));
	gap_table(CUT_FMT_TEXT);
	cut_table_say("\nHistogram of gap lengths (all gaps)");
	hist_table(CUT_FMT_TEXT);
}

static void
print_json(int64_t traced)
{
	json_t *root = json_object();
	set_int(root, "traced_ns", traced);
	set_int(root, "threshold_ns", g.threshold);
	set_int(root, "untimed", g.untimed);
	if (g.saturated || g.cw->saturated)
		json_object_set_new(root, "saturated", json_true());
	json_t *threads = thread_table(CUT_FMT_JSON);
	json_object_set_new(root, "device_gaps",
	                    json_string(g.measured ? "measured" : "estimated"));
	json_object_set_new(root, "threads", threads);
	json_object_set_new(root, "streams", stream_table(traced, CUT_FMT_JSON));
	json_object_set_new(root, "gaps", gap_table(CUT_FMT_JSON));
	json_object_set_new(root, "histogram", hist_table(CUT_FMT_JSON));
	if (ranked())
		json_object_set_new(root, "rank_waits", rank_waits(CUT_FMT_JSON));
	if (json_dumpf(root, stdout, JSON_INDENT(2)) < 0)
		err(CUT_EXIT_FATAL, "write error on standard output");
	putchar('\n');
	json_decref(root);
}

/* Events out of order are left out: gaps need time to run forwards. */
static void
read_event(struct cut_reader *rd, struct cut_event *ev, void *arg)
{
	(void)arg;
	if (ev->layer != CUT_META && ev->ts < g.last_ts) {
		if (g.unsorted++ == 0)
			cut_reader_warn(rd,
			                "ts goes back %lld ns: the input is not sorted (run it "
			                "through cutmerge)",
			                (long long)(g.last_ts - ev->ts));
		return;
	}
	if (ev->layer != CUT_META)
		g.last_ts = ev->ts;
	collwait_add(g.cw, ev);
	struct cut_event e = *ev;
	e.pid = (int64_t)cut_procs_of(g.pr, ev);
	event(&e);
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
	    {"json", no_argument, NULL, 'j'},
	    {"threshold", required_argument, NULL, 't'},
	    {"wide", no_argument, NULL, 'w'},
	    {"mangled", no_argument, NULL, 'M'},
	    {NULL, 0, NULL, 0},
	};
	int ch, status = CUT_EXIT_OK;
	bool wide = false, mangled = false;

	cut_std_args_help(argc, argv, usage, opts);

	g.threshold = 1000000;
	while ((ch = getopt_long(argc, argv, "jwMt:", longopts, NULL)) != -1) {
		switch (ch) {
		case 'j': g.json = true; break;
		case 'w': wide = true; break;
		case 'M': mangled = true; break;
		case 't':
			if ((g.threshold = cut_parse_duration(optarg)) < 0)
				errx(CUT_EXIT_FATAL,
				     "-t: not a duration (ns, or with s, ms, us, ns): %s", optarg);
			break;
		default: usage();
		}
	}
	argc -= optind;
	argv += optind;
	cut_table_display(wide ? 0 : CUT_TABLE_WIDTH, mangled);

	g.names = strtab_new();
	g.tids = idmap_new();
	g.sids = idmap_new();
	g.pids = idmap_new();
	g.open = cut_calls_new(1u << CUT_API | 1u << CUT_IOCTL);
	g.ekeys = idmap_new();
	heap_init(&g.pend, sizeof(struct completion));
	g.cw = collwait_new();
	g.pr = cut_procs_new();
	g.first = g.last = g.last_ts = NONE;
	status = cut_read_all(argc, argv, read_event, NULL);
	if (g.unsorted > 1)
		warnx("%llu events out of order were left out", (unsigned long long)g.unsorted);
	if (g.unsorted)
		status = CUT_EXIT_BADINPUT;
	finish();
	int64_t traced = g.first == NONE ? 0 : g.last - g.first;
	if (g.json)
		print_json(traced);
	else
		print_text(traced);
	return cut_finish_output(status);
}
