/* writer.h: what libcuthook's per-thread writer (writer.c), its meta records (header.c) and
 * its life cycle (life.c) share: a thread's state, and the process's output and header. It is
 * what a layer (layer.h) writes through: a thread's state (hook_thread_new), its events
 * (hook_record_line, or the thread's buffer), meta records (hook_meta). */
#ifndef HOOK_WRITER_H
#define HOOK_WRITER_H

#include <pthread.h>
#include <stdbool.h>
#include <sys/types.h>

#include "event.h"
#include "hook.h"
#include "hooklib.h"
#include "rank.h"

#define FLUSH_AT (56 * 1024) /* bytes of whole lines a thread keeps before writing */
#define DEFAULT_OUTPUT "cuthook.jsonl"
#define FRAG_MAX 128        /* longest fragment of a function's call lines, see fast_line() */
#define THREAD_FRAG_MAX 192 /* longest thread fragment: host and rank make it longer */

/* The part of a call's line that is the function's: "L","name":"N","cat":"C" and ,"ret": where
 * its calls have one (the value of "layer" onwards, cut out of cut_event_format's own output),
 * in a fixed slot copied whole (a fixed-size copy is a few vector moves; a variable one, a slow
 * string instruction). len 0: none fits; cut_event_format writes its lines. */
struct hook_frag {
	char s[FRAG_MAX];
	unsigned char len;
	bool ret;
	bool queue; /* its calls' lines depend on nothing but what they read: queued (async.c) */
	enum cut_layer layer;
	const char *name, *cat;
};

/* A call the thread is inside (its wrapper called the real function, which has not
 * returned): what the end writes as lost when the process ends first (a crash, a fatal signal,
 * exit from another thread). */
#define HOOK_FLIGHT 8
struct hook_flight {
	const char *name;
	int64_t t0;
	enum cut_layer layer;
};

/* The args object of a recent call of a pure function (cut_api_desc.pure) and what it depended
 * on: a call alike copies it instead of decoding again (writer.c, decode). A thread keeps
 * HOOK_MEMO_SETS sets of HOOK_MEMO_WAYS, a call's set by a hash of what it depends on: a
 * training step launches some hundred kernels alike each step, with other calls between. */
#define HOOK_MEMO_SETS 64
#define HOOK_MEMO_WAYS 2
struct hook_memo {
	const struct cut_api_desc *d; /* NULL: empty */
	int32_t r;
	uint32_t gen; /* hook_names_gen when it was decoded */
	bool extra_ok;
	uint64_t a[CUT_API_NARGS]; /* the call's words (those of d->words) */
	uint64_t out[CUT_API_NOUT];
	struct cut_buf args;
};

struct hook_thread {
	int busy;    /* set while the owner appends to or writes out its buffer: own_begin() */
	bool in_use; /* false: free for the next new thread */
	bool need_thread_record;
	int64_t tid;
	bool fast; /* frag is good: calls take the fast path */
	unsigned char frag_len;
	char frag[THREAD_FRAG_MAX]; /* [,"host":H,"rank":R],"pid":P,"tid":T,"layer": */
	int64_t ts_hi;              /* the last ts / 10^6, and its digits: see fast_line() */
	unsigned char ts_hi_len;
	char ts_hi_str[24];
	struct cut_buf out;  /* whole lines not yet written */
	struct cut_buf args; /* the args object of the call being recorded */
	uint64_t events, pending, lost;
	/* Of pending, per layer: counted in hook_layer_events once written (hook_pending_done). */
	uint32_t pending_in[CUT_NLAYERS];
	struct hook_tsc tsc; /* when calls end: clock.c */
	/* the calls in flight, outermost first: depth of them, the first HOOK_FLIGHT kept */
	unsigned depth;
	struct hook_flight flight[HOOK_FLIGHT];
	uint64_t calls[HOOK_NAPI][HOOK_NVIA];
	/* HOOK_MEMO_SETS * HOOK_MEMO_WAYS, allocated at the first call that keeps one (NULL: none
	 * yet, or no memory), and each set's way a call not found replaces */
	struct hook_memo *memo;
	unsigned char memo_victim[HOOK_MEMO_SETS];
	struct hook_ring *ring; /* calls read, to be formatted off this thread (async.c); NULL: none */
	struct hook_thread *next;
};

struct hook_writer {
	pthread_once_t once;
	bool inited, root;
	int finished;
	pid_t pid;      /* getpid(): tells a vfork child from this process */
	int64_t pid_ns; /* the pid as the initial PID namespace sees it */
	int64_t start_ns, start_realtime_ns;
	const char *cats[HOOK_NAPI];
	struct hook_frag frag[HOOK_NAPI]; /* of the api layer's functions */
	char *path;                       /* the output file, "%p" not yet replaced */
	int fd;
	dev_t dev;
	ino_t ino;
	bool pipe;
	pthread_key_t key;
	pthread_mutex_t threads_lock; /* the list of thread states */
	struct hook_thread *threads;  /* only grows: signal handlers walk it */
	pthread_mutex_t header_lock;
	int header_ready; /* header holds this process's header and process record */
	int header_done;  /* and they were written */
	struct cut_buf header;
	bool membarrier;      /* MEMBARRIER_CMD_PRIVATE_EXPEDITED works: see own_begin() */
	uint64_t lost_nested; /* calls from signal handlers that interrupted libcuthook's code */
	struct cut_rank rank; /* from the launcher's variables (rank.h): -1 where none */
	const char *host;     /* on every record when the rank is known, else NULL */
	/* the launcher (cuthook, cutcapture) and the page it reads (hooklib.h) */
	struct cut_hook_status *status;
	struct cut_hook_launcher launcher;
	uint64_t io_lost; /* events this process lost to failed writes, told to the launcher */
	int gone;         /* the launcher is gone and its files with it: nothing is written */
};

extern struct hook_writer hook_w;

/*
 * A thread's buffer is written by that thread alone, except at the end (finish(), on_fatal()),
 * when the buffers of every thread are written out. The owner marks itself busy and then reads
 * hook_w.finished; the finisher sets hook_w.finished, then waits for every thread to be idle. For
 * that handshake the owner needs a full memory barrier between the two, unless the finisher forces
 * one on every thread with membarrier(2): then the owner's side is two plain stores, which is
 * what a call costs most often.
 */
static inline __attribute__((always_inline)) bool
own_begin(struct hook_thread *t)
{
	__atomic_store_n(&t->busy, 1, __ATOMIC_RELAXED);
	if (hook_w.membarrier)
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
	else
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&hook_w.finished, __ATOMIC_RELAXED))
		return true;
	__atomic_store_n(&t->busy, 0, __ATOMIC_RELEASE);
	return false;
}

static inline void
own_end(struct hook_thread *t)
{
	__atomic_store_n(&t->busy, 0, __ATOMIC_RELEASE);
}

/* Around the real function's call in a wrapper: the call of name (layer l) that started at t0
 * is in flight; name NULL: a call the library does not record (cutcapture's uprobes do). */
static inline __attribute__((always_inline)) void
hook_flight_in(struct hook_thread *t, const char *name, enum cut_layer l, int64_t t0)
{
	unsigned d = t->depth;
	if (__builtin_expect(d < HOOK_FLIGHT, 1))
		t->flight[d] = (struct hook_flight){name, t0, l};
	__atomic_store_n(&t->depth, d + 1, __ATOMIC_RELEASE);
}

static inline __attribute__((always_inline)) void
hook_flight_out(struct hook_thread *t)
{
	__atomic_store_n(&t->depth, t->depth - 1, __ATOMIC_RELAXED);
}

/* writer.c */
/* Reads up to len-1 bytes of path into buf. Returns the length, or -1. */
ssize_t hook_read_file(const char *path, char *buf, size_t len);
/* The first NSpid of a /proc status file: the id in the outermost PID namespace visible. */
int64_t hook_ns_id(const char *status, int64_t fallback);
/* Opens the output file for this process ("%p" becomes the pid). */
void hook_open_output(void);
/* Whether the output is still ours (the program may have closed and reused its descriptor);
 * reopens it when not. */
bool hook_output_ok(void);
/* Writes whole lines; returns 0 or -1. */
int hook_write_lines(const char *s, size_t n);
/* A state for the calling thread: a free one, or a new one added to the list. */
struct hook_thread *hook_thread_new(void);
/* Writes a thread's buffer out. Caller owns t. */
void hook_flush(struct hook_thread *t);
/* The thread's pending lines were written (their events then count in hook_layer_events), or
 * dropped (counted lost). Either way none is pending after. Caller owns t or waited for it. */
void hook_pending_done(struct hook_thread *t, bool written);
/* Finds the launcher's status page (CUTHOOK_STATUS), once, at start. */
void hook_status_init(void);
/* n events were lost to a failed write: the launcher is told. Async-signal-safe. */
void hook_io_lost(uint64_t n);
/* The trailer was written (the launcher's count of lost events then leaves out this
 * process's, which it counts), or could not be. */
void hook_trailer_written(bool written);
struct cut_event;
/* Puts this process's host and rank, when known, on ev. */
void hook_label(struct cut_event *ev);
/* Appends event ev of a layer other than api (nvtx: the slow, general path), then the symbol
 * records of asked (a handle the call used, named for the first time) and sym (a handle the
 * call named) where they name one. Caller holds hook_guard; ev->args may be t->args.
 * Returns false when the event was lost (counted). */
bool hook_record_line(struct hook_thread *t, const struct cut_event *ev,
                      const struct hook_symbol *sym, const struct hook_symbol *asked);
/* Writes a call of a layer other than api (the runtime's) as the api layer's are, on the same
 * fast path: a call of the function f (hook_frag_make) and d (its description, for its args)
 * that started at t0 (hook_call_start()), ended at end (hook_end()) and returned r (its result as a
 * word; written when f->ret), with argument words a. */
void hook_record_call(struct hook_thread *t, const struct hook_frag *f,
                      const struct cut_api_desc *d, int64_t t0, uint64_t end, int64_t r,
                      const uint64_t *a);
/* Events written per layer (atomics; a forked child starts from none), but for the api layer's:
 * those are the rest of the threads' events. */
extern uint64_t hook_layer_events[CUT_NLAYERS];
/* Cuts the fixed part of the lines of calls of function name, of category cat, in layer l,
 * with a "ret" when ret, out of cut_event_format's own output, into *f. */
void hook_frag_make(struct hook_frag *f, enum cut_layer l, const char *name, const char *cat,
                    bool ret);
/* Sets f->queue: f has a fragment and the lines of calls of d depend on nothing but what they
 * read (cut_api_desc.pure), so its calls may be queued for the formatter thread. */
void hook_frag_queue(struct hook_frag *f, const struct cut_api_desc *d);
/* Makes the fragments of the api layer's functions (hook_w.frag). */
void hook_id_fragments(void);

/*
 * A call read as its wrapper returned, to be decoded, formatted and written by the library's
 * formatter thread (async.c): what writing it on the spot would take of the program's thread.
 * Only calls whose line is a function of their words, out values and the names of handles
 * (cut_api_desc.pure) go this way: what they point to is read here, before it can change.
 */
struct hook_rec {
	const struct hook_frag *f;
	const struct cut_api_desc *d; /* NULL: the call has no args to decode */
	int64_t t0, dur, r;
	uint64_t corr; /* the GPU work it submitted, when has_corr */
	bool has_corr;
	struct cut_call c; /* cut_api_read's, when d: only the words it has are written */
} __attribute__((aligned(64))); /* a call of up to four words: two cache lines written */

/* async.c */
/* Reads CUTHOOK_ASYNC (0: every call formatted on its own thread) and which calls end the
 * handles that queued calls name; once, at start. */
void hook_async_init(void);
/* Calls that may end handles a queued call names (a module unloaded, a context ended): every
 * queued call is formatted before they run (hook_async_drain). */
extern unsigned char hook_async_barrier[HOOK_NAPI];
/* A slot of t's ring for the call being recorded (starting the formatter when it is not
 * running yet), or NULL: the call is written on the spot. Only t's owner calls it. */
struct hook_rec *hook_async_slot(struct hook_thread *t);
/* Hands the slot filled to the formatter; false when it takes no more (the end has come):
 * the caller writes the call itself. Only inside t's own_begin(). */
bool hook_async_publish(struct hook_thread *t);
/* Formats every queued call now, on the calling thread (unless it is formatting already). */
void hook_async_drain(void);
/* The end (finish, exec): no more calls are queued, and those queued are formatted (nested:
 * from a signal handler that interrupted the library: by the formatter thread, waited for a
 * bounded time; what is left counted lost). */
void hook_async_close(bool nested);
/* The calls the formatter wrote, or -1 when it never ran in this process; its thread id, or
 * -1. */
int64_t hook_async_events(void);
int64_t hook_async_tid(void);
/* After an exec that failed: queueing starts again. */
void hook_async_reopen(void);
/* Around fork, as hook_resolve_fork. */
void hook_async_fork(int phase);
/* writer.c: the line of rec, a call of thread t, appended to w's buffer (w: the thread that
 * formats; t: the thread that made the call, whose pid and tid the line carries). */
void hook_async_line(struct hook_thread *w, const struct hook_thread *t, const struct hook_rec *rec);

/* header.c */
struct cut_meta;
/* Meta record m (meta.h) of this process, at ts on thread tid, appended to b as a line. */
void hook_meta_record(struct cut_buf *b, int64_t ts, int64_t tid, const struct cut_meta *m);
/* A meta record (cut-events(5)) of this process, appended to b. */
void hook_meta(struct cut_buf *b, int64_t ts, int64_t tid, const char *name, const char *args);
/* Formats the header and this process's record, once, before any event is buffered (a fatal
 * signal's handler can then write them without formatting). */
void hook_prepare_header(int64_t tid);
/* Writes the header and the process record, first of this process's lines, once. */
void hook_ensure_header(int64_t tid);
/* Appends the thread record of t, and the symbol record of a handle a call named. */
void hook_thread_record(struct hook_thread *t, int64_t ts);
void hook_symbol_record(struct hook_thread *t, int64_t ts, const struct hook_symbol *sym);
/* The symbol record of sym, of thread tid, appended to b. */
void hook_symbol_line(struct cut_buf *b, int64_t tid, int64_t ts, const struct hook_symbol *sym);

#endif
