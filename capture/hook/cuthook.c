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
#include "parse.h"
#include "reader.h"
#include "sort.h"
#include "text.h"

static void
usage(void)
{
	fprintf(stderr, "usage: cuthook [-S] [-l layers] [-o file] [--] command [arg ...]\n");
	exit(CUT_EXIT_FATAL);
}

/* The library (hooklib.h), or the reason it cannot be found, fatal. */
static char *
find_library(void)
{
	char why[PATH_MAX + 64];
	char *lib = cut_hook_library(NULL, why, sizeof(why));
	if (!lib)
		errx(CUT_EXIT_FATAL, "%s", why);
	return lib;
}

/* An absolute path, so that children that change directory write to the same file. */
static char *
absolute(const char *file)
{
	if (file[0] == '/')
		return strdup(file);
	char cwd[PATH_MAX];
	if (!getcwd(cwd, sizeof(cwd)))
		err(CUT_EXIT_FATAL, "getcwd");
	char *s;
	if (asprintf(&s, "%s/%s", cwd, file) < 0)
		err(CUT_EXIT_FATAL, "out of memory");
	return s;
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

/* The canonical line of a header record with "sorted" set, into b. */
static void
sorted_header(struct cut_buf *b, const struct cut_event *ev)
{
	struct cut_meta m;
	cut_meta_read(ev, &m);
	m.header.sorted = 1;
	buf_reset(b);
	cut_meta_format(b, ev, &m);
	buf_addc(b, '\n');
	cut_meta_release(&m);
}

static int
write_all(int fd, const struct cut_buf *b, enum cut_compress kind)
{
	static struct cut_buf z; /* a piece compressed: one gzip member or zstd frame */
	if (kind != CUT_PLAIN) {
		buf_reset(&z);
		if (b->len && cut_compress_piece(kind, b->s, b->len, &z) < 0)
			return -1;
		b = &z;
	}
	for (size_t off = 0; off < b->len;) {
		ssize_t n = write(fd, b->s + off, b->len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		off += (size_t)n;
	}
	return 0;
}

/*
 * Sorts the trace at path in place (cut-events(5), Ordering): the first process's header
 * first, then every record in ts order, the headers and trailers of the other processes in
 * their place; every header says "sorted". The sorted trace goes to a new file beside it,
 * renamed over it at the end, so the file is never half sorted. Left as it is (its headers
 * say it is not sorted, and cutmerge sorts it) when another process still writes it, or when
 * it holds lines the reader cannot take (nothing is dropped to sort), quietly: the command's
 * standard error is the command's. Only a failure to write the sorted copy is reported.
 */
static void
sort_trace(const char *path)
{
	struct stat st;
	if (lstat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return;
	if (still_open(&st))
		return;
	struct cut_reader *r = cut_reader_open(path, CUT_READ_QUIET);
	struct cut_sorter *so = cut_sorter_new(0);
	struct cut_buf head = {0}, b = {0};
	char tmp[PATH_MAX] = "";
	int fd = -1, rc = -1;
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
				sorted_header(&head, &ev);
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
	snprintf(tmp, sizeof(tmp), "%s.sortXXXXXX", path);
	if ((fd = mkstemp(tmp)) < 0 || fchmod(fd, st.st_mode & 07777) < 0 ||
	    write_all(fd, &head, kind) < 0)
		goto done;
	uint64_t line;
	buf_reset(&b);
	while ((rc = cut_sorter_next(so, &ev, &line)) > 0) {
		if (line == head_line)
			continue;
		if (ev.layer == CUT_META && strcmp(ev.name, "header") == 0) {
			struct cut_buf h = {0};
			sorted_header(&h, &ev);
			buf_add(&b, h.s, h.len);
			buf_free(&h);
		} else {
			cut_event_format(&b, &ev);
			buf_addc(&b, '\n');
		}
		if (b.len >= 1 << 20) {
			if (write_all(fd, &b, kind) < 0)
				goto done;
			buf_reset(&b);
		}
	}
	if (rc < 0 || write_all(fd, &b, kind) < 0 || fsync(fd) < 0 || close(fd) < 0) {
		fd = -1;
		goto done;
	}
	fd = -1;
	rc = rename(tmp, path);
done:
	if (rc < 0) {
		if (errno)
			warn("%s: left unsorted", cut_esc(path));
		if (tmp[0])
			unlink(tmp);
	}
	if (fd >= 0)
		close(fd);
	cut_reader_close(r);
	cut_sorter_free(so);
	buf_free(&head);
	buf_free(&b);
}

/* The files of a capture: out itself, or with %p those the processes of this run made
 * (named by the pattern with a number for %p, and written since start). */
static void
sort_traces(const char *out, time_t start)
{
	const char *p = strstr(out, "%p");
	if (!p) {
		sort_trace(out);
		return;
	}
	char dir[PATH_MAX];
	const char *slash = strrchr(out, '/');
	size_t dlen = (size_t)(slash - out);
	if (dlen >= sizeof(dir) || p < slash)
		return;
	memcpy(dir, out, dlen);
	dir[dlen] = 0;
	const char *prefix = slash + 1, *suffix = p + 2;
	size_t plen = (size_t)(p - prefix), slen = strlen(suffix);
	DIR *d = opendir(dlen ? dir : "/");
	struct dirent *e;
	while (d && (e = readdir(d))) {
		const char *n = e->d_name, *q = n + plen;
		size_t len = strlen(n);
		if (len <= plen + slen || strncmp(n, prefix, plen) != 0 ||
		    strcmp(n + len - slen, suffix) != 0)
			continue;
		while (q < n + len - slen && *q >= '0' && *q <= '9')
			q++;
		if (q != n + len - slen || q == n + plen)
			continue;
		char path[PATH_MAX];
		struct stat st;
		if (snprintf(path, sizeof(path), "%s/%s", dir, n) >= (int)sizeof(path) ||
		    stat(path, &st) < 0 || st.st_mtime < start)
			continue;
		sort_trace(path);
	}
	if (d)
		closedir(d);
}

/* -l: a comma-separated list of the layers the library records; api cannot be left out (the
 * other layers hang off its calls). */
static void
check_layers(const char *list)
{
	static const char *const known[] = {"api", "gpu", "nvtx", "runtime"};
	bool api = false;
	for (const char *p = list; *p;) {
		size_t n = strcspn(p, ",");
		bool ok = false;
		for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
			if (n == strlen(known[i]) && strncmp(p, known[i], n) == 0)
				ok = true;
		if (!ok)
			errx(CUT_EXIT_FATAL,
			     "-l: unknown layer '%.*s' (known: api, gpu, nvtx, runtime)", (int)n,
			     p);
		api |= n == 3 && strncmp(p, "api", 3) == 0;
		p += n + (p[n] == ',');
	}
	if (!api)
		errx(CUT_EXIT_FATAL, "-l: the api layer cannot be left out");
}

int
main(int argc, char *argv[])
{
	const char *file = "cuthook.jsonl", *layers = NULL;
	bool all_starts = false;
	int c;

	cut_std_args(argc, argv, usage);
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

	char *lib = find_library();
	char *out = absolute(file);
	if (!lib || !out)
		err(CUT_EXIT_FATAL, "out of memory");
	/* Longest once each %p is a pid (at most 7 digits: pid_max is 2^22). */
	size_t longest = strlen(out);
	for (const char *p = out; (p = strstr(p, "%p")); p += 2)
		longest += 5;
	if (longest >= PATH_MAX)
		errx(CUT_EXIT_FATAL, "%s: file name too long", cut_esc(file));
	/* One file for the whole capture, truncated now, never through a symbolic link; with %p
	 * each process makes its own. */
	if (!strstr(out, "%p")) {
		int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
		if (fd < 0 && errno == ELOOP)
			errx(CUT_EXIT_FATAL, "%s: a symbolic link: not followed", cut_esc(file));
		if (fd < 0)
			err(CUT_EXIT_FATAL, "%s", cut_esc(file));
		close(fd);
	}

	/* Without nvtx, NVTX_INJECTION64_PATH is left as it is (a tool named there keeps it). */
	bool nvtx = !layers || cut_hook_listed(layers, "nvtx");
	/* Under cutcapture, which leaves layers to its uprobes (CUTHOOK_SKIP), cuthook's own trace
	 * still has them all; the marks that keep the library's own work out of cutcapture's
	 * records (CUTHOOK_MARK) stay. */
	if (unsetenv("CUTHOOK_SKIP") < 0 || cut_hook_setenv(lib, out, layers, nvtx) < 0 ||
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
	child = fork();
	if (child < 0)
		err(CUT_EXIT_FATAL, "fork");
	if (child == 0) {
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
	close(ready[1]);
	int e;
	bool started = read(ready[0], &e, sizeof(e)) != sizeof(e); /* EOF: exec succeeded */
	close(ready[0]);
	struct sigaction sa = {.sa_sigaction = pass_on, .sa_flags = SA_SIGINFO | SA_RESTART};
	sigemptyset(&sa.sa_mask);
	static const int passed[] = {SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGALRM};
	for (size_t i = 0; i < sizeof(passed) / sizeof(passed[0]); i++)
		sigaction(passed[i], &sa, NULL);
	int status;
	while (waitpid(child, &status, 0) < 0)
		if (errno != EINTR)
			err(CUT_EXIT_FATAL, "waitpid");
	if (started)
		sort_traces(out, start);
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
