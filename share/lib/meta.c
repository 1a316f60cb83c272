/* meta.c: one table of members per record kind drives both the writer and the reader, so the
 * two cannot disagree on a key, a type or the order. */
#include <err.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

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
};

struct member {
	const char *key;
	enum type type;
	size_t off; /* in struct cut_meta */
	const struct member *sub;
	size_t nsub;
};

#define AT(field) offsetof(struct cut_meta, field)
#define N(a) (sizeof(a) / sizeof((a)[0]))

static const struct member clock_members[] = {
    {"monotonic_ns", T_INT, AT(header.monotonic_ns), NULL, 0},
    {"realtime_ns", T_INT, AT(header.realtime_ns), NULL, 0},
};
static const struct member header_members[] = {
    {"schema", T_INT, AT(header.schema), NULL, 0},
    {"tool", T_STR, AT(header.tool), NULL, 0},
    {"version", T_STR, AT(header.version), NULL, 0},
    {"host", T_STR, AT(header.host), NULL, 0},
    {"kernel", T_STR, AT(header.kernel), NULL, 0},
    {"driver", T_STR, AT(header.driver), NULL, 0},
    {"driver_flavour", T_STR, AT(header.driver_flavour), NULL, 0},
    {"libcuda", T_STR, AT(header.libcuda), NULL, 0},
    {"libcudart", T_STR, AT(header.libcudart), NULL, 0},
    {"clock", T_OBJECT, 0, clock_members, N(clock_members)},
    {"sorted", T_BOOL, AT(header.sorted), NULL, 0},
    {"layers", T_LSTR, AT(header.layers), NULL, 0},
    {"cmd", T_STRV, AT(header.cmd), NULL, 0},
};
static const struct member gpu_members[] = {
    {"timed", T_INT, AT(trailer.gpu_timed), NULL, 0},
    {"untimed", T_INT, AT(trailer.gpu_untimed), NULL, 0},
    {"capture_skips", T_INT, AT(trailer.gpu_capture_skips), NULL, 0},
    {"error_ns", T_INT, AT(trailer.gpu_error_ns), NULL, 0},
};
static const struct member trailer_members[] = {
    {"events", T_INT, AT(trailer.events), NULL, 0},
    {"lost", T_INT, AT(trailer.lost), NULL, 0},
    {"layers", T_LINT, AT(trailer.layers), NULL, 0},
    {"gpu", T_OBJECT, 0, gpu_members, N(gpu_members)},
};
static const struct member lost_members[] = {
    {"count", T_INT, AT(lost.count), NULL, 0},
    {"reason", T_STR, AT(lost.reason), NULL, 0},
    {"layer", T_STR, AT(lost.layer), NULL, 0},
};
static const struct member symbol_members[] = {
    {"handle", T_HEX, AT(symbol.handle), NULL, 0},
    {"name", T_STR, AT(symbol.name), NULL, 0},
    {"kind", T_STR, AT(symbol.kind), NULL, 0},
    {"via", T_STR, AT(symbol.via), NULL, 0},
};
static const struct member task_members[] = {
    {"comm", T_STR, AT(task.comm), NULL, 0},
    {"name", T_STR, AT(task.name), NULL, 0},
    {"cmdline", T_STR, AT(task.cmdline), NULL, 0},
    {"ppid", T_INT, AT(task.ppid), NULL, 0},
    {"rank", T_INT, AT(task.rank), NULL, 0},
    {"local_rank", T_INT, AT(task.local_rank), NULL, 0},
    {"world_size", T_INT, AT(task.world_size), NULL, 0},
};
static const struct member device_members[] = {
    {"device", T_INT, AT(device.device), NULL, 0}, {"name", T_STR, AT(device.name), NULL, 0},
    {"uuid", T_STR, AT(device.uuid), NULL, 0},     {"bus", T_STR, AT(device.bus), NULL, 0},
    {"file", T_STR, AT(device.file), NULL, 0},
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
};

#define FIELD(m, type, off) ((type *)((char *)(m) + (off)))
/* A T_STRV member's count follows its pointer. */
_Static_assert(offsetof(struct cut_header, ncmd) ==
                   offsetof(struct cut_header, cmd) + sizeof(const char *const *),
               "cmd and ncmd are adjacent");

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
		case T_STR: *FIELD(m, const char *, mb[i].off) = NULL; break;
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
		err(2, "out of memory");
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
	if (!(p = m->priv = calloc(1, sizeof(*p))))
		err(2, "out of memory");
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
		free(p);
	}
	cut_meta_init(m, m->kind);
}

const char *
cut_task_label(const struct cut_task *t)
{
	return t->name && *t->name ? t->name : t->comm && *t->comm ? t->comm : NULL;
}
