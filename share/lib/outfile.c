/* outfile.c: output files created fresh beside their name and renamed into place. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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

static void
remove_tmp(void)
{
	if (pending.f && *pending.tmp)
		unlink(pending.tmp);
	pending.f = NULL;
}

FILE *
outfile_open(const char *path)
{
	struct stat st;
	size_t n = strlen(path);
	int fd;
	if (n >= sizeof(pending.path) - 16) {
		errno = ENAMETOOLONG;
		return NULL;
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
		fd = mkostemp(pending.tmp, O_CLOEXEC); /* O_CREAT | O_EXCL, 0600 */
		if (fd >= 0 && fchmod(fd, 0644) < 0) {
			int e = errno;
			close(fd);
			unlink(pending.tmp);
			errno = e;
			return NULL;
		}
	}
	if (fd < 0)
		return NULL;
	if (!(pending.f = fdopen(fd, "w"))) {
		int e = errno;
		close(fd);
		if (*pending.tmp)
			unlink(pending.tmp);
		errno = e;
		return NULL;
	}
	if (!pending.atexit_set) {
		atexit(remove_tmp);
		pending.atexit_set = true;
	}
	return pending.f;
}

int
outfile_commit(FILE *f)
{
	int e = 0;
	errno = 0;
	if (fflush(f) || ferror(f))
		e = errno ? errno : EIO;
	if (fclose(f) && !e)
		e = errno;
	if (!e && *pending.tmp && rename(pending.tmp, pending.path) < 0)
		e = errno;
	if (e && *pending.tmp)
		unlink(pending.tmp);
	pending.f = NULL;
	errno = e;
	return e ? -1 : 0;
}
