/* layers.c: cutcapture's layers, one row each: name, switch, lost counter, programs, settings,
 * feature probe, attach and detach. Adding a layer is adding a row here (HACKING.md). */
#include <err.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "records.h"
#include "decode.h"
#include "devices.h"
#include "cut.h"
#include "event.h"
#include "hooklib.h"
#include "layers.h"
#include "layers_impl.h"

#include "cutcapture.skel.h"

static void probe_devices(const struct layer *l);
static void open_ioctl(const struct layer *l, struct cutcapture_bpf *skel);
static void open_irq(const struct layer *l, struct cutcapture_bpf *skel);
static void open_sched(const struct layer *l, struct cutcapture_bpf *skel);
static int attach_pair(const struct layer *l, struct cutcapture_bpf *skel);

/* In the order of the CC_L_* bits, which is the header's and the trailer's. */
/* clang-format off */
static const struct layer layers[] = {
    {"api", CC_L_API, CUT_API, CC_C_LOST_API, {"api_entry", "api_return"}, NULL,
     api_probe, api_open, api_attach, api_detach},
    {"ioctl", CC_L_IOCTL, CUT_IOCTL, CC_C_LOST_IOCTL, {"sys_enter", "sys_exit"},
     "raw tracepoints sys_enter/sys_exit", probe_devices, open_ioctl, attach_pair, layer_detach_links},
    {"irq", CC_L_IRQ, CUT_IRQ, CC_C_LOST_IRQ, {"irq_entry", "irq_exit"},
     "raw tracepoints irq_handler_entry/exit", NULL, open_irq, attach_pair, layer_detach_links},
    {"sched", CC_L_SCHED, CUT_SCHED, CC_C_LOST_SCHED, {"sched_switch", "sched_wakeup"},
     "raw tracepoints sched_switch/sched_wakeup", NULL, open_sched, attach_pair, layer_detach_links},
    {"kernel", CC_L_KERNEL, CUT_KERNEL, CC_C_LOST_KERNEL, {"kprobe_entry", "kprobe_return"}, NULL,
     kernel_probe, kernel_open, kernel_attach, kernel_detach},
    {"runtime", CC_L_RUNTIME, CUT_RUNTIME, CC_C_LOST_API, {"rt_entry", "rt_return"}, NULL,
     rt_probe, rt_open, rt_attach, rt_detach},
};
/* clang-format on */
#define NLAYERS (sizeof(layers) / sizeof(layers[0]))

/* Per layer, by row: why it is off ("" while on or not asked for), and its links. */
static struct {
	char why[160];
	struct bpf_link *links[2];
} state[NLAYERS];
#define ST(l) (&state[(l)-layers])

const struct layer_opts *layers_opts;
static unsigned on; /* the layers asked for and not turned off */

uint64_t
layer_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void
layer_off(const struct layer *l, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(ST(l)->why, sizeof(ST(l)->why), fmt, ap);
	va_end(ap);
	on &= ~l->bit;
	if (!(layers_opts->quiet & l->bit))
		warnx("%s layer off: %s", l->name, ST(l)->why);
}

bool
layer_is_on(const struct layer *l)
{
	return on & l->bit;
}

struct bpf_link **
layer_links(const struct layer *l)
{
	return ST(l)->links;
}

struct bpf_program *
layer_prog(struct cutcapture_bpf *skel, const char *name)
{
	return bpf_object__find_program_by_name(skel->obj, name);
}

void
layer_autoload(const struct layer *l, struct cutcapture_bpf *skel)
{
	for (int i = 0; i < 2; i++)
		bpf_program__set_autoload(layer_prog(skel, l->progs[i]), on & l->bit);
}

int
layers_parse(const char *s)
{
	unsigned bits = 0;
	char *copy = cut_xstrdup(s), *save = NULL;
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		size_t i;
		int hook = cut_hook_layer(t, strlen(t));
		if (hook >= 0 && (CUT_HOOK_ONLY >> hook & 1)) /* libcuthook's: preload.h */
			continue;
		for (i = 0; i < NLAYERS; i++)
			if (strcmp(t, layers[i].name) == 0)
				break;
		if (i == NLAYERS) {
			char names[96] = "", hooks[64];
			for (size_t k = 0; k < NLAYERS; k++)
				snprintf(names + strlen(names), sizeof(names) - strlen(names),
				         "%s%s", k ? ", " : "", layers[k].name);
			warnx("unknown layer %s (layers: %s, %s)", t, names,
			      cut_hook_layer_join(hooks, sizeof(hooks), CUT_HOOK_ONLY, ", "));
			free(copy);
			return -1;
		}
		bits |= layers[i].bit;
	}
	free(copy);
	return (int)bits;
}

bool
layers_on(unsigned bit)
{
	return on & bit;
}

/* ---- probes: before load ---- */

static void
probe_devices(const struct layer *l)
{
	(void)l;
	dev_scan();
	for (int i = 0; i < layers_opts->ndevs; i++)
		if (dev_add(layers_opts->devs[i], layers_opts->dev_kinds[i]) < 0)
			err(CUT_EXIT_FATAL, "%s", layers_opts->devs[i]);
}

void
layers_probe(const struct layer_opts *o)
{
	layers_opts = o;
	on = o->layers;
	for (size_t i = 0; i < NLAYERS; i++)
		if (layers[i].probe)
			layers[i].probe(&layers[i]);
}

/* ---- settings and programs: after open ---- */

static void
open_ioctl(const struct layer *l, struct cutcapture_bpf *skel)
{
	struct cc_dev devs[CC_MAX_DEVS];
	skel->rodata->targ_ndevs = (uint32_t)dev_list(devs, CC_MAX_DEVS);
	memcpy((void *)skel->rodata->targ_devs, devs, sizeof(devs));
	layer_autoload(l, skel);
}

static void
open_irq(const struct layer *l, struct cutcapture_bpf *skel)
{
	snprintf((char *)skel->rodata->targ_irq_prefix, sizeof(skel->rodata->targ_irq_prefix), "%s",
	         layers_opts->irq_prefix);
	skel->rodata->targ_irq_prefix_len = (uint32_t)strlen(layers_opts->irq_prefix);
	layer_autoload(l, skel);
}

static void
open_sched(const struct layer *l, struct cutcapture_bpf *skel)
{
	skel->rodata->targ_sched_min_ns = layers_opts->sched_min;
	layer_autoload(l, skel);
}

static struct cutcapture_bpf *
open_all(void)
{
	struct cutcapture_bpf *skel = cutcapture_bpf__open();
	if (!skel)
		return NULL;
	struct cutcapture_bpf__rodata *ro = skel->rodata;
	ro->targ_layers = on;
	ro->targ_bare = layers_opts->bare;
	uint64_t ring = (uint64_t)layers_opts->ring_mb << 20;
	ro->targ_wake_bytes = ring / 8;
	bpf_map__set_max_entries(skel->maps.events, (uint32_t)ring);
	for (size_t i = 0; i < NLAYERS; i++)
		layers[i].open(&layers[i], skel);
	return skel;
}

struct cutcapture_bpf *
layers_load(void)
{
	kernel_fentry_begin();
	struct cutcapture_bpf *skel = open_all();
	if (!skel)
		return NULL;
	int e = kernel_fentry_unusable() ? -ENOENT : cutcapture_bpf__load(skel);
	if (e && kernel_fentry_failed(e)) {
		cutcapture_bpf__destroy(skel);
		if (!(skel = open_all()))
			return NULL;
		e = cutcapture_bpf__load(skel);
	}
	if (e) {
		cutcapture_bpf__destroy(skel);
		errno = -e;
		return NULL;
	}
	return skel;
}

/* ---- attach and detach ---- */

int
layers_attach_tree(struct cutcapture_bpf *skel)
{
	struct bpf_program *progs[] = {skel->progs.proc_fork, skel->progs.proc_exec,
	                               skel->progs.proc_exit};
	struct bpf_link **links[] = {&skel->links.proc_fork, &skel->links.proc_exec,
	                             &skel->links.proc_exit};
	for (size_t i = 0; i < 3; i++) {
		if (!(*links[i] = bpf_program__attach(progs[i]))) {
			warnx("cannot attach the process-tree tracepoints: %s", strerror(errno));
			return -1;
		}
	}
	/* Which signals the command gets, so that one is never passed on twice. Without it a
	 * signal from kill(1) is passed on at once. */
	skel->links.sig_generate = bpf_program__attach(skel->progs.sig_generate);
	return 0;
}

static int
attach_pair(const struct layer *l, struct cutcapture_bpf *skel)
{
	ST(l)->links[0] = bpf_program__attach(layer_prog(skel, l->progs[0]));
	ST(l)->links[1] =
	    ST(l)->links[0] ? bpf_program__attach(layer_prog(skel, l->progs[1])) : NULL;
	if (ST(l)->links[1])
		return 0;
	layer_off(l, "%s: %s", l->tracepoint, strerror(errno));
	return -1;
}

void
layer_detach_links(const struct layer *l)
{
	for (int i = 0; i < 2; i++) {
		bpf_link__destroy(ST(l)->links[i]);
		ST(l)->links[i] = NULL;
	}
}

void
layers_attach(struct cutcapture_bpf *skel)
{
	/* The api layer first: its records hold the others' back (calls in flight). */
	for (size_t i = 0; i < NLAYERS; i++)
		if (on & layers[i].bit)
			layers[i].attach(&layers[i], skel);
}

static void
detach_tree(struct cutcapture_bpf *skel)
{
	struct bpf_link **links[] = {&skel->links.proc_fork, &skel->links.proc_exec,
	                             &skel->links.proc_exit};
	for (size_t i = 0; i < 3; i++) {
		bpf_link__destroy(*links[i]);
		*links[i] = NULL;
	}
}

void
layers_detach_api_tree(struct cutcapture_bpf *skel)
{
	if (on & CC_L_API)
		api_detach(&layers[0]);
	if (on & CC_L_RUNTIME)
		rt_detach(&layers[NLAYERS - 1]);
	detach_tree(skel);
}

void
layers_detach_all(struct cutcapture_bpf *skel)
{
	for (size_t i = 0; i < NLAYERS; i++)
		layers[i].detach(&layers[i]);
	detach_tree(skel);
}

void
layers_free(void)
{
	for (size_t i = 0; i < NLAYERS; i++)
		layers[i].detach(&layers[i]);
	api_free();
}

/* ---- what the header and the trailer say ---- */

const char *
layers_counter_name(unsigned counter)
{
	for (size_t i = 0; i < NLAYERS; i++)
		if (layers[i].lost == counter)
			return layers[i].name;
	/* The process tree's records; the api layer's calls it could not follow. */
	return counter == CC_C_LOST_META ? "meta" : "api";
}

void
layers_header(const char *out[CUT_NLAYERS], const char *sources[CUT_NLAYERS])
{
	static char off[NLAYERS][sizeof(state[0].why) + 8], uprobes[96];
	snprintf(uprobes, sizeof(uprobes), "uprobes: %s",
	         layers_opts->uprobes_why ? layers_opts->uprobes_why : "asked");
	for (size_t i = 0; i < NLAYERS; i++) {
		snprintf(off[i], sizeof(off[i]), "off: %.*s", (int)sizeof(state[0].why) - 1,
		         state[i].why[0] ? state[i].why : "not asked for (-l)");
		out[layers[i].layer] = on & layers[i].bit ? "on" : off[i];
		if (on & layers[i].bit)
			sources[layers[i].layer] =
			    layers[i].bit & (CC_L_API | CC_L_RUNTIME) ? uprobes : "ebpf";
	}
}

void
layers_trailer(int64_t out[CUT_NLAYERS], const uint64_t *per_layer)
{
	for (size_t i = 0; i < NLAYERS; i++)
		out[layers[i].layer] = (int64_t)per_layer[layers[i].layer];
	out[CUT_META] = (int64_t)per_layer[CUT_META];
}
