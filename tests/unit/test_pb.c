/* test_pb.c: the hand-written protobuf encoder (pb.c), read back by a small decoder here:
 * varints at every length, nested messages whose length needs 1 to 4 bytes, JSON values as
 * tagged-value messages, strings as valid UTF-8. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "pb.h"

/* Reads a varint at *p; advances *p. */
static uint64_t
get_varint(const uint8_t **p)
{
	uint64_t v = 0;
	for (int shift = 0;; shift += 7) {
		uint8_t c = *(*p)++;
		v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return v;
	}
}

START_TEST(test_varints)
{
	for (int bits = 0; bits <= 64; bits++) {
		uint64_t v = bits == 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
		for (uint64_t w = v; w <= v + 1 && !(bits == 64 && w == 0); w++) {
			struct cut_pb b = {0};
			pb_field(&b, 17, w);
			const uint8_t *p = b.s;
			ck_assert_uint_eq(get_varint(&p), 17 << 3 | PB_VARINT);
			ck_assert_uint_eq(get_varint(&p), w);
			ck_assert_ptr_eq(p, b.s + b.len);
			/* 1 byte per 7 bits of w, and 2 for the tag */
			size_t want = 1;
			for (uint64_t x = w; x >= 0x80; x >>= 7)
				want++;
			ck_assert_uint_eq(b.len, 2 + want);
			pb_free(&b);
			if (w == UINT64_MAX)
				break;
		}
	}
}
END_TEST

START_TEST(test_nested)
{
	size_t sizes[] = {0, 1, 126, 127, 128, 16383, 16384, 2097151, 2097152};
	for (size_t k = 0; k < sizeof(sizes) / sizeof(*sizes); k++) {
		size_t n = sizes[k];
		char *body = malloc(n + 1);
		ck_assert_ptr_nonnull(body);
		for (size_t i = 0; i < n; i++)
			body[i] = (char)('a' + i % 26);
		struct cut_pb b = {0};
		pb_field(&b, 1, 5);
		size_t outer = pb_nest(&b, 2);
		size_t inner = pb_nest(&b, 3);
		pb_bytes(&b, 4, body, n);
		pb_nest_end(&b, inner);
		pb_fixed64(&b, 6, 0x0102030405060708u);
		pb_nest_end(&b, outer);
		pb_string(&b, 7, "end");

		const uint8_t *p = b.s;
		ck_assert_uint_eq(get_varint(&p), 1 << 3 | PB_VARINT);
		ck_assert_uint_eq(get_varint(&p), 5);
		ck_assert_uint_eq(get_varint(&p), 2 << 3 | PB_LEN);
		uint64_t olen = get_varint(&p);
		const uint8_t *oend = p + olen;
		ck_assert_uint_eq(get_varint(&p), 3 << 3 | PB_LEN);
		uint64_t ilen = get_varint(&p);
		const uint8_t *iend = p + ilen;
		ck_assert_uint_eq(get_varint(&p), 4 << 3 | PB_LEN);
		ck_assert_uint_eq(get_varint(&p), n);
		ck_assert(memcmp(p, body, n) == 0);
		p += n;
		ck_assert_ptr_eq(p, iend);
		ck_assert_uint_eq(get_varint(&p), 6 << 3 | PB_FIXED64);
		ck_assert_uint_eq(p[0], 8);
		ck_assert_uint_eq(p[7], 1);
		p += 8;
		ck_assert_ptr_eq(p, oend);
		ck_assert_uint_eq(get_varint(&p), 7 << 3 | PB_LEN);
		ck_assert_uint_eq(get_varint(&p), 3);
		ck_assert(memcmp(p, "end", 3) == 0);
		ck_assert_ptr_eq(p + 3, b.s + b.len);
		pb_free(&b);
		free(body);
	}
}
END_TEST

/* Field numbers of a made-up value message, and a key function that gives each key's length. */
enum { F_NAME = 1, F_BOOL, F_UINT, F_INT, F_DBL, F_STR, F_PTR, F_JSON, F_DICT, F_ARRAY };

static uint64_t
key_len(void *ctx, const char *s, size_t n)
{
	(void)ctx;
	(void)s;
	return n;
}

/* The value message for text, as "field:value" items separated by spaces (nested ones in
 * braces), written into out. */
static void
show(const uint8_t *p, const uint8_t *end, char *out, size_t n)
{
	size_t len = strlen(out);
	while (p < end && len + 64 < n) {
		uint64_t tag = get_varint(&p), v;
		switch (tag & 7) {
		case PB_VARINT:
			v = get_varint(&p);
			len += (size_t)snprintf(out + len, n - len, "%u:%lld ",
			                        (unsigned)(tag >> 3), (long long)v);
			break;
		case PB_FIXED64: {
			double d;
			memcpy(&d, p, 8);
			p += 8;
			len +=
			    (size_t)snprintf(out + len, n - len, "%u:%g ", (unsigned)(tag >> 3), d);
			break;
		}
		default:
			v = get_varint(&p);
			if ((tag >> 3) == F_DICT || (tag >> 3) == F_ARRAY) {
				len += (size_t)snprintf(out + len, n - len, "%u{",
				                        (unsigned)(tag >> 3));
				show(p, p + v, out, n);
				len = strlen(out);
				len += (size_t)snprintf(out + len, n - len, "} ");
			} else {
				len +=
				    (size_t)snprintf(out + len, n - len, "%u:'%.*s' ",
				                     (unsigned)(tag >> 3), (int)v, (const char *)p);
			}
			p += v;
		}
	}
}

START_TEST(test_json)
{
	static const struct {
		const char *json, *want;
		size_t used;
	} cases[] = {
	    {"42,", "4:42 ", 2},
	    {"-7}", "4:-7 ", 2},
	    {"18446744073709551615", "3:-1 ", 20},
	    {"1.5e3", "5:1500 ", 5},
	    {"99999999999999999999", "5:1e+20 ", 20},
	    {"true", "2:1 ", 4},
	    {"false ", "2:0 ", 5},
	    {"null", "8:'null' ", 4},
	    {"\"0xff\"", "7:255 ", 6},
	    {"\"0xfg\"", "6:'0xfg' ", 6},
	    {"\"a\\n\\u00e9\\ud83d\\ude00\"", "6:'a\n\xc3\xa9\xf0\x9f\x98\x80' ", 23},
	    {"[]", "8:'[]' ", 2},
	    {"{\"ab\":1,\"c\":[2,\"x\"]}", "9{1:2 4:1 } 9{1:1 10{4:2 } 10{6:'x' } } ", 20},
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(*cases); k++) {
		struct pb_json j = {.name_id = F_NAME,
		                    .boolean = F_BOOL,
		                    .uint = F_UINT,
		                    .sint = F_INT,
		                    .dbl = F_DBL,
		                    .string = F_STR,
		                    .pointer = F_PTR,
		                    .json = F_JSON,
		                    .dict = F_DICT,
		                    .array = F_ARRAY,
		                    .key = key_len};
		struct cut_pb b = {0};
		const char *end = pb_json_value(&j, &b, cases[k].json);
		char got[512] = "";
		show(b.s, b.s + b.len, got, sizeof(got));
		ck_assert_msg(strcmp(got, cases[k].want) == 0, "%s: got %s, want %s", cases[k].json,
		              got, cases[k].want);
		ck_assert_uint_eq((size_t)(end - cases[k].json), cases[k].used);
		pb_free(&b);
		pb_free(&j.keybuf);
		pb_free(&j.strbuf);
	}
}
END_TEST

/* Strings are UTF-8 on the wire: valid text as it is, a byte that begins no valid sequence
 * (a name cut inside a character, a stray byte) as U+FFFD; an empty message appends nothing
 * (and reads no NULL). */
START_TEST(test_strings)
{
	static const struct {
		const char *s, *want;
	} cases[] = {
	    {"", ""},
	    {"plain", "plain"},
	    {"\xc3\xa9t\xc3\xa9", "\xc3\xa9t\xc3\xa9"},
	    {"cut \xc3", "cut \xef\xbf\xbd"},
	    {"\xe2\x82", "\xef\xbf\xbd\xef\xbf\xbd"},
	    {"a\xff"
	     "b\xed\xa0\x80"
	     "c",
	     "a\xef\xbf\xbd"
	     "b\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
	     "c"},
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(*cases); k++) {
		struct cut_pb b = {0}, empty = {0};
		pb_string(&b, 2, cases[k].s);
		pb_append(&b, &empty);
		const uint8_t *p = b.s;
		ck_assert_uint_eq(get_varint(&p), 2 << 3 | PB_LEN);
		uint64_t n = get_varint(&p);
		ck_assert_uint_eq(n, strlen(cases[k].want));
		ck_assert_msg(memcmp(p, cases[k].want, n) == 0, "case %zu", k);
		ck_assert_ptr_eq(p + n, b.s + b.len);
		pb_free(&b);
	}
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("pb");
	TCase *tc = tcase_create("pb");
	tcase_add_test(tc, test_varints);
	tcase_add_test(tc, test_nested);
	tcase_add_test(tc, test_json);
	tcase_add_test(tc, test_strings);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
