/* outfile.c: output files created fresh beside their name and renamed into place; the
 * temporary removed at exit and on the signals that end a tool. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "outfile.h"

static struct {
	FILE *f;
	char path[PATH_MAX], tmp[PATH_MAX]; /* tmp: "" when f is path itself */
	bool atexit_set;
} pending;

/* Set while pending.tmp names a temporary of this process's to remove: the signal handler
 * reads it, and the signals are blocked while it changes with the file. */
static volatile sig_atomic_t armed;
static pid_t owner; /* the process that created it (not a child between fork and exec) */

/* The signals whose default action ends the process and that a user, a shell, a job's
 * scheduler or a closed pipe sends: each removes the temporary, then ends the process as it
 * would have. Signals ignored when the first file is opened (nohup's SIGHUP, a shell's
 * background SIGINT) stay ignored. */
static const int end_signals[] = {SIGHUP,  SIGINT,  SIGQUIT,   SIGTERM, SIGPIPE, SIGXFSZ,
                                  SIGXCPU, SIGALRM, SIGVTALRM, SIGPROF, SIGUSR1, SIGUSR2};
#define NSIGNALS (sizeof(end_signals) / sizeof(end_signals[0]))

/* Only async-signal-safe calls: unlink, sigaction, raise. */
static void
on_signal(int sig)
{
	int e = errno;
	struct sigaction dfl = {.sa_handler = SIG_DFL};
	if (armed && getpid() == owner)
		unlink(pending.tmp);
	armed = 0;
	sigemptyset(&dfl.sa_mask);
	sigaction(sig, &dfl, NULL);
	raise(sig); /* delivered when the handler returns, with the default action */
	errno = e;
}

static void
handle_signals(void)
{
	struct sigaction sa = {.sa_handler = on_signal}, old;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < NSIGNALS; i++)
		sigaddset(&sa.sa_mask, end_signals[i]);
	for (size_t i = 0; i < NSIGNALS; i++)
		if (sigaction(end_signals[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL)
			sigaction(end_signals[i], &sa, NULL);
}

/* Blocks the signals above (old receives the mask to restore) or, with block false,
 * restores old. */
static void
hold_signals(bool block, sigset_t *old)
{
	if (block) {
		sigset_t set;
		sigemptyset(&set);
		for (size_t i = 0; i < NSIGNALS; i++)
			sigaddset(&set, end_signals[i]);
		sigprocmask(SIG_BLOCK, &set, old);
	} else {
		sigprocmask(SIG_SETMASK, old, NULL);
	}
}

/* Removes the temporary, if this process has one (at exit: not a child's exit). */
static void
remove_tmp(void)
{
	sigset_t old;
	hold_signals(true, &old);
	if (armed && getpid() == owner)
		unlink(pending.tmp);
	armed = 0;
	pending.f = NULL;
	hold_signals(false, &old);
}

FILE *
outfile_open(const char *path)
{
	struct stat st;
	size_t n = strlen(path);
	int fd;
	sigset_t old;
	if (n >= sizeof(pending.path) - 16) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	if (!pending.atexit_set) {
		atexit(remove_tmp);
		handle_signals();
		pending.atexit_set = true;
	}
	memcpy(pending.path, path, n + 1);
	*pending.tmp = '\0';
	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
		errno = ELOOP;
		return NULL;
	}
	if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	} else {
		/* "dir/.name.XXXXXX": hidden beside it, on the same file system for rename */
		const char *slash = strrchr(path, '/');
		size_t dir = slash ? (size_t)(slash - path) + 1 : 0;
		memcpy(pending.tmp, path, dir);
		pending.tmp[dir] = '.';
		memcpy(pending.tmp + dir + 1, path + dir, n - dir);
		memcpy(pending.tmp + n + 1, ".XXXXXX", 8);
		hold_signals(true, &old);
		fd = mkostemp(pending.tmp, O_CLOEXEC); /* O_CREAT | O_EXCL, 0600 */
		if (fd >= 0) {
			owner = getpid();
			armed = 1;
		}
		hold_signals(false, &old);
		if (fd >= 0 && fchmod(fd, 0644) < 0) {
			int e = errno;
			close(fd);
			remove_tmp();
			errno = e;
			return NULL;
		}
	}
	if (fd < 0)
		return NULL;
	if (!(pending.f = fdopen(fd, "w"))) {
		int e = errno;
		close(fd);
		remove_tmp();
		errno = e;
		return NULL;
	}
	return pending.f;
}

int
outfile_commit(FILE *f)
{
	int e = 0;
	sigset_t old;
	errno = 0;
	if (fflush(f) || ferror(f))
		e = errno ? errno : EIO;
	if (fclose(f) && !e)
		e = errno;
	hold_signals(true, &old);
	if (!e && *pending.tmp && rename(pending.tmp, pending.path) < 0)
		e = errno;
	if (e && *pending.tmp)
		unlink(pending.tmp);
	armed = 0;
	pending.f = NULL;
	hold_signals(false, &old);
	errno = e;
	return e ? -1 : 0;
}
