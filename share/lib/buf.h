/* buf.h: a growable byte buffer for building output lines without stdio formatting. */
#ifndef CUT_BUF_H
#define CUT_BUF_H

#include <stddef.h>
#include <stdint.h>

struct cut_buf {
	char *s; /* NUL-terminated once anything was added; NULL before */
	size_t len;
	size_t cap;
};

/* Appends n bytes of s. Exits with status 2 (err(3)) when memory runs out. */
void buf_add(struct cut_buf *b, const char *s, size_t n);
/* Appends a NUL-terminated string. */
void buf_adds(struct cut_buf *b, const char *s);
void buf_addc(struct cut_buf *b, char c);
/* Appends the decimal form of v. */
void buf_addi64(struct cut_buf *b, int64_t v);
/* Appends v as a JSON string of lowercase hexadecimal: "0x1f". */
void buf_addhex(struct cut_buf *b, uint64_t v);
/* Appends printf-formatted text. */
void buf_addf(struct cut_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends s as a quoted JSON string. Control characters are escaped and bytes that are
 * not valid UTF-8 become U+FFFD, so the result is always valid JSON. */
void buf_addjstr(struct cut_buf *b, const char *s, size_t n);
/* Starts the member key of a JSON object being built in b: opens the object when b is empty,
 * adds the comma unless the object was just opened, then "key":. */
void buf_addkey(struct cut_buf *b, const char *key);
/* Length of the valid UTF-8 sequence at s (at most n bytes), or 0 when it is not one: overlong
 * forms, surrogates and code points past U+10FFFF are not. */
size_t buf_utf8_len(const unsigned char *s, size_t n);
/* A member with a string value, and with an integer value. */
void buf_addkv_str(struct cut_buf *b, const char *key, const char *v);
void buf_addkv_int(struct cut_buf *b, const char *key, int64_t v);
/*
 * Direct writes, for the hot paths (a traced call's line): make room once, write with the
 * buf_put_* functions, then commit.
 * buf_room returns where n more bytes go, exiting with status 2 when memory runs out;
 * buf_try_room returns NULL instead (b unchanged), for code that runs inside another program
 * (libcuthook), which must never exit it. buf_commit ends what was written at end.
 */
char *buf_room(struct cut_buf *b, size_t n);
char *buf_try_room(struct cut_buf *b, size_t n);
static inline void
buf_commit(struct cut_buf *b, char *end)
{
	*end = '\0';
	b->len = (size_t)(end - b->s);
}
/* Writes v in decimal at p (at most 20 bytes); returns the end. */
char *buf_put_i64(char *p, int64_t v);
/* Writes v as a JSON string of lowercase hexadecimal, "0x1f", at p (at most 20 bytes);
 * returns the end. */
char *buf_put_hex(char *p, uint64_t v);
/* Writes the n bytes of s at p as buf_addjstr does (at most 6 * n + 2 bytes); returns the
 * end. */
char *buf_put_jstr(char *p, const char *s, size_t n);
/* "00", "01", ... "99": two decimal digits at 2 * n. */
extern const char buf_digits[201];
/* Empties the buffer, keeping its memory. */
void buf_reset(struct cut_buf *b);
void buf_free(struct cut_buf *b);

#endif
