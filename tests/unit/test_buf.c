/* test_buf.c: the direct-write number formatters of buf.c (buf_put_i64, buf_put_hex) and the
 * buf_add* functions built on them, at every digit-count boundary; object keys (buf_addkey). */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "buf.h"
#include "check_main.h"

START_TEST(test_put_i64)
{
	int64_t v[64];
	size_t n = 0;
	v[n++] = 0;
	v[n++] = INT64_MAX;
	v[n++] = INT64_MIN;
	v[n++] = INT64_MIN + 1;
	for (int64_t p = 1; p <= INT64_MAX / 10; p *= 10) {
		v[n++] = p;
		v[n++] = p - 1;
		v[n++] = -p;
	}
	v[n++] = 1000000000000000000;
	for (size_t i = 0; i < n; i++) {
		char want[32], got[32];
		snprintf(want, sizeof(want), "%" PRId64, v[i]);
		char *end = buf_put_i64(got, v[i]);
		*end = 0;
		ck_assert_str_eq(got, want);
		struct cut_buf b = {0};
		buf_adds(&b, "x");
		buf_addi64(&b, v[i]);
		ck_assert_str_eq(b.s + 1, want);
		ck_assert_uint_eq(b.len, strlen(want) + 1);
		buf_free(&b);
	}
}
END_TEST

START_TEST(test_put_hex)
{
	static const uint64_t v[] = {
	    0, 1, 0xf, 0x10, 0xff, 0x100, 0x7000000000, UINT64_MAX, 0x8000000000000000ull};
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		char want[32], got[32];
		snprintf(want, sizeof(want), "\"0x%" PRIx64 "\"", v[i]);
		*buf_put_hex(got, v[i]) = 0;
		ck_assert_str_eq(got, want);
		struct cut_buf b = {0};
		buf_addhex(&b, v[i]);
		ck_assert_str_eq(b.s, want);
		buf_free(&b);
	}
}
END_TEST

START_TEST(test_room)
{
	struct cut_buf b = {0};
	char *p = buf_try_room(&b, 1000);
	ck_assert_ptr_nonnull(p);
	memset(p, 'a', 1000);
	buf_commit(&b, p + 1000);
	ck_assert_uint_eq(b.len, 1000);
	ck_assert_uint_eq(strlen(b.s), 1000);
	p = buf_room(&b, 3);
	memcpy(p, "xyz", 3);
	buf_commit(&b, p + 3);
	ck_assert_uint_eq(b.len, 1003);
	ck_assert_str_eq(b.s + 1000, "xyz");
	ck_assert_uint_eq(buf_digits[2 * 42], '4');
	ck_assert_uint_eq(buf_digits[2 * 42 + 1], '2');
	buf_free(&b);
}
END_TEST

/* A key opens the object or follows a member; a plain key is copied, any other escaped. */
START_TEST(test_addkey)
{
	struct cut_buf b = {0};
	buf_addkey(&b, "corr");
	buf_addi64(&b, 7);
	buf_addkey(&b, "a\"b\\c\n");
	buf_addc(&b, '{');
	buf_addkey(&b, "");
	buf_addi64(&b, 1);
	buf_addkey(&b, "caf\xc3\xa9");
	buf_adds(&b, "2}}");
	ck_assert_str_eq(b.s, "{\"corr\":7,\"a\\\"b\\\\c\\n\":{\"\":1,\"caf\xc3\xa9\":2}}");
	ck_assert_uint_eq(b.len, strlen(b.s));
	buf_free(&b);
	/* a long key makes the buffer grow */
	char key[600];
	memset(key, 'k', sizeof(key) - 1);
	key[sizeof(key) - 1] = '\0';
	buf_addkey(&b, key);
	ck_assert_uint_eq(b.len, 1 + 2 + 599 + 1);
	ck_assert_int_eq(b.s[b.len - 1], ':');
	ck_assert_int_eq(b.s[b.len - 2], '"');
	buf_free(&b);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("buf");
	TCase *tc = tcase_create("buf");
	tcase_add_test(tc, test_put_i64);
	tcase_add_test(tc, test_put_hex);
	tcase_add_test(tc, test_room);
	tcase_add_test(tc, test_addkey);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
