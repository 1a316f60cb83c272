/* classify.h: the category of every CUDA driver API function, from the one table
 * share/data/api-categories.tsv (compiled in at build time); and which kernels are
 * collectives. */
#ifndef CUT_CLASSIFY_H
#define CUT_CLASSIFY_H

#include <stdbool.h>
#include <stddef.h>

enum cut_category {
	CUT_CAT_INIT,
	CUT_CAT_CONTEXT,
	CUT_CAT_DEVICE,
	CUT_CAT_MEMORY,
	CUT_CAT_TRANSFER,
	CUT_CAT_LAUNCH,
	CUT_CAT_SYNC,
	CUT_CAT_STREAM,
	CUT_CAT_EVENT,
	CUT_CAT_MODULE,
	CUT_CAT_GRAPH,
	CUT_CAT_QUERY,
	CUT_CAT_OTHER,
	CUT_NCATS
};

/*
 * What a driver function does, as the table's third column says (its comment says more): tools
 * decide what a call means by these, never by its name.
 */
enum cut_api_flag {
	CUT_API_SUBMITS = 1 << 0,          /* puts work the device runs on a stream */
	CUT_API_KERNEL = 1 << 1,           /* launches one kernel: grid, block, stream */
	CUT_API_LAUNCH_CONFIG = 1 << 2,    /* ... given in a CUlaunchConfig */
	CUT_API_COPY = 1 << 3,             /* one copy */
	CUT_API_MEMSET = 1 << 4,           /* one memset */
	CUT_API_GRAPH = 1 << 5,            /* launches a graph */
	CUT_API_ENQUEUE = 1 << 6,          /* other work on a stream, or a wait it may make */
	CUT_API_CREATES_STREAM = 1 << 7,   /* creates a stream */
	CUT_API_CONTEXT_WAIT = 1 << 8,     /* every stream of a context waits */
	CUT_API_GREEN = 1 << 9,            /* its context is a green context */
	CUT_API_SYNCS_CONTEXT = 1 << 10,   /* the host learns a context's work is done */
	CUT_API_SYNCS_STREAM = 1 << 11,    /* ... a stream's */
	CUT_API_SYNCS_EVENT = 1 << 12,     /* ... an event's */
	CUT_API_RECORDS_EVENT = 1 << 13,   /* records an event on a stream */
	CUT_API_ALLOCATES = 1 << 14,       /* device memory: the dptr argument */
	CUT_API_FREES = 1 << 15,           /* device memory: the dptr argument */
	CUT_API_HTOD = 1 << 16,            /* a copy from host to device, by its name */
	CUT_API_DTOH = 1 << 17,            /* ... device to host */
	CUT_API_DTOD = 1 << 18,            /* ... device to device */
	CUT_API_CREATES_CONTEXT = 1 << 19, /* makes a context (a primary one: may) */
	CUT_API_INSTANTIATES_GRAPH = 1 << 20, /* makes a CUgraphExec of a CUgraph */
	CUT_API_DESTROYS_CONTEXT = 1 << 21,   /* ends the context it names */
	CUT_API_RESETS_CONTEXT = 1 << 22,     /* ends the primary context of the device it names */
	CUT_API_RETAINS_PRIMARY = 1 << 23,    /* takes a reference to a device's primary context */
	CUT_API_RELEASES_PRIMARY = 1 << 24,   /* gives one back: the last one ends the context */
};

/* Category name of a driver API function ("launch", ...). A name missing from the table is
 * looked up again without its version suffixes (_v2, _ptsz, _ptds...); failing that,
 * "other". Never NULL. */
const char *cut_api_category(const char *func);
/* The same as an enum. */
enum cut_category cut_api_category_id(const char *func);
/* The category of func (an enum cut_category) when the table has it, looked up as
 * cut_api_category does; -1 when it has not. The table holds driver API functions and, as
 * rows are added, runtime (cuda*) ones. */
int cut_api_category_find(const char *func);
const char *cut_category_name(enum cut_category c);
/* The flags (enum cut_api_flag, or-ed) of func, looked up as cut_api_category does; 0 when the
 * table has none for it or has not func. The runtime's (cuda*) rows have none. */
unsigned cut_api_flags(const char *func);
/* The category named s ("launch" -> CUT_CAT_LAUNCH), or -1 for none: by its first letters
 * and one compare, as tools ask it of every event that carries its "cat". */
int cut_category_from_name(const char *s);
/* Entries in the table, and the i-th function name (sorted), for tests and tools that
 * list them. */
size_t cut_api_table_size(void);
const char *cut_api_table_name(size_t i);

/*
 * The one rule for "this kernel is a collective" (cut-events(5), Names; share/sql/events.sql
 * has it as the macro cut_is_collective). Its identifier is name, or, for an Itanium symbol
 * "_Z<n>..." or "_ZL<n>...", the <n> bytes after the digits (all that is left when fewer).
 * The kernel is a collective when the identifier starts with "nccl" or "rccl" and its first
 * run of letters ends in "Kernel": NCCL's and RCCL's ncclDevKernel_*, ncclSymkDevKernel_*,
 * ncclKernel_* and NCCL 2.7's ncclAllReduceRingLLKernel_*, mangled
 * ("_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LLv") or demangled
 * ("ncclDevKernel_AllReduce_Sum_f32_RING_LL()"). Case matters; "ncclAllReduce" (an API
 * function or range) is not a kernel.
 *
 * Returns the collective's name, when the identifier gives it: "AllGather", "AllReduce",
 * "AllToAll", "AllToAllPivot", "Broadcast", "Gather", "Reduce", "ReduceScatter", "Scatter",
 * "SendRecv", "Send" or "Recv", as the word after "Kernel_" or, in NCCL 2.7's names, before
 * it; "collective" when it does not (ncclDevKernel_Generic); NULL when name is not a
 * collective kernel (or is NULL). The strings are static. Reads at most the identifier and
 * the digits before it.
 */
const char *cut_collective(const char *name);
/* Whether cut_collective(name) is not NULL. */
bool cut_is_collective(const char *name);

struct cut_event;
/* Whether an event of the ioctl layer is an ioctl proper, which a call's nioctl counts
 * (cut-events(5)): one with a "cmd" argument, or with no arguments at all unless named open,
 * openat, close, mmap or munmap (a device file's, which carry no "cmd"). */
bool cut_is_ioctl_call(const struct cut_event *ev);

#endif
