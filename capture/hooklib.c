/* hooklib.c: finding libcuthook.so (hooklib.h). */
#include <errno.h>
#include <stdbool.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hooklib.h"

#ifndef CUT_HOOK_LIBDIR
#define CUT_HOOK_LIBDIR "/usr/local/lib/cut"
#endif

static char *
readable(const char *path, const char *from, char *why, size_t n)
{
	char *real = access(path, R_OK) == 0 ? realpath(path, NULL) : NULL;
	if (!real)
		snprintf(why, n, "%s %s: %s", from, path, strerror(errno));
	return real;
}

char *
cut_hook_library(const char *named, char *why, size_t n)
{
	if (named && *named)
		return readable(named, "libcuthook", why, n);
	const char *env = getenv("CUTHOOK_LIB");
	if (env && *env)
		return readable(env, "CUTHOOK_LIB", why, n);
	char exe[PATH_MAX], path[PATH_MAX + 32];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len > 0) {
		exe[len] = '\0';
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
	snprintf(why, n, "cannot find libcuthook.so (set CUTHOOK_LIB)");
	return NULL;
}

int
cut_hook_setenv(const char *lib, const char *out, const char *layers, int nvtx)
{
	const char *old = getenv("LD_PRELOAD");
	char *preload = NULL;
	if (old && *old && strstr(old, lib))
		preload = strdup(old);
	else if (old && *old) {
		if (asprintf(&preload, "%s:%s", old, lib) < 0)
			preload = NULL;
	} else
		preload = strdup(lib);
	int rc = preload && setenv("LD_PRELOAD", preload, 1) == 0 &&
	                 setenv("CUTHOOK_OUTPUT", out, 1) == 0 &&
	                 (!layers || setenv("CUTHOOK_LAYERS", layers, 1) == 0)
	             ? 0
	             : -1;
	free(preload);
	if (rc < 0 || !nvtx)
		return rc;
	/* The library is the NVTX tool too; one named already is chained to, not replaced. */
	const char *tool = getenv("NVTX_INJECTION64_PATH");
	if (tool && *tool && strcmp(tool, lib) != 0 && setenv("CUT_NVTX_NEXT", tool, 1) < 0)
		return -1;
	return setenv("NVTX_INJECTION64_PATH", lib, 1);
}

/* ---- which calls submit work ---- */

static bool
starts(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

enum gpu_kind
cut_gpu_kind_of(const char *n)
{
	if (starts(n, "cuLaunchKernelEx"))
		return GK_KERNEL_EX;
	if (!strcmp(n, "cuLaunchKernel") || !strcmp(n, "cuLaunchKernel_ptsz") ||
	    (starts(n, "cuLaunchCooperativeKernel") && !strstr(n, "MultiDevice")))
		return GK_KERNEL;
	if (starts(n, "cuMemcpy") && !strstr(n, "Batch"))
		return GK_COPY;
	if (starts(n, "cuMemsetD"))
		return GK_SET;
	if (starts(n, "cuGraphLaunch"))
		return GK_GRAPH;
	if (starts(n, "cuStreamCreate") || starts(n, "cuGreenCtxStreamCreate"))
		return GK_STREAM;
	/* Also what may make a stream wait: an allocation from a pool may wait for the stream
	 * that freed the memory (CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES, on by
	 * default), and a context's wait holds every stream of it (gpu.c). */
	static const char *const enqueue[] = {
	    "cuEventRecord",
	    "cuStreamWaitEvent",
	    "cuCtxWaitEvent",
	    "cuGreenCtxWaitEvent",
	    "cuMemAllocAsync",
	    "cuMemAllocFromPoolAsync",
	    "cuGraphUpload",
	    "cuGraphicsMapResources",
	    "cuGraphicsUnmapResources",
	    "cuMemMapArrayAsync",
	    "cuMemDiscard",
	    "cuStreamAttachMemAsync",
	    "cuLaunchHostFunc",
	    "cuStreamWaitValue",
	    "cuStreamWriteValue",
	    "cuStreamBatchMemOp",
	    "cuStreamAddCallback",
	    "cuMemPrefetchAsync",
	    "cuWaitExternalSemaphoresAsync",
	    "cuSignalExternalSemaphoresAsync",
	    "cuMemcpyBatchAsync",
	    "cuMemcpy3DBatchAsync",
	    "cuMemBatchDecompressAsync",
	    "cuLaunchKernel", /* the rest of the launches */
	    "cuLaunchGridAsync",
	};
	for (size_t i = 0; i < sizeof(enqueue) / sizeof(enqueue[0]); i++)
		if (starts(n, enqueue[i]))
			return GK_ENQUEUE;
	return GK_NONE;
}

int
cut_hook_unprobed(const char *name, int gpu)
{
	static const char *const own[] = {CUT_HOOK_OWN_CALLS};
	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		if (strcmp(name, own[i]) == 0)
			return 1;
	return gpu && CUT_GPU_TIMES(cut_gpu_kind_of(name));
}

int
cut_hook_listed(const char *list, const char *word)
{
	size_t n = strlen(word);
	for (const char *p = list; p && (p = strstr(p, word)); p += n)
		if ((p == list || p[-1] == ',') && (p[n] == '\0' || p[n] == ','))
			return 1;
	return 0;
}
