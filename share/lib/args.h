/* args.h: reading single members of an event's "args" object (compact JSON text) without
 * building a DOM. */
#ifndef CUT_ARGS_H
#define CUT_ARGS_H

#include <stddef.h>
#include <stdint.h>

/* Start of the value of top-level key in args (an object's JSON text), or NULL when args is
 * NULL or lacks the key. */
const char *cut_args_find(const char *args, const char *key);
/* Reads key as an integer: a JSON integer, or a string holding a decimal or 0x-prefixed hex
 * number (how handles and pointers are written). Returns 0, or -1 when absent or not an
 * integer. */
int cut_args_int(const char *args, const char *key, int64_t *v);
/* Reads the value at p (where cut_args_find or cut_args_next found it; NULL: absent) as
 * cut_args_int reads a member. Returns 0, or -1 when it is not an integer. */
int cut_args_int_at(const char *p, int64_t *v);
/* The members of args in turn: p is args for the first, then what the last call returned.
 * Sets *key to the member's key as written (its *klen bytes after the opening quote, not
 * terminated) and *val to the start of its value; returns where the next member is looked
 * for, or NULL when there is none (or args is NULL or not an object). */
const char *cut_args_next(const char *p, const char **key, size_t *klen, const char **val);
/* Copies key's string value, unescaped and NUL-terminated, into out (truncated to fit).
 * Returns its full length, or -1 when absent or not a string. */
int cut_args_str(const char *args, const char *key, char *out, size_t outlen);
/* The escape at p (its backslash) of a JSON string: its code point into *cp (\\uD8xx\\uDCxx
 * pairs joined, a lone surrogate as U+FFFD); returns what follows it. */
const char *cut_json_escape(const char *p, uint32_t *cp);
/* Writes code point cp as UTF-8 at o (1 to 4 bytes); returns how many. */
size_t cut_utf8_put(char *o, uint32_t cp);

#endif
