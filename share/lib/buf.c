/* buf.c: growable byte buffer, the JSON string escaper and the number formatters every writer
 * uses (libcuthook's per-call path among them). */
#include <err.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cut.h"
#include "buf.h"

/* Room for extra more bytes and the NUL; returns -1 when memory ran out (b unchanged). */
static int __attribute__((noinline)) buf_grow_slow(struct cut_buf *b, size_t extra)
{
	size_t need = b->len + extra + 1;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < need)
		cap *= 2;
	char *s = realloc(b->s, cap);
	if (!s)
		return -1;
	b->s = s;
	b->cap = cap;
	return 0;
}

/* The common case, room already there, inline: writers call this for every field. */
static inline __attribute__((always_inline)) void
buf_grow(struct cut_buf *b, size_t extra)
{
	if (b->len + extra + 1 > b->cap && buf_grow_slow(b, extra) < 0)
		cut_out_of_memory();
}

char *
buf_room(struct cut_buf *b, size_t n)
{
	buf_grow(b, n);
	return b->s + b->len;
}

char *
buf_try_room(struct cut_buf *b, size_t n)
{
	if (b->len + n + 1 > b->cap && buf_grow_slow(b, n) < 0)
		return NULL;
	return b->s + b->len;
}

const char buf_digits[201] = "00010203040506070809101112131415161718192021222324"
                             "25262728293031323334353637383940414243444546474849"
                             "50515253545556575859606162636465666768697071727374"
                             "75767778798081828384858687888990919293949596979899";

char *
buf_put_i64(char *p, int64_t v)
{
	static const uint64_t pow10[20] = {1ull,
	                                   10ull,
	                                   100ull,
	                                   1000ull,
	                                   10000ull,
	                                   100000ull,
	                                   1000000ull,
	                                   10000000ull,
	                                   100000000ull,
	                                   1000000000ull,
	                                   10000000000ull,
	                                   100000000000ull,
	                                   1000000000000ull,
	                                   10000000000000ull,
	                                   100000000000000ull,
	                                   1000000000000000ull,
	                                   10000000000000000ull,
	                                   100000000000000000ull,
	                                   1000000000000000000ull,
	                                   10000000000000000000ull};
	uint64_t u = (uint64_t)v;
	if (v < 0) {
		*p++ = '-';
		u = 0 - u; /* INT64_MIN included */
	}
	/* The number of digits first, then straight into place, two per division: building
	 * the number in a scratch buffer and copying it stalls on store forwarding. */
	int n = ((64 - __builtin_clzll(u | 1)) * 1233) >> 12;
	n += n < 19 && u >= pow10[n];
	n += !n;
	char *end = p + n, *q = end;
	while (u >= 100) {
		unsigned d = (unsigned)(u % 100) * 2;
		u /= 100;
		q -= 2;
		memcpy(q, buf_digits + d, 2);
	}
	if (u >= 10) {
		q -= 2;
		memcpy(q, buf_digits + u * 2, 2);
	} else {
		*--q = (char)('0' + u);
	}
	return end;
}

char *
buf_put_hex(char *p, uint64_t v)
{
	int n = (64 - __builtin_clzll(v | 1) + 3) / 4;
	memcpy(p, "\"0x", 3);
	char *end = p + 3 + n, *q = end;
	do {
		*--q = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	*end = '"';
	return end + 1;
}

void
buf_add(struct cut_buf *b, const char *s, size_t n)
{
	buf_grow(b, n);
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

void
buf_adds(struct cut_buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

void
buf_addc(struct cut_buf *b, char c)
{
	buf_grow(b, 1);
	b->s[b->len++] = c;
	b->s[b->len] = '\0';
}

void
buf_addi64(struct cut_buf *b, int64_t v)
{
	buf_commit(b, buf_put_i64(buf_room(b, 20), v));
}

void
buf_addhex(struct cut_buf *b, uint64_t v)
{
	buf_commit(b, buf_put_hex(buf_room(b, 20), v));
}

void
buf_addf(struct cut_buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		err(CUT_EXIT_FATAL, "vsnprintf");
	buf_grow(b, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

/* Length of the valid UTF-8 sequence at s (at most n bytes), or 0 when invalid. */
size_t
buf_utf8_len(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	size_t len;
	unsigned min;
	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		len = 2, min = 0x80;
	else if (c >= 0xE0 && c <= 0xEF)
		len = 3, min = 0x800;
	else if (c >= 0xF0 && c <= 0xF4)
		len = 4, min = 0x10000;
	else
		return 0;
	if (n < len)
		return 0;
	unsigned cp = c & (0x7F >> len);
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3F);
	}
	if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		return 0;
	return len;
}

/* Bytes that a JSON string holds as they are: printable ASCII but the quote and backslash. */
static inline int
plain_byte(unsigned c)
{
	return c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
}

char *
buf_put_jstr(char *out, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
	const unsigned char *p = (const unsigned char *)s, *e = p + n;
	*out++ = '"';
	while (p < e) {
		const unsigned char *run = p;
		/* eight bytes a step while none needs escaping (names are mostly plain) */
		while (e - p >= 8) {
			uint64_t w, q, bs;
			memcpy(&w, p, 8);
			q = w ^ (ones * '"');
			bs = w ^ (ones * '\\');
			if ((((q - ones) & ~q) | ((bs - ones) & ~bs) | ((w - ones * 0x20) & ~w) |
			     w) &
			    high)
				break;
			p += 8;
		}
		while (p < e && plain_byte(*p))
			p++;
		memcpy(out, run, (size_t)(p - run));
		out += p - run;
		if (p == e)
			break;
		unsigned c = *p;
		if (c >= 0x80) {
			size_t len = buf_utf8_len(p, (size_t)(e - p));
			if (len) {
				memcpy(out, p, len);
				out += len;
				p += len;
			} else {
				memcpy(out, "\\ufffd", 6);
				out += 6;
				p++;
			}
			continue;
		}
		p++;
		*out++ = '\\';
		switch (c) {
		case '"': *out++ = '"'; break;
		case '\\': *out++ = '\\'; break;
		case '\n': *out++ = 'n'; break;
		case '\t': *out++ = 't'; break;
		case '\r': *out++ = 'r'; break;
		case '\b': *out++ = 'b'; break;
		case '\f': *out++ = 'f'; break;
		default:
			memcpy(out, "u00", 3);
			out[3] = hex[c >> 4];
			out[4] = hex[c & 15];
			out += 5;
		}
	}
	*out++ = '"';
	return out;
}

void
buf_addjstr(struct cut_buf *b, const char *s, size_t n)
{
	buf_commit(b, buf_put_jstr(buf_room(b, 6 * n + 2), s, n));
}

void
buf_addkey(struct cut_buf *b, const char *key)
{
	size_t n = strlen(key);
	char *p = buf_room(b, 6 * n + 4);
	if (b->len == 0)
		*p++ = '{';
	else if (b->s[b->len - 1] != '{')
		*p++ = ',';
	/* Keys are the writers' own names, plain ASCII: copied as they are, in one go (this is
	 * on libcuthook's per-call path, several times a call); any other is escaped. */
	size_t plain = 0;
	while (plain < n && plain_byte((unsigned char)key[plain]))
		plain++;
	if (plain == n) {
		*p++ = '"';
		memcpy(p, key, n);
		p += n;
		*p++ = '"';
	} else
		p = buf_put_jstr(p, key, n);
	*p++ = ':';
	buf_commit(b, p);
}

void
buf_addkv_str(struct cut_buf *b, const char *key, const char *v)
{
	buf_addkey(b, key);
	buf_addjstr(b, v, strlen(v));
}

void
buf_addkv_int(struct cut_buf *b, const char *key, int64_t v)
{
	buf_addkey(b, key);
	buf_addi64(b, v);
}

void
buf_reset(struct cut_buf *b)
{
	b->len = 0;
	if (b->s)
		b->s[0] = '\0';
}

void
buf_free(struct cut_buf *b)
{
	free(b->s);
	b->s = NULL;
	b->len = b->cap = 0;
}
