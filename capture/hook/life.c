/* life.c: libcuthook's life cycle: start (once, from the constructor or the first call), a
 * thread's state from its first call to its end, fork (the child is a process of its own),
 * fatal signals, _exit, and the end, which writes every buffer and the trailer. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <linux/membarrier.h>
#include <unistd.h>

#include "classify.h"
#include "event.h"
#include "hook.h"
#include "layer.h"
#include "meta.h"
#include "writer.h"

/* Sets hook_w.finished and makes every thread see it. Returns false when it was set already. */
static bool
stop_owners(void)
{
	if (__atomic_exchange_n(&hook_w.finished, 1, __ATOMIC_SEQ_CST))
		return false;
	if (hook_w.membarrier)
		syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
	return true;
}

/* Waits until t's owner is done with its buffer; gives up after `tries` yields (a signal
 * handler must not wait for ever). */
static bool
wait_idle(struct hook_thread *t, int tries)
{
	while (__atomic_load_n(&t->busy, __ATOMIC_ACQUIRE)) {
		if (tries-- <= 0)
			return false;
		sched_yield();
	}
	return true;
}

/* ---- threads ---- */

static void
thread_gone(void *p)
{
	struct hook_thread *t = p;
	hook_guard = 1;
	if (t->ring) /* its calls queued: formatted before the state goes to another thread */
		hook_async_drain();
	if (own_begin(t)) {
		hook_flush(t);
		own_end(t);
	}
	pthread_mutex_lock(&hook_w.threads_lock);
	t->in_use = false;
	pthread_mutex_unlock(&hook_w.threads_lock);
	hook_self = NULL;
	hook_guard = 0;
}

/* ---- signals ----
 * Nothing is installed before the program starts, so it finds every disposition as it would
 * without cuthook (Python, for one, installs its SIGINT handler only over SIG_DFL). At the
 * first recorded call, the signals below that the program left at SIG_DFL get on_fatal, which
 * writes the buffered lines and lets the default action happen. It stays out of sight:
 * sigaction(2) and signal(3) report SIG_DFL where it is, and a disposition the program sets
 * replaces it. */

/* glibc's own name of sigaction, which the wrapper below calls. */
extern int __sigaction(int, const struct sigaction *, struct sigaction *);

/* The trailer and lost record are formatted here: reserved at start, so that an end reached
 * from a signal handler that interrupted malloc does not need it. */
static struct cut_buf end_args, end_line;

static void on_fatal(int sig);
static int fatal_ours[NSIG]; /* 1 where on_fatal is installed and the program set nothing */
static struct sigaction fatal_old[NSIG]; /* what it replaced, which the program is shown */

static void
install_fatal(void)
{
	static int done;
	if (__atomic_exchange_n(&done, 1, __ATOMIC_ACQ_REL))
		return;
	static const int fatal[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT,
	                            SIGTERM, SIGINT, SIGHUP, SIGQUIT};
	for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++) {
		struct sigaction old, sa;
		if (__sigaction(fatal[i], NULL, &old) < 0 || old.sa_handler != SIG_DFL ||
		    (old.sa_flags & SA_SIGINFO))
			continue;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_fatal;
		sa.sa_flags = SA_RESETHAND;
		sigemptyset(&sa.sa_mask);
		fatal_old[fatal[i]] = old;
		__atomic_store_n(&fatal_ours[fatal[i]], 1, __ATOMIC_RELAXED);
		__sigaction(fatal[i], &sa, NULL);
	}
}

HOOK_EXPORT int
sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	int r = __sigaction(sig, act, old);
	if (r == 0 && sig > 0 && sig < NSIG &&
	    __atomic_load_n(&fatal_ours[sig], __ATOMIC_RELAXED)) {
		if (old && old->sa_handler == on_fatal)
			*old = fatal_old[sig];
		if (act)
			__atomic_store_n(&fatal_ours[sig], 0, __ATOMIC_RELAXED);
	}
	return r;
}

HOOK_EXPORT sighandler_t
signal(int sig, sighandler_t handler)
{
	static sighandler_t (*real)(int, sighandler_t);
	if (!real && !(real = (sighandler_t(*)(int, sighandler_t))hook_next("signal"))) {
		errno = ENOSYS;
		return SIG_ERR;
	}
	sighandler_t old = real(sig, handler);
	if (old != SIG_ERR && sig > 0 && sig < NSIG &&
	    __atomic_exchange_n(&fatal_ours[sig], 0, __ATOMIC_RELAXED) && old == on_fatal)
		old = SIG_DFL;
	return old;
}

/* ---- start ---- */

int
hook_own_thread(pthread_t *t, size_t stack, bool detached, void *(*fn)(void *), void *arg)
{
	pthread_attr_t at;
	sigset_t all, old;
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, stack);
	if (detached)
		pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old); /* the new thread inherits the mask */
	int e = pthread_create(t, &at, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&at);
	return e;
}

static void fork_prepare(void);
static void fork_parent(void);
static void fork_child(void);

static void exec_resolve(void);

static const char *
env_get(const char *name, void *arg)
{
	(void)arg;
	return getenv(name);
}

static void
init(void)
{
	hook_guard = 1;
	struct timespec mono, real;
	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &real);
	hook_w.start_ns = (int64_t)mono.tv_sec * 1000000000 + mono.tv_nsec;
	hook_w.start_realtime_ns = (int64_t)real.tv_sec * 1000000000 + real.tv_nsec;
	hook_w.pid = getpid();
	hook_w.pid_ns = hook_ns_id("/proc/self/status", hook_w.pid);
	const char *root = getenv("CUTHOOK_ROOT");
	hook_w.root = !root || atol(root) == (long)hook_w.pid;
	if (cut_rank_read(&hook_w.rank, env_get, NULL)) {
		struct utsname u;
		if (uname(&u) == 0)
			hook_w.host = strdup(u.nodename);
	}
	const char *out = getenv("CUTHOOK_OUTPUT");
	hook_w.path = strdup(out && *out ? out : DEFAULT_OUTPUT);
	hook_resolve_init();
	exec_resolve();
	hook_decode_init();
	hook_async_init();
	hook_mark_init();
	for (size_t i = 0; i < hook_nlayers; i++)
		if (hook_layers[i].init)
			hook_layers[i].init();
	hook_clock_init();
	for (int i = 0; i < HOOK_NAPI; i++)
		hook_w.cats[i] = cut_api_category(hook_names[i]);
	hook_id_fragments();
	hook_status_init();
	buf_try_room(&end_args, 1 << 15);
	buf_try_room(&end_line, 1 << 16);
	if (hook_w.path && !strstr(hook_w.path, "%p"))
		hook_open_output(); /* %p: at the first line, so processes with none leave no file
		                     */
	hook_w.membarrier =
	    syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
	if (hook_w.path && pthread_key_create(&hook_w.key, thread_gone) == 0) {
		pthread_atfork(fork_prepare, fork_parent, fork_child);
		hook_w.inited = true;
		__atomic_store_n(&hook_recording, 1, __ATOMIC_RELEASE);
	}
	hook_guard = 0;
}

__attribute__((constructor)) static void
hook_start(void)
{
	pthread_once(&hook_w.once, init);
}

struct hook_thread *
hook_enter_slow(void)
{
	if (hook_guard) {
		/* A call while libcuthook's own code runs on this thread comes from a signal
		 * handler that interrupted it (libcuthook's own questions to the driver set
		 * HOOK_GUARD_ASK): its buffer is not in a state to take a line. Counted lost. */
		if (hook_guard != HOOK_GUARD_ASK &&
		    __atomic_load_n(&hook_recording, __ATOMIC_RELAXED))
			__atomic_add_fetch(&hook_w.lost_nested, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	pthread_once(&hook_w.once, init);
	if (!__atomic_load_n(&hook_recording, __ATOMIC_ACQUIRE))
		return NULL;
	if (hook_self)
		return hook_self;
	hook_guard = 1;
	struct hook_thread *t = getpid() == hook_w.pid ? hook_thread_new() : NULL;
	if (t)
		install_fatal();
	hook_guard = 0;
	return t;
}

/* ---- the end ---- */

/* How deep t is in calls whose flight the end looks at (the first HOOK_FLIGHT of them). */
static unsigned
in_flight_of(struct hook_thread *t)
{
	unsigned d = __atomic_load_n(&t->depth, __ATOMIC_ACQUIRE);
	return t->in_use && d ? (d < HOOK_FLIGHT ? d : HOOK_FLIGHT) : 0;
}

/* Of those, the calls the library records: lost, when the process ends first. */
static uint64_t
lost_in_flight(struct hook_thread *t)
{
	uint64_t n = 0;
	for (unsigned i = 0; i < in_flight_of(t); i++)
		n += t->flight[i].name != NULL;
	return n;
}

/* Appends to s (at *n, room for len) the text a; async-signal-safe, as is what follows. */
static void
put_str(char *s, size_t *n, size_t len, const char *a)
{
	while (*a && *n + 1 < len)
		s[(*n)++] = *a++;
	s[*n] = '\0';
}

static void
put_uint(char *s, size_t *n, size_t len, uint64_t v)
{
	char d[24], *p = d + sizeof(d);
	*--p = '\0';
	do
		*--p = (char)('0' + v % 10);
	while ((v /= 10));
	put_str(s, n, len, p);
}

/* The lost record of call f, in flight on thread t when the process ended, appended to line. */
static void
flight_lost(struct cut_buf *line, int64_t tid, const struct hook_thread *t,
            const struct hook_flight *f)
{
	char reason[192];
	size_t n = 0;
	if (!f->name) /* the uprobes' */
		return;
	put_str(reason, &n, sizeof(reason), f->name);
	put_str(reason, &n, sizeof(reason), " in flight when process ");
	put_uint(reason, &n, sizeof(reason), (uint64_t)hook_w.pid_ns);
	put_str(reason, &n, sizeof(reason), " ended (thread ");
	put_uint(reason, &n, sizeof(reason), (uint64_t)t->tid);
	put_str(reason, &n, sizeof(reason), ")");
	struct cut_meta m;
	cut_meta_init(&m, CUT_META_LOST);
	m.lost.count = 1;
	m.lost.reason = reason;
	m.lost.layer = cut_layer_name(f->layer);
	hook_meta_record(line, f->t0, tid, &m);
}

/*
 * Writes every thread's buffer, then the lost record and the trailer. A process that is not the
 * one cuthook started and recorded nothing writes nothing at all.
 *
 * Reached from libcuthook's own code on this thread (exit() or _exit() called by a signal
 * handler that interrupted a recorded call), its locks may be held and its own buffer be half
 * written: then no lock is taken, this thread's buffer is counted lost instead of written, and
 * another thread is waited for a bounded time (it may wait for a lock this one holds).
 */
static void
finish(bool at_exec)
{
	if (!hook_w.inited || getpid() != hook_w.pid)
		return;
	/* First, while every writer still takes lines: the work still to complete (not from a
	 * signal handler that interrupted the library: it may hold the layer's lock). */
	for (size_t i = 0; i < hook_nlayers && !hook_guard; i++)
		if (hook_layers[i].stop)
			hook_layers[i].stop();
	int guard = hook_guard;
	bool nested = guard != 0;
	/* Then the calls queued for the formatter (async.c), while it still takes lines. */
	hook_async_close(nested);
	if (!stop_owners())
		return;
	hook_guard = 1;
	__atomic_store_n(&hook_recording, 0, __ATOMIC_RELEASE);
	static uint64_t calls[HOOK_NAPI][HOOK_NVIA];
	memset(calls, 0, sizeof(calls));
	uint64_t events = 0, lost = 0, lost_nested = 0, from_clock = 0, in_flight = 0;
	int64_t tid = hook_self ? hook_self->tid : (int64_t)syscall(SYS_gettid);
	if (!nested)
		pthread_mutex_lock(&hook_w.threads_lock);
	if (nested && !hook_w.header_done &&
	    __atomic_load_n(&hook_w.header_ready, __ATOMIC_ACQUIRE) && hook_output_ok()) {
		hook_write_lines(hook_w.header.s, hook_w.header.len);
		hook_w.header_done = 1;
	}
	for (struct hook_thread *t = __atomic_load_n(&hook_w.threads, __ATOMIC_ACQUIRE); t;
	     t = t->next) {
		if (t == hook_self ? nested : !wait_idle(t, nested ? 100000 : INT_MAX)) {
			hook_pending_done(t, false);
			t->out.len = 0;
		} else if (nested) {
			bool written = !t->out.len || (hook_output_ok() &&
			                               hook_write_lines(t->out.s, t->out.len) == 0);
			if (!written)
				hook_io_lost(t->pending);
			hook_pending_done(t, written);
			t->out.len = 0;
		} else {
			hook_flush(t);
		}
		events += t->events;
		lost += t->lost;
		from_clock += t->tsc.from_clock;
		in_flight += lost_in_flight(t);
		for (int i = 0; i < HOOK_NAPI; i++)
			for (int v = 0; v < HOOK_NVIA; v++)
				calls[i][v] += t->calls[i][v];
	}
	if (!nested)
		pthread_mutex_unlock(&hook_w.threads_lock);
	lost_nested = __atomic_load_n(&hook_w.lost_nested, __ATOMIC_RELAXED);
	/* Events still open (NVTX ranges) end here (not from a signal handler: it formats). */
	struct cut_buf unended = {0};
	int64_t end = hook_now();
	for (size_t i = 0; i < hook_nlayers && !nested; i++)
		if (hook_layers[i].unended)
			events += hook_layers[i].unended(&unended, end);
	/* The root's new image after exec writes for it: no empty header and trailer per image. */
	if ((hook_w.root && !at_exec) || events || lost || lost_nested || in_flight) {
		if (!nested)
			hook_ensure_header(tid);
		if (unended.len && hook_output_ok())
			hook_write_lines(unended.s, unended.len);
		struct cut_buf *a = &end_args, *line = &end_line;
		buf_reset(a);
		buf_reset(line);
		int64_t now = hook_now();
		struct cut_meta m;
		if (lost) {
			cut_meta_init(&m, CUT_META_LOST);
			m.lost.count = (int64_t)lost;
			m.lost.reason = "output not writable or events after the end";
			m.lost.layer = "api";
			hook_meta_record(line, now, tid, &m);
		}
		if (lost_nested) {
			cut_meta_init(&m, CUT_META_LOST);
			m.lost.count = (int64_t)lost_nested;
			m.lost.reason =
			    "calls from signal handlers that interrupted cuthook's own code";
			m.lost.layer = "api";
			hook_meta_record(line, now, tid, &m);
		}
		/* The calls in flight, which will never return: lost, each said at its start. */
		for (struct hook_thread *t = __atomic_load_n(&hook_w.threads, __ATOMIC_ACQUIRE); t;
		     t = t->next)
			for (unsigned i = 0; i < in_flight_of(t); i++)
				flight_lost(line, tid, t, &t->flight[i]);
		cut_meta_init(&m, CUT_META_TRAILER);
		m.trailer.events = (int64_t)events;
		m.trailer.lost = (int64_t)(lost + lost_nested + in_flight);
		/* Each layer's events; those of the layer counted on the fast path are the rest.
		 * How durations were measured (clock.c): ends of calls read from the TSC or the
		 * clock (an NVTX range's end is a clock read, GPU work's the GPU's event: no
		 * calls). */
		uint64_t rest = events, not_calls = 0;
		const struct hook_layer *rest_of = NULL;
		for (size_t i = 0; i < hook_nlayers; i++) {
			const struct hook_layer *L = &hook_layers[i];
			uint64_t n =
			    __atomic_load_n(&hook_layer_events[L->layer], __ATOMIC_RELAXED);
			if (L->rest) {
				rest_of = L;
				continue;
			}
			rest -= n;
			if (n || (L->count_on && !L->off_reason()))
				m.trailer.layers[L->layer] = (int64_t)n;
			if (!L->calls)
				not_calls += n;
		}
		if (rest_of) {
			m.trailer.layers[rest_of->layer] = (int64_t)rest;
			if (!rest_of->calls)
				not_calls += rest;
		}
		m.trailer.durations_tsc = (int64_t)(events - not_calls - from_clock);
		m.trailer.durations_clock = (int64_t)from_clock;
		uint64_t hz = hook_tsc_hz();
		if (hz)
			m.trailer.durations_tsc_hz = (int64_t)hz;
		int64_t off = hook_async_events();
		if (off >= 0) {
			m.trailer.off_thread = off;
			m.trailer.format_thread = hook_async_tid();
		}
		const char *unrecorded[HOOK_RT_UNRECORDED];
		size_t nunrecorded = hook_rt_unrecorded(unrecorded, HOOK_RT_UNRECORDED);
		if (nunrecorded) {
			m.trailer.runtimes = unrecorded;
			m.trailer.nruntimes = nunrecorded;
		}
		for (size_t i = 0; i < hook_nlayers; i++)
			if (hook_layers[i].trailer)
				hook_layers[i].trailer(&m.trailer);
		/* The coverage audit takes a lock this thread may hold when nested. */
		if (!nested) {
			hook_audit(a, (const uint64_t(*)[HOOK_NVIA])calls);
			m.trailer.coverage = a->s;
		}
		hook_meta_record(line, now, tid, &m);
		hook_trailer_written(hook_output_ok() && hook_write_lines(line->s, line->len) == 0);
	}
	buf_free(&unended);
	hook_guard = guard;
}

/* After the program's exit handlers and C++ static destructors: late driver calls count. */
__attribute__((destructor)) static void
hook_stop(void)
{
	finish(false);
}

/* os._exit and friends skip the destructors. A vfork child shares our memory but has its own
 * pid: finish() leaves it alone. */
__attribute__((noreturn)) static void
exit_now(const char *name, int status)
{
	finish(false);
	void (*real)(int) = (void (*)(int))hook_next(name);
	if (real)
		real(status);
	syscall(SYS_exit_group, status);
	__builtin_unreachable();
}

HOOK_EXPORT void
_exit(int status)
{
	exit_now("_exit", status);
}

HOOK_EXPORT void
_Exit(int status)
{
	exit_now("_Exit", status);
}

/* ---- exec ----
 * A new program replaces this one: what this image recorded is written now, with its
 * trailer. The new image, preloaded too, starts with its own header under the same pid, in the
 * same file (hook_open_output keeps what this capture wrote). When exec fails, recording starts
 * again as it would in a new image: a header, then events, then a trailer of their own. A vfork
 * child shares this memory but not the pid: finish() and the restart leave it alone. */

static void
exec_failed(void)
{
	if (!hook_w.inited || getpid() != hook_w.pid ||
	    !__atomic_load_n(&hook_w.finished, __ATOMIC_ACQUIRE))
		return;
	for (struct hook_thread *t = __atomic_load_n(&hook_w.threads, __ATOMIC_ACQUIRE); t;
	     t = t->next) {
		t->events = t->pending = t->lost = 0;
		memset(t->pending_in, 0, sizeof(t->pending_in));
		t->tsc.from_clock = 0;
		memset(t->calls, 0, sizeof(t->calls));
		t->need_thread_record = true;
	}
	__atomic_store_n(&hook_w.lost_nested, 0, __ATOMIC_RELAXED);
	for (int l = 0; l < CUT_NLAYERS; l++) /* the trailer written before exec counted them */
		__atomic_store_n(&hook_layer_events[l], 0, __ATOMIC_RELAXED);
	__atomic_store_n(&hook_w.header_done, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&hook_w.finished, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&hook_recording, 1, __ATOMIC_RELEASE);
	hook_async_reopen();
}

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execv_fn)(const char *, char *const[]);

/* The real exec functions, looked up at start: a vfork child (Python's subprocess) had better
 * not be the first to call dlsym. */
enum { X_EXECVE, X_EXECVPE, X_EXECV, X_EXECVP, X_FEXECVE, X_EXECVEAT, X_N };
static const char *const exec_names[X_N] = {"execve", "execvpe", "execv",
                                            "execvp", "fexecve", "execveat"};
static void *exec_real[X_N];

static void
exec_resolve(void)
{
	for (int i = 0; i < X_N; i++)
		if (!__atomic_load_n(&exec_real[i], __ATOMIC_ACQUIRE))
			__atomic_store_n(&exec_real[i], hook_next(exec_names[i]), __ATOMIC_RELEASE);
}

/* Calls the real function x, what this image recorded written out first. */
#define EXEC_AROUND(type, x, call)                                                                 \
	do {                                                                                       \
		type real = (type)__atomic_load_n(&exec_real[x], __ATOMIC_ACQUIRE);                \
		if (!real) {                                                                       \
			exec_resolve();                                                            \
			if (!(real = (type)exec_real[x])) {                                        \
				errno = ENOSYS;                                                    \
				return -1;                                                         \
			}                                                                          \
		}                                                                                  \
		int e_ = errno;                                                                    \
		finish(true);                                                                      \
		errno = e_;                                                                        \
		int r_ = call;                                                                     \
		e_ = errno;                                                                        \
		exec_failed();                                                                     \
		errno = e_;                                                                        \
		return r_;                                                                         \
	} while (0)

HOOK_EXPORT int
execve(const char *path, char *const argv[], char *const envp[])
{
	EXEC_AROUND(execve_fn, X_EXECVE, real(path, argv, envp));
}

HOOK_EXPORT int
execvpe(const char *file, char *const argv[], char *const envp[])
{
	EXEC_AROUND(execve_fn, X_EXECVPE, real(file, argv, envp));
}

HOOK_EXPORT int
execv(const char *path, char *const argv[])
{
	EXEC_AROUND(execv_fn, X_EXECV, real(path, argv));
}

HOOK_EXPORT int
execvp(const char *file, char *const argv[])
{
	EXEC_AROUND(execv_fn, X_EXECVP, real(file, argv));
}

HOOK_EXPORT int
fexecve(int fd, char *const argv[], char *const envp[])
{
	typedef int (*fexecve_fn)(int, char *const[], char *const[]);
	EXEC_AROUND(fexecve_fn, X_FEXECVE, real(fd, argv, envp));
}

HOOK_EXPORT int
execveat(int dirfd, const char *path, char *const argv[], char *const envp[], int flags)
{
	typedef int (*execveat_fn)(int, const char *, char *const[], char *const[], int);
	EXEC_AROUND(execveat_fn, X_EXECVEAT, real(dirfd, path, argv, envp, flags));
}

/* execl, execlp, execle: their arguments as an array (ap left open after the NULL that ends
 * them), then the wrappers above. */
#define EXEC_LIST(first, ap, argv)                                                                 \
	size_t n_ = 1;                                                                             \
	va_start(ap, first);                                                                       \
	while (va_arg(ap, char *))                                                                 \
		n_++;                                                                              \
	va_end(ap);                                                                                \
	char *argv[n_ + 1];                                                                        \
	va_start(ap, first);                                                                       \
	argv[0] = (char *)first;                                                                   \
	for (size_t i_ = 1; i_ <= n_; i_++)                                                        \
	argv[i_] = va_arg(ap, char *)

HOOK_EXPORT int
execl(const char *path, const char *arg, ...)
{
	va_list ap;
	EXEC_LIST(arg, ap, argv);
	va_end(ap);
	return execv(path, argv);
}

HOOK_EXPORT int
execlp(const char *file, const char *arg, ...)
{
	va_list ap;
	EXEC_LIST(arg, ap, argv);
	va_end(ap);
	return execvp(file, argv);
}

HOOK_EXPORT int
execle(const char *path, const char *arg, ...)
{
	va_list ap;
	EXEC_LIST(arg, ap, argv);
	char *const *envp = va_arg(ap, char *const *);
	va_end(ap);
	return execve(path, argv, envp);
}

/* Writes what is buffered and the calls in flight as lost (no trailer: formatting it is not
 * async-signal-safe), then lets the signal take its default action. */
static void
on_fatal(int sig)
{
	int saved = errno;
	__atomic_store_n(&fatal_ours[sig], 0, __ATOMIC_RELAXED); /* SA_RESETHAND */
	/* The calls queued for the formatter first, formatted by it (async.c). */
	if (hook_w.inited && getpid() == hook_w.pid)
		hook_async_close(true);
	if (hook_w.inited && getpid() == hook_w.pid && stop_owners() && hook_output_ok()) {
		/* The header was formatted with the first event; only writing is left. */
		if (!hook_w.header_done &&
		    __atomic_load_n(&hook_w.header_ready, __ATOMIC_ACQUIRE)) {
			hook_write_lines(hook_w.header.s, hook_w.header.len);
			hook_w.header_done = 1;
		}
		/* A thread that died inside libcuthook leaves its own buffer busy: skipped. */
		for (struct hook_thread *t = __atomic_load_n(&hook_w.threads, __ATOMIC_ACQUIRE); t;
		     t = t->next) {
			if (t == hook_self ? t->busy : !wait_idle(t, 1000))
				continue;
			if (t->out.len)
				hook_write_lines(t->out.s, t->out.len);
			t->out.len = 0;
			t->pending = 0;
		}
		/* The calls in flight will never return: lost, each said at its start (formatted
		 * into the buffer reserved at start). */
		int64_t tid = hook_self ? hook_self->tid : (int64_t)syscall(SYS_gettid);
		buf_reset(&end_line);
		for (struct hook_thread *t = __atomic_load_n(&hook_w.threads, __ATOMIC_ACQUIRE); t;
		     t = t->next)
			for (unsigned i = 0; i < in_flight_of(t); i++)
				flight_lost(&end_line, tid, t, &t->flight[i]);
		if (end_line.len)
			hook_write_lines(end_line.s, end_line.len);
	}
	raise(sig);
	errno = saved;
}

/* ---- fork ---- */

/* Each layer's part: its locks taken after the ground's (resolve, names), released before. */
static void
layers_fork(int phase)
{
	for (size_t i = 0; i < hook_nlayers; i++) {
		const struct hook_layer *L = &hook_layers[phase == 0 ? i : hook_nlayers - 1 - i];
		if (L->fork)
			L->fork(phase);
	}
}

static void
fork_prepare(void)
{
	hook_async_fork(0); /* the formatter's lock first: it takes the header's and the names' */
	pthread_mutex_lock(&hook_w.threads_lock);
	pthread_mutex_lock(&hook_w.header_lock);
	hook_resolve_fork(0);
	hook_names_fork(0);
	layers_fork(0);
}

static void
fork_parent(void)
{
	layers_fork(1);
	hook_names_fork(1);
	hook_resolve_fork(1);
	pthread_mutex_unlock(&hook_w.header_lock);
	pthread_mutex_unlock(&hook_w.threads_lock);
	hook_async_fork(1);
}

/* The child is a process of its own: its own header (when it records anything), counts and
 * trailer. The parent's buffered lines are the parent's to write. */
static void
fork_child(void)
{
	layers_fork(2);
	hook_names_fork(2);
	hook_resolve_fork(2);
	hook_async_fork(2);
	hook_clock_fork_child();
	hook_rt_fork_child();
	hook_w.pid = getpid();
	hook_w.pid_ns = hook_ns_id("/proc/self/status", hook_w.pid);
	hook_w.root = false;
	hook_w.header_done = 0;
	hook_w.header_ready = 0;
	hook_w.lost_nested = 0;
	hook_w.io_lost = 0;
	memset(hook_layer_events, 0, sizeof(hook_layer_events)); /* the parent's */
	buf_reset(&hook_w.header);
	if (hook_w.membarrier)
		hook_w.membarrier =
		    syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
	for (struct hook_thread *t = hook_w.threads; t; t = t->next) {
		if (t != hook_self)
			t->in_use = false;
		t->busy = 0;
		buf_reset(&t->out);
		t->events = t->pending = t->lost = 0;
		memset(t->pending_in, 0, sizeof(t->pending_in));
		if (t != hook_self) /* the child has only the thread that forked */
			t->depth = 0;
		t->tsc.from_clock = 0;
		memset(t->calls, 0, sizeof(t->calls));
	}
	if (hook_self) {
		hook_self->tid =
		    hook_ns_id("/proc/thread-self/status", (int64_t)syscall(SYS_gettid));
		hook_self->need_thread_record = true;
	}
	if (strstr(hook_w.path, "%p")) { /* opened at the child's first line */
		if (hook_w.fd >= 0)
			close(hook_w.fd);
		hook_w.fd = -1;
	}
	pthread_mutex_unlock(&hook_w.header_lock);
	pthread_mutex_unlock(&hook_w.threads_lock);
}
