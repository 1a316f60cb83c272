/* inflate.h: the bytes of an input, plain or compressed with gzip or zstd. The compression is
 * known by the first bytes (the formats' magic numbers), so a file's name and standard input
 * make no difference; concatenated gzip members and zstd frames read as one stream. */
#ifndef CUT_INFLATE_H
#define CUT_INFLATE_H

#include <stddef.h>
#include <sys/types.h>

struct cut_inflate;

/* Starts reading file descriptor fd (not closed by cut_inflate_free). Returns NULL when
 * memory runs out. */
struct cut_inflate *cut_inflate_new(int fd);
/*
 * Reads up to n (> 0) bytes of plain data into buf. Returns how many, 0 at the end of the
 * input, or -1 on an error: a read error (errno set, why empty), or compressed data that is
 * corrupt or ends before its last frame does (why says which, in nwhy bytes). After an
 * error, reading must stop.
 */
ssize_t cut_inflate_read(struct cut_inflate *z, void *buf, size_t n, char *why, size_t nwhy);
/* "gzip", "zstd", or NULL for plain input (or before the first read). */
const char *cut_inflate_kind(const struct cut_inflate *z);
void cut_inflate_free(struct cut_inflate *z);

#endif
