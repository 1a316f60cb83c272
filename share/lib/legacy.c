/* legacy.c: joins the B/E pairs of older bpftrace- and LD_PRELOAD-style traces into spans. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "legacy.h"

/* A begin waiting for its end. Every one is on the list of begins in order (the oldest is
 * flushed first) and in the index by thread and name; one with an op_id also in the index by
 * op_id. An index is a table of chains, newest first, so that an end finds the latest begin
 * it matches at the head of its chain whatever the number waiting. */
struct pending {
	bool has_key; /* op_id pairs begin and end exactly; without it, name and thread do */
	int64_t key;
	int64_t pid, tid, ts;
	enum cut_layer layer;
	char *name;
	char *args;
	uint64_t line;
	struct pending *older, *newer; /* the list of begins */
	struct pending *link[2][2];    /* [index][0: newer, 1: older] in its chain */
	size_t bucket[2];              /* its chain in each index */
};

enum { BY_NAME, BY_KEY };

struct legacy {
	struct pending *oldest, *newest;
	size_t n;
	struct pending **chain[2]; /* the two indices: heads of the chains */
	size_t nchains;            /* a power of two, at least n */
	uint64_t seed;             /* the hash's: begins are input, their chains must stay short */
	struct pending out;        /* strings of the event returned last, freed on the next call */
};

struct legacy *
legacy_new(void)
{
	struct legacy *lg = calloc(1, sizeof(struct legacy));
	if (lg && getrandom(&lg->seed, sizeof(lg->seed), GRND_NONBLOCK) != sizeof(lg->seed))
		lg->seed = (uint64_t)(uintptr_t)lg * 0x9e3779b97f4a7c15ULL;
	return lg;
}

static uint64_t
mix(uint64_t h)
{
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebULL;
	return h ^ (h >> 31);
}

/* The chain of pd in index ix (by thread and name, or by op_id). */
static size_t
chain_of(const struct legacy *lg, const struct pending *pd, int ix)
{
	uint64_t h = lg->seed;
	if (ix == BY_KEY)
		h = mix(h ^ (uint64_t)pd->key);
	else {
		h = mix(h ^ (uint64_t)pd->pid) ^ mix((uint64_t)pd->tid + 0x9e3779b97f4a7c15ULL);
		for (const unsigned char *c = (const unsigned char *)pd->name; *c; c++)
			h = (h ^ *c) * 0x100000001b3ULL;
		h = mix(h);
	}
	return (size_t)h & (lg->nchains - 1);
}

static void
chain_add(struct legacy *lg, struct pending *pd, int ix)
{
	size_t b = pd->bucket[ix] = chain_of(lg, pd, ix);
	pd->link[ix][0] = NULL;
	pd->link[ix][1] = lg->chain[ix][b];
	if (lg->chain[ix][b])
		lg->chain[ix][b]->link[ix][0] = pd;
	lg->chain[ix][b] = pd;
}

static void
chain_remove(struct legacy *lg, struct pending *pd, int ix)
{
	struct pending *newer = pd->link[ix][0], *older = pd->link[ix][1];
	if (newer)
		newer->link[ix][1] = older;
	else
		lg->chain[ix][pd->bucket[ix]] = older;
	if (older)
		older->link[ix][0] = newer;
}

/* Doubles the indices when they hold as many begins as chains. Returns -1 when memory runs
 * out. */
static int
grow_chains(struct legacy *lg)
{
	size_t n = lg->nchains ? lg->nchains * 2 : 64;
	struct pending **a = calloc(n, sizeof(*a)), **b = calloc(n, sizeof(*b));
	if (!a || !b)
		return free(a), free(b), -1;
	free(lg->chain[BY_NAME]);
	free(lg->chain[BY_KEY]);
	lg->chain[BY_NAME] = a;
	lg->chain[BY_KEY] = b;
	lg->nchains = n;
	/* oldest first, each at the head of its chain: the chains stay newest first */
	for (struct pending *pd = lg->oldest; pd; pd = pd->newer) {
		chain_add(lg, pd, BY_NAME);
		if (pd->has_key)
			chain_add(lg, pd, BY_KEY);
	}
	return 0;
}

/* Takes pd off the list and the indices; the caller frees it. */
static void
unlink_pending(struct legacy *lg, struct pending *pd)
{
	if (pd->older)
		pd->older->newer = pd->newer;
	else
		lg->oldest = pd->newer;
	if (pd->newer)
		pd->newer->older = pd->older;
	else
		lg->newest = pd->older;
	chain_remove(lg, pd, BY_NAME);
	if (pd->has_key)
		chain_remove(lg, pd, BY_KEY);
	lg->n--;
}

static void
pending_free(struct pending *pd)
{
	free(pd->name);
	free(pd->args);
	pd->name = pd->args = NULL;
}

void
legacy_free(struct legacy *lg)
{
	if (!lg)
		return;
	for (struct pending *pd = lg->oldest, *next; pd; pd = next) {
		next = pd->newer;
		pending_free(pd);
		free(pd);
	}
	pending_free(&lg->out);
	free(lg->chain[BY_NAME]);
	free(lg->chain[BY_KEY]);
	free(lg);
}

static int
lfail(char *why, size_t wl, const char *msg)
{
	snprintf(why, wl, "%s", msg);
	return CUT_PARSE_ERROR;
}

/* Milliseconds (integer or real) to nanoseconds; -1 when not a usable time. */
static int64_t
ms_to_ns(json_t *j)
{
	if (!json_is_number(j))
		return -1;
	double ms = json_number_value(j);
	if (!isfinite(ms) || ms < 0 || ms > 9.2e12)
		return -1;
	return llround(ms * 1e6);
}

static int
layer_of_type(json_t *type)
{
	static const struct {
		const char *type;
		enum cut_layer layer;
	} map[] = {
	    {"userspace", CUT_API}, {"user", CUT_API},      {"api", CUT_API},
	    {"cuda", CUT_API},      {"kernel", CUT_KERNEL}, {"kprobe", CUT_KERNEL},
	    {"ioctl", CUT_IOCTL},   {"syscall", CUT_IOCTL}, {"irq", CUT_IRQ},
	    {"sched", CUT_SCHED},   {"gpu", CUT_GPU},
	};
	if (!type)
		return CUT_API; /* the LD_PRELOAD style has no type: all driver API calls */
	if (!json_is_string(type))
		return -1;
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (strcmp(json_string_value(type), map[i].type) == 0)
			return (int)map[i].layer;
	return -1;
}

static int64_t
int_or(json_t *o, const char *key, int64_t dflt)
{
	json_t *j = json_object_get(o, key);
	return json_is_integer(j) ? json_integer_value(j) : dflt;
}

static char *
dump_args(json_t *o)
{
	json_t *a = json_object_get(o, "details");
	if (!a)
		a = json_object_get(o, "args");
	return json_is_object(a) ? json_dumps(a, JSON_COMPACT) : NULL;
}

/* Reads the fields both halves share into pd (name and args are newly allocated). */
static int
read_record(json_t *o, uint64_t line, struct pending *pd, char *why, size_t wl)
{
	memset(pd, 0, sizeof(*pd));
	json_t *name = json_object_get(o, "name");
	json_t *key = json_object_get(o, "op_id");
	int layer = layer_of_type(json_object_get(o, "type"));
	if (!json_is_string(name) || !*json_string_value(name))
		return lfail(why, wl, "legacy record without \"name\"");
	if (layer < 0)
		return lfail(why, wl, "legacy record with unknown \"type\"");
	if ((pd->ts = ms_to_ns(json_object_get(o, "ts"))) < 0)
		return lfail(why, wl, "legacy record without a usable \"ts\" (milliseconds)");
	pd->layer = (enum cut_layer)layer;
	pd->pid = int_or(o, "pid", 0);
	pd->tid = int_or(o, "tid", pd->pid);
	pd->has_key = json_is_integer(key);
	pd->key = pd->has_key ? json_integer_value(key) : 0;
	pd->line = line;
	if (!(pd->name = strdup(json_string_value(name))))
		return lfail(why, wl, "out of memory");
	pd->args = dump_args(o);
	return 0;
}

static bool
matches(const struct pending *b, const struct pending *e)
{
	if (e->has_key)
		return b->has_key && b->key == e->key;
	return b->pid == e->pid && b->tid == e->tid && strcmp(b->name, e->name) == 0;
}

/* Fills ev from pd, which then owns the strings until the next call. */
static void
emit(struct legacy *lg, struct pending *pd, struct cut_event *ev)
{
	pending_free(&lg->out);
	lg->out = *pd;
	cut_event_init(ev);
	ev->ts = pd->ts;
	ev->pid = pd->pid;
	ev->tid = pd->tid;
	ev->layer = pd->layer;
	ev->name = lg->out.name;
	ev->args = lg->out.args;
}

static int
duration_ns(json_t *o, int64_t *dur)
{
	json_t *d = json_object_get(o, "duration_us");
	if (!d)
		return 0;
	if (!json_is_number(d) || !isfinite(json_number_value(d)) || json_number_value(d) < 0 ||
	    json_number_value(d) > 9.2e15)
		return -1;
	*dur = llround(json_number_value(d) * 1e3);
	return 1;
}

static void
take_ret(json_t *o, struct cut_event *ev)
{
	static const char *const keys[] = {"ret", "result", "return"};
	for (size_t i = 0; i < 3; i++) {
		json_t *j = json_object_get(o, keys[i]);
		if (json_is_integer(j)) {
			ev->ret = json_integer_value(j);
			ev->has |= CUT_HAS_RET;
			return;
		}
	}
}

static int
import_end(struct legacy *lg, json_t *o, struct pending *e, struct cut_event *ev, char *why,
           size_t wl)
{
	int64_t dur = 0;
	int hasdur = duration_ns(o, &dur);
	if (hasdur < 0)
		return pending_free(e), lfail(why, wl, "legacy \"duration_us\" is not usable");
	/* the latest begin it matches: the first match along its chain */
	struct pending *m = NULL;
	if (lg->n) {
		int ix = e->has_key ? BY_KEY : BY_NAME;
		m = lg->chain[ix][chain_of(lg, e, ix)];
		while (m && !matches(m, e))
			m = m->link[ix][1];
	}
	if (!m) {
		/* No begin: keep what the end alone tells. */
		if (hasdur) {
			e->ts = e->ts >= dur ? e->ts - dur : 0;
			why[0] = '\0';
		} else {
			snprintf(why, wl, "legacy end without begin: kept as an instant");
		}
		emit(lg, e, ev);
		if (hasdur) {
			ev->dur = dur;
			ev->has |= CUT_HAS_DUR;
		}
		take_ret(o, ev);
		return CUT_PARSE_EVENT;
	}
	unlink_pending(lg, m);
	struct pending b = *m;
	free(m);
	if (!hasdur) {
		if (e->ts < b.ts) {
			pending_free(&b);
			pending_free(e);
			return lfail(why, wl, "legacy end before its begin");
		}
		dur = e->ts - b.ts;
	}
	if (!b.args) {
		b.args = e->args;
		e->args = NULL;
	}
	pending_free(e);
	emit(lg, &b, ev);
	ev->dur = dur;
	ev->has |= CUT_HAS_DUR;
	take_ret(o, ev);
	return CUT_PARSE_EVENT;
}

int
legacy_import(struct legacy *lg, json_t *o, uint64_t line, struct cut_event *ev, char *why,
              size_t wl)
{
	json_t *ph = json_object_get(o, "phase");
	const char *phase = json_is_string(ph) ? json_string_value(ph) : "";
	struct pending pd;
	why[0] = '\0';
	if (read_record(o, line, &pd, why, wl) < 0) {
		pending_free(&pd);
		return CUT_PARSE_ERROR;
	}
	if (strcmp(phase, "B") == 0) {
		struct pending *b = malloc(sizeof(*b));
		if (!b || (lg->n + 1 > lg->nchains && grow_chains(lg) < 0))
			return free(b), pending_free(&pd), lfail(why, wl, "out of memory");
		*b = pd;
		b->newer = NULL;
		b->older = lg->newest;
		if (lg->newest)
			lg->newest->newer = b;
		else
			lg->oldest = b;
		lg->newest = b;
		chain_add(lg, b, BY_NAME);
		if (b->has_key)
			chain_add(lg, b, BY_KEY);
		lg->n++;
		return CUT_PARSE_NONE;
	}
	if (strcmp(phase, "E") == 0)
		return import_end(lg, o, &pd, ev, why, wl);
	if (strcmp(phase, "X") == 0 || strcmp(phase, "i") == 0 || strcmp(phase, "I") == 0) {
		int64_t dur = 0;
		int hasdur = duration_ns(o, &dur);
		if (hasdur < 0)
			return pending_free(&pd),
			       lfail(why, wl, "legacy \"duration_us\" is not usable");
		emit(lg, &pd, ev);
		if (hasdur) {
			ev->dur = dur;
			ev->has |= CUT_HAS_DUR;
		}
		take_ret(o, ev);
		return CUT_PARSE_EVENT;
	}
	pending_free(&pd);
	return lfail(why, wl, "legacy record with unknown \"phase\"");
}

int
legacy_flush(struct legacy *lg, struct cut_event *ev, uint64_t *line)
{
	if (lg->n == 0)
		return CUT_PARSE_NONE;
	struct pending *o = lg->oldest;
	unlink_pending(lg, o);
	struct pending b = *o;
	free(o);
	*line = b.line;
	emit(lg, &b, ev);
	return CUT_PARSE_EVENT;
}
