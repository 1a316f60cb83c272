/* meta.h: the meta records of cut-events(5) (header, trailer, lost, symbol, process, thread,
 * device) as C structs: written as canonical lines, and read back, in one place. */
#ifndef CUT_META_H
#define CUT_META_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "event.h"

/* An optional integer member that is absent (the writer leaves it out). */
#define CUT_ABSENT INT64_MIN

enum cut_meta_kind {
	CUT_META_NONE = -1, /* not a meta record */
	CUT_META_HEADER,
	CUT_META_TRAILER,
	CUT_META_LOST,
	CUT_META_SYMBOL,
	CUT_META_PROCESS,
	CUT_META_THREAD,
	CUT_META_DEVICE,
	CUT_META_OTHER, /* a meta record of a name this library does not know */
};

/* In every struct: strings are NULL when absent, integers CUT_ABSENT. "more" holds the
 * members a writer adds of its own (cut-events(5) allows them), as JSON member text
 * ("\"k\":v,..." without braces): written after the known ones; on reading, the members
 * this library does not know. */

/* The first line of a trace. */
struct cut_header {
	int64_t schema; /* CUT_SCHEMA_VERSION after cut_meta_init */
	const char *tool, *version, *host, *kernel, *driver, *driver_flavour, *libcuda, *libcudart;
	int64_t monotonic_ns, realtime_ns; /* "clock": both read at one instant */
	int64_t sorted;                    /* 1 true, 0 false (or CUT_ABSENT) */
	const char *layers[CUT_NLAYERS];   /* "on", or "off: why" */
	/* of each layer on, what recorded it: "preload", "ebpf", "uprobes: why" */
	const char *sources[CUT_NLAYERS];
	const char *const *cmd; /* the traced command; ncmd strings */
	size_t ncmd;
	const char *more;
};

/* The last line of a trace. */
struct cut_trailer {
	int64_t events, lost;
	int64_t layers[CUT_NLAYERS]; /* events written per layer */
	/* "durations" (libcuthook): calls whose end was read from the TSC, from the clock, and
	 * the TSC's rate */
	int64_t durations_tsc, durations_clock, durations_tsc_hz;
	/* "gpu": the gpu layer's work and the bounds of its clock mapping */
	int64_t gpu_timed, gpu_untimed, gpu_capture_skips, gpu_starts, gpu_starts_from_call;
	int64_t gpu_starts_from_twins;
	int64_t gpu_starts_late;
	int64_t gpu_gap_ns, gpu_error_ns, gpu_error_ns_median;
	int64_t own_thread;   /* libcuthook's completion thread, of one process */
	int64_t off_thread;   /* libcuthook's calls formatted by its formatter thread */
	int64_t format_thread; /* that thread, of one process */
	/* "runtimes_unrecorded" (libcuthook): the objects with a CUDA runtime linked in, whose
	 * calls the runtime layer does not record; nruntimes names */
	const char *const *runtimes;
	size_t nruntimes;
	const char *coverage; /* libcuthook's coverage audit: a JSON object's text */
	const char *more;
};

struct cut_lost {
	int64_t count;
	const char *reason, *layer;
	const char *more;
};

struct cut_symbol {
	int64_t handle; /* written as a hexadecimal string */
	const char *name, *kind, *via;
	const char *more;
};

/* A process or thread record (threads use comm and name). */
struct cut_task {
	const char *comm, *name, *cmdline;
	int64_t ppid, rank, local_rank, world_size;
	const char *more;
};

struct cut_device {
	int64_t device;
	const char *name, *uuid, *bus, *file;
	const char *more;
};

struct cut_meta {
	enum cut_meta_kind kind;
	union {
		struct cut_header header;
		struct cut_trailer trailer;
		struct cut_lost lost;
		struct cut_symbol symbol;
		struct cut_task task; /* CUT_META_PROCESS and CUT_META_THREAD */
		struct cut_device device;
	};
	void *priv; /* after cut_meta_read: what its strings point into */
};

/* The kind of record ev is, by its layer and name. */
enum cut_meta_kind cut_meta_kind(const struct cut_event *ev);
/* The record name of a kind ("header", ...), or NULL for CUT_META_NONE and CUT_META_OTHER. */
const char *cut_meta_name(enum cut_meta_kind k);

/* Makes *m an empty record of kind k: every member absent, a header's schema
 * CUT_SCHEMA_VERSION. */
void cut_meta_init(struct cut_meta *m, enum cut_meta_kind k);

/*
 * Appends the canonical line of record m (without newline) to out, its members in the order
 * of cut-events(5) and of the structs above, absent ones left out, then m's "more". The
 * envelope (ts, host, rank, pid, tid) comes from at, whose other fields are ignored. Appends
 * nothing unless m's kind is one of header to device.
 */
void cut_meta_format(struct cut_buf *out, const struct cut_event *at, const struct cut_meta *m);
/* Appends the canonical line of header ev, as it was but for "sorted" (true), and a newline:
 * what a tool writes for a header whose trace it wrote in order. */
void cut_meta_sorted_header(struct cut_buf *out, const struct cut_event *ev);

/*
 * Reads the args of ev into *m and returns its kind (m->kind too). A member of the wrong type
 * is read as absent; for CUT_META_NONE and CUT_META_OTHER every member is absent. Strings
 * stay valid until cut_meta_release(m), which must follow every read. Exits with status 2
 * when memory runs out.
 */
enum cut_meta_kind cut_meta_read(const struct cut_event *ev, struct cut_meta *m);
/* Frees what a read left in m; m is then an empty record of its kind. */
void cut_meta_release(struct cut_meta *m);

/*
 * Folding several records of one kind into one, as cutcapture folds the trailers of the
 * processes its libcuthook wrote into its own: each member by its rule in cut-events(5)
 * (Merging): counts summed, bounds the largest, medians the median of the records' medians
 * weighted by what they count, a layer "on" where any record says so, the rest taken from the
 * first record that has it; members of one process alone (own_thread) left out. Members of
 * the records' "more" are kept, the first record's value for each key.
 */
struct cut_meta_fold;
/* A fold of records of kind k, empty. Exits with status 2 when memory runs out. */
struct cut_meta_fold *cut_meta_fold_new(enum cut_meta_kind k);
/* Folds m (of the fold's kind; another kind is ignored) in. m may be released after. */
void cut_meta_fold_add(struct cut_meta_fold *f, const struct cut_meta *m);
/* The number of records folded in. */
size_t cut_meta_fold_count(const struct cut_meta_fold *f);
/* The record folded so far (every member absent while none was added); valid until the next
 * cut_meta_fold_add or cut_meta_fold_free. */
const struct cut_meta *cut_meta_fold_result(struct cut_meta_fold *f);
void cut_meta_fold_free(struct cut_meta_fold *f);
/* Gives every member absent from *into (and every key of from's "more" that into's lacks)
 * from's value; into's strings then point into from. */
void cut_meta_fill(struct cut_meta *into, const struct cut_meta *from, struct cut_buf *more);

/* What a process or thread is shown as: the name given through NVTX when there is one, else
 * the kernel's comm; NULL when the record has neither (or only empty ones). */
const char *cut_task_label(const struct cut_task *t);

#endif
