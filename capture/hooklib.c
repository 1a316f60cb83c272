/* hooklib.c: finding libcuthook.so (hooklib.h). */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "classify.h"
#include "hooklib.h"

#ifndef CUT_HOOK_LIBDIR
#define CUT_HOOK_LIBDIR "/usr/local/lib/cut"
#endif

/*
 * Whether path is libcuthook: an ELF shared object of this machine's kind whose dynamic
 * symbols define cuthook_mark_thread, the library's marker (mark.c). Preloading anything else
 * would have the dynamic linker complain in every process. This reads the ELF tables only to
 * tell a wrong file early; uprobes are attached through libbpf. Returns true, or false with
 * the reason in why.
 */
static bool
is_libcuthook(const char *path, char *why, size_t n)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	const unsigned char *m = MAP_FAILED;
	bool ok = false;
	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    (size_t)st.st_size >= sizeof(Elf64_Ehdr))
		m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (fd >= 0)
		close(fd);
	if (m == MAP_FAILED) {
		snprintf(why, n, "%s: not an ELF shared object", path);
		return false;
	}
	size_t size = (size_t)st.st_size;
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)m;
	const char *what = "not an ELF shared object";
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_type != ET_DYN)
		goto done;
	what = "an ELF object for another machine";
#if defined(__x86_64__)
	if (eh->e_machine != EM_X86_64)
		goto done;
#elif defined(__aarch64__)
	if (eh->e_machine != EM_AARCH64)
		goto done;
#endif
	what = "not libcuthook (it defines no cuthook_mark_thread)";
	if (eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shoff > size ||
	    (size - eh->e_shoff) / sizeof(Elf64_Shdr) < eh->e_shnum)
		goto done;
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(m + eh->e_shoff);
	for (unsigned i = 0; i < eh->e_shnum && !ok; i++) {
		if (sh[i].sh_type != SHT_DYNSYM || sh[i].sh_link >= eh->e_shnum ||
		    sh[i].sh_offset > size || sh[i].sh_size > size - sh[i].sh_offset)
			continue;
		const Elf64_Shdr *str = &sh[sh[i].sh_link];
		if (str->sh_offset > size || str->sh_size > size - str->sh_offset)
			continue;
		const Elf64_Sym *sym = (const Elf64_Sym *)(m + sh[i].sh_offset);
		const char *names = (const char *)m + str->sh_offset;
		for (size_t k = 0; k < sh[i].sh_size / sizeof(*sym) && !ok; k++)
			ok = sym[k].st_name < str->sh_size && sym[k].st_shndx != SHN_UNDEF &&
			     strnlen(names + sym[k].st_name, str->sh_size - sym[k].st_name) <
			         str->sh_size - sym[k].st_name &&
			     strcmp(names + sym[k].st_name, "cuthook_mark_thread") == 0;
	}
done:
	munmap((void *)m, size);
	if (!ok)
		snprintf(why, n, "%s: %s", path, what);
	return ok;
}

static char *
readable(const char *path, const char *from, char *why, size_t n)
{
	char *real = access(path, R_OK) == 0 ? realpath(path, NULL) : NULL;
	char whyfile[PATH_MAX + 64];
	if (!real)
		snprintf(why, n, "%s %s: %s", from, path, strerror(errno));
	else if (!is_libcuthook(real, whyfile, sizeof(whyfile))) {
		snprintf(why, n, "%s %s", from, whyfile);
		free(real);
		real = NULL;
	}
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
				return readable(path, "libcuthook", why, n);
		}
	}
	snprintf(path, sizeof(path), "%s/libcuthook.so", CUT_HOOK_LIBDIR);
	if (access(path, R_OK) == 0)
		return readable(path, "libcuthook", why, n);
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

/* ---- the status page ---- */

#define NO_PROCESS UINT64_MAX

/* The start of process pid, in clock ticks after boot (/proc/PID/stat, field 22); NO_PROCESS
 * when there is none; 0 when it cannot be told (out of descriptors, say): never taken for a
 * process gone. Async-signal-safe. */
static uint64_t
started(int pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? NO_PROCESS : 0;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return n == 0 || errno == ESRCH ? NO_PROCESS : 0;
	buf[n] = '\0';
	const char *p = strrchr(buf, ')');
	for (int field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	return p ? strtoull(p + 1, NULL, 10) : 0;
}

struct cut_hook_status *
cut_hook_status_new(int stop_if_gone)
{
	int fd = memfd_create("cuthook-status", MFD_CLOEXEC);
	struct cut_hook_status *s = MAP_FAILED;
	if (fd >= 0 && ftruncate(fd, sizeof(*s)) == 0)
		s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (s == MAP_FAILED) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		errno = e;
		return NULL;
	}
	s->magic = CUT_HOOK_STATUS_MAGIC;
	s->stop_if_gone = stop_if_gone;
	char env[64];
	snprintf(env, sizeof(env), "%d:%d:%llu", (int)getpid(), fd,
	         (unsigned long long)started(getpid()));
	if (setenv("CUTHOOK_STATUS", env, 1) < 0) {
		munmap(s, sizeof(*s));
		close(fd);
		return NULL;
	}
	return s; /* fd stays open: the command's processes open it through /proc */
}

struct cut_hook_status *
cut_hook_status_attach(struct cut_hook_launcher *l)
{
	const char *env = getenv("CUTHOOK_STATUS");
	unsigned long long st;
	int fd, p;
	l->pidfd = -1;
	if (!env || sscanf(env, "%d:%d:%llu", &p, &fd, &st) != 3 || p <= 0 || fd < 0)
		return NULL;
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", p, fd);
	int mine = open(path, O_RDWR | O_CLOEXEC);
	if (mine < 0)
		return NULL;
	struct stat sb;
	struct cut_hook_status *s = MAP_FAILED;
	if (fstat(mine, &sb) == 0 && S_ISREG(sb.st_mode) && (size_t)sb.st_size >= sizeof(*s))
		s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE, MAP_SHARED, mine, 0);
	close(mine);
	if (s == MAP_FAILED)
		return NULL;
#ifdef SYS_pidfd_open
	int pidfd = (int)syscall(SYS_pidfd_open, p, 0);
	if (pidfd >= 0) {
		l->pidfd = fcntl(pidfd, F_DUPFD_CLOEXEC, 100);
		close(pidfd);
		if (l->pidfd >= 0 && fstat(l->pidfd, &sb) == 0) {
			l->dev = sb.st_dev;
			l->ino = sb.st_ino;
		} else if (l->pidfd >= 0) {
			close(l->pidfd);
			l->pidfd = -1;
		}
	}
#endif
	/* the process opened is the launcher, not a later one with its pid */
	if (s->magic != CUT_HOOK_STATUS_MAGIC || st == 0 || started(p) != st) {
		munmap(s, sizeof(*s));
		if (l->pidfd >= 0)
			close(l->pidfd);
		l->pidfd = -1;
		return NULL;
	}
	l->pid = p;
	l->start = st;
	return s;
}

int
cut_hook_launcher_alive(const struct cut_hook_launcher *l)
{
	struct stat sb;
	if (l->pidfd >= 0 && fstat(l->pidfd, &sb) == 0 && sb.st_dev == l->dev &&
	    sb.st_ino == l->ino) {
		struct pollfd pf = {.fd = l->pidfd, .events = POLLIN};
		return poll(&pf, 1, 0) != 1 || !(pf.revents & POLLIN); /* gone: readable */
	}
	uint64_t now = started(l->pid);
	return now == 0 || now == l->start;
}

void
cut_hook_status_error(struct cut_hook_status *s, int error)
{
	int32_t none = 0;
	__atomic_add_fetch(&s->failures, 1, __ATOMIC_RELAXED);
	__atomic_compare_exchange_n(&s->error, &none, error ? error : EIO, false, __ATOMIC_RELAXED,
	                            __ATOMIC_RELAXED);
}

long
cut_hook_pid_of(const char *name, const char *pattern)
{
	const char *digits = NULL;
	size_t ndigits = 0;
	while (*pattern) {
		if (pattern[0] == '%' && pattern[1] == 'p') {
			size_t k = 0;
			while (name[k] >= '0' && name[k] <= '9')
				k++;
			if (k == 0 || k > 9 ||
			    (digits && (k != ndigits || memcmp(digits, name, k))))
				return -1;
			digits = name, ndigits = k;
			name += k;
			pattern += 2;
		} else if (*name++ != *pattern++)
			return -1;
	}
	if (*name || !digits)
		return -1;
	long pid = 0;
	for (size_t k = 0; k < ndigits; k++)
		pid = pid * 10 + (digits[k] - '0');
	return pid > 0 ? pid : -1;
}

/* ---- which calls submit work ---- */

enum gpu_kind
cut_gpu_kind_of(const char *n)
{
	unsigned f = cut_api_flags(n);
	if (f & CUT_API_KERNEL)
		return f & CUT_API_LAUNCH_CONFIG ? GK_KERNEL_EX : GK_KERNEL;
	if (f & CUT_API_COPY)
		return GK_COPY;
	if (f & CUT_API_MEMSET)
		return GK_SET;
	if (f & CUT_API_GRAPH)
		return GK_GRAPH;
	if (f & CUT_API_CREATES_STREAM)
		return GK_STREAM;
	if (f & CUT_API_CREATES_CONTEXT)
		return GK_CONTEXT;
	if (f & CUT_API_INSTANTIATES_GRAPH)
		return GK_INSTANTIATE;
	if (f & (CUT_API_DESTROYS_CONTEXT | CUT_API_RESETS_CONTEXT | CUT_API_RELEASES_PRIMARY))
		return GK_CTX_END; /* a release: where it gives back the last reference (gpu.c) */
	/* Also what may make a stream wait: an allocation from a pool may wait for the stream
	 * that freed the memory (CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES, on by
	 * default), and a context's wait holds every stream of it (gpu.c). */
	if (f & CUT_API_ENQUEUE)
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

/* ---- the library's layers ---- */

static const struct {
	const char *name;
	enum cut_layer layer;
} library_layers[] = {
#define CUT_HOOK_ROW_(name, layer, only) {#name, layer},
    CUT_HOOK_LAYERS(CUT_HOOK_ROW_)
#undef CUT_HOOK_ROW_
};
#define NHOOK_LAYERS (sizeof(library_layers) / sizeof(library_layers[0]))

int
cut_hook_layer(const char *name, size_t n)
{
	for (size_t i = 0; i < NHOOK_LAYERS; i++)
		if (strlen(library_layers[i].name) == n &&
		    strncmp(name, library_layers[i].name, n) == 0)
			return (int)library_layers[i].layer;
	return -1;
}

unsigned
cut_hook_layers_in(const char *list)
{
	unsigned bits = 0;
	for (size_t i = 0; i < NHOOK_LAYERS; i++)
		if (cut_hook_listed(list, library_layers[i].name))
			bits |= 1u << library_layers[i].layer;
	return bits;
}

char *
cut_hook_layer_join(char *buf, size_t n, unsigned bits, const char *sep)
{
	size_t len = 0;
	if (n)
		buf[0] = '\0';
	for (size_t i = 0; i < NHOOK_LAYERS; i++) {
		if (!(bits >> library_layers[i].layer & 1) || len >= n)
			continue;
		int w =
		    snprintf(buf + len, n - len, "%s%s", len ? sep : "", library_layers[i].name);
		len = w < 0 ? n : len + (size_t)w;
	}
	return buf;
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
