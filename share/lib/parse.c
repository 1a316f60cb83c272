/* parse.c: one line into an event: the fast path for exactly the layout cut_event_format
 * writes, jansson for everything else, and the older formats through legacy.c. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "args.h"
#include "legacy.h"
#include "parse.h"

/* ---- fast path: exactly the layout cut_event_format writes ---- */

/* A string's place in the line; terminated only once the whole line is accepted, so a
 * line the fast path gives up on reaches jansson untouched. */
struct span {
	char *s;
	size_t n;
};

/* Matches the n bytes of s at *p. The keys are at most 12 bytes and n is a constant once
 * inlined, so this becomes two or three word compares: a memcmp call cost more than that. */
static inline __attribute__((always_inline)) bool
lit(const char **p, const char *e, const char *s, size_t n)
{
	const char *q = *p;
	size_t i = 0;
	if ((size_t)(e - q) < n)
		return false;
	for (; i + 8 <= n; i += 8) {
		uint64_t a, b;
		memcpy(&a, q + i, 8);
		memcpy(&b, s + i, 8);
		if (a != b)
			return false;
	}
	for (; i + 4 <= n; i += 4) {
		uint32_t a, b;
		memcpy(&a, q + i, 4);
		memcpy(&b, s + i, 4);
		if (a != b)
			return false;
	}
	for (; i < n; i++)
		if (q[i] != s[i])
			return false;
	*p += n;
	return true;
}

#define LIT(s) lit(&p, e, s, sizeof(s) - 1)

/* Whether the 8 bytes of w (little-endian) are all ASCII digits. */
static inline bool
eight_digits(uint64_t w)
{
	return (((w & 0xF0F0F0F0F0F0F0F0ull) |
	         (((w + 0x0606060606060606ull) & 0xF0F0F0F0F0F0F0F0ull) >> 4)) ==
	        0x3333333333333333ull);
}

/* The value of 8 ASCII digits, the first in the lowest byte. */
static inline uint32_t
parse_eight(uint64_t w)
{
	w = (w & 0x0F0F0F0F0F0F0F0Full) * 2561 >> 8;
	w = (w & 0x00FF00FF00FF00FFull) * 6553601 >> 16;
	return (uint32_t)((w & 0x0000FFFF0000FFFFull) * 42949672960001ull >> 32);
}

/* A JSON integer of at most 18 digits (longer ones go to jansson, which knows the limits
 * of int64). Unsigned arithmetic: a 19th digit cannot overflow before it is refused. */
static bool
fast_int(const char **pp, const char *e, int64_t *v)
{
	const char *p = *pp;
	bool neg = p < e && *p == '-';
	p += neg;
	const char *d = p, *lim = e - p > 19 ? p + 19 : e;
	uint64_t n = 0, w;
	unsigned digit;
	/* eight digits a step (Lemire's SWAR conversion): times are 13 to 19 digits long */
	while (lim - p >= 8 && (memcpy(&w, p, 8), eight_digits(w))) {
		n = n * 100000000u + parse_eight(w);
		p += 8;
	}
	while (p < lim && (digit = (unsigned char)*p - '0') < 10) {
		n = n * 10 + digit;
		p++;
	}
	size_t nd = (size_t)(p - d);
	if (nd == 0 || nd > 18 || (nd > 1 && *d == '0'))
		return false;
	if (p < e && (*p == '.' || *p == 'e' || *p == 'E'))
		return false;
	*v = neg ? -(int64_t)n : (int64_t)n;
	*pp = p;
	return true;
}

/* The first byte at or after p that ends a plain string: a quote, a backslash, a control
 * character or a non-ASCII byte; e when there is none. Eight bytes a step (SWAR): strings are
 * the bulk of every line. */
static inline const char *
scan_plain(const char *p, const char *e)
{
	const uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
	while (e - p >= 8) {
		uint64_t w, q, bs;
		memcpy(&w, p, 8);
		q = w ^ (ones * '"');
		bs = w ^ (ones * '\\');
		uint64_t hit =
		    ((q - ones) & ~q) | ((bs - ones) & ~bs) | ((w - ones * 0x20) & ~w) | w;
		if (hit & high)
			break;
		p += 8;
	}
	while (p < e) {
		unsigned char c = (unsigned char)*p;
		if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80)
			return p;
		p++;
	}
	return p;
}

/* A string of printable ASCII without escapes; anything else goes to jansson. */
static bool
fast_str(const char **pp, const char *e, struct span *sp)
{
	const char *p = *pp;
	if (p >= e || *p != '"')
		return false;
	const char *s = p + 1, *q = scan_plain(s, e);
	if (q >= e || *q != '"')
		return false;
	sp->s = (char *)s;
	sp->n = (size_t)(q - s);
	*pp = q + 1;
	return true;
}

static const char *skip_value(const char *p, const char *e, int depth);

static const char *
skip_string(const char *p, const char *e)
{
	p++; /* opening quote */
	for (;;) {
		p = scan_plain(p, e);
		if (p >= e)
			return NULL;
		if (*p == '"')
			return p + 1;
		if (*p != '\\' || p + 1 >= e || !strchr("\"\\/bfnrt", p[1]) || p[1] == '\0')
			return NULL; /* control characters, non-ASCII, \\u: jansson decides */
		p += 2;
	}
}

static const char *
skip_number(const char *p, const char *e)
{
	const char *s = p;
	if (p < e && *p == '-')
		p++;
	const char *d = p;
	while (p < e && *p >= '0' && *p <= '9')
		p++;
	size_t nd = (size_t)(p - d);
	if (nd == 0 || nd > 18 || (nd > 1 && *d == '0'))
		return NULL;
	if (p < e && *p == '.') {
		const char *f = ++p;
		while (p < e && *p >= '0' && *p <= '9')
			p++;
		if (p == f || p - s > 40)
			return NULL;
	}
	if (p < e && (*p == 'e' || *p == 'E'))
		return NULL;
	return p;
}

static const char *
skip_container(const char *p, const char *e, int depth, char close, bool object)
{
	p++;
	if (p < e && *p == close)
		return p + 1;
	for (;;) {
		if (object) {
			if (p >= e || *p != '"' || !(p = skip_string(p, e)))
				return NULL;
			if (p >= e || *p++ != ':')
				return NULL;
		}
		if (!(p = skip_value(p, e, depth + 1)))
			return NULL;
		if (p >= e)
			return NULL;
		if (*p == close)
			return p + 1;
		if (*p++ != ',')
			return NULL;
	}
}

/* Validates one compact JSON value and returns the byte after it, or NULL for anything
 * jansson might judge differently (whitespace, \u escapes, non-ASCII, exponents). */
static const char *
skip_value(const char *p, const char *e, int depth)
{
	if (p >= e || depth > 64)
		return NULL;
	switch (*p) {
	case '{': return skip_container(p, e, depth, '}', true);
	case '[': return skip_container(p, e, depth, ']', false);
	case '"': return skip_string(p, e);
	case 't': return lit(&p, e, "true", 4) ? p : NULL;
	case 'f': return lit(&p, e, "false", 5) ? p : NULL;
	case 'n': return lit(&p, e, "null", 4) ? p : NULL;
	default: return skip_number(p, e);
	}
}

/* The names of the layers (from the one list in event.h), at hand for the fast path. */
static const char *const layer_names[CUT_NLAYERS] = {
#define CUT_LAYER_NAME(e, name, rank, label) [CUT_##e] = name,
    CUT_LAYERS(CUT_LAYER_NAME)
#undef CUT_LAYER_NAME
};

/* The layer named by a span, or -1: by length and first letter, as it runs once an event. */
static int
layer_from_span(const struct span *sp)
{
	int l;
	switch (sp->n) {
	case 3: l = sp->s[0] == 'a' ? CUT_API : sp->s[0] == 'i' ? CUT_IRQ : CUT_GPU; break;
	case 4: l = sp->s[0] == 'm' ? CUT_META : CUT_NVTX; break;
	case 5: l = sp->s[0] == 'i' ? CUT_IOCTL : CUT_SCHED; break;
	case 6: l = CUT_KERNEL; break;
	case 7: l = CUT_RUNTIME; break;
	default: return -1;
	}
	return memcmp(sp->s, layer_names[l], sp->n) == 0 ? l : -1;
}

/* The optional host and rank of the envelope, after dur. */
static bool
fast_host_rank(const char **pp, const char *e, struct span *host, struct cut_event *ev)
{
	const char *p = *pp;
	if (LIT(",\"host\":") && !fast_str(&p, e, host))
		return false;
	if (LIT(",\"rank\":")) {
		if (!fast_int(&p, e, &ev->rank))
			return false;
		ev->has |= CUT_HAS_RANK;
	}
	*pp = p;
	return true;
}

static bool
parse_fast(char *line, size_t len, struct cut_event *ev)
{
	const char *p = line, *e = line + len;
	struct span host = {0}, layer, name, cat = {0}, pname = {0}, args = {0};
	cut_event_init(ev);
	if (!LIT("{\"ts\":") || !fast_int(&p, e, &ev->ts))
		return false;
	if (LIT(",\"dur\":")) {
		if (!fast_int(&p, e, &ev->dur))
			return false;
		ev->has |= CUT_HAS_DUR;
	}
	/* host and rank are rare (distributed jobs): one compare passes over them */
	if (e - p > 3 && p[2] != 'p' && !fast_host_rank(&p, e, &host, ev))
		return false;
	if (!LIT(",\"pid\":") || !fast_int(&p, e, &ev->pid))
		return false;
	if (!LIT(",\"tid\":") || !fast_int(&p, e, &ev->tid))
		return false;
	if (!LIT(",\"layer\":") || !fast_str(&p, e, &layer))
		return false;
	if (!LIT(",\"name\":") || !fast_str(&p, e, &name))
		return false;
	if (LIT(",\"cat\":") && !fast_str(&p, e, &cat))
		return false;
	if (LIT(",\"ret\":")) {
		if (!fast_int(&p, e, &ev->ret))
			return false;
		ev->has |= CUT_HAS_RET;
	}
	if (LIT(",\"id\":")) {
		if (!fast_int(&p, e, &ev->id))
			return false;
		ev->has |= CUT_HAS_ID;
	}
	if (LIT(",\"parent\":")) {
		if (!fast_int(&p, e, &ev->parent))
			return false;
		ev->has |= CUT_HAS_PARENT;
	}
	if (LIT(",\"pname\":") && !fast_str(&p, e, &pname))
		return false;
	if (LIT(",\"nioctl\":")) {
		if (!fast_int(&p, e, &ev->nioctl) || !LIT(",\"ioctl_ns\":") ||
		    !fast_int(&p, e, &ev->ioctl_ns))
			return false;
		ev->has |= CUT_HAS_NIOCTL;
	}
	if (LIT(",\"args\":")) {
		if (p >= e || *p != '{')
			return false;
		const char *end = skip_value(p, e, 0);
		if (!end)
			return false;
		args.s = (char *)p;
		args.n = (size_t)(end - p);
		p = end;
	}
	if (!LIT("}") || p != e)
		return false;
	/* Accepted: only now terminate the strings in place (over their closing quotes, and
	 * over the brace after args), so a line the fast path gives up on reaches jansson
	 * untouched. */
	int l = layer_from_span(&layer);
	if (l < 0)
		return false; /* the jansson path reports it */
	ev->layer = (enum cut_layer)l;
	if (host.s) {
		host.s[host.n] = '\0';
		ev->host = host.s;
	}
	name.s[name.n] = '\0';
	ev->name = name.s;
	if (cat.s) {
		cat.s[cat.n] = '\0';
		ev->cat = cat.s;
	}
	if (pname.s) {
		pname.s[pname.n] = '\0';
		ev->pname = pname.s;
	}
	if (args.s) {
		args.s[args.n] = '\0';
		ev->args = args.s;
	}
	return true;
}

/* ---- jansson path ---- */

/* A number jansson cannot hold (an integer past int64, a real past double), kept as its
 * text: the line goes to jansson with a marker string in its place, put back as the number
 * when args and unknown members are written out. */
struct bignum {
	const char *s; /* in the line */
	size_t n;
};

struct cut_parser {
	struct bignum *big;
	size_t nbig, capbig;
	char *bigline; /* the line with markers */
	json_t *root;
	char *args;  /* json_dumps of args */
	char *extra; /* json_dumps of unknown members, braces removed */
	struct legacy *legacy;
	uint64_t line; /* lines seen, for imported begins reported at the end */
};

struct cut_parser *
cut_parser_new(void)
{
	struct cut_parser *p = calloc(1, sizeof(*p));
	if (!p || !(p->legacy = legacy_new()))
		return free(p), NULL;
	return p;
}

/* Frees what the jansson path kept for the last event: nothing after a fast-path line. */
static inline void
parser_release(struct cut_parser *p)
{
	if (!p->root && !p->args && !p->extra)
		return;
	json_decref(p->root);
	p->root = NULL;
	free(p->args);
	free(p->extra);
	p->args = p->extra = NULL;
	p->nbig = 0;
}

void
cut_parser_free(struct cut_parser *p)
{
	if (!p)
		return;
	parser_release(p);
	free(p->big);
	free(p->bigline);
	legacy_free(p->legacy);
	free(p);
}

static int fail(char *why, size_t whylen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static char *unmark_big(const struct cut_parser *p, char *s);

static int
fail(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	return CUT_PARSE_ERROR;
}

static int
get_int(json_t *o, const char *key, int64_t *v, bool *present, char *why, size_t whylen)
{
	json_t *j = json_object_get(o, key);
	*present = j != NULL;
	if (!j)
		return 0;
	if (json_is_string(j) && json_string_value(j)[0] == '\1') /* a number mark_big took */
		return fail(why, whylen, "\"%s\" is out of range (64-bit integers)", key);
	if (!json_is_integer(j))
		return fail(why, whylen, "\"%s\" is not an integer", key);
	*v = json_integer_value(j);
	return 0;
}

static int
get_str(json_t *o, const char *key, const char **v, char *why, size_t whylen)
{
	json_t *j = json_object_get(o, key);
	if (!j)
		return 0;
	if (!json_is_string(j))
		return fail(why, whylen, "\"%s\" is not a string", key);
	*v = json_string_value(j);
	return 0;
}

static const char *const known_keys[] = {"ts",    "dur",    "host",     "rank", "pid", "tid",
                                         "layer", "name",   "cat",      "ret",  "id",  "parent",
                                         "pname", "nioctl", "ioctl_ns", "args"};

static bool
is_known_key(const char *k)
{
	for (size_t i = 0; i < sizeof(known_keys) / sizeof(known_keys[0]); i++)
		if (strcmp(k, known_keys[i]) == 0)
			return true;
	return false;
}

static int
collect_extra(struct cut_parser *p, json_t *o)
{
	json_t *extra = NULL;
	const char *k;
	json_t *v;
	json_object_foreach(o, k, v)
	{
		if (is_known_key(k))
			continue;
		if (!extra && !(extra = json_object()))
			return -1;
		json_object_set(extra, k, v);
	}
	if (!extra)
		return 0;
	char *s = unmark_big(p, json_dumps(extra, JSON_COMPACT));
	json_decref(extra);
	if (!s)
		return -1;
	size_t n = strlen(s);
	memmove(s, s + 1, n - 2); /* drop the braces */
	s[n - 2] = '\0';
	p->extra = s;
	return 0;
}

/* Reads a record of the current schema from a parsed object. */
static int
from_json(struct cut_parser *p, json_t *o, struct cut_event *ev, char *why, size_t wl)
{
	static const struct {
		const char *key;
		size_t off;
		unsigned flag;
	} ints[] = {
	    {"ts", offsetof(struct cut_event, ts), 0},
	    {"dur", offsetof(struct cut_event, dur), CUT_HAS_DUR},
	    {"rank", offsetof(struct cut_event, rank), CUT_HAS_RANK},
	    {"pid", offsetof(struct cut_event, pid), 0},
	    {"tid", offsetof(struct cut_event, tid), 0},
	    {"ret", offsetof(struct cut_event, ret), CUT_HAS_RET},
	    {"id", offsetof(struct cut_event, id), CUT_HAS_ID},
	    {"parent", offsetof(struct cut_event, parent), CUT_HAS_PARENT},
	    {"nioctl", offsetof(struct cut_event, nioctl), CUT_HAS_NIOCTL},
	    {"ioctl_ns", offsetof(struct cut_event, ioctl_ns), CUT_HAS_NIOCTL},
	};
	const char *layer = NULL;
	bool present;
	cut_event_init(ev);
	for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
		int64_t *field = (int64_t *)((char *)ev + ints[i].off);
		if (get_int(o, ints[i].key, field, &present, why, wl) < 0)
			return CUT_PARSE_ERROR;
		if (!present && ints[i].flag == 0)
			return fail(why, wl, "missing \"%s\"", ints[i].key);
		if (present)
			ev->has |= ints[i].flag;
	}
	if ((ev->has & CUT_HAS_NIOCTL) &&
	    (!json_object_get(o, "nioctl") || !json_object_get(o, "ioctl_ns")))
		return fail(why, wl, "\"nioctl\" and \"ioctl_ns\" must come together");
	if (get_str(o, "host", &ev->host, why, wl) < 0 ||
	    get_str(o, "layer", &layer, why, wl) < 0 ||
	    get_str(o, "name", &ev->name, why, wl) < 0 ||
	    get_str(o, "cat", &ev->cat, why, wl) < 0 ||
	    get_str(o, "pname", &ev->pname, why, wl) < 0)
		return CUT_PARSE_ERROR;
	if (!ev->name)
		return fail(why, wl, "missing \"name\"");
	int l = cut_layer_from_name(layer);
	if (l < 0)
		return fail(why, wl, "unknown layer \"%s\"", layer);
	ev->layer = (enum cut_layer)l;
	json_t *args = json_object_get(o, "args");
	if (args) {
		if (!json_is_object(args))
			return fail(why, wl, "\"args\" is not an object");
		if (!(p->args = unmark_big(p, json_dumps(args, JSON_COMPACT))))
			return fail(why, wl, "out of memory");
		ev->args = p->args;
	}
	if (collect_extra(p, o) < 0)
		return fail(why, wl, "out of memory");
	ev->extra = p->extra;
	return CUT_PARSE_EVENT;
}

/* The marker of a big number, followed by its index: a JSON string no line holds (lines
 * with \u0001 never come here). */
#define BIG_MARK "\\u0001"

/* Whether the number at s (n bytes) is one jansson refuses: an integer past int64, or a
 * real past the range of double. */
static bool
too_big(const char *s, size_t n)
{
	char tmp[512];
	if (n >= sizeof(tmp))
		return true;
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	errno = 0;
	if (strcspn(tmp, ".eE") == n) {
		(void)strtoll(tmp, NULL, 10);
		return errno == ERANGE;
	}
	double d = strtod(tmp, NULL);
	return errno == ERANGE && isinf(d);
}

/* A copy of line with each number jansson refuses replaced by a marker string, and the
 * numbers noted. Returns the copy's length, or 0 when there is no such number or the line
 * holds a \u0001 of its own. */
static size_t
mark_big(struct cut_parser *p, const char *line, size_t len)
{
	p->nbig = 0;
	for (size_t i = 0; i + 6 <= len; i++)
		if (line[i] == '\\' && (line[i + 1] == 'u' || line[i + 1] == 'U') &&
		    strncasecmp(line + i + 2, "0001", 4) == 0)
			return 0;
	/* a marker (at most 16 bytes here) replaces a number of at least 5 */
	char *c = realloc(p->bigline, len * 4 + 64);
	if (!c)
		return 0;
	p->bigline = c;
	size_t o = 0;
	for (size_t i = 0; i < len;) {
		if (line[i] == '"') { /* a string: to its closing quote */
			size_t j = i + 1;
			for (; j < len && line[j] != '"'; j++)
				if (line[j] == '\\')
					j++;
			j = j < len ? j + 1 : len;
			memcpy(c + o, line + i, j - i);
			o += j - i;
			i = j;
			continue;
		}
		if (line[i] != '-' && !(line[i] >= '0' && line[i] <= '9')) {
			c[o++] = line[i++];
			continue;
		}
		size_t j = i + 1;
		while (j < len && strchr("0123456789+-.eE", line[j]))
			j++;
		if (too_big(line + i, j - i)) {
			if (p->nbig == p->capbig) {
				size_t cap = p->capbig ? 2 * p->capbig : 8;
				struct bignum *b = realloc(p->big, cap * sizeof(*b));
				if (!b)
					return 0;
				p->big = b;
				p->capbig = cap;
			}
			p->big[p->nbig] = (struct bignum){line + i, j - i};
			o += (size_t)sprintf(c + o, "\"" BIG_MARK "%zu\"", p->nbig++);
		} else {
			memcpy(c + o, line + i, j - i);
			o += j - i;
		}
		i = j;
	}
	c[o] = '\0';
	return p->nbig ? o : 0;
}

/* Puts the numbers back in place of their markers in s (json_dumps output, which writes
 * the marker as \u0001 followed by the number's index). Returns the new string, or NULL
 * when memory runs out; frees s. */
static char *
unmark_big(const struct cut_parser *p, char *s)
{
	if (!s || !p->nbig || !strstr(s, "\\u0001"))
		return s;
	size_t n = strlen(s), extra = 0;
	for (size_t k = 0; k < p->nbig; k++)
		extra += p->big[k].n;
	char *out = malloc(n + extra + 1), *o = out;
	if (!out) {
		free(s);
		return NULL;
	}
	for (const char *q = s; *q;) {
		size_t k;
		char *end;
		if (q[0] == '"' && strncmp(q + 1, "\\u0001", 6) == 0 &&
		    (k = strtoul(q + 7, &end, 10), *end == '"') && end > q + 7 && k < p->nbig) {
			memcpy(o, p->big[k].s, p->big[k].n);
			o += p->big[k].n;
			q = end + 1;
		} else {
			*o++ = *q++;
		}
	}
	*o = '\0';
	free(s);
	return out;
}

static int
parse_jansson(struct cut_parser *p, const char *line, size_t len, struct cut_event *ev, char *why,
              size_t wl)
{
	json_error_t jerr;
	if (memchr(line, '\0', len))
		return fail(why, wl, "NUL byte in line");
	p->root = json_loadb(line, len, 0, &jerr);
	if (!p->root && (strstr(jerr.text, "too big") || strstr(jerr.text, "overflow"))) {
		/* numbers kept exactly where they are only carried (args, unknown members) */
		json_error_t again;
		size_t n = mark_big(p, line, len);
		if (n)
			p->root = json_loadb(p->bigline, n, 0, &again);
	}
	if (!p->root)
		return fail(why, wl, "invalid JSON: %s", jerr.text);
	if (!json_is_object(p->root))
		return fail(why, wl, "not a JSON object");
	if (json_object_get(p->root, "layer"))
		return from_json(p, p->root, ev, why, wl);
	if (json_object_get(p->root, "phase"))
		return legacy_import(p->legacy, p->root, p->line, ev, why, wl);
	return fail(why, wl, "not a cut event: no \"layer\"");
}

static int
validate(const struct cut_event *ev, char *why, size_t wl)
{
	if (ev->ts < 0)
		return fail(why, wl, "negative \"ts\"");
	if ((ev->has & CUT_HAS_DUR) && ev->dur < 0)
		return fail(why, wl, "negative \"dur\"");
	if ((ev->has & CUT_HAS_DUR) && ev->dur > INT64_MAX - ev->ts)
		return fail(why, wl, "\"ts\" + \"dur\" overflows");
	if (ev->pid < 0 || ev->tid < 0)
		return fail(why, wl, "negative \"pid\" or \"tid\"");
	if ((ev->has & CUT_HAS_RANK) && ev->rank < 0)
		return fail(why, wl, "negative \"rank\"");
	if (!ev->name || !*ev->name)
		return fail(why, wl, "empty \"name\"");
	return 0;
}

/* A header of a newer schema is kept (its events may still be readable) but reported. */
static void
check_schema(const struct cut_event *ev, char *why, size_t wl)
{
	int64_t v;
	if (ev->layer == CUT_META && strcmp(ev->name, "header") == 0 &&
	    cut_args_int(ev->args, "schema", &v) == 0 && v > CUT_SCHEMA_VERSION)
		snprintf(why, wl, "schema version %lld is newer than this reader's %d: reading on",
		         (long long)v, CUT_SCHEMA_VERSION);
}

static bool
blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t')
			return false;
	return true;
}

int
cut_parse(struct cut_parser *p, char *line, size_t len, struct cut_event *ev,
          enum cut_parse_mode mode, char *why, size_t wl)
{
	int rc;
	parser_release(p);
	p->line++;
	why[0] = '\0';
	if (len && line[len - 1] == '\r')
		len--;
	if (blank(line, len))
		return CUT_PARSE_NONE;
	if (mode != CUT_PARSE_JANSSON && parse_fast(line, len, ev))
		rc = CUT_PARSE_EVENT;
	else if (mode == CUT_PARSE_FAST)
		return CUT_PARSE_NOT_CANONICAL;
	else
		rc = parse_jansson(p, line, len, ev, why, wl);
	if (rc == CUT_PARSE_EVENT && validate(ev, why, wl) < 0)
		return CUT_PARSE_ERROR;
	if (rc == CUT_PARSE_EVENT)
		check_schema(ev, why, wl);
	return rc;
}

int
cut_parse_flush(struct cut_parser *p, struct cut_event *ev, uint64_t *line)
{
	parser_release(p);
	return legacy_flush(p->legacy, ev, line);
}
