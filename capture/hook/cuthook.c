/* cuthook: runs a command with libcuthook.so preloaded, so that its CUDA driver API calls are
 * written to a trace (cut-events(5)) without root, and leaves the trace sorted. */
#include <dirent.h>
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cut.h"
#include "deflate.h"
#include "event.h"
#include "hooklib.h"
#include "meta.h"
#include "outfile.h"
#include "parse.h"
#include "reader.h"
#include "sort.h"
#include "text.h"

static const struct cut_opt_help opts[] = {
    {"-S", "record an event before every submission too (a GPU other processes share)"},
    {"-l layers", "the layers to record, of api, gpu, nvtx and runtime (all)"},
    {"-o file", "write the trace to file (cuthook.jsonl), made afresh"},
    {NULL, NULL},
};

static void
usage(void)
{
	fprintf(stderr, "usage: cuthook [-S] [-l layers] [-o file] [--] command [arg ...]\n");
	exit(CUT_EXIT_FATAL);
}

/* The library's path (hooklib.h) into lib, of PATH_MAX bytes, or the reason it cannot be
 * found, fatal. Nothing is left allocated: every exit, fatal ones too, leaves no memory behind
 * (LeakSanitizer, hook-leaks.sh). */
static void
find_library(char *lib)
{
	char why[PATH_MAX + 64];
	char *found = cut_hook_library(NULL, why, sizeof(why));
	if (!found)
		errx(CUT_EXIT_FATAL, "%s", why);
	int n = snprintf(lib, PATH_MAX, "%s", found);
	free(found);
	if (n < 0 || n >= PATH_MAX)
		errx(CUT_EXIT_FATAL, "libcuthook.so: file name too long");
}

/* file as an absolute path into abs, of PATH_MAX bytes, so that children that change
 * directory write to the same file. */
static void
absolute(const char *file, char *abs)
{
	char cwd[PATH_MAX];
	int n;
	if (file[0] == '/')
		n = snprintf(abs, PATH_MAX, "%s", file);
	else if (!getcwd(cwd, sizeof(cwd)))
		err(CUT_EXIT_FATAL, "getcwd");
	else
		n = snprintf(abs, PATH_MAX, "%s/%s", cwd, file);
	if (n < 0 || n >= PATH_MAX)
		errx(CUT_EXIT_FATAL, "%s: file name too long", cut_esc(file));
}

static pid_t child;

/* A signal a process sent to cuthook (kill(2), sigqueue(3): si_code SI_USER, SI_QUEUE,
 * SI_TKILL) goes to the command; one the terminal sent (Ctrl-C, Ctrl-\\, a hangup: the
 * kernel's) reached the command already, as every process of the foreground group. */
static void
pass_on(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (child > 0 && si && si->si_code <= 0)
		kill(child, sig);
}

/* ---- the final sort ---- */

/* Whether a process other than this one still has the file of st open (a daemon the command
 * left behind): its later lines would go to the file replaced. */
static pid_t
still_open(const struct stat *st)
{
	DIR *proc = opendir("/proc");
	struct dirent *d;
	pid_t self = getpid(), found = 0;
	while (proc && !found && (d = readdir(proc))) {
		pid_t pid = (pid_t)atol(d->d_name);
		if (pid <= 0 || pid == self)
			continue;
		char dir[64];
		snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
		DIR *fds = opendir(dir);
		struct dirent *f;
		while (fds && !found && (f = readdir(fds))) {
			char path[320];
			struct stat fst;
			snprintf(path, sizeof(path), "%s/%s", dir, f->d_name);
			if (f->d_name[0] != '.' && stat(path, &fst) == 0 &&
			    fst.st_dev == st->st_dev && fst.st_ino == st->st_ino)
				found = pid;
		}
		if (fds)
			closedir(fds);
	}
	if (proc)
		closedir(proc);
	return found;
}

static int
write_all(FILE *f, const struct cut_buf *b, enum cut_compress kind)
{
	static struct cut_buf z; /* a piece compressed: one gzip member or zstd frame */
	if (kind != CUT_PLAIN) {
		buf_reset(&z);
		if (b->len && cut_compress_piece(kind, b->s, b->len, &z) < 0)
			return -1;
		b = &z;
	}
	return b->len && fwrite(b->s, 1, b->len, f) != b->len ? -1 : 0;
}

/*
 * Sorts the trace at path in place (cut-events(5), Ordering): the first process's header
 * first, then every record in ts order, the headers and trailers of the other processes in
 * their place; every header says "sorted". The sorted trace goes to a new file beside it,
 * renamed over it at the end (outfile.h: 0644, never through a link), so the file is never half
 * sorted. Left as it is (its headers say it is not sorted, and cutmerge sorts it) when another
 * process still writes it, when it is not this user's own (another's file is neither read nor
 * replaced), or when it holds lines the reader cannot take (nothing is dropped to sort),
 * quietly: the command's standard error is the command's. Only a failure to write the sorted
 * copy is reported, under name.
 */
static void
sort_trace(const char *path, const char *name)
{
	struct stat st;
	if (lstat(path, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    st.st_nlink != 1)
		return;
	if (still_open(&st))
		return;
	struct cut_reader *r = cut_reader_open(path, CUT_READ_QUIET);
	struct cut_sorter *so = cut_sorter_new(0);
	struct cut_buf head = {0}, b = {0};
	FILE *f = NULL;
	int rc = -1;
	enum cut_compress kind = cut_compress_of(path); /* compressed as it is sorted */
	if (!r || !so)
		goto done;
	struct cut_event ev;
	uint64_t head_line = 0;
	int64_t head_ts = INT64_MAX;
	while ((rc = cut_reader_next(r, &ev)) > 0) {
		if (ev.layer == CUT_META && strcmp(ev.name, "header") == 0) {
			if (ev.ts < head_ts) {
				head_ts = ev.ts;
				head_line = cut_reader_line(r);
				buf_reset(&head);
				cut_meta_sorted_header(&head, &ev);
			}
		}
		if (cut_sorter_add(so, &ev, cut_reader_line(r)) < 0) {
			rc = -1;
			break;
		}
	}
	if (rc < 0 || cut_reader_errors(r)) {
		rc = -1;
		errno = 0;
		goto done;
	}
	if (!(f = outfile_open(path)) || write_all(f, &head, kind) < 0) {
		rc = -1;
		goto done;
	}
	uint64_t line;
	buf_reset(&b);
	while ((rc = cut_sorter_next(so, &ev, &line)) > 0) {
		if (line == head_line)
			continue;
		if (ev.layer == CUT_META && strcmp(ev.name, "header") == 0) {
			cut_meta_sorted_header(&b, &ev);
		} else {
			cut_event_format(&b, &ev);
			buf_addc(&b, '\n');
		}
		if (b.len >= 1 << 20) {
			if (write_all(f, &b, kind) < 0) {
				rc = -1;
				goto done;
			}
			buf_reset(&b);
		}
	}
	if (rc < 0 || write_all(f, &b, kind) < 0 || fflush(f) != 0 || fsync(fileno(f)) < 0) {
		rc = -1;
		goto done;
	}
	rc = outfile_commit(f);
	f = NULL;
done:
	if (f) { /* abandoned: a stream whose descriptor is gone fails to commit, which removes
		  * the temporary (outfile.h) */
		int e = errno;
		close(fileno(f));
		outfile_commit(f);
		errno = e;
	}
	if (rc < 0 && errno)
		warn("%s: left unsorted", cut_esc(name));
	cut_reader_close(r);
	cut_sorter_free(so);
	buf_free(&head);
	buf_free(&b);
}

/* The files of a capture: out itself, or with %p (in the file name only: checked at start)
 * those the processes of this run made (named by the pattern, each %p one number, and written
 * since start). Returns how many there are. To sort them (sort), this process moves to their
 * directory: the temporary copy beside a file of a long name could be too long a name. */
static unsigned
capture_files(const char *out, time_t start, bool sort)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(out, '/');
	size_t dlen = (size_t)(slash - out);
	unsigned n = 0;
	if (dlen >= sizeof(dir))
		return 0;
	memcpy(dir, out, dlen);
	dir[dlen] = 0;
	const char *in = sort && chdir(dlen ? dir : "/") == 0 ? "." : dlen ? dir : "/";
	char path[PATH_MAX + 256], full[PATH_MAX + 256];
	if (!strstr(out, "%p")) {
		snprintf(path, sizeof(path), "%s/%s", in, slash + 1);
		if (sort)
			sort_trace(path, out);
		return 1;
	}
	DIR *d = opendir(in);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		struct stat st;
		if (cut_hook_pid_of(e->d_name, slash + 1) <= 0 ||
		    snprintf(path, sizeof(path), "%s/%s", in, e->d_name) >= (int)sizeof(path) ||
		    lstat(path, &st) < 0 || !S_ISREG(st.st_mode) || st.st_mtime < start)
			continue;
		n++;
		snprintf(full, sizeof(full), "%s/%s", dir, e->d_name);
		if (sort)
			sort_trace(path, full);
	}
	if (d)
		closedir(d);
	return n;
}

/* -l: a comma-separated list of the layers the library records (CUT_HOOK_LAYERS); api cannot
 * be left out (the other layers hang off its calls). */
static void
check_layers(const char *list)
{
	bool api = false;
	for (const char *p = list; *p;) {
		size_t n = strcspn(p, ",");
		int l = cut_hook_layer(p, n);
		if (l < 0)
			errx(CUT_EXIT_FATAL, "-l: unknown layer '%.*s' (known: %s)", (int)n, p,
			     CUT_HOOK_LAYER_NAMES);
		api |= l == CUT_API;
		p += n + (p[n] == ',');
	}
	if (!api)
		errx(CUT_EXIT_FATAL, "-l: the api layer cannot be left out");
}

/* What -o names, ready before the command runs. */
struct output {
	char path[PATH_MAX]; /* absolute */
	bool stream;         /* a FIFO or a device: written as it comes, not sorted */
	int fifo; /* a FIFO, held open while the command runs: its reader sees one stream */
};

/*
 * Prepares the output (file as given, for messages): a regular file is made afresh, empty and
 * 0644 (outfile.h), the user's own, or none, only: one of another user's is refused, as a
 * sticky directory's protected_regular would; a symbolic link is refused; a FIFO is opened
 * (waiting for its reader, as a shell does) and held open, so the processes' opens find the
 * reader there; a character device is written as it is. With %p, the directory must be
 * there: %p in a directory name is refused (no process would make the directory). Fatal
 * errors exit with status 2.
 */
static void
prepare_output(const char *file, struct output *o)
{
	struct stat st;
	const char *p = strstr(o->path, "%p"), *slash = strrchr(o->path, '/');
	o->fifo = -1;
	if (p) {
		if (p < slash)
			errx(CUT_EXIT_FATAL,
			     "%s: %%p in a directory name: only the file name can "
			     "have it",
			     cut_esc(file));
		char dir[PATH_MAX];
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - o->path), o->path);
		if (stat(*dir ? dir : "/", &st) < 0)
			err(CUT_EXIT_FATAL, "%s", cut_esc(file));
		if (!S_ISDIR(st.st_mode))
			errx(CUT_EXIT_FATAL, "%s: %s: not a directory", cut_esc(file),
			     cut_esc(dir));
		if (access(*dir ? dir : "/", W_OK | X_OK) < 0)
			err(CUT_EXIT_FATAL, "%s", cut_esc(file));
		return;
	}
	if (lstat(o->path, &st) == 0) {
		if (S_ISLNK(st.st_mode))
			errx(CUT_EXIT_FATAL, "%s: a symbolic link: not followed", cut_esc(file));
		if (S_ISREG(st.st_mode) && st.st_uid != geteuid())
			errx(CUT_EXIT_FATAL,
			     "%s: owned by another user (uid %ld): not replaced (remove it first)",
			     cut_esc(file), (long)st.st_uid);
		if (S_ISFIFO(st.st_mode)) {
			o->stream = true;
			if ((o->fifo = open(o->path, O_WRONLY | O_CLOEXEC)) < 0)
				err(CUT_EXIT_FATAL, "%s", cut_esc(file));
			warnx("%s: a FIFO: the trace goes to it as written, not sorted",
			      cut_esc(file));
			return;
		}
		if (S_ISCHR(st.st_mode)) {
			o->stream = true;
			return;
		}
		if (!S_ISREG(st.st_mode))
			errx(CUT_EXIT_FATAL, "%s: not a regular file, FIFO or character device",
			     cut_esc(file));
	}
	/* Made afresh: the user's file replaced, not truncated (no other name of it, nor its
	 * mode, is kept). A file planted between the two is refused by O_EXCL. */
	if (unlink(o->path) < 0 && errno != ENOENT)
		err(CUT_EXIT_FATAL, "%s", cut_esc(file));
	int fd = open(o->path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0 && errno == ELOOP)
		errx(CUT_EXIT_FATAL, "%s: a symbolic link: not followed", cut_esc(file));
	if (fd < 0 || fchmod(fd, 0644) < 0)
		err(CUT_EXIT_FATAL, "%s", cut_esc(file));
	close(fd);
}

/*
 * What the library's processes told (the status page, hooklib.h), and whether they wrote
 * anything: a trace that could not be written whole, or nothing written at all, is said, as
 * cutcapture says it. Returns true when the trace is incomplete.
 */
static bool
report(const struct cut_hook_status *s, const char *file, const struct output *o, time_t start)
{
	uint64_t failures = __atomic_load_n(&s->failures, __ATOMIC_ACQUIRE);
	uint64_t lost = __atomic_load_n(&s->lost, __ATOMIC_RELAXED);
	uint64_t no_trailer = __atomic_load_n(&s->no_trailer, __ATOMIC_RELAXED);
	if (failures) {
		char what[128] = "";
		if (lost || no_trailer)
			snprintf(what, sizeof(what),
			         " (%llu event%s lost, %llu process%s without "
			         "a trailer)",
			         (unsigned long long)lost, lost == 1 ? "" : "s",
			         (unsigned long long)no_trailer, no_trailer == 1 ? "" : "es");
		warnx("writing the trace to %s: %s: the trace is incomplete%s", cut_esc(file),
		      strerror(s->error ? s->error : EIO), what);
		return true;
	}
	/* The library never started in any process: the command ignores LD_PRELOAD. (One that
	 * started and wrote nothing was killed first: its status says so.) */
	struct stat st;
	bool nothing =
	    __atomic_load_n(&s->processes, __ATOMIC_RELAXED) == 0 &&
	    (o->stream || (strstr(o->path, "%p") ? capture_files(o->path, start, false) == 0
	                                         : stat(o->path, &st) == 0 && st.st_size == 0));
	if (nothing)
		warnx("%s: nothing written: the command did not load libcuthook (a static or "
		      "set-user-ID program ignores LD_PRELOAD)",
		      cut_esc(file));
	return nothing;
}

int
main(int argc, char *argv[])
{
	const char *file = "cuthook.jsonl", *layers = NULL;
	bool all_starts = false;
	int c;

	cut_std_args_help(argc, argv, usage, opts);
	while ((c = getopt(argc, argv, "+Sl:o:")) != -1) {
		switch (c) {
		case 'S': all_starts = true; break;
		case 'l': layers = optarg; break;
		case 'o': file = optarg; break;
		default: usage();
		}
	}
	argv += optind;
	if (!argv[0] || !*file)
		usage();

	if (layers)
		check_layers(layers);

	static char lib[PATH_MAX];
	static struct output o;
	find_library(lib);
	absolute(file, o.path);
	/* Longest once each %p is a pid (at most 7 digits: pid_max is 2^22). */
	size_t longest = strlen(o.path);
	for (const char *p = o.path; (p = strstr(p, "%p")); p += 2)
		longest += 5;
	if (longest >= PATH_MAX)
		errx(CUT_EXIT_FATAL, "%s: file name too long", cut_esc(file));
	prepare_output(file, &o);

	/* Without nvtx, NVTX_INJECTION64_PATH is left as it is (a tool named there keeps it). */
	bool nvtx = !layers || (cut_hook_layers_in(layers) >> CUT_NVTX & 1);
	/* Under cutcapture, which leaves layers to its uprobes (CUTHOOK_SKIP), cuthook's own trace
	 * still has them all; the marks that keep the library's own work out of cutcapture's
	 * records (CUTHOOK_MARK) stay. */
	struct cut_hook_status *page = cut_hook_status_new(0);
	if (!page)
		err(CUT_EXIT_FATAL, "the library's status page");
	if (unsetenv("CUTHOOK_SKIP") < 0 || cut_hook_setenv(lib, o.path, layers, nvtx) < 0 ||
	    (all_starts && setenv("CUTHOOK_GPU_STARTS", "all", 1) < 0))
		err(CUT_EXIT_FATAL, "setenv");

	/* The command runs in a child, so that the trace can be sorted once it is done; this
	 * process waits, as a shell would, leaving the terminal's signals to the command and
	 * passing on those sent to it alone. */
	time_t start = time(NULL);
	struct timespec now;
	char start_ns[32];
	clock_gettime(CLOCK_REALTIME, &now);
	snprintf(start_ns, sizeof(start_ns), "%lld",
	         (long long)now.tv_sec * 1000000000 + now.tv_nsec);
	if (setenv("CUTHOOK_START", start_ns, 1) < 0)
		err(CUT_EXIT_FATAL, "setenv");
	int ready[2];
	if (pipe2(ready, O_CLOEXEC) < 0)
		err(CUT_EXIT_FATAL, "pipe");
	/* The signals passed on are held from before fork until their handlers are in: one sent
	 * as soon as the command runs is passed on, never the death of cuthook. */
	static const int passed[] = {SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGALRM};
	sigset_t held, was;
	sigemptyset(&held);
	for (size_t i = 0; i < sizeof(passed) / sizeof(passed[0]); i++)
		sigaddset(&held, passed[i]);
	sigprocmask(SIG_BLOCK, &held, &was);
	child = fork();
	if (child < 0)
		err(CUT_EXIT_FATAL, "fork");
	if (child == 0) {
		sigprocmask(SIG_SETMASK, &was, NULL);
		char pid[24];
		snprintf(pid, sizeof(pid), "%ld", (long)getpid());
		setenv("CUTHOOK_ROOT", pid, 1);
		execvp(argv[0], argv);
		int e = errno;
		warn("%s", argv[0]);
		if (write(ready[1], &e, sizeof(e)) < 0)
			_exit(126);
		_exit(e == ENOENT ? 127 : 126);
	}
	struct sigaction sa = {.sa_sigaction = pass_on, .sa_flags = SA_SIGINFO | SA_RESTART};
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(passed) / sizeof(passed[0]); i++)
		sigaction(passed[i], &sa, NULL);
	sigprocmask(SIG_SETMASK, &was, NULL);
	close(ready[1]);
	int e;
	bool started = read(ready[0], &e, sizeof(e)) != sizeof(e); /* EOF: exec succeeded */
	close(ready[0]);
	signal(SIGXFSZ, SIG_IGN); /* a sorted copy over the size limit is an error, said */
	int status;
	while (waitpid(child, &status, 0) < 0)
		if (errno != EINTR)
			err(CUT_EXIT_FATAL, "waitpid");
	if (o.fifo >= 0)
		close(o.fifo);
	bool incomplete = started && report(page, file, &o, start);
	if (started && !o.stream)
		capture_files(o.path, start, true);
	if (incomplete) {
		/* as cutcapture: the trace could not be written, and the command's status is said
		 */
		int st = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
		if (st)
			warnx("the command exited with status %d", st);
		return CUT_EXIT_FATAL;
	}
	if (WIFSIGNALED(status)) {
		/* die of the same signal, as the command did, so the caller sees what it would
		 * have seen without cuthook */
		int sig = WTERMSIG(status);
		signal(sig, SIG_DFL);
		sigset_t set;
		sigemptyset(&set);
		sigaddset(&set, sig);
		sigprocmask(SIG_UNBLOCK, &set, NULL);
		struct rlimit nocore = {0, 0};
		setrlimit(RLIMIT_CORE, &nocore); /* the command dumped core already, if it could */
		raise(sig);
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : CUT_EXIT_FATAL;
}
