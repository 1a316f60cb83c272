/* classify.c: driver API function -> category and flags, looked up in the generated sorted
 * table; the collective kernels' rule. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "classify.h"
#include "event.h"

struct api_entry {
	const char *name;
	enum cut_category cat;
	unsigned flags;
};

/* Generated from share/data/api-categories.tsv, sorted by strcmp. */
#include "api_categories.h"

static const char *const category_names[CUT_NCATS] = {
    "init",   "context", "device", "memory", "transfer", "launch", "sync",
    "stream", "event",   "module", "graph",  "query",    "other",
};

const char *
cut_category_name(enum cut_category c)
{
	return (unsigned)c < CUT_NCATS ? category_names[c] : "other";
}

int
cut_category_from_name(const char *s)
{
	enum cut_category c;
	switch (s[0]) {
	case 'i': c = CUT_CAT_INIT; break;
	case 'c': c = CUT_CAT_CONTEXT; break;
	case 'd': c = CUT_CAT_DEVICE; break;
	case 'm': c = s[1] == 'e' ? CUT_CAT_MEMORY : CUT_CAT_MODULE; break;
	case 't': c = CUT_CAT_TRANSFER; break;
	case 'l': c = CUT_CAT_LAUNCH; break;
	case 's': c = s[1] == 'y' ? CUT_CAT_SYNC : CUT_CAT_STREAM; break;
	case 'e': c = CUT_CAT_EVENT; break;
	case 'g': c = CUT_CAT_GRAPH; break;
	case 'q': c = CUT_CAT_QUERY; break;
	case 'o': c = CUT_CAT_OTHER; break;
	default: return -1;
	}
	return strcmp(s, category_names[c]) == 0 ? (int)c : -1;
}

static int
cmp_entry(const void *key, const void *elem)
{
	return strcmp(key, ((const struct api_entry *)elem)->name);
}

static const struct api_entry *
lookup(const char *name)
{
	return bsearch(name, api_table, sizeof(api_table) / sizeof(api_table[0]),
	               sizeof(api_table[0]), cmp_entry);
}

/* Strips one version suffix ("_ptsz", "_ptds", "_v<digits>") in place; false if none. */
static int
strip_suffix(char *s)
{
	size_t n = strlen(s);
	if (n > 5 && (strcmp(s + n - 5, "_ptsz") == 0 || strcmp(s + n - 5, "_ptds") == 0)) {
		s[n - 5] = '\0';
		return 1;
	}
	char *u = strrchr(s, '_');
	if (u && u[1] == 'v' && u[2] && strspn(u + 2, "0123456789") == strlen(u + 2)) {
		*u = '\0';
		return 1;
	}
	return 0;
}

/* The entry of func, else of func without its version suffixes; NULL when none. */
static const struct api_entry *
find(const char *func)
{
	const struct api_entry *e = lookup(func);
	if (e)
		return e;
	char tmp[128];
	if (strlen(func) >= sizeof(tmp))
		return NULL;
	strcpy(tmp, func);
	while (strip_suffix(tmp))
		if ((e = lookup(tmp)))
			return e;
	return NULL;
}

int
cut_api_category_find(const char *func)
{
	const struct api_entry *e = find(func);
	return e ? (int)e->cat : -1;
}

unsigned
cut_api_flags(const char *func)
{
	const struct api_entry *e = find(func);
	return e ? e->flags : 0;
}

enum cut_category
cut_api_category_id(const char *func)
{
	int c = cut_api_category_find(func);
	return c < 0 ? CUT_CAT_OTHER : (enum cut_category)c;
}

const char *
cut_api_category(const char *func)
{
	return category_names[cut_api_category_id(func)];
}

size_t
cut_api_table_size(void)
{
	return sizeof(api_table) / sizeof(api_table[0]);
}

const char *
cut_api_table_name(size_t i)
{
	return i < cut_api_table_size() ? api_table[i].name : NULL;
}

/* The collectives, a name before any that starts it (ReduceScatter before Reduce). */
static const char *const collectives[] = {
    "AllGather",     "AllReduce", "AllToAllPivot", "AllToAll", "Broadcast", "Gather",
    "ReduceScatter", "Reduce",    "Scatter",       "SendRecv", "Send",      "Recv",
};

static bool
is_letter(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* The collective whose name starts s[0, n); NULL when none. When whole, the name must be all
 * of the word (letters and digits) that starts s. */
static const char *
collective_at(const char *s, size_t n, bool whole)
{
	for (size_t i = 0; i < sizeof(collectives) / sizeof(collectives[0]); i++) {
		size_t k = strlen(collectives[i]);
		if (k > n || strncmp(s, collectives[i], k) != 0)
			continue;
		if (!whole || k == n || !(is_letter(s[k]) || (s[k] >= '0' && s[k] <= '9')))
			return collectives[i];
	}
	return NULL;
}

const char *
cut_collective(const char *name)
{
	if (!name)
		return NULL;
	const char *id = name;
	size_t n = SIZE_MAX; /* the identifier's length: to the end unless mangled */
	if (name[0] == '_' && name[1] == 'Z') {
		const char *p = name + 2 + (name[2] == 'L');
		if (*p >= '0' && *p <= '9') {
			size_t len = 0;
			for (; *p >= '0' && *p <= '9'; p++)
				len = len > (SIZE_MAX - 9) / 10 ? SIZE_MAX
				                                : len * 10 + (size_t)(*p - '0');
			id = p, n = len;
		}
	}
	size_t len = strnlen(id, n);
	if (len < 4 || (strncmp(id, "nccl", 4) != 0 && strncmp(id, "rccl", 4) != 0))
		return NULL;
	size_t word = 4;
	while (word < len && is_letter(id[word]))
		word++;
	if (word < 10 || strncmp(id + word - 6, "Kernel", 6) != 0)
		return NULL;
	const char *c = NULL;
	if (word < len && id[word] == '_')
		c = collective_at(id + word + 1, len - word - 1, true);
	if (!c) /* NCCL 2.7: ncclAllReduceRingLLKernel_sum_f32 */
		c = collective_at(id + 4, word - 10, false);
	return c ? c : "collective";
}

bool
cut_is_collective(const char *name)
{
	return cut_collective(name) != NULL;
}

bool
cut_is_ioctl_call(const struct cut_event *ev)
{
	if (ev->args)
		return cut_args_find(ev->args, "cmd") != NULL;
	return strcmp(ev->name, "open") && strcmp(ev->name, "openat") &&
	       strcmp(ev->name, "close") && strcmp(ev->name, "mmap") && strcmp(ev->name, "munmap");
}
