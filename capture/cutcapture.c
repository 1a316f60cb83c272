/* cutcapture: eBPF capture of a CUDA program's driver API calls, NVIDIA ioctls, interrupts
 * and scheduling, written as cut-events(5) JSON lines sorted by time. */
#include <dirent.h>
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <gelf.h>

#include "buf.h"
#include "cut.h"
#include "event.h"
#include "record.h"

#include "cutcapture.skel.h"

#define NS 1000000000ull
#define MS 1000000ull
/* How long a record may take from its clock reading to the ring buffer, at most. */
#define SLACK_NS (100 * MS)
/* How long an off-CPU period may hold the output back before it is written in parts. */
#define MAX_HOLD_NS (1 * NS)
#define SCAN_NS (100 * MS)
/* How long a signal from kill(1) waits before it is passed on: one sent to the process group
 * or to every process of a job reaches the command meanwhile, and is then not sent twice. */
#define FORWARD_WAIT_NS (100 * MS)
/* How often buffered output is written at the least, so that a reader of the pipe sees it. */
#define FLUSH_NS (1 * NS)

/* The kernel layer by default: NVIDIA driver functions (FACTS.md lists them in kallsyms). */
static const char *const default_kfuncs[] = {
    "rm_ioctl",        "nvidia_isr",
    "nvidia_isr_msix", "nvidia_isr_kthread_bh",
    "uvm_ioctl",       "uvm_va_space_cpu_fault",
    "os_alloc_mem",    "nv_alloc_pages",
};

static const char *const layer_names[] = {"api", "ioctl", "irq", "sched", "kernel"};
#define NLAYERS 5

static struct env {
	const char *out_path;
	const char *libcuda;
	pid_t pid;
	char **cmd;
	unsigned layers;
	const char *patterns[64];
	int npatterns;
	const char *kfuncs[CC_MAX_KFUNCS];
	int nkfuncs;
	unsigned long ring_mb;
	bool quiet, verbose, single, bare;
	uint64_t sched_min;
	const char *irq_prefix;
} env = {.layers = CC_L_API | CC_L_IOCTL | CC_L_IRQ | CC_L_SCHED | CC_L_KERNEL,
         .ring_mb = 64,
         .irq_prefix = "nvidia"};

/* Why each layer is off ("" while it is on). */
static char off_why[NLAYERS][160];

static volatile sig_atomic_t stop_sig, stop_count, stop_by_user;
static volatile uint64_t stop_ts; /* when the last one came, CLOCK_MONOTONIC ns */

static void
usage(void)
{
	fprintf(stderr,
	        "usage: cutcapture [-qv] [-b MiB] [-f pattern] [-k function] [-l layers]\n"
	        "                  [-o file] [--libcuda path] [--sched-min ns] [--single-probes]\n"
	        "                  -p pid | [--] command [arg ...]\n");
	exit(CUT_EXIT_FATAL);
}

static uint64_t
clock_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * NS + (uint64_t)ts.tv_nsec;
}

static uint64_t
now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static void
on_signal(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	stop_ts = (uint64_t)ts.tv_sec * NS + (uint64_t)ts.tv_nsec;
	stop_sig = sig;
	stop_count++;
	/* A signal from the terminal reached the command too; one from kill(1) may not have. */
	stop_by_user = si && si->si_code <= 0;
}

/* libbpf's messages only with -v: what fails is reported once, in our words. */
static int
libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	return env.verbose ? vfprintf(stderr, fmt, ap) : 0;
}

static void layer_off(int layer, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Marks a layer off, saying why once on stderr and in the header. */
static void
layer_off(int layer, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(off_why[layer], sizeof(off_why[layer]), fmt, ap);
	va_end(ap);
	env.layers &= ~(1u << layer);
	warnx("%s layer off: %s", layer_names[layer], off_why[layer]);
}

/* ---- finding libcuda and its functions ---- */

static bool
readable(const char *path)
{
	return access(path, R_OK) == 0;
}

/* libcuda.so.1 as the dynamic loader would find it from LD_LIBRARY_PATH (of the traced
 * process when given), the ld.so cache and the default directories. RPATH/RUNPATH of the
 * program are not read: --libcuda covers them. */
static char *
find_libcuda(const char *ld_library_path)
{
	char path[PATH_MAX];
	if (ld_library_path) {
		char *dirs = strdup(ld_library_path), *save = NULL;
		for (char *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
			snprintf(path, sizeof(path), "%s/libcuda.so.1", *d ? d : ".");
			if (readable(path)) {
				free(dirs);
				return strdup(path);
			}
		}
		free(dirs);
	}
	static const char *const ldconfig[] = {"/sbin/ldconfig -p 2>/dev/null",
	                                       "ldconfig -p 2>/dev/null"};
	for (size_t i = 0; i < 2; i++) {
		FILE *p = popen(ldconfig[i], "r");
		char line[PATH_MAX + 64], *found = NULL;
		if (!p)
			continue;
		while (fgets(line, sizeof(line), p)) {
			char *arrow = strstr(line, " => ");
			if (found || !arrow || !strstr(line, "libcuda.so.1 (") ||
			    !strstr(line, "x86-64"))
				continue;
			arrow[strcspn(arrow, "\n")] = 0;
			if (readable(arrow + 4))
				found = strdup(arrow + 4);
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
		snprintf(path, sizeof(path), "%s/libcuda.so.1", dirs[i]);
		if (readable(path))
			return strdup(path);
	}
	return NULL;
}

/* The libcuda a running process has mapped, or NULL. */
static char *
mapped_libcuda(pid_t pid)
{
	char path[64], line[PATH_MAX + 128], *found = NULL;
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	while (!found && fgets(line, sizeof(line), f)) {
		char *p = strchr(line, '/');
		if (!p || !strstr(p, "/libcuda.so"))
			continue;
		p[strcspn(p, "\n")] = 0;
		if (readable(p)) {
			found = strdup(p);
		} else {
			char other[PATH_MAX + 64];
			snprintf(other, sizeof(other), "/proc/%d/root%s", pid, p);
			found = readable(other) ? strdup(other) : NULL;
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
			found = strdup(buf + n + 1);
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
wanted(const char *name)
{
	if (strncmp(name, "cu", 2) != 0)
		return false;
	if (!env.npatterns)
		return true;
	for (int i = 0; i < env.npatterns; i++)
		if (fnmatch(env.patterns[i], name, 0) == 0)
			return true;
	return false;
}

/*
 * The exported cu* functions of the library (defined STT_FUNC in .dynsym), matching -f,
 * one name per address (an alias would fire twice), sorted by name, with their file
 * offsets. The offsets are given to libbpf rather than the names: its resolution of a name
 * list failed with ENOENT on libcuda 580 (H200 machine), and the offsets are what the
 * kernel takes anyway. Returns the count, or -1 with a message in why.
 */
static int
list_functions(const char *path, char ***names, unsigned long **offsets, char *why, size_t whylen)
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
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize)
			continue;
		Elf_Data *data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			if (!gelf_getsym(data, (int)i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC ||
			    s.st_shndx == SHN_UNDEF || !s.st_value)
				continue;
			const char *name = elf_strptr(elf, sh.sh_link, s.st_name);
			Elf_Scn *text = elf_getscn(elf, s.st_shndx);
			GElf_Shdr tsh;
			if (!name || !wanted(name) || !text || !gelf_getshdr(text, &tsh))
				continue;
			if (n == cap) {
				cap = cap ? cap * 2 : 1024;
				v = realloc(v, cap * sizeof(*v));
				if (!v)
					err(CUT_EXIT_FATAL, "realloc");
			}
			v[n].name = strdup(name);
			v[n++].addr = s.st_value - tsh.sh_addr + tsh.sh_offset;
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
	*names = calloc(k ? k : 1, sizeof(char *));
	*offsets = calloc(k ? k : 1, sizeof(unsigned long));
	for (size_t i = 0; i < k; i++) {
		(*names)[i] = v[i].name;
		(*offsets)[i] = v[i].addr;
	}
	free(v);
	if (!k)
		snprintf(why, whylen, "%s exports no matching cu* function", path);
	return k ? (int)k : -1;
}

/* ---- kernel features ---- */

/* Whether the kernel has uprobe_multi links (6.6): the probe libbpf itself uses. */
static bool
have_uprobe_multi(void)
{
	struct bpf_insn insns[] = {
	    {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
	    {.code = BPF_JMP | BPF_EXIT},
	};
	LIBBPF_OPTS(bpf_prog_load_opts, popts, .expected_attach_type = BPF_TRACE_UPROBE_MULTI);
	int prog = bpf_prog_load(BPF_PROG_TYPE_KPROBE, NULL, "GPL", insns, 2, &popts);
	if (prog < 0)
		return false;
	unsigned long offset = 0;
	LIBBPF_OPTS(bpf_link_create_opts, lopts, .uprobe_multi.path = "/",
	            .uprobe_multi.offsets = &offset, .uprobe_multi.cnt = 1);
	int link = bpf_link_create(prog, -1, BPF_TRACE_UPROBE_MULTI, &lopts);
	int e = errno;
	if (link >= 0)
		close(link);
	close(prog);
	return link < 0 && e == EBADF;
}

/* Keeps those of the default kernel functions the running kernel has. */
static void
default_kernel_functions(void)
{
	if (access("/sys/module/nvidia", F_OK) != 0)
		return;
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512];
	bool seen[sizeof(default_kfuncs) / sizeof(default_kfuncs[0])] = {0};
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char type, name[256];
		if (sscanf(line, "%*s %c %255s", &type, name) != 2 || (type != 't' && type != 'T'))
			continue;
		for (size_t i = 0; i < sizeof(seen); i++)
			if (strcmp(name, default_kfuncs[i]) == 0)
				seen[i] = true;
	}
	fclose(f);
	for (size_t i = 0; i < sizeof(seen) && env.nkfuncs < CC_MAX_KFUNCS; i++)
		if (seen[i])
			env.kfuncs[env.nkfuncs++] = default_kfuncs[i];
}

static struct bpf_program *
kfn_prog(struct cutcapture_bpf *skel, int i, bool exit_prog)
{
	struct bpf_program *entry[CC_MAX_KFUNCS] = {
	    skel->progs.kfn_entry0, skel->progs.kfn_entry1, skel->progs.kfn_entry2,
	    skel->progs.kfn_entry3, skel->progs.kfn_entry4, skel->progs.kfn_entry5,
	    skel->progs.kfn_entry6, skel->progs.kfn_entry7,
	};
	struct bpf_program *exit_[CC_MAX_KFUNCS] = {
	    skel->progs.kfn_exit0, skel->progs.kfn_exit1, skel->progs.kfn_exit2,
	    skel->progs.kfn_exit3, skel->progs.kfn_exit4, skel->progs.kfn_exit5,
	    skel->progs.kfn_exit6, skel->progs.kfn_exit7,
	};
	return exit_prog ? exit_[i] : entry[i];
}

/* ---- the skeleton ---- */

struct probes {
	char **funcs;
	unsigned long *offsets;
	int nfuncs;
	char *libcuda; /* as found */
	char libcuda_real[PATH_MAX];
	bool multi;
	bool fentry;              /* the kernel layer loaded as fentry/fexit */
	struct bpf_link **single; /* 2 per function in single-probe mode */
	struct bpf_link *klinks[2 * CC_MAX_KFUNCS];
	int attached, failed;
	uint64_t attach_ns, detach_ns;
	char kernel_why[352];
	char nobtf[160]; /* kernel functions fentry cannot find in BTF */
	bool kfentry[CC_MAX_KFUNCS];
	int fentry_targets;
};

/* Opens the skeleton and writes its settings; fentry says whether the kernel layer's
 * fentry/fexit programs are to be loaded. */
static struct cutcapture_bpf *
skel_open(struct probes *pr, bool fentry)
{
	struct cutcapture_bpf *skel = cutcapture_bpf__open();
	if (!skel)
		return NULL;
	struct cutcapture_bpf__rodata *ro = skel->rodata;
	ro->targ_layers = env.layers;
	ro->targ_bare = env.bare;
	ro->targ_sched_min_ns = env.sched_min;
	uint64_t ring = (uint64_t)env.ring_mb << 20;
	ro->targ_wake_bytes = ring / 8;
	bpf_map__set_max_entries(skel->maps.events, (uint32_t)ring);
	struct cc_dev devs[CC_MAX_DEVS];
	ro->targ_ndevs = (uint32_t)rec_devs(devs, CC_MAX_DEVS);
	memcpy((void *)ro->targ_devs, devs, sizeof(devs));
	for (int i = 0; i < pr->nfuncs; i++) {
		struct cc_fdesc d = rec_fdesc(pr->funcs[i]);
		memcpy((void *)&ro->targ_fdesc[i], &d, sizeof(d));
	}
	snprintf((char *)ro->targ_irq_prefix, sizeof(ro->targ_irq_prefix), "%s", env.irq_prefix);
	ro->targ_irq_prefix_len = (uint32_t)strlen(env.irq_prefix);
	uint32_t isr = 0;
	for (int i = 0; i < env.nkfuncs; i++)
		if (strstr(env.kfuncs[i], "isr"))
			isr |= 1u << i;
	ro->targ_kisr = isr;

	bool api = env.layers & CC_L_API, kernel = (env.layers & CC_L_KERNEL) && env.nkfuncs;
	bpf_program__set_autoload(skel->progs.api_entry, api);
	bpf_program__set_autoload(skel->progs.api_return, api);
	if (api && !pr->multi) {
		bpf_program__set_expected_attach_type(skel->progs.api_entry, 0);
		bpf_program__set_expected_attach_type(skel->progs.api_return, 0);
	}
	bpf_program__set_autoload(skel->progs.sys_enter, env.layers & CC_L_IOCTL);
	bpf_program__set_autoload(skel->progs.sys_exit, env.layers & CC_L_IOCTL);
	bpf_program__set_autoload(skel->progs.irq_entry, env.layers & CC_L_IRQ);
	bpf_program__set_autoload(skel->progs.irq_exit, env.layers & CC_L_IRQ);
	bpf_program__set_autoload(skel->progs.sched_switch, env.layers & CC_L_SCHED);
	bpf_program__set_autoload(skel->progs.sched_wakeup, env.layers & CC_L_SCHED);
	/* fentry needs the function in the kernel's or a module's BTF: without it the
	 * function is left to kprobes. */
	pr->fentry_targets = 0;
	pr->nobtf[0] = 0;
	for (int i = 0; i < CC_MAX_KFUNCS; i++) {
		bool use = fentry && kernel && i < env.nkfuncs;
		struct bpf_program *a = kfn_prog(skel, i, false), *b = kfn_prog(skel, i, true);
		if (use && (bpf_program__set_attach_target(a, 0, env.kfuncs[i]) ||
		            bpf_program__set_attach_target(b, 0, env.kfuncs[i]))) {
			size_t n = strlen(pr->nobtf);
			snprintf(pr->nobtf + n, sizeof(pr->nobtf) - n, "%s%s", n ? ", " : "",
			         env.kfuncs[i]);
			use = false;
		}
		pr->kfentry[i] = use;
		pr->fentry_targets += use;
		bpf_program__set_autoload(a, use);
		bpf_program__set_autoload(b, use);
	}
	bpf_program__set_autoload(skel->progs.kprobe_entry, kernel && !fentry);
	bpf_program__set_autoload(skel->progs.kprobe_return, kernel && !fentry);
	return skel;
}

/* Opens and loads, falling back from fentry to kprobes for the kernel layer. */
static struct cutcapture_bpf *
skel_load(struct probes *pr)
{
	bool kernel = (env.layers & CC_L_KERNEL) && env.nkfuncs;
	struct cutcapture_bpf *skel = skel_open(pr, kernel);
	if (!skel)
		return NULL;
	int e = kernel && !pr->fentry_targets ? -ENOENT : cutcapture_bpf__load(skel);
	if (e && kernel) {
		if (!pr->fentry_targets)
			snprintf(pr->kernel_why, sizeof(pr->kernel_why), "fentry: no BTF for %s",
			         pr->nobtf);
		else
			snprintf(pr->kernel_why, sizeof(pr->kernel_why), "fentry refused (%s)",
			         strerror(-e));
		cutcapture_bpf__destroy(skel);
		skel = skel_open(pr, false);
		if (!skel)
			return NULL;
		e = cutcapture_bpf__load(skel);
	} else if (kernel) {
		pr->fentry = true;
	}
	if (e) {
		cutcapture_bpf__destroy(skel);
		errno = -e;
		return NULL;
	}
	return skel;
}

static int
attach_api(struct cutcapture_bpf *skel, struct probes *pr)
{
	uint64_t t0 = now_ns();
	__u64 *cookies = calloc((size_t)pr->nfuncs, sizeof(*cookies));
	for (int i = 0; i < pr->nfuncs; i++)
		cookies[i] = (__u64)i;
	if (pr->multi) {
		/* Returns first and entries last, so that no entry goes without its return. */
		LIBBPF_OPTS(bpf_uprobe_multi_opts, o, .offsets = pr->offsets, .cookies = cookies,
		            .cnt = (size_t)pr->nfuncs, .retprobe = true);
		skel->links.api_return = bpf_program__attach_uprobe_multi(
		    skel->progs.api_return, -1, pr->libcuda_real, NULL, &o);
		o.retprobe = false;
		if (skel->links.api_return)
			skel->links.api_entry = bpf_program__attach_uprobe_multi(
			    skel->progs.api_entry, -1, pr->libcuda_real, NULL, &o);
		if (!skel->links.api_entry) {
			int e = errno;
			bpf_link__destroy(skel->links.api_return);
			skel->links.api_return = NULL;
			free(cookies);
			layer_off(0, "uprobe_multi on %s: %s", pr->libcuda_real, strerror(e));
			return -1;
		}
		pr->attached = pr->nfuncs;
	} else {
		pr->single = calloc((size_t)pr->nfuncs * 2, sizeof(*pr->single));
		for (int i = 0; i < pr->nfuncs; i++) {
			LIBBPF_OPTS(bpf_uprobe_opts, o, .bpf_cookie = (__u64)i, .retprobe = true);
			size_t off = pr->offsets[i];
			struct bpf_link *r = bpf_program__attach_uprobe_opts(
			    skel->progs.api_return, -1, pr->libcuda_real, off, &o);
			o.retprobe = false;
			struct bpf_link *e =
			    r ? bpf_program__attach_uprobe_opts(skel->progs.api_entry, -1,
			                                        pr->libcuda_real, off, &o)
			      : NULL;
			if (!e) {
				bpf_link__destroy(r);
				pr->failed++;
				continue;
			}
			pr->single[2 * i] = e;
			pr->single[2 * i + 1] = r;
			pr->attached++;
		}
		if (!pr->attached) {
			free(cookies);
			layer_off(0, "no uprobe could be attached to %s", pr->libcuda_real);
			return -1;
		}
		if (pr->failed)
			warnx("%d of %d functions could not be probed", pr->failed, pr->nfuncs);
	}
	free(cookies);
	pr->attach_ns = now_ns() - t0;
	return 0;
}

static void
detach_api(struct cutcapture_bpf *skel, struct probes *pr)
{
	uint64_t t0 = now_ns();
	bpf_link__destroy(skel->links.api_entry);
	skel->links.api_entry = NULL;
	bpf_link__destroy(skel->links.api_return);
	skel->links.api_return = NULL;
	for (int i = 0; pr->single && i < 2 * pr->nfuncs; i++) {
		bpf_link__destroy(pr->single[i]);
		pr->single[i] = NULL;
	}
	pr->detach_ns = now_ns() - t0;
}

static void
attach_kernel(struct cutcapture_bpf *skel, struct probes *pr)
{
	int ok = 0;
	char why[160] = "";
	for (int i = 0; i < env.nkfuncs; i++) {
		struct bpf_link **l = &pr->klinks[2 * i];
		if (pr->fentry && !pr->kfentry[i]) {
			snprintf(why, sizeof(why), "fentry: no BTF for %s", env.kfuncs[i]);
			continue;
		} else if (pr->fentry) {
			l[0] = bpf_program__attach(kfn_prog(skel, i, false));
			l[1] = l[0] ? bpf_program__attach(kfn_prog(skel, i, true)) : NULL;
		} else {
			LIBBPF_OPTS(bpf_kprobe_opts, o, .bpf_cookie = (__u64)i);
			l[0] = bpf_program__attach_kprobe_opts(skel->progs.kprobe_entry,
			                                       env.kfuncs[i], &o);
			o.retprobe = true;
			l[1] = l[0] ? bpf_program__attach_kprobe_opts(skel->progs.kprobe_return,
			                                              env.kfuncs[i], &o)
			            : NULL;
		}
		if (l[1]) {
			ok++;
			continue;
		}
		int e = errno;
		if (pr->fentry)
			snprintf(why, sizeof(why), "fentry on %s: %s", env.kfuncs[i], strerror(e));
		else
			snprintf(why, sizeof(why), "kprobes: %s",
			         access("/sys/bus/event_source/devices/kprobe", F_OK) != 0
			             ? "not supported by this kernel"
			             : strerror(e));
		bpf_link__destroy(l[0]);
		l[0] = NULL;
	}
	if (!ok)
		layer_off(4, "%s%s%s", pr->kernel_why, pr->kernel_why[0] && why[0] ? "; " : "",
		          why);
	else if (why[0])
		warnx("kernel layer: %s", why);
}

/* ---- the traced processes ---- */

static void
trace_pid(struct cutcapture_bpf *skel, pid_t pid)
{
	__u32 key = (__u32)pid;
	__u8 one = 1;
	bpf_map__update_elem(skel->maps.traced, &key, sizeof(key), &one, sizeof(one), BPF_ANY);
}

static char *
read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t cap = 0, n = 0;
	if (!f)
		return NULL;
	for (;;) {
		if (n + 1024 > cap) {
			cap = cap ? cap * 2 : 4096;
			buf = realloc(buf, cap);
		}
		size_t r = fread(buf + n, 1, cap - n - 1, f);
		n += r;
		if (r == 0)
			break;
	}
	fclose(f);
	buf[n] = 0;
	if (len)
		*len = n;
	return buf;
}

/* Parent of a process, or -1. */
static pid_t
proc_ppid(pid_t pid, char *comm, size_t commlen)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	char *s = read_file(path, NULL);
	pid_t ppid = -1;
	char *close_paren = s ? strrchr(s, ')') : NULL;
	if (close_paren) {
		char *open_paren = strchr(s, '(');
		if (comm && open_paren && open_paren < close_paren)
			snprintf(comm, commlen, "%.*s", (int)(close_paren - open_paren - 1),
			         open_paren + 1);
		sscanf(close_paren + 2, "%*c %d", &ppid);
	}
	free(s);
	return ppid;
}

/* Follows a running process and every descendant it has now; later ones come through the
 * fork tracepoint. Queues a process record for each. */
static void
trace_tree(struct cutcapture_bpf *skel, pid_t root, uint64_t ts)
{
	pid_t *todo = malloc(sizeof(pid_t)), queue_len = 1;
	todo[0] = root;
	for (pid_t qi = 0; qi < queue_len; qi++) {
		pid_t pid = todo[qi];
		char comm[64] = "", path[64];
		pid_t ppid = proc_ppid(pid, comm, sizeof(comm));
		size_t n = 0;
		snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
		char *cmd = read_file(path, &n);
		for (size_t i = 0; cmd && i + 1 < n; i++)
			if (!cmd[i])
				cmd[i] = ' ';
		trace_pid(skel, pid);
		rec_process(ts, (uint32_t)pid, ppid > 0 ? (uint32_t)ppid : 0, comm, cmd ? cmd : "");
		free(cmd);
		/* Its children: those of each of its threads. */
		snprintf(path, sizeof(path), "/proc/%d/task", pid);
		DIR *dir = opendir(path);
		struct dirent *d;
		while (dir && (d = readdir(dir))) {
			if (d->d_name[0] == '.')
				continue;
			char kpath[384];
			snprintf(kpath, sizeof(kpath), "/proc/%d/task/%s/children", pid, d->d_name);
			char *kids = read_file(kpath, NULL);
			for (char *p = kids, *end; p && *p; p = end) {
				long k = strtol(p, &end, 10);
				if (end == p)
					break;
				todo = realloc(todo, (size_t)(queue_len + 1) * sizeof(pid_t));
				todo[queue_len++] = (pid_t)k;
			}
			free(kids);
		}
		if (dir)
			closedir(dir);
	}
	free(todo);
}

/* Starts the command stopped before exec; go() lets it run. */
static pid_t
spawn(char **argv, int *go_fd, int *fail_fd, bool stdout_is_trace)
{
	int go[2], fail[2];
	if (pipe2(go, O_CLOEXEC) < 0 || pipe2(fail, O_CLOEXEC) < 0)
		err(CUT_EXIT_FATAL, "pipe");
	pid_t pid = fork();
	if (pid < 0)
		err(CUT_EXIT_FATAL, "fork");
	if (pid == 0) {
		char c;
		close(go[1]);
		close(fail[0]);
		signal(SIGPIPE, SIG_DFL);
		/* The trace owns standard output: the command's goes to standard error. */
		if (stdout_is_trace)
			dup2(STDERR_FILENO, STDOUT_FILENO);
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		execvp(argv[0], argv);
		int e = errno;
		if (write(fail[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(fail[1]);
	*go_fd = go[1];
	*fail_fd = fail[0];
	return pid;
}

/* ---- header and trailer ---- */

static char *
first_line(const char *path)
{
	char *s = read_file(path, NULL);
	if (s)
		s[strcspn(s, "\n")] = 0;
	return s;
}

static void
write_meta(uint64_t ts, const char *name, const char *args)
{
	struct cut_event ev;
	struct cut_buf line = {0};
	cut_event_init(&ev);
	ev.ts = (int64_t)ts;
	ev.pid = ev.tid = getpid();
	ev.layer = CUT_META;
	ev.name = name;
	ev.args = args;
	cut_event_format(&line, &ev);
	buf_addc(&line, '\n');
	rec_write_line(line.s, line.len);
	buf_free(&line);
}

static void
write_header(uint64_t ts, const struct probes *pr, pid_t root, char **cmd)
{
	struct cut_buf b = {0};
	struct utsname u;
	char host[256] = "";
	uname(&u);
	gethostname(host, sizeof(host) - 1);
	buf_addkv_int(&b, "schema", CUT_SCHEMA_VERSION);
	buf_addkv_str(&b, "tool", "cutcapture");
	buf_addkv_str(&b, "version", CUT_VERSION);
	buf_addkv_str(&b, "host", host);
	buf_addkv_str(&b, "kernel", u.release);
	char *drv = first_line("/sys/module/nvidia/version");
	if (drv)
		buf_addkv_str(&b, "driver", drv);
	char *ver = read_file("/proc/driver/nvidia/version", NULL);
	if (ver)
		buf_addkv_str(&b, "driver_flavour",
		              strstr(ver, "Open Kernel") ? "open" : "proprietary");
	free(drv);
	free(ver);
	if (pr->libcuda)
		buf_addkv_str(&b, "libcuda", pr->libcuda);
	buf_addkey(&b, "clock");
	uint64_t mono = now_ns(), real = clock_ns(CLOCK_REALTIME);
	buf_addc(&b, '{');
	buf_addkv_int(&b, "monotonic_ns", (int64_t)mono);
	buf_addkv_int(&b, "realtime_ns", (int64_t)real);
	buf_addc(&b, '}');
	buf_addkey(&b, "sorted");
	buf_adds(&b, "true");
	buf_addkey(&b, "layers");
	buf_addc(&b, '{');
	for (int i = 0; i < NLAYERS; i++) {
		char off[sizeof(off_why) + 8];
		snprintf(off, sizeof(off), "off: %s",
		         off_why[i][0] ? off_why[i] : "not asked for (-l)");
		buf_addkv_str(&b, layer_names[i], env.layers & (1u << i) ? "on" : off);
	}
	buf_addc(&b, '}');
	buf_addkey(&b, "cmd");
	buf_addc(&b, '[');
	for (int i = 0; cmd && cmd[i]; i++) {
		if (i)
			buf_addc(&b, ',');
		buf_addjstr(&b, cmd[i], strlen(cmd[i]));
	}
	buf_addc(&b, ']');
	buf_addkv_int(&b, "pid", root);
	buf_addkey(&b, "probes");
	buf_addc(&b, '{');
	buf_addkv_str(&b, "mode",
	              env.layers & CC_L_API ? (pr->multi ? "uprobe_multi" : "uprobe") : "none");
	buf_addkv_int(&b, "functions", pr->nfuncs);
	buf_addkv_int(&b, "attached", pr->attached);
	buf_addkv_int(&b, "failed", pr->failed);
	buf_addkv_int(&b, "attach_ns", (int64_t)pr->attach_ns);
	buf_addc(&b, '}');
	buf_addc(&b, '}');
	write_meta(ts, "header", b.s);
	buf_free(&b);
}

/* ---- the capture loop ---- */

struct loop {
	struct cutcapture_bpf *skel;
	struct ring_buffer *rb;
	uint64_t counters[CC_NCOUNTERS];
	uint64_t lost, unmatched;
	bool detaching; /* returns without entries are expected from now on */
	uint64_t start, last_scan, last_count, last_progress, last_events;
	bool progress_tty;
	int ncpu;
	struct cc_thread *vals;
	__u32 *keys;
};

static const char *const counter_layer[CC_NCOUNTERS] = {
    [CC_C_LOST_API] = "api",     [CC_C_LOST_IOCTL] = "ioctl",   [CC_C_LOST_IRQ] = "irq",
    [CC_C_LOST_SCHED] = "sched", [CC_C_LOST_KERNEL] = "kernel", [CC_C_LOST_META] = "meta",
    [CC_C_DEPTH] = "api",        [CC_C_NOTHREAD] = "api",
};

/* Reads the per-CPU counters; queues a lost record for each increase. */
static void
check_counters(struct loop *L, uint64_t now)
{
	__u64 *v = calloc((size_t)L->ncpu, sizeof(*v));
	for (__u32 i = 0; i < CC_NCOUNTERS; i++) {
		if (bpf_map__lookup_elem(L->skel->maps.counters, &i, sizeof(i), v,
		                         sizeof(*v) * (size_t)L->ncpu, 0))
			continue;
		uint64_t sum = 0;
		for (int c = 0; c < L->ncpu; c++)
			sum += v[c];
		uint64_t delta = sum - L->counters[i];
		L->counters[i] = sum;
		if (!delta)
			continue;
		if (i >= CC_C_BARE_CALLS)
			continue;
		if (i == CC_C_UNMATCHED) {
			if (!L->detaching)
				L->unmatched += delta;
			continue;
		}
		const char *why = i == CC_C_DEPTH ? "calls nested deeper than the probes follow"
		                  : i == CC_C_NOTHREAD ? "per-thread table full"
		                                       : "ring buffer full";
		rec_lost(now, counter_layer[i], delta, why);
		L->lost += delta;
	}
	free(v);
}

/* Calls fn for every thread the BPF side is following, in batches of the thread table. */
static void
each_thread(struct loop *L, void (*fn)(struct loop *, __u32, const struct cc_thread *, void *),
            void *arg)
{
	int fd = bpf_map__fd(L->skel->maps.threads);
	__u32 batch, *in = NULL;
	for (;;) {
		__u32 count = 256;
		LIBBPF_OPTS(bpf_map_batch_opts, o);
		int e = bpf_map_lookup_batch(fd, in, &batch, L->keys, L->vals, &count, &o);
		int saved = errno;
		for (__u32 i = 0; i < count; i++)
			fn(L, L->keys[i], &L->vals[i], arg);
		if (e) {
			if (saved != ENOENT)
				warnx("reading the thread table: %s", strerror(saved));
			return;
		}
		in = &batch;
	}
}

struct hold {
	uint64_t now, hold;
};

static void
thread_hold(struct loop *L, __u32 tid, const struct cc_thread *t, void *arg)
{
	struct hold *h = arg;
	(void)L;
	if (t->api_oldest && t->api_oldest < h->hold)
		h->hold = t->api_oldest;
	if (t->sys_ts && t->sys_ts < h->hold)
		h->hold = t->sys_ts;
	if (t->off_ts) {
		uint64_t o = rec_offcpu_hold(tid, t->off_ts, t->off_state, t->off_cpu, h->now,
		                             MAX_HOLD_NS, h->now - SLACK_NS);
		if (o < h->hold)
			h->hold = o;
	}
}

/* The time before which no record can still arrive: the oldest start among calls, system
 * calls and off-CPU periods in flight, and now less the slack. */
static uint64_t
scan_inflight(struct loop *L, uint64_t now)
{
	struct hold h = {now, now - SLACK_NS};
	each_thread(L, thread_hold, &h);
	uint64_t hold = h.hold;
	if (env.layers & CC_L_KERNEL) {
		struct {
			__u32 tid, idx;
		} key, next, *prev = NULL;
		__u64 ts;
		int kfd = bpf_map__fd(L->skel->maps.kstart);
		while (bpf_map_get_next_key(kfd, prev, &next) == 0) {
			if (bpf_map_lookup_elem(kfd, &next, &ts) == 0 && ts < hold)
				hold = ts;
			key = next;
			prev = &key;
		}
	}
	return hold;
}

/* Whether a traced process is still alive. Entries of processes gone without their exit
 * being seen (one that ended while trace_tree listed it) are dropped. */
static bool
tree_alive(struct cutcapture_bpf *skel)
{
	int fd = bpf_map__fd(skel->maps.traced);
	__u32 key, next, *prev = NULL;
	bool alive = false;
	while (!alive && bpf_map_get_next_key(fd, prev, &next) == 0) {
		if (kill((pid_t)next, 0) == 0 || errno == EPERM) {
			alive = true;
		} else {
			bpf_map_delete_elem(fd, &next);
			continue; /* next key from the start: this one is gone */
		}
		key = next;
		prev = &key;
	}
	return alive;
}

static void
thread_lost(struct loop *L, __u32 tid, const struct cc_thread *t, void *arg)
{
	(void)tid, (void)arg;
	uint64_t n = t->depth < CC_DEPTH ? t->depth : CC_DEPTH;
	if (!n)
		return;
	rec_lost(t->f[0].ts, "api", n, "calls in flight when the capture ended");
	L->lost += n;
}

/* Calls still in flight when the capture ends (the probes are gone, so they never
 * return): counted lost, one record per thread. */
static void
lost_in_flight(struct loop *L)
{
	each_thread(L, thread_lost, NULL);
}

static void
progress(struct loop *L, uint64_t now, bool last)
{
	if (env.quiet)
		return;
	uint64_t every = L->progress_tty ? NS : 10 * NS;
	if (!last && now - L->last_progress < every)
		return;
	struct rec_counts c = rec_counts();
	uint64_t events = c.events + rec_pending();
	uint64_t lost = L->lost + c.unfinished;
	double secs = (double)(now - L->start) / 1e9;
	double rate = (double)(events - L->last_events) /
	              ((double)(now - L->last_progress ? now - L->last_progress : 1) / 1e9);
	if (L->progress_tty || !last)
		fprintf(stderr, "%scutcapture: %.0f s, %llu events, %.0f/s, %llu lost%s",
		        L->progress_tty ? "\r" : "", secs, (unsigned long long)events, rate,
		        (unsigned long long)lost, L->progress_tty && !last ? "   " : "\n");
	L->last_progress = now;
	L->last_events = events;
}

static int
write_trailer(struct loop *L, const struct probes *pr, int status, bool exited)
{
	struct cut_buf b = {0};
	struct rec_counts c = rec_counts();
	buf_addkv_int(&b, "events", (int64_t)c.events);
	buf_addkv_int(&b, "lost", (int64_t)c.lost);
	static const enum cut_layer order[] = {CUT_API,   CUT_IOCTL,  CUT_IRQ,
	                                       CUT_SCHED, CUT_KERNEL, CUT_META};
	buf_addkey(&b, "layers");
	buf_addc(&b, '{');
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		buf_addkv_int(&b, cut_layer_name(order[i]), (int64_t)c.layer[order[i]]);
	buf_addc(&b, '}');
	buf_addkv_int(&b, "unmatched", (int64_t)L->unmatched);
	if (env.bare) {
		buf_addkv_int(&b, "bare_calls", (int64_t)L->counters[CC_C_BARE_CALLS]);
		buf_addkv_int(&b, "bare_ns", (int64_t)L->counters[CC_C_BARE_NS]);
	}
	buf_addkv_int(&b, "attach_ns", (int64_t)pr->attach_ns);
	buf_addkv_int(&b, "detach_ns", (int64_t)pr->detach_ns);
	buf_addkv_int(&b, "duration_ns", (int64_t)(now_ns() - L->start));
	if (exited)
		buf_addkv_int(&b, "status", status);
	buf_addc(&b, '}');
	write_meta(now_ns(), "trailer", b.s);
	buf_free(&b);
	return 0;
}

static int
parse_layers(const char *s)
{
	unsigned layers = 0;
	char *copy = strdup(s), *save = NULL;
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		int i;
		for (i = 0; i < NLAYERS; i++)
			if (strcmp(t, layer_names[i]) == 0)
				break;
		if (i == NLAYERS) {
			warnx("unknown layer %s (layers: api, ioctl, irq, sched, kernel)", t);
			free(copy);
			return -1;
		}
		layers |= 1u << i;
	}
	free(copy);
	return (int)layers;
}

enum {
	OPT_LIBCUDA = 256,
	OPT_SCHED_MIN,
	OPT_SINGLE,
	OPT_IOCTL_DEV,
	OPT_UVM_DEV,
	OPT_IRQ,
	OPT_BARE
};

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
	    {"libcuda", required_argument, NULL, OPT_LIBCUDA},
	    {"sched-min", required_argument, NULL, OPT_SCHED_MIN},
	    {"single-probes", no_argument, NULL, OPT_SINGLE},
	    {"ioctl-dev", required_argument, NULL, OPT_IOCTL_DEV},
	    {"uvm-dev", required_argument, NULL, OPT_UVM_DEV},
	    {"irq-prefix", required_argument, NULL, OPT_IRQ},
	    {"bench-bare", no_argument, NULL, OPT_BARE},
	    {NULL, 0, NULL, 0},
	};
	const char *extra_devs[8];
	unsigned extra_kinds[8];
	int nextra = 0, c, layers;
	char *end;
	while ((c = getopt_long(argc, argv, "+b:f:k:l:o:p:qv", longopts, NULL)) != -1) {
		switch (c) {
		case 'b':
			env.ring_mb = strtoul(optarg, &end, 10);
			/* The ring buffer is a power of two pages. */
			if (*end || env.ring_mb < 1 || env.ring_mb > 2048 ||
			    (env.ring_mb & (env.ring_mb - 1)))
				errx(CUT_EXIT_FATAL, "-b %s: a power of two from 1 to 2048",
				     optarg);
			break;
		case 'f':
			if (env.npatterns == 64)
				errx(CUT_EXIT_FATAL, "-f: at most 64 patterns");
			env.patterns[env.npatterns++] = optarg;
			break;
		case 'k':
			if (env.nkfuncs == CC_MAX_KFUNCS)
				errx(CUT_EXIT_FATAL, "-k: at most %d kernel functions",
				     CC_MAX_KFUNCS);
			env.kfuncs[env.nkfuncs++] = optarg;
			break;
		case 'l':
			if ((layers = parse_layers(optarg)) < 0)
				usage();
			env.layers = (unsigned)layers;
			break;
		case 'o': env.out_path = optarg; break;
		case 'p':
			env.pid = (pid_t)strtol(optarg, &end, 10);
			if (*end || env.pid <= 0)
				errx(CUT_EXIT_FATAL, "-p %s: not a process id", optarg);
			break;
		case 'q': env.quiet = true; break;
		case 'v': env.verbose = true; break;
		case OPT_LIBCUDA: env.libcuda = optarg; break;
		case OPT_SCHED_MIN:
			env.sched_min = strtoull(optarg, &end, 10);
			if (*end)
				errx(CUT_EXIT_FATAL, "--sched-min %s: not a number of ns", optarg);
			break;
		case OPT_SINGLE: env.single = true; break;
		case OPT_IOCTL_DEV:
		case OPT_UVM_DEV:
			if (nextra == 8)
				errx(CUT_EXIT_FATAL, "at most 8 extra devices");
			extra_devs[nextra] = optarg;
			extra_kinds[nextra++] = c == OPT_IOCTL_DEV ? CC_DEV_RM : CC_DEV_UVM;
			break;
		case OPT_BARE: env.bare = true; break;
		case OPT_IRQ:
			if (strlen(optarg) >= CC_COMMLEN)
				errx(CUT_EXIT_FATAL, "--irq-prefix: at most %d bytes",
				     CC_COMMLEN - 1);
			env.irq_prefix = optarg;
			break;
		default: usage();
		}
	}
	if ((optind < argc) == (env.pid != 0))
		usage();
	env.cmd = optind < argc ? argv + optind : NULL;

	int status = CUT_EXIT_FATAL, child_status = 0, go_fd = -1, fail_fd = -1, pidfd = -1;
	int out_fd = STDOUT_FILENO, out_err = 0;
	bool child_done = false, started = false;
	pid_t child = 0;
	struct probes pr = {0};
	struct loop L = {0};
	struct cutcapture_bpf *skel = NULL;
	char why[PATH_MAX + 128] = "";
	char **proc_cmd = NULL, *proc_text = NULL;

	if (geteuid() != 0)
		errx(CUT_EXIT_FATAL, "must be run as root (BPF programs and uprobes need it)");
	libbpf_set_print(libbpf_print);
	signal(SIGPIPE, SIG_IGN);

	if (env.out_path) {
		out_fd = open(env.out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
		if (out_fd < 0)
			err(CUT_EXIT_FATAL, "%s", env.out_path);
	}

	/* Which devices, which library, which functions. */
	rec_dev_scan();
	for (int i = 0; i < nextra; i++)
		if (rec_dev_add(extra_devs[i], extra_kinds[i]) < 0)
			err(CUT_EXIT_FATAL, "%s", extra_devs[i]);
	if (env.layers & CC_L_API) {
		if (env.libcuda) {
			pr.libcuda = strdup(env.libcuda);
		} else if (env.pid) {
			pr.libcuda = mapped_libcuda(env.pid);
			if (!pr.libcuda) {
				char *llp = proc_getenv(env.pid, "LD_LIBRARY_PATH");
				pr.libcuda = find_libcuda(llp);
				free(llp);
			}
		} else {
			pr.libcuda = find_libcuda(getenv("LD_LIBRARY_PATH"));
		}
		if (!pr.libcuda)
			layer_off(0, "libcuda.so.1 not found (give --libcuda)");
		else if (!realpath(pr.libcuda, pr.libcuda_real))
			layer_off(0, "%s: %s", pr.libcuda, strerror(errno));
		else if ((pr.nfuncs = list_functions(pr.libcuda_real, &pr.funcs, &pr.offsets, why,
		                                     sizeof(why))) < 0)
			layer_off(0, "%s", why);
		if (pr.nfuncs < 0)
			pr.nfuncs = 0;
		pr.multi = !env.single && have_uprobe_multi();
	}
	if (env.layers & CC_L_KERNEL) {
		if (!env.nkfuncs)
			default_kernel_functions();
		if (!env.nkfuncs)
			layer_off(4, "%s",
			          access("/sys/module/nvidia", F_OK) == 0
			              ? "no NVIDIA driver function found in kallsyms"
			              : "nvidia module not loaded");
	}
	rec_init(out_fd, (const char *const *)pr.funcs, (size_t)pr.nfuncs, env.kfuncs,
	         (size_t)env.nkfuncs);

	skel = skel_load(&pr);
	if (!skel) {
		warnx("cannot load the BPF programs: %s%s", strerror(errno),
		      errno == EPERM ? " (is BPF allowed here? see dmesg and "
		                       "kernel.unprivileged_bpf_disabled)"
		                     : "");
		goto cleanup;
	}

	/* The command waits, stopped before exec, until every probe is in place. */
	uint64_t start = now_ns();
	if (env.cmd) {
		child = spawn(env.cmd, &go_fd, &fail_fd, env.out_path == NULL);
		trace_pid(skel, child);
	} else {
		if (kill(env.pid, 0) < 0 && errno == ESRCH) {
			warnx("-p %d: no such process", env.pid);
			goto cleanup;
		}
		trace_tree(skel, env.pid, start);
		pidfd = (int)syscall(SYS_pidfd_open, env.pid, 0);
	}

	/* The process tree first: nothing the command forks may slip by. */
	struct bpf_program *always[] = {skel->progs.proc_fork, skel->progs.proc_exec,
	                                skel->progs.proc_exit};
	struct bpf_link **always_links[] = {&skel->links.proc_fork, &skel->links.proc_exec,
	                                    &skel->links.proc_exit};
	for (size_t i = 0; i < 3; i++) {
		if (!(*always_links[i] = bpf_program__attach(always[i]))) {
			warnx("cannot attach the process-tree tracepoints: %s", strerror(errno));
			goto cleanup;
		}
	}
	/* Which signals the command gets, so that one is never passed on twice. Without it
	 * a signal from kill(1) is passed on at once. */
	skel->links.sig_generate = bpf_program__attach(skel->progs.sig_generate);
	skel->bss->cmd_tgid = (__u32)child;
	if (env.layers & CC_L_API)
		attach_api(skel, &pr); /* on failure the layer is off, and says why */
	struct {
		int layer;
		struct bpf_program *a, *b;
		struct bpf_link **la, **lb;
		const char *what;
	} tps[] = {
	    {1, skel->progs.sys_enter, skel->progs.sys_exit, &skel->links.sys_enter,
	     &skel->links.sys_exit, "raw tracepoints sys_enter/sys_exit"},
	    {2, skel->progs.irq_entry, skel->progs.irq_exit, &skel->links.irq_entry,
	     &skel->links.irq_exit, "raw tracepoints irq_handler_entry/exit"},
	    {3, skel->progs.sched_switch, skel->progs.sched_wakeup, &skel->links.sched_switch,
	     &skel->links.sched_wakeup, "raw tracepoints sched_switch/sched_wakeup"},
	};
	for (size_t i = 0; i < sizeof(tps) / sizeof(tps[0]); i++) {
		if (!(env.layers & (1u << tps[i].layer)))
			continue;
		*tps[i].la = bpf_program__attach(tps[i].a);
		*tps[i].lb = *tps[i].la ? bpf_program__attach(tps[i].b) : NULL;
		if (!*tps[i].lb)
			layer_off(tps[i].layer, "%s: %s", tps[i].what, strerror(errno));
	}
	if ((env.layers & CC_L_KERNEL) && env.nkfuncs)
		attach_kernel(skel, &pr);

	L.skel = skel;
	L.ncpu = libbpf_num_possible_cpus();
	L.vals = calloc(256, sizeof(*L.vals));
	L.keys = calloc(256, sizeof(*L.keys));
	L.rb = ring_buffer__new(bpf_map__fd(skel->maps.events), rec_ring, NULL, NULL);
	if (!L.rb || !L.vals || !L.keys) {
		warnx("cannot read the ring buffer: %s", strerror(errno));
		goto cleanup;
	}
	if (env.pid) {
		size_t n = 0;
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/cmdline", env.pid);
		proc_text = read_file(path, &n);
		int argc2 = 0;
		proc_cmd = calloc(n + 2, sizeof(char *));
		for (size_t i = 0; proc_text && i < n; i += strlen(proc_text + i) + 1)
			proc_cmd[argc2++] = proc_text + i;
		write_header(start, &pr, env.pid, proc_cmd);
	} else {
		write_header(start, &pr, child, env.cmd);
	}

	struct sigaction sa = {.sa_sigaction = on_signal, .sa_flags = SA_SIGINFO};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	if (child) {
		int e;
		if (write(go_fd, "g", 1) != 1)
			warn("starting %s", env.cmd[0]);
		started = true;
		close(go_fd);
		go_fd = -1;
		if (read(fail_fd, &e, sizeof(e)) == sizeof(e))
			warnx("%s: %s", env.cmd[0], strerror(e));
		close(fail_fd);
		fail_fd = -1;
	}
	L.start = L.last_scan = L.last_count = L.last_progress = now_ns();
	L.progress_tty = isatty(STDERR_FILENO);

	int handled = 0, forward = 0;
	uint64_t forward_at = 0, forward_since = 0, last_flush = L.start;
	bool root_done = false, untraced = false;
	for (;;) {
		if (!untraced) {
			int n = ring_buffer__poll(L.rb, 50);
			if (n < 0 && n != -EINTR) {
				warnx("ring buffer: %s", strerror(-n));
				break;
			}
		} else {
			poll(NULL, 0, 50);
		}
		uint64_t now = now_ns();
		if (child && !child_done) {
			pid_t w = waitpid(child, &child_status, WNOHANG);
			if (w == child)
				child_done = root_done = true;
		}
		if (env.pid && !root_done) {
			struct pollfd p = {pidfd, POLLIN, 0};
			root_done = pidfd >= 0 ? poll(&p, 1, 0) == 1 : kill(env.pid, 0) < 0;
		}
		/* The capture ends once the command (or the -p process) and every process of its
		 * tree have exited: children left behind by a parent that exited first are
		 * followed to their end. Untraced, only the command is waited for. */
		if (root_done && (untraced || !tree_alive(skel)))
			break;
		if (stop_count > handled) {
			handled = stop_count;
			/* First signal: the command ends as the signal says (passed on when it
			 * did not reach the command too); a second, one with -p or one once the
			 * command has exited stops now. */
			if (!child || child_done || handled > 1)
				break;
			if (stop_by_user) {
				forward = stop_sig;
				forward_since = stop_ts;
				forward_at =
				    skel->links.sig_generate ? stop_ts + FORWARD_WAIT_NS : 0;
			}
		}
		if (forward && child_done) {
			forward = 0; /* reaped: its pid is no longer its own */
		} else if (forward) {
			uint64_t got = skel->bss->cmd_sig_ts[forward & 31];
			if (skel->links.sig_generate && got &&
			    got + FORWARD_WAIT_NS >= forward_since) {
				forward = 0; /* the command got it itself */
			} else if (now >= forward_at) {
				kill(child, forward);
				forward = 0;
			}
		}
		if (untraced)
			continue;
		if (now - L.last_count >= 5 * SCAN_NS) {
			check_counters(&L, now);
			L.last_count = now;
		}
		if (now - L.last_scan >= SCAN_NS) {
			uint64_t hold = scan_inflight(&L, now);
			ring_buffer__consume(L.rb);
			rec_flush(hold);
			L.last_scan = now;
			if (now - last_flush >= FLUSH_NS) {
				rec_out_flush();
				last_flush = now;
			}
		}
		if ((out_err = rec_out_error())) {
			/* Nowhere to write: stop tracing at once and let the command run on. */
			if (out_err == EPIPE)
				warnx("the trace's reader has gone (%s): tracing stopped%s",
				      strerror(out_err),
				      child && !child_done ? ", waiting for the command, untraced"
				                           : "");
			else
				warnx("writing the trace to %s: %s: tracing stopped%s",
				      env.out_path ? env.out_path : "standard output",
				      strerror(out_err),
				      child && !child_done ? ", waiting for the command, untraced"
				                           : "");
			detach_api(skel, &pr);
			for (int i = 0; i < 2 * CC_MAX_KFUNCS; i++) {
				bpf_link__destroy(pr.klinks[i]);
				pr.klinks[i] = NULL;
			}
			struct bpf_link *keep = skel->links.sig_generate;
			skel->links.sig_generate = NULL;
			cutcapture_bpf__detach(skel);
			skel->links.sig_generate = keep;
			untraced = true;
			if (!child)
				break;
		}
		progress(&L, now, false);
	}

	if (!untraced) {
		/* Detach (the API probes timed), then take everything left. Entries go first,
		 * so returns of calls made meanwhile find no entry: not counted as unmatched. */
		check_counters(&L, now_ns());
		L.detaching = true;
		if (env.layers & CC_L_API)
			detach_api(skel, &pr);
		for (size_t i = 0; i < 3; i++) {
			bpf_link__destroy(*always_links[i]);
			*always_links[i] = NULL;
		}
		ring_buffer__consume(L.rb);
		check_counters(&L, now_ns());
		lost_in_flight(&L);
		rec_flush(UINT64_MAX);
	}
	if (child && !child_done && stop_count == 0 &&
	    waitpid(child, &child_status, WNOHANG) == child)
		child_done = true;
	if (child_done)
		status = WIFEXITED(child_status) ? WEXITSTATUS(child_status)
		                                 : 128 + WTERMSIG(child_status);
	else if (child)
		status = 128 + (stop_sig ? stop_sig : SIGTERM);
	else
		status = CUT_EXIT_OK;
	if (!untraced) {
		write_trailer(&L, &pr, status, child_done);
		progress(&L, now_ns(), true);
		struct rec_counts c = rec_counts();
		if (c.lost)
			warnx("%llu events lost (see the lost records)",
			      (unsigned long long)c.lost);
	}
	bool cut = false;
	int e = rec_out_close(&cut);
	if (e && !untraced)
		warnx("writing the trace to %s: %s: the trace is incomplete%s",
		      env.out_path ? env.out_path : "standard output", strerror(e),
		      cut ? ", cut back to its last whole line" : "");
	else if (e && cut)
		warnx("%s: cut back to its last whole line (no trailer)",
		      env.out_path ? env.out_path : "standard output");
	if (e && child && child_done && status != CUT_EXIT_OK)
		warnx("the command exited with status %d", status);
	if (e)
		status = e == EPIPE ? 128 + SIGPIPE : CUT_EXIT_FATAL;

cleanup:
	ring_buffer__free(L.rb);
	free(L.vals);
	free(L.keys);
	for (int i = 0; pr.single && i < 2 * pr.nfuncs; i++)
		bpf_link__destroy(pr.single[i]);
	for (int i = 0; i < 2 * CC_MAX_KFUNCS; i++)
		bpf_link__destroy(pr.klinks[i]);
	cutcapture_bpf__destroy(skel);
	if (go_fd >= 0)
		close(go_fd);
	if (fail_fd >= 0)
		close(fail_fd);
	if (pidfd >= 0)
		close(pidfd);
	if (child && !started) { /* never ran: it waits before exec */
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	for (int i = 0; i < pr.nfuncs; i++)
		free(pr.funcs[i]);
	free(pr.funcs);
	free(pr.offsets);
	free(pr.single);
	free(pr.libcuda);
	free(proc_cmd);
	free(proc_text);
	rec_free();
	if (env.out_path && out_fd >= 0 && close(out_fd) != 0 && status != CUT_EXIT_FATAL) {
		warn("%s", env.out_path);
		status = CUT_EXIT_FATAL;
	}
	return status;
}
