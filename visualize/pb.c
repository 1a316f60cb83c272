/* pb.c: the Protocol Buffers wire format by hand, and JSON text as tagged-value messages
 * (cutperfetto's debug annotations). */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "buf.h"
#include "cut.h"
#include "pb.h"

void
pb_grow(struct cut_pb *b, size_t n)
{
	while (b->cap - b->len < n)
		b->cap = b->cap ? 2 * b->cap : 65536;
	b->s = cut_xrealloc(b->s, b->cap, 1);
}

void
pb_fixed64(struct cut_pb *b, unsigned num, uint64_t v)
{
	pb_varint(b, (uint64_t)num << 3 | PB_FIXED64);
	pb_need(b, 8);
	for (int i = 0; i < 8; i++)
		b->s[b->len++] = (uint8_t)(v >> (8 * i));
}

void
pb_bytes(struct cut_pb *b, unsigned num, const void *s, size_t n)
{
	pb_varint(b, (uint64_t)num << 3 | PB_LEN);
	pb_varint(b, n);
	pb_need(b, n);
	if (n)
		memcpy(b->s + b->len, s, n);
	b->len += n;
}

void
pb_string(struct cut_pb *b, unsigned num, const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n = strlen(s), i = 0, k, bad = 0;
	for (; i < n; i += k ? k : 1)
		bad += (k = buf_utf8_len(u + i, n - i)) == 0;
	if (!bad) {
		pb_bytes(b, num, s, n);
		return;
	}
	/* A byte that begins no valid sequence becomes U+FFFD: protobuf strings are UTF-8, and
	 * a name cut to a buffer's size may end inside a character. */
	pb_varint(b, (uint64_t)num << 3 | PB_LEN);
	pb_varint(b, n + 2 * bad);
	pb_need(b, n + 2 * bad);
	for (i = 0; i < n; i += k ? k : 1) {
		if ((k = buf_utf8_len(u + i, n - i)) != 0) {
			memcpy(b->s + b->len, u + i, k);
			b->len += k;
		} else {
			memcpy(b->s + b->len, "\xef\xbf\xbd", 3);
			b->len += 3;
		}
	}
}

void
pb_nest_end_long(struct cut_pb *b, size_t at)
{
	size_t n = b->len - at - 1, k = 1;
	for (size_t v = n; v >= 0x80; v >>= 7)
		k++;
	pb_need(b, k - 1);
	memmove(b->s + at + k, b->s + at + 1, n);
	for (size_t i = 0, v = n; i < k; i++, v >>= 7)
		b->s[at + i] = (uint8_t)((v & 0x7f) | (i + 1 < k ? 0x80 : 0));
	b->len += k - 1;
}

void
pb_free(struct cut_pb *b)
{
	free(b->s);
	*b = (struct cut_pb){0};
}

/* ---- JSON text ---- */

const char *
pb_json_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

const char *
pb_json_string(const char *p, struct cut_pb *out)
{
	out->len = 0;
	for (p++;;) {
		const char *q = p;
		while (*q && *q != '"' && *q != '\\')
			q++;
		pb_need(out, (size_t)(q - p) + 8);
		memcpy(out->s + out->len, p, (size_t)(q - p));
		out->len += (size_t)(q - p);
		p = q;
		if (*p != '\\')
			break;
		uint32_t cp;
		p = cut_json_escape(p, &cp);
		out->len += cut_utf8_put((char *)out->s + out->len, cp);
	}
	out->s[out->len] = '\0';
	return *p ? p + 1 : p;
}

const char *
pb_json_skip(const char *p)
{
	int depth = 0;
	do {
		if (*p == '"') {
			for (p++; *p && *p != '"'; p++)
				if (*p == '\\' && p[1])
					p++;
			if (*p)
				p++;
		} else if (*p == '{' || *p == '[') {
			depth++, p++;
		} else if (*p == '}' || *p == ']') {
			depth--, p++;
		} else if (depth == 0) {
			while (*p && !strchr(",}] \t\r\n", *p))
				p++;
		} else {
			p++;
		}
	} while (depth > 0 && *p);
	return p;
}

/* Whether s is a handle or pointer as cut writes them, "0x" and 1 to 16 hex digits; its value
 * through v. */
static bool
hex(const uint8_t *s, size_t n, uint64_t *v)
{
	if (n < 3 || n > 18 || s[0] != '0' || s[1] != 'x')
		return false;
	uint64_t x = 0;
	for (size_t i = 2; i < n; i++) {
		unsigned d = (unsigned)s[i] - '0';
		if (d > 9 && (d = ((unsigned)s[i] | 0x20) - 'a' + 10) - 10 > 5)
			return false;
		x = x << 4 | d;
	}
	*v = x;
	return true;
}

/* A number: an integer as int (or uint past INT64_MAX), anything else as a double. */
static const char *
number(struct pb_json *j, struct cut_pb *b, const char *p)
{
	const char *q = p;
	bool neg = *q == '-', over = false;
	uint64_t u = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : UINT64_MAX;
	for (q += neg; *q >= '0' && *q <= '9'; q++) {
		unsigned d = (unsigned)(*q - '0');
		if (u > (lim - d) / 10)
			over = true;
		u = u * 10 + d;
	}
	if (*q == '.' || *q == 'e' || *q == 'E' || over) {
		char *e;
		double v = strtod(p, &e);
		uint64_t bits;
		memcpy(&bits, &v, 8);
		pb_fixed64(b, j->dbl, bits);
		return e;
	}
	if (neg)
		pb_field(b, j->sint, (uint64_t)0 - u);
	else if (u > INT64_MAX)
		pb_field(b, j->uint, u);
	else
		pb_field(b, j->sint, u);
	return q;
}

static const char *
value(struct pb_json *j, struct cut_pb *b, const char *p, int depth)
{
	const char *q;
	uint64_t u;
	switch (*p) {
	case '"':
		q = pb_json_string(p, &j->strbuf);
		if (hex(j->strbuf.s, j->strbuf.len, &u))
			pb_field(b, j->pointer, u);
		else
			pb_bytes(b, j->string, j->strbuf.s, j->strbuf.len);
		return q;
	case '{':
	case '[':
		q = pb_json_ws(p + 1);
		if (*q == '}' || *q == ']' || depth > 32) {
			q = pb_json_skip(p);
			pb_bytes(b, j->json, p, (size_t)(q - p));
			return q;
		}
		while (*q && *q != '}' && *q != ']') {
			size_t at;
			if (*p == '{') {
				if (*q != '"')
					break;
				at = pb_nest(b, j->dict);
				q = pb_json_ws(pb_json_string(q, &j->keybuf));
				pb_field(b, j->name_id,
				         j->key(j->ctx, (char *)j->keybuf.s, j->keybuf.len));
				q = pb_json_ws(q + 1); /* ':' */
			} else {
				at = pb_nest(b, j->array);
			}
			const char *r = value(j, b, q, depth + 1);
			pb_nest_end(b, at);
			if (r == q)
				break;
			q = pb_json_ws(r);
			if (*q == ',')
				q = pb_json_ws(q + 1);
		}
		return *q ? q + 1 : q;
	case 't':
	case 'f': pb_field(b, j->boolean, *p == 't'); return p + (*p == 't' ? 4 : 5);
	case 'n': pb_bytes(b, j->json, "null", 4); return p + 4;
	default: return number(j, b, p);
	}
}

const char *
pb_json_value(struct pb_json *j, struct cut_pb *b, const char *p)
{
	return value(j, b, p, 0);
}
