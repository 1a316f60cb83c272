/* cutperfetto: cut traces in Perfetto's own protobuf format, encoded by hand: nested tracks,
 * interned names, flows, counters, and a clock per machine so that many hosts share a timeline.
 * The timeline is timeline.h's; this is its writer: a packet sequence per machine with its own
 * interning, a track descriptor per track, slices as begin and end events. */
#include <err.h>
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "buf.h"
#include "classify.h"
#include "cut.h"
#include "demangle.h"
#include "event.h"
#include "idmap.h"
#include "outfile.h"
#include "reader.h"
#include "pb.h"
#include "strtab.h"
#include "text.h"
#include "timeline.h"

/* Field numbers of protos/perfetto/trace/perfetto_trace.proto (google/perfetto; a copy is in
 * tests/fixtures/perfetto), by message, then the enum values used. */
/* clang-format off */
enum {
	/* Trace */
	TRACE_PACKET = 1,
	/* TracePacket */
	PKT_CLOCK_SNAPSHOT = 6, PKT_TIMESTAMP = 8, PKT_SEQUENCE_ID = 10,
	PKT_TRACK_EVENT = 11, PKT_INTERNED_DATA = 12, PKT_SEQUENCE_FLAGS = 13,
	PKT_DEFAULTS = 59, PKT_TRACK_DESCRIPTOR = 60, PKT_FIRST_ON_SEQUENCE = 87,
	PKT_MACHINE_ID = 98, PKT_SYSTEM_INFO = 45,
	/* SystemInfo */
	SYSTEM_MACHINE_NAME = 17,
	/* ClockSnapshot */
	SNAPSHOT_CLOCKS = 1, CLOCK_ID = 1, CLOCK_TIMESTAMP = 2,
	/* TracePacketDefaults */
	DEFAULTS_TIMESTAMP_CLOCK_ID = 58,
	/* TrackDescriptor */
	TRACK_UUID = 1, TRACK_NAME = 2, TRACK_PROCESS = 3, TRACK_THREAD = 4,
	TRACK_PARENT = 5, TRACK_COUNTER = 8, TRACK_ORDER_RANK = 12, TRACK_MERGE = 15,
	TRACK_PROCESS_ORDERING = 19,
	/* ProcessDescriptor */
	PROCESS_PID = 1, PROCESS_CMDLINE = 2, PROCESS_NAME = 6,
	/* ThreadDescriptor */
	THREAD_PID = 1, THREAD_TID = 2, THREAD_NAME = 5,
	/* CounterDescriptor */
	COUNTER_UNIT = 3,
	/* TrackEvent */
	EVENT_CATEGORY_IIDS = 3, EVENT_ANNOTATIONS = 4, EVENT_TYPE = 9,
	EVENT_NAME_IID = 10, EVENT_TRACK_UUID = 11, EVENT_COUNTER_VALUE = 30,
	EVENT_FLOW_IDS = 47, EVENT_TERMINATING_FLOW_IDS = 48,
	/* DebugAnnotation */
	ANN_NAME_IID = 1, ANN_BOOL = 2, ANN_UINT = 3, ANN_INT = 4,
	ANN_DOUBLE = 5, ANN_STRING = 6, ANN_POINTER = 7, ANN_JSON = 9,
	ANN_DICT = 11, ANN_ARRAY = 12,
	/* InternedData */
	INTERNED_CATEGORIES = 1, INTERNED_NAMES = 2,
	INTERNED_ANNOTATION_NAMES = 3,
	/* EventName... */
	INTERNED_IID = 1, INTERNED_STRING = 2,
};
enum {
	CLOCK_REALTIME = 1, CLOCK_MONOTONIC = 3, CLOCK_BOOTTIME = 6,
	SEQ_INCREMENTAL_STATE_CLEARED = 1, SEQ_NEEDS_INCREMENTAL_STATE = 2,
	TYPE_SLICE_BEGIN = 1, TYPE_SLICE_END = 2, TYPE_INSTANT = 3, TYPE_COUNTER = 4,
	UNIT_COUNT = 2, UNIT_SIZE_BYTES = 3, SIBLING_MERGE_NONE = 2, PROCESS_ORDERING_EXPLICIT = 1,
};
/* clang-format on */

#define FLUSH_AT (1 << 20)
/* Flow ids: API call serial << 20 | its ioctl number, begun on the ioctl and ended on the call's
 * end, which trace processor reads later; GPU work: a hash with the top bit set, on both ends,
 * either of which may come first. */
#define FLOW_SHIFT 20
#define GPU_FLOW (1ULL << 63)
/* Linux pids and tids stay below PID_MAX_LIMIT; the format's are any 64-bit value, and
 * ProcessDescriptor's pid is an int32: the ids written from here up are made up, and the
 * track says the real one in its name. */
#define SYNTH_ID (1 << 22)

/* A machine's sequence: per interned string, bits of the kinds sent on it, in pages of
 * SENT_PAGE allocated when a string of theirs is first sent here, so that machines that use few
 * of many names (a merge of many hosts) take little memory each. */
static struct seq {
	uint8_t **sent;
	size_t nsent;   /* pages */
	bool ranked;    /* the root track that says processes are ordered was written */
	int64_t rank;   /* the machine's lowest rank its processes' order was written with */
	int reorders;   /* times its processes were described again for a lower rank */
	int64_t nprocs; /* processes made on it */
} * seqs;               /* by tl_machine.index */
static size_t seqcap;

/* A track's: its uuid, its counter track's (0 until needed), the pid or tid written (see
 * SYNTH_ID). */
static struct trk {
	uint64_t uuid, counter;
	int64_t out;
	int64_t nth; /* a process: of its machine's, from 0 */
} * trks;            /* by tl_track.order */
static size_t trkcap;

/* A slot of the cache in front of the table of interned names. */
#define ICACHE_BITS 12
struct islot {
	const char *s;
	uint64_t w[3];
	size_t len, i;
};

static struct {
	struct cut_pb out, intern,
	    ann;             /* packets; a packet's new interned strings; its annotations */
	struct cut_pb key;   /* an argument's name */
	struct pb_json json; /* arguments' values as DebugAnnotations */
	FILE *f;
	const char *path;
	struct cut_strtab *strs; /* interned strings */
	struct cut_buf name;     /* a track's name being made */
	struct cut_idmap *tids;  /* (machine, tid) kept -> index in tid_owner */
	int64_t *tid_owner;      /* the pid of the thread that kept it */
	size_t owncap;
	int64_t nsynth; /* ids made up so far */
	struct islot cache[1 << ICACHE_BITS];
	uint64_t uuids, serials;
	bool mangled; /* -M: names as the trace has them */
	/* Processes are ordered by host then rank (order_rank) once the trace shows a rank or
	 * a second machine; those described so far, to describe again when their order does. */
	bool ordered, several; /* (several: processes are named with their hosts) */
	size_t nmachines;
	struct tl_track **procs;
	size_t nprocs, proccap;
} g;

static const struct cut_opt_help opts[] = {
    {"-o, --output=FILE", "write the trace to FILE, not standard output"},
    {"-M, --mangled", "name slices as the trace does, C++ names not demangled"},
    {NULL, NULL},
};

static void
usage(void)
{
	fprintf(stderr, "usage: cutperfetto [-M] [-o file] [file ...]\n");
	exit(CUT_EXIT_FATAL);
}

static void
flush(void)
{
	if (g.out.len && fwrite(g.out.s, 1, g.out.len, g.f) != g.out.len)
		err(CUT_EXIT_FATAL, "write error on %s", cut_esc(g.path));
	g.out.len = 0;
}

static struct trk *
trk(const struct tl_track *t)
{
	CUT_GROW(trks, t->order + 1, trkcap);
	return &trks[t->order];
}

/* ---- packets ---- */

/* Interned strings: one table for all machines; a string's iid is its index + 1 everywhere,
 * sent on a machine's sequence the first time a packet there refers to it. */
enum { SENT_NAME = 1, SENT_CATEGORY = 2, SENT_ANNOTATION = 4 };

/* The table's index of s (n bytes, NUL-terminated), through a direct-mapped cache that
 * compares names of up to 24 bytes as three words: events repeat a few names, and a miss costs
 * one lookup in the table. */
static size_t
intern(const char *s, size_t n)
{
	uint64_t a = 0, b = 0, c = 0;
	memcpy(&a, s, n < 8 ? n : 8);
	if (n > 8)
		memcpy(&b, s + 8, n < 16 ? n - 8 : 8);
	if (n > 16)
		memcpy(&c, s + n - 8, 8);
	uint64_t h = (a * 0x9e3779b97f4a7c15u ^ b * 0xc2b2ae3d27d4eb4fu ^ c) * 0xff51afd7ed558ccdu;
	struct islot *e = &g.cache[(h ^ n) >> (64 - ICACHE_BITS)];
	if (e->s && e->len == n && e->w[0] == a && e->w[1] == b && e->w[2] == c &&
	    (n <= 24 || memcmp(e->s, s, n) == 0))
		return e->i;
	size_t i = strtab_intern(g.strs, s);
	*e = (struct islot){strtab_key(g.strs, i), {a, b, c}, n, i};
	return i;
}

#define SENT_PAGE 4096

static uint64_t
iid(const struct tl_machine *m, const char *s, size_t len, unsigned kind)
{
	struct seq *q = &seqs[m->index];
	size_t i = intern(s, len), pg = i / SENT_PAGE;
	CUT_GROW(q->sent, pg + 1, q->nsent);
	if (!q->sent[pg])
		q->sent[pg] = cut_xcalloc(SENT_PAGE, 1);
	uint8_t *sent = &q->sent[pg][i % SENT_PAGE];
	if (!(*sent & kind)) {
		*sent |= (uint8_t)kind;
		size_t at = pb_nest(&g.intern, kind == SENT_NAME       ? INTERNED_NAMES
		                               : kind == SENT_CATEGORY ? INTERNED_CATEGORIES
		                                                       : INTERNED_ANNOTATION_NAMES);
		pb_field(&g.intern, INTERNED_IID, i + 1);
		pb_bytes(&g.intern, INTERNED_STRING, s, len);
		pb_nest_end(&g.intern, at);
	}
	return i + 1;
}

/* Starts a packet on m's sequence: a track event at ts (it needs the sequence's defaults and
 * interned strings), or, with ts < 0, anything else. */
static size_t
packet(const struct tl_machine *m, int64_t ts)
{
	uint32_t id = (uint32_t)m->index; /* TracePacket.machine_id; 0, the host machine, first */
	pb_need(&g.out, 48);
	uint8_t *p = g.out.s + g.out.len;
	*p++ = TRACE_PACKET << 3 | PB_LEN;
	size_t at = (size_t)(p++ - g.out.s);
	if (ts >= 0) {
		*p++ = PKT_TIMESTAMP << 3 | PB_VARINT;
		p = pb_put_varint(p, (uint64_t)ts);
		*p++ = PKT_SEQUENCE_FLAGS << 3 | PB_VARINT;
		*p++ = SEQ_NEEDS_INCREMENTAL_STATE;
	}
	*p++ = PKT_SEQUENCE_ID << 3 | PB_VARINT;
	p = pb_put_varint(p, id + 1);
	if (id) {
		p = pb_put_varint(p, PKT_MACHINE_ID << 3 | PB_VARINT);
		p = pb_put_varint(p, id);
	}
	g.out.len = (size_t)(p - g.out.s);
	return at;
}

static void
packet_end(size_t at)
{
	if (g.intern.len) {
		pb_bytes(&g.out, PKT_INTERNED_DATA, g.intern.s, g.intern.len);
		g.intern.len = 0;
	}
	pb_nest_end(&g.out, at);
	if (g.out.len >= FLUSH_AT)
		flush();
}

/* The start of a machine's sequence: its clocks, then the defaults every later packet uses
 * (timestamps of CLOCK_MONOTONIC), and the host as the machine's name. BOOTTIME is taken to equal
 * MONOTONIC: the traces have no reading of it, the two differ only by time suspended, and trace
 * processor needs it to place the machine. */
static void
machine_start(void *arg, struct tl_machine *m)
{
	(void)arg;
	CUT_GROW(seqs, m->index + 1, seqcap);
	seqs[m->index].rank = -1;
	g.nmachines = m->index + 1;
	size_t at = packet(m, -1);
	pb_field(&g.out, PKT_FIRST_ON_SEQUENCE, 1);
	size_t snap = pb_nest(&g.out, PKT_CLOCK_SNAPSHOT);
	const uint32_t ids[] = {CLOCK_BOOTTIME, CLOCK_MONOTONIC, CLOCK_REALTIME};
	const int64_t vals[] = {m->mono, m->mono, m->real};
	for (int i = 0; i < (m->clock ? 3 : 2); i++) {
		size_t c = pb_nest(&g.out, SNAPSHOT_CLOCKS);
		pb_field(&g.out, CLOCK_ID, ids[i]);
		pb_field(&g.out, CLOCK_TIMESTAMP, (uint64_t)vals[i]);
		pb_nest_end(&g.out, c);
	}
	pb_nest_end(&g.out, snap);
	pb_nest_end(&g.out, at);
	at = packet(m, -1);
	pb_field(&g.out, PKT_SEQUENCE_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED);
	size_t d = pb_nest(&g.out, PKT_DEFAULTS);
	pb_field(&g.out, DEFAULTS_TIMESTAMP_CLOCK_ID, CLOCK_MONOTONIC);
	pb_nest_end(&g.out, d);
	pb_nest_end(&g.out, at);
	if (*m->host) {
		at = packet(m, -1);
		d = pb_nest(&g.out, PKT_SYSTEM_INFO);
		pb_string(&g.out, SYSTEM_MACHINE_NAME, m->host);
		pb_nest_end(&g.out, d);
		pb_nest_end(&g.out, at);
	}
}

/* ---- tracks ---- */

/* A track's name, for the kinds the viewer does not name from a process or thread, appended
 * to b: whole, however long its parts (two names cut to one length could read the same). */
static const char *
track_name(const struct tl_track *t, struct cut_buf *b)
{
	switch (t->kind) {
	case TL_OFFCPU: buf_addf(b, "off-CPU (tid %lld)", (long long)t->key); break;
	case TL_GPU:
		buf_addf(b, "GPU %lld%s%s%s%s%s", (long long)t->key, t->name ? ": " : "",
		         t->name ? t->name : "", t->uuid ? " (" : "", t->uuid ? t->uuid : "",
		         t->uuid ? ")" : "");
		break;
	case TL_STREAM:
		if (t->parent->pid < 0) /* a GPU shared by processes */
			buf_addf(b, "pid %lld ", (long long)t->pid);
		if (t->nostream)
			buf_adds(b, "no stream");
		else if (t->nvtx)
			buf_addf(b, "%s (stream 0x%llx)", t->nvtx, (unsigned long long)t->key);
		else
			buf_addf(b, "stream 0x%llx", (unsigned long long)t->key);
		break;
	case TL_IRQS: buf_adds(b, "interrupts"); break;
	case TL_NVTX:
		if (t->domain)
			buf_addf(b, "NVTX: %s", t->domain);
		else
			buf_adds(b, "NVTX");
		break;
	case TL_IRQ:
		if (t->key < 0)
			buf_adds(b, "CPU unknown");
		else
			buf_addf(b, "CPU %lld", (long long)t->key);
		break;
	case TL_THREAD: buf_addf(b, "tid %lld", (long long)t->key); break;
	case TL_PROCESS: buf_addf(b, "pid %lld", (long long)t->pid);
	}
	return b->s;
}

/* Adds a real id to the name in b of a track with a made-up one: "name (pid N)", or "pid N"
 * alone. */
static void
real_id(struct cut_buf *b, const char *what, int64_t id)
{
	bool named = b->len > 0;
	buf_addf(b, "%s%s %lld%s", named ? " (" : "", what, (long long)id, named ? ")" : "");
}

#define REORDERS 64

/*
 * A process's sibling_order_rank: by host, hosts by their lowest rank (2^18 and more kept as
 * 2^18 - 1), those without ranks after in the order they appear; on a host, its ranks by rank
 * (up to 1023 above its lowest), then its other processes in the order they appear (the first
 * 1024). 19 bits of host, 2 of class, 10 within: an int32.
 */
static uint64_t
order_rank(const struct tl_track *t)
{
	const struct tl_machine *m = t->m;
	int64_t top = (1 << 18) - 1, nth = trk(t)->nth;
	int64_t host = m->rank >= 0
	                   ? (m->rank < top ? m->rank : top)
	                   : (1 << 18) + ((int64_t)m->index < top ? (int64_t)m->index : top);
	int64_t within = t->rank >= 0 ? t->rank - (m->rank >= 0 ? m->rank : 0) : nth;
	within = within < 0 ? 0 : within > 1023 ? 1023 : within;
	return (uint64_t)(host << 12 | (t->rank >= 0 ? 0 : 1) << 10 | within);
}

static void describe(const struct tl_track *t);

/*
 * Before t, a process, is described: processes become ordered, all described again, once the
 * trace shows a rank or a second machine (and again at a second machine: their names say
 * their hosts from then on); a machine's are described again when its lowest
 * rank drops (a few times at the start of a job: its ranks start together; REORDERS times at
 * most, after which its earlier processes keep their place).
 */
static void
reorder(const struct tl_track *t)
{
	size_t i;
	struct seq *q = &seqs[t->m->index];
	if ((!g.ordered && (t->m->rank >= 0 || g.nmachines > 1)) ||
	    (!g.several && g.nmachines > 1)) {
		g.ordered = true;
		g.several = g.nmachines > 1;
		for (i = 0; i < g.nmachines; i++)
			seqs[i].rank = -1;
		for (i = 0; i < g.nprocs; i++)
			seqs[g.procs[i]->m->index].rank = g.procs[i]->m->rank;
		q->rank = t->m->rank;
		for (i = 0; i < g.nprocs; i++)
			if (g.procs[i] != t)
				describe(g.procs[i]);
	}
	if (g.ordered && q->rank != t->m->rank) {
		q->rank = t->m->rank;
		if (q->reorders++ < REORDERS)
			for (i = 0; i < g.nprocs; i++)
				if (g.procs[i] != t && g.procs[i]->m == t->m)
					describe(g.procs[i]);
	}
}

/* Writes t's TrackDescriptor; again after a rename (a later one wins). The processes of a
 * distributed job, or of several machines, are ordered by host then rank (order_rank), which
 * the root track (uuid 0) of each machine declares once. */
static void
describe(const struct tl_track *t)
{
	struct cut_buf *name = &g.name;
	const struct trk *x = trk(t);
	const char *pname = t->label ? t->label : t->tool;
	size_t at, d, p;
	if (t->kind == TL_PROCESS)
		reorder(t);
	buf_reset(name);
	if (t->kind == TL_PROCESS && g.ordered && !seqs[t->m->index].ranked) {
		at = packet(t->m, -1);
		d = pb_nest(&g.out, PKT_TRACK_DESCRIPTOR);
		pb_field(&g.out, TRACK_UUID, 0);
		pb_field(&g.out, TRACK_PROCESS_ORDERING, PROCESS_ORDERING_EXPLICIT);
		pb_nest_end(&g.out, d);
		packet_end(at);
		seqs[t->m->index].ranked = true;
	}
	at = packet(t->m, -1);
	d = pb_nest(&g.out, PKT_TRACK_DESCRIPTOR);
	pb_field(&g.out, TRACK_UUID, x->uuid);
	switch (t->kind) {
	case TL_PROCESS:
		p = pb_nest(&g.out, TRACK_PROCESS);
		pb_field(&g.out, PROCESS_PID, (uint64_t)x->out);
		if (t->cmdline)
			pb_string(&g.out, PROCESS_CMDLINE, t->cmdline);
		if (t->rank >= 0)
			buf_addf(name, "rank %lld%s%s%s", (long long)t->rank,
			         *t->m->host ? " (" : "", t->m->host, *t->m->host ? ")" : "");
		else if (pname)
			buf_adds(name, pname);
		if (t->rank < 0 && pname && g.several && *t->m->host) /* "name (host)" */
			buf_addf(name, " (%s)", t->m->host);
		if (x->out != t->pid) /* a made-up pid: the real one in the name */
			real_id(name, "pid", t->pid);
		if (name->len || t->rank >= 0 || pname)
			pb_string(&g.out, PROCESS_NAME, name->len ? name->s : "");
		pb_nest_end(&g.out, p);
		if (g.ordered)
			pb_field(&g.out, TRACK_ORDER_RANK, order_rank(t));
		break;
	case TL_THREAD:
		p = pb_nest(&g.out, TRACK_THREAD);
		pb_field(&g.out, THREAD_PID, (uint64_t)trk(t->parent)->out);
		pb_field(&g.out, THREAD_TID, (uint64_t)x->out);
		if (t->nvtx || t->comm)
			buf_adds(name, t->nvtx ? t->nvtx : t->comm);
		if (x->out != t->key)
			real_id(name, "tid", t->key);
		if (name->len || t->nvtx || t->comm)
			pb_string(&g.out, THREAD_NAME, name->len ? name->s : "");
		pb_nest_end(&g.out, p);
		break;
	default:
		pb_string(&g.out, TRACK_NAME, track_name(t, name));
		if (t->parent)
			pb_field(&g.out, TRACK_PARENT, trk(t->parent)->uuid);
		pb_field(&g.out, TRACK_MERGE, SIBLING_MERGE_NONE);
	}
	pb_nest_end(&g.out, d);
	packet_end(at);
}

/*
 * A track is numbered when made (before its parent), described once whole, again when renamed.
 * A process keeps a Linux pid, and its threads their tids: trace processor keys them by
 * machine, pid and tid. A thread of a process with a made-up pid gets one too, or it would be
 * taken for the thread of that tid in the process of the tid's pid, and so does one whose tid
 * a thread of another process of its machine kept (a trace made by hand).
 */
static void
track(void *arg, struct tl_track *t, unsigned what)
{
	(void)arg;
	struct trk *x = trk(t);
	if (what & TL_MADE) {
		x->uuid = ++g.uuids;
		return;
	}
	if ((what & TL_NEW) && t->kind == TL_PROCESS) {
		x->out = t->pid > 0 && t->pid < SYNTH_ID ? t->pid : SYNTH_ID + g.nsynth++;
		x->nth = seqs[t->m->index].nprocs++;
		CUT_GROW(g.procs, g.nprocs + 1, g.proccap);
		g.procs[g.nprocs++] = t;
	} else if ((what & TL_NEW) && t->kind == TL_THREAD) {
		bool keep = trk(t->parent)->out == t->pid && t->key > 0 && t->key < SYNTH_ID;
		if (keep) {
			bool isnew;
			size_t i = idmap_put2(g.tids, (int64_t)t->m->index, t->key, &isnew);
			if (isnew) {
				CUT_GROW(g.tid_owner, i + 1, g.owncap);
				g.tid_owner[i] = t->pid;
			}
			keep = g.tid_owner[i] == t->pid;
		}
		x->out = keep ? t->key : SYNTH_ID + g.nsynth++;
	}
	if (what & (TL_NEW | TL_NAMED | TL_RANKED))
		describe(t);
}

/* A track of its own under parent: a track's overlap lane, or a counter. */
static uint64_t
child_track(const struct tl_machine *m, uint64_t parent, const char *name, int unit)
{
	uint64_t uuid = ++g.uuids;
	size_t at = packet(m, -1), d = pb_nest(&g.out, PKT_TRACK_DESCRIPTOR);
	pb_field(&g.out, TRACK_UUID, uuid);
	pb_string(&g.out, TRACK_NAME, name);
	pb_field(&g.out, TRACK_PARENT, parent);
	pb_field(&g.out, TRACK_MERGE, SIBLING_MERGE_NONE);
	if (unit) {
		size_t c = pb_nest(&g.out, TRACK_COUNTER);
		pb_field(&g.out, COUNTER_UNIT, (uint64_t)unit);
		pb_nest_end(&g.out, c);
	}
	pb_nest_end(&g.out, d);
	packet_end(at);
	return uuid;
}

/* A lane's track: the track's own, or an overlap "name overlap N" under it. */
static void
lane(void *arg, struct tl_lane *l)
{
	(void)arg;
	if (l->index == 0) {
		l->user = trk(l->t)->uuid;
		return;
	}
	buf_reset(&g.name);
	track_name(l->t, &g.name);
	buf_addf(&g.name, " overlap %zu", l->index);
	l->user = child_track(l->t->m, trk(l->t)->uuid, g.name.s, 0);
}

/* The value of t's counter at ts: a process's device memory, a GPU's work in flight. */
static void
counter(void *arg, struct tl_track *t, int64_t ts, int64_t value)
{
	char name[64];
	struct trk *x = trk(t);
	(void)arg;
	if (!x->counter) {
		if (t->kind == TL_PROCESS) {
			x->counter = child_track(t->m, x->uuid, "device memory", UNIT_SIZE_BYTES);
		} else {
			snprintf(name, sizeof(name), "GPU %lld busy", (long long)t->key);
			x->counter = child_track(t->m, x->uuid, name, UNIT_COUNT);
		}
	}
	size_t at = packet(t->m, ts), e = pb_nest(&g.out, PKT_TRACK_EVENT);
	pb_field(&g.out, EVENT_TYPE, TYPE_COUNTER);
	pb_field(&g.out, EVENT_TRACK_UUID, x->counter);
	pb_field(&g.out, EVENT_COUNTER_VALUE, (uint64_t)value);
	pb_nest_end(&g.out, e);
	packet_end(at);
}

/* ---- arguments as debug annotations ---- */

static uint64_t
annotation_iid(void *m, const char *s, size_t n)
{
	return iid(m, s, n, SENT_ANNOTATION);
}

/* The members of an object (from its first key; up to its '}' or the end of the text) as
 * debug annotations; the top-level "corr" is noted for flows and envelope "host" and "rank"
 * among unknown members are left to the process name. */
static void
members(struct cut_pb *b, const struct tl_machine *m, const char *p, bool envelope, int64_t *corr)
{
	for (p = pb_json_ws(p); *p == '"';) {
		p = pb_json_ws(pb_json_string(p, &g.key));
		p = pb_json_ws(p + 1); /* ':' */
		const char *k = (char *)g.key.s;
		if (envelope && (strcmp(k, "host") == 0 || strcmp(k, "rank") == 0)) {
			p = pb_json_skip(p);
		} else {
			if (corr && g.key.len == 4 && memcmp(k, "corr", 4) == 0) {
				char *e;
				long long v = strtoll(p, &e, 10);
				if (e != p)
					*corr = v;
			}
			size_t at = pb_nest(b, EVENT_ANNOTATIONS);
			pb_field(b, ANN_NAME_IID, iid(m, k, g.key.len, SENT_ANNOTATION));
			g.json.ctx = (void *)m;
			p = pb_json_value(&g.json, b, p);
			pb_nest_end(b, at);
		}
		p = pb_json_ws(p);
		if (*p == ',')
			p = pb_json_ws(p + 1);
	}
}

static void
int_annotation(struct cut_pb *b, const struct tl_machine *m, const char *name, int64_t v)
{
	size_t at = pb_nest(b, EVENT_ANNOTATIONS);
	pb_field(b, ANN_NAME_IID, iid(m, name, strlen(name), SENT_ANNOTATION));
	pb_field(b, ANN_INT, (uint64_t)v);
	pb_nest_end(b, at);
}

static void
string_annotation(struct cut_pb *b, const struct tl_machine *m, const char *name, const char *v)
{
	size_t at = pb_nest(b, EVENT_ANNOTATIONS);
	pb_field(b, ANN_NAME_IID, iid(m, name, strlen(name), SENT_ANNOTATION));
	pb_string(b, ANN_STRING, v);
	pb_nest_end(b, at);
}

/* The event's members other than the envelope as annotations in g.ann, with the name as the
 * trace has it when it is shown demangled as name ("mangled") and the collective a GPU kernel
 * is ("collective"); returns whether args has an integer "corr", and it through corr. */
static bool
annotations(const struct tl_machine *m, const struct cut_event *ev, const char *name, int64_t *corr)
{
	struct cut_pb *b = &g.ann;
	b->len = 0;
	*corr = INT64_MIN;
	if (ev->has & CUT_HAS_RET)
		int_annotation(b, m, "ret", ev->ret);
	if (ev->has & CUT_HAS_ID)
		int_annotation(b, m, "id", ev->id);
	if (ev->has & CUT_HAS_PARENT)
		int_annotation(b, m, "parent", ev->parent);
	if (ev->has & CUT_HAS_NIOCTL) {
		int_annotation(b, m, "nioctl", ev->nioctl);
		int_annotation(b, m, "ioctl_ns", ev->ioctl_ns);
	}
	if (ev->args)
		members(b, m, pb_json_ws(ev->args) + 1, false, corr);
	const char *coll = ev->layer == CUT_GPU ? cut_collective(ev->name) : NULL;
	if (name != ev->name)
		string_annotation(b, m, "mangled", ev->name);
	if (coll && !cut_args_find(ev->args, "collective"))
		string_annotation(b, m, "collective", coll);
	if (ev->extra)
		members(b, m, ev->extra, true, NULL);
	return *corr != INT64_MIN;
}

/* ---- slices ---- */

/* A GPU flow's id: a hash of the machine, the pid and the corr. */
static uint64_t
gpu_flow(const struct tl_machine *m, int64_t pid, int64_t corr)
{
	uint64_t h = 8 * 0x9e3779b97f4a7c15u ^ (uint64_t)m->index * 0x94d049bb133111ebu ^
	             (uint64_t)pid * 0xff51afd7ed558ccdu ^ (uint64_t)corr * 0xc4ceb9fe1a85ec53u;
	return GPU_FLOW | (h ^ h >> 29) >> 1;
}

/* One event as a slice (its BEGIN; the END when it is ended) or an instant, with the flow ids
 * of an ioctl from its API call and of GPU work and the call that submitted it. */
static void
slice(void *arg, struct tl_lane *l, struct tl_open *o, const struct cut_event *ev,
      const struct tl_call *call)
{
	(void)arg;
	const struct tl_machine *m = l->t->m;
	int64_t corr;
	if (l->t->domain) /* (interned in the order it always was) */
		intern(l->t->domain, strlen(l->t->domain));
	/* demangled, unless -M or its args hold a "mangled" of their own */
	const char *shown = g.mangled ? ev->name : cut_demangle(ev->name);
	if (shown != ev->name && cut_args_find(ev->args, "mangled"))
		shown = ev->name;
	bool has_corr = annotations(m, ev, shown, &corr);
	const char *c = cut_event_category(ev);
	uint64_t name = iid(m, shown, strlen(shown), SENT_NAME);
	uint64_t cat = iid(m, c, strlen(c), SENT_CATEGORY);

	size_t at = packet(m, ev->ts), e = pb_nest(&g.out, PKT_TRACK_EVENT);
	pb_field(&g.out, EVENT_TYPE, ev->has & CUT_HAS_DUR ? TYPE_SLICE_BEGIN : TYPE_INSTANT);
	pb_field(&g.out, EVENT_TRACK_UUID, l->user);
	pb_field(&g.out, EVENT_CATEGORY_IIDS, cat);
	pb_field(&g.out, EVENT_NAME_IID, name);
	pb_append(&g.out, &g.ann);
	/* user of an API call's slice: its serial << FLOW_SHIFT | the flows begun to its ioctls */
	if (call && call->layer == CUT_API && call->open && call->open->user &&
	    (call->open->user & ((1u << FLOW_SHIFT) - 1)) + 1 < 1u << FLOW_SHIFT)
		pb_fixed64(&g.out, EVENT_FLOW_IDS, ++call->open->user);
	if (has_corr && (ev->layer == CUT_API || ev->layer == CUT_GPU))
		pb_fixed64(&g.out, EVENT_FLOW_IDS, gpu_flow(m, ev->pid, corr));
	pb_nest_end(&g.out, e);
	packet_end(at);
	if (o && ev->layer == CUT_API)
		o->user = ++g.serials << FLOW_SHIFT;
}

/* A slice's END, which ends the flows to the ioctls of an API call. */
static void
slice_end(void *arg, struct tl_lane *l, struct tl_open *o)
{
	(void)arg;
	size_t at = packet(l->t->m, o->end), e = pb_nest(&g.out, PKT_TRACK_EVENT);
	pb_field(&g.out, EVENT_TYPE, TYPE_SLICE_END);
	pb_field(&g.out, EVENT_TRACK_UUID, l->user);
	for (uint64_t k = 1; k <= (o->user & ((1u << FLOW_SHIFT) - 1)); k++)
		pb_fixed64(&g.out, EVENT_TERMINATING_FLOW_IDS,
		           (o->user & ~(uint64_t)((1u << FLOW_SHIFT) - 1)) | k);
	pb_nest_end(&g.out, e);
	packet_end(at);
}

/* A marker where the capture lost events, on the process of the writer. */
static void
lost(void *arg, struct tl_track *p, const struct cut_event *ev, int64_t count)
{
	char name[64];
	int64_t corr;
	(void)arg;
	snprintf(name, sizeof(name), "lost %lld events", (long long)count);
	annotations(p->m, ev, ev->name, &corr);
	uint64_t name_iid = iid(p->m, name, strlen(name), SENT_NAME);
	uint64_t cat = iid(p->m, "lost", 4, SENT_CATEGORY);
	size_t at = packet(p->m, ev->ts), e = pb_nest(&g.out, PKT_TRACK_EVENT);
	pb_field(&g.out, EVENT_TYPE, TYPE_INSTANT);
	pb_field(&g.out, EVENT_TRACK_UUID, trk(p)->uuid);
	pb_field(&g.out, EVENT_CATEGORY_IIDS, cat);
	pb_field(&g.out, EVENT_NAME_IID, name_iid);
	pb_append(&g.out, &g.ann);
	pb_nest_end(&g.out, e);
	packet_end(at);
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
	    {"output", required_argument, NULL, 'o'},
	    {"mangled", no_argument, NULL, 'M'},
	    {NULL, 0, NULL, 0},
	};
	static const struct tl_sink sink = {
	    .flags = TL_BOOTS,
	    .calls = 1u << CUT_API,
	    .machine = machine_start,
	    .track = track,
	    .lane = lane,
	    .slice = slice,
	    .slice_end = slice_end,
	    .counter = counter,
	    .lost = lost,
	};
	const char *path = NULL;
	int ch;

	cut_std_args_help(argc, argv, usage, opts);

	while ((ch = getopt_long(argc, argv, "Mo:", longopts, NULL)) != -1) {
		switch (ch) {
		case 'o': path = optarg; break;
		case 'M': g.mangled = true; break;
		default: usage();
		}
	}
	argc -= optind;
	argv += optind;
	cut_check_inputs(argc, argv, CUT_INPUTS_DISTINCT);

	if (path) {
		/* A fresh file, renamed into place when complete: never through a link. */
		if (!(g.f = outfile_open(path)) && errno == ELOOP)
			errx(CUT_EXIT_FATAL, "%s: a symbolic link: not followed", cut_esc(path));
		if (!g.f)
			err(CUT_EXIT_FATAL, "%s", cut_esc(path));
		static struct cut_buf esc; /* (cut_esc reuses its buffers) */
		buf_adds(&esc, cut_esc(path));
		g.path = esc.s;
	} else {
		if (isatty(STDOUT_FILENO))
			errx(CUT_EXIT_FATAL,
			     "will not write a binary trace to a terminal: redirect "
			     "standard output or use -o");
		g.f = stdout;
		g.path = "standard output";
	}
	g.json = (struct pb_json){.name_id = ANN_NAME_IID,
	                          .boolean = ANN_BOOL,
	                          .uint = ANN_UINT,
	                          .sint = ANN_INT,
	                          .dbl = ANN_DOUBLE,
	                          .string = ANN_STRING,
	                          .pointer = ANN_POINTER,
	                          .json = ANN_JSON,
	                          .dict = ANN_DICT,
	                          .array = ANN_ARRAY,
	                          .key = annotation_iid};
	g.strs = strtab_new();
	g.tids = idmap_new();

	struct tl *tl = tl_new(&sink);
	int status = tl_run(tl, argc, argv);
	tl_flush(tl);
	tl_free(tl);
	flush();
	if (path && outfile_commit(g.f))
		err(CUT_EXIT_FATAL, "write error on %s", g.path);
	return path ? status : cut_finish_output(status);
}
