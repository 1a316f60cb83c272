/* hook.h: what the parts of libcuthook share: ids of the wrapped functions (from api.def), the
 * real entry points, the per-thread writer's entry points and the argument decoder. */
#ifndef HOOK_H
#define HOOK_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "api/call.h"
#include "api/cudatypes.h"
#include "buf.h"

typedef int CUresult;

#define HOOK_EXPORT __attribute__((visibility("default")))
#define HOOK_TLS __thread __attribute__((tls_model("initial-exec")))

/* One id per line of api.def, which is sorted by name, so ids are in strcmp order. */
enum hook_id {
#define HOOK_API(name, params, args, pack, roles, proto) HOOK_ID_##name,
#include "api/api.def"
	HOOK_NAPI
};

/* How a call reached its wrapper: the exported symbol (normal linking), or a pointer handed
 * out by dlsym or cuGetProcAddress. */
enum hook_via { HOOK_VIA_LINK, HOOK_VIA_POINTER, HOOK_NVIA };

/* wrap.c: per id, the name, the parameter roles (see api.def), the exported wrapper and the
 * wrapper handed out as a pointer. */
extern const char *const hook_names[HOOK_NAPI];
extern const char *const hook_roles[HOOK_NAPI];
extern void *const hook_exports[HOOK_NAPI];
extern void *const hook_pointers[HOOK_NAPI];

/* resolve.c */
/* The real entry points; NULL until known. Written once per id, read on every call. */
extern void *hook_real[HOOK_NAPI];
/* Finds the real entry point of id when hook_real has none yet: the next definition after
 * this library, then the libcuda already loaded. Returns NULL when there is none. */
void *hook_real_slow(enum hook_id id);
/* Id of a function name, or -1 when it is not wrapped. */
int hook_lookup(const char *name);
/* Resolves the real dlsym and every id that the libraries loaded at start define. */
void hook_resolve_init(void);
/* After cuGetProcAddress (id is either version) returned r with the arguments a: replaces the
 * pointer it wrote with the wrapper of the function it points to, and notes how it came. */
void hook_gpa_fixup(enum hook_id id, CUresult r, const uint64_t *a);
/* Path of the libcuda that real entry points come from, or NULL while none is known. */
const char *hook_libcuda_path(void);
/* Appends the coverage audit (a JSON object) for the trailer; calls[id] are this process's
 * calls per way of arrival. */
void hook_audit(struct cut_buf *b, const uint64_t (*calls)[HOOK_NVIA]);
/* Around fork: phase 0 before (takes the lock), 1 in the parent and 2 in the child after. */
void hook_resolve_fork(int phase);
/* The next definition of name after this library (the real dlsym's RTLD_NEXT). */
void *hook_next(const char *name);

/* nvtx.c: the NVTX ranges still open, as events with "unended": true ending at now, appended to
 * out (whole lines); returns how many. Once, at the end. */
uint64_t hook_nvtx_unended(struct cut_buf *out, int64_t now);
/* Why NVTX calls will not reach this library (NVTX_INJECTION64_PATH names another file, or
 * nothing), for the header; NULL when it is the NVTX tool. */
const char *hook_nvtx_off_reason(void);

/* rt.c: the runtime layer. dlsym(handle, name) for a cuda* or __cuda* name: the wrapper when
 * name is wrapped and handle finds the runtime's function, else what the real dlsym says. */
void *hook_rt_dlsym(void *handle, const char *name);
/* Its row (layer.h): whether it is on (not left to cutcapture's uprobes, and asked for), read
 * at start, and why not. */
void hook_rt_init(void);
const char *hook_rt_off_reason(void);
/* After a call of cuGetExportTable that returned r to the code at ra: notes the object ra is in
 * when it holds a runtime of its own (linked in), whose calls no wrapper of the layer sees. */
void hook_rt_exporter(const void *ra, CUresult r);
/* Those objects' file names (basenames), up to max into names; returns how many. Async-signal
 * safe: the end reads them. The first HOOK_RT_UNRECORDED objects are kept. */
#define HOOK_RT_UNRECORDED 32
size_t hook_rt_unrecorded(const char **names, size_t max);
/* In a forked child: the lock of that list, which another thread may have held at the fork. */
void hook_rt_fork_child(void);

/* wrap.c: the api layer's row (layer.h): why it is off (left to cutcapture's uprobes). */
const char *hook_api_off_reason(void);

/* mark.c: what libcuthook tells cutcapture's probes (CUTHOOK_MARK, set by cutcapture when it
 * starts a command with this library preloaded). Each thread's mark is registered through
 * cuthook_mark_thread(), a function cutcapture probes; its ioctl probes then read the mark.
 * The layout is records.h's struct cc_hook_mark. */
struct hook_mark {
	uint32_t own; /* libcuthook is calling the driver for itself: not the program's doing */
};
extern HOOK_TLS struct hook_mark hook_mark;
/* The api layer is left to cutcapture's uprobes (CUTHOOK_SKIP=api,runtime): the library still
 * wraps every call (the gpu layer times work, names come from the calls) but writes none. */
extern int hook_skip_api;
/* Of the api layer skipped, the functions it still records: those the library calls itself
 * and those whose work the gpu layer times, which cutcapture leaves unprobed (hooklib.h). */
extern unsigned char hook_keep[HOOK_NAPI];
/* Reads CUTHOOK_MARK and CUTHOOK_SKIP; once, at start. */
void hook_mark_init(void);
/* Registers the calling thread's mark with cutcapture's probe (when marking); own_thread: the
 * thread is libcuthook's own (the gpu layer's completion thread), none of its calls,
 * ioctls or scheduling are the program's. */
void hook_mark_thread(int own_thread);

/* life.c: starts a thread of the library's own running fn(arg) with `stack` bytes of stack,
 * detached or not, every signal blocked from its first instruction (signals are the program's
 * threads' business: one that reached it before it blocked them would run the program's handler
 * there). Returns 0 or an error number. */
int hook_own_thread(pthread_t *t, size_t stack, bool detached, void *(*fn)(void *), void *arg);

/* writer.c (the per-thread writer) and life.c (start, threads, fork, signals, the end) */
struct hook_thread;
extern HOOK_TLS struct hook_thread *hook_self;
extern HOOK_TLS int hook_guard; /* set while libcuthook's own code runs on this thread */
/* hook_guard's value while libcuthook asks the driver a question (a handle's name): calls the
 * driver makes then are its own, not a signal handler's. */
#define HOOK_GUARD_ASK 2
extern int hook_recording;
/* The calling thread's writer, starting libcuthook or the thread's state when needed; NULL
 * when the call is not to be recorded. */
struct hook_thread *hook_enter_slow(void);
/* Writes one API event (and the symbol record it produced) to the thread's buffer: a call that
 * started at t0 (hook_call_start()) and ended at end (hook_end()); g, when not NULL, is the work it
 * submitted that the gpu layer times (gpu.h): its corr goes into the call's args. */
struct gpu_sub;
void hook_record(struct hook_thread *t, enum hook_id id, enum hook_via via, int64_t t0,
                 uint64_t end, CUresult r, const uint64_t *a, struct gpu_sub *g);

/* The calling thread's writer when this call is to be recorded, else NULL (tracing is off,
 * finished, or the call comes from libcuthook itself). */
static inline struct hook_thread *
hook_enter(void)
{
	struct hook_thread *t = hook_self;
	if (__builtin_expect(t && !hook_guard && __atomic_load_n(&hook_recording, __ATOMIC_RELAXED),
	                     1))
		return t;
	return hook_enter_slow();
}

static inline int64_t
hook_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* clock.c: a call starts at hook_call_start() and ends at hook_end(): TSC reads where the TSC
 * can be trusted, mapped onto CLOCK_MONOTONIC by the thread's anchor (see clock.c for how, and
 * the error bound), else clock reads. */
#if defined(__x86_64__) && !defined(HOOK_NO_TSC) /* -DHOOK_NO_TSC: as on other machines */
#define HOOK_HAVE_TSC 1
#endif
/* Set in an end that is a TSC read (TSC values and CLOCK_MONOTONIC ns stay below 2^63). */
#define HOOK_END_TSC (UINT64_C(1) << 63)
extern int hook_tsc_on;       /* calls end with a TSC read: the rate is known */
extern int hook_tsc_learning; /* the TSC is usable but its rate not known yet */

/* A thread's anchor: the clock read t taken just before the TSC read c, the width w of the
 * bracket of TSC reads around it, the rate (ns per tick << 32) and the ticks after c it serves
 * (0: none). */
struct hook_tsc {
	int64_t t;
	uint64_t c, w, mult, span;
	int64_t retry;       /* while learning: no new sample before this clock time */
	uint64_t from_clock; /* calls whose end came from a clock read */
};

static inline uint64_t
hook_end(void)
{
#ifdef HOOK_HAVE_TSC
	if (__builtin_expect(__atomic_load_n(&hook_tsc_on, __ATOMIC_RELAXED), 1))
		return __builtin_ia32_rdtsc() | HOOK_END_TSC;
#endif
	return (uint64_t)hook_now();
}

int64_t hook_tsc_time_slow(struct hook_tsc *a, uint64_t c);
void hook_tsc_learn(struct hook_tsc *a, int64_t now);

/* The CLOCK_MONOTONIC time of a call's end, from hook_end()'s value. Call it after the end,
 * never between the start and the end: it may take a calibration sample. */
static inline int64_t
hook_end_time(struct hook_tsc *a, uint64_t end)
{
	if (!(end & HOOK_END_TSC)) {
		a->from_clock++;
		if (__builtin_expect(__atomic_load_n(&hook_tsc_learning, __ATOMIC_RELAXED), 0) &&
		    (int64_t)end >= a->retry)
			hook_tsc_learn(a, (int64_t)end);
		return (int64_t)end;
	}
	uint64_t d = (end & ~HOOK_END_TSC) - a->c;
	if (__builtin_expect(d < a->span, 1))
		return a->t + (int64_t)((d * a->mult) >> 32);
	return hook_tsc_time_slow(a, end & ~HOOK_END_TSC);
}

/* The latest time a call of this thread started at or the library read the clock at for it (an
 * NVTX record): no call of the thread starts earlier (hook_call_start). */
extern HOOK_TLS int64_t hook_floor;

/*
 * A call's start: where calls end with a TSC read, a TSC read (the clock's fenced read costs the
 * wrapper more), mapped by the thread's anchor a before the call (a sample the mapping may take
 * is then no part of it) and put the anchor's bracket later than an end is: an end may lie up
 * to the bracket early, a start up to the bracket late, never before the program's clock reads
 * before the call (clock.c). Else a clock read. Never before the thread's hook_floor either: a
 * call stays inside the call it is made from when a new anchor comes between them.
 */
static inline int64_t
hook_call_start(struct hook_tsc *a)
{
	int64_t s;
#ifdef HOOK_HAVE_TSC
	if (__builtin_expect(__atomic_load_n(&hook_tsc_on, __ATOMIC_RELAXED), 1)) {
		uint64_t from_clock = a->from_clock; /* counts ends only */
		s = hook_end_time(a, __builtin_ia32_rdtsc() | HOOK_END_TSC);
		if (__builtin_expect(a->from_clock == from_clock, 1))
			s += (int64_t)((a->w * a->mult) >> 32);
		a->from_clock = from_clock;
	} else
#endif
		s = hook_now();
	(void)a;
	if (s < hook_floor)
		s = hook_floor;
	hook_floor = s;
	return s;
}

/* A clock read of the library's for the calling thread's record (NVTX): calls after it start
 * no earlier. */
static inline int64_t
hook_record_now(void)
{
	int64_t now = hook_now();
	if (now > hook_floor)
		hook_floor = now;
	return now;
}

/* Decides whether to use the TSC and takes the first calibration pair. */
void hook_clock_init(void);
/* The TSC's rate as calibrated (Hz), or 0. */
uint64_t hook_tsc_hz(void);
void hook_clock_fork_child(void);

/* A handle named by a call, for a symbol record. */
struct hook_symbol {
	uint64_t handle; /* 0: none */
	const char *name;
	const char *kind; /* "function", "kernel", "module", "library" */
	const char *via;
};
/* writer.c: describes every wrapped function for decoding its calls' args (api/call.h). */
void hook_decode_init(void);

/* handles.c: the handle names, lock-free for readers. */
/* The decoder's view of them for one call (cut_names first), with the symbol of a handle the
 * driver was asked about. */
struct hook_names {
	struct cut_names names;
	struct hook_symbol asked;
};
void hook_names_begin(struct hook_names *hn);
/* Names handle h (len bytes of raw, copied; "" marks a handle known to have none). Returns the
 * kept name, or NULL when out of room. */
const struct cut_name *hook_name_set(uint64_t h, const char *raw, size_t len);
/* Counts the names set (hook_name_set): an args object kept from a call before the count moved
 * may name a handle otherwise than a call now would. */
extern uint32_t hook_names_gen;
/* The key a kernel's host stub h is named under (user addresses stay below bit 63, so a stub
 * never takes a driver handle's name). */
static inline uint64_t
hook_hostfn_key(uint64_t h)
{
	return h | UINT64_C(1) << 63;
}
/* Around fork, as hook_resolve_fork. */
void hook_names_fork(int phase);
/* The name of handle h: NULL when never seen, raw "" when known to have none. */
const struct cut_name *hook_name_of(uint64_t h);

#endif
