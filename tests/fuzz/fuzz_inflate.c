/* fuzz_inflate: libFuzzer harness for compressed input (share/lib/inflate) and output
 * (share/lib/deflate). Each input is read as a file by cut_inflate as it is (plain, or gzip or
 * zstd by its first bytes: corrupt data must end in an error, never a crash or a hang); then
 * compressed in two pieces (gzip and zstd, split at a point the input chooses) and read back,
 * which must give the input exactly, and read back cut short, which must give a prefix of it
 * and then an error (or, cut right after the first piece, that piece's data and a clean end),
 * followed by a stray byte, which must give it all and then an error (trailing garbage), and
 * after a zstd skippable frame, which must read as nothing. Any disagreement aborts. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "buf.h"
#include "deflate.h"
#include "inflate.h"

static void
fail(const char *what)
{
	fprintf(stderr, "fuzz_inflate: %s\n", what);
	abort();
}

/* Reads all of the n bytes at data through cut_inflate into out. Returns 0 at a clean end,
 * -1 after an error (with why set). */
static int
read_all(const void *data, size_t n, struct cut_buf *out, size_t step)
{
	int fd = memfd_create("fuzz", 0);
	if (fd < 0 || (n && write(fd, data, n) != (ssize_t)n) || lseek(fd, 0, SEEK_SET) < 0)
		fail("memfd");
	struct cut_inflate *z = cut_inflate_new(fd);
	char why[160];
	int rc = 0;
	buf_reset(out);
	for (size_t reads = 0;; reads++) {
		char *p = buf_room(out, step);
		ssize_t k = cut_inflate_read(z, p, step, why, sizeof(why));
		if (k < 0) {
			rc = -1;
			break;
		}
		if (k == 0)
			break;
		out->len += (size_t)k;
		if (out->len > (64u << 20))
			fail("more than 64 MiB out of a small input");
		if (reads > (1u << 24))
			fail("no end");
	}
	cut_inflate_free(z);
	close(fd);
	return rc;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct cut_buf out, packed;
	size_t step = 1 + (size ? data[0] % 64 : 0) * 1024;

	/* 1. as it is */
	int rc = read_all(data, size, &out, step);
	bool skippable =
	    size >= 4 && (data[0] & 0xf0) == 0x50 && memcmp(data + 1, "\x2a\x4d\x18", 3) == 0;
	if (rc == 0 && size >= 4 && !(data[0] == 0x1f && data[1] == 0x8b) && !skippable &&
	    memcmp(data, "\x28\xb5\x2f\xfd", 4) != 0 &&
	    (out.len != size || memcmp(out.s, data, size)))
		fail("plain input not read as it is");

	/* 2. compressed in two pieces, read back whole and cut short */
	size_t cut = size ? (size_t)data[size - 1] * size / 256 : 0;
	for (int kind = CUT_GZIP; kind <= CUT_ZSTD; kind++) {
		buf_reset(&packed);
		if (cut_compress_piece((enum cut_compress)kind, data, cut, &packed) < 0)
			fail("compress");
		size_t first = packed.len; /* a file cut there is whole: the first piece */
		if (cut_compress_piece((enum cut_compress)kind, data + cut, size - cut, &packed) <
		    0)
			fail("compress");
		if (read_all(packed.s, packed.len, &out, step) < 0)
			fail("own output not read back");
		if (out.len != size || (size && memcmp(out.s, data, size)))
			fail("round trip differs");
		/* a stray byte after the last piece: all the data, then an error (trailing
		 * garbage), not a piece cut short */
		buf_addc(&packed, 'x');
		if (read_all(packed.s, packed.len, &out, step) == 0)
			fail("trailing garbage: no error");
		if (out.len != size || (size && memcmp(out.s, data, size)))
			fail("trailing garbage: the data before it differs");
		packed.len--;
		/* a skippable frame first (pzstd's): read as nothing */
		if (kind == CUT_ZSTD) {
			static struct cut_buf skip;
			unsigned char head[12] = {0x50 | (size ? data[0] & 15 : 0),
			                          0x2a,
			                          0x4d,
			                          0x18,
			                          4,
			                          0,
			                          0,
			                          0,
			                          'p',
			                          'z',
			                          's',
			                          't'};
			buf_reset(&skip);
			buf_add(&skip, (const char *)head, sizeof(head));
			buf_add(&skip, packed.s, packed.len);
			if (read_all(skip.s, skip.len, &out, step) < 0)
				fail("skippable frame: not read");
			if (out.len != size || (size && memcmp(out.s, data, size)))
				fail("skippable frame: the data differs");
		}
		size_t short_len = packed.len ? (size_t)(data[0] ^ 0x5a) * packed.len / 256 : 0;
		if (short_len >= 4 && short_len < packed.len) { /* shorter: no magic, plain */
			rc = read_all(packed.s, short_len, &out, step);
			if (out.len > size || (out.len && memcmp(out.s, data, out.len)))
				fail("cut short: not a prefix");
			if (rc == 0 && short_len != first && short_len > 0)
				fail("cut short inside a piece: no error");
			if (short_len == first && (rc != 0 || out.len != cut))
				fail("cut after the first piece: not its data");
		}
	}
	return 0;
}
