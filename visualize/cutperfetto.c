/* cutperfetto: cut traces in Perfetto's own protobuf format, encoded by hand: nested tracks,
 * interned names, flows, counters, and a clock per machine so that many hosts share a timeline. */
#include <err.h>
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "args.h"
#include "buf.h"
#include "calls.h"
#include "cut.h"
#include "event.h"
#include "heap.h"
#include "idmap.h"
#include "outfile.h"
#include "pb.h"
#include "reader.h"
#include "strtab.h"
#include "text.h"

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
/* Two traces of one host whose clock offsets differ by less than this share a boot (as in
 * cutmerge). */
#define SAME_BOOT_NS 1000000000
/* Flow ids: API call serial << 20 | its ioctl number, begun on the ioctl and ended on the call's
 * end, which trace processor reads later; GPU work: a hash with the top bit set, on both ends,
 * either of which may come first. */
#define FLOW_SHIFT 20
#define GPU_FLOW (1ULL << 63)
/* Linux pids and tids stay below PID_MAX_LIMIT; the format's are any 64-bit value, and
 * ProcessDescriptor's pid is an int32: the ids written from here up are made up, and the
 * track says the real one in its name. */
#define SYNTH_ID (1 << 22)

/* A machine: one host and boot, one clock, one packet sequence with its own interning. */
struct machine {
	char *host; /* "" when unknown */
	int64_t mono, real;
	bool clock;
	uint32_t id; /* TracePacket.machine_id; 0, the host machine, for the first */
	/* per interned string: bits of the kinds sent on this sequence, in pages of SENT_PAGE
	 * allocated when a string of theirs is first sent here, so that machines that use few
	 * of many names (a merge of many hosts) take little memory each */
	uint8_t **sent;
	size_t nsent; /* pages */
	bool ranked;  /* processes are ordered by rank */
};

/* A slice still open on a lane. */
struct open {
	int64_t ts, end, id; /* id: the event's, or -1 */
	uint64_t serial;     /* API calls: flow ids to their ioctls are serial << 20 | 1..nflow */
	uint32_t nflow;
	struct group *busy; /* GPU work: the device whose busy counter drops at the end */
};

/* One output track on which slices nest; a group spills overlaps into further lanes. */
struct lane {
	uint64_t uuid;
	int64_t last, floor; /* latest start placed, latest end closed */
	int64_t until;       /* a spill lane: the end of the slice it holds */
	struct open *stack;
	size_t depth, cap;
	struct group *g;
	struct lane *next;
};

enum kind { PROCESS, THREAD, OFFCPU, DEVICE, STREAM, IRQS, IRQCPU, ASYNC, ALLOC, DEVREF, SNAME };

/* What the hash table keys by (kind, machine, pid, key): processes, threads (key: tid), their
 * off-CPU tracks, GPUs and their streams (key: a hash of the GPU's track and the handle),
 * interrupts (key: CPU), NVTX start/end ranges per domain (key: the domain's index in the
 * string table, -1 for the default domain), and, with no track, live device allocations (key: dptr)
 * and a process's GPUs by ordinal (DEVREF, parent: the GPU) and its streams' NVTX names (SNAME,
 * key: handle). A GPU whose device record gives its uuid is one track for every process that used
 * it (pid -1, key: the uuid's index in the string table); without one, a GPU is a process's (key:
 * ordinal). */
struct group {
	enum kind kind;
	struct machine *m;
	int64_t pid, key;
	struct group *hnext, *parent;
	uint64_t uuid, counter; /* its track; its counter track, 0 until needed */
	struct lane *lanes;
	struct lane **spill; /* lanes past the scanned ones, see place() */
	size_t nspill, spillcap, nlanes;
	char *name, *nvtx, *cmdline; /* comm or device name; NVTX thread or stream name; command
	                                line, or a GPU's uuid */
	int64_t rank;       /* PROCESS: -1 outside a distributed job; DEVICE: its ordinal */
	int64_t out;        /* PROCESS, THREAD: the pid, tid written (see SYNTH_ID) */
	bool nostream;      /* STREAM: work without a stream */
	struct group *same; /* SNAME: the process's tracks of its stream, one per GPU; STREAM:
	                       the next of them */
	int64_t value;      /* PROCESS: bytes allocated; DEVICE: work in flight; STREAM: its handle;
	                       ALLOC: its bytes */
};

/* One input file: its next event, its machine, from its header. */
struct input {
	struct cut_reader *r;
	struct cut_event ev;
	bool stopped; /* reading must stop (strict mode) */
	struct machine *m;
	int64_t last, writer; /* latest start seen; the pid of the header's writer */
	char *tool;           /* the header's tool */
};

/* A slot of the cache in front of the table of interned names. */
#define ICACHE_BITS 12
struct islot {
	const char *s;
	uint64_t w[3];
	size_t len, i;
};

/* A slice in the heap of ends still to write: where it is open. */
struct hent {
	int64_t end;
	struct lane *l;
	size_t depth;
};

static struct {
	struct cut_pb out, intern,
	    ann;             /* packets; a packet's new interned strings; its annotations */
	struct cut_pb key;   /* an argument's name */
	struct pb_json json; /* arguments' values as DebugAnnotations */
	FILE *f;
	const char *path;
	struct machine **machines;
	size_t nmachines;
	struct group **tab;
	size_t ntab, ngroups;
	struct hent *heap;
	size_t nheap, heapcap;
	struct cut_strtab *strs, *gpus; /* interned strings; GPUs' uuids */
	struct cut_idmap *streams;      /* (GPU track, handle) -> key of a STREAM group */
	struct cut_calls *calls;        /* the API calls open (user: lane, depth), for flows */
	struct cut_buf name;            /* a track's name being made */
	struct cut_idmap *tids;         /* (machine, tid) kept -> index in tid_owner */
	int64_t *tid_owner;             /* the pid of the thread that kept it */
	int64_t nsynth;                 /* ids made up so far */
	struct islot cache[1 << ICACHE_BITS];
	uint64_t uuids, serials;
	enum kind place[CUT_NLAYERS];
	int api_layer, ioctl_layer, gpu_layer, nvtx_layer;
	bool warned_order;
} g = {.api_layer = -1, .ioctl_layer = -1, .gpu_layer = -1, .nvtx_layer = -1};

static void
usage(int status)
{
	fprintf(status ? stderr : stdout, "usage: cutperfetto [-o file] [file ...]\n");
	exit(status ? status : cut_finish_output(status));
}

static void *
xcalloc(size_t n, size_t size)
{
	void *p = calloc(n, size);
	if (!p)
		err(CUT_EXIT_FATAL, "out of memory");
	return p;
}

static char *
xstrdup(const char *s)
{
	char *p = strdup(s);
	if (!p)
		err(CUT_EXIT_FATAL, "out of memory");
	return p;
}

static void
flush(void)
{
	if (g.out.len && fwrite(g.out.s, 1, g.out.len, g.f) != g.out.len)
		err(CUT_EXIT_FATAL, "write error on %s", cut_esc(g.path));
	g.out.len = 0;
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
iid(struct machine *m, const char *s, size_t len, unsigned kind)
{
	size_t i = intern(s, len), pg = i / SENT_PAGE;
	if (pg >= m->nsent) {
		size_t n = m->nsent ? m->nsent : 16;
		while (n <= pg)
			n *= 2;
		if (!(m->sent = realloc(m->sent, n * sizeof(*m->sent))))
			err(CUT_EXIT_FATAL, "out of memory");
		memset(m->sent + m->nsent, 0, (n - m->nsent) * sizeof(*m->sent));
		m->nsent = n;
	}
	if (!m->sent[pg])
		m->sent[pg] = xcalloc(SENT_PAGE, 1);
	uint8_t *sent = &m->sent[pg][i % SENT_PAGE];
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
packet(struct machine *m, int64_t ts)
{
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
	p = pb_put_varint(p, m->id + 1);
	if (m->id) {
		p = pb_put_varint(p, PKT_MACHINE_ID << 3 | PB_VARINT);
		p = pb_put_varint(p, m->id);
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
machine_start(struct machine *m)
{
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

/* The machine of a host (and boot: the offset between its clocks), created when new. */
static struct machine *
machine_get(const char *host, bool clock, int64_t mono, int64_t real)
{
	for (size_t i = 0; i < g.nmachines; i++) {
		struct machine *m = g.machines[i];
		int64_t d = (int64_t)((uint64_t)real - (uint64_t)mono - (uint64_t)m->real +
		                      (uint64_t)m->mono);
		if (strcmp(m->host, host) == 0 && m->clock == clock &&
		    (!clock || (d > -SAME_BOOT_NS && d < SAME_BOOT_NS)))
			return m;
	}
	struct machine *m = xcalloc(1, sizeof(*m));
	*m = (struct machine){.host = xstrdup(host),
	                      .clock = clock,
	                      .mono = clock ? mono : 0,
	                      .real = clock ? real : 0,
	                      .id = (uint32_t)g.nmachines};
	if (!(g.machines = realloc(g.machines, (g.nmachines + 1) * sizeof(*g.machines))))
		err(CUT_EXIT_FATAL, "out of memory");
	g.machines[g.nmachines++] = m;
	machine_start(m);
	return m;
}

/* ---- tracks ---- */

static uint64_t
hash_key(enum kind kind, const struct machine *m, int64_t pid, int64_t key)
{
	uint64_t h = (uint64_t)kind * 0x9e3779b97f4a7c15u ^
	             (uint64_t)(m ? m->id : 0) * 0x94d049bb133111ebu ^
	             (uint64_t)pid * 0xff51afd7ed558ccdu ^ (uint64_t)key * 0xc4ceb9fe1a85ec53u;
	return h ^ h >> 29;
}

static struct group **
group_slot(enum kind kind, struct machine *m, int64_t pid, int64_t key)
{
	struct group **gp = &g.tab[hash_key(kind, m, pid, key) & (g.ntab - 1)];
	while (*gp &&
	       ((*gp)->kind != kind || (*gp)->m != m || (*gp)->pid != pid || (*gp)->key != key))
		gp = &(*gp)->hnext;
	return gp;
}

static void
tab_grow(void)
{
	size_t n = g.ntab ? 2 * g.ntab : 1024;
	struct group **old = g.tab, *next;
	size_t oldn = g.ntab;
	g.tab = xcalloc(n, sizeof(*g.tab));
	g.ntab = n;
	for (size_t i = 0; i < oldn; i++)
		for (struct group *x = old[i]; x; x = next) {
			next = x->hnext;
			struct group **gp =
			    &g.tab[hash_key(x->kind, x->m, x->pid, x->key) & (n - 1)];
			x->hnext = *gp;
			*gp = x;
		}
	free(old);
}

static void describe(struct group *x);

/* The group of this kind, created (and its track described) when absent; parent and value
 * (a stream's handle) are used only then. Processes, threads and the interrupts come with the
 * groups that need them. */
static struct group *
group_get(enum kind kind, struct machine *m, int64_t pid, int64_t key, struct group *parent,
          int64_t value)
{
	if (g.ngroups >= g.ntab)
		tab_grow();
	struct group **gp = group_slot(kind, m, pid, key), *x = *gp;
	if (x)
		return x;
	x = *gp = xcalloc(1, sizeof(*x));
	*x = (struct group){.kind = kind,
	                    .m = m,
	                    .pid = pid,
	                    .key = key,
	                    .rank = kind == DEVICE && pid >= 0 ? key : -1,
	                    .value = value,
	                    .parent = parent};
	g.ngroups++;
	if (kind == ALLOC || kind == DEVREF || kind == SNAME)
		return x;
	x->uuid = ++g.uuids;
	if ((kind == DEVICE && pid < 0) || kind == STREAM)
		return x; /* described once its device record is read; by stream_of */
	if (!parent && (kind == THREAD || kind == ASYNC || (kind == DEVICE && pid >= 0)))
		x->parent = group_get(PROCESS, m, pid, 0, NULL, 0);
	else if (!parent && kind == OFFCPU)
		x->parent = group_get(THREAD, m, pid, key, NULL, 0);
	else if (!parent && kind == IRQCPU)
		x->parent = group_get(IRQS, m, 0, 0, NULL, 0);
	/* A process keeps a Linux pid, and its threads their tids: trace processor keys them by
	 * machine, pid and tid. A thread of a process with a made-up pid gets one too, or it
	 * would be taken for the thread of that tid in the process of the tid's pid, and so does
	 * one whose tid a thread of another process of its machine kept (a trace made by hand). */
	if (kind == PROCESS) {
		x->out = pid > 0 && pid < SYNTH_ID ? pid : SYNTH_ID + g.nsynth++;
	} else if (kind == THREAD) {
		bool keep = x->parent->out == pid && key > 0 && key < SYNTH_ID;
		if (keep) {
			bool isnew;
			size_t i = idmap_put2(g.tids, (int64_t)m->id, key, &isnew);
			if (isnew) {
				if (!(g.tid_owner =
				          realloc(g.tid_owner, (i + 1) * sizeof(*g.tid_owner))))
					err(CUT_EXIT_FATAL, "out of memory");
				g.tid_owner[i] = pid;
			}
			keep = g.tid_owner[i] == pid;
		}
		x->out = keep ? key : SYNTH_ID + g.nsynth++;
	}
	describe(x);
	return x;
}

static void
group_drop(struct group *x)
{
	struct group **gp = group_slot(x->kind, x->m, x->pid, x->key);
	*gp = x->hnext;
	g.ngroups--;
	free(x);
}

/* A track's name, for the kinds the viewer does not name from a process or thread, appended
 * to b: whole, however long its parts (two names cut to one length could read the same). */
static const char *
track_name(const struct group *x, struct cut_buf *b)
{
	switch (x->kind) {
	case OFFCPU: buf_addf(b, "off-CPU (tid %lld)", (long long)x->key); break;
	case DEVICE:
		buf_addf(b, "GPU %lld%s%s%s%s%s", (long long)x->rank, x->name ? ": " : "",
		         x->name ? x->name : "", x->cmdline ? " (" : "",
		         x->cmdline ? x->cmdline : "", x->cmdline ? ")" : "");
		break;
	case STREAM:
		if (x->parent->pid < 0) /* a GPU shared by processes */
			buf_addf(b, "pid %lld ", (long long)x->pid);
		if (x->nostream)
			buf_adds(b, "no stream");
		else if (x->nvtx)
			buf_addf(b, "%s (stream 0x%llx)", x->nvtx, (unsigned long long)x->value);
		else
			buf_addf(b, "stream 0x%llx", (unsigned long long)x->value);
		break;
	case IRQS: buf_adds(b, "interrupts"); break;
	case ASYNC:
		if (x->key < 0)
			buf_adds(b, "NVTX");
		else
			buf_addf(b, "NVTX: %s", strtab_key(g.strs, (size_t)x->key));
		break;
	case IRQCPU:
		if (x->key < 0)
			buf_adds(b, "CPU unknown");
		else
			buf_addf(b, "CPU %lld", (long long)x->key);
		break;
	case THREAD: buf_addf(b, "tid %lld", (long long)x->key); break;
	default: buf_addf(b, "pid %lld", (long long)x->pid);
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

/* Writes x's TrackDescriptor; again after a rename (a later one wins). The processes of a
 * distributed job are ordered by rank, which the root track (uuid 0) declares once. */
static void
describe(struct group *x)
{
	struct cut_buf *name = &g.name;
	size_t at, d, p;
	buf_reset(name);
	if (x->kind == PROCESS && x->rank >= 0 && !x->m->ranked) {
		at = packet(x->m, -1);
		d = pb_nest(&g.out, PKT_TRACK_DESCRIPTOR);
		pb_field(&g.out, TRACK_UUID, 0);
		pb_field(&g.out, TRACK_PROCESS_ORDERING, PROCESS_ORDERING_EXPLICIT);
		pb_nest_end(&g.out, d);
		packet_end(at);
		x->m->ranked = true;
	}
	at = packet(x->m, -1);
	d = pb_nest(&g.out, PKT_TRACK_DESCRIPTOR);
	pb_field(&g.out, TRACK_UUID, x->uuid);
	switch (x->kind) {
	case PROCESS:
		p = pb_nest(&g.out, TRACK_PROCESS);
		pb_field(&g.out, PROCESS_PID, (uint64_t)x->out);
		if (x->cmdline)
			pb_string(&g.out, PROCESS_CMDLINE, x->cmdline);
		if (x->rank >= 0)
			buf_addf(name, "rank %lld%s%s%s", (long long)x->rank,
			         *x->m->host ? " (" : "", x->m->host, *x->m->host ? ")" : "");
		else if (x->name)
			buf_adds(name, x->name);
		if (x->out != x->pid) /* a made-up pid: the real one in the name */
			real_id(name, "pid", x->pid);
		if (name->len || x->rank >= 0 || x->name)
			pb_string(&g.out, PROCESS_NAME, name->len ? name->s : "");
		pb_nest_end(&g.out, p);
		if (x->rank >= 0)
			pb_field(&g.out, TRACK_ORDER_RANK, (uint64_t)(int32_t)x->rank);
		break;
	case THREAD:
		p = pb_nest(&g.out, TRACK_THREAD);
		pb_field(&g.out, THREAD_PID, (uint64_t)x->parent->out);
		pb_field(&g.out, THREAD_TID, (uint64_t)x->out);
		if (x->nvtx || x->name)
			buf_adds(name, x->nvtx ? x->nvtx : x->name);
		if (x->out != x->key)
			real_id(name, "tid", x->key);
		if (name->len || x->nvtx || x->name)
			pb_string(&g.out, THREAD_NAME, name->len ? name->s : "");
		pb_nest_end(&g.out, p);
		break;
	default:
		pb_string(&g.out, TRACK_NAME, track_name(x, name));
		if (x->parent)
			pb_field(&g.out, TRACK_PARENT, x->parent->uuid);
		pb_field(&g.out, TRACK_MERGE, SIBLING_MERGE_NONE);
	}
	pb_nest_end(&g.out, d);
	packet_end(at);
}

/* A track of its own under parent: a group's overlap lane, or a counter. */
static uint64_t
child_track(struct machine *m, uint64_t parent, const char *name, int unit)
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

/* The value of x's counter at ts: a process's device memory, a GPU's work in flight. */
static void
counter(struct group *x, int64_t ts)
{
	char name[64];
	if (!x->counter) {
		if (x->kind == PROCESS) {
			x->counter = child_track(x->m, x->uuid, "device memory", UNIT_SIZE_BYTES);
		} else {
			snprintf(name, sizeof(name), "GPU %lld busy", (long long)x->rank);
			x->counter = child_track(x->m, x->uuid, name, UNIT_COUNT);
		}
	}
	size_t at = packet(x->m, ts), e = pb_nest(&g.out, PKT_TRACK_EVENT);
	pb_field(&g.out, EVENT_TYPE, TYPE_COUNTER);
	pb_field(&g.out, EVENT_TRACK_UUID, x->counter);
	pb_field(&g.out, EVENT_COUNTER_VALUE, (uint64_t)x->value);
	pb_nest_end(&g.out, e);
	packet_end(at);
}

/* ---- slices: lanes, and the ends still to write in time order ---- */

static bool
heap_less(const struct hent *a, const struct hent *b)
{
	return a->end < b->end || (a->end == b->end && a->depth > b->depth);
}

static void
ends_push(struct hent h)
{
	if (g.nheap == g.heapcap) {
		g.heapcap = g.heapcap ? 2 * g.heapcap : 1024;
		if (!(g.heap = realloc(g.heap, g.heapcap * sizeof(*g.heap))))
			err(CUT_EXIT_FATAL, "out of memory");
	}
	size_t i = g.nheap++;
	for (; i && heap_less(&h, &g.heap[(i - 1) / 2]); i = (i - 1) / 2)
		g.heap[i] = g.heap[(i - 1) / 2];
	g.heap[i] = h;
}

static struct hent
ends_pop(void)
{
	struct hent top = g.heap[0], last = g.heap[--g.nheap];
	size_t i = 0, c;
	while ((c = 2 * i + 1) < g.nheap) {
		if (c + 1 < g.nheap && heap_less(&g.heap[c + 1], &g.heap[c]))
			c++;
		if (!heap_less(&g.heap[c], &last))
			break;
		g.heap[i] = g.heap[c];
		i = c;
	}
	g.heap[i] = last;
	return top;
}

/* Ends every slice that ends by ts, innermost first: the END packets, the flows of API calls
 * to their ioctls, the GPU busy counters. */
static void
drain(int64_t ts)
{
	while (g.nheap && g.heap[0].end <= ts) {
		struct hent h = ends_pop();
		struct lane *l = h.l;
		struct open *o = &l->stack[h.depth];
		size_t at = packet(l->g->m, o->end), e = pb_nest(&g.out, PKT_TRACK_EVENT);
		pb_field(&g.out, EVENT_TYPE, TYPE_SLICE_END);
		pb_field(&g.out, EVENT_TRACK_UUID, l->uuid);
		for (uint32_t k = 1; k <= o->nflow; k++)
			pb_fixed64(&g.out, EVENT_TERMINATING_FLOW_IDS, o->serial << FLOW_SHIFT | k);
		pb_nest_end(&g.out, e);
		packet_end(at);
		if (o->busy) {
			o->busy->value--;
			counter(o->busy, o->end);
		}
		l->depth = h.depth;
		if (o->end > l->floor)
			l->floor = o->end;
	}
}

static struct lane *
lane_new(struct group *x)
{
	struct lane *l = xcalloc(1, sizeof(*l));
	*l = (struct lane){.last = INT64_MIN, .floor = INT64_MIN, .g = x};
	if (x->nlanes++ == 0) {
		l->uuid = x->uuid;
	} else {
		buf_reset(&g.name);
		track_name(x, &g.name);
		buf_addf(&g.name, " overlap %zu", x->nlanes - 1);
		l->uuid = child_track(x->m, x->uuid, g.name.s, 0);
	}
	return l;
}

/* The spill lanes of a group: a min-heap by the end of the slice each holds. */
static void
spill_fix(struct group *x, size_t i)
{
	struct lane **h = x->spill, *l = h[i];
	for (size_t c; (c = 2 * i + 1) < x->nspill; i = c) {
		if (c + 1 < x->nspill && h[c + 1]->until < h[c]->until)
			c++;
		if (l->until <= h[c]->until)
			break;
		h[i] = h[c];
	}
	h[i] = l;
}

static void
spill_push(struct group *x, struct lane *l)
{
	if (x->nspill == x->spillcap) {
		x->spillcap = x->spillcap ? 2 * x->spillcap : 16;
		if (!(x->spill = realloc(x->spill, x->spillcap * sizeof(*x->spill))))
			err(CUT_EXIT_FATAL, "out of memory");
	}
	size_t i = x->nspill++;
	for (; i && l->until < x->spill[(i - 1) / 2]->until; i = (i - 1) / 2)
		x->spill[i] = x->spill[(i - 1) / 2];
	x->spill[i] = l;
}

/* The first of x's first SCAN_LANES lanes where [ts, end] nests, given what is open on each; a
 * lane refuses a slice that starts before its latest one or before the end of one it closed,
 * so unsorted input costs lanes, never nesting. Past those lanes, slices that overlap without
 * nesting (GPU work queued deep) take the spill lane free the longest, or a new one, one slice
 * at a time: a heap keeps that linear in the lanes. */
#define SCAN_LANES 16
static struct lane *
place(struct group *x, int64_t ts, int64_t end)
{
	struct lane **lp = &x->lanes, *l;
	for (int n = 0; n < SCAN_LANES; n++, lp = &l->next) {
		if (!(l = *lp))
			l = *lp = lane_new(x);
		if (ts < l->last || ts < l->floor)
			continue;
		if (l->depth && end > l->stack[l->depth - 1].end)
			continue;
		return l;
	}
	/* every slice that ended by ts was drained: a spill lane past its slice's end is empty */
	if (x->nspill && x->spill[0]->until <= ts && x->spill[0]->last <= ts) {
		l = x->spill[0];
		l->until = end;
		spill_fix(x, 0);
		return l;
	}
	l = lane_new(x);
	l->next = *lp;
	*lp = l;
	l->until = end;
	spill_push(x, l);
	return l;
}

static void
push(struct lane *l, const struct open *o)
{
	if (l->depth == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 8;
		if (!(l->stack = realloc(l->stack, l->cap * sizeof(*l->stack))))
			err(CUT_EXIT_FATAL, "out of memory");
	}
	l->stack[l->depth] = *o;
	ends_push((struct hent){o->end, l, l->depth});
	l->depth++;
}

/* An event of thread group x as the tracker of open calls sees it: its process by its track,
 * which tells machines apart (two machines' pids may be equal), so without host or rank. */
static struct cut_event
on_thread(const struct group *x, const struct cut_event *ev)
{
	struct cut_event e = *ev;
	e.pid = (int64_t)x->parent->uuid;
	e.host = NULL;
	e.has &= ~(unsigned)CUT_HAS_RANK;
	return e;
}

/* The open API call an ioctl of thread group x belongs to, by the rule every tool follows
 * (cut_calls_parent): its parent id when cutmerge wrote one, else the latest started call
 * of the thread open at its start. Linear in the calls open, however many ioctls. */
static struct open *
enclosing_api(struct group *x, const struct cut_event *ev)
{
	struct cut_event e = on_thread(x, ev);
	struct cut_span *s = cut_calls_parent(g.calls, &e);
	if (!s || s->layer != CUT_API)
		return NULL;
	struct lane *l = (struct lane *)(uintptr_t)s->user[0];
	size_t d = (size_t)s->user[1];
	/* (still the call's entry: unsorted input could have closed it and opened another) */
	if (d >= l->depth || !l->stack[d].serial || l->stack[d].ts != s->ts ||
	    l->stack[d].end != s->end)
		return NULL;
	return &l->stack[d];
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
members(struct cut_pb *b, struct machine *m, const char *p, bool envelope, int64_t *corr)
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
			g.json.ctx = m;
			p = pb_json_value(&g.json, b, p);
			pb_nest_end(b, at);
		}
		p = pb_json_ws(p);
		if (*p == ',')
			p = pb_json_ws(p + 1);
	}
}

static void
int_annotation(struct cut_pb *b, struct machine *m, const char *name, int64_t v)
{
	size_t at = pb_nest(b, EVENT_ANNOTATIONS);
	pb_field(b, ANN_NAME_IID, iid(m, name, strlen(name), SENT_ANNOTATION));
	pb_field(b, ANN_INT, (uint64_t)v);
	pb_nest_end(b, at);
}

/* The event's members other than the envelope as annotations in g.ann; returns whether
 * args has an integer "corr", and it through corr. */
static bool
annotations(struct machine *m, const struct cut_event *ev, int64_t *corr)
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
	if (ev->extra)
		members(b, m, ev->extra, true, NULL);
	return *corr != INT64_MIN;
}

/* ---- events ---- */

/* Device memory allocated per process: successful allocations minus frees, matched by dptr, as
 * cutchrome counts it. */
static void
memory(struct machine *m, const struct cut_event *ev)
{
	int64_t dptr, bytes;
	bool alloc = strncmp(ev->name, "cuMemAlloc", 10) == 0;
	if ((!alloc && strncmp(ev->name, "cuMemFree", 9) != 0) || strstr(ev->name, "Host") ||
	    ((ev->has & CUT_HAS_RET) && ev->ret != 0) || cut_args_int(ev->args, "dptr", &dptr))
		return;
	struct group *p = group_get(PROCESS, m, ev->pid, 0, NULL, 0), *a;
	if (g.ngroups >= g.ntab)
		tab_grow();
	if ((a = *group_slot(ALLOC, m, ev->pid,
	                     dptr))) { /* a free, or a reuse whose free was lost */
		p->value = (int64_t)((uint64_t)p->value - (uint64_t)a->value);
		group_drop(a);
	}
	if (alloc && cut_args_int(ev->args, "bytes", &bytes) == 0) {
		group_get(ALLOC, m, ev->pid, dptr, NULL, bytes);
		p->value = (int64_t)((uint64_t)p->value + (uint64_t)bytes);
	} else if (!a) {
		return;
	}
	counter(p, alloc ? cut_event_end(ev) : ev->ts);
}

/* One event as a slice (a span: BEGIN now, END when drained) or an instant on a lane of x;
 * busy: the GPU device of GPU work. */
static void
slice(struct machine *m, struct group *x, const struct cut_event *ev, struct group *busy)
{
	bool span = ev->has & CUT_HAS_DUR;
	int64_t end = cut_event_end(ev), corr;
	struct lane *l = place(x, ev->ts, end);
	bool has_corr = annotations(m, ev, &corr);
	const char *c = cut_event_category(ev);
	uint64_t name = iid(m, ev->name, strlen(ev->name), SENT_NAME);
	uint64_t cat = iid(m, c, strlen(c), SENT_CATEGORY);
	struct open o = {ev->ts, end, ev->has & CUT_HAS_ID ? ev->id : -1, 0, 0, NULL}, *a;
	int layer = (int)ev->layer;

	size_t at = packet(m, ev->ts), e = pb_nest(&g.out, PKT_TRACK_EVENT);
	pb_field(&g.out, EVENT_TYPE, span ? TYPE_SLICE_BEGIN : TYPE_INSTANT);
	pb_field(&g.out, EVENT_TRACK_UUID, l->uuid);
	pb_field(&g.out, EVENT_CATEGORY_IIDS, cat);
	pb_field(&g.out, EVENT_NAME_IID, name);
	pb_append(&g.out, &g.ann);
	if (layer == g.ioctl_layer && x->kind == THREAD && (a = enclosing_api(x, ev)) &&
	    a->nflow + 1 < 1u << FLOW_SHIFT)
		pb_fixed64(&g.out, EVENT_FLOW_IDS, a->serial << FLOW_SHIFT | ++a->nflow);
	if (has_corr && (layer == g.api_layer || layer == g.gpu_layer))
		pb_fixed64(&g.out, EVENT_FLOW_IDS,
		           GPU_FLOW | hash_key(ALLOC, m, ev->pid, corr) >> 1);
	pb_nest_end(&g.out, e);
	packet_end(at);

	l->last = ev->ts;
	if (span) {
		if (layer == g.api_layer)
			o.serial = ++g.serials;
		if (busy) {
			o.busy = busy;
			busy->value++;
			counter(busy, ev->ts);
		}
		push(l, &o);
		struct cut_event te;
		struct cut_span *cs;
		if (layer == g.api_layer && x->kind == THREAD &&
		    (cs = cut_calls_open(g.calls, (te = on_thread(x, ev), &te)))) {
			cs->user[0] = (uint64_t)(uintptr_t)l;
			cs->user[1] = l->depth - 1;
		}
	}
	if (layer == g.api_layer)
		memory(m, ev);
}

/* A marker where the capture lost events, on the process of the writer. */
static void
lost(struct input *in, struct machine *m, const struct cut_event *ev)
{
	char name[64];
	int64_t n = 0, corr;
	struct group *p = group_get(PROCESS, m, ev->pid, 0, NULL, 0);
	if (!p->name && in->tool && ev->pid == in->writer) {
		p->name = xstrdup(in->tool);
		describe(p);
	}
	cut_args_int(ev->args, "count", &n);
	snprintf(name, sizeof(name), "lost %lld events", (long long)n);
	annotations(m, ev, &corr);
	uint64_t name_iid = iid(m, name, strlen(name), SENT_NAME);
	uint64_t cat = iid(m, "lost", 4, SENT_CATEGORY);
	size_t at = packet(m, ev->ts), e = pb_nest(&g.out, PKT_TRACK_EVENT);
	pb_field(&g.out, EVENT_TYPE, TYPE_INSTANT);
	pb_field(&g.out, EVENT_TRACK_UUID, p->uuid);
	pb_field(&g.out, EVENT_CATEGORY_IIDS, cat);
	pb_field(&g.out, EVENT_NAME_IID, name_iid);
	pb_append(&g.out, &g.ann);
	pb_nest_end(&g.out, e);
	packet_end(at);
}

/* The string value of key in args, whole (a copy to free), or NULL when absent or not a
 * string: names and hosts are never cut to a buffer, so two long ones stay apart. */
static char *
args_strdup(const char *args, const char *key)
{
	char small[256], *s;
	int n = cut_args_str(args, key, small, sizeof(small));
	if (n < 0)
		return NULL;
	if ((size_t)n < sizeof(small))
		return xstrdup(small);
	if (!(s = malloc((size_t)n + 1)))
		err(CUT_EXIT_FATAL, "out of memory");
	cut_args_str(args, key, s, (size_t)n + 1);
	return s;
}

/* Replaces *s with the string value of key in args, when present, not empty and different;
 * returns whether it changed. */
static bool
set_name(char **s, const char *args, const char *key)
{
	char *v = args_strdup(args, key);
	if (!v || !*v || (*s && strcmp(*s, v) == 0)) {
		free(v);
		return false;
	}
	free(*s);
	*s = v;
	return true;
}

/* The GPU of a process's ordinal: the one its device record named by uuid, else its own. */
static struct group *
device_of(struct machine *m, int64_t pid, int64_t ordinal)
{
	if (g.ngroups >= g.ntab)
		tab_grow();
	struct group *r = *group_slot(DEVREF, m, pid, ordinal);
	return r ? r->parent : group_get(DEVICE, m, pid, ordinal, NULL, 0);
}

/* The track of a process's stream on GPU d (has: the work named one), named as NVTX named the
 * stream. */
static struct group *
stream_of(struct machine *m, struct group *d, int64_t pid, bool has, int64_t stream)
{
	/* key: the GPU's track and the handle, by a map (no two share one); work without a
	 * stream apart from any handle */
	int64_t key = (int64_t)idmap_put2(g.streams, has ? (int64_t)d->uuid : -(int64_t)d->uuid,
	                                  has ? stream : 0, NULL);
	if (g.ngroups >= g.ntab)
		tab_grow();
	struct group *x = *group_slot(STREAM, m, pid, key), *n;
	if (x)
		return x;
	x = group_get(STREAM, m, pid, key, d, stream);
	x->nostream = !has;
	if (has) {
		n = group_get(SNAME, m, pid, stream, NULL, 0);
		x->same = n->same;
		n->same = x;
		if (n->nvtx)
			x->nvtx = xstrdup(n->nvtx);
	}
	describe(x);
	return x;
}

/* A stream named through NVTX (a symbol record of kind "stream"): its track, on each GPU the
 * process has used it on so far, is renamed. */
static void
stream_name(struct machine *m, const struct cut_event *ev)
{
	char kind[16];
	int64_t handle;
	if (cut_args_str(ev->args, "kind", kind, sizeof(kind)) < 1 || strcmp(kind, "stream") != 0 ||
	    cut_args_int(ev->args, "handle", &handle))
		return;
	struct group *n = group_get(SNAME, m, ev->pid, handle, NULL, 0);
	if (!set_name(&n->nvtx, ev->args, "name"))
		return;
	for (struct group *x = n->same; x; x = x->same)
		if (!x->nvtx || strcmp(x->nvtx, n->nvtx) != 0) {
			free(x->nvtx);
			x->nvtx = xstrdup(n->nvtx);
			describe(x);
		}
}

/* Names of processes, threads and GPUs; lost events. */
static void
meta(struct input *in, struct machine *m, const struct cut_event *ev)
{
	struct group *x;
	int64_t v;
	bool changed;
	if (strcmp(ev->name, "process") == 0) {
		x = group_get(PROCESS, m, ev->pid, 0, NULL, 0);
		changed = set_name(&x->name, ev->args, "comm") |
		          set_name(&x->name, ev->args, "name") |
		          set_name(&x->cmdline, ev->args, "cmdline");
		/* its envelope's rank (cutmerge's), else its own */
		if (ev->has & CUT_HAS_RANK)
			v = ev->rank;
		else if (cut_args_int(ev->args, "rank", &v) || v < 0)
			v = x->rank;
		if (v != x->rank)
			x->rank = v, changed = true;
	} else if (strcmp(ev->name, "thread") == 0) {
		x = group_get(THREAD, m, ev->pid, ev->tid, NULL, 0);
		changed =
		    set_name(&x->name, ev->args, "comm") | set_name(&x->nvtx, ev->args, "name");
	} else if (strcmp(ev->name, "device") == 0 && cut_args_int(ev->args, "device", &v) == 0) {
		char *uuid = args_strdup(ev->args, "uuid");
		if (uuid && *uuid) {
			x = group_get(DEVICE, m, -1, (int64_t)strtab_intern(g.gpus, uuid), NULL, 0);
			group_get(DEVREF, m, ev->pid, v, NULL, 0)->parent = x;
			bool isnew = !x->cmdline;
			if (isnew) { /* named by the first process's ordinal */
				x->cmdline = uuid;
				x->rank = v;
			} else {
				free(uuid);
			}
			changed = set_name(&x->name, ev->args, "name") | isnew;
		} else {
			free(uuid);
			x = device_of(m, ev->pid, v);
			changed = set_name(&x->name, ev->args, "name");
		}
	} else if (strcmp(ev->name, "symbol") == 0) {
		stream_name(m, ev);
		return;
	} else {
		if (strcmp(ev->name, "lost") == 0)
			lost(in, m, ev);
		return;
	}
	if (changed)
		describe(x);
}

/* A header: the first of a file says the file's machine by its host and clock. Later ones
 * are other processes' of the same capture (cuthook) or the inputs' of a merge, whose events
 * cutmerge moved onto its own header's clock: they change nothing but the writer. */
static void
header(struct input *in, const struct cut_event *ev)
{
	char *host = args_strdup(ev->args, "host"), tool[64];
	int64_t mono = 0, real = 0;
	const char *clock = cut_args_find(ev->args, "clock");
	bool has_clock = clock && cut_args_int(clock, "monotonic_ns", &mono) == 0 &&
	                 cut_args_int(clock, "realtime_ns", &real) == 0 && mono >= 0 && real >= 0;
	if (!in->m)
		in->m = machine_get(host ? host : "", has_clock, mono, real);
	free(host);
	in->writer = ev->pid;
	free(in->tool);
	in->tool = cut_args_str(ev->args, "tool", tool, sizeof(tool)) > 0 ? xstrdup(tool) : NULL;
}

/* The machine of an event: its file's, or that of the host the envelope names (a merged trace
 * of several hosts); the envelope's rank goes to the process. */
static struct machine *
machine_of(struct input *in, const struct cut_event *ev)
{
	if (!in->m)
		in->m = machine_get("", false, 0, 0);
	const char *host = ev->host ? ev->host : "";
	int64_t rank = ev->has & CUT_HAS_RANK ? ev->rank : -1;
	struct machine *m = *host && strcmp(host, in->m->host) != 0
	                        ? machine_get(host, in->m->clock, in->m->mono, in->m->real)
	                        : in->m;
	struct group *p;
	if (rank >= 0 && ev->layer != CUT_META &&
	    (p = group_get(PROCESS, m, ev->pid, 0, NULL, 0))->rank != rank) {
		p->rank = rank;
		describe(p);
	}
	return m;
}

/* The track of an NVTX start/end range: such ranges need not nest with the calls of the thread
 * that started them, and may end on another thread, so they go to a child track of the process
 * per NVTX domain, "NVTX: domain". */
static struct group *
nvtx_track(struct machine *m, const struct cut_event *ev)
{
	char *domain = args_strdup(ev->args, "domain");
	int64_t key = -1;
	if (domain && *domain)
		key = (int64_t)intern(domain, strlen(domain));
	free(domain);
	return group_get(ASYNC, m, ev->pid, key, NULL, 0);
}

static void
event(struct input *in, const struct cut_event *ev)
{
	if (ev->layer == CUT_META && strcmp(ev->name, "header") == 0) {
		header(in, ev);
		return;
	}
	struct machine *m = machine_of(in, ev);
	if (ev->layer == CUT_META) {
		meta(in, m, ev);
		return;
	}
	if (ev->ts < in->last && !g.warned_order) {
		warnx("%s:%llu: input not sorted by time: tracks multiply to keep slices nested; "
		      "sort it with cutmerge",
		      cut_reader_path(in->r), (unsigned long long)cut_reader_line(in->r));
		g.warned_order = true;
	}
	if (ev->ts > in->last)
		in->last = ev->ts;
	drain(ev->ts);
	int64_t dev = -1, stream = 0, cpu = -1;
	bool has_stream;
	struct group *d;
	switch (g.place[ev->layer]) {
	case OFFCPU: slice(m, group_get(OFFCPU, m, ev->pid, ev->tid, NULL, 0), ev, NULL); break;
	case IRQCPU:
		cut_args_int(ev->args, "cpu", &cpu);
		slice(m, group_get(IRQCPU, m, 0, cpu, NULL, 0), ev, NULL);
		break;
	case STREAM:
		cut_args_int(ev->args, "device", &dev);
		has_stream = cut_args_int(ev->args, "stream", &stream) == 0;
		d = device_of(m, ev->pid, dev);
		slice(m, stream_of(m, d, ev->pid, has_stream, stream), ev, d);
		break;
	default:
		if ((int)ev->layer == g.nvtx_layer && (ev->has & CUT_HAS_DUR) && ev->cat &&
		    strcmp(ev->cat, "startend") == 0) {
			slice(m, nvtx_track(m, ev), ev, NULL);
			break;
		}
		slice(m, group_get(THREAD, m, ev->pid, ev->tid, NULL, 0), ev, NULL);
	}
}

/* Refuses an input named twice (standard input, or one file under two names), as cutmerge
 * does: the second reading of a pipe would find it empty, that of a file draw its events
 * twice. */
static void
check_inputs(int argc, char *argv[])
{
	struct stat *st = xcalloc((size_t)argc + 1, sizeof(*st));
	bool *known = xcalloc((size_t)argc + 1, sizeof(*known));
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
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
	    {"output", required_argument, NULL, 'o'},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {NULL, 0, NULL, 0},
	};
	const char *path = NULL;
	int ch, status = CUT_EXIT_OK;

	while ((ch = getopt_long(argc, argv, "o:", longopts, NULL)) != -1) {
		switch (ch) {
		case 'o': path = optarg; break;
		case 'h': usage(CUT_EXIT_OK); break;
		case 'V': printf("cutperfetto " CUT_VERSION "\n"); return cut_finish_output(0);
		default: usage(CUT_EXIT_FATAL);
		}
	}
	argc -= optind;
	argv += optind;
	check_inputs(argc, argv);

	if (path) {
		/* A fresh file, renamed into place when complete: never through a link. */
		if (!(g.f = outfile_open(path)) && errno == ELOOP)
			errx(CUT_EXIT_FATAL, "%s: a symbolic link: not followed", cut_esc(path));
		if (!g.f)
			err(CUT_EXIT_FATAL, "%s", cut_esc(path));
		g.path = xstrdup(cut_esc(path)); /* (cut_esc reuses its buffers) */
	} else {
		if (isatty(STDOUT_FILENO))
			errx(CUT_EXIT_FATAL,
			     "will not write a binary trace to a terminal: redirect "
			     "standard output or use -o");
		g.f = stdout;
		g.path = "standard output";
	}
	for (int l = 0; l < CUT_NLAYERS; l++) {
		const char *n = cut_layer_name((enum cut_layer)l);
		g.place[l] = strcmp(n, "sched") == 0 ? OFFCPU
		             : strcmp(n, "gpu") == 0 ? STREAM
		             : strcmp(n, "irq") == 0 ? IRQCPU
		                                     : THREAD;
		if (strcmp(n, "api") == 0)
			g.api_layer = l;
		else if (strcmp(n, "ioctl") == 0)
			g.ioctl_layer = l;
		else if (strcmp(n, "gpu") == 0)
			g.gpu_layer = l;
		else if (strcmp(n, "nvtx") == 0)
			g.nvtx_layer = l;
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
	g.gpus = strtab_new();
	g.streams = idmap_new();
	g.tids = idmap_new();
	g.calls = cut_calls_new(1u << CUT_API);
	tab_grow();

	/* Every input open at once, merged by time as cutchrome does: the files of a job overlap
	 * in time, and a slice's end, a GPU's busy counter, must not be written before the events
	 * of another file that come earlier. */
	int n = argc ? argc : 1;
	struct input *in = xcalloc((size_t)n, sizeof(*in));
	struct cut_heap heads;
	struct head h;
	heap_init(&heads, sizeof(struct head));
	for (int i = 0; i < n; i++) {
		in[i].last = INT64_MIN;
		if (!(in[i].r = cut_reader_open(argc ? argv[i] : NULL, 0))) {
			warn("%s", argc ? cut_esc(argv[i]) : "<stdin>");
			status = CUT_EXIT_LOST;
			continue;
		}
		advance(&in[i], &heads, i, &status);
	}
	while (heap_pop(&heads, &h)) {
		struct input *src = &in[h.i];
		event(src, &src->ev);
		if (!advance(src, &heads, h.i, &status) && src->stopped)
			break;
	}
	for (int i = 0; i < n; i++) {
		if (in[i].r)
			finish(&in[i], &status);
		free(in[i].tool);
	}
	free(in);
	heap_free(&heads);
	drain(INT64_MAX);
	flush();
	if (path && outfile_commit(g.f))
		err(CUT_EXIT_FATAL, "write error on %s", g.path);
	return path ? status : cut_finish_output(status);
}
