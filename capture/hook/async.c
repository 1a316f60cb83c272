/* async.c: calls formatted off the program's thread. A call's line costs the thread that makes
 * it some 100 ns to decode, format and write, as much again as the rest of its wrapper; a call
 * whose line is a function of what it read alone (its words, out values, the names of handles:
 * cut_api_desc.pure, launches and copies among them) is instead read where it returns and
 * queued, as some 250 bytes, in its thread's ring, which the library's formatter thread
 * decodes, formats and writes from. Its lines carry the thread's pid and tid; the formatter
 * counts them, as a thread of the library's own (hook_thread) that the end writes out with the
 * others.
 *
 * A queued call is decoded later than it was made, so what its line names must still be there:
 * the names of handles. A call that may end handles (a module or library unloaded, a context
 * ended: hook_async_barrier) has every queued call formatted before it runs; a call that gives
 * a handle another name does so before the name changes (handles.c). The end (exit, exec, a
 * fatal signal) closes the queues and formats what they hold; fork leaves the parent's queue to
 * the parent. */
#if defined(__x86_64__)
#include <cpuid.h>
#endif
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "classify.h"
#include "hook.h"
#include "writer.h"

/* Some 3 ms of calls at the rate of the fastest launch loops, 1 MB a thread that records
 * calls. A full ring is no loss: its thread writes its calls itself until there is room. */
#define RING_SLOTS 4096u
/* The formatter is woken when a ring is this full, else it looks every ACTIVE_NS while calls
 * come, every IDLE_NS when none came. */
#define RING_KICK (RING_SLOTS / 4)
#define ACTIVE_NS 2000000
#define IDLE_NS 50000000
/* How long the end waits for the formatter when it cannot format itself (a signal handler). */
#define CLOSE_WAIT_NS 2000000000

struct hook_ring {
	/* the owner's */
	uint64_t head; /* slots published */
	uint64_t seen; /* tail as last read */
	int kicked;    /* the formatter was woken for this fill (it clears it) */
	char pad[64];
	/* the formatter's */
	uint64_t tail; /* slots formatted */
	struct hook_rec rec[RING_SLOTS];
};

unsigned char hook_async_barrier[HOOK_NAPI];

static struct {
	pthread_mutex_t lock; /* held while formatting */
	bool enabled;         /* CUTHOOK_ASYNC is not 0 */
	int open;             /* calls may be queued: the formatter runs and the end has not come */
	int started;          /* the formatter was started (or tried) in this process */
	uint32_t wake;        /* the formatter's futex */
	struct hook_thread *w; /* its lines and counts */
} A = {.lock = PTHREAD_MUTEX_INITIALIZER};
static HOOK_TLS int formatting; /* this thread holds A.lock */
static bool have_prefetchw;     /* the CPU has PREFETCHW: a line comes exclusive, not shared */

void
hook_async_init(void)
{
	const char *e = getenv("CUTHOOK_ASYNC");
	A.enabled = !e || strcmp(e, "0") != 0;
#if defined(__x86_64__)
	unsigned a, b, c, d;
	have_prefetchw = __get_cpuid(0x80000001, &a, &b, &c, &d) && (c & bit_PRFCHW);
#endif
	for (int i = 0; i < HOOK_NAPI; i++) {
		unsigned f = cut_api_flags(hook_names[i]);
		hook_async_barrier[i] =
		    (f & (CUT_API_DESTROYS_CONTEXT | CUT_API_RESETS_CONTEXT |
		          CUT_API_RELEASES_PRIMARY)) ||
		    !strcmp(hook_names[i], "cuModuleUnload") ||
		    !strcmp(hook_names[i], "cuLibraryUnload");
	}
}

/* The slots are line-aligned (struct hook_rec), so a call of up to four words writes two lines. */
_Static_assert(offsetof(struct hook_rec, c.a) + 4 * sizeof(uint64_t) <= 128,
               "a call of up to four words writes the first two lines of its slot");

/*
 * Asks for the two cache lines of the slot the thread's next call will write (a call of up to
 * four words writes no more: struct hook_rec) to be brought in, owned, while the program runs
 * between its calls. Else each is a miss as the call writes it: the formatter's core read it
 * last, or it left the caches while the ring went round (1 MB), and every store after it waits
 * in the store buffer until the line comes.
 */
static inline void
own_for_writing(const struct hook_rec *r)
{
	const char *p = (const char *)r;
#if defined(__x86_64__)
	if (have_prefetchw) {
		__asm__ volatile("prefetchw %0" : : "m"(*p));
		__asm__ volatile("prefetchw %0" : : "m"(*(p + 64)));
		return;
	}
#endif
	__builtin_prefetch(p, 1, 3);
	__builtin_prefetch(p + 64, 1, 3);
}

static void
kick(void)
{
	__atomic_add_fetch(&A.wake, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &A.wake, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Formats what every ring holds into A.w. Caller holds A.lock. Returns the calls formatted. */
static uint64_t
drain_locked(void)
{
	uint64_t n = 0;
	for (struct hook_thread *t = __atomic_load_n(&hook_w.threads, __ATOMIC_ACQUIRE); t;
	     t = t->next) {
		struct hook_ring *g = __atomic_load_n(&t->ring, __ATOMIC_ACQUIRE);
		if (!g)
			continue;
		uint64_t tail = g->tail, head = __atomic_load_n(&g->head, __ATOMIC_ACQUIRE);
		while (tail != head) {
			hook_async_line(A.w, t, &g->rec[tail & (RING_SLOTS - 1)]);
			n++;
			/* Room for the owner as it goes, not only at the end. */
			if (!(++tail & 63))
				__atomic_store_n(&g->tail, tail, __ATOMIC_RELEASE);
			if (tail == head)
				head = __atomic_load_n(&g->head, __ATOMIC_ACQUIRE);
		}
		__atomic_store_n(&g->tail, tail, __ATOMIC_RELEASE);
		__atomic_store_n(&g->kicked, 0, __ATOMIC_RELAXED);
	}
	return n;
}

/* drain_locked, the lock taken. */
static uint64_t
drain(void)
{
	pthread_mutex_lock(&A.lock);
	formatting = 1;
	uint64_t n = drain_locked();
	formatting = 0;
	pthread_mutex_unlock(&A.lock);
	return n;
}

static void
nap(uint32_t seen, int64_t ns)
{
	struct timespec ts = {ns / 1000000000, ns % 1000000000};
	syscall(SYS_futex, &A.wake, FUTEX_WAIT_PRIVATE, seen, ns ? &ts : NULL, NULL, 0);
}

static void *
formatter_main(void *arg)
{
	(void)arg;
	hook_mark_thread(1); /* first: none of this thread's calls or time is the program's */
	hook_guard = 1;
	struct hook_thread *w = hook_thread_new();
	if (!w)
		return NULL;
	w->need_thread_record = false;
	pthread_mutex_lock(&A.lock);
	A.w = w;
	__atomic_store_n(&A.open, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&A.lock);
	prctl(PR_SET_NAME, "cuthook-fmt"); /* once it takes calls: tests wait for the name */
	for (;;) {
		uint32_t seen = __atomic_load_n(&A.wake, __ATOMIC_ACQUIRE);
		uint64_t n = drain();
		bool open = __atomic_load_n(&A.open, __ATOMIC_ACQUIRE);
		/* Closed: nothing comes until an exec that failed opens the rings again. */
		nap(seen, !open ? 0 : n ? ACTIVE_NS : IDLE_NS);
	}
	return NULL;
}

/* Starts the formatter, once in a process; the rings open when it runs. */
static void
start(void)
{
	if (__atomic_exchange_n(&A.started, 1, __ATOMIC_ACQ_REL))
		return;
	pthread_t th;
	hook_own_thread(&th, 256 * 1024, true, formatter_main, NULL);
}

struct hook_rec *
hook_async_slot(struct hook_thread *t)
{
	if (__builtin_expect(!__atomic_load_n(&A.open, __ATOMIC_ACQUIRE), 0)) {
		if (A.enabled && !__atomic_load_n(&A.started, __ATOMIC_RELAXED))
			start();
		return NULL;
	}
	struct hook_ring *g = t->ring;
	if (__builtin_expect(!g, 0)) {
		if (!(g = calloc(1, sizeof(*g))))
			return NULL;
		__atomic_store_n(&t->ring, g, __ATOMIC_RELEASE);
	}
	uint64_t used = g->head - g->seen;
	if (__builtin_expect(used >= RING_KICK, 0)) {
		g->seen = __atomic_load_n(&g->tail, __ATOMIC_ACQUIRE);
		used = g->head - g->seen;
		if (used >= RING_SLOTS) {
			kick();
			return NULL;
		}
		if (used >= RING_KICK && !__atomic_load_n(&g->kicked, __ATOMIC_RELAXED)) {
			__atomic_store_n(&g->kicked, 1, __ATOMIC_RELAXED);
			kick();
		}
	}
	return &g->rec[g->head & (RING_SLOTS - 1)];
}

bool
hook_async_publish(struct hook_thread *t)
{
	/* Inside own_begin: the end sets A.open to 0, makes every thread see it, then waits for
	 * every owner to be idle before it formats what the rings hold (hook_async_close). */
	if (!__atomic_load_n(&A.open, __ATOMIC_RELAXED))
		return false;
	struct hook_ring *g = t->ring;
	uint64_t head = g->head + 1;
	__atomic_store_n(&g->head, head, __ATOMIC_RELEASE);
	own_for_writing(&g->rec[head & (RING_SLOTS - 1)]);
	return true;
}

void
hook_async_drain(void)
{
	if (!__atomic_load_n(&A.w, __ATOMIC_ACQUIRE) || formatting)
		return;
	int guard = hook_guard;
	hook_guard = 1;
	drain();
	hook_guard = guard;
}

/* Calls queued and not formatted yet. */
static uint64_t
queued(void)
{
	uint64_t n = 0;
	for (struct hook_thread *t = __atomic_load_n(&hook_w.threads, __ATOMIC_ACQUIRE); t;
	     t = t->next) {
		struct hook_ring *g = __atomic_load_n(&t->ring, __ATOMIC_ACQUIRE);
		if (g)
			n += __atomic_load_n(&g->head, __ATOMIC_ACQUIRE) -
			     __atomic_load_n(&g->tail, __ATOMIC_ACQUIRE);
	}
	return n;
}

void
hook_async_close(bool nested)
{
	if (!__atomic_exchange_n(&A.open, 0, __ATOMIC_SEQ_CST))
		return;
	/* As stop_owners (life.c): every owner sees the rings closed, or is inside own_begin
	 * and is waited for. */
	if (hook_w.membarrier)
		syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
	for (struct hook_thread *t = __atomic_load_n(&hook_w.threads, __ATOMIC_ACQUIRE); t;
	     t = t->next)
		for (int tries = 0; t != hook_self && __atomic_load_n(&t->busy, __ATOMIC_ACQUIRE) &&
		                    tries < (nested ? 100000 : INT32_MAX);
		     tries++)
			sched_yield();
	if (!nested) {
		hook_async_drain();
		return;
	}
	/* A signal handler that interrupted the library: formatting here could wait for a lock
	 * this thread holds (malloc's, one of ours), so the formatter does it, waited for a
	 * bounded time. What is left is counted lost. */
	kick();
	int64_t until = hook_now() + CLOSE_WAIT_NS;
	while (!formatting && queued() && hook_now() < until)
		sched_yield();
	if (A.w)
		A.w->lost += queued();
}

int64_t
hook_async_events(void)
{
	struct hook_thread *w = __atomic_load_n(&A.w, __ATOMIC_ACQUIRE);
	return w ? (int64_t)w->events : -1;
}

int64_t
hook_async_tid(void)
{
	struct hook_thread *w = __atomic_load_n(&A.w, __ATOMIC_ACQUIRE);
	return w ? w->tid : -1;
}

void
hook_async_reopen(void)
{
	if (__atomic_load_n(&A.w, __ATOMIC_ACQUIRE)) {
		__atomic_store_n(&A.open, 1, __ATOMIC_RELEASE);
		kick();
	}
}

void
hook_async_fork(int phase)
{
	if (phase == 0) {
		pthread_mutex_lock(&A.lock);
		return;
	}
	if (phase == 1) {
		pthread_mutex_unlock(&A.lock);
		return;
	}
	/* The child has no formatter: the queued calls are the parent's to write; the child
	 * starts its own at its first call. */
	pthread_mutex_init(&A.lock, NULL);
	A.open = 0;
	A.started = 0;
	A.wake = 0;
	A.w = NULL;
	for (struct hook_thread *t = hook_w.threads; t; t = t->next)
		if (t->ring) {
			t->ring->head = t->ring->seen = t->ring->tail = 0;
			t->ring->kicked = 0;
		}
}
