/* meta.c: one table of members per record kind drives the writer, the reader and the fold of
 * several records into one (each member with its merge rule), so they cannot disagree on a key,
 * a type or the order. */
#include <err.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cut.h"
#include "meta.h"

enum type {
	T_STR,    /* const char * */
	T_INT,    /* int64_t */
	T_HEX,    /* int64_t written as a "0x..." string */
	T_BOOL,   /* int64_t 0 or 1 written as false or true */
	T_STRV,   /* const char *const * and a size_t count right after it */
	T_LSTR,   /* const char *[CUT_NLAYERS]: an object of layer names */
	T_LINT,   /* int64_t[CUT_NLAYERS]: an object of layer names */
	T_OBJECT, /* an object of the members sub[0..nsub) */
	T_RAW,    /* const char *: any JSON value's text, written as it is */
};

/* How records of one kind fold into one (cut_meta_fold): cut-events(5), Merging. */
enum merge {
	M_FIRST,    /* the first record's that has it */
	M_SUM,      /* a count: the sum, saturated */
	M_MAX,      /* a bound: the largest */
	M_MIN,      /* sorted: true only where every record says so */
	M_MEDIAN,   /* the median of the records' values, each weighted by the member at weight */
	M_ON,       /* layers: "on" where any record says so, else the first reason */
	M_JOIN,     /* sources: each distinct value once, in the order met, joined by "; "; a
	             * list (T_STRV): each distinct string once, in the order met */
	M_NONE,     /* of one process alone: left out */
	M_COVERAGE, /* libcuthook's coverage audit: merge_coverage() */
};

struct member {
	const char *key;
	enum type type;
	size_t off; /* in struct cut_meta */
	const struct member *sub;
	size_t nsub;
	enum merge merge;
	size_t weight; /* M_MEDIAN: the offset of the count that weights a record's value */
};

#define AT(field) offsetof(struct cut_meta, field)
#define N(a) (sizeof(a) / sizeof((a)[0]))
/* A member at field of struct cut_meta, then its merge rule where not M_FIRST; an object. */
#define MB(k, t, field, ...)                                                                       \
	{                                                                                          \
		.key = k, .type = t, .off = AT(field), __VA_ARGS__                                 \
	}
#define OBJ(k, members)                                                                            \
	{                                                                                          \
		.key = k, .type = T_OBJECT, .sub = members, .nsub = N(members)                     \
	}

static const struct member clock_members[] = {
    MB("monotonic_ns", T_INT, header.monotonic_ns),
    MB("realtime_ns", T_INT, header.realtime_ns),
};
static const struct member header_members[] = {
    MB("schema", T_INT, header.schema, .merge = M_MAX),
    MB("tool", T_STR, header.tool),
    MB("version", T_STR, header.version),
    MB("host", T_STR, header.host),
    MB("kernel", T_STR, header.kernel),
    MB("driver", T_STR, header.driver),
    MB("driver_flavour", T_STR, header.driver_flavour),
    MB("libcuda", T_STR, header.libcuda),
    MB("libcudart", T_STR, header.libcudart),
    OBJ("clock", clock_members),
    MB("sorted", T_BOOL, header.sorted, .merge = M_MIN),
    MB("layers", T_LSTR, header.layers, .merge = M_ON),
    MB("sources", T_LSTR, header.sources, .merge = M_JOIN),
    MB("cmd", T_STRV, header.cmd),
};
static const struct member duration_members[] = {
    MB("tsc", T_INT, trailer.durations_tsc, .merge = M_SUM),
    MB("clock", T_INT, trailer.durations_clock, .merge = M_SUM),
    MB("tsc_hz", T_INT, trailer.durations_tsc_hz, .merge = M_FIRST),
};
static const struct member gpu_members[] = {
    MB("timed", T_INT, trailer.gpu_timed, .merge = M_SUM),
    MB("untimed", T_INT, trailer.gpu_untimed, .merge = M_SUM),
    MB("capture_skips", T_INT, trailer.gpu_capture_skips, .merge = M_SUM),
    MB("starts", T_INT, trailer.gpu_starts, .merge = M_SUM),
    MB("starts_from_call", T_INT, trailer.gpu_starts_from_call, .merge = M_SUM),
    MB("starts_from_twins", T_INT, trailer.gpu_starts_from_twins, .merge = M_SUM),
    MB("starts_late", T_INT, trailer.gpu_starts_late, .merge = M_SUM),
    MB("gap_ns", T_INT, trailer.gpu_gap_ns, .merge = M_MEDIAN, .weight = AT(trailer.gpu_timed)),
    MB("error_ns", T_INT, trailer.gpu_error_ns, .merge = M_MAX),
    MB("error_ns_median", T_INT, trailer.gpu_error_ns_median, .merge = M_MEDIAN,
       .weight = AT(trailer.gpu_timed)),
};
static const struct member trailer_members[] = {
    MB("events", T_INT, trailer.events, .merge = M_SUM),
    MB("lost", T_INT, trailer.lost, .merge = M_SUM),
    MB("layers", T_LINT, trailer.layers, .merge = M_SUM),
    OBJ("durations", duration_members),
    OBJ("gpu", gpu_members),
    MB("own_thread", T_INT, trailer.own_thread, .merge = M_NONE),
    MB("off_thread", T_INT, trailer.off_thread, .merge = M_SUM),
    MB("format_thread", T_INT, trailer.format_thread, .merge = M_NONE),
    MB("runtimes_unrecorded", T_STRV, trailer.runtimes, .merge = M_JOIN),
    MB("coverage", T_RAW, trailer.coverage, .merge = M_COVERAGE),
};
static const struct member lost_members[] = {
    MB("count", T_INT, lost.count),
    MB("reason", T_STR, lost.reason),
    MB("layer", T_STR, lost.layer),
};
static const struct member symbol_members[] = {
    MB("handle", T_HEX, symbol.handle),
    MB("name", T_STR, symbol.name),
    MB("kind", T_STR, symbol.kind),
    MB("via", T_STR, symbol.via),
};
static const struct member task_members[] = {
    MB("comm", T_STR, task.comm),
    MB("name", T_STR, task.name),
    MB("cmdline", T_STR, task.cmdline),
    MB("ppid", T_INT, task.ppid),
    MB("rank", T_INT, task.rank),
    MB("local_rank", T_INT, task.local_rank),
    MB("world_size", T_INT, task.world_size),
};
static const struct member device_members[] = {
    MB("device", T_INT, device.device), MB("name", T_STR, device.name),
    MB("uuid", T_STR, device.uuid),     MB("bus", T_STR, device.bus),
    MB("file", T_STR, device.file),
};

/* Per kind: the record name, its members, and where its "more" is. */
static const struct kind {
	const char *name;
	const struct member *members;
	size_t nmembers, more;
} kinds[] = {
    [CUT_META_HEADER] = {"header", header_members, N(header_members), AT(header.more)},
    [CUT_META_TRAILER] = {"trailer", trailer_members, N(trailer_members), AT(trailer.more)},
    [CUT_META_LOST] = {"lost", lost_members, N(lost_members), AT(lost.more)},
    [CUT_META_SYMBOL] = {"symbol", symbol_members, N(symbol_members), AT(symbol.more)},
    [CUT_META_PROCESS] = {"process", task_members, N(task_members), AT(task.more)},
    [CUT_META_THREAD] = {"thread", task_members, N(task_members), AT(task.more)},
    [CUT_META_DEVICE] = {"device", device_members, N(device_members), AT(device.more)},
};

/* What a read leaves behind: the parsed args its strings point into. */
struct priv {
	json_t *root;
	const char **strv;
	char *more;
	char *raw[4]; /* T_RAW members' text */
	size_t nraw;
};

#define FIELD(m, type, off) ((type *)((char *)(m) + (off)))
/* A T_STRV member's count follows its pointer. */
_Static_assert(offsetof(struct cut_header, ncmd) ==
                   offsetof(struct cut_header, cmd) + sizeof(const char *const *),
               "cmd and ncmd are adjacent");
_Static_assert(offsetof(struct cut_trailer, nruntimes) ==
                   offsetof(struct cut_trailer, runtimes) + sizeof(const char *const *),
               "runtimes and nruntimes are adjacent");

enum cut_meta_kind
cut_meta_kind(const struct cut_event *ev)
{
	if (ev->layer != CUT_META)
		return CUT_META_NONE;
	for (size_t k = 0; k < N(kinds); k++)
		if (strcmp(ev->name, kinds[k].name) == 0)
			return (enum cut_meta_kind)k;
	return CUT_META_OTHER;
}

const char *
cut_meta_name(enum cut_meta_kind k)
{
	return (unsigned)k < N(kinds) ? kinds[k].name : NULL;
}

static void
init_members(struct cut_meta *m, const struct member *mb, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		switch (mb[i].type) {
		case T_STR:
		case T_RAW: *FIELD(m, const char *, mb[i].off) = NULL; break;
		case T_STRV:
			*FIELD(m, const char *const *, mb[i].off) = NULL;
			*FIELD(m, size_t, mb[i].off + sizeof(char **)) = 0;
			break;
		case T_LSTR:
			for (int l = 0; l < CUT_NLAYERS; l++)
				FIELD(m, const char *, mb[i].off)[l] = NULL;
			break;
		case T_LINT:
			for (int l = 0; l < CUT_NLAYERS; l++)
				FIELD(m, int64_t, mb[i].off)[l] = CUT_ABSENT;
			break;
		case T_OBJECT: init_members(m, mb[i].sub, mb[i].nsub); break;
		default: *FIELD(m, int64_t, mb[i].off) = CUT_ABSENT;
		}
	}
}

void
cut_meta_init(struct cut_meta *m, enum cut_meta_kind k)
{
	memset(m, 0, sizeof(*m));
	m->kind = k;
	if ((unsigned)k >= N(kinds))
		return;
	init_members(m, kinds[k].members, kinds[k].nmembers);
	if (k == CUT_META_HEADER)
		m->header.schema = CUT_SCHEMA_VERSION;
}

/* ---- writing ---- */

/* Whether any member of mb[0..n) is present. */
static bool
any_present(const struct cut_meta *m, const struct member *mb, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		switch (mb[i].type) {
		case T_STR:
		case T_RAW:
		case T_STRV:
			if (*FIELD(m, const char *, mb[i].off))
				return true;
			break;
		case T_LSTR:
			for (int l = 0; l < CUT_NLAYERS; l++)
				if (FIELD(m, const char *, mb[i].off)[l])
					return true;
			break;
		case T_LINT:
			for (int l = 0; l < CUT_NLAYERS; l++)
				if (FIELD(m, const int64_t, mb[i].off)[l] != CUT_ABSENT)
					return true;
			break;
		case T_OBJECT:
			if (any_present(m, mb[i].sub, mb[i].nsub))
				return true;
			break;
		default:
			if (*FIELD(m, const int64_t, mb[i].off) != CUT_ABSENT)
				return true;
		}
	}
	return false;
}

static void format_members(struct cut_buf *b, const struct cut_meta *m, const struct member *mb,
                           size_t n);

static void
format_member(struct cut_buf *b, const struct cut_meta *m, const struct member *mb)
{
	buf_addkey(b, mb->key);
	switch (mb->type) {
	case T_STR: {
		const char *s = *FIELD(m, const char *, mb->off);
		buf_addjstr(b, s, strlen(s));
		break;
	}
	case T_RAW: buf_adds(b, *FIELD(m, const char *const, mb->off)); break;
	case T_INT: buf_addi64(b, *FIELD(m, const int64_t, mb->off)); break;
	case T_HEX:
		buf_addf(b, "\"0x%llx\"", (unsigned long long)*FIELD(m, const int64_t, mb->off));
		break;
	case T_BOOL: buf_adds(b, *FIELD(m, const int64_t, mb->off) ? "true" : "false"); break;
	case T_STRV: {
		const char *const *v = *FIELD(m, const char *const *, mb->off);
		size_t nv = *FIELD(m, const size_t, mb->off + sizeof(char **));
		buf_addc(b, '[');
		for (size_t i = 0; i < nv; i++) {
			if (i)
				buf_addc(b, ',');
			buf_addjstr(b, v[i], strlen(v[i]));
		}
		buf_addc(b, ']');
		break;
	}
	case T_LSTR:
	case T_LINT:
		buf_addc(b, '{');
		for (int l = 0; l < CUT_NLAYERS; l++) {
			const char *s =
			    mb->type == T_LSTR ? FIELD(m, const char *, mb->off)[l] : NULL;
			int64_t v = mb->type == T_LINT ? FIELD(m, const int64_t, mb->off)[l] : 0;
			if (mb->type == T_LSTR ? s != NULL : v != CUT_ABSENT) {
				if (mb->type == T_LSTR)
					buf_addkv_str(b, cut_layer_name(l), s);
				else
					buf_addkv_int(b, cut_layer_name(l), v);
			}
		}
		buf_addc(b, '}');
		break;
	case T_OBJECT:
		buf_addc(b, '{');
		format_members(b, m, mb->sub, mb->nsub);
		buf_addc(b, '}');
		break;
	}
}

static void
format_members(struct cut_buf *b, const struct cut_meta *m, const struct member *mb, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (any_present(m, &mb[i], 1))
			format_member(b, m, &mb[i]);
}

void
cut_meta_format(struct cut_buf *out, const struct cut_event *at, const struct cut_meta *m)
{
	if ((unsigned)m->kind >= N(kinds))
		return;
	const struct kind *k = &kinds[m->kind];
	struct cut_event ev;
	cut_event_init(&ev);
	ev.ts = at->ts;
	ev.host = at->host;
	ev.rank = at->rank;
	ev.has = at->has & CUT_HAS_RANK;
	ev.pid = at->pid;
	ev.tid = at->tid;
	ev.layer = CUT_META;
	ev.name = k->name;
	/* args come last in the canonical layout: the envelope without its closing brace */
	cut_event_format(out, &ev);
	out->s[--out->len] = '\0';
	buf_adds(out, ",\"args\":{");
	format_members(out, m, k->members, k->nmembers);
	const char *more = *FIELD(m, const char *const, k->more);
	if (more && *more) {
		if (out->s[out->len - 1] != '{')
			buf_addc(out, ',');
		buf_adds(out, more);
	}
	buf_adds(out, "}}");
}

/* ---- reading ---- */

static const struct member *
find_member(const struct member *mb, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(mb[i].key, key) == 0)
			return &mb[i];
	return NULL;
}

/* A handle: a "0x..." or decimal string, or an integer. */
static bool
read_handle(json_t *j, int64_t *v)
{
	char *end;
	if (json_is_integer(j)) {
		*v = json_integer_value(j);
		return true;
	}
	if (!json_is_string(j) || !*json_string_value(j))
		return false;
	*v = (int64_t)strtoull(json_string_value(j), &end, 0);
	return *end == '\0';
}

static void read_members(struct cut_meta *m, json_t *o, const struct member *mb, size_t n);

static void
read_member(struct cut_meta *m, json_t *j, const struct member *mb)
{
	struct priv *p = m->priv;
	const char *k;
	json_t *v;
	switch (mb->type) {
	case T_STR:
		if (json_is_string(j))
			*FIELD(m, const char *, mb->off) = json_string_value(j);
		break;
	case T_INT:
		if (json_is_integer(j))
			*FIELD(m, int64_t, mb->off) = json_integer_value(j);
		break;
	case T_RAW:
		if (p->nraw < N(p->raw) &&
		    (p->raw[p->nraw] = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY)))
			*FIELD(m, const char *, mb->off) = p->raw[p->nraw++];
		break;
	case T_HEX: read_handle(j, FIELD(m, int64_t, mb->off)); break;
	case T_BOOL:
		if (json_is_boolean(j))
			*FIELD(m, int64_t, mb->off) = json_is_true(j);
		break;
	case T_STRV: {
		size_t n = json_array_size(j), nv = 0;
		if (!json_is_array(j) || !(p->strv = calloc(n + 1, sizeof(*p->strv))))
			break;
		for (size_t i = 0; i < n; i++)
			if (json_is_string(json_array_get(j, i)))
				p->strv[nv++] = json_string_value(json_array_get(j, i));
		*FIELD(m, const char *const *, mb->off) = p->strv;
		*FIELD(m, size_t, mb->off + sizeof(char **)) = nv;
		break;
	}
	case T_LSTR:
	case T_LINT:
		json_object_foreach(j, k, v)
		{
			int l = cut_layer_from_name(k);
			if (l >= 0 && mb->type == T_LSTR && json_is_string(v))
				FIELD(m, const char *, mb->off)[l] = json_string_value(v);
			else if (l >= 0 && mb->type == T_LINT && json_is_integer(v))
				FIELD(m, int64_t, mb->off)[l] = json_integer_value(v);
		}
		break;
	case T_OBJECT:
		if (json_is_object(j))
			read_members(m, j, mb->sub, mb->nsub);
		break;
	}
}

static void
read_members(struct cut_meta *m, json_t *o, const struct member *mb, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		json_t *j = json_object_get(o, mb[i].key);
		if (j)
			read_member(m, j, &mb[i]);
	}
}

/* The members of o the kind does not know, as JSON member text, or NULL. */
static char *
unknown_members(json_t *o, const struct kind *k)
{
	json_t *rest = json_object();
	const char *key;
	json_t *v;
	if (!rest)
		cut_out_of_memory();
	json_object_foreach(o, key, v)
	{
		if (!find_member(k->members, k->nmembers, key))
			json_object_set(rest, key, v);
	}
	char *s = json_object_size(rest) ? json_dumps(rest, JSON_COMPACT) : NULL;
	json_decref(rest);
	if (s) {
		size_t n = strlen(s);
		memmove(s, s + 1, n - 2); /* without the braces */
		s[n - 2] = '\0';
	}
	return s;
}

enum cut_meta_kind
cut_meta_read(const struct cut_event *ev, struct cut_meta *m)
{
	enum cut_meta_kind kind = cut_meta_kind(ev);
	struct priv *p;
	cut_meta_init(m, kind);
	if (kind == CUT_META_NONE || kind == CUT_META_OTHER || !ev->args)
		return kind;
	p = m->priv = cut_xcalloc(1, sizeof(*p));
	p->root = json_loads(ev->args, 0, NULL);
	if (!json_is_object(p->root))
		return kind;
	const struct kind *k = &kinds[kind];
	read_members(m, p->root, k->members, k->nmembers);
	p->more = unknown_members(p->root, k);
	*FIELD(m, const char *, k->more) = p->more;
	return kind;
}

void
cut_meta_release(struct cut_meta *m)
{
	struct priv *p = m->priv;
	if (p) {
		json_decref(p->root);
		free(p->strv);
		free(p->more);
		for (size_t i = 0; i < p->nraw; i++)
			free(p->raw[i]);
		free(p);
	}
	cut_meta_init(m, m->kind);
}

/* ---- folding ---- */

/* An M_MEDIAN member's values so far, each with its weight. */
struct median {
	size_t off;
	struct weighed {
		int64_t v, w;
	} * vals;
	size_t n, cap;
};

/* An M_COVERAGE member so far, as JSON. */
struct raw {
	size_t off;
	json_t *j;
	char *text;
};

struct cut_meta_fold {
	struct cut_meta m; /* the fold so far; its strings point at copies in strs */
	size_t count;
	struct median med[4];
	size_t nmed;
	struct raw raw[2];
	size_t nraw;
	json_t *more; /* the records' own members */
	char *more_text;
	void **strs; /* what the result's strings and arrays point into */
	size_t nstrs, capstrs;
};

static void *
keep(struct cut_meta_fold *f, void *p)
{
	CUT_GROW(f->strs, f->nstrs + 1, f->capstrs);
	f->strs[f->nstrs++] = p;
	return p;
}

static const char *
keep_str(struct cut_meta_fold *f, const char *s)
{
	return keep(f, cut_xstrdup(s));
}

/* Whether s is one of the "; "-separated items of list. */
static bool
joined(const char *list, const char *s)
{
	size_t n = strlen(s);
	for (const char *p = list; p; p = strstr(p, "; "), p = p ? p + 2 : NULL)
		if (strncmp(p, s, n) == 0 && (p[n] == '\0' || strncmp(p + n, "; ", 2) == 0))
			return true;
	return false;
}

/* a, sep and b in a new string. */
static char *
join3(const char *a, const char *sep, const char *b)
{
	size_t na = strlen(a), ns = strlen(sep), nb = strlen(b);
	char *p = cut_xmalloc(na + ns + nb + 1);
	memcpy(p, a, na);
	memcpy(p + na, sep, ns);
	memcpy(p + na + ns, b, nb + 1);
	return p;
}

static int64_t
fold_int(enum merge rule, int64_t into, int64_t from)
{
	int64_t sum;
	if (from == CUT_ABSENT || rule == M_FIRST)
		return into == CUT_ABSENT ? from : into;
	if (into == CUT_ABSENT)
		return from;
	switch (rule) {
	case M_SUM:
		if (__builtin_add_overflow(into, from, &sum))
			return from > 0 ? INT64_MAX : INT64_MIN + 1;
		return sum;
	case M_MAX: return from > into ? from : into;
	case M_MIN: return from < into ? from : into;
	default: return into;
	}
}

static struct median *
median_of(struct cut_meta_fold *f, size_t off)
{
	for (size_t i = 0; i < f->nmed; i++)
		if (f->med[i].off == off)
			return &f->med[i];
	if (f->nmed == N(f->med))
		errx(CUT_EXIT_FATAL, "meta: more median members than a fold holds");
	f->med[f->nmed].off = off;
	return &f->med[f->nmed++];
}

static struct raw *
raw_of(struct cut_meta_fold *f, size_t off)
{
	for (size_t i = 0; i < f->nraw; i++)
		if (f->raw[i].off == off)
			return &f->raw[i];
	if (f->nraw == N(f->raw))
		errx(CUT_EXIT_FATAL, "meta: more raw members than a fold holds");
	f->raw[f->nraw].off = off;
	return &f->raw[f->nraw++];
}

/* The link calls of a coverage entry: link_calls where the entry has both kinds, else all of
 * its calls when it was called through the link only. */
static bool
has_via(json_t *fn, const char *what)
{
	json_t *via = json_object_get(fn, "via");
	for (size_t i = 0; i < json_array_size(via); i++) {
		const char *s = json_string_value(json_array_get(via, i));
		if (s && !strcmp(s, what))
			return true;
	}
	return false;
}

/* The link calls of a coverage entry: link_calls where the entry has both kinds, else all of
 * its calls when it was called through the link only. */
static json_int_t
link_calls(json_t *fn)
{
	json_t *n = json_object_get(fn, "link_calls");
	if (json_is_integer(n))
		return json_integer_value(n);
	return has_via(fn, "link") ? json_integer_value(json_object_get(fn, "calls")) : 0;
}

/*
 * Folds libcuthook's coverage audit from into into (cuthook(1)): the functions of both, by
 * name, in name order, their calls summed and their ways of being obtained joined; the counts
 * of functions obtained and called counted again from them; unwrapped pointers summed and
 * listed once each; the rest (the cuda.h version, the functions wrapped) into's.
 */
static void
merge_coverage(json_t *into, json_t *from)
{
	json_t *fns = json_object_get(into, "functions"), *fn, *v;
	size_t i, j;
	if (!json_is_array(fns) || !json_is_object(from))
		return;
	json_array_foreach(json_object_get(from, "functions"), i, fn)
	{
		const char *name = json_string_value(json_object_get(fn, "name"));
		json_t *same = NULL;
		size_t at = json_array_size(fns);
		if (!name)
			continue;
		for (j = 0; j < json_array_size(fns); j++) {
			const char *n =
			    json_string_value(json_object_get(json_array_get(fns, j), "name"));
			int c = n ? strcmp(n, name) : -1;
			if (c == 0)
				same = json_array_get(fns, j);
			if (c >= 0) {
				at = j;
				break;
			}
		}
		if (!same) {
			json_array_insert_new(fns, at, json_deep_copy(fn));
			continue;
		}
		json_int_t calls = json_integer_value(json_object_get(same, "calls")) +
		                   json_integer_value(json_object_get(fn, "calls"));
		json_int_t link = link_calls(same) + link_calls(fn);
		json_t *via = json_object_get(same, "via");
		json_array_foreach(json_object_get(fn, "via"), j, v)
		{
			if (json_is_string(v) && !has_via(same, json_string_value(v)) &&
			    json_is_array(via))
				json_array_append(via, v);
		}
		const char *copied[] = {"symbol", "version", "flags"};
		for (j = 0; j < N(copied); j++)
			if (!json_object_get(same, copied[j]) && json_object_get(fn, copied[j]))
				json_object_set(same, copied[j], json_object_get(fn, copied[j]));
		json_object_set_new(same, "calls", json_integer(calls));
		json_object_del(same, "link_calls");
		if (link && link < calls)
			json_object_set_new(same, "link_calls", json_integer(link));
	}
	json_int_t n_link = 0, n_dlsym = 0, n_gpa = 0, n_called = 0;
	json_array_foreach(fns, i, fn)
	{
		n_link += link_calls(fn) > 0;
		n_dlsym += has_via(fn, "dlsym");
		n_gpa += json_object_get(fn, "symbol") != NULL;
		n_called += json_integer_value(json_object_get(fn, "calls")) > 0;
	}
	json_t *obtained = json_object_get(into, "obtained");
	if (json_is_object(obtained)) {
		json_object_set_new(obtained, "link", json_integer(n_link));
		json_object_set_new(obtained, "dlsym", json_integer(n_dlsym));
		json_object_set_new(obtained, "cuGetProcAddress", json_integer(n_gpa));
	}
	json_object_set_new(into, "called", json_integer(n_called));
	json_object_set_new(into, "unwrapped",
	                    json_integer(json_integer_value(json_object_get(into, "unwrapped")) +
	                                 json_integer_value(json_object_get(from, "unwrapped"))));
	json_t *syms = json_object_get(from, "unwrapped_symbols");
	if (json_array_size(syms) && !json_object_get(into, "unwrapped_symbols"))
		json_object_set_new(into, "unwrapped_symbols", json_array());
	json_t *to = json_object_get(into, "unwrapped_symbols");
	json_array_foreach(syms, i, v)
	{
		bool seen = false;
		for (j = 0; j < json_array_size(to) && !seen; j++)
			seen = json_equal(json_array_get(to, j), v);
		if (!seen)
			json_array_append(to, v);
	}
}

static void
fold_members(struct cut_meta_fold *f, const struct cut_meta *from, const struct member *mb,
             size_t n)
{
	struct cut_meta *into = &f->m;
	for (size_t i = 0; i < n; i++, mb++) {
		if (mb->merge == M_NONE)
			continue;
		switch (mb->type) {
		case T_OBJECT: fold_members(f, from, mb->sub, mb->nsub); break;
		case T_STR:
			if (!*FIELD(into, const char *, mb->off) &&
			    *FIELD(from, const char *, mb->off))
				*FIELD(into, const char *, mb->off) =
				    keep_str(f, *FIELD(from, const char *, mb->off));
			break;
		case T_STRV: {
			const char *const *v = *FIELD(from, const char *const *, mb->off);
			size_t nv = *FIELD(from, const size_t, mb->off + sizeof(char **));
			const char *const *was = *FIELD(into, const char *const *, mb->off);
			size_t nwas = *FIELD(into, const size_t, mb->off + sizeof(char **));
			if (!v || (was && mb->merge != M_JOIN))
				break;
			const char **copy = keep(f, cut_xcalloc(nwas + nv + 1, sizeof(*copy)));
			size_t n = 0;
			for (size_t k = 0; k < nwas; k++)
				copy[n++] = was[k];
			for (size_t k = 0; k < nv; k++) {
				size_t j = 0;
				while (j < n && strcmp(copy[j], v[k]) != 0)
					j++;
				if (j == n)
					copy[n++] = keep_str(f, v[k]);
			}
			*FIELD(into, const char **, mb->off) = copy;
			*FIELD(into, size_t, mb->off + sizeof(char **)) = n;
			break;
		}
		case T_LSTR:
			for (int l = 0; l < CUT_NLAYERS; l++) {
				const char **to = &FIELD(into, const char *, mb->off)[l];
				const char *s = FIELD(from, const char *, mb->off)[l];
				if (s && (!*to || (mb->merge == M_ON && strcmp(*to, "on") != 0 &&
				                   strcmp(s, "on") == 0)))
					*to = keep_str(f, s);
				else if (s && mb->merge == M_JOIN && !joined(*to, s))
					*to = keep(f, join3(*to, "; ", s));
			}
			break;
		case T_LINT:
			for (int l = 0; l < CUT_NLAYERS; l++)
				FIELD(into, int64_t, mb->off)
			[l] = fold_int(mb->merge, FIELD(into, int64_t, mb->off)[l],
			               FIELD(from, const int64_t, mb->off)[l]);
			break;
		case T_RAW: {
			const char *s = *FIELD(from, const char *const, mb->off);
			struct raw *r = raw_of(f, mb->off);
			json_t *j = s ? json_loads(s, JSON_DECODE_ANY, NULL) : NULL;
			if (!j)
				break;
			if (!r->j)
				r->j = j;
			else {
				if (mb->merge == M_COVERAGE)
					merge_coverage(r->j, j);
				json_decref(j);
			}
			break;
		}
		default: {
			int64_t v = *FIELD(from, const int64_t, mb->off);
			if (mb->merge == M_MEDIAN && v != CUT_ABSENT) {
				struct median *md = median_of(f, mb->off);
				int64_t w = *FIELD(from, const int64_t, mb->weight);
				CUT_GROW(md->vals, md->n + 1, md->cap);
				md->vals[md->n].v = v;
				md->vals[md->n++].w = w > 0 ? w : 1;
			}
			*FIELD(into, int64_t, mb->off) =
			    fold_int(mb->merge, *FIELD(into, int64_t, mb->off), v);
		}
		}
	}
}

struct cut_meta_fold *
cut_meta_fold_new(enum cut_meta_kind k)
{
	struct cut_meta_fold *f = cut_xcalloc(1, sizeof(*f));
	if (!(f->more = json_object()))
		cut_out_of_memory();
	cut_meta_init(&f->m, k);
	if (k == CUT_META_HEADER)
		f->m.header.schema = CUT_ABSENT;
	return f;
}

void
cut_meta_fold_add(struct cut_meta_fold *f, const struct cut_meta *m)
{
	if (m->kind != f->m.kind || (unsigned)m->kind >= N(kinds))
		return;
	const struct kind *k = &kinds[m->kind];
	fold_members(f, m, k->members, k->nmembers);
	const char *more = *FIELD(m, const char *const, k->more);
	if (more && *more) {
		struct cut_buf b = {0};
		buf_addf(&b, "{%s}", more);
		json_t *o = json_loads(b.s, 0, NULL), *v;
		const char *key;
		json_object_foreach(o, key, v)
		{
			if (!json_object_get(f->more, key))
				json_object_set(f->more, key, v);
		}
		json_decref(o);
		buf_free(&b);
	}
	f->count++;
}

size_t
cut_meta_fold_count(const struct cut_meta_fold *f)
{
	return f->count;
}

static int
by_value(const void *a, const void *b)
{
	int64_t x = ((const struct weighed *)a)->v, y = ((const struct weighed *)b)->v;
	return (x > y) - (x < y);
}

/* Members of a JSON object's text without its braces, into a string of its own. */
static char *
members_text(json_t *o)
{
	char *s = json_object_size(o) ? json_dumps(o, JSON_COMPACT) : NULL;
	if (s) {
		size_t n = strlen(s);
		memmove(s, s + 1, n - 2);
		s[n - 2] = '\0';
	}
	return s;
}

const struct cut_meta *
cut_meta_fold_result(struct cut_meta_fold *f)
{
	for (size_t i = 0; i < f->nmed; i++) {
		struct median *md = &f->med[i];
		int64_t total = 0, run = 0;
		qsort(md->vals, md->n, sizeof(*md->vals), by_value);
		for (size_t k = 0; k < md->n; k++)
			total += md->vals[k].w;
		for (size_t k = 0; k < md->n; k++) {
			run += md->vals[k].w;
			if (2 * run >= total) {
				*FIELD(&f->m, int64_t, md->off) = md->vals[k].v;
				break;
			}
		}
	}
	for (size_t i = 0; i < f->nraw; i++) {
		free(f->raw[i].text);
		f->raw[i].text =
		    f->raw[i].j ? json_dumps(f->raw[i].j, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
		*FIELD(&f->m, const char *, f->raw[i].off) = f->raw[i].text;
	}
	free(f->more_text);
	f->more_text = members_text(f->more);
	if ((unsigned)f->m.kind < N(kinds))
		*FIELD(&f->m, const char *, kinds[f->m.kind].more) = f->more_text;
	return &f->m;
}

void
cut_meta_fold_free(struct cut_meta_fold *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->nmed; i++)
		free(f->med[i].vals);
	for (size_t i = 0; i < f->nraw; i++) {
		json_decref(f->raw[i].j);
		free(f->raw[i].text);
	}
	for (size_t i = 0; i < f->nstrs; i++)
		free(f->strs[i]);
	free(f->strs);
	json_decref(f->more);
	free(f->more_text);
	free(f);
}

static void
fill_members(struct cut_meta *into, const struct cut_meta *from, const struct member *mb, size_t n)
{
	for (size_t i = 0; i < n; i++, mb++) {
		switch (mb->type) {
		case T_OBJECT: fill_members(into, from, mb->sub, mb->nsub); break;
		case T_STR:
		case T_RAW:
			if (!*FIELD(into, const char *, mb->off))
				*FIELD(into, const char *, mb->off) =
				    *FIELD(from, const char *, mb->off);
			break;
		case T_STRV:
			if (!*FIELD(into, const char *const *, mb->off)) {
				*FIELD(into, const char *const *, mb->off) =
				    *FIELD(from, const char *const *, mb->off);
				*FIELD(into, size_t, mb->off + sizeof(char **)) =
				    *FIELD(from, const size_t, mb->off + sizeof(char **));
			}
			break;
		case T_LSTR:
			for (int l = 0; l < CUT_NLAYERS; l++)
				if (!FIELD(into, const char *, mb->off)[l])
					FIELD(into, const char *, mb->off)
			[l] = FIELD(from, const char *, mb->off)[l];
			break;
		case T_LINT:
			for (int l = 0; l < CUT_NLAYERS; l++)
				if (FIELD(into, int64_t, mb->off)[l] == CUT_ABSENT)
					FIELD(into, int64_t, mb->off)
			[l] = FIELD(from, const int64_t, mb->off)[l];
			break;
		default:
			if (*FIELD(into, int64_t, mb->off) == CUT_ABSENT)
				*FIELD(into, int64_t, mb->off) =
				    *FIELD(from, const int64_t, mb->off);
		}
	}
}

void
cut_meta_fill(struct cut_meta *into, const struct cut_meta *from, struct cut_buf *more)
{
	if (into->kind != from->kind || (unsigned)into->kind >= N(kinds))
		return;
	const struct kind *k = &kinds[into->kind];
	fill_members(into, from, k->members, k->nmembers);
	const char *a = *FIELD(into, const char *const, k->more);
	const char *b = *FIELD(from, const char *const, k->more);
	if (!b || !*b)
		return;
	/* into's own text as it is, then from's members into's lacks */
	struct cut_buf t = {0};
	buf_addf(&t, "{%s}", a ? a : "");
	json_t *mine = json_loads(t.s, 0, NULL), *theirs, *v, *extra = json_object();
	buf_reset(&t);
	buf_addf(&t, "{%s}", b);
	theirs = json_loads(t.s, 0, NULL);
	buf_free(&t);
	const char *key;
	if (!extra)
		cut_out_of_memory();
	json_object_foreach(theirs, key, v)
	{
		if (!json_object_get(mine, key))
			json_object_set(extra, key, v);
	}
	char *s = members_text(extra);
	buf_reset(more);
	if (a && *a)
		buf_adds(more, a);
	if (a && *a && s)
		buf_addc(more, ',');
	if (s)
		buf_adds(more, s);
	free(s);
	json_decref(mine);
	json_decref(theirs);
	json_decref(extra);
	*FIELD(into, const char *, k->more) = more->len ? more->s : NULL;
}

const char *
cut_task_label(const struct cut_task *t)
{
	return t->name && *t->name ? t->name : t->comm && *t->comm ? t->comm : NULL;
}

void
cut_meta_sorted_header(struct cut_buf *out, const struct cut_event *ev)
{
	struct cut_meta m;
	cut_meta_read(ev, &m);
	m.header.sorted = 1;
	cut_meta_format(out, ev, &m);
	cut_meta_release(&m);
	buf_addc(out, '\n');
}
