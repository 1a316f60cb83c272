/* fuzz_demangle: libFuzzer harness for the demangler, the shortening rule and the collective
 * rule. Each input is a name (an odd first byte makes it "_Z" and the rest, so that most
 * inputs reach the demangler). The demangled name must stay within its bound, a short form
 * within its width and in whole UTF-8 characters when the name is, and cut_collective must
 * agree with the regular expression of share/sql/events.sql's cut_is_collective. */
#include <regex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classify.h"
#include "demangle.h"

/* Whether s is well-formed UTF-8 as far as lengths go (no character cut short). */
static int
utf8_whole(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		int n = *p < 0x80 ? 0 : (*p & 0xe0) == 0xc0 ? 1 : (*p & 0xf0) == 0xe0 ? 2 : 3;
		if ((*p & 0xc0) == 0x80 || (*p & 0xf8) == 0xf8)
			return 0;
		for (p++; n--; p++)
			if ((*p & 0xc0) != 0x80)
				return 0;
	}
	return 1;
}

/* events.sql's rule: the identifier (after "_Z<n>" or "_ZL<n>", n bytes of what follows, all
 * of it when fewer or n is too large for a BIGINT) matched against its regular expression. */
static int
sql_rule(const char *name)
{
	static regex_t re;
	static int ready;
	if (!ready) {
		if (regcomp(&re, "^[nr]ccl[A-Za-z]*Kernel([^A-Za-z]|$)", REG_EXTENDED | REG_NOSUB))
			abort();
		ready = 1;
	}
	const char *id = name;
	size_t n = strlen(name);
	if (strncmp(name, "_Z", 2) == 0) {
		const char *p = name + 2 + (name[2] == 'L');
		if (*p >= '0' && *p <= '9') {
			const char *d = p;
			while (*p >= '0' && *p <= '9')
				p++;
			unsigned long long v = 0;
			int big = 0;
			for (const char *q = d; q < p; q++) {
				if (v > (9223372036854775807ULL - 9) / 10)
					big = 1;
				v = v * 10 + (unsigned long long)(*q - '0');
			}
			id = p;
			n = strlen(p);
			if (!big && v < n)
				n = (size_t)v;
		}
	}
	char *s = strndup(id, n);
	if (!s)
		abort();
	int m = regexec(&re, s, 0, NULL, 0) == 0;
	free(s);
	return m;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int mangle = size && (data[0] & 1) && !(size >= 2 && data[0] == '_' && data[1] == 'Z');
	char *name = malloc(size + 3);
	if (!name)
		return 0;
	size_t k = 0;
	if (mangle)
		name[k++] = '_', name[k++] = 'Z';
	for (size_t i = mangle; i < size; i++)
		if (data[i]) /* a name is a C string */
			name[k++] = (char)data[i];
	name[k] = '\0';

	const char *d = cut_demangle(name);
	if (!d || (d != name && (strlen(d) > 64 * strlen(name) || !*d))) {
		fprintf(stderr, "fuzz_demangle: %s gave %s\n", name, d ? d : "NULL");
		abort();
	}
	if (cut_demangle(name) != d) /* cached */
		abort();
	static const size_t widths[] = {1, 2, 7, 40, 160};
	for (size_t i = 0; i < sizeof(widths) / sizeof(widths[0]); i++) {
		const char *s = cut_name_short(d, widths[i]);
		if (cut_name_cols(s) > widths[i] || (utf8_whole(d) && !utf8_whole(s))) {
			fprintf(stderr, "fuzz_demangle: %s at %zu gave %s\n", d, widths[i], s);
			abort();
		}
	}
	if (cut_is_collective(name) != sql_rule(name)) {
		fprintf(stderr, "fuzz_demangle: %s: C rule %d, SQL rule %d\n", name,
		        cut_is_collective(name), sql_rule(name));
		abort();
	}
	cut_demangle_free();
	free(name);
	return 0;
}
