/* idmap.h: integer keys (a thread id, a pid and a handle) to small dense indices, so tools keep
 * per-key data in plain arrays. Open addressing, linear probing, deletion without tombstones. */
#ifndef CUT_IDMAP_H
#define CUT_IDMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What idmap_get returns for a key that is not in the map. */
#define IDMAP_NONE ((size_t)-1)

struct cut_idmap;

/* A new empty map. Exits with status 2 when memory runs out. */
struct cut_idmap *idmap_new(void);
void idmap_free(struct cut_idmap *m);

/*
 * Index of the key pair (a, b), inserting it when absent (then *isnew is true; isnew may be
 * NULL). A new key takes the index deleted last and not yet reused, else the next unused one
 * (0, 1, 2... in insertion order while nothing is deleted), so indices stay below
 * idmap_span(). Exits with status 2 when memory runs out.
 */
size_t idmap_put2(struct cut_idmap *m, int64_t a, int64_t b, bool *isnew);
/* Index of (a, b), or IDMAP_NONE when absent. */
size_t idmap_get2(const struct cut_idmap *m, int64_t a, int64_t b);
/* Removes (a, b). Returns the index it had, free for the next new key, or IDMAP_NONE when
 * absent. Other keys keep their indices. */
size_t idmap_del2(struct cut_idmap *m, int64_t a, int64_t b);

/* The same for a single key (the pair (key, 0)). */
size_t idmap_put(struct cut_idmap *m, int64_t key, bool *isnew);
size_t idmap_get(const struct cut_idmap *m, int64_t key);
size_t idmap_del(struct cut_idmap *m, int64_t key);

/* Keys in the map. */
size_t idmap_len(const struct cut_idmap *m);
/* One more than the largest index ever given: the length arrays indexed by the map need. */
size_t idmap_span(const struct cut_idmap *m);

#endif
