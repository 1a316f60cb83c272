/* text.c: trace strings escaped for terminals and text reports, and quoted for CSV. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "text.h"

static const char hexdigits[] = "0123456789abcdef";

/* Code point of the valid UTF-8 sequence of len bytes at p. */
static uint32_t
code_point(const unsigned char *p, size_t len)
{
	uint32_t cp = p[0] & (0x7F >> len);
	for (size_t i = 1; i < len; i++)
		cp = cp << 6 | (p[i] & 0x3F);
	return cp;
}

/* Characters that are valid but act on the display: C1 controls, bidi controls, line and
 * paragraph separators. */
static bool
invisible(uint32_t cp)
{
	return (cp >= 0x80 && cp <= 0x9F) || cp == 0x200E || cp == 0x200F ||
	       (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x2028 ||
	       cp == 0x2029 || cp == 0x061C;
}

static void
add_hex_byte(struct cut_buf *b, unsigned char c)
{
	char e[4] = {'\\', 'x', hexdigits[c >> 4], hexdigits[c & 15]};
	buf_add(b, e, 4);
}

void
cut_text_escape(struct cut_buf *b, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s, *e = p + n;
	while (p < e) {
		const unsigned char *run = p;
		while (p < e && *p >= 0x20 && *p < 0x7F && *p != '\\')
			p++;
		if (p > run)
			buf_add(b, (const char *)run, (size_t)(p - run));
		if (p == e)
			break;
		unsigned char c = *p;
		if (c >= 0x80) {
			size_t len = buf_utf8_len(p, (size_t)(e - p));
			if (!len) {
				add_hex_byte(b, c);
				p++;
			} else if (invisible(code_point(p, len))) {
				buf_addf(b, "\\u{%04x}", (unsigned)code_point(p, len));
				p += len;
			} else {
				buf_add(b, (const char *)p, len);
				p += len;
			}
			continue;
		}
		p++;
		switch (c) {
		case '\\': buf_add(b, "\\\\", 2); break;
		case '\n': buf_add(b, "\\n", 2); break;
		case '\t': buf_add(b, "\\t", 2); break;
		case '\r': buf_add(b, "\\r", 2); break;
		default: add_hex_byte(b, c); break;
		}
	}
	if (!b->s)
		buf_add(b, "", 0);
}

static struct cut_buf ring[8];
static unsigned ring_next;

static struct cut_buf *
ring_buf(void)
{
	struct cut_buf *b = &ring[ring_next++ % 8];
	buf_reset(b);
	return b;
}

const char *
cut_esc(const char *s)
{
	struct cut_buf *b = ring_buf();
	cut_text_escape(b, s ? s : "", s ? strlen(s) : 0);
	return b->s;
}

void
cut_csv_field(struct cut_buf *b, const char *s, size_t n)
{
	/* escaped first, as in text reports: a terminal shown the file, or a spreadsheet,
	 * meets no control character */
	static struct cut_buf esc;
	buf_reset(&esc);
	cut_text_escape(&esc, s, n);
	s = esc.s;
	n = esc.len;
	bool formula = n > 0 && strchr("=+-@", s[0]) != NULL;
	bool quote = formula || (n > 0 && (s[0] == ' ' || s[n - 1] == ' ')) || memchr(s, ',', n) ||
	             memchr(s, '"', n);
	if (!quote) {
		buf_add(b, s, n);
		return;
	}
	buf_addc(b, '"');
	if (formula)
		buf_addc(b, '\'');
	for (const char *p = s, *e = s + n; p < e;) {
		const char *q = memchr(p, '"', (size_t)(e - p));
		size_t run = q ? (size_t)(q - p) + 1 : (size_t)(e - p);
		buf_add(b, p, run);
		if (q)
			buf_addc(b, '"');
		p += run;
	}
	buf_addc(b, '"');
}

const char *
cut_csv(const char *s)
{
	struct cut_buf *b = ring_buf();
	cut_csv_field(b, s ? s : "", s ? strlen(s) : 0);
	if (!b->s)
		buf_add(b, "", 0);
	return b->s;
}
