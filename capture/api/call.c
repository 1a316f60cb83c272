/* call.c: the args object of a driver or runtime API call (cut-events(5)), from its words and
 * its description; the same code for cutcapture and libcuthook. */
#include <string.h>

#include "call.h"
#include "cudatypes.h"
#include "row.h"

/* The directions of copies as JSON strings. */
static const char dir_json[][7] = {"\"any\"", "\"HtoD\"", "\"DtoH\"", "\"DtoD\"", "\"HtoH\""};
static const unsigned char dir_len[] = {5, 6, 6, 6, 6};
/* cudaMemcpyKind (HostToHost, HostToDevice, DeviceToHost, DeviceToDevice, Default) as a
 * direction. */
static const unsigned char kind_dir[] = {HTOH, HTOD, DTOH, DTOD, ANY};

/* Argument word i, cut to its parameter's type. */
static inline uint64_t
arg(const struct cut_api_desc *d, const struct cut_call *c, unsigned i)
{
	if (i >= CUT_API_NARGS)
		return 0;
	return c->typed ? c->a[i] : norm(c->a[i], d->norm[i]);
}

static uint64_t
out_of(const struct cut_api_desc *d, const struct cut_call *c, unsigned i)
{
	for (int k = 0; k < CUT_API_NOUT; k++)
		if (d->rd.out[k] == i + 1)
			return d->rd.outsize[k] == 4 ? (uint32_t)c->out[k] : c->out[k];
	return 0;
}

/* The 32-bit slot s of the words after the sixth. */
static uint32_t
slot(const struct cut_call *c, unsigned s)
{
	unsigned w = CUT_API_NREG + s / 2;
	return w < CUT_API_NARGS ? (uint32_t)(c->a[w] >> (32 * (s % 2))) : 0;
}

/* A member's "key":, in CUT_API_KEYLEN readable bytes, and its length. */
struct key {
	const char *s;
	size_t n;
};

static const char k_stream[CUT_API_KEYLEN] = "\"stream\":", k_event[CUT_API_KEYLEN] = "\"event\":";

/* Makes room for ,"key": and extra more bytes; returns where the value goes. */
static inline char *
put_key(struct cut_buf *b, struct key k, size_t extra)
{
	char *p = buf_room(b, 1 + CUT_API_KEYLEN + extra);
	*p++ = b->len ? ',' : '{';
	memcpy(p, k.s, CUT_API_KEYLEN);
	return p + k.n;
}

static void
put_int(struct cut_buf *b, struct key k, int64_t v)
{
	buf_commit(b, buf_put_i64(put_key(b, k, 20), v));
}

static void
put_hex(struct cut_buf *b, struct key k, uint64_t v)
{
	buf_commit(b, buf_put_hex(put_key(b, k, 20), v));
}

static void
put_json(struct cut_buf *b, struct key k, const char *json, size_t n)
{
	char *p = put_key(b, k, n);
	memcpy(p, json, n);
	buf_commit(b, p + n);
}

static void
put_str(struct cut_buf *b, struct key k, const char *s, size_t n)
{
	buf_commit(b, put_key(b, k, 0));
	buf_addjstr(b, s, n);
}

static void
put_dim3(struct cut_buf *b, struct key k, uint64_t x, uint64_t y, uint64_t z)
{
	char *p = put_key(b, k, 3 * 21 + 2);
	*p++ = '[';
	p = buf_put_i64(p, (int64_t)x);
	*p++ = ',';
	p = buf_put_i64(p, (int64_t)y);
	*p++ = ',';
	p = buf_put_i64(p, (int64_t)z);
	*p++ = ']';
	buf_commit(b, p);
}

static void
put_name(struct cut_buf *b, struct key k, const struct cut_name *n)
{
	if (n->json)
		put_json(b, k, n->json, n->json_len);
	else
		put_str(b, k, n->raw, strlen(n->raw));
}

static bool
on_host(int32_t type)
{
	return type == HOOK_MEMORYTYPE_HOST;
}

/* The direction of a copy between memory types (arrays count as device memory). */
static unsigned
dir_of_types(int32_t src, int32_t dst)
{
	if (src == HOOK_MEMORYTYPE_UNIFIED || dst == HOOK_MEMORYTYPE_UNIFIED)
		return ANY;
	return on_host(src) ? (on_host(dst) ? HTOH : HTOD) : (on_host(dst) ? DTOH : DTOD);
}

/* Words type, host, device, array from a[i]: the address the type says. */
static uint64_t
address(const struct cut_call *c, unsigned i)
{
	int32_t type = (int32_t)c->a[i];
	return type == HOOK_MEMORYTYPE_HOST    ? c->a[i + 1]
	       : type == HOOK_MEMORYTYPE_ARRAY ? c->a[i + 3]
	                                       : c->a[i + 2];
}

static void
member(const struct cut_api_desc *d, const struct cut_call *c, int fi, uint32_t pid,
       struct cut_names *names, struct cut_buf *b)
{
	const struct cut_api_field *f = &d->row->f[fi];
	struct key key = {d->key[fi], d->keylen[fi]};
	bool ok = c->ret == 0;
	unsigned i = f->idx;
	const struct cut_name *nm;
	/* The words after the sixth are there only when they could be read. */
	if (i >= CUT_API_NREG && !c->extra_ok)
		return;
	uint64_t v = arg(d, c, i);
	switch (f->fmt) {
	case 'd': put_int(b, key, (int64_t)v); break;
	case 'x': put_hex(b, key, v); break;
	case 'b': put_int(b, key, (int64_t)(v * f->n)); break;
	case 'B': put_int(b, key, (int64_t)(v * arg(d, c, i + 1) * f->n)); break;
	case 'g': put_dim3(b, key, v, arg(d, c, i + 1), arg(d, c, i + 2)); break;
	case 'D': put_json(b, key, dir_json[f->n], dir_len[f->n]); break;
	case 's':
		if (c->str && c->slen)
			put_str(b, key, c->str, c->slen);
		break;
	case 'S':
		if (ok && c->str && c->slen)
			put_str(b, key, c->str, c->slen);
		break;
	case 'k':
	case 'f':
		if ((nm = names->get(names, pid, v, ok,
		                     f->fmt == 'f' ? CUT_NAME_HOSTFN : CUT_NAME_HANDLE)))
			put_name(b, key, nm);
		break;
	case 'o':
		if (ok && v)
			put_hex(b, key, out_of(d, c, i));
		break;
	case 'O':
		if (ok && v)
			put_int(b, key,
			        f->n == 8 ? (int64_t)out_of(d, c, i) : (int32_t)out_of(d, c, i));
		break;
	case '3': put_dim3(b, key, (uint32_t)v, v >> 32, (uint32_t)arg(d, c, i + 1)); break;
	case 'K':
		if (v < sizeof(kind_dir))
			put_json(b, key, dir_json[kind_dir[v]], dir_len[kind_dir[v]]);
		break;
	case 'P':
		v = ok && v ? out_of(d, c, i) : arg(d, c, i + 1);
		put_int(b, key, (int64_t)(v * arg(d, c, i + 2)));
		break;
	/* The words of a struct (READS; G and U count 32-bit slots, from a[6]). */
	case 'G':
		if (c->extra_ok)
			put_dim3(b, key, slot(c, i), slot(c, i + 1), slot(c, i + 2));
		break;
	case 'U':
		if (c->extra_ok)
			put_int(b, key, slot(c, i));
		break;
	case 'm':
		v = 1;
		for (unsigned k = 0; k < f->n && i + k < CUT_API_NARGS; k++)
			v *= c->a[i + k];
		put_int(b, key, (int64_t)v);
		break;
	case 'T': {
		unsigned dir = dir_of_types((int32_t)c->a[i], (int32_t)c->a[i + 4]);
		put_json(b, key, dir_json[dir], dir_len[dir]);
		break;
	}
	case 'A': put_hex(b, key, address(c, i)); break;
	}
}

/* The handle the line's SYM names, with its name; false when there is none. */
static bool
symbol(const struct cut_api_desc *d, const struct cut_call *c, const struct cut_api_field *f,
       uint32_t pid, struct cut_names *names, struct cut_api_sym *sym)
{
	unsigned h = f->idx & ~SYM_OUT;
	uint64_t handle = f->idx & SYM_OUT ? out_of(d, c, h) : arg(d, c, h);
	const char *name = NULL;
	size_t len = 0;
	if (f->n == SYM_STR) {
		name = c->str;
		len = c->slen;
	} else {
		const struct cut_name *nm =
		    names->get(names, pid, arg(d, c, f->n), false, CUT_NAME_HANDLE);
		if (nm) {
			name = nm->raw;
			len = strlen(nm->raw);
		}
	}
	if (!handle || !name || !len)
		return false;
	*sym = (struct cut_api_sym){handle, name, len, f->key};
	return true;
}

void
cut_api_args(const struct cut_api_desc *d, const struct cut_call *c, uint32_t pid,
             struct cut_names *names, struct cut_buf *b, struct cut_api_sym *sym)
{
	bool ok = c->ret == 0;
	sym->handle = 0;
	for (int i = 0; d->row && i < CUT_API_NFIELDS && d->row->f[i].key; i++) {
		const struct cut_api_field *f = &d->row->f[i];
		if (f->fmt != '@')
			member(d, c, i, pid, names, b);
		else if (ok)
			symbol(d, c, f, pid, names, sym);
	}
	if (d->stream >= 0 && (!d->stream_out || ok)) {
		uint64_t p = arg(d, c, (unsigned)d->stream);
		if (!d->stream_out)
			put_hex(b, (struct key){k_stream, 9}, p);
		else if (p)
			put_hex(b, (struct key){k_stream, 9}, out_of(d, c, (unsigned)d->stream));
	}
	if (d->event >= 0 && (!d->event_out || ok)) {
		uint64_t p = arg(d, c, (unsigned)d->event);
		if (!d->event_out)
			put_hex(b, (struct key){k_event, 8}, p);
		else if (p)
			put_hex(b, (struct key){k_event, 8}, out_of(d, c, (unsigned)d->event));
	}
	if (b->len)
		buf_addc(b, '}');
}

void
cut_api_add_corr(struct cut_buf *b, uint64_t corr)
{
	if (b->len && b->s[b->len - 1] == '}') {
		b->len--;
		buf_addc(b, ',');
	} else {
		buf_reset(b);
		buf_addc(b, '{');
	}
	buf_adds(b, "\"corr\":");
	buf_addi64(b, (int64_t)corr);
	buf_addc(b, '}');
}
