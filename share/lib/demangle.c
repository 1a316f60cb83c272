/* demangle.c: Itanium C++ names demangled by libiberty (the demangler of c++filt and gdb),
 * cached per name, and shortened for tables (demangle.h).
 *
 * Why libiberty and not libstdc++'s __cxa_demangle: since GCC 9 __cxa_demangle refuses any
 * name over 1,024 bytes (its stack arrays grow with the name, PR 87675), and the long names
 * are the ones that need it most (371 of the 21,233 kernel names in samples/, CUTLASS's, run
 * to 2.3 KB). libiberty's component interface parses into the heap and prints through a
 * callback, with the same code and output as c++filt. What it does not bound is bounded
 * here: the length of the name (the parser recurses once per nesting level), the stack its
 * printer takes (an array of templates times references), and the length of the output (a
 * few hundred bytes of back references can expand to gigabytes). */
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <libiberty/demangle.h>

#include "cut.h"
#include "demangle.h"
#include "strtab.h"

/* The printer's stack arrays: 16-byte entries, (templates x 2) x (references x 2) of them,
 * each bounded by its marker letters in the name; refuse past 2 MB. */
#define DEMANGLE_MAX_PRODUCT 32768
/* Demangled names longer than this many times the mangled one are refused (real ones: 12). */
#define DEMANGLE_MAX_GROWTH 64

/* One cache: a name (key) -> its result, NULL while there is none yet. */
struct cache {
	struct cut_strtab *keys;
	char **out;
	size_t cap;
};

static struct cache demangled, shortened;

/* The printer's output; static, not a local, so that it keeps its value across longjmp. */
static struct {
	char *s;
	size_t len, cap, max;
	jmp_buf stop;
} out;

/* Slot of key in c, made when new (*isnew then set). */
static char **
cache_slot(struct cache *c, const char *key, int *isnew)
{
	if (!c->keys)
		c->keys = strtab_new();
	size_t n = strtab_len(c->keys), i = strtab_intern(c->keys, key);
	*isnew = i == n;
	CUT_GROW(c->out, i + 1, c->cap);
	return &c->out[i];
}

static void
cache_free(struct cache *c)
{
	size_t n = c->keys ? strtab_len(c->keys) : 0;
	for (size_t i = 0; i < n; i++)
		free(c->out[i]);
	free(c->out);
	strtab_free(c->keys);
	memset(c, 0, sizeof(*c));
}

/* The printer calls this with each piece; past the limit, it leaves the printer: the printer
 * allocates nothing (its arrays are on the stack), so nothing is lost. */
static void
append(const char *s, size_t n, void *opaque)
{
	(void)opaque;
	if (n > out.max - out.len)
		longjmp(out.stop, 1);
	if (out.len + n + 1 > out.cap) {
		size_t cap = 2 * (out.len + n + 1);
		out.s = cut_xrealloc(out.s, cap, 1), out.cap = cap;
	}
	memcpy(out.s + out.len, s, n);
	out.len += n;
	out.s[out.len] = '\0';
}

/* Prints dc into out, at most max bytes. Returns whether it printed whole. Apart, so that
 * nothing of the caller is live across the longjmp. */
static int
print(struct demangle_component *dc, size_t max)
{
	out.s = NULL;
	out.len = out.cap = 0;
	out.max = max;
	if (setjmp(out.stop) != 0)
		return 0;
	return cplus_demangle_print_callback(DMGL_PARAMS | DMGL_ANSI, dc, append, NULL);
}

/* The demangled name (malloc'd), or NULL when it does not demangle within the bounds. */
static char *
demangle(const char *name)
{
	size_t len = strlen(name);
	if (len > CUT_DEMANGLE_MAX)
		return NULL;
	uint64_t templates = 0, refs = 0;
	for (const char *p = name; *p; p++) {
		templates += *p == 'I' || *p == 'J';
		refs += *p == 'R' || *p == 'O';
	}
	if (templates * refs > DEMANGLE_MAX_PRODUCT)
		return NULL;
	void *mem = NULL;
	struct demangle_component *dc =
	    cplus_demangle_v3_components(name, DMGL_PARAMS | DMGL_ANSI, &mem);
	if (!dc) {
		free(mem);
		return NULL;
	}
	int ok = print(dc, DEMANGLE_MAX_GROWTH * len);
	free(mem);
	if (!ok || !out.s || !out.len) {
		free(out.s);
		return NULL;
	}
	return cut_xrealloc(out.s, out.len + 1, 1); /* no more room than the name takes */
}

/* A cache entry for a name that did not demangle: an empty string, told from a result. */
static char not_mangled[1];

const char *
cut_demangle(const char *name)
{
	if (!name || name[0] != '_' || name[1] != 'Z')
		return name;
	int isnew;
	char **slot = cache_slot(&demangled, name, &isnew);
	if (isnew) {
		char *d = demangle(name);
		*slot = d ? d : not_mangled;
	}
	return *slot == not_mangled ? name : *slot;
}

size_t
cut_name_cols(const char *name)
{
	size_t n = 0;
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		n += (*p & 0xc0) != 0x80;
	return n;
}

/* A template argument or parameter list: its brackets' offsets and its level (1: outermost). */
struct group {
	size_t open, close, depth;
	size_t parent; /* index of the list it is in, or (size_t)-1 */
	size_t saves;  /* columns eliding it saves, its lists elided first: 0 if it stays */
	int elided;
};

static int
ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

/* Bytes of the operator symbol after "operator" at s (operator<<, operator(), operator->*),
 * whose brackets are not lists; 0 when none. */
static size_t
operator_symbol(const char *s)
{
	if ((s[0] == '(' && s[1] == ')') || (s[0] == '[' && s[1] == ']'))
		return 2;
	size_t n = 0;
	while (n < 3 && s[n] && strchr("<>=!+-*/%^&|~,", s[n]))
		n++;
	return n;
}

/* The lists of name, in order of their opening bracket; *ngroups set. NULL when none. A
 * closing bracket without its opening one is text (a '>' in "->" or a comparison); a ')'
 * closes the nearest '(' and drops the '<' opened after it (comparisons, as in "(a<b)"). */
static struct group *
find_groups(const char *name, size_t len, size_t *ngroups)
{
	size_t *stack = cut_xcalloc(len + 1, sizeof(*stack)), top = 0, n = 0;
	struct group *g = cut_xcalloc(len / 2 + 1, sizeof(*g));
	static const char anon[] = "(anonymous namespace)";
	for (size_t i = 0; i < len; i++) {
		char c = name[i];
		if (c == 'o' && strncmp(name + i, "operator", 8) == 0 &&
		    (i == 0 || !ident_char(name[i - 1]))) {
			i += 8 + operator_symbol(name + i + 8) - 1;
		} else if (c == '(' && strncmp(name + i, anon, sizeof(anon) - 1) == 0) {
			i += sizeof(anon) - 2;
		} else if (c == '<' || c == '(') {
			stack[top++] = i;
		} else if (c == '>' && top && name[stack[top - 1]] == '<' &&
		           !(i > 0 && name[i - 1] == '-')) {
			top--;
			g[n++] = (struct group){stack[top], i, top + 1, 0, 0, 0};
		} else if (c == ')') {
			size_t k = top;
			while (k && name[stack[k - 1]] != '(')
				k--;
			if (k) {
				top = k - 1;
				g[n++] = (struct group){stack[top], i, top + 1, 0, 0, 0};
			}
		}
	}
	free(stack);
	if (!n) {
		free(g);
		g = NULL;
	}
	*ngroups = n;
	return g;
}

static int
by_open(const void *a, const void *b)
{
	const struct group *x = a, *y = b;
	return (x->open > y->open) - (x->open < y->open);
}

static const char ellipsis[] = "…"; /* 3 bytes, 1 column */

/* name with the lists marked elided replaced by "…" (malloc'd). An elided list of two bytes
 * grows by one: hence len + n. */
static char *
elide(const char *name, size_t len, const struct group *g, size_t n)
{
	char *s = cut_xmalloc(len + n + 1), *p = s;
	size_t at = 0;
	for (size_t i = 0; i < n; i++) {
		if (!g[i].elided || g[i].open < at)
			continue;
		memcpy(p, name + at, g[i].open + 1 - at);
		p += g[i].open + 1 - at;
		memcpy(p, ellipsis, 3);
		p += 3;
		at = g[i].close;
	}
	memcpy(p, name + at, len - at);
	p[len - at] = '\0';
	return s;
}

/* s cut to width - 1 columns, at a character's start, and "…" after it (s is freed). */
static char *
cut(char *s, size_t width)
{
	size_t keep = 0, c = 0;
	for (; s[keep]; keep++) {
		if (((unsigned char)s[keep] & 0xc0) == 0x80)
			continue;
		if (c == width - 1)
			break;
		c++;
	}
	char *r = cut_xmalloc(keep + sizeof(ellipsis));
	memcpy(r, s, keep);
	memcpy(r + keep, ellipsis, sizeof(ellipsis));
	free(s);
	return r;
}

/* Marks the lists to elide: the deepest level first, and in a level the last list first, until
 * name fits in width (all of them when it does not). g is in order of the opening brackets. */
static void
mark_elided(const char *name, size_t len, struct group *g, size_t n, size_t width)
{
	size_t *colsum = cut_xcalloc(len + 1, sizeof(*colsum));
	size_t *stack = cut_xcalloc(n, sizeof(*stack));
	colsum[0] = 0;
	for (size_t i = 0; i < len; i++)
		colsum[i + 1] = colsum[i] + (((unsigned char)name[i] & 0xc0) != 0x80);
	/* Levels and parents by nesting among the lists themselves (brackets taken as text
	 * leave gaps in what find_groups saw). */
	size_t sp = 0, maxdepth = 0;
	for (size_t i = 0; i < n; i++) {
		while (sp && g[stack[sp - 1]].close < g[i].open)
			sp--;
		g[i].depth = sp + 1;
		g[i].parent = sp ? stack[sp - 1] : (size_t)-1;
		stack[sp++] = i;
		maxdepth = g[i].depth > maxdepth ? g[i].depth : maxdepth;
	}
	/* What eliding a list saves once the lists in it are elided: its contents less "…",
	 * less what they saved. A list of one column stays. */
	for (size_t i = 0; i < n; i++) {
		size_t inside = colsum[g[i].close] - colsum[g[i].open + 1];
		g[i].saves = inside > 1 ? inside - 1 : 0;
	}
	for (size_t i = 0; i < n; i++) /* a list's own lists come after it */
		if (g[i].parent != (size_t)-1)
			g[g[i].parent].saves -= g[i].saves;
	size_t w = colsum[len];
	for (size_t d = maxdepth; d >= 1 && w > width; d--)
		for (size_t i = n; i-- > 0 && w > width;)
			if (g[i].depth == d && g[i].saves) {
				g[i].elided = 1;
				w -= g[i].saves;
			}
	free(stack);
	free(colsum);
}

/* The shortened form of name (malloc'd); name is wider than width. */
static char *
shorten(const char *name, size_t width)
{
	size_t len = strlen(name), n;
	struct group *g = find_groups(name, len, &n);
	char *s;
	if (n) {
		qsort(g, n, sizeof(*g), by_open);
		mark_elided(name, len, g, n, width);
		s = elide(name, len, g, n);
		free(g);
	} else {
		s = cut_xstrdup(name);
	}
	return cut_name_cols(s) <= width ? s : cut(s, width);
}

const char *
cut_name_short(const char *name, size_t width)
{
	if (!name || !width || cut_name_cols(name) <= width)
		return name;
	/* The key: the width, then the name ("80:name"): digits end at the first ':'. */
	size_t len = strlen(name);
	char *key = cut_xmalloc(len + 24);
	int k = snprintf(key, 24, "%zu:", width);
	memcpy(key + k, name, len + 1);
	int isnew;
	char **slot = cache_slot(&shortened, key, &isnew);
	free(key);
	if (isnew)
		*slot = shorten(name, width);
	return *slot;
}

void
cut_demangle_free(void)
{
	size_t n = demangled.keys ? strtab_len(demangled.keys) : 0;
	for (size_t i = 0; i < n; i++)
		if (demangled.out[i] == not_mangled)
			demangled.out[i] = NULL;
	cache_free(&demangled);
	cache_free(&shortened);
}
