/* deflate.h: compressed output, as pieces that each stand alone: every piece is one complete
 * gzip member or zstd frame (with its checksum), so a file of pieces is one valid .gz or .zst
 * file, and a writer stopped mid-way leaves every whole piece before it readable. */
#ifndef CUT_DEFLATE_H
#define CUT_DEFLATE_H

#include <stddef.h>

#include "buf.h"

enum cut_compress { CUT_PLAIN, CUT_GZIP, CUT_ZSTD };

/* The compression a file's name asks for: ".gz" gzip, ".zst" zstd, anything else (and
 * NULL) none. */
enum cut_compress cut_compress_of(const char *path);
/*
 * Appends the n bytes of s to out as one gzip member (level 1) or zstd frame (level 3), or
 * as they are for CUT_PLAIN. Returns 0, or -1 when memory runs out (out then holds what it
 * held). Not thread-safe: it keeps one zstd context for the process.
 */
int cut_compress_piece(enum cut_compress c, const void *s, size_t n, struct cut_buf *out);

#endif
