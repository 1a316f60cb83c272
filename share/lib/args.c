/* args.c: member lookup in a valid compact JSON object text. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"

/* Skips a string starting at its opening quote; returns the byte after the closing one.
 * strchr finds quotes many bytes at a time; one after an odd run of backslashes is escaped. */
static const char *
skip_str(const char *p)
{
	for (const char *q = p + 1;;) {
		const char *e = strchr(q, '"');
		if (!e)
			return q + strlen(q);
		size_t bs = 0;
		for (const char *b = e; b > p + 1 && b[-1] == '\\'; b--)
			bs++;
		if (bs % 2 == 0)
			return e + 1;
		q = e + 1;
	}
}

/* Skips any value of valid JSON (the text was validated when it was read). */
static const char *
skip_val(const char *p)
{
	if (*p == '"')
		return skip_str(p);
	if (*p == '{' || *p == '[') {
		int depth = 0;
		for (; *p; p++) {
			if (*p == '"')
				p = skip_str(p) - 1;
			else if (*p == '{' || *p == '[')
				depth++;
			else if ((*p == '}' || *p == ']') && --depth == 0)
				return p + 1;
		}
		return p;
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

int
cut_args_int(const char *args, const char *key, int64_t *v)
{
	const char *p = cut_args_find(args, key);
	if (!p)
		return -1;
	char *end;
	errno = 0;
	if (*p == '"') {
		int hex = p[1] == '0' && (p[2] == 'x' || p[2] == 'X');
		unsigned long long u = strtoull(p + 1, &end, hex ? 16 : 10);
		if (errno || end == p + 1 || *end != '"' || p[1] == '-')
			return -1;
		*v = (int64_t)u;
		return 0;
	}
	long long n = strtoll(p, &end, 10);
	if (errno || end == p || *end == '.' || *end == 'e' || *end == 'E')
		return -1;
	*v = n;
	return 0;
}

static unsigned
hexval(const char *p)
{
	unsigned v = 0;
	for (int i = 0; i < 4; i++) {
		char c = p[i];
		v = v * 16 + (unsigned)(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
	}
	return v;
}

int
cut_args_str(const char *args, const char *key, char *out, size_t outlen)
{
	const char *p = cut_args_find(args, key);
	if (!p || *p != '"')
		return -1;
	size_t n = 0;
	for (p++; *p && *p != '"'; p++) {
		char c = *p;
		if (c == '\\') {
			c = *++p;
			switch (c) {
			case 'n': c = '\n'; break;
			case 't': c = '\t'; break;
			case 'r': c = '\r'; break;
			case 'b': c = '\b'; break;
			case 'f': c = '\f'; break;
			case 'u': {
				unsigned cp = hexval(p + 1);
				p += 4;
				c = cp < 0x80 ? (char)cp : '?';
				break;
			}
			default: break; /* \" \\ \/ */
			}
		}
		if (n + 1 < outlen)
			out[n] = c;
		n++;
	}
	if (outlen)
		out[n < outlen ? n : outlen - 1] = '\0';
	return (int)n;
}
