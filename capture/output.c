/* output.c: whole lines written in large pieces. The first failed write stops the output for
 * good (no gap in the middle of a trace); a regular file is then cut back to the end of the
 * last whole line it took. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cut.h"
#include "deflate.h"
#include "event.h"
#include "output.h"

#define OUT_PIECE (1 << 20)

static struct {
	int fd;
	char *buf;
	size_t len;
	int error;              /* errno of the first failed write, 0 while none */
	int64_t base;           /* offset of the first byte in the file; -1 when not seekable */
	uint64_t sent;          /* bytes the file took */
	uint64_t good;          /* of which up to the end of the last whole line */
	enum cut_compress kind; /* each piece a gzip member or zstd frame */
	struct cut_buf z;
} W = {.fd = -1};

void
out_compress(const char *name)
{
	W.kind = cut_compress_of(name);
	if (W.kind != CUT_PLAIN)
		W.base = -1; /* a compressed file is not cut back: its whole pieces read */
}

void
out_open(int fd)
{
	struct stat st;
	W.fd = fd;
	W.len = 0; /* a second output after out_close starts afresh */
	W.error = 0;
	W.sent = W.good = 0;
	W.kind = CUT_PLAIN;
	W.buf = cut_xmalloc(OUT_PIECE);
	W.base = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? lseek(fd, 0, SEEK_CUR) : -1;
}

static void
write_buf(void)
{
	size_t off = 0, len = W.len;
	const char *p = W.buf;
	if (W.kind != CUT_PLAIN) {
		buf_reset(&W.z);
		if (cut_compress_piece(W.kind, W.buf, W.len, &W.z) < 0)
			W.error = ENOMEM;
		p = W.z.s, len = W.z.len;
	}
	while (off < len && !W.error) {
		ssize_t n = write(W.fd, p + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			W.error = n < 0 ? errno : EIO;
			break;
		}
		off += (size_t)n;
	}
	W.sent += off;
	/* Lines are whole in the buffer: the last newline the file took ends a whole line. */
	for (size_t i = off; i > 0 && W.kind == CUT_PLAIN; i--)
		if (W.buf[i - 1] == '\n') {
			W.good = W.sent - off + i;
			break;
		}
	W.len = 0;
}

void
out_add(const char *s, size_t n)
{
	if (W.error || !W.buf)
		return;
	if (W.len + n > OUT_PIECE)
		write_buf();
	if (n > OUT_PIECE) { /* never: records are far smaller */
		W.len = 0;
		while (n && !W.error) {
			size_t k = n < OUT_PIECE ? n : OUT_PIECE;
			memcpy(W.buf, s, k);
			W.len = k;
			write_buf();
			s += k;
			n -= k;
		}
		return;
	}
	memcpy(W.buf + W.len, s, n);
	W.len += n;
}

int
out_flush(void)
{
	if (!W.error && W.buf)
		write_buf();
	return W.error;
}

int
out_error(void)
{
	return W.error;
}

int
out_close(bool *whole)
{
	int e = out_flush();
	*whole = false;
	/* A file that took part of a line is cut back to its last whole line. One whose last
	 * write ended at a line's end (the size limit fell there, or the write that failed was
	 * the first of a piece) already ends at it. An empty file took no line. */
	if (e && W.base >= 0 && W.sent > 0)
		*whole =
		    W.good == W.sent || ftruncate(W.fd, (off_t)(W.base + (int64_t)W.good)) == 0;
	free(W.buf);
	W.buf = NULL;
	buf_free(&W.z);
	return e;
}

void
out_free(void)
{
	buf_free(&W.z);
	free(W.buf);
	W.buf = NULL;
}
