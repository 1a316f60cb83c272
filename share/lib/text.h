/* text.h: trace strings made safe for where they are printed. A trace is input from a traced
 * program: its names may hold terminal escape sequences, newlines that would forge report
 * lines, or commas and quotes that would break a CSV row. */
#ifndef CUT_TEXT_H
#define CUT_TEXT_H

#include <stddef.h>

#include "buf.h"

/*
 * Appends the n bytes of s to b so that they print as one line of visible text: printable
 * ASCII and valid UTF-8 pass; a backslash becomes "\\"; newline, tab and carriage return
 * become "\n", "\t", "\r"; other control bytes, DEL and bytes that are not valid UTF-8 become
 * "\xHH"; the C1 controls and the Unicode characters that reorder or break lines (bidi
 * embeddings, overrides and isolates, U+2028, U+2029) become "\u{XXXX}".
 */
void cut_text_escape(struct cut_buf *b, const char *s, size_t n);
/*
 * The escaped form of a NUL-terminated string (NULL gives ""), for printf arguments. The
 * result lives in one of 8 buffers used in turn: it stays valid for the next 7 calls of
 * cut_esc and cut_csv (not thread-safe: for the tools, not libcuthook).
 */
const char *cut_esc(const char *s);
/*
 * Appends s as one CSV field (RFC 4180), escaped first as by cut_text_escape (so no control
 * character, line break or bidi control reaches the file, and a backslash is doubled): quoted
 * when it holds a comma or a double quote, or starts or ends with a space; quotes doubled. A
 * field that a spreadsheet would take for a formula (first character = + - @) gets a leading
 * apostrophe, as OWASP recommends, and is quoted.
 */
void cut_csv_field(struct cut_buf *b, const char *s, size_t n);
/* The CSV field of a NUL-terminated string, in the buffers of cut_esc. */
const char *cut_csv(const char *s);

#endif
