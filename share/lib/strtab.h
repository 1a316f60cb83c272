/* strtab.h: a string interning table: each distinct string gets a small stable index, so
 * tools keep per-name data in plain arrays. */
#ifndef CUT_STRTAB_H
#define CUT_STRTAB_H

#include <stddef.h>

struct cut_strtab;

struct cut_strtab *strtab_new(void);
void strtab_free(struct cut_strtab *t);
/* Index of key, inserting a copy when absent (indices count up from 0 in insertion order).
 * Exits with status 2 when memory runs out. */
size_t strtab_intern(struct cut_strtab *t, const char *key);
/* Index of key, or (size_t)-1 when absent. */
size_t strtab_find(const struct cut_strtab *t, const char *key);
/* The string at index i. */
const char *strtab_key(const struct cut_strtab *t, size_t i);
/* Number of strings. */
size_t strtab_len(const struct cut_strtab *t);

#endif
