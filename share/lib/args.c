/* args.c: member lookup in a valid compact JSON object text. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"

/* Skips a string starting at its opening quote; returns the byte after the closing one.
 * Keys and handles are a few bytes: a plain loop beats a library call to find the quote. */
static const char *
skip_str(const char *p)
{
	for (p++; *p && *p != '"'; p++)
		if (*p == '\\' && p[1])
			p++;
	return *p ? p + 1 : p;
}

/* Skips any value of valid JSON (the text was validated when it was read). */
static const char *
skip_val(const char *p)
{
	if (*p == '"')
		return skip_str(p);
	if (*p == '{' || *p == '[') {
		/* strcspn passes over numbers, commas and colons many bytes at a time */
		for (int depth = 0;;) {
			p += strcspn(p, "\"{}[]");
			if (!*p)
				return p;
			if (*p == '"') {
				p = skip_str(p);
				continue;
			}
			if (*p == '{' || *p == '[')
				depth++;
			else if (--depth == 0)
				return p + 1;
			p++;
		}
	}
	while (*p && *p != ',' && *p != '}' && *p != ']' && *p != ' ' && *p != '\n')
		p++;
	return p;
}

static const char *
skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

const char *
cut_args_find(const char *args, const char *key)
{
	if (!args)
		return NULL;
	size_t klen = strlen(key);
	const char *p = skip_ws(args);
	if (*p != '{')
		return NULL;
	p = skip_ws(p + 1);
	while (*p == '"') {
		const char *k = p + 1, *kend = skip_str(p);
		p = skip_ws(kend);
		if (*p != ':')
			return NULL;
		p = skip_ws(p + 1);
		if ((size_t)(kend - 1 - k) == klen && memcmp(k, key, klen) == 0)
			return p;
		p = skip_ws(skip_val(p));
		if (*p != ',')
			return NULL;
		p = skip_ws(p + 1);
	}
	return NULL;
}

/* Digits of base 10 or 16 at p into *u, up to the first other byte (returned); NULL when
 * there are none or the value passes UINT64_MAX. Faster than strtoull, which also handles
 * locales, signs and spaces that JSON integers and handle strings never have. */
static const char *
digits(const char *p, unsigned base, uint64_t *u)
{
	uint64_t n = 0;
	const char *d = p;
	for (;; p++) {
		unsigned c = (unsigned char)*p, x = c - '0';
		if (x > 9) {
			x = (c | 0x20) - 'a' + 10;
			if (base != 16 || x < 10 || x > 15)
				break;
		}
		if (__builtin_mul_overflow(n, base, &n) || __builtin_add_overflow(n, x, &n))
			return NULL;
	}
	*u = n;
	return p == d ? NULL : p;
}

const char *
cut_args_next(const char *p, const char **key, size_t *klen, const char **val)
{
	if (!p)
		return NULL;
	p = skip_ws(p);
	if (*p != '{' && *p != ',')
		return NULL;
	p = skip_ws(p + 1);
	if (*p != '"')
		return NULL;
	const char *k = p + 1, *kend = skip_str(p);
	p = skip_ws(kend);
	if (*p != ':' || kend == k)
		return NULL;
	*key = k;
	*klen = (size_t)(kend - 1 - k);
	*val = p = skip_ws(p + 1);
	return skip_ws(skip_val(p));
}

int
cut_args_int(const char *args, const char *key, int64_t *v)
{
	return cut_args_int_at(cut_args_find(args, key), v);
}

int
cut_args_int_at(const char *p, int64_t *v)
{
	uint64_t u;
	if (!p)
		return -1;
	if (*p == '"') { /* a handle or pointer: "0x7f00", or "12" */
		bool hex = p[1] == '0' && (p[2] == 'x' || p[2] == 'X');
		p = digits(p + (hex ? 3 : 1), hex ? 16 : 10, &u);
		if (!p || *p != '"')
			return -1;
		*v = (int64_t)u;
		return 0;
	}
	bool neg = *p == '-';
	p = digits(p + neg, 10, &u);
	if (!p || *p == '.' || *p == 'e' || *p == 'E' || u > (uint64_t)INT64_MAX + neg)
		return -1;
	*v = neg ? (int64_t)(0 - u) : (int64_t)u;
	return 0;
}

static uint32_t
hex4(const char *p)
{
	uint32_t v = 0;
	for (int i = 0; i < 4 && p[i]; i++)
		v = v * 16 + (uint32_t)(p[i] <= '9' ? p[i] - '0' : (p[i] | 0x20) - 'a' + 10);
	return v;
}

const char *
cut_json_escape(const char *p, uint32_t *cp)
{
	char c = p[1];
	p += c ? 2 : 1;
	switch (c) {
	case 'n': *cp = '\n'; break;
	case 't': *cp = '\t'; break;
	case 'r': *cp = '\r'; break;
	case 'b': *cp = '\b'; break;
	case 'f': *cp = '\f'; break;
	case 'u':
		*cp = hex4(p);
		p += strnlen(p, 4);
		if (*cp >= 0xd800 && *cp < 0xdc00 && p[0] == '\\' && p[1] == 'u') {
			*cp = 0x10000 + ((*cp - 0xd800) << 10) + (hex4(p + 2) - 0xdc00);
			p += 2 + strnlen(p + 2, 4);
		} else if (*cp >= 0xd800 && *cp < 0xe000) {
			*cp = 0xfffd; /* a lone surrogate */
		}
		break;
	default: *cp = (unsigned char)c; break; /* \" \\ \/ */
	}
	return p;
}

size_t
cut_utf8_put(char *o, uint32_t cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | cp >> 6);
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | cp >> 12);
		o[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | cp >> 18);
	o[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	o[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

int
cut_args_str(const char *args, const char *key, char *out, size_t outlen)
{
	const char *p = cut_args_find(args, key);
	if (!p || *p != '"')
		return -1;
	size_t n = 0;
	for (p++; *p && *p != '"';) {
		char u[4];
		size_t k = 1;
		if (*p == '\\') {
			uint32_t cp;
			p = cut_json_escape(p, &cp);
			k = cut_utf8_put(u, cp);
		} else
			u[0] = *p++;
		for (size_t i = 0; i < k; i++, n++)
			if (n + 1 < outlen)
				out[n] = u[i];
	}
	if (outlen)
		out[n < outlen ? n : outlen - 1] = '\0';
	return (int)n;
}
