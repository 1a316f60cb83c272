/* cuthook: runs a command with libcuthook.so preloaded, so that its CUDA driver API calls are
 * written to a trace (cut-events(5)) without root. */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cut.h"
#include "event.h"

#ifndef CUT_HOOK_LIBDIR
#define CUT_HOOK_LIBDIR "/usr/local/lib/cut"
#endif

static void
usage(void)
{
	fprintf(stderr, "usage: cuthook [-o file] [--] command [arg ...]\n");
	exit(CUT_EXIT_FATAL);
}

/* The library: $CUTHOOK_LIB, else beside this program (../lib/cut/ when installed, ../lib/
 * in a build tree), else the configured library directory. */
static char *
find_library(void)
{
	const char *env = getenv("CUTHOOK_LIB");
	if (env && *env) {
		if (access(env, R_OK) < 0)
			err(CUT_EXIT_FATAL, "%s", env);
		return realpath(env, NULL);
	}
	char exe[PATH_MAX], path[PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		char *slash = strrchr(exe, '/');
		if (slash)
			*slash = '\0';
		static const char *const rel[] = {"/../lib/cut/libcuthook.so",
		                                  "/../lib/libcuthook.so"};
		for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
			snprintf(path, sizeof(path), "%s%s", exe, rel[i]);
			if (access(path, R_OK) == 0)
				return realpath(path, NULL);
		}
	}
	snprintf(path, sizeof(path), "%s/libcuthook.so", CUT_HOOK_LIBDIR);
	if (access(path, R_OK) == 0)
		return strdup(path);
	errx(CUT_EXIT_FATAL, "cannot find libcuthook.so (set CUTHOOK_LIB)");
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

int
main(int argc, char *argv[])
{
	const char *file = "cuthook.jsonl";
	int c;
	while ((c = getopt(argc, argv, "+o:")) != -1) {
		switch (c) {
		case 'o': file = optarg; break;
		default: usage();
		}
	}
	argv += optind;
	if (!argv[0] || !*file)
		usage();

	char *lib = find_library();
	char *out = absolute(file);
	if (!lib || !out)
		err(CUT_EXIT_FATAL, "out of memory");
	/* One file for the whole capture, truncated now; with %p each process makes its own. */
	if (!strstr(out, "%p")) {
		int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
		if (fd < 0)
			err(CUT_EXIT_FATAL, "%s", file);
		close(fd);
	}

	const char *old = getenv("LD_PRELOAD");
	char *preload = NULL;
	if (old && *old && strstr(old, lib))
		preload = strdup(old);
	else if (old && *old) {
		if (asprintf(&preload, "%s:%s", old, lib) < 0)
			preload = NULL;
	} else
		preload = strdup(lib);
	char pid[24];
	snprintf(pid, sizeof(pid), "%ld", (long)getpid());
	if (!preload || setenv("LD_PRELOAD", preload, 1) < 0 ||
	    setenv("CUTHOOK_OUTPUT", out, 1) < 0 || setenv("CUTHOOK_ROOT", pid, 1) < 0)
		err(CUT_EXIT_FATAL, "setenv");

	/* The command takes this process over: its exit status is cuthook's. */
	execvp(argv[0], argv);
	err(errno == ENOENT ? 127 : 126, "%s", argv[0]);
}
