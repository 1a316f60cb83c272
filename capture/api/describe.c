/* describe.c: a driver or runtime API function described for decoding (cut_api_describe): its
 * line of args.def or rtargs.def, its parameters' types and roles from api.def or rt.def, and
 * what must be read of its calls; and that reading done in the process, as libcuthook does it
 * (cut_api_read). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "call.h"
#include "cudatypes.h"
#include "row.h"

/* Members left out of a line ({"key", i, 'f'} without n) are zero, as intended. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
static const struct cut_api_row rows[] = {
#define ARGS(fn, ...) {#fn, {__VA_ARGS__}},
#include "args.def"
#define ARGS(fn, ...) {#fn, {__VA_ARGS__}},
#include "rtargs.def"
};
#pragma GCC diagnostic pop
#define NROWS (sizeof(rows) / sizeof(rows[0]))
/* The driver's lines first, then the runtime's: two sorted tables in one array. */
enum {
#define ARGS(fn, ...) RT_ROW_##fn,
#include "rtargs.def"
	NRT_ROWS
};
#define NDRV_ROWS (NROWS - NRT_ROWS)

/* The words of each struct READS copies, in the order args.def's formats expect them. */
#define W2(f) (offsetof(struct hook_memcpy2d, f) / 8)
#define W3(f) (offsetof(struct hook_memcpy3d, f) / 8)
static const struct {
	unsigned char n, word[CUT_API_NEXTRA];
} reads[] = {
    [LAUNCH_CONFIG] = {5, {0, 1, 2, 3, 4}},
    [MEMCPY2D] = {10,
                  {W2(srcMemoryType), W2(srcHost), W2(srcDevice), W2(srcArray), W2(dstMemoryType),
                   W2(dstHost), W2(dstDevice), W2(dstArray), W2(WidthInBytes), W2(Height)}},
    [MEMCPY3D] = {11,
                  {W3(srcMemoryType), W3(srcHost), W3(srcDevice), W3(srcArray), W3(dstMemoryType),
                   W3(dstHost), W3(dstDevice), W3(dstArray), W3(WidthInBytes), W3(Height),
                   W3(Depth)}},
};
_Static_assert(offsetof(struct hook_launch_config, hStream) == 4 * 8, "CUlaunchConfig.hStream");

/* api.def and rt.def: every function's parameter types (as the wrappers declare them), roles and
 * returns; two sorted tables in one array, the driver's first. */
static const struct {
	const char *name, *params, *roles, *ret;
} api[] = {
#define HOOK_API(fn, params, args, pack, roles, proto) {#fn, #params, roles, "ERR"},
#include "api.def"
#define HOOK_RT(fn, as, ret, params, args, pack, roles, proto) {#fn, #params, roles, #ret},
#include "rt.def"
};
#define NAPI (sizeof(api) / sizeof(api[0]))
enum {
#define HOOK_RT(fn, as, ret, params, args, pack, roles, proto) RT_API_##fn,
#include "rt.def"
	NRT_API
};
#define NDRV_API (NAPI - NRT_API)

static int
row_cmp(const void *key, const void *elem)
{
	return strcmp(key, ((const struct cut_api_row *)elem)->name);
}

static int
api_cmp(const void *key, const void *elem)
{
	return strcmp(key, *(const char *const *)elem);
}

/* The line of function name: in the driver's table, else in the runtime's. */
static const struct cut_api_row *
find_row(const char *name)
{
	const struct cut_api_row *r = bsearch(name, rows, NDRV_ROWS, sizeof(rows[0]), row_cmp);
	return r ? r : bsearch(name, rows + NDRV_ROWS, NRT_ROWS, sizeof(rows[0]), row_cmp);
}

/* Reads api.def's parameter list "(uint32_t a0, void *a1)": the count of argument words, how to
 * cut each, and whether every parameter is integer words (else the BPF side's registers are
 * not the parameters in order). A dim3 by value is two words: x | y << 32, then z. */
static int
parse_params(const char *s, unsigned char *how, bool *words)
{
	int n = 0;
	*words = true;
	if (strcmp(s, "(void)") == 0)
		return 0;
	for (const char *p = s + 1; *p && *p != ')'; n++) {
		size_t len = strcspn(p, ",)");
		unsigned char h = N_AS_IS;
		if (strncmp(p, "struct hook_dim3 ", 17) == 0) {
			if (n < CUT_API_NARGS)
				how[n] = N_AS_IS;
			n++;
			h = N_U32;
		} else if (strncmp(p, "uint8_t ", 8) == 0)
			h = N_U8;
		else if (strncmp(p, "uint16_t ", 9) == 0)
			h = N_U16;
		else if (strncmp(p, "uint32_t ", 9) == 0)
			h = N_U32;
		else if (strncmp(p, "int32_t ", 8) == 0)
			h = N_I32;
		else if (strncmp(p, "uint64_t ", 9) != 0 && strncmp(p, "int64_t ", 8) != 0 &&
		         strncmp(p, "void *", 6) != 0)
			*words = false; /* float, double, a struct passed by value */
		if (n < CUT_API_NARGS)
			how[n] = h;
		p += len;
		while (*p == ',' || *p == ' ')
			p++;
	}
	return n;
}

/* Adds an out value at argument idx of size bytes; returns -1 when there is no room. */
static int
add_out(struct cut_api_reads *rd, unsigned idx, unsigned size)
{
	for (int k = 0; k < CUT_API_NOUT; k++) {
		if (rd->out[k] == idx + 1)
			return rd->outsize[k] == size ? 0 : -1;
		if (!rd->out[k]) {
			rd->out[k] = (unsigned char)(idx + 1);
			rd->outsize[k] = (unsigned char)size;
			return 0;
		}
	}
	return -1;
}

static int
add_str(struct cut_api_reads *rd, unsigned idx, unsigned mode)
{
	if (rd->str && (rd->str != idx + 1 || rd->strmode != mode))
		return -1;
	rd->str = (unsigned char)(idx + 1);
	rd->strmode = (unsigned char)mode;
	return 0;
}

/* How many argument words, from f->idx on, a member of format f reads (the words of a
 * string or of an out value included): 0 for none, or for a handle's name (SYM) and a struct's
 * 32-bit slots ('G', 'U'), which are read otherwise. */
static unsigned
words_of(const struct cut_api_field *f)
{
	switch (f->fmt) {
	case 'd':
	case 'x':
	case 'b':
	case 'k':
	case 'f':
	case 'K':
	case 's':
	case 'S':
	case 'o':
	case 'O': return 1;
	case 'B':
	case '3': return 2;
	case 'g':
	case 'P': return 3;
	case 'A': return 4;
	case 'T': return 5;
	case 'm': return f->n;
	}
	return 0;
}

/* The last argument word a member of format f at idx reads; -1 for none. */
static int
last_arg(const struct cut_api_field *f)
{
	if (f->fmt == '@') {
		int h = f->idx & ~SYM_OUT, name = f->n == SYM_STR ? -1 : f->n;
		return h > name ? h : name;
	}
	unsigned n = words_of(f);
	return n ? (int)(f->idx + n - 1) : -1;
}

static bool
has_key(const struct cut_api_row *row, const char *key)
{
	for (int i = 0; row && i < CUT_API_NFIELDS && row->f[i].key; i++)
		if (strcmp(row->f[i].key, key) == 0)
			return true;
	return false;
}

/* What the line needs read; -1 when it asks for what a call does not carry. */
static int
describe_row(struct cut_api_desc *d)
{
	struct cut_api_reads *rd = &d->rd;
	int last = -1;
	bool sym_str = false, has_reads = false;
	for (int i = 0; i < CUT_API_NFIELDS && d->row->f[i].key; i++)
		has_reads |= d->row->f[i].fmt == '<';
	for (int i = 0; i < CUT_API_NFIELDS && d->row->f[i].key; i++) {
		const struct cut_api_field *f = &d->row->f[i];
		int e = 0, l = last_arg(f);
		size_t kl = strlen(f->key);
		if (kl + 3 > CUT_API_KEYLEN)
			return -1;
		d->key[i][0] = '"';
		memcpy(d->key[i] + 1, f->key, kl);
		memcpy(d->key[i] + 1 + kl, "\":", 2);
		d->keylen[i] = (unsigned char)(kl + 3);
		if (has_reads && l >= CUT_API_NREG && f->idx >= CUT_API_NREG)
			l = -1; /* a word of the struct */
		if (l > last)
			last = l;
		switch (f->fmt) {
		case 'o': e = add_out(rd, f->idx, f->n ? f->n : 8); break;
		case 'O':
			if (f->n && f->n != 4 && f->n != 8)
				return -1;
			e = add_out(rd, f->idx, f->n ? f->n : 4);
			break;
		case 'P': e = add_out(rd, f->idx, 8); break;
		case 's': e = add_str(rd, f->idx, CUT_STR_ARG); break;
		case 'S': e = add_str(rd, f->idx, CUT_STR_OUT); break;
		case '@':
			if (f->idx & SYM_OUT)
				e = add_out(rd, f->idx & ~SYM_OUT, 8);
			sym_str = f->n == SYM_STR;
			break;
		case '<':
			if (f->n < LAUNCH_CONFIG || f->n > MEMCPY3D)
				return -1;
			rd->nextra = reads[f->n].n;
			memcpy(rd->word, reads[f->n].word, sizeof(rd->word));
			rd->extra = f->n == LAUNCH_CONFIG ? CUT_EXTRA_ARG0 : CUT_EXTRA_GATHER;
			break;
		case 'G':
		case 'U':
		case 'm':
		case 'T':
		case 'A':
		case 'D':
		case 'd':
		case 'x':
		case 'b':
		case 'B':
		case 'g':
		case 'k':
		case 'f':
		case 'K':
		case '3': break;
		default: return -1;
		}
		if (e < 0)
			return -1;
	}
	if (sym_str && !rd->str)
		return -1;
	if (last >= d->nparams)
		return -1;
	if (last >= CUT_API_NREG) { /* arguments on the stack */
		if (rd->extra)
			return -1;
		rd->extra = CUT_EXTRA_STACK;
		rd->nextra = (unsigned char)(last - CUT_API_NREG + 1);
	}
	return 0;
}

/* Adds the words of the call (cut_call.a) a member of format f writes to *words (an out
 * value's pointer among them: whether it is NULL); false for a member that is not a function
 * of them, the out values and handle names (a string, a handle named). The slots of 'G' and
 * 'U' are among a struct's words, which is_pure adds whole. */
static bool
member_words(const struct cut_api_field *f, uint32_t *words)
{
	if (f->fmt == 's' || f->fmt == 'S' || f->fmt == '@')
		return false;
	for (unsigned i = f->idx; i < f->idx + words_of(f) && i < CUT_API_NARGS; i++)
		*words |= 1u << i;
	return true;
}

/* Whether the args object of d's calls is a function of the call as read, and handle names
 * (cut_api_desc.pure); sets d->words. */
static bool
is_pure(struct cut_api_desc *d)
{
	const struct cut_api_reads *rd = &d->rd;
	if (rd->str)
		return false;
	uint32_t w = 0;
	for (int i = 0; d->row && i < CUT_API_NFIELDS && d->row->f[i].key; i++)
		if (!member_words(&d->row->f[i], &w))
			return false;
	if (rd->extra == CUT_EXTRA_ARG0 || rd->extra == CUT_EXTRA_GATHER) {
		w |= 1u; /* the struct's address, and the words read of it */
		for (int i = 0; i < rd->nextra; i++)
			w |= 1u << (CUT_API_NREG + i);
	}
	if (d->stream >= 0)
		w |= 1u << d->stream;
	if (d->event >= 0)
		w |= 1u << d->event;
	d->words = w;
	return true;
}

/* The stream or event default: the first parameter api.def's roles mark with upper (the
 * handle) or lower (a pointer to it). */
static void
role_default(struct cut_api_desc *d, const char *roles, char role, const char *key,
             signed char *idx, bool *out)
{
	const char *p = strchr(roles, role), *q = strchr(roles, role + 'a' - 'A');
	if (q && (!p || q < p))
		p = q;
	if (!p || has_key(d->row, key))
		return;
	int i = (int)(p - roles);
	bool is_out = *p != role;
	struct cut_api_reads rd = d->rd;
	if (i >= CUT_API_NREG) { /* on the stack */
		if (rd.extra && rd.extra != CUT_EXTRA_STACK)
			return;
		rd.extra = CUT_EXTRA_STACK;
		if (rd.nextra < i - CUT_API_NREG + 1)
			rd.nextra = (unsigned char)(i - CUT_API_NREG + 1);
	}
	if (is_out && add_out(&rd, (unsigned)i, 8) < 0)
		return;
	d->rd = rd;
	*idx = (signed char)i;
	*out = is_out;
}

int
cut_api_describe(struct cut_api_desc *d, const char *name)
{
	char base[128];
	size_t n = strlen(name);
	memset(d, 0, sizeof(*d));
	d->name = name;
	d->stream = d->event = -1;
	if (n >= sizeof(base))
		return 0;
	memcpy(base, name, n + 1);
	if (n > 5 && (strcmp(base + n - 5, "_ptsz") == 0 || strcmp(base + n - 5, "_ptds") == 0))
		base[n - 5] = 0;
	bool words = false;
	const char *roles = NULL;
	const void *a = bsearch(name, api, NDRV_API, sizeof(api[0]), api_cmp);
	if (!a && (a = bsearch(name, api + NDRV_API, NRT_API, sizeof(api[0]), api_cmp)))
		d->runtime = true;
	if (a) {
		const __typeof__(api[0]) *e = a;
		d->nparams = (unsigned char)parse_params(e->params, d->norm, &words);
		roles = e->roles;
		d->noret = strcmp(e->ret, "ERR") != 0;
		d->silent = strcmp(e->ret, "VOID") == 0;
	}
	d->row = find_row(base);
	if (d->row && (!words || describe_row(d) < 0)) {
		bool runtime = d->runtime, noret = d->noret, silent = d->silent;
		memset(d, 0, sizeof(*d));
		d->name = name;
		d->stream = d->event = -1;
		d->runtime = runtime;
		d->noret = noret;
		d->silent = silent;
		return -1;
	}
	if (roles && words) {
		role_default(d, roles, 'S', "stream", &d->stream, &d->stream_out);
		role_default(d, roles, 'E', "event", &d->event, &d->event_out);
	}
	d->decodes = d->row || d->stream >= 0 || d->event >= 0;
	d->pure = d->decodes && is_pure(d);
	return 0;
}

size_t
cut_api_rows(void)
{
	return NROWS;
}

const char *
cut_api_row_name(size_t i)
{
	return i < NROWS ? rows[i].name : NULL;
}

/* ---- reading a call in the process (libcuthook) ---- */

void
cut_api_read(const struct cut_api_desc *d, struct cut_call *c, const uint64_t *a, size_t n,
             int32_t r)
{
	const struct cut_api_reads *rd = &d->rd;
	bool ok = r == 0;
	/* Only the words the description reads: the parameters, then the extra words. */
	size_t k = n < CUT_API_NARGS ? n : CUT_API_NARGS;
	c->ret = r;
	c->typed = true; /* api.def's pack made them so */
	memcpy(c->a, a, k * sizeof(c->a[0]));
	c->extra_ok = rd->extra == CUT_EXTRA_STACK;
	if (rd->extra == CUT_EXTRA_ARG0 || rd->extra == CUT_EXTRA_GATHER) {
		const uint64_t *s = (const uint64_t *)(uintptr_t)a[0];
		for (int i = 0; i < rd->nextra; i++)
			c->a[CUT_API_NREG + i] =
			    s ? s[rd->extra == CUT_EXTRA_ARG0 ? i : rd->word[i]] : 0;
		c->extra_ok = s != NULL;
	}
	for (int i = 0; i < CUT_API_NOUT && rd->out[i]; i++) {
		const void *p = (const void *)(uintptr_t)c->a[rd->out[i] - 1];
		c->out[i] = 0;
		if (ok && p)
			memcpy(&c->out[i], p, rd->outsize[i] == 4 ? 4 : 8);
	}
	c->str = NULL;
	c->slen = 0;
	if (rd->str) {
		const char *s = (const char *)(uintptr_t)c->a[rd->str - 1];
		if (rd->strmode == CUT_STR_OUT)
			s = ok && s ? *(const char *const *)s : NULL;
		if (s) {
			c->str = s;
			c->slen = strnlen(s, CUT_API_STRLEN - 1);
		}
	}
}
