/* output.h: cutcapture's trace output: whole lines written in large pieces, and a file cut
 * back to its last whole line when a write fails. One output per process. */
#ifndef CUT_CAPTURE_OUTPUT_H
#define CUT_CAPTURE_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>

/* Writes to fd (which stays open), afresh after an out_close. Exits with status 2 when memory
 * runs out. */
void out_open(int fd);
/* Compresses the output as name's suffix asks (".gz", ".zst": cut_compress_of), a gzip member
 * or zstd frame for each piece written; call after out_open. */
void out_compress(const char *name);
/* Appends len bytes of whole lines. Nothing is written once a write has failed. */
void out_add(const char *s, size_t len);
/* Writes out what is buffered. Returns 0, or the errno of the first write that failed: from
 * then on nothing more is written. */
int out_flush(void);
/* The errno of the first failed write, 0 while none. */
int out_error(void);
/* Flushes and lets go of the output. After a failed write a regular file is cut back to its
 * last whole line: *whole is set when it ends there (cut, or its last write ended a line).
 * Returns as out_flush. Safe to call when out_open was not. */
int out_close(bool *whole);
/* Frees the buffer without writing it (a capture that stopped before out_close). */
void out_free(void);

#endif
