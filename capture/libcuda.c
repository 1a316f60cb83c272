/* libcuda.c: the libcuda a traced program uses, and its exported driver API functions. */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gelf.h>

#include <linux/types.h>

#include "records.h"
#include "cut.h"
#include "event.h"
#include "libcuda.h"

static bool
readable(const char *path)
{
	return access(path, R_OK) == 0;
}

/* libcuda.so.1 as the dynamic loader would find it from LD_LIBRARY_PATH (of the traced
 * process when given), the ld.so cache and the default directories. RPATH/RUNPATH of the
 * program are not read: --libcuda covers them. */
static char *
find_lib(const char *ld_library_path, const char *soname)
{
	char path[PATH_MAX];
	if (ld_library_path) {
		char *dirs = cut_xstrdup(ld_library_path), *save = NULL;
		for (char *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
			snprintf(path, sizeof(path), "%s/%s", *d ? d : ".", soname);
			if (readable(path)) {
				free(dirs);
				return cut_xstrdup(path);
			}
		}
		free(dirs);
	}
	static const char *const ldconfig[] = {"/sbin/ldconfig -p 2>/dev/null",
	                                       "ldconfig -p 2>/dev/null"};
	char want[64];
	snprintf(want, sizeof(want), "%s (", soname);
	for (size_t i = 0; i < 2; i++) {
		FILE *p = popen(ldconfig[i], "r");
		char line[PATH_MAX + 64], *found = NULL;
		if (!p)
			continue;
		while (fgets(line, sizeof(line), p)) {
			char *arrow = strstr(line, " => ");
			if (found || !arrow || !strstr(line, want) || !strstr(line, "x86-64"))
				continue;
			arrow[strcspn(arrow, "\n")] = 0;
			if (readable(arrow + 4))
				found = cut_xstrdup(arrow + 4);
		}
		if (pclose(p) == 0 || found) {
			if (found)
				return found;
			break;
		}
	}
	static const char *const dirs[] = {
	    "/lib64", "/usr/lib64", "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
	    "/lib",   "/usr/lib"};
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dirs[i], soname);
		if (readable(path))
			return cut_xstrdup(path);
	}
	return NULL;
}

/* The libcuda a running process has mapped, or NULL. */
static char *
mapped_lib(pid_t pid, const char *base)
{
	char path[64], line[PATH_MAX + 128], *found = NULL;
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	while (!found && fgets(line, sizeof(line), f)) {
		char *p = strchr(line, '/');
		if (!p || !strstr(p, base))
			continue;
		p[strcspn(p, "\n")] = 0;
		if (readable(p)) {
			found = cut_xstrdup(p);
		} else {
			char other[PATH_MAX + 64];
			snprintf(other, sizeof(other), "/proc/%d/root%s", pid, p);
			found = readable(other) ? cut_xstrdup(other) : NULL;
		}
	}
	fclose(f);
	return found;
}

/* A variable of a process's environment, or NULL. */
static char *
proc_getenv(pid_t pid, const char *name)
{
	char path[64], *buf = NULL, *found = NULL;
	size_t len = 0, n = strlen(name);
	snprintf(path, sizeof(path), "/proc/%d/environ", pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	while (getdelim(&buf, &len, 0, f) > 0)
		if (!found && strncmp(buf, name, n) == 0 && buf[n] == '=')
			found = cut_xstrdup(buf + n + 1);
	free(buf);
	fclose(f);
	return found;
}

struct func {
	char *name;
	uint64_t addr; /* file offset, what uprobes attach to */
};

static int
func_by_addr(const void *a, const void *b)
{
	const struct func *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int
func_by_name(const void *a, const void *b)
{
	return strcmp(((const struct func *)a)->name, ((const struct func *)b)->name);
}

static bool
wanted(const char *name, bool runtime, const char *const *patterns, int npatterns)
{
	if (runtime ? strncmp(name, "cuda", 4) != 0 && strncmp(name, "__cuda", 6) != 0
	            : strncmp(name, "cu", 2) != 0)
		return false;
	if (!npatterns)
		return true;
	for (int i = 0; i < npatterns; i++)
		if (fnmatch(patterns[i], name, 0) == 0)
			return true;
	return false;
}

int
libcuda_functions(const char *path, bool runtime, const char *const *patterns, int npatterns,
                  char ***names, unsigned long **offsets, char *why, size_t whylen)
{
	struct func *v = NULL;
	size_t n = 0, cap = 0;
	int fd = -1;
	Elf *elf = NULL;
	if (elf_version(EV_CURRENT) == EV_NONE) {
		snprintf(why, whylen, "libelf: %s", elf_errmsg(-1));
		return -1;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || !(elf = elf_begin(fd, ELF_C_READ, NULL))) {
		snprintf(why, whylen, "%s: %s", path, fd < 0 ? strerror(errno) : elf_errmsg(-1));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	/* The exported functions; where none is (a program with the driver or the runtime linked
	 * in, not exported), the functions of its full symbol table, local ones too: nvcc's
	 * static runtime leaves the functions the program calls local to it (cudaMalloc,
	 * cudaLaunchKernel...), those it does not global. */
	for (int pass = 0; pass < 2 && !n; pass++) {
		Elf64_Word table = pass ? SHT_SYMTAB : SHT_DYNSYM;
		Elf_Scn *scn = NULL;
		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			if (!gelf_getshdr(scn, &sh) || sh.sh_type != table || !sh.sh_entsize)
				continue;
			Elf_Data *data = elf_getdata(scn, NULL);
			for (size_t i = 0; data && i < sh.sh_size / sh.sh_entsize; i++) {
				GElf_Sym s;
				if (!gelf_getsym(data, (int)i, &s) ||
				    GELF_ST_TYPE(s.st_info) != STT_FUNC ||
				    s.st_shndx == SHN_UNDEF || !s.st_value)
					continue;
				const char *name = elf_strptr(elf, sh.sh_link, s.st_name);
				Elf_Scn *text = elf_getscn(elf, s.st_shndx);
				GElf_Shdr tsh;
				if (!name || !wanted(name, runtime, patterns, npatterns) || !text ||
				    !gelf_getshdr(text, &tsh))
					continue;
				CUT_GROW(v, n + 1, cap);
				v[n].name = cut_xstrdup(name);
				v[n++].addr = s.st_value - tsh.sh_addr + tsh.sh_offset;
			}
		}
	}
	elf_end(elf);
	close(fd);
	qsort(v, n, sizeof(*v), func_by_addr);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (k && v[k - 1].addr == v[i].addr) {
			free(v[i].name);
			continue;
		}
		v[k++] = v[i];
	}
	qsort(v, k, sizeof(*v), func_by_name);
	if (k > CC_MAX_FUNCS) {
		warnx("%s: %zu functions, probing the first %d", path, k, CC_MAX_FUNCS);
		for (size_t i = CC_MAX_FUNCS; i < k; i++)
			free(v[i].name);
		k = CC_MAX_FUNCS;
	}
	*names = cut_xcalloc(k, sizeof(char *));
	*offsets = cut_xcalloc(k, sizeof(unsigned long));
	for (size_t i = 0; i < k; i++) {
		(*names)[i] = v[i].name;
		(*offsets)[i] = v[i].addr;
	}
	free(v);
	if (!k)
		snprintf(why, whylen, "%s exports no matching %s function", path,
		         runtime ? "cuda*" : "cu*");
	return k ? (int)k : -1;
}

static char *
find_for(pid_t pid, const char *base, const char *soname)
{
	if (!pid)
		return find_lib(getenv("LD_LIBRARY_PATH"), soname);
	char *path = mapped_lib(pid, base);
	if (!path) {
		char *llp = proc_getenv(pid, "LD_LIBRARY_PATH");
		path = find_lib(llp, soname);
		free(llp);
	}
	return path;
}

char *
libcuda_find(pid_t pid)
{
	return find_for(pid, "/libcuda.so", "libcuda.so.1");
}

char *
libcudart_find(pid_t pid)
{
	return find_for(pid, "/libcudart.so", "libcudart.so.13");
}
