/* calls.h: the spans open on each thread (NVTX ranges, runtime and driver API calls, and any
 * other layer a tool asks for), and the one rule of cut-events(5) that says which of them an
 * event belongs to: its parent; and the index from GPU work to the call that submitted it. */
#ifndef CUT_CALLS_H
#define CUT_CALLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event.h"

/* A span open on a thread. */
struct cut_span {
	int64_t ts, end; /* its start and end */
	int64_t id;      /* the event's id, or -1 when it had none */
	enum cut_layer layer;
	uint64_t user[2]; /* the caller's (a queue position, an input, a track); 0 when opened */
	/* private */
	char *longname;
	char name[40];
};

struct cut_calls;

/* Bits of cut_calls_new's mask besides the layers' (1u << layer). */
enum {
	CUT_CALLS_HOLDERS = 1u << CUT_NVTX | 1u << CUT_RUNTIME | 1u << CUT_API, /* what holds */
	CUT_CALLS_NAMES = 1u << 31, /* keep each span's name, for cut_span_name */
};

/*
 * A tracker that keeps the spans of the layers in mask (bits 1u << layer, such as
 * CUT_CALLS_HOLDERS, the layers that hold others), and their names with CUT_CALLS_NAMES.
 * An event's thread is its (host, rank, pid, tid): the same pid and tid on two hosts, or of
 * two ranks, are two threads (an empty or absent host is none, an absent rank -1; a caller
 * that knows more, such as an input's header host, puts it on the event it passes).
 * Events must come in ts order on each thread (across threads too, for memory to stay
 * bounded): a span is forgotten once an event of its thread starts at or after its end, a
 * thread once none of its spans is open. Each call takes O(log n) time in the spans open on
 * the thread, however they overlap. Exits with status 2 when memory runs out.
 */
struct cut_calls *cut_calls_new(unsigned mask);
void cut_calls_free(struct cut_calls *c);
/*
 * Bounds what is kept open: past spans open at once, or bytes of them (cut_calls_bytes), a
 * span is not opened (cut_calls_open returns NULL and counts it in cut_calls_refused). No
 * bound until this is called.
 */
void cut_calls_limit(struct cut_calls *c, size_t spans, size_t bytes);

/*
 * Opens ev as a span on its thread. Returns NULL, opening nothing, when ev is an instant,
 * belongs to no thread (tid 0), its layer is not kept or the limit is reached. The span
 * stays valid until the next call on c that takes an event or a span.
 */
struct cut_span *cut_calls_open(struct cut_calls *c, const struct cut_event *ev);

/*
 * The parent of ev (cut-events(5)): with a "parent" member (cutmerge's), the open span of
 * ev's thread with that id. Otherwise by time, among the spans of ev's thread that contain
 * ev->ts (start at or before it, end after it): those of the nearest layer that can hold ev
 * (an NVTX range, runtime or driver API call first its own layer, as calls nest in calls of
 * their layer; an ioctl, driver function or off-CPU span the api layer; then each layer
 * above in turn), and of those the latest started, so overlapping NVTX start/end ranges give
 * the innermost one still open. NULL when there is none, and for gpu work, interrupts and
 * meta records, which no call holds. Valid as for cut_calls_open. For an event out of ts
 * order on its thread, only the SCAN_MAX (64) spans of each layer opened last are looked at.
 */
struct cut_span *cut_calls_parent(struct cut_calls *c, const struct cut_event *ev);

/* The latest started span of layer l on ev's thread that contains ev->ts, or NULL. Valid as
 * for cut_calls_open. */
struct cut_span *cut_calls_within(struct cut_calls *c, const struct cut_event *ev,
                                  enum cut_layer l);

/* Forgets span s of ev's thread before its end (a duplicate left out). */
void cut_calls_close(struct cut_calls *c, const struct cut_event *ev, struct cut_span *s);

/* The name of the event s was opened for ("" unless the tracker keeps names). */
static inline const char *
cut_span_name(const struct cut_span *s)
{
	return s->longname ? s->longname : s->name;
}

/* Threads with a span open (after the last sweep), and spans open, for tests. */
size_t cut_calls_threads(const struct cut_calls *c);
size_t cut_calls_spans(const struct cut_calls *c);
/* About the bytes the open spans and their threads take. */
size_t cut_calls_bytes(const struct cut_calls *c);
/* Spans not opened because of the limit (cut_calls_limit). */
uint64_t cut_calls_refused(const struct cut_calls *c);

/*
 * The link from a call to the GPU work it submitted (cut-events(5)): both carry an integer
 * args.corr, unique within their process. An index of submissions keeps an entry per record
 * noted (cut_calls_submit) by its key, (process, corr), where the process is the caller's
 * number for ev's pid on ev's host (procs.h's index, a timeline's process; a bare pid where
 * the caller compares hosts itself), and finds the entries of a key again, the latest noted
 * first (cut_calls_submitter, cut_submits_older). Entries are elem bytes, a struct whose first
 * member is a struct cut_submit; the caller's members follow. Only the latest max entries
 * noted are kept: noting one more forgets the oldest, so that memory stays bounded in a trace
 * whose GPU work never comes (no gpu layer). A caller may forget an entry itself (the work has
 * come), or the oldest ones by time (cut_submits_oldest). Noting is O(1); a search, and
 * forgetting the latest entry of a key, walk the entries kept of that key. Exits with status 2
 * when memory runs out.
 */
struct cut_submit {
	int64_t proc, corr; /* the key */
	/* private */
	uint64_t seq, older;
	bool live;
};

struct cut_submits;

/* A new, empty index of entries of elem bytes that keeps the latest max (SIZE_MAX: as many as
 * the caller leaves). */
struct cut_submits *cut_submits_new(size_t elem, size_t max);
/* Frees the index (not what the caller's members point to: forget the entries first). */
void cut_submits_free(struct cut_submits *s);
/*
 * Notes ev, a record of process proc that has an integer args.corr: returns its new entry,
 * the key set and the caller's members zero; NULL, noting nothing, when ev has no such corr.
 * An entry stays where it is until the next note (which may move them all) or its forgetting.
 */
void *cut_calls_submit(struct cut_submits *s, int64_t proc, const struct cut_event *ev);
/* The latest entry kept of ev's (proc, args.corr): the call that submitted GPU work ev. NULL
 * when there is none, or ev has no integer args.corr. */
void *cut_calls_submitter(struct cut_submits *s, int64_t proc, const struct cut_event *ev);
/* The entry of e's key noted before e and still kept, or NULL. */
void *cut_submits_older(struct cut_submits *s, const void *e);
/* Forgets entry e: it is found no more. */
void cut_submits_forget(struct cut_submits *s, void *e);
/* The oldest entry kept and not forgotten, or NULL when none is. */
void *cut_submits_oldest(struct cut_submits *s);
/* Entries kept and not forgotten. */
size_t cut_submits_len(const struct cut_submits *s);

#endif
