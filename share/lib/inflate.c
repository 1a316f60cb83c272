/* inflate.c: plain, gzip (zlib) or zstd (libzstd) input by magic number; after each member
 * or frame, another must start (zstd's skippable frames are frames), else the rest is
 * trailing garbage. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "inflate.h"

enum kind { UNKNOWN, PLAIN, GZIP, ZSTD };

struct cut_inflate {
	int fd;
	enum kind kind;
	unsigned char *in; /* compressed bytes read and not yet used: in[pos, len) */
	size_t pos, len, cap;
	bool eof;   /* read(2) said end of file */
	bool ended; /* the last member or frame is complete */
	z_stream gz;
	bool gz_init;
	ZSTD_DStream *zs;
	char error[128]; /* an error met after some data: said on the next read */
};

struct cut_inflate *
cut_inflate_new(int fd)
{
	struct cut_inflate *z = calloc(1, sizeof(*z));
	if (!z)
		return NULL;
	z->fd = fd;
	z->cap = 1 << 17;
	if (!(z->in = malloc(z->cap))) {
		free(z);
		return NULL;
	}
	return z;
}

void
cut_inflate_free(struct cut_inflate *z)
{
	if (!z)
		return;
	if (z->gz_init)
		inflateEnd(&z->gz);
	ZSTD_freeDStream(z->zs);
	free(z->in);
	free(z);
}

const char *
cut_inflate_kind(const struct cut_inflate *z)
{
	return z->kind == GZIP ? "gzip" : z->kind == ZSTD ? "zstd" : NULL;
}

/* Reads more compressed bytes after those not yet used. Returns -1 on a read error. */
static int
fill(struct cut_inflate *z)
{
	if (z->pos > 0) {
		memmove(z->in, z->in + z->pos, z->len - z->pos);
		z->len -= z->pos;
		z->pos = 0;
	}
	ssize_t n;
	do
		n = read(z->fd, z->in + z->len, z->cap - z->len);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;
	if (n == 0)
		z->eof = true;
	z->len += (size_t)n;
	return 0;
}

static const unsigned char gzip_magic[] = {0x1f, 0x8b}, zstd_magic[] = {0x28, 0xb5, 0x2f, 0xfd};

/* Whether the n bytes at p start a zstd frame: a frame's magic number, or a skippable
 * frame's (0x184D2A50 to 0x184D2A5F, little-endian: pzstd writes one before its frames). */
static bool
is_zstd(const unsigned char *p, size_t n)
{
	return n >= 4 && (memcmp(p, zstd_magic, 4) == 0 ||
	                  ((p[0] & 0xf0) == 0x50 && p[1] == 0x2a && p[2] == 0x4d && p[3] == 0x18));
}

/* Whether the n bytes at p could be the start of a frame or member of this kind, the rest of
 * it missing. */
static bool
starts_like(const struct cut_inflate *z, const unsigned char *p, size_t n)
{
	static const unsigned char skippable[] = {0x50, 0x2a, 0x4d, 0x18};
	if (z->kind == GZIP)
		return n < 2 && memcmp(p, gzip_magic, n) == 0;
	return n < 4 && (memcmp(p, zstd_magic, n) == 0 ||
	                 ((p[0] & 0xf0) == 0x50 && memcmp(p + 1, skippable + 1, n - 1) == 0));
}

/* The first bytes say what the input is. */
static int
detect(struct cut_inflate *z, char *why, size_t nwhy)
{
	while (z->len < 4 && !z->eof)
		if (fill(z) < 0)
			return -1;
	if (z->len >= 2 && memcmp(z->in, gzip_magic, 2) == 0) {
		if (inflateInit2(&z->gz, 15 + 16) != Z_OK) {
			errno = ENOMEM;
			return -1;
		}
		z->gz_init = true;
		z->kind = GZIP;
	} else if (is_zstd(z->in, z->len)) {
		if (!(z->zs = ZSTD_createDStream()) || ZSTD_isError(ZSTD_initDStream(z->zs))) {
			errno = ENOMEM;
			return -1;
		}
		z->kind = ZSTD;
	} else {
		z->kind = PLAIN;
	}
	(void)why, (void)nwhy;
	return 0;
}

/* One step of decompression of what input there is into buf. Returns the bytes made, or -1
 * with why set. */
static ssize_t
step(struct cut_inflate *z, void *buf, size_t n, char *why, size_t nwhy)
{
	if (z->kind == GZIP) {
		if (z->ended && z->pos < z->len) /* another member follows (next_frame) */
			inflateReset(&z->gz);
		z->gz.next_in = z->in + z->pos;
		z->gz.avail_in = (uInt)(z->len - z->pos);
		z->gz.next_out = buf;
		z->gz.avail_out = n > UINT32_MAX ? UINT32_MAX : (uInt)n;
		uInt avail = z->gz.avail_out;
		int rc = inflate(&z->gz, Z_NO_FLUSH);
		size_t used = (z->len - z->pos) - z->gz.avail_in;
		z->pos += used;
		if (rc == Z_STREAM_END)
			z->ended = true;
		else if (rc == Z_OK)
			z->ended = false;
		else if (rc != Z_BUF_ERROR) {
			snprintf(why, nwhy, "corrupt gzip data: %s",
			         z->gz.msg ? z->gz.msg : zError(rc));
			if (avail == z->gz.avail_out)
				return -1;
			/* the data before the error is good: kept */
			snprintf(z->error, sizeof(z->error), "%s", why);
			why[0] = '\0';
		}
		return (ssize_t)(avail - z->gz.avail_out);
	}
	ZSTD_inBuffer in = {z->in + z->pos, z->len - z->pos, 0};
	ZSTD_outBuffer out = {buf, n, 0};
	size_t rc = ZSTD_decompressStream(z->zs, &out, &in);
	z->pos += in.pos;
	if (ZSTD_isError(rc) && ZSTD_getErrorCode(rc) == ZSTD_error_frameParameter_windowTooLarge) {
		/* not corrupt: written with zstd --long, which zstd itself will not read
		 * without --long or --memory either */
		snprintf(why, nwhy,
		         "zstd data with a window over the 128 MiB libzstd allows "
		         "(written with zstd --long): not read; decompress it with "
		         "zstd -d --long=31");
		if (!out.pos)
			return -1;
		snprintf(z->error, sizeof(z->error), "%s", why);
		why[0] = '\0';
	} else if (ZSTD_isError(rc)) {
		snprintf(why, nwhy, "corrupt zstd data: %s", ZSTD_getErrorName(rc));
		if (!out.pos)
			return -1;
		snprintf(z->error, sizeof(z->error), "%s", why);
		why[0] = '\0';
	}
	if (in.pos || out.pos)
		z->ended = rc == 0;
	return (ssize_t)out.pos;
}

/* After a whole frame or member, what follows must start another: bytes that cannot are
 * trailing garbage, and a start of one cut off is a frame cut short. Returns 0 when another
 * follows or the input ends here, -1 with why set otherwise. */
static int
next_frame(struct cut_inflate *z, char *why, size_t nwhy)
{
	size_t need = z->kind == GZIP ? 2 : 4;
	while (z->len - z->pos < need && !z->eof)
		if (fill(z) < 0)
			return -1;
	const unsigned char *p = z->in + z->pos;
	size_t have = z->len - z->pos;
	if (!have)
		return 0;
	if (z->kind == GZIP ? have >= 2 && memcmp(p, gzip_magic, 2) == 0 : is_zstd(p, have))
		return 0;
	if (starts_like(z, p, have))
		snprintf(why, nwhy, "%s data cut short: the input ends inside a %s",
		         cut_inflate_kind(z), z->kind == GZIP ? "member" : "frame");
	else
		snprintf(why, nwhy, "trailing garbage after the %s data: not read",
		         cut_inflate_kind(z));
	return -1;
}

ssize_t
cut_inflate_read(struct cut_inflate *z, void *buf, size_t n, char *why, size_t nwhy)
{
	why[0] = '\0';
	if (z->kind == UNKNOWN && detect(z, why, nwhy) < 0)
		return -1;
	if (z->kind == PLAIN) {
		if (z->pos < z->len) { /* what detect read */
			size_t k = z->len - z->pos < n ? z->len - z->pos : n;
			memcpy(buf, z->in + z->pos, k);
			z->pos += k;
			return (ssize_t)k;
		}
		ssize_t k;
		do
			k = read(z->fd, buf, n);
		while (k < 0 && errno == EINTR);
		return k;
	}
	if (z->error[0]) {
		snprintf(why, nwhy, "%s", z->error);
		return -1;
	}
	/* in steps small enough that the data before a corrupt block is read before the
	 * error breaks the input off (libzstd makes nothing of a call that fails) */
	if (n > 1 << 16)
		n = 1 << 16;
	for (;;) {
		if (z->pos == z->len && !z->eof && fill(z) < 0)
			return -1;
		if (z->ended && z->pos < z->len && next_frame(z, why, nwhy) < 0) {
			if (why[0])
				snprintf(z->error, sizeof(z->error), "%s", why);
			return -1;
		}
		ssize_t k = step(z, buf, n, why, nwhy);
		if (k != 0)
			return k;
		if (z->pos == z->len && z->eof) {
			if (z->ended)
				return 0;
			snprintf(why, nwhy, "%s data cut short: the input ends inside a %s",
			         cut_inflate_kind(z), z->kind == GZIP ? "member" : "frame");
			return -1;
		}
	}
}
