/* cutcapture: eBPF capture of a CUDA program's driver API calls, NVIDIA ioctls, interrupts
 * and scheduling, written as cut-events(5) JSON lines sorted by time. The loader: options,
 * then the phases of main; each phase is a module (see HACKING.md, Layout). */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "buf.h"
#include "decode.h"
#include "drain.h"
#include "cut.h"
#include "event.h"
#include "exe.h"
#include "hooklib.h"
#include "layers.h"
#include "meta.h"
#include "names.h"
#include "output.h"
#include "preload.h"
#include "target.h"

#include "cutcapture.skel.h"

static struct env {
	struct layer_opts lo;
	struct preload_opts po;
	const char *out_path;
	char **cmd;
	const char *patterns[64];
	bool quiet, verbose;
	bool hook_api;           /* --hook-api: the library for api and runtime (the default) */
	bool uprobes;            /* --uprobes */
	unsigned calls;          /* CC_L_API, CC_L_RUNTIME asked for */
	char why_file[PATH_MAX]; /* the file whose loader ignores the preload */
} env = {
    .lo = {.layers = CC_L_API | CC_L_IOCTL | CC_L_IRQ | CC_L_SCHED | CC_L_KERNEL | CC_L_RUNTIME,
           .quiet = CC_L_RUNTIME,
           .ring_mb = 64,
           .irq_prefix = "nvidia"},
    .po = {.layers = CUT_HOOK_ONLY}};

static void
usage(void)
{
	fprintf(stderr, "usage: cutcapture [-qv] [-b MiB] [-f pattern] [-k function] [-l layers]\n"
	                "                  [-o file] [--hook path] [--hook-api] [--libcuda path]\n"
	                "                  [--libcudart path] [--sched-min ns] [--single-probes]\n"
	                "                  [--uprobes] -p pid | [--] command [arg ...]\n");
	exit(CUT_EXIT_FATAL);
}

static const struct cut_opt_help help[] = {
    {"-b MiB", "ring buffer size, a power of two (64)"},
    {"-f pattern", "probe only the driver functions matching pattern (uprobes)"},
    {"-k function", "a kernel function for the kernel layer (up to 8)"},
    {"-l layers", "layers to record: api, ioctl, irq, sched, kernel, runtime, gpu, nvtx (all)"},
    {"-o file", "write the trace to file (.gz, .zst compressed)"},
    {"-p pid", "attach to a running process and its descendants (uprobes)"},
    {"-q", "no progress line"},
    {"-v", "show libbpf's messages"},
    {"--hook path", "the libcuthook.so to preload"},
    {"--hook-api", "api and runtime from the preloaded library (the default)"},
    {"--libcuda path", "probe this libcuda (uprobes)"},
    {"--libcudart path", "probe this libcudart (uprobes); asks for the runtime layer"},
    {"--sched-min ns", "leave out off-CPU periods shorter than ns"},
    {"--single-probes", "one uprobe per function, not uprobe_multi links"},
    {"--uprobes", "api and runtime from uprobes, not the preloaded library"},
    {"--ioctl-dev path", "treat the device file path as /dev/nvidiactl (tests)"},
    {"--uvm-dev path", "treat path as /dev/nvidia-uvm (tests)"},
    {"--irq-prefix name", "record the interrupt handlers named name... (tests)"},
    {"--bench-bare", "API probes only count calls (benchmarks; uprobes)"},
    {NULL, NULL},
};

static uint64_t
clock_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* libbpf's messages only with -v: what fails is reported once, in our words. */
static int
libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	return env.verbose ? vfprintf(stderr, fmt, ap) : 0;
}

enum {
	OPT_LIBCUDA = 256,
	OPT_LIBCUDART,
	OPT_SCHED_MIN,
	OPT_SINGLE,
	OPT_IOCTL_DEV,
	OPT_UVM_DEV,
	OPT_IRQ,
	OPT_BARE,
	OPT_HOOK,
	OPT_HOOK_API,
	OPT_UPROBES
};

static void
parse_args(int argc, char *argv[])
{
	static const struct option longopts[] = {
	    {"libcuda", required_argument, NULL, OPT_LIBCUDA},
	    {"libcudart", required_argument, NULL, OPT_LIBCUDART},
	    {"sched-min", required_argument, NULL, OPT_SCHED_MIN},
	    {"single-probes", no_argument, NULL, OPT_SINGLE},
	    {"ioctl-dev", required_argument, NULL, OPT_IOCTL_DEV},
	    {"uvm-dev", required_argument, NULL, OPT_UVM_DEV},
	    {"irq-prefix", required_argument, NULL, OPT_IRQ},
	    {"bench-bare", no_argument, NULL, OPT_BARE},
	    {"hook", required_argument, NULL, OPT_HOOK},
	    {"hook-api", no_argument, NULL, OPT_HOOK_API},
	    {"uprobes", no_argument, NULL, OPT_UPROBES},
	    {NULL, 0, NULL, 0},
	};
	struct layer_opts *lo = &env.lo;
	int c, layers;
	char *end;
	while ((c = getopt_long(argc, argv, "+b:f:k:l:o:p:qv", longopts, NULL)) != -1) {
		switch (c) {
		case 'b':
			lo->ring_mb = strtoul(optarg, &end, 10);
			/* The ring buffer is a power of two pages. */
			if (*end || lo->ring_mb < 1 || lo->ring_mb > 2048 ||
			    (lo->ring_mb & (lo->ring_mb - 1)))
				errx(CUT_EXIT_FATAL, "-b %s: a power of two from 1 to 2048",
				     optarg);
			break;
		case 'f':
			if (lo->npatterns == 64)
				errx(CUT_EXIT_FATAL, "-f: at most 64 patterns");
			env.patterns[lo->npatterns++] = optarg;
			break;
		case 'k':
			if (lo->nkfuncs == CC_MAX_KFUNCS)
				errx(CUT_EXIT_FATAL, "-k: at most %d kernel functions",
				     CC_MAX_KFUNCS);
			lo->kfuncs[lo->nkfuncs++] = optarg;
			break;
		case 'l':
			if ((layers = layers_parse(optarg)) < 0)
				usage();
			lo->layers = (unsigned)layers;
			lo->quiet = 0;
			env.po.layers = cut_hook_layers_in(optarg) & CUT_HOOK_ONLY;
			break;
		case 'o': env.out_path = optarg; break;
		case 'p':
			lo->pid = (pid_t)strtol(optarg, &end, 10);
			if (*end || lo->pid <= 0)
				errx(CUT_EXIT_FATAL, "-p %s: not a process id", optarg);
			break;
		case 'q': env.quiet = true; break;
		case 'v': env.verbose = true; break;
		case OPT_LIBCUDA: lo->libcuda = optarg; break;
		case OPT_LIBCUDART: lo->libcudart = optarg; break;
		case OPT_SCHED_MIN:
			lo->sched_min = strtoull(optarg, &end, 10);
			if (*end)
				errx(CUT_EXIT_FATAL, "--sched-min %s: not a number of ns", optarg);
			break;
		case OPT_SINGLE: lo->single = true; break;
		case OPT_IOCTL_DEV:
		case OPT_UVM_DEV:
			if (lo->ndevs == 8)
				errx(CUT_EXIT_FATAL, "at most 8 extra devices");
			lo->devs[lo->ndevs] = optarg;
			lo->dev_kinds[lo->ndevs++] = c == OPT_IOCTL_DEV ? CC_DEV_RM : CC_DEV_UVM;
			break;
		case OPT_BARE: lo->bare = true; break;
		case OPT_HOOK: env.po.lib = optarg; break;
		case OPT_HOOK_API: env.hook_api = true; break;
		case OPT_UPROBES: env.uprobes = true; break;
		case OPT_IRQ:
			if (strlen(optarg) >= CC_COMMLEN)
				errx(CUT_EXIT_FATAL, "--irq-prefix: at most %d bytes",
				     CC_COMMLEN - 1);
			lo->irq_prefix = optarg;
			break;
		default: usage();
		}
	}
	if ((optind < argc) == (lo->pid != 0))
		usage();
	if (lo->libcudart) { /* naming the runtime asks for its layer */
		lo->layers |= CC_L_RUNTIME;
		lo->quiet &= ~(unsigned)CC_L_RUNTIME;
	}
	if (env.hook_api && env.uprobes)
		errx(CUT_EXIT_FATAL, "--hook-api and --uprobes: one or the other");
	if (env.hook_api && lo->pid)
		errx(CUT_EXIT_FATAL, "--hook-api: needs a command cutcapture starts, not -p");
	if (env.hook_api && (lo->npatterns || lo->bare))
		errx(CUT_EXIT_FATAL, "%s: chooses what the uprobes do: not with --hook-api",
		     lo->npatterns ? "-f" : "--bench-bare");
	env.cmd = optind < argc ? argv + optind : NULL;
	lo->patterns = env.patterns;
}

/* Where the uprobes take the runtime layer and no --libcudart names a library: a program with
 * libcudart linked in (the command's file, or -p's process's) is probed itself. */
static void
runtime_inside_program(struct layer_opts *lo)
{
	static char exe[PATH_MAX];
	if (env.cmd && !env.why_file[0])
		exe_preload_check(env.cmd, env.why_file, sizeof(env.why_file));
	if (env.cmd)
		snprintf(exe, sizeof(exe), "%s", env.why_file);
	else {
		char link[64];
		snprintf(link, sizeof(link), "/proc/%d/exe", (int)lo->pid);
		if (!realpath(link, exe))
			return;
	}
	if (exe_runtime_inside(exe))
		lo->libcudart = exe;
}

/* Whether the api and runtime layers come from the library cutcapture preloads (the default:
 * its wrappers cost a tenth of a uprobe pair) or from uprobes, and why: -p (nothing can be
 * preloaded into a running process), asked (--uprobes; -f and --bench-bare choose what the
 * probes do), or a command whose loader ignores the preload or whose driver is linked in
 * (exe.h). Then the library is not preloaded at all (its gpu and nvtx layers are off, saying
 * why), so that no call is recorded twice: by the uprobes, which probe every function, and by
 * the library in a child that loads it; a program with the driver linked in is probed itself
 * unless --libcuda names a library. A program with the runtime linked in (nvcc's default) has
 * its runtime layer alone from uprobes on it, the library recording the rest. */
static void
choose_call_path(void)
{
	struct layer_opts *lo = &env.lo;
	unsigned calls = env.calls = lo->layers & (CC_L_API | CC_L_RUNTIME);
	const char *why = lo->pid         ? "-p"
	                  : env.uprobes   ? "--uprobes"
	                  : lo->npatterns ? "-f"
	                  : lo->bare      ? "--bench-bare"
	                                  : NULL;
	if (!why && env.cmd && (calls || env.po.layers)) {
		static const char *const what[] = {
		    [EXE_STATIC] =
		        "is a static program: the dynamic loader ignores LD_PRELOAD there",
		    [EXE_SETUID] = "is set-user-ID: the dynamic loader ignores LD_PRELOAD there",
		    [EXE_SETGID] = "is set-group-ID: the dynamic loader ignores LD_PRELOAD there",
		    [EXE_CAPABILITIES] =
		        "has file capabilities: the dynamic loader ignores LD_PRELOAD there",
		    [EXE_LIBCUDA_INSIDE] = "has the driver API linked in: a preloaded library "
		                           "sees none of its calls",
		};
		static char ignored[PATH_MAX + 96];
		enum exe_why w = exe_preload_check(env.cmd, env.why_file, sizeof(env.why_file));
		if ((why = exe_why_word(w))) {
			snprintf(ignored, sizeof(ignored), "%s %s", env.why_file, what[w]);
			env.po.ignored = ignored;
			warnx("%s%s", ignored,
			      calls ? "; the api and runtime layers come from uprobes" : "");
			if (w == EXE_LIBCUDA_INSIDE && !lo->libcuda)
				lo->libcuda = env.why_file;
		}
	}
	lo->uprobes_why = why;
	if (why && (calls & CC_L_RUNTIME) && !lo->libcudart)
		runtime_inside_program(lo);
	if (why || !calls)
		return;
	/* The runtime's calls hang off the library's api layer: it records api for either. */
	env.po.layers |= 1u << CUT_API;
	lo->layers &= ~(unsigned)CC_L_API;
	if (!(calls & CC_L_RUNTIME))
		return;
	/* A program with libcudart linked in (nvcc's default) calls its runtime inside itself:
	 * the library sees the driver calls that runtime makes, uprobes on the program its own. */
	if (env.cmd && !lo->libcudart && exe_runtime_inside(env.why_file)) {
		lo->uprobes_why = "libcudart linked in";
		lo->libcudart = env.why_file;
		warnx("%s has libcudart linked in: the runtime layer comes from uprobes on it",
		      env.why_file);
		return;
	}
	env.po.layers |= 1u << CUT_RUNTIME;
	lo->layers &= ~(unsigned)CC_L_RUNTIME;
}

/* ---- header and trailer ---- */

/* Meta record m (meta.h), cutcapture's own, at ts. */
static void
write_meta(uint64_t ts, const struct cut_meta *m)
{
	struct cut_event at;
	struct cut_buf line = {0};
	cut_event_init(&at);
	at.ts = (int64_t)ts;
	at.pid = at.tid = getpid();
	cut_meta_format(&line, &at, m);
	buf_addc(&line, '\n');
	out_add(line.s, line.len);
	buf_free(&line);
}

static void
write_header(uint64_t ts, pid_t root, char **cmd)
{
	struct cut_meta m;
	struct cut_header *h = &m.header;
	struct cut_buf more = {0};
	struct utsname u;
	char host[256] = "";
	cut_meta_init(&m, CUT_META_HEADER);
	uname(&u);
	gethostname(host, sizeof(host) - 1);
	h->tool = "cutcapture";
	h->version = CUT_VERSION;
	h->host = host;
	h->kernel = u.release;
	char *drv = read_file("/sys/module/nvidia/version", NULL);
	if (drv) {
		drv[strcspn(drv, "\n")] = 0;
		h->driver = drv;
	}
	char *ver = read_file("/proc/driver/nvidia/version", NULL);
	if (ver)
		h->driver_flavour = strstr(ver, "Open Kernel") ? "open" : "proprietary";
	h->libcuda = layers_libcuda();
	h->libcudart = layers_libcudart();
	h->monotonic_ns = (int64_t)clock_ns(CLOCK_MONOTONIC);
	h->realtime_ns = (int64_t)clock_ns(CLOCK_REALTIME);
	h->sorted = 1;
	layers_header(h->layers, h->sources);
	preload_header(h->layers, h->sources);
	size_t ncmd = 0;
	while (cmd && cmd[ncmd])
		ncmd++;
	h->cmd = (const char *const *)cmd;
	h->ncmd = ncmd;
	/* cutcapture's own members: the traced process and how the probes attached. */
	buf_addkv_int(&more, "pid", root);
	layers_probes(&more);
	h->more = more.s + 1; /* without buf_addkey's opening brace */
	write_meta(ts, &m);
	buf_free(&more);
	free(drv);
	free(ver);
}

/* The trailer, the last progress line, and what was lost (said here unless merged with the
 * library's records, whose losses the merge adds: merged). */
static void
end_trace(struct drain *d, int status, bool exited, bool merged)
{
	struct cut_meta m;
	struct cut_buf more = {0};
	struct decode_counts c = decode_counts();
	cut_meta_init(&m, CUT_META_TRAILER);
	m.trailer.events = (int64_t)c.events;
	m.trailer.lost = (int64_t)c.lost;
	layers_trailer(m.trailer.layers, c.layer);
	/* cutcapture's own members */
	buf_addkv_int(&more, "unmatched", (int64_t)d->unmatched);
	buf_addkv_int(&more, "inner", (int64_t)d->counters[CC_C_INNER]);
	if (env.lo.bare) {
		buf_addkv_int(&more, "bare_calls", (int64_t)d->counters[CC_C_BARE_CALLS]);
		buf_addkv_int(&more, "bare_ns", (int64_t)d->counters[CC_C_BARE_NS]);
	}
	buf_addkv_int(&more, "attach_ns", (int64_t)layers_attach_ns());
	buf_addkv_int(&more, "detach_ns", (int64_t)layers_detach_ns());
	buf_addkv_int(&more, "duration_ns", (int64_t)(clock_ns(CLOCK_MONOTONIC) - d->start));
	if (exited)
		buf_addkv_int(&more, "status", status);
	m.trailer.more = more.s + 1;
	write_meta(clock_ns(CLOCK_MONOTONIC), &m);
	buf_free(&more);
	drain_progress(d, clock_ns(CLOCK_MONOTONIC), true);
	c = decode_counts();
	if (c.lost && !merged)
		warnx("%llu events lost (see the lost records)", (unsigned long long)c.lost);
}

/* Writes out the trace; returns the exit status, which a failed write changes. */
static int
close_trace(const struct drain *d, const struct target *t, int status)
{
	bool whole = false;
	int e = out_close(&whole);
	if (e && !d->untraced)
		warnx("writing the trace to %s: %s: the trace is incomplete%s", d->out_name,
		      strerror(e), whole ? ", cut back to its last whole line" : "");
	else if (e && whole)
		warnx("%s: cut back to its last whole line (no trailer)", d->out_name);
	if (e && t->child && t->done && status != CUT_EXIT_OK)
		warnx("the command exited with status %d", status);
	if (e)
		status = e == EPIPE ? 128 + SIGPIPE : CUT_EXIT_FATAL;
	return status;
}

int
main(int argc, char *argv[])
{
	int status = CUT_EXIT_FATAL, out_fd = STDOUT_FILENO, own_fd = -1;
	struct target T = {.go_fd = -1, .fail_fd = -1, .pidfd = -1};
	struct drain D = {.out_name = "standard output"};
	struct cutcapture_bpf *skel = NULL;

	cut_std_args_help(argc, argv, usage, help);

	parse_args(argc, argv);
	if (geteuid() != 0)
		errx(CUT_EXIT_FATAL, "must be run as root (BPF programs and uprobes need it)");
	/* Every argument is checked before -o is touched: a mistyped one leaves the last
	 * trace as it was. */
	if (env.lo.pid && target_check(env.lo.pid) < 0)
		return CUT_EXIT_FATAL;
	libbpf_set_print(libbpf_print);
	target_keep_disposition(SIGPIPE);
	signal(SIGPIPE, SIG_IGN);
	/* A write past the file size limit fails (said, the trace incomplete) instead of
	 * killing cutcapture; the command gets the disposition cutcapture was given. */
	target_keep_disposition(SIGXFSZ);
	signal(SIGXFSZ, SIG_IGN);

	/* libcuthook for the layers eBPF cannot see, and for api and runtime where it can take
	 * them, in a command cutcapture starts; the driver functions it calls itself are then its
	 * to record, not the uprobes'. Where it cannot be preloaded, api and runtime are the
	 * uprobes' after all. */
	choose_call_path();
	if (env.lo.layers & CC_L_RUNTIME)
		env.po.runtime_probed = env.lo.libcudart;
	unsigned calls = env.po.layers & (1u << CUT_API | 1u << CUT_RUNTIME);
	bool preload = preload_start(&env.po, env.cmd != NULL);
	if (!preload && calls) {
		warnx("libcuthook cannot be preloaded: %s: the api and runtime layers come from "
		      "uprobes",
		      preload_off_reason());
		env.lo.layers |= env.calls;
		env.lo.uprobes_why = "no libcuthook";
		preload_drop(calls);
	}
	if (preload && !(env.po.layers >> CUT_API & 1)) {
		env.lo.unprobed = cut_hook_unprobed;
		env.lo.unprobed_gpu = env.po.layers >> CUT_GPU & 1;
	}

	/* Feature probes: which devices, library, driver API and kernel functions, and what
	 * the kernel allows; a layer that cannot work is off and says why. */
	layers_probe(&env.lo);
	size_t nfuncs, nkfuncs;
	const char *const *funcs = layers_api_functions(&nfuncs);
	const char *const *kfuncs = layers_kernel_functions(&nkfuncs);
	decode_init(funcs, nfuncs, kfuncs, nkfuncs);

	/* Open, write each layer's settings (rodata), load. */
	if (!(skel = layers_load())) {
		warnx("cannot load the BPF programs: %s%s", strerror(errno),
		      errno == EPERM ? " (is BPF allowed here? see dmesg and "
		                       "kernel.unprivileged_bpf_disabled)"
		                     : "");
		goto cleanup;
	}

	/* The output: never through a symbolic link, 0644 whatever the umask allows more. */
	if (env.out_path) {
		out_fd =
		    open(env.out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
		if (out_fd < 0) {
			if (errno == ELOOP)
				warnx("%s: a symbolic link: not followed", env.out_path);
			else
				warn("%s", env.out_path);
			goto cleanup;
		}
		D.out_name = env.out_path;
	}
	/* With libcuthook in the command (the gpu and nvtx layers), cutcapture's own records go
	 * to a file of its own first, merged with the library's at the end. */
	if (preload && (own_fd = preload_open_own()) < 0)
		goto cleanup;
	out_open(preload ? own_fd : out_fd);
	if (!preload)
		out_compress(env.out_path);

	/* The command waits, stopped before exec, until every probe is in place. */
	uint64_t start = clock_ns(CLOCK_MONOTONIC);
	if (env.cmd)
		target_spawn(&T, env.cmd, env.out_path == NULL, preload ? preload_child_env : NULL);
	else if (target_attach(&T, env.lo.pid) < 0)
		goto cleanup;
	/* The processes whose loader ignores the preload after all (a child set-user-ID, say) are
	 * said in their process records. */
	static char preloaded[64];
	if (preload)
		decode_preload(
		    cut_hook_layer_join(preloaded, sizeof(preloaded), env.po.layers, ", "));
	target_follow(&T, skel, start);

	/* Attach: the process tree first (nothing the command forks may slip by), then each
	 * layer; one that cannot attach is off and says why. */
	if (layers_attach_tree(skel) < 0)
		goto cleanup;
	layers_attach(skel);
	preload_attach(skel);

	/* Drain until the command and its tree are done, or a signal says so. */
	D.quiet = env.quiet;
	D.sched_min = env.lo.sched_min;
	if (drain_open(&D, skel) < 0)
		goto cleanup;
	write_header(start, env.lo.pid ? env.lo.pid : T.child, T.argv);
	target_catch_signals();
	target_start(&T);
	drain_run(&D, &T);

	/* Detach, take what is left, and end the trace. */
	drain_finish(&D);
	status = target_status(&T);
	if (!D.untraced)
		end_trace(&D, status, T.done, preload);
	status = close_trace(&D, &T, status);
	if (preload && !D.untraced) {
		/* Then cutcapture's records and the library's, as one sorted trace. */
		out_open(out_fd);
		out_compress(env.out_path);
		int m = preload_merge(D.counters[CC_C_OWN]), command = status;
		status = close_trace(&D, &T, status);
		if (m != 0) { /* the library's records, or the merge, incomplete: said */
			if (status == command && command != CUT_EXIT_OK && T.child && T.done)
				warnx("the command exited with status %d", command);
			status = CUT_EXIT_FATAL;
		}
	}

cleanup:
	preload_detach();
	preload_end();
	if (own_fd >= 0)
		close(own_fd);
	drain_close(&D);
	layers_free();
	cutcapture_bpf__destroy(skel);
	target_close(&T);
	decode_free();
	names_free();
	out_free(); /* when the capture stopped before close_trace */
	if (env.out_path && out_fd > STDOUT_FILENO && close(out_fd) != 0 &&
	    status != CUT_EXIT_FATAL) {
		warn("%s", env.out_path);
		status = CUT_EXIT_FATAL;
	}
	return status;
}
