/* legacy.c: joins the B/E pairs of older bpftrace- and LD_PRELOAD-style traces into spans. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "legacy.h"

struct pending {
	bool has_key; /* op_id pairs begin and end exactly; without it, name and thread do */
	int64_t key;
	int64_t pid, tid, ts;
	enum cut_layer layer;
	char *name;
	char *args;
	uint64_t line;
};

struct legacy {
	struct pending *v;
	size_t n, cap;
	struct pending out; /* strings of the event returned last, freed on the next call */
};

struct legacy *
legacy_new(void)
{
	return calloc(1, sizeof(struct legacy));
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
	for (size_t i = 0; i < lg->n; i++)
		pending_free(&lg->v[i]);
	pending_free(&lg->out);
	free(lg->v);
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
	size_t i = lg->n;
	while (i > 0 && !matches(&lg->v[i - 1], e))
		i--;
	if (i == 0) {
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
	struct pending b = lg->v[i - 1];
	memmove(&lg->v[i - 1], &lg->v[i], (lg->n - i) * sizeof(*lg->v));
	lg->n--;
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
		if (lg->n == lg->cap) {
			size_t cap = lg->cap ? lg->cap * 2 : 16;
			struct pending *v = realloc(lg->v, cap * sizeof(*v));
			if (!v)
				return pending_free(&pd), lfail(why, wl, "out of memory");
			lg->v = v;
			lg->cap = cap;
		}
		lg->v[lg->n++] = pd;
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
	struct pending b = lg->v[0];
	memmove(&lg->v[0], &lg->v[1], (lg->n - 1) * sizeof(*lg->v));
	lg->n--;
	*line = b.line;
	emit(lg, &b, ev);
	return CUT_PARSE_EVENT;
}
