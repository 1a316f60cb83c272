/* writer.c: libcuthook's per-thread buffers of formatted events (API events put together
 * from fragments, fast, their args decoded as cutcapture decodes them) and the output file
 * shared by every process of a capture: whole lines, appended atomically. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "event.h"
#include "gpu.h"
#include "hook.h"
#include "hooklib.h"
#include "writer.h"

HOOK_TLS struct hook_thread *hook_self;
uint64_t hook_layer_events[CUT_NLAYERS];
HOOK_TLS int hook_guard;
HOOK_TLS int64_t hook_floor;
int hook_recording;

struct hook_writer hook_w = {
    .once = PTHREAD_ONCE_INIT,
    .fd = -1,
    .threads_lock = PTHREAD_MUTEX_INITIALIZER,
    .header_lock = PTHREAD_MUTEX_INITIALIZER,
};

/* ---- small readers of /proc and /sys ---- */

ssize_t
hook_read_file(const char *path, char *buf, size_t len)
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

int64_t
hook_ns_id(const char *status, int64_t fallback)
{
	char buf[2048];
	if (hook_read_file(status, buf, sizeof(buf)) < 0)
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

/* The time (CLOCK_REALTIME ns) before which a %p file of this pid is stale: the capture's
 * start (CUTHOOK_START, from the launcher), else this process's start (which exec keeps),
 * from /proc/self/stat and the boot clock. 0 when unknown. */
static int64_t
stale_before(void)
{
	const char *env = getenv("CUTHOOK_START");
	if (env && *env)
		return atoll(env);
	char buf[1024];
	if (hook_read_file("/proc/self/stat", buf, sizeof(buf)) <= 0)
		return 0;
	const char *p = strrchr(buf, ')');
	for (int field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (!p)
		return 0;
	int64_t ticks = atoll(p + 1);
	long hz = sysconf(_SC_CLK_TCK);
	struct timespec boot, real;
	clock_gettime(CLOCK_BOOTTIME, &boot);
	clock_gettime(CLOCK_REALTIME, &real);
	int64_t since_boot = (int64_t)boot.tv_sec * 1000000000 + boot.tv_nsec;
	int64_t started = hz > 0 ? ticks * (1000000000 / hz) : since_boot;
	/* the tick rounds the start down: a file written in that tick before it is not stale */
	return (int64_t)real.tv_sec * 1000000000 + real.tv_nsec - (since_boot - started) +
	       (hz > 0 ? 1000000000 / hz : 0);
}

/* ---- what the launcher is told (hooklib.h) ---- */

void
hook_status_init(void)
{
	hook_w.status = cut_hook_status_attach(&hook_w.launcher);
	if (hook_w.status)
		__atomic_add_fetch(&hook_w.status->processes, 1, __ATOMIC_RELAXED);
}

/* An open or write of the output failed with errno e. Async-signal-safe. */
static void
io_failed(int e)
{
	if (hook_w.status)
		cut_hook_status_error(hook_w.status, e);
}

void
hook_io_lost(uint64_t n)
{
	if (!n || !hook_w.status)
		return;
	__atomic_add_fetch(&hook_w.status->lost, n, __ATOMIC_RELAXED);
	__atomic_add_fetch(&hook_w.io_lost, n, __ATOMIC_RELAXED);
}

void
hook_trailer_written(bool written)
{
	if (!hook_w.status)
		return;
	uint64_t mine = __atomic_exchange_n(&hook_w.io_lost, 0, __ATOMIC_RELAXED);
	if (written) /* the trailer counts them */
		__atomic_sub_fetch(&hook_w.status->lost, mine, __ATOMIC_RELAXED);
	else
		__atomic_add_fetch(&hook_w.status->no_trailer, 1, __ATOMIC_RELAXED);
}

/*
 * cutcapture's files are its own: once it is gone (killed), nothing will read them. This
 * process stops recording, and removes its file, the files of the capture's other processes
 * and the directory, where it can. Async-signal-safe: hook_output_ok calls it.
 */
static bool
launcher_gone(void)
{
	if (__atomic_load_n(&hook_w.gone, __ATOMIC_ACQUIRE))
		return true;
	if (!hook_w.status || !hook_w.status->stop_if_gone ||
	    cut_hook_launcher_alive(&hook_w.launcher))
		return false;
	if (__atomic_exchange_n(&hook_w.gone, 1, __ATOMIC_ACQ_REL))
		return true;
	__atomic_store_n(&hook_recording, 0, __ATOMIC_RELEASE);
	if (hook_w.fd >= 0)
		close(hook_w.fd);
	hook_w.fd = -1;
	char dir[PATH_MAX + 32];
	const char *slash = strrchr(hook_w.path, '/'), *name = slash ? slash + 1 : hook_w.path;
	size_t n = slash ? (size_t)(slash - hook_w.path) : 0;
	if (n >= sizeof(dir))
		return true;
	memcpy(dir, hook_w.path, n);
	dir[n] = '\0';
	int dfd = open(n ? dir : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char buf[4096];
	long got;
	while (dfd >= 0 && (got = syscall(SYS_getdents64, dfd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < got;) {
			struct dirent64 *d = (struct dirent64 *)(buf + off);
			off += d->d_reclen;
			if (cut_hook_pid_of(d->d_name, name) > 0)
				unlinkat(dfd, d->d_name, 0);
		}
	}
	if (dfd >= 0)
		close(dfd);
	rmdir(dir); /* empty now, unless the launcher's own files are left */
	return true;
}

/* Whether the file at path (lstat st) is one this capture made: regular, this user's, no other
 * name, no mode bits beyond 0644, and written since the capture started. */
static bool
ours(const struct stat *st)
{
	return S_ISREG(st->st_mode) && st->st_uid == geteuid() && st->st_nlink == 1 &&
	       !(st->st_mode & 07777 & ~0644) &&
	       (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec >= stale_before();
}

/*
 * Opens the output, never through a symbolic link (O_NOFOLLOW), created 0644. With "%p" the
 * file is this process's: created fresh (O_EXCL); one that is there already is kept and appended
 * to when this capture wrote it (an earlier image of this pid, before exec, or an earlier process
 * that had this pid); anything else there (a stale file of an earlier run, a link, a file of
 * another user's, planted) is removed and the file made afresh, or, where it cannot be removed,
 * not written. A FIFO is opened without waiting for a reader (none: not written). A path that
 * would be too long once "%p" is replaced is not opened. Failures are told to the launcher.
 * Async-signal-safe.
 */
void
hook_open_output(void)
{
	char path[PATH_MAX + 32];
	size_t n = 0;
	bool per_pid = false;
	if (__atomic_load_n(&hook_w.gone, __ATOMIC_ACQUIRE))
		return;
	for (const char *s = hook_w.path; *s; s++) {
		if (n >= PATH_MAX) {
			io_failed(ENAMETOOLONG); /* never a shorter name than the one asked for */
			return;
		}
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
			per_pid = true;
		} else
			path[n++] = *s;
	}
	if (n >= PATH_MAX) {
		io_failed(ENAMETOOLONG);
		return;
	}
	path[n] = '\0';
	int flags = O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK;
	int fd = open(path, flags | O_CREAT | (per_pid ? O_EXCL : 0), 0644);
	struct stat was, st;
	if (fd < 0 && per_pid && errno == EEXIST) {
		if (lstat(path, &was) == 0 && ours(&was) && (fd = open(path, flags)) >= 0 &&
		    (fstat(fd, &st) < 0 || st.st_dev != was.st_dev || st.st_ino != was.st_ino)) {
			close(fd);
			fd = -1;
		}
		if (fd < 0 && unlink(path) == 0)
			fd = open(path, flags | O_CREAT | O_EXCL, 0644);
		else if (fd < 0)
			errno = EEXIST; /* the cause: a file there that is not this capture's */
	}
	if (fd < 0) {
		io_failed(errno);
		return;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	/* Out of the way of the program's own low descriptors. */
	int high = fcntl(fd, F_DUPFD_CLOEXEC, 100);
	if (high >= 0) {
		close(fd);
		fd = high;
	}
	if (fstat(fd, &st) < 0) {
		io_failed(errno);
		close(fd);
		return;
	}
	hook_w.fd = fd;
	hook_w.dev = st.st_dev;
	hook_w.ino = st.st_ino;
	hook_w.pipe = S_ISFIFO(st.st_mode);
}

/* The program may have closed our descriptor and reused its number: never write to a file
 * that is not ours. */
bool
hook_output_ok(void)
{
	struct stat st;
	if (launcher_gone())
		return false;
	if (hook_w.fd >= 0 && fstat(hook_w.fd, &st) == 0 && st.st_dev == hook_w.dev &&
	    st.st_ino == hook_w.ino)
		return true;
	hook_w.fd = -1;
	hook_open_output();
	return hook_w.fd >= 0;
}

/*
 * Writes whole lines. A regular file opened for appending takes each write whole; a pipe does
 * so up to PIPE_BUF bytes, so longer writes to one are cut at line ends. A write past the
 * file size limit (RLIMIT_FSIZE) or into a pipe with no reader raises SIGXFSZ or SIGPIPE in
 * the writing thread, which by default kills the program: both are blocked here and the one
 * this write raised is taken back, so the program runs as it would without the library.
 * Returns 0, or -1 with errno set (the failure told to the launcher).
 */
int
hook_write_lines(const char *s, size_t n)
{
	sigset_t quiet, old, before;
	sigemptyset(&quiet);
	sigaddset(&quiet, SIGXFSZ);
	sigaddset(&quiet, SIGPIPE);
	sigemptyset(&before);
	pthread_sigmask(SIG_BLOCK, &quiet, &old);
	/* One the program blocked and has pending already is its own: left to it. */
	if (sigismember(&old, SIGXFSZ) || sigismember(&old, SIGPIPE))
		sigpending(&before);
	int e = 0;
	while (n > 0) {
		size_t chunk = n;
		if (hook_w.pipe && chunk > PIPE_BUF) {
			const char *nl = memrchr(s, '\n', PIPE_BUF);
			chunk = nl ? (size_t)(nl - s) + 1 : PIPE_BUF;
		}
		ssize_t w = write(hook_w.fd, s, chunk);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			e = w < 0 ? errno : EIO;
			break;
		}
		s += w;
		n -= (size_t)w;
	}
	if (e == EFBIG || e == EPIPE) {
		int sig = e == EFBIG ? SIGXFSZ : SIGPIPE;
		sigset_t one;
		struct timespec now = {0, 0};
		sigemptyset(&one);
		sigaddset(&one, sig);
		if (!sigismember(&before, sig))
			sigtimedwait(&one, NULL, &now);
	}
	if (e)
		io_failed(e);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = e;
	return e ? -1 : 0;
}

/* ---- threads ---- */

struct hook_thread *
hook_thread_new(void)
{
	pthread_mutex_lock(&hook_w.threads_lock);
	struct hook_thread *t;
	for (t = hook_w.threads; t && t->in_use; t = t->next)
		;
	if (!t && (t = calloc(1, sizeof(*t)))) {
		t->next = hook_w.threads;
		__atomic_store_n(&hook_w.threads, t, __ATOMIC_RELEASE);
	}
	if (t)
		t->in_use = true;
	pthread_mutex_unlock(&hook_w.threads_lock);
	if (!t)
		return NULL;
	t->tid = hook_ns_id("/proc/thread-self/status", (int64_t)syscall(SYS_gettid));
	t->depth = 0; /* a thread cancelled inside a call had this state before */
	t->fast = false;
	t->need_thread_record = true; /* and its fragment, at its first call */
	pthread_setspecific(hook_w.key, t);
	hook_self = t;
	hook_mark_thread(0);
	return t;
}

void
hook_flush(struct hook_thread *t)
{
	if (!t->out.len)
		return;
	hook_ensure_header(t->tid);
	bool written = hook_output_ok() && hook_write_lines(t->out.s, t->out.len) == 0;
	if (!written)
		hook_io_lost(t->pending);
	hook_pending_done(t, written);
	buf_reset(&t->out);
}

void
hook_pending_done(struct hook_thread *t, bool written)
{
	for (int l = 0; l < CUT_NLAYERS; l++) {
		if (written && t->pending_in[l])
			__atomic_add_fetch(&hook_layer_events[l], t->pending_in[l],
			                   __ATOMIC_RELAXED);
		t->pending_in[l] = 0;
	}
	if (!written) {
		t->lost += t->pending;
		t->events -= t->pending;
	}
	t->pending = 0;
}

/* ---- calls, fast ----
 * cut_event_format builds a line member by member; at a few hundred nanoseconds that is more
 * than a cheap driver or runtime call should cost. A call's line is instead put together from
 * fragments cut out of cut_event_format's own output (per function: layer, name, category; per
 * thread: host, rank, pid, tid), and each thread checks once that both ways give the same
 * bytes, else it keeps to cut_event_format. */

/* A call's event, as cut_event_format would be given it. */
static void
call_event(struct cut_event *ev, const struct hook_frag *f, int64_t ts, int64_t dur, int64_t pid,
           int64_t tid, int64_t ret, const char *args)
{
	cut_event_init(ev);
	ev->ts = ts;
	ev->dur = dur;
	ev->pid = pid;
	ev->tid = tid;
	ev->layer = f->layer;
	ev->name = f->name;
	ev->cat = f->cat;
	ev->ret = ret;
	ev->args = args;
	ev->has = CUT_HAS_DUR | (f->ret ? CUT_HAS_RET : 0);
	hook_label(ev);
}

void
hook_label(struct cut_event *ev)
{
	ev->host = hook_w.host;
	if (hook_w.rank.rank >= 0) {
		ev->rank = hook_w.rank.rank;
		ev->has |= CUT_HAS_RANK;
	}
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

void
hook_frag_make(struct hook_frag *f, enum cut_layer l, const char *name, const char *cat, bool ret)
{
	struct cut_buf b = {0};
	struct cut_event ev;
	char frag[FRAG_MAX + 16];
	memset(f, 0, sizeof(*f));
	f->layer = l;
	f->name = name;
	f->cat = cat;
	f->ret = ret;
	call_event(&ev, f, 0, 0, 0, 0, 0, NULL);
	cut_event_format(&b, &ev);
	/* From the layer's value to "ret": (ret's value follows), or to the end of the line. */
	size_t n = cut_out(b.s, ",\"layer\":", ret ? ",\"ret\":" : "}", frag, sizeof(frag));
	size_t skip = strlen(",\"layer\":"), end = ret ? 0 : 1;
	if (n > skip + end && n - skip - end < FRAG_MAX) {
		memcpy(f->s, frag + skip, n - skip - end);
		f->len = (unsigned char)(n - skip - end);
	}
	buf_free(&b);
}

void
hook_frag_queue(struct hook_frag *f, const struct cut_api_desc *d)
{
	f->queue = f->len && (!d->decodes || d->pure);
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

/* Appends one call's line (newline included) to w's buffer; the call's thread's fragment is
 * frag (len bytes in THREAD_FRAG_MAX). Returns false when memory ran out. */
static bool
fast_line(struct hook_thread *w, const char *frag, unsigned frag_len, const struct hook_frag *f,
          int64_t ts, int64_t dur, int64_t ret, const char *args, size_t alen)
{
	struct hook_thread *t = w; /* its cache of the timestamps' leading digits */
	struct cut_buf *b = &w->out;
	if (!buf_try_room(b, 128 + THREAD_FRAG_MAX + FRAG_MAX + alen))
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
	memcpy(p, frag, THREAD_FRAG_MAX);
	p += frag_len;
	memcpy(p, f->s, FRAG_MAX);
	p += f->len;
	if (f->ret)
		p = put_small(p, ret);
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

/* Whether fast_line writes what cut_event_format would, for a call of f by this thread. */
static bool
fast_agrees(struct hook_thread *t, const struct hook_frag *f)
{
	static const char args[] = "{\"bytes\":1,\"dir\":\"HtoD\"}";
	struct cut_buf b = {0};
	struct cut_event ev;
	bool same = false;
	call_event(&ev, f, 1234567890123, 45, hook_w.pid_ns, t->tid, -7, args);
	cut_event_format(&b, &ev);
	buf_addc(&b, '\n');
	size_t mark = t->out.len;
	if (f->len &&
	    fast_line(t, t->frag, t->frag_len, f, 1234567890123, 45, -7, args, strlen(args)))
		same = t->out.len - mark == b.len && memcmp(t->out.s + mark, b.s, b.len) == 0;
	t->out.len = mark;
	if (t->out.s)
		t->out.s[mark] = '\0';
	buf_free(&b);
	return same;
}

/* The thread's fragment, and whether the fast path writes what cut_event_format would (a call
 * with a ret and one without, of another layer). */
static void
thread_fragment(struct hook_thread *t)
{
	struct cut_buf b = {0};
	struct cut_event ev;
	struct hook_frag other;
	t->fast = false;
	call_event(&ev, &hook_w.frag[0], 0, 0, hook_w.pid_ns, t->tid, 0, NULL);
	cut_event_format(&b, &ev);
	const char *from = hook_w.host             ? ",\"host\":"
	                   : hook_w.rank.rank >= 0 ? ",\"rank\":"
	                                           : ",\"pid\":";
	size_t n = cut_out(b.s, from, ",\"layer\":", t->frag, sizeof(t->frag));
	if (n > 0) {
		t->frag_len = (unsigned char)n;
		hook_frag_make(&other, CUT_RUNTIME, "cudaGetLastError", "error", false);
		t->fast = fast_agrees(t, &hook_w.frag[0]) && fast_agrees(t, &other);
	}
	buf_free(&b);
}

/* Appends a call's line, on the fast path where the thread and the function have one, and the
 * symbol records of asked and sym where they name a handle; counts it. Caller owns t. */
static inline __attribute__((always_inline)) void
call_line(struct hook_thread *t, const struct hook_frag *f, int64_t t0, int64_t dur, int64_t r,
          const char *args, size_t alen, const struct hook_symbol *asked,
          const struct hook_symbol *sym)
{
	if (t->need_thread_record) {
		thread_fragment(t); /* its pid and tid: new in a forked child */
		hook_thread_record(t, t0);
	}
	if (t->fast && f->len) {
		if (!fast_line(t, t->frag, t->frag_len, f, t0, dur, r, args, alen)) {
			t->lost++;
			return;
		}
	} else {
		struct cut_event ev;
		call_event(&ev, f, t0, dur, hook_w.pid_ns, t->tid, r, args);
		cut_event_format(&t->out, &ev);
		buf_addc(&t->out, '\n');
	}
	t->events++;
	t->pending++;
	t->pending_in[f->layer]++;
	if (asked->handle)
		hook_symbol_record(t, t0 + dur, asked);
	if (sym->handle)
		hook_symbol_record(t, t0 + dur, sym);
	if (t->out.len >= FLUSH_AT)
		hook_flush(t);
}

/* ---- a call's args object, by the decoder both capture paths share (api/call.h), from the
 * wrapper's argument words ---- */

/* Per id, resolved once: what its calls say and what must be read of them. */
static struct cut_api_desc descs[HOOK_NAPI];
static unsigned char decodes[HOOK_NAPI];

void
hook_decode_init(void)
{
	for (int i = 0; i < HOOK_NAPI; i++) {
		cut_api_describe(&descs[i], hook_names[i]);
		decodes[i] = descs[i].decodes;
	}
}

void
hook_id_fragments(void)
{
	for (int i = 0; i < HOOK_NAPI; i++) {
		hook_frag_make(&hook_w.frag[i], CUT_API, hook_names[i], hook_w.cats[i], true);
		hook_frag_queue(&hook_w.frag[i], &descs[i]);
	}
}

/* The args object of call c of d (recorded as name) to b; *sym and *asked as for decode. */
static void
decode_call(const struct cut_api_desc *d, const char *name, const struct cut_call *c,
            struct cut_buf *b, struct hook_symbol *sym, struct hook_symbol *asked)
{
	struct cut_api_sym s;
	struct hook_names hn;
	hook_names_begin(&hn);
	cut_api_args(d, c, 0, &hn.names, b, &s);
	*asked = hn.asked;
	sym->handle = 0;
	if (s.handle) {
		const struct cut_name *n = hook_name_set(s.handle, s.name, s.len);
		if (n)
			*sym = (struct hook_symbol){s.handle, n->raw, s.kind, name};
	}
}

/* Whether memo m holds the args of call c of d, the names as they are (gen). */
static inline bool
memo_holds(const struct hook_memo *m, const struct cut_api_desc *d, const struct cut_call *c,
           uint32_t gen)
{
	if (m->d != d || m->r != c->ret || m->gen != gen || m->extra_ok != c->extra_ok)
		return false;
	for (uint32_t w = d->words; w; w &= w - 1) {
		int i = __builtin_ctz(w);
		if (m->a[i] != c->a[i])
			return false;
	}
	for (int k = 0; k < CUT_API_NOUT && d->rd.out[k]; k++)
		if (m->out[k] != c->out[k])
			return false;
	return true;
}

/* The set of t's memo a call c of d belongs in: a hash of its function, result and first two
 * words (a launch's function and grid: what tells a step's launches apart), cheap where the
 * whole key is compared anyway. */
static inline unsigned
memo_set(const struct cut_api_desc *d, const struct cut_call *c)
{
	uint64_t h = ((uint64_t)(uintptr_t)d ^ (uint32_t)c->ret) * 0x9e3779b97f4a7c15ull;
	uint32_t w = d->words;
	for (int n = 0; w && n < 2; w &= w - 1, n++)
		h = (h ^ c->a[__builtin_ctz(w)]) * 0x9e3779b97f4a7c15ull;
	return (unsigned)(h >> 58) % HOOK_MEMO_SETS;
}

/* Keeps the args b of call c of d in set s of t's memo, in place of the way least recently
 * used. */
static void
memo_keep(struct hook_thread *t, unsigned s, const struct cut_api_desc *d, const struct cut_call *c,
          uint32_t gen, const struct cut_buf *b)
{
	if (!t->memo && !(t->memo = calloc(HOOK_MEMO_SETS * HOOK_MEMO_WAYS, sizeof(*t->memo))))
		return; /* out of memory: none kept */
	unsigned v = t->memo_victim[s];
	struct hook_memo *m = &t->memo[s * HOOK_MEMO_WAYS + v];
	t->memo_victim[s] = (unsigned char)((v + 1) % HOOK_MEMO_WAYS);
	m->d = NULL;
	buf_reset(&m->args);
	if (b->len) {
		char *p = buf_try_room(&m->args, b->len);
		if (!p)
			return; /* out of memory: not kept */
		buf_commit(&m->args, (char *)memcpy(p, b->s, b->len) + b->len);
	}
	m->r = c->ret;
	m->gen = gen;
	m->extra_ok = c->extra_ok;
	for (uint32_t w = d->words; w; w &= w - 1) {
		int i = __builtin_ctz(w);
		m->a[i] = c->a[i];
	}
	for (int k = 0; k < CUT_API_NOUT && d->rd.out[k]; k++)
		m->out[k] = c->out[k];
	m->d = d;
}

/*
 * Appends the args object of call c (cut_api_read's) described by d (recorded as name) to b
 * (nothing when there is nothing to say); fills *sym when the call named a
 * handle, and *asked when the driver was asked the name of a handle the call used (both: handle
 * 0 when none). The args of a call of a pure function (cut_api_desc.pure) are copied from t's
 * memo of a recent call alike (the same result, words and out values), the names unchanged
 * since, instead of written out again: a launch's took some 850 instructions (its kernel's name
 * looked up, its grid and block written digit by digit), and a training step launches the same
 * kernels alike every step. A call that has a symbol record due is never kept, so that a copy never
 * owes one.
 */
static void
decode_read(struct hook_thread *t, const struct cut_api_desc *d, const char *name,
            const struct cut_call *c, struct cut_buf *b, struct hook_symbol *sym,
            struct hook_symbol *asked)
{
	if (!d->pure) {
		decode_call(d, name, c, b, sym, asked);
		return;
	}
	uint32_t gen = __atomic_load_n(&hook_names_gen, __ATOMIC_ACQUIRE);
	unsigned set = memo_set(d, c);
	for (int i = 0; t->memo && i < HOOK_MEMO_WAYS; i++) {
		const struct hook_memo *m = &t->memo[set * HOOK_MEMO_WAYS + i];
		char *p;
		if (memo_holds(m, d, c, gen) &&
		    (!m->args.len || (p = buf_try_room(b, m->args.len)))) {
			if (m->args.len)
				buf_commit(b,
				           (char *)memcpy(p, m->args.s, m->args.len) + m->args.len);
			t->memo_victim[set] = (unsigned char)((i + 1) % HOOK_MEMO_WAYS);
			sym->handle = asked->handle = 0;
			return;
		}
	}
	decode_call(d, name, c, b, sym, asked);
	if (!sym->handle && !asked->handle)
		memo_keep(t, set, d, c, gen, b);
}

/* decode_read of the call that returned r with argument words a, read now; t's memo. */
static void
decode(struct hook_thread *t, const struct cut_api_desc *d, const char *name, int32_t r,
       const uint64_t *a, struct cut_buf *b, struct hook_symbol *sym, struct hook_symbol *asked)
{
	struct cut_call c;
	cut_api_read(d, &c, a, d->nparams, r);
	decode_read(t, d, name, &c, b, sym, asked);
}

/* hook_record when cutcapture's uprobes record the api layer (CUTHOOK_SKIP): the call is only
 * decoded, for the names it gives handles and the bytes and direction of work it submitted;
 * its line is theirs. A name only this library could learn (asked of the driver) is still
 * written, as a symbol record. */
static void
skip_record(struct hook_thread *t, enum hook_id id, int64_t t0, uint64_t end, CUresult r,
            const uint64_t *a, struct gpu_sub *g)
{
	int64_t t1 = hook_end_time(&t->tsc, end);
	struct hook_symbol sym = {0}, asked = {0};
	buf_reset(&t->args);
	if (decodes[id])
		decode(t, &descs[id], hook_names[id], r, a, &t->args, &sym, &asked);
	if (g) {
		hook_gpu_queue(g, t->args.len ? t->args.s : NULL, t1);
		hook_corr = 0;
	}
	if (asked.handle) {
		hook_prepare_header(t->tid);
		if (own_begin(t)) {
			hook_symbol_record(t, t1, &asked);
			own_end(t);
		}
	}
	(void)t0;
}

/* The args of rec to w->args, as decode would have written them when it was read; *sym and
 * *asked as for decode. */
static void
rec_args(struct hook_thread *w, const struct hook_rec *rec, struct hook_symbol *sym,
         struct hook_symbol *asked)
{
	buf_reset(&w->args);
	sym->handle = asked->handle = 0;
	if (rec->d)
		decode_read(w, rec->d, rec->f->name, &rec->c, &w->args, sym, asked);
	if (rec->has_corr)
		cut_api_add_corr(&w->args, rec->corr);
}

/* record's path on the calling thread: the call decoded and formatted here. */
static __attribute__((noinline)) void
record_here(struct hook_thread *t, const struct hook_frag *f, const struct cut_api_desc *d,
            int64_t t0, uint64_t end, int64_t r, const uint64_t *a, struct gpu_sub *g,
            uint64_t *calls)
{
	/* First, while the clock read of an end that is not a TSC read is closest to the return. */
	uint64_t from_clock = t->tsc.from_clock;
	int64_t t1 = hook_end_time(&t->tsc, end);
	int64_t dur = t1 > t0 ? t1 - t0 : 0;
	hook_prepare_header(t->tid);
	struct hook_symbol sym = {0}, asked = {0};
	buf_reset(&t->args);
	if (d)
		decode(t, d, f->name, (int32_t)r, a, &t->args, &sym, &asked);
	if (g) {
		hook_gpu_queue(g, t->args.len ? t->args.s : NULL, t1);
		cut_api_add_corr(&t->args, hook_corr);
		hook_corr = 0;
	}
	if (!own_begin(t)) {
		t->lost++;
		t->tsc.from_clock = from_clock; /* counts only events written */
		return;
	}
	if (calls)
		(*calls)++;
	call_line(t, f, t0, dur, r, t->args.len ? t->args.s : NULL, t->args.len, &asked, &sym);
	own_end(t);
}

/* A queued call whose slot the end closed before it was published: written here, as
 * record_here would have. Inside t's own_begin. */
static __attribute__((noinline)) void
unqueued(struct hook_thread *t, const struct hook_rec *rec)
{
	struct hook_symbol sym, asked;
	rec_args(t, rec, &sym, &asked);
	call_line(t, rec->f, rec->t0, rec->dur, rec->r, t->args.len ? t->args.s : NULL, t->args.len,
	          &asked, &sym);
}

/*
 * Records a call of f queued as it is (f->queue; the rest as for record, below) where t's lines
 * take the fast path: only reading it is left to this thread, the formatter (async.c) decodes,
 * formats and writes it. Returns false, having done nothing, when the queue has no slot for it.
 */
static inline __attribute__((always_inline)) bool
queue_call(struct hook_thread *t, const struct hook_frag *f, const struct cut_api_desc *d,
           int64_t t0, uint64_t end, int64_t r, const uint64_t *a, struct gpu_sub *g,
           uint64_t *calls)
{
	hook_prepare_header(t->tid);
	struct hook_rec *rec = hook_async_slot(t);
	if (!rec)
		return false;
	uint64_t from_clock = t->tsc.from_clock;
	int64_t t1 = hook_end_time(&t->tsc, end);
	rec->f = f; /* field by field: the whole record is some 250 bytes */
	rec->d = d;
	rec->t0 = t0;
	rec->dur = t1 > t0 ? t1 - t0 : 0;
	rec->r = r;
	rec->has_corr = false;
	if (d)
		cut_api_read(d, &rec->c, a, d->nparams, (int32_t)r);
	if (g) {
		hook_gpu_queue(g, NULL, t1);
		rec->corr = hook_corr;
		rec->has_corr = true;
		hook_corr = 0;
	}
	if (!own_begin(t)) {
		t->lost++;
		t->tsc.from_clock = from_clock; /* counts only events written */
		return true;
	}
	if (calls)
		(*calls)++;
	if (__builtin_expect(!hook_async_publish(t), 0))
		unqueued(t, rec); /* the end came since the slot was taken */
	own_end(t);
	return true;
}

/*
 * Records a call of f (d: its description, NULL when its calls have no args) by t that started
 * at t0 (hook_call_start()), ended at end (hook_end()) and returned r, with argument words a; g,
 * when not NULL, is the work it submitted that the gpu layer times; calls, when not NULL, counts
 * it. A call whose line depends on nothing but what it read (f->queue) is queued for the formatter
 * thread where the thread's lines take the fast path (queue_call), unless its work's record
 * needs its args (queue false); else, or when the queue is full, it is decoded and formatted
 * here.
 */
static inline __attribute__((always_inline)) void
record(struct hook_thread *t, const struct hook_frag *f, const struct cut_api_desc *d, int64_t t0,
       uint64_t end, int64_t r, const uint64_t *a, struct gpu_sub *g, bool queue,
       uint64_t *calls)
{
	if (queue && f->queue && t->fast && !t->need_thread_record &&
	    queue_call(t, f, d, t0, end, r, a, g, calls))
		return;
	record_here(t, f, d, t0, end, r, a, g, calls);
}

void
hook_record(struct hook_thread *t, enum hook_id id, enum hook_via via, int64_t t0, uint64_t end,
            CUresult r, const uint64_t *a, struct gpu_sub *g)
{
	hook_guard = 1;
	if (hook_skip_api && !hook_keep[id])
		skip_record(t, id, t0, end, r, a, g);
	else {
		unsigned char gk = g ? hook_gpu_kind[id] : 0; /* a copy's record needs its args */
		record(t, &hook_w.frag[id], decodes[id] ? &descs[id] : NULL, t0, end, r, a, g,
		       gk != GK_COPY && gk != GK_SET, &t->calls[id][via]);
	}
	hook_guard = 0;
}

void
hook_record_call(struct hook_thread *t, const struct hook_frag *f, const struct cut_api_desc *d,
                 int64_t t0, uint64_t end, int64_t r, const uint64_t *a)
{
	hook_guard = 1;
	record(t, f, d->decodes ? d : NULL, t0, end, r, a, NULL, true, NULL);
	hook_guard = 0;
}

void
hook_async_line(struct hook_thread *w, const struct hook_thread *t, const struct hook_rec *rec)
{
	struct hook_symbol sym, asked;
	rec_args(w, rec, &sym, &asked);
	const char *args = w->args.len ? w->args.s : NULL;
	int64_t end = rec->t0 + rec->dur;
	if (!own_begin(w)) {
		w->lost++;
		return;
	}
	if (!fast_line(w, t->frag, t->frag_len, rec->f, rec->t0, rec->dur, rec->r, args,
	               w->args.len)) {
		w->lost++;
		own_end(w);
		return;
	}
	w->events++;
	w->pending++;
	w->pending_in[rec->f->layer]++;
	if (asked.handle)
		hook_symbol_line(&w->out, t->tid, end, &asked);
	if (sym.handle)
		hook_symbol_line(&w->out, t->tid, end, &sym);
	if (w->out.len >= FLUSH_AT)
		hook_flush(w);
	own_end(w);
}

bool
hook_record_line(struct hook_thread *t, const struct cut_event *ev, const struct hook_symbol *sym,
                 const struct hook_symbol *asked)
{
	hook_prepare_header(t->tid);
	if (!own_begin(t)) {
		t->lost++;
		return false;
	}
	if (t->need_thread_record) {
		thread_fragment(t);
		hook_thread_record(t, ev->ts);
	}
	struct cut_event labelled = *ev; /* this process's host and rank, as on API events */
	hook_label(&labelled);
	cut_event_format(&t->out, &labelled);
	buf_addc(&t->out, '\n');
	if (ev->layer != CUT_META) {
		t->events++;
		t->pending++;
		t->pending_in[ev->layer]++;
	}
	if (asked && asked->handle)
		hook_symbol_record(t, ev->ts + ev->dur, asked);
	if (sym && sym->handle)
		hook_symbol_record(t, ev->ts + ev->dur, sym);
	if (t->out.len >= FLUSH_AT)
		hook_flush(t);
	own_end(t);
	return true;
}
