/* writer.c: libcuthook's start, per-thread buffers of formatted events, the output file shared
 * by every process of a capture (whole lines, appended atomically), meta records, fork,
 * fatal signals and exit. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <linux/membarrier.h>
#include <unistd.h>

#include "classify.h"
#include "event.h"
#include "hook.h"

#define FLUSH_AT (56 * 1024) /* bytes of whole lines a thread keeps before writing */
#define DEFAULT_OUTPUT "cuthook.jsonl"
#define FRAG_MAX 96 /* longest fragment of an API event line, see fast_line() */

struct hook_thread {
	int busy;    /* set while the owner appends to or writes out its buffer: own_begin() */
	bool in_use; /* false: free for the next new thread */
	bool need_thread_record;
	int64_t tid;
	bool fast; /* frag is good: API events take the fast path */
	unsigned char frag_len;
	char frag[FRAG_MAX]; /* ,"pid":P,"tid":T,"layer":"api","name": */
	int64_t ts_hi;       /* the last ts / 10^6, and its digits: see fast_line() */
	unsigned char ts_hi_len;
	char ts_hi_str[24];
	struct cut_buf out;  /* whole lines not yet written */
	struct cut_buf args; /* the args object of the call being recorded */
	uint64_t events, pending, lost;
	struct hook_tsc tsc; /* when calls end: clock.c */
	uint64_t calls[HOOK_NAPI][HOOK_NVIA];
	struct hook_thread *next;
};

HOOK_TLS struct hook_thread *hook_self;
HOOK_TLS int hook_guard;
int hook_recording;

static struct {
	pthread_once_t once;
	bool inited, root;
	int finished;
	pid_t pid;      /* getpid(): tells a vfork child from this process */
	int64_t pid_ns; /* the pid as the initial PID namespace sees it */
	int64_t start_ns, start_realtime_ns;
	const char *cats[HOOK_NAPI];
	/* "name","cat":"cat","ret": in fixed slots, copied whole (a fixed-size copy is a few
	 * vector moves; a variable one, a slow string instruction) */
	char frag[HOOK_NAPI][FRAG_MAX];
	unsigned char frag_len[HOOK_NAPI];
	char *path; /* the output file, "%p" not yet replaced */
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
	bool membarrier; /* MEMBARRIER_CMD_PRIVATE_EXPEDITED works: see own_begin() */
} W = {
    .once = PTHREAD_ONCE_INIT,
    .fd = -1,
    .threads_lock = PTHREAD_MUTEX_INITIALIZER,
    .header_lock = PTHREAD_MUTEX_INITIALIZER,
};

/*
 * A thread's buffer is written by that thread alone, except at the end (finish(), on_fatal()),
 * when the buffers of every thread are written out. The owner marks itself busy and then reads
 * W.finished; the finisher sets W.finished, then waits for every thread to be idle. For that
 * handshake the owner needs a full memory barrier between the two, unless the finisher forces
 * one on every thread with membarrier(2): then the owner's side is two plain stores, which is
 * what a call costs most often.
 */
static inline __attribute__((always_inline)) bool
own_begin(struct hook_thread *t)
{
	__atomic_store_n(&t->busy, 1, __ATOMIC_RELAXED);
	if (W.membarrier)
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
	else
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&W.finished, __ATOMIC_RELAXED))
		return true;
	__atomic_store_n(&t->busy, 0, __ATOMIC_RELEASE);
	return false;
}

static void
own_end(struct hook_thread *t)
{
	__atomic_store_n(&t->busy, 0, __ATOMIC_RELEASE);
}

/* Sets W.finished and makes every thread see it. Returns false when it was set already. */
static bool
stop_owners(void)
{
	if (__atomic_exchange_n(&W.finished, 1, __ATOMIC_SEQ_CST))
		return false;
	if (W.membarrier)
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

/* ---- small readers of /proc and /sys ---- */

/* Reads up to len-1 bytes of path into buf. Returns the length, or -1. */
static ssize_t
read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t n = 0;
	ssize_t r;
	while (n + 1 < len && (r = read(fd, buf + n, len - 1 - n)) > 0)
		n += (size_t)r;
	close(fd);
	buf[n] = '\0';
	return (ssize_t)n;
}

/* The first NSpid of a /proc status file: the id in the outermost PID namespace visible. */
static int64_t
ns_id(const char *status, int64_t fallback)
{
	char buf[2048];
	if (read_file(status, buf, sizeof(buf)) < 0)
		return fallback;
	const char *p = strstr(buf, "\nNSpid:");
	if (!p)
		return fallback;
	p += 7;
	while (*p == ' ' || *p == '\t')
		p++;
	int64_t v = 0;
	while (*p >= '0' && *p <= '9')
		v = v * 10 + (*p++ - '0');
	return v ? v : fallback;
}

/* ---- output ---- */

/* Opens the output file for this process ("%p" becomes the pid). */
static void
open_output(void)
{
	char path[4096];
	size_t n = 0;
	for (const char *s = W.path; *s && n < sizeof(path) - 24; s++) {
		if (s[0] == '%' && s[1] == 'p') {
			char pid[24], *q = pid + sizeof(pid);
			*--q = '\0';
			long v = (long)getpid();
			do
				*--q = (char)('0' + v % 10);
			while ((v /= 10));
			size_t l = strlen(q);
			memcpy(path + n, q, l);
			n += l;
			s++;
		} else
			path[n++] = *s;
	}
	path[n] = '\0';
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
	if (fd < 0)
		return;
	/* Out of the way of the program's own low descriptors. */
	int high = fcntl(fd, F_DUPFD_CLOEXEC, 100);
	if (high >= 0) {
		close(fd);
		fd = high;
	}
	struct stat st;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return;
	}
	W.fd = fd;
	W.dev = st.st_dev;
	W.ino = st.st_ino;
	W.pipe = S_ISFIFO(st.st_mode);
}

/* The program may have closed our descriptor and reused its number: never write to a file
 * that is not ours. */
static bool
output_ok(void)
{
	struct stat st;
	if (W.fd >= 0 && fstat(W.fd, &st) == 0 && st.st_dev == W.dev && st.st_ino == W.ino)
		return true;
	W.fd = -1;
	open_output();
	return W.fd >= 0;
}

/* Writes whole lines. A regular file opened for appending takes each write whole; a pipe does
 * so up to PIPE_BUF bytes, so longer writes to one are cut at line ends. Returns 0 or -1. */
static int
write_lines(const char *s, size_t n)
{
	while (n > 0) {
		size_t chunk = n;
		if (W.pipe && chunk > PIPE_BUF) {
			const char *nl = memrchr(s, '\n', PIPE_BUF);
			chunk = nl ? (size_t)(nl - s) + 1 : PIPE_BUF;
		}
		ssize_t w = write(W.fd, s, chunk);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

static void ensure_header(int64_t tid);

/* Writes a thread's buffer out. Caller holds t. */
static void
flush_locked(struct hook_thread *t)
{
	if (!t->out.len)
		return;
	ensure_header(t->tid);
	if (!output_ok() || write_lines(t->out.s, t->out.len) < 0)
		t->lost += t->pending;
	buf_reset(&t->out);
	t->pending = 0;
}

/* ---- meta records ---- */

static void
meta(struct cut_buf *b, int64_t ts, int64_t tid, const char *name, const char *args)
{
	struct cut_event ev;
	cut_event_init(&ev);
	ev.ts = ts;
	ev.pid = W.pid_ns;
	ev.tid = tid;
	ev.layer = CUT_META;
	ev.name = name;
	ev.args = args;
	cut_event_format(b, &ev);
	buf_addc(b, '\n');
}

/* The command line from /proc/self/cmdline: a JSON array, or one string joined by spaces. */
static void
add_cmdline(struct cut_buf *b, bool array)
{
	char buf[8192];
	ssize_t n = read_file("/proc/self/cmdline", buf, sizeof(buf));
	if (n < 0)
		n = 0;
	if (array)
		buf_addc(b, '[');
	for (ssize_t i = 0; i < n;) {
		size_t l = strlen(buf + i);
		if (i)
			buf_addc(b, array ? ',' : ' ');
		if (array)
			buf_addjstr(b, buf + i, l);
		else
			buf_add(b, buf + i, l);
		i += (ssize_t)l + 1;
	}
	if (array)
		buf_addc(b, ']');
}

static void
trim(char *s)
{
	size_t n = strlen(s);
	while (n && (s[n - 1] == '\n' || s[n - 1] == ' '))
		s[--n] = '\0';
}

/* Formats the header and this process's record into W.header. It is done when the first call
 * is recorded, not at start (the libcuda path is known by then), so that a fatal signal
 * handler, which must not format, can still write them. Caller holds header_lock. */
static void
build_header_locked(int64_t tid)
{
	if (W.header_ready)
		return;
	{
		struct cut_buf a = {0}, s = {0};
		struct cut_buf *line = &W.header;
		struct utsname u;
		char buf[512];
		bool have_uname = uname(&u) == 0;
		buf_adds(&a, "{\"schema\":");
		buf_addi64(&a, CUT_SCHEMA_VERSION);
		buf_addkv_str(&a, "tool", "cuthook");
		buf_addkv_str(&a, "version", CUT_VERSION);
		if (have_uname) {
			buf_addkv_str(&a, "host", u.nodename);
			buf_addkv_str(&a, "kernel", u.release);
		}
		if (read_file("/sys/module/nvidia/version", buf, sizeof(buf)) > 0) {
			trim(buf);
			buf_addkv_str(&a, "driver", buf);
		}
		if (read_file("/proc/driver/nvidia/version", buf, sizeof(buf)) > 0)
			buf_addkv_str(&a, "driver_flavour",
			              strstr(buf, "Open Kernel Module") ? "open" : "proprietary");
		const char *libcuda = hook_libcuda_path();
		if (libcuda)
			buf_addkv_str(&a, "libcuda", libcuda);
		buf_addkey(&a, "clock");
		buf_adds(&a, "{\"monotonic_ns\":");
		buf_addi64(&a, W.start_ns);
		buf_adds(&a, ",\"realtime_ns\":");
		buf_addi64(&a, W.start_realtime_ns);
		buf_addc(&a, '}');
		buf_addkey(&a, "sorted");
		buf_adds(&a, "false");
		buf_addkey(&a, "layers");
		buf_adds(&a, "{\"api\":\"on\"");
		static const char *const off[] = {"ioctl", "kernel", "irq", "sched", "gpu"};
		for (size_t i = 0; i < sizeof(off) / sizeof(off[0]); i++) {
			buf_adds(&a, ",\"");
			buf_adds(&a, off[i]);
			buf_adds(&a, "\":\"off: cuthook records driver API calls only\"");
		}
		buf_addc(&a, '}');
		buf_addkey(&a, "cmd");
		add_cmdline(&a, true);
		buf_addc(&a, '}');
		meta(line, W.start_ns, tid, "header", a.s);

		buf_reset(&a);
		if (read_file("/proc/self/comm", buf, sizeof(buf)) >= 0) {
			trim(buf);
			buf_addkv_str(&a, "comm", buf);
		}
		buf_addkey(&a, "cmdline");
		add_cmdline(&s, false);
		buf_addjstr(&a, s.s ? s.s : "", s.len);
		buf_addkey(&a, "ppid");
		buf_addi64(&a, getppid());
		buf_addc(&a, '}');
		meta(line, W.start_ns, tid, "process", a.s);
		buf_free(&a);
		buf_free(&s);
	}
	__atomic_store_n(&W.header_ready, 1, __ATOMIC_RELEASE);
}

/* Makes sure the header is formatted before any event of this process is buffered. */
static void
prepare_header(int64_t tid)
{
	if (__atomic_load_n(&W.header_ready, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&W.header_lock);
	build_header_locked(tid);
	pthread_mutex_unlock(&W.header_lock);
}

/* The header and this process's record, first of its lines. */
static void
ensure_header(int64_t tid)
{
	if (__atomic_load_n(&W.header_done, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&W.header_lock);
	if (!W.header_done && output_ok()) {
		build_header_locked(tid);
		write_lines(W.header.s, W.header.len);
	}
	__atomic_store_n(&W.header_done, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&W.header_lock);
}

static void
thread_record(struct hook_thread *t, int64_t ts)
{
	char comm[17] = "";
	struct cut_buf a = {0};
	prctl(PR_GET_NAME, comm, 0, 0, 0);
	buf_addkv_str(&a, "comm", comm);
	buf_addc(&a, '}');
	meta(&t->out, ts, t->tid, "thread", a.s);
	buf_free(&a);
	t->need_thread_record = false;
}

static void
symbol_record(struct hook_thread *t, int64_t ts, const struct hook_symbol *sym)
{
	struct cut_buf *a = &t->args;
	buf_reset(a);
	buf_addkey(a, "handle");
	buf_addhex(a, sym->handle);
	buf_addkv_str(a, "name", sym->name);
	buf_addkv_str(a, "kind", sym->kind);
	buf_addkv_str(a, "via", sym->via);
	buf_addc(a, '}');
	meta(&t->out, ts, t->tid, "symbol", a->s);
}

/* ---- API events, fast ----
 * cut_event_format builds a line member by member; at a few hundred nanoseconds that is more
 * than a cheap driver call should cost. API events are instead put together from fragments
 * cut out of cut_event_format's own output (per function: name, category; per thread: pid,
 * tid, layer), and each thread checks once that both ways give the same bytes, else it keeps
 * to cut_event_format. */

static void
api_event(struct cut_event *ev, int64_t ts, int64_t dur, int64_t pid, int64_t tid, enum hook_id id,
          int64_t ret, const char *args)
{
	cut_event_init(ev);
	ev->ts = ts;
	ev->dur = dur;
	ev->pid = pid;
	ev->tid = tid;
	ev->layer = CUT_API;
	ev->name = hook_names[id];
	ev->cat = W.cats[id];
	ev->ret = ret;
	ev->args = args;
	ev->has = CUT_HAS_DUR | CUT_HAS_RET;
}

/* Copies the part of line from the start of `from` to the end of `to` (both must be there, in
 * that order) into out. Returns its length, or 0. */
static size_t
cut_out(const char *line, const char *from, const char *to, char *out, size_t outlen)
{
	const char *a = strstr(line, from);
	const char *b = a ? strstr(a, to) : NULL;
	if (!b)
		return 0;
	size_t n = (size_t)(b + strlen(to) - a);
	if (n >= outlen)
		return 0;
	memcpy(out, a, n);
	out[n] = '\0';
	return n;
}

static void
id_fragments(void)
{
	struct cut_buf b = {0};
	struct cut_event ev;
	char frag[256];
	for (int i = 0; i < HOOK_NAPI; i++) {
		buf_reset(&b);
		api_event(&ev, 0, 0, 0, 0, (enum hook_id)i, 0, NULL);
		cut_event_format(&b, &ev);
		size_t n = cut_out(b.s, ",\"name\":", ",\"ret\":", frag, sizeof(frag));
		if (n > 8 && n - 8 < FRAG_MAX) {
			memcpy(W.frag[i], frag + 8, n - 8);
			W.frag_len[i] = (unsigned char)(n - 8);
		}
	}
	buf_free(&b);
}

/* Writes v in decimal at p and returns the end: inline for the common 0..99 (return codes,
 * durations of cheap calls). */
static inline char *
put_small(char *p, int64_t v)
{
	if ((uint64_t)v >= 100)
		return buf_put_i64(p, v);
	if (v < 10) {
		*p = (char)('0' + v);
		return p + 1;
	}
	memcpy(p, buf_digits + v * 2, 2);
	return p + 2;
}

/* Appends one API event line (newline included). Returns false when memory ran out. */
static bool
fast_line(struct hook_thread *t, enum hook_id id, int64_t ts, int64_t dur, int64_t ret,
          const char *args, size_t alen)
{
	struct cut_buf *b = &t->out;
	if (!buf_try_room(b, 128 + 2 * FRAG_MAX + alen))
		return false;
	char *p = b->s + b->len;
	memcpy(p, "{\"ts\":", 6);
	p += 6;
	if (ts >= 1000000) {
		/* Timestamps of one thread share their leading digits for a millisecond. */
		int64_t hi = ts / 1000000;
		uint32_t lo = (uint32_t)(ts - hi * 1000000);
		if (hi != t->ts_hi) {
			t->ts_hi = hi;
			t->ts_hi_len =
			    (unsigned char)(buf_put_i64(t->ts_hi_str, hi) - t->ts_hi_str);
		}
		memcpy(p, t->ts_hi_str, sizeof(t->ts_hi_str));
		p += t->ts_hi_len;
		memcpy(p, buf_digits + lo / 10000 * 2, 2);
		memcpy(p + 2, buf_digits + lo / 100 % 100 * 2, 2);
		memcpy(p + 4, buf_digits + lo % 100 * 2, 2);
		p += 6;
	} else
		p = buf_put_i64(p, ts);
	memcpy(p, ",\"dur\":", 7);
	p = put_small(p + 7, dur);
	memcpy(p, t->frag, FRAG_MAX);
	p += t->frag_len;
	memcpy(p, W.frag[id], FRAG_MAX);
	p = put_small(p + W.frag_len[id], ret);
	if (args) {
		memcpy(p, ",\"args\":", 8);
		memcpy(p + 8, args, alen);
		p += 8 + alen;
	}
	*p++ = '}';
	*p++ = '\n';
	*p = '\0';
	b->len = (size_t)(p - b->s);
	return true;
}

/* The thread's fragment, and whether the fast path writes what cut_event_format would. */
static void
thread_fragment(struct hook_thread *t)
{
	struct cut_buf b = {0};
	struct cut_event ev;
	t->fast = false;
	api_event(&ev, 0, 0, W.pid_ns, t->tid, (enum hook_id)0, 0, NULL);
	cut_event_format(&b, &ev);
	size_t n = cut_out(b.s, ",\"pid\":", ",\"name\":", t->frag, sizeof(t->frag));
	if (n > 0 && W.frag_len[0]) {
		t->frag_len = (unsigned char)n;
		static const char args[] = "{\"bytes\":1,\"dir\":\"HtoD\"}";
		buf_reset(&b);
		api_event(&ev, 1234567890123, 45, W.pid_ns, t->tid, (enum hook_id)0, -7, args);
		cut_event_format(&b, &ev);
		buf_addc(&b, '\n');
		size_t mark = t->out.len;
		if (fast_line(t, (enum hook_id)0, 1234567890123, 45, -7, args, strlen(args)))
			t->fast =
			    t->out.len - mark == b.len && memcmp(t->out.s + mark, b.s, b.len) == 0;
		t->out.len = mark;
		if (t->out.s)
			t->out.s[mark] = '\0';
	}
	buf_free(&b);
}

/* ---- threads ---- */

static void
thread_gone(void *p)
{
	struct hook_thread *t = p;
	hook_guard = 1;
	if (own_begin(t)) {
		flush_locked(t);
		own_end(t);
	}
	pthread_mutex_lock(&W.threads_lock);
	t->in_use = false;
	pthread_mutex_unlock(&W.threads_lock);
	hook_self = NULL;
	hook_guard = 0;
}

/* A state for the calling thread: a free one, or a new one added to the list. */
static struct hook_thread *
thread_new(void)
{
	pthread_mutex_lock(&W.threads_lock);
	struct hook_thread *t;
	for (t = W.threads; t && t->in_use; t = t->next)
		;
	if (!t && (t = calloc(1, sizeof(*t)))) {
		t->next = W.threads;
		__atomic_store_n(&W.threads, t, __ATOMIC_RELEASE);
	}
	if (t)
		t->in_use = true;
	pthread_mutex_unlock(&W.threads_lock);
	if (!t)
		return NULL;
	t->tid = ns_id("/proc/thread-self/status", (int64_t)syscall(SYS_gettid));
	t->fast = false;
	t->need_thread_record = true; /* and its fragment, at its first call */
	pthread_setspecific(W.key, t);
	hook_self = t;
	return t;
}

/* ---- start ---- */

static void on_fatal(int sig);
static void fork_prepare(void);
static void fork_parent(void);
static void fork_child(void);

static void
init(void)
{
	hook_guard = 1;
	struct timespec mono, real;
	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &real);
	W.start_ns = (int64_t)mono.tv_sec * 1000000000 + mono.tv_nsec;
	W.start_realtime_ns = (int64_t)real.tv_sec * 1000000000 + real.tv_nsec;
	W.pid = getpid();
	W.pid_ns = ns_id("/proc/self/status", W.pid);
	const char *root = getenv("CUTHOOK_ROOT");
	W.root = !root || atol(root) == (long)W.pid;
	const char *out = getenv("CUTHOOK_OUTPUT");
	W.path = strdup(out && *out ? out : DEFAULT_OUTPUT);
	hook_resolve_init();
	hook_decode_init();
	hook_clock_init();
	for (int i = 0; i < HOOK_NAPI; i++)
		W.cats[i] = cut_api_category(hook_names[i]);
	id_fragments();
	if (W.path)
		open_output();
	W.membarrier =
	    syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
	if (W.fd >= 0 && pthread_key_create(&W.key, thread_gone) == 0) {
		pthread_atfork(fork_prepare, fork_parent, fork_child);
		/* Flush on fatal signals the program leaves at their default action. */
		static const int fatal[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT,
		                            SIGTERM, SIGINT, SIGHUP, SIGQUIT};
		for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++) {
			struct sigaction old, sa;
			if (sigaction(fatal[i], NULL, &old) < 0 || old.sa_handler != SIG_DFL ||
			    (old.sa_flags & SA_SIGINFO))
				continue;
			memset(&sa, 0, sizeof(sa));
			sa.sa_handler = on_fatal;
			sa.sa_flags = SA_RESETHAND;
			sigemptyset(&sa.sa_mask);
			sigaction(fatal[i], &sa, NULL);
		}
		W.inited = true;
		__atomic_store_n(&hook_recording, 1, __ATOMIC_RELEASE);
	}
	hook_guard = 0;
}

__attribute__((constructor)) static void
hook_start(void)
{
	pthread_once(&W.once, init);
}

struct hook_thread *
hook_enter_slow(void)
{
	if (hook_guard)
		return NULL;
	pthread_once(&W.once, init);
	if (!__atomic_load_n(&hook_recording, __ATOMIC_ACQUIRE))
		return NULL;
	if (hook_self)
		return hook_self;
	hook_guard = 1;
	struct hook_thread *t = getpid() == W.pid ? thread_new() : NULL;
	hook_guard = 0;
	return t;
}

void
hook_record(struct hook_thread *t, enum hook_id id, enum hook_via via, int64_t t0, uint64_t end,
            CUresult r, const uint64_t *a)
{
	hook_guard = 1;
	/* First, while the clock read of an end that is not a TSC read is closest to the return. */
	uint64_t from_clock = t->tsc.from_clock;
	int64_t t1 = hook_end_time(&t->tsc, end);
	prepare_header(t->tid);
	int64_t dur = t1 > t0 ? t1 - t0 : 0;
	struct hook_symbol sym = {0}, asked = {0};
	const char *args = NULL;
	if (hook_decodes[id]) {
		buf_reset(&t->args);
		hook_decode(id, r, a, &t->args, &sym, &asked);
		if (t->args.len)
			args = t->args.s;
	}
	if (!own_begin(t)) {
		t->lost++;
		t->tsc.from_clock = from_clock; /* counts only events written */
	} else {
		t->calls[id][via]++;
		if (t->need_thread_record) {
			thread_fragment(t); /* its pid and tid: new in a forked child */
			thread_record(t, t0);
		}
		if (t->fast && W.frag_len[id]) {
			if (!fast_line(t, id, t0, dur, r, args, args ? t->args.len : 0))
				t->lost++;
		} else {
			struct cut_event ev;
			api_event(&ev, t0, dur, W.pid_ns, t->tid, id, r, args);
			cut_event_format(&t->out, &ev);
			buf_addc(&t->out, '\n');
		}
		t->events++;
		t->pending++;
		if (asked.handle)
			symbol_record(t, t0 + dur, &asked);
		if (sym.handle)
			symbol_record(t, t0 + dur, &sym);
		if (t->out.len >= FLUSH_AT)
			flush_locked(t);
		own_end(t);
	}
	hook_guard = 0;
}

/* ---- the end ---- */

/* Writes every thread's buffer, then the lost record and the trailer. A process that is not the
 * one cuthook started and recorded nothing writes nothing at all. */
static void
finish(void)
{
	if (!W.inited || getpid() != W.pid || !stop_owners())
		return;
	int guard = hook_guard;
	hook_guard = 1;
	__atomic_store_n(&hook_recording, 0, __ATOMIC_RELEASE);
	static uint64_t calls[HOOK_NAPI][HOOK_NVIA];
	memset(calls, 0, sizeof(calls));
	uint64_t events = 0, lost = 0, from_clock = 0;
	int64_t tid = hook_self ? hook_self->tid : (int64_t)syscall(SYS_gettid);
	pthread_mutex_lock(&W.threads_lock);
	for (struct hook_thread *t = W.threads; t; t = t->next) {
		wait_idle(t, INT_MAX);
		flush_locked(t);
		events += t->events;
		lost += t->lost;
		from_clock += t->tsc.from_clock;
		for (int i = 0; i < HOOK_NAPI; i++)
			for (int v = 0; v < HOOK_NVIA; v++)
				calls[i][v] += t->calls[i][v];
	}
	pthread_mutex_unlock(&W.threads_lock);
	if (W.root || events || lost) {
		ensure_header(tid);
		struct cut_buf a = {0}, line = {0};
		int64_t now = hook_now();
		if (lost) {
			buf_adds(&a, "{\"count\":");
			buf_addi64(&a, (int64_t)lost);
			buf_adds(&a, ",\"reason\":\"output not writable or events after the end\"");
			buf_adds(&a, ",\"layer\":\"api\"}");
			meta(&line, now, tid, "lost", a.s);
			buf_reset(&a);
		}
		buf_adds(&a, "{\"events\":");
		buf_addi64(&a, (int64_t)events);
		buf_adds(&a, ",\"lost\":");
		buf_addi64(&a, (int64_t)lost);
		buf_adds(&a, ",\"layers\":{\"api\":");
		buf_addi64(&a, (int64_t)events);
		/* How durations were measured (clock.c): ends read from the TSC or the clock. */
		buf_adds(&a, "},\"durations\":{\"tsc\":");
		buf_addi64(&a, (int64_t)(events - from_clock));
		buf_adds(&a, ",\"clock\":");
		buf_addi64(&a, (int64_t)from_clock);
		uint64_t hz = hook_tsc_hz();
		if (hz) {
			buf_adds(&a, ",\"tsc_hz\":");
			buf_addi64(&a, (int64_t)hz);
		}
		buf_adds(&a, "},\"coverage\":");
		hook_audit(&a, (const uint64_t(*)[HOOK_NVIA])calls);
		buf_addc(&a, '}');
		meta(&line, now, tid, "trailer", a.s);
		if (output_ok())
			write_lines(line.s, line.len);
		buf_free(&a);
		buf_free(&line);
	}
	hook_guard = guard;
}

/* After the program's exit handlers and C++ static destructors: late driver calls count. */
__attribute__((destructor)) static void
hook_stop(void)
{
	finish();
}

/* os._exit and friends skip the destructors. A vfork child shares our memory but has its own
 * pid: finish() leaves it alone. */
__attribute__((noreturn)) static void
exit_now(const char *name, int status)
{
	finish();
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

/* Writes what is buffered (no trailer: formatting it is not async-signal-safe), then lets the
 * signal take its default action. */
static void
on_fatal(int sig)
{
	int saved = errno;
	if (W.inited && getpid() == W.pid && W.fd >= 0 && stop_owners()) {
		/* The header was formatted with the first event; only writing is left. */
		if (!W.header_done && __atomic_load_n(&W.header_ready, __ATOMIC_ACQUIRE)) {
			write_lines(W.header.s, W.header.len);
			W.header_done = 1;
		}
		/* A thread that died inside libcuthook leaves its own buffer busy: skipped. */
		for (struct hook_thread *t = __atomic_load_n(&W.threads, __ATOMIC_ACQUIRE); t;
		     t = t->next) {
			if (t == hook_self ? t->busy : !wait_idle(t, 1000))
				continue;
			if (t->out.len)
				write_lines(t->out.s, t->out.len);
			t->out.len = 0;
			t->pending = 0;
		}
	}
	raise(sig);
	errno = saved;
}

/* ---- fork ---- */

static void
fork_prepare(void)
{
	pthread_mutex_lock(&W.threads_lock);
	pthread_mutex_lock(&W.header_lock);
	hook_resolve_fork(0);
	hook_names_fork(0);
}

static void
fork_parent(void)
{
	hook_names_fork(1);
	hook_resolve_fork(1);
	pthread_mutex_unlock(&W.header_lock);
	pthread_mutex_unlock(&W.threads_lock);
}

/* The child is a process of its own: its own header (when it records anything), counts and
 * trailer. The parent's buffered lines are the parent's to write. */
static void
fork_child(void)
{
	hook_names_fork(2);
	hook_resolve_fork(2);
	hook_clock_fork_child();
	W.pid = getpid();
	W.pid_ns = ns_id("/proc/self/status", W.pid);
	W.root = false;
	W.header_done = 0;
	W.header_ready = 0;
	buf_reset(&W.header);
	if (W.membarrier)
		W.membarrier =
		    syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
	for (struct hook_thread *t = W.threads; t; t = t->next) {
		if (t != hook_self)
			t->in_use = false;
		t->busy = 0;
		buf_reset(&t->out);
		t->events = t->pending = t->lost = 0;
		t->tsc.from_clock = 0;
		memset(t->calls, 0, sizeof(t->calls));
	}
	if (hook_self) {
		hook_self->tid = ns_id("/proc/thread-self/status", (int64_t)syscall(SYS_gettid));
		hook_self->need_thread_record = true;
	}
	if (strstr(W.path, "%p")) {
		if (W.fd >= 0)
			close(W.fd);
		W.fd = -1;
		open_output();
	}
	pthread_mutex_unlock(&W.header_lock);
	pthread_mutex_unlock(&W.threads_lock);
}
