/* layers_kernel.c: the kernel layer: NVIDIA driver functions, timed through fentry/fexit where
 * the kernel allows (BTF of the function, and no refusal at load), else through kprobes. */
#include <err.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "layers_impl.h"

#include "cutcapture.skel.h"

/* The kernel layer: its functions, through fentry/fexit where the kernel allows, else kprobes. */
static struct {
	const char *funcs[CC_MAX_KFUNCS];
	int n;
	bool fentry;                    /* loaded as fentry/fexit */
	bool use_fentry[CC_MAX_KFUNCS]; /* function i has fentry programs loaded */
	int fentry_targets;
	char nobtf[160]; /* functions fentry cannot find in BTF */
	char why[352];   /* why fentry is not used */
	struct bpf_link *links[2 * CC_MAX_KFUNCS];
} K;

/* The kernel layer by default: NVIDIA driver functions (FACTS.md lists them in kallsyms). */
static const char *const default_kfuncs[] = {
    "rm_ioctl",        "nvidia_isr",
    "nvidia_isr_msix", "nvidia_isr_kthread_bh",
    "uvm_ioctl",       "uvm_va_space_cpu_fault",
    "os_alloc_mem",    "nv_alloc_pages",
};

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
	for (size_t i = 0; i < sizeof(seen) && K.n < CC_MAX_KFUNCS; i++)
		if (seen[i])
			K.funcs[K.n++] = default_kfuncs[i];
}

void
kernel_probe(const struct layer *l)
{
	for (int i = 0; i < layers_opts->nkfuncs; i++)
		K.funcs[K.n++] = layers_opts->kfuncs[i];
	if (!layer_is_on(l))
		return;
	if (!K.n)
		default_kernel_functions();
	if (!K.n)
		layer_off(l, "%s",
		          access("/sys/module/nvidia", F_OK) == 0
		              ? "no NVIDIA driver function found in kallsyms"
		              : "nvidia module not loaded");
}

static struct bpf_program *
kfn_prog(struct cutcapture_bpf *skel, int i, bool exit_prog)
{
	char name[32];
	snprintf(name, sizeof(name), "kfn_%s%d", exit_prog ? "exit" : "entry", i);
	return layer_prog(skel, name);
}

/* fentry/fexit programs for each function (K.fentry), else the kprobe pair. fentry needs
 * the function in the kernel's or a module's BTF: without it the function is left to kprobes. */
void
kernel_open(const struct layer *l, struct cutcapture_bpf *skel)
{
	bool kernel = layer_is_on(l) && K.n;
	uint32_t isr = 0;
	for (int i = 0; i < K.n; i++)
		if (strstr(K.funcs[i], "isr"))
			isr |= 1u << i;
	skel->rodata->targ_kisr = isr;
	K.fentry_targets = 0;
	K.nobtf[0] = 0;
	for (int i = 0; i < CC_MAX_KFUNCS; i++) {
		bool use = K.fentry && kernel && i < K.n;
		struct bpf_program *a = kfn_prog(skel, i, false), *b = kfn_prog(skel, i, true);
		if (use && (bpf_program__set_attach_target(a, 0, K.funcs[i]) ||
		            bpf_program__set_attach_target(b, 0, K.funcs[i]))) {
			size_t n = strlen(K.nobtf);
			snprintf(K.nobtf + n, sizeof(K.nobtf) - n, "%s%s", n ? ", " : "",
			         K.funcs[i]);
			use = false;
		}
		K.use_fentry[i] = use;
		K.fentry_targets += use;
		bpf_program__set_autoload(a, use);
		bpf_program__set_autoload(b, use);
	}
	bpf_program__set_autoload(skel->progs.kprobe_entry, kernel && !K.fentry);
	bpf_program__set_autoload(skel->progs.kprobe_return, kernel && !K.fentry);
}

int
kernel_attach(const struct layer *l, struct cutcapture_bpf *skel)
{
	int ok = 0;
	char why[160] = "";
	for (int i = 0; i < K.n; i++) {
		struct bpf_link **k = &K.links[2 * i];
		if (K.fentry && !K.use_fentry[i]) {
			snprintf(why, sizeof(why), "fentry: no BTF for %s", K.funcs[i]);
			continue;
		} else if (K.fentry) {
			k[0] = bpf_program__attach(kfn_prog(skel, i, false));
			k[1] = k[0] ? bpf_program__attach(kfn_prog(skel, i, true)) : NULL;
		} else {
			LIBBPF_OPTS(bpf_kprobe_opts, o, .bpf_cookie = (__u64)i);
			k[0] = bpf_program__attach_kprobe_opts(skel->progs.kprobe_entry, K.funcs[i],
			                                       &o);
			o.retprobe = true;
			k[1] = k[0] ? bpf_program__attach_kprobe_opts(skel->progs.kprobe_return,
			                                              K.funcs[i], &o)
			            : NULL;
		}
		if (k[1]) {
			ok++;
			continue;
		}
		int e = errno;
		if (K.fentry)
			snprintf(why, sizeof(why), "fentry on %s: %s", K.funcs[i], strerror(e));
		else
			snprintf(why, sizeof(why), "kprobes: %s",
			         access("/sys/bus/event_source/devices/kprobe", F_OK) != 0
			             ? "not supported by this kernel"
			             : strerror(e));
		bpf_link__destroy(k[0]);
		k[0] = NULL;
	}
	if (!ok) {
		layer_off(l, "%s%s%s", K.why, K.why[0] && why[0] ? "; " : "", why);
		return -1;
	}
	if (why[0])
		warnx("kernel layer: %s", why);
	return 0;
}

void
kernel_detach(const struct layer *l)
{
	(void)l;
	for (int i = 0; i < 2 * CC_MAX_KFUNCS; i++) {
		bpf_link__destroy(K.links[i]);
		K.links[i] = NULL;
	}
}

const char *const *
layers_kernel_functions(size_t *n)
{
	*n = (size_t)K.n;
	return K.funcs;
}

void
kernel_fentry_begin(void)
{
	K.fentry = layers_on(CC_L_KERNEL) && K.n;
}

bool
kernel_fentry_unusable(void)
{
	return K.fentry && !K.fentry_targets;
}

bool
kernel_fentry_failed(int e)
{
	if (!K.fentry)
		return false;
	if (!K.fentry_targets)
		snprintf(K.why, sizeof(K.why), "fentry: no BTF for %s", K.nobtf);
	else
		snprintf(K.why, sizeof(K.why), "fentry refused (%s)", strerror(-e));
	K.fentry = false;
	return true;
}
