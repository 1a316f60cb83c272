/* pb.h: the Protocol Buffers wire format written by hand (varints, fixed64, length-delimited
 * fields, nested messages whose length is patched in place), and JSON text encoded as a
 * tagged-value message such as Perfetto's DebugAnnotation. No libprotobuf, no schema. */
#ifndef CUT_PB_H
#define CUT_PB_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum { PB_VARINT = 0, PB_FIXED64 = 1, PB_LEN = 2 };

/* A message being built; zero-initialised is empty. */
struct cut_pb {
	uint8_t *s;
	size_t len, cap;
};

/* Makes room for n more bytes; exits with status 2 when memory runs out. */
void pb_grow(struct cut_pb *b, size_t n);

static inline void
pb_need(struct cut_pb *b, size_t n)
{
	if (b->cap - b->len < n)
		pb_grow(b, n);
}

/* Writes v as a varint at p, which has room for 10 bytes; returns the byte after it. */
static inline uint8_t *
pb_put_varint(uint8_t *p, uint64_t v)
{
	for (; v >= 0x80; v >>= 7)
		*p++ = (uint8_t)(v | 0x80);
	*p++ = (uint8_t)v;
	return p;
}

static inline void
pb_varint(struct cut_pb *b, uint64_t v)
{
	pb_need(b, 10);
	b->len = (size_t)(pb_put_varint(b->s + b->len, v) - b->s);
}

/* Field num as a varint (integers, enums, booleans; negative int64 as 10 bytes). */
static inline void
pb_field(struct cut_pb *b, unsigned num, uint64_t v)
{
	pb_varint(b, (uint64_t)num << 3 | PB_VARINT);
	pb_varint(b, v);
}

/* Field num as 8 little-endian bytes (fixed64, double's bits). */
void pb_fixed64(struct cut_pb *b, unsigned num, uint64_t v);
/* Field num holding n bytes of s (bytes, strings, an encoded message). */
void pb_bytes(struct cut_pb *b, unsigned num, const void *s, size_t n);
/* Field num holding the NUL-terminated string s, valid UTF-8: a byte that begins no valid
 * sequence (a name cut inside a character) is written as U+FFFD. */
void pb_string(struct cut_pb *b, unsigned num, const char *s);

/* Opens a nested message, field num; returns where its length goes, for pb_nest_end. One byte
 * is reserved for the length: pb_nest_end moves the body in the rare case it needs more. */
static inline size_t
pb_nest(struct cut_pb *b, unsigned num)
{
	pb_varint(b, (uint64_t)num << 3 | PB_LEN);
	pb_need(b, 1);
	return b->len++;
}

/* Closes the nested message opened at at. */
void pb_nest_end_long(struct cut_pb *b, size_t at);

static inline void
pb_nest_end(struct cut_pb *b, size_t at)
{
	size_t n = b->len - at - 1;
	if (n < 0x80)
		b->s[at] = (uint8_t)n;
	else
		pb_nest_end_long(b, at);
}

/* Appends the bytes of m (an encoded message's fields) to b; m may be empty, never written
 * (its s NULL). */
static inline void
pb_append(struct cut_pb *b, const struct cut_pb *m)
{
	if (!m->len)
		return;
	pb_need(b, m->len);
	memcpy(b->s + b->len, m->s, m->len);
	b->len += m->len;
}

void pb_free(struct cut_pb *b);

/* JSON text as a message of one value, in the shape of Perfetto's DebugAnnotation: the field
 * numbers of each kind of value, and a function giving the id of a member's name (interned by
 * the caller). Objects become repeated `dict` messages each with `name_id`, arrays repeated
 * `array` messages; "0x..." strings of 1 to 16 hex digits become `pointer`; empty containers,
 * null and containers nested deeper than 32 stay as JSON text in `json`. */
struct pb_json {
	unsigned name_id, boolean, uint, sint, dbl, string, pointer, json, dict, array;
	uint64_t (*key)(void *ctx, const char *s, size_t n);
	void *ctx;
	struct cut_pb keybuf, strbuf; /* scratch */
};

/* Writes the JSON value at p (valid JSON, as the reader checked) into b as the fields of one
 * value message; returns the byte after the value. */
const char *pb_json_value(struct pb_json *j, struct cut_pb *b, const char *p);
/* Unescapes the JSON string at p (its opening quote) into out, NUL-terminated (out->len does
 * not count the NUL); returns the byte after its closing quote. */
const char *pb_json_string(const char *p, struct cut_pb *out);
/* The byte after the JSON value at p. */
const char *pb_json_skip(const char *p);
/* The first byte at or after p that is not JSON white space. */
const char *pb_json_ws(const char *p);

#endif
