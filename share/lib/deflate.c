/* deflate.c: gzip (zlib) and zstd (libzstd) pieces of output. */
#include <string.h>

#include <zlib.h>
#include <zstd.h>

#include "deflate.h"

enum cut_compress
cut_compress_of(const char *path)
{
	size_t n = path ? strlen(path) : 0;
	if (n > 3 && strcmp(path + n - 3, ".gz") == 0)
		return CUT_GZIP;
	if (n > 4 && strcmp(path + n - 4, ".zst") == 0)
		return CUT_ZSTD;
	return CUT_PLAIN;
}

static int
gzip_piece(const void *s, size_t n, struct cut_buf *out)
{
	z_stream z;
	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -1;
	int rc = Z_OK;
	z.next_in = (Bytef *)s;
	while (rc == Z_OK) {
		size_t room = deflateBound(&z, n) + 64;
		char *p = buf_try_room(out, room);
		if (!p) {
			deflateEnd(&z);
			return -1;
		}
		/* zlib counts in uInt: a piece of 4 GiB or more goes in parts */
		size_t left = n - (size_t)((const char *)z.next_in - (const char *)s);
		z.avail_in = left > (1u << 30) ? 1u << 30 : (uInt)left;
		z.next_out = (Bytef *)p;
		z.avail_out = room > (1u << 30) ? 1u << 30 : (uInt)room;
		uInt avail = z.avail_out;
		rc = deflate(&z, left > z.avail_in ? Z_NO_FLUSH : Z_FINISH);
		out->len += avail - z.avail_out;
		out->s[out->len] = '\0';
		if (rc == Z_BUF_ERROR)
			rc = Z_OK;
	}
	deflateEnd(&z);
	return rc == Z_STREAM_END ? 0 : -1;
}

static int
zstd_piece(const void *s, size_t n, struct cut_buf *out)
{
	static ZSTD_CCtx *cx;
	if (!cx) {
		if (!(cx = ZSTD_createCCtx()))
			return -1;
		ZSTD_CCtx_setParameter(cx, ZSTD_c_compressionLevel, 3);
		ZSTD_CCtx_setParameter(cx, ZSTD_c_checksumFlag, 1);
	}
	size_t room = ZSTD_compressBound(n);
	char *p = buf_try_room(out, room);
	if (!p)
		return -1;
	size_t k = ZSTD_compress2(cx, p, room, s, n);
	if (ZSTD_isError(k))
		return -1;
	out->len += k;
	out->s[out->len] = '\0';
	return 0;
}

int
cut_compress_piece(enum cut_compress c, const void *s, size_t n, struct cut_buf *out)
{
	switch (c) {
	case CUT_GZIP: return gzip_piece(s, n, out);
	case CUT_ZSTD: return zstd_piece(s, n, out);
	default:
		if (!buf_try_room(out, n))
			return -1;
		memcpy(out->s + out->len, s, n);
		out->len += n;
		out->s[out->len] = '\0';
		return 0;
	}
}
