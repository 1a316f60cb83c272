/* exe.c: the file a command runs, and whether the dynamic loader will take LD_PRELOAD there
 * (exe.h). The kernel's rules, read from fs/exec.c and security/commoncap.c: a set-user-ID or
 * set-group-ID bit counts unless the mount is nosuid or no_new_privs is set, and the loader runs
 * in secure-execution mode (AT_SECURE: LD_PRELOAD by path ignored) when the new effective ids
 * differ from the real ones, or when file capabilities raise a process that is not root's. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <gelf.h>

#include "exe.h"

#define MAX_DEPTH 5 /* "#!" and env(1) levels followed (the kernel follows 4 of "#!") */
#define MAX_WORDS 64

/* name found as execvp(3) finds it: with a slash, itself; else the first executable regular file
 * in PATH (an empty entry is the current directory). */
static bool
find_in_path(const char *name, char *out, size_t n)
{
	if (strchr(name, '/')) {
		snprintf(out, n, "%s", name);
		return true;
	}
	const char *path = getenv("PATH");
	if (!path)
		path = "/bin:/usr/bin"; /* glibc's default */
	for (const char *p = path;;) {
		const char *colon = strchr(p, ':');
		int len = colon ? (int)(colon - p) : (int)strlen(p);
		struct stat st;
		snprintf(out, n, "%.*s%s%s", len, p, len ? "/" : "", name);
		if (access(out, X_OK) == 0 && stat(out, &st) == 0 && S_ISREG(st.st_mode))
			return true;
		if (!colon)
			return false;
		p = colon + 1;
	}
}

/* Whether exec of path may change ids: no nosuid mount, no no_new_privs. */
static bool
ids_may_change(const char *path)
{
	struct statvfs v;
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1)
		return false;
	return statvfs(path, &v) != 0 || !(v.f_flag & ST_NOSUID);
}

/* Whether the loader runs the file at path (stat st) in secure-execution mode, and why. */
static enum exe_why
secure(const char *path, const struct stat *st)
{
	bool may = ids_may_change(path);
	uid_t euid = may && (st->st_mode & S_ISUID) ? st->st_uid : geteuid();
	gid_t egid = may && (st->st_mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP) ? st->st_gid
	                                                                               : getegid();
	if (euid != getuid())
		return EXE_SETUID;
	if (egid != getgid())
		return EXE_SETGID;
	if (getuid() != 0 && getxattr(path, "security.capability", NULL, 0) > 0)
		return EXE_CAPABILITIES;
	return EXE_PRELOADS;
}

/* Whether a symbol table of elf defines the function named fn. */
static bool
defines(Elf *elf, const char *fn)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB) || !sh.sh_entsize)
			continue;
		Elf_Data *data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *name;
			if (gelf_getsym(data, (int)i, &s) && GELF_ST_TYPE(s.st_info) == STT_FUNC &&
			    s.st_shndx != SHN_UNDEF &&
			    (name = elf_strptr(elf, sh.sh_link, s.st_name)) &&
			    strcmp(name, fn) == 0)
				return true;
		}
	}
	return false;
}

/* Whether the ELF file fd is the dynamic loader itself (run as a program, it loads the next
 * one with LD_PRELOAD as usual): its DT_SONAME begins with "ld-" or "ld.". */
static bool
is_loader(Elf *elf)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !sh.sh_entsize)
			continue;
		Elf_Data *data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Dyn d;
			const char *name;
			if (gelf_getdyn(data, (int)i, &d) && d.d_tag == DT_SONAME &&
			    (name = elf_strptr(elf, sh.sh_link, d.d_un.d_val)))
				return !strncmp(name, "ld-", 3) || !strncmp(name, "ld.", 3);
		}
	}
	return false;
}

/* What the loader does with the ELF file fd: the driver linked in, no loader at all, or the
 * preload taken; -1 for a file that is no ELF file libelf reads (left to exec: execvp(3) runs
 * a script without "#!" with sh). */
static int
elf_check(int fd)
{
	int why = EXE_PRELOADS;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -1;
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	size_t nph;
	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &nph) != 0) {
		elf_end(elf);
		return -1;
	}
	bool interp = false;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_INTERP)
			interp = true;
	}
	if (defines(elf, "cuInit"))
		why = EXE_LIBCUDA_INSIDE;
	else if (!interp && !is_loader(elf))
		why = EXE_STATIC;
	elf_end(elf);
	return why;
}

/* The program env(1) runs given its arguments: the first word that is neither an option (-u and
 * -C take the next word) nor a NAME=VALUE assignment; NULL when none. */
static const char *
env_program(char *const words[], int n)
{
	for (int i = 0; i < n; i++) {
		const char *w = words[i];
		if (!strcmp(w, "-u") || !strcmp(w, "-C") || !strcmp(w, "--unset") ||
		    !strcmp(w, "--chdir")) {
			i++;
			continue;
		}
		if (w[0] == '-')
			continue;
		const char *eq = strchr(w, '=');
		if (eq && !memchr(w, '/', (size_t)(eq - w)))
			continue;
		return w;
	}
	return NULL;
}

/* Splits s (a copy kept in buf, n bytes) at blanks into words (at most MAX_WORDS). */
static int
split(const char *s, char *buf, size_t n, char *words[])
{
	int k = 0;
	snprintf(buf, n, "%s", s);
	for (char *save = NULL, *w = strtok_r(buf, " \t", &save); w && k < MAX_WORDS;
	     w = strtok_r(NULL, " \t", &save))
		words[k++] = w;
	return k;
}

enum exe_why
exe_preload_check(char *const argv[], char *file, size_t n)
{
	char cur[PATH_MAX], line[256], wbuf[256], *words[MAX_WORDS];
	int nwords = 0;
	if (n)
		file[0] = '\0';
	if (!argv || !argv[0] || !find_in_path(argv[0], cur, sizeof(cur)))
		return EXE_PRELOADS;
	while (argv[1 + nwords] && nwords < MAX_WORDS) {
		words[nwords] = argv[1 + nwords];
		nwords++;
	}
	for (int depth = 0; depth < MAX_DEPTH; depth++) {
		snprintf(file, n, "%s", cur);
		int fd = open(cur, O_RDONLY | O_CLOEXEC);
		struct stat st;
		if (fd < 0 || fstat(fd, &st) < 0) {
			if (fd >= 0)
				close(fd);
			return EXE_PRELOADS;
		}
		ssize_t got = pread(fd, line, sizeof(line) - 1, 0);
		line[got > 0 ? got : 0] = '\0';
		if (got > 2 && line[0] == '#' && line[1] == '!') {
			/* "#!interpreter [one argument]": the kernel loads the interpreter (a
			 * script's own mode bits count for nothing). */
			close(fd);
			line[strcspn(line, "\n")] = '\0';
			char *p = line + 2 + strspn(line + 2, " \t");
			char *arg = p + strcspn(p, " \t");
			if (*arg)
				*arg++ = '\0';
			arg += strspn(arg, " \t");
			if (!*p)
				return EXE_PRELOADS;
			snprintf(cur, sizeof(cur), "%s", p);
			nwords = *arg ? split(arg, wbuf, sizeof(wbuf), words) : 0;
			continue;
		}
		const char *base = strrchr(cur, '/');
		base = base ? base + 1 : cur;
		if (!strcmp(base, "env")) {
			/* env(1) passes the environment on to the program it runs: that one counts.
			 */
			close(fd);
			const char *prog = env_program(words, nwords);
			if (!prog || !find_in_path(prog, cur, sizeof(cur)))
				return EXE_PRELOADS;
			int at = 0; /* the program's own arguments follow it */
			while (at < nwords && words[at++] != prog)
				;
			memmove(words, words + at, (size_t)(nwords - at) * sizeof(words[0]));
			nwords -= at;
			continue;
		}
		int why = elf_check(fd);
		if (why == EXE_PRELOADS)
			why = (int)secure(cur, &st);
		close(fd);
		return why < 0 ? EXE_PRELOADS : (enum exe_why)why;
	}
	return EXE_PRELOADS;
}

const char *
exe_why_word(enum exe_why w)
{
	switch (w) {
	case EXE_STATIC: return "static";
	case EXE_SETUID: return "setuid";
	case EXE_SETGID: return "setgid";
	case EXE_CAPABILITIES: return "file capabilities";
	case EXE_LIBCUDA_INSIDE: return "libcuda linked in";
	default: return NULL;
	}
}

bool
exe_runtime_inside(const char *file)
{
	if (!file || !*file || elf_version(EV_CURRENT) == EV_NONE)
		return false;
	int fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	/* (cudaGetDeviceCount: every runtime has it, and nothing but a runtime defines it) */
	bool inside = elf && elf_kind(elf) == ELF_K_ELF && defines(elf, "cudaGetDeviceCount");
	elf_end(elf);
	close(fd);
	return inside;
}
