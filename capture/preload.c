/* preload.c: the layers cutcapture takes from libcuthook (preload.h). */
#include <dirent.h>
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include <linux/types.h>

#include "buf.h"
#include "cut.h"
#include "records.h"
#include "hooklib.h"
#include "idmap.h"
#include "meta.h"
#include "output.h"
#include "preload.h"
#include "reader.h"
#include "sort.h"
#include "text.h"

#include "cutcapture.skel.h"

/* The library's files in the directory: hook.PID.jsonl. */
#define HOOK_PREFIX "hook."
#define HOOK_SUFFIX ".jsonl"

static struct {
	struct preload_opts o;
	bool on;
	char *lib;
	char dir[PATH_MAX - 64]; /* room for the file names in it */
	/* the command's environment (preload_child_env) */
	char out[PATH_MAX + 32], start[32], layers[64], skip[64];
	char own[PATH_MAX + 32]; /* cutcapture's own records, to read back */
	struct cut_hook_status *status;
	char why[PATH_MAX + 128]; /* why the library's layers are off */
	struct bpf_link *link;
	/* What the library's headers said of its layers ("on" wins), by enum cut_layer. */
	char *said[CUT_NLAYERS];
} P;

/* The layers the library records for cutcapture. */
static bool
from_library(enum cut_layer l)
{
	return P.o.layers >> l & 1;
}

static bool
off(const char *fmt, const char *arg)
{
	snprintf(P.why, sizeof(P.why), fmt, arg);
	return false;
}

bool
preload_start(const struct preload_opts *o, bool command)
{
	P.o = *o;
	if (!o->layers)
		return off("not asked for (-l)%s", "");
	if (!command)
		return off("needs a command cutcapture starts: nothing can be preloaded into a "
		           "running process (-p; run it under cuthook for this layer)%s",
		           "");
	if (o->ignored)
		return off("%s", o->ignored);
	char why[PATH_MAX + 64];
	if (!(P.lib = cut_hook_library(o->lib, why, sizeof(why)))) {
		if (o->lib) /* named: a mistyped path is no reason to trace without it */
			errx(CUT_EXIT_FATAL, "--hook %s", why + strlen("libcuthook "));
		return off("%s", why);
	}
	const char *tmp = getenv("TMPDIR");
	snprintf(P.dir, sizeof(P.dir), "%s/cutcapture.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(P.dir)) {
		snprintf(why, sizeof(why), "%s: %s", P.dir, strerror(errno));
		P.dir[0] = '\0';
		return off("cannot make a directory for libcuthook's files: %s", why);
	}
	snprintf(P.out, sizeof(P.out), "%s/" HOOK_PREFIX "%%p" HOOK_SUFFIX, P.dir);
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	snprintf(P.start, sizeof(P.start), "%lld",
	         (long long)now.tv_sec * 1000000000 + now.tv_nsec);
	/* The library wraps every driver call (the gpu layer needs them); it writes the api and
	 * runtime layers only when they are not the uprobes' (CUTHOOK_SKIP names those). */
	cut_hook_layer_join(P.layers, sizeof(P.layers), o->layers | 1u << CUT_API, ",");
	cut_hook_layer_join(P.skip, sizeof(P.skip), CUT_HOOK_ALL & ~CUT_HOOK_ONLY, ",");
	/* The library's processes say what they could not write, and, cutcapture gone (killed),
	 * stop writing into its directory and remove their files. */
	if (!(P.status = cut_hook_status_new(1))) {
		preload_end();
		return off("the library's status page: %s", strerror(errno));
	}
	P.on = true;
	return true;
}

int
preload_child_env(void)
{
	if (!P.on)
		return 0;
	return cut_hook_setenv(P.lib, P.out, P.layers, from_library(CUT_NVTX)) < 0 ||
	               setenv("CUTHOOK_MARK", "1", 1) < 0 ||
	               setenv("CUTHOOK_START", P.start, 1) < 0 ||
	               (from_library(CUT_API) ? unsetenv("CUTHOOK_SKIP")
	                                      : setenv("CUTHOOK_SKIP", P.skip, 1)) < 0 ||
	               unsetenv("CUTHOOK_ROOT") < 0
	           ? -1
	           : 0;
}

const char *
preload_off_reason(void)
{
	return P.why;
}

void
preload_drop(unsigned layers)
{
	P.o.layers &= ~layers;
}

int
preload_open_own(void)
{
	if (!P.on)
		return -1;
	/* Nameless, so that nothing of cutcapture's is left in the directory if it is killed:
	 * read back through /proc. */
	int fd = open(P.dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR)) {
		snprintf(P.own, sizeof(P.own), "%s/cutcapture.jsonl", P.dir);
		if ((fd = open(P.own, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600)) >=
		    0)
			unlink(P.own);
	}
	if (fd < 0) {
		warn("%s", P.dir);
		return -1;
	}
	snprintf(P.own, sizeof(P.own), "/proc/self/fd/%d", fd);
	return fd;
}

void
preload_header(const char *layers[CUT_NLAYERS], const char *sources[CUT_NLAYERS])
{
	static char why[sizeof(P.why) + 8];
	snprintf(why, sizeof(why), "off: %s", P.why);
	for (int l = 0; l < CUT_NLAYERS; l++) {
		if (CUT_HOOK_ONLY >> l & 1)
			layers[l] = !from_library(l) ? "off: not asked for (-l)"
			            : P.on           ? "on"
			                             : why;
		else if (from_library(l))
			layers[l] = P.on ? "on" : why;
		if (P.on && from_library(l) && P.said[l])
			layers[l] = P.said[l];
		if (from_library(l) || CUT_HOOK_ONLY >> l & 1)
			sources[l] = layers[l] && !strcmp(layers[l], "on") ? "preload" : NULL;
	}
}

int
preload_attach(struct cutcapture_bpf *skel)
{
	if (!P.on)
		return 0;
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .func_name = "cuthook_mark_thread");
	P.link = bpf_program__attach_uprobe_opts(skel->progs.hook_mark_thread, -1, P.lib, 0, &uo);
	if (!P.link) {
		warnx("cannot probe cuthook_mark_thread in %s: %s: libcuthook's own driver calls "
		      "will be recorded as the program's",
		      cut_esc(P.lib), strerror(errno));
		return -1;
	}
	return 0;
}

void
preload_detach(void)
{
	bpf_link__destroy(P.link);
	P.link = NULL;
}

/* ---- the merge ---- */

/* What the merge keeps of the records it does not pass on as they are. */
static struct {
	struct cut_sorter *so;
	struct cut_meta head, tail; /* cutcapture's own header and trailer */
	struct cut_event head_at, tail_at;
	bool have_head, have_tail;
	int64_t events, layer[CUT_NLAYERS]; /* the library's records passed on */
	int64_t lost; /* the counts of its lost records (a process killed wrote no trailer) */
	struct cut_meta_fold *trailers; /* the library's trailers, folded by their rules */
	int64_t io_lost; /* events the library could not write, plus 1; 0: it wrote all */
	unsigned files;
	uint64_t own_late; /* cutcapture's records of the library's threads, left out here... */
	int64_t late_layer[CUT_NLAYERS]; /* ...by layer */
	/* The library's own threads (its trailers' own_thread), by (pid, tid), and their tids. */
	struct cut_idmap *own_threads;
	struct cut_buf own_tids; /* ",tid" each */
} M;

static int64_t
add(int64_t a, int64_t b)
{
	return a == CUT_ABSENT ? b : b == CUT_ABSENT ? a : a + b;
}

/* A library header: what it says of the layers it records for cutcapture. */
static void
fold_header(const struct cut_event *ev)
{
	struct cut_meta m;
	cut_meta_read(ev, &m);
	for (int l = 0; l < CUT_NLAYERS; l++) {
		const char *s = m.header.layers[l];
		if (!from_library(l) || !s || (P.said[l] && !strcmp(P.said[l], "on")))
			continue;
		free(P.said[l]);
		P.said[l] = cut_xstrdup(s);
	}
	cut_meta_release(&m);
}

/* Thread tid of process pid is the library's own (a trailer's own_thread or format_thread). */
static void
own_thread(int64_t pid, int64_t tid)
{
	bool isnew = false;
	if (tid != CUT_ABSENT && (idmap_put2(M.own_threads, pid, tid, &isnew), isnew)) {
		buf_addc(&M.own_tids, ',');
		buf_addi64(&M.own_tids, tid);
	}
}

/* A library trailer: folded with the others, member by member (meta.h), and its own threads. */
static void
fold_trailer(const struct cut_event *ev)
{
	struct cut_meta m;
	cut_meta_read(ev, &m);
	own_thread(ev->pid, m.trailer.own_thread);
	own_thread(ev->pid, m.trailer.format_thread);
	cut_meta_fold_add(M.trailers, &m);
	cut_meta_release(&m);
}

/* An envelope to write a record at (its strings are not kept). */
static struct cut_event
envelope(const struct cut_event *ev)
{
	struct cut_event at;
	cut_event_init(&at);
	at.ts = ev->ts;
	at.pid = ev->pid;
	at.tid = ev->tid;
	return at;
}

/* Every record of one file into the sorter; own: cutcapture's file. Returns 0, or -1 when the
 * sorter failed (said). */
static int
read_trace(const char *path, bool own, const char *what)
{
	struct cut_reader *r = cut_reader_open(path, CUT_READ_QUIET);
	if (!r) {
		warn("%s", what);
		return 0;
	}
	struct cut_event ev;
	int rc;
	while ((rc = cut_reader_next(r, &ev)) > 0) {
		enum cut_meta_kind k = ev.layer == CUT_META ? cut_meta_kind(&ev) : CUT_META_NONE;
		if (k == CUT_META_HEADER && own && !M.have_head) {
			cut_meta_read(&ev, &M.head);
			M.head_at = envelope(&ev);
			M.have_head = true;
			continue;
		}
		if (k == CUT_META_TRAILER && own && !M.have_tail) {
			cut_meta_read(&ev, &M.tail);
			M.tail_at = envelope(&ev);
			M.have_tail = true;
			continue;
		}
		if (!own && k == CUT_META_HEADER) {
			fold_header(&ev);
			continue;
		}
		if (!own && k == CUT_META_TRAILER) {
			fold_trailer(&ev);
			continue;
		}
		/* cutcapture follows the processes itself: their records are its. */
		if (!own && k == CUT_META_PROCESS)
			continue;
		/* The library's thread made calls or went off the CPU before the probes knew it
		 * for the library's (it registers as it starts): left out here. */
		if (own && ev.layer != CUT_META &&
		    idmap_get2(M.own_threads, ev.pid, ev.tid) != IDMAP_NONE) {
			M.own_late++;
			M.late_layer[ev.layer]++;
			continue;
		}
		if (!own) {
			M.events++;
			M.layer[ev.layer]++;
			if (k == CUT_META_LOST) {
				struct cut_meta m;
				cut_meta_read(&ev, &m);
				if (m.lost.count > 0)
					M.lost += m.lost.count;
				cut_meta_release(&m);
			}
		}
		if (cut_sorter_add(M.so, &ev, 0) < 0) {
			warn("sorting the trace");
			cut_reader_close(r);
			return -1;
		}
	}
	uint64_t bad = cut_reader_errors(r);
	if (bad)
		warnx("%s: %llu line%s cut off or unreadable, left out", what,
		      (unsigned long long)bad, bad == 1 ? "" : "s");
	cut_reader_close(r);
	return 0;
}

/* The library's files: hook.PID.jsonl in the directory. */
static int
read_library_files(void)
{
	DIR *d = opendir(P.dir);
	struct dirent *e;
	int rc = 0;
	size_t pl = strlen(HOOK_PREFIX), sl = strlen(HOOK_SUFFIX);
	while (rc == 0 && d && (e = readdir(d))) {
		size_t n = strlen(e->d_name);
		if (n <= pl + sl || strncmp(e->d_name, HOOK_PREFIX, pl) != 0 ||
		    strcmp(e->d_name + n - sl, HOOK_SUFFIX) != 0)
			continue;
		char path[PATH_MAX + 256], what[64];
		snprintf(path, sizeof(path), "%s/%s", P.dir, e->d_name);
		snprintf(what, sizeof(what), "libcuthook's records of process %.*s",
		         (int)(n - pl - sl), e->d_name + pl);
		rc = read_trace(path, false, what);
		M.files++;
	}
	if (d)
		closedir(d);
	return rc;
}

static void
write_meta(const struct cut_event *at, const struct cut_meta *m)
{
	struct cut_buf line = {0};
	cut_meta_format(&line, at, m);
	buf_addc(&line, '\n');
	out_add(line.s, line.len);
	buf_free(&line);
}

/* cutcapture's trailer with the library's records and losses added, and every other member
 * of the library's trailers, folded, where cutcapture's has none. */
static void
write_trailer(uint64_t own)
{
	struct cut_trailer *t = &M.tail.trailer;
	const struct cut_meta *lib = cut_meta_fold_result(M.trailers);
	t->events = add(t->events, M.events - (int64_t)M.own_late + (M.io_lost > 0));
	/* Each of the library's trailers counts the lost records its process wrote; a process
	 * killed by a signal wrote them (its calls in flight) but no trailer: the records count. */
	t->lost = add(t->lost, M.lost);
	if (t->lost != CUT_ABSENT && t->lost > 0) /* (those the library could not write: said) */
		warnx("%lld events lost (see the lost records)", (long long)t->lost);
	t->lost = add(t->lost, M.io_lost > 0 ? M.io_lost - 1 : CUT_ABSENT);
	if (M.io_lost > 0)
		t->layers[CUT_META] = add(t->layers[CUT_META], 1);
	for (int l = 0; l < CUT_NLAYERS; l++)
		if (M.layer[l] || M.late_layer[l])
			t->layers[l] = add(t->layers[l], M.layer[l] - M.late_layer[l]);
	struct cut_buf more = {0}, with_lib = {0};
	if (t->more && *t->more) {
		buf_adds(&more, t->more);
		buf_addc(&more, ',');
	}
	buf_adds(&more, "\"preload\":{\"library\":");
	buf_addjstr(&more, P.lib, strlen(P.lib));
	buf_adds(&more, ",\"files\":");
	buf_addi64(&more, M.files);
	buf_adds(&more, ",\"own_left_out\":");
	buf_addi64(&more, (int64_t)(own + M.own_late));
	buf_adds(&more, ",\"threads\":[");
	if (M.own_tids.len)
		buf_add(&more, M.own_tids.s + 1, M.own_tids.len - 1);
	buf_adds(&more, "]}");
	/* the rest (gpu, durations, coverage, members of the library's own) as folded, but the
	 * runtime the uprobes record among those the library could not */
	struct cut_meta folded = *lib;
	const char **kept = cut_xcalloc(lib->trailer.nruntimes + 1, sizeof(*kept));
	size_t nkept = 0;
	const char *probed = P.o.runtime_probed ? strrchr(P.o.runtime_probed, '/') : NULL;
	probed = probed ? probed + 1 : P.o.runtime_probed;
	for (size_t i = 0; i < lib->trailer.nruntimes; i++)
		if (!probed || strcmp(lib->trailer.runtimes[i], probed) != 0)
			kept[nkept++] = lib->trailer.runtimes[i];
	folded.trailer.runtimes = nkept ? kept : NULL;
	folded.trailer.nruntimes = nkept;
	const char *was = t->more;
	t->more = more.s;
	cut_meta_fill(&M.tail, &folded, &with_lib);
	write_meta(&M.tail_at, &M.tail);
	t->more = was;
	free(kept);
	buf_free(&more);
	buf_free(&with_lib);
}

int
preload_merge(uint64_t own)
{
	int rc = -1;
	M.trailers = cut_meta_fold_new(CUT_META_TRAILER);
	M.own_threads = idmap_new();
	if (!(M.so = cut_sorter_new(0))) {
		warnx("out of memory");
		return -1;
	}
	/* The library's files first: their trailers name its threads. */
	if (read_library_files() < 0 || read_trace(P.own, true, "cutcapture's records") < 0)
		goto done;
	if (M.files == 0) /* no process loaded the library */
		for (int l = 0; l < CUT_NLAYERS; l++)
			if (from_library(l) && !P.said[l])
				P.said[l] =
				    cut_xstrdup("off: libcuthook wrote nothing here (a static or "
				                "setuid program ignores LD_PRELOAD)");
	if (M.have_head) {
		preload_header(M.head.header.layers, M.head.header.sources);
		write_meta(&M.head_at, &M.head);
	}
	struct cut_event ev;
	struct cut_buf b = {0};
	int got;
	while ((got = cut_sorter_next(M.so, &ev, NULL)) > 0) {
		buf_reset(&b);
		cut_event_format(&b, &ev);
		buf_addc(&b, '\n');
		out_add(b.s, b.len);
	}
	buf_free(&b);
	if (got < 0) {
		warn("sorting the trace");
		goto done;
	}
	/* What the library could not write: said, and counted lost in a record of its own. */
	uint64_t failures = __atomic_load_n(&P.status->failures, __ATOMIC_ACQUIRE);
	int64_t io_lost = (int64_t)__atomic_load_n(&P.status->lost, __ATOMIC_RELAXED);
	if (failures) {
		const char *why = strerror(P.status->error ? P.status->error : EIO);
		warnx("libcuthook could not write its records: %s: the trace is incomplete (%lld "
		      "event%s lost)",
		      why, (long long)io_lost, io_lost == 1 ? "" : "s");
		struct cut_meta m;
		char reason[160];
		snprintf(reason, sizeof(reason), "libcuthook could not write them: %s", why);
		cut_meta_init(&m, CUT_META_LOST);
		m.lost.count = io_lost;
		m.lost.reason = reason;
		write_meta(M.have_tail ? &M.tail_at : &M.head_at, &m);
		M.io_lost = io_lost + 1; /* the record, one more of the trace's */
	}
	if (M.have_tail)
		write_trailer(own);
	rc = failures ? 1 : 0;
done:
	cut_sorter_free(M.so);
	cut_meta_fold_free(M.trailers);
	idmap_free(M.own_threads);
	buf_free(&M.own_tids);
	if (M.have_head)
		cut_meta_release(&M.head);
	if (M.have_tail)
		cut_meta_release(&M.tail);
	return rc;
}

void
preload_end(void)
{
	DIR *d = P.dir[0] ? opendir(P.dir) : NULL;
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char path[PATH_MAX + 256];
		snprintf(path, sizeof(path), "%s/%s", P.dir, e->d_name);
		unlink(path);
	}
	if (d) {
		closedir(d);
		rmdir(P.dir);
	}
	P.dir[0] = '\0';
	for (int l = 0; l < CUT_NLAYERS; l++) {
		free(P.said[l]);
		P.said[l] = NULL;
	}
	free(P.lib);
	P.lib = NULL;
	if (P.status)
		munmap(P.status, sizeof(*P.status));
	P.status = NULL;
}
