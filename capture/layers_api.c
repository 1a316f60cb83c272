/* layers_api.c: the api and runtime layers: entry and return of every driver API function
 * libcuda exports and of every runtime function of rt.def libcudart exports, through one
 * uprobe_multi link each way per library (kernels from 6.6), else a uprobe pair per function.
 * Cookies number the driver's functions first, then the runtime's. */
#include <err.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "api/call.h"
#include "cut.h"
#include "decode.h"
#include "layers_impl.h"
#include "libcuda.h"

#include "cutcapture.skel.h"

/* A library probed: its functions (cookie = base + index) and their links. */
struct probed {
	char *lib; /* as found */
	char real[PATH_MAX];
	char **funcs;
	unsigned long *offsets;
	int nfuncs, base;
	bool multi;               /* one uprobe_multi link each way */
	struct bpf_link **single; /* else 2 per function */
	int attached, failed;
	int unprobed; /* functions libcuthook records instead (layer_opts.unprobed) */
	uint64_t attach_ns, detach_ns;
};
static struct probed A, RT; /* libcuda (api), libcudart (runtime) */
static char **all_funcs;    /* both lists, by cookie */

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

/* Whether to attach through uprobe_multi links: asked for once. */
static bool
multi(void)
{
	static int have = -1;
	if (have < 0)
		have = have_uprobe_multi();
	return !layers_opts->single && have;
}

/* Drops the functions libcuthook records itself (layer_opts.unprobed) from those probed. */
static void
leave_unprobed(void)
{
	int kept = 0;
	for (int i = 0; i < A.nfuncs; i++) {
		if (layers_opts->unprobed &&
		    layers_opts->unprobed(A.funcs[i], layers_opts->unprobed_gpu)) {
			free(A.funcs[i]);
			A.unprobed++;
			continue;
		}
		A.funcs[kept] = A.funcs[i];
		A.offsets[kept++] = A.offsets[i];
	}
	A.nfuncs = kept;
}

void
api_probe(const struct layer *l)
{
	char why[PATH_MAX + 128] = "";
	if (!layer_is_on(l))
		return;
	A.lib = layers_opts->libcuda ? cut_xstrdup(layers_opts->libcuda)
	                             : libcuda_find(layers_opts->pid);
	if (!A.lib)
		layer_off(l, "libcuda.so.1 not found (give --libcuda)");
	else if (!realpath(A.lib, A.real))
		layer_off(l, "%s: %s", A.lib, strerror(errno));
	else if ((A.nfuncs = libcuda_functions(A.real, false, layers_opts->patterns,
	                                       layers_opts->npatterns, &A.funcs, &A.offsets, why,
	                                       sizeof(why))) < 0)
		layer_off(l, "%s", why);
	if (A.nfuncs < 0)
		A.nfuncs = 0;
	leave_unprobed();
	A.multi = multi();
}

void
api_open(const struct layer *l, struct cutcapture_bpf *skel)
{
	for (int i = 0; i < A.nfuncs; i++) {
		struct cc_fdesc d = decode_fdesc((size_t)i);
		memcpy((void *)&skel->rodata->targ_fdesc[i], &d, sizeof(d));
	}
	layer_autoload(l, skel);
	if (layer_is_on(l) && !A.multi) {
		bpf_program__set_expected_attach_type(skel->progs.api_entry, 0);
		bpf_program__set_expected_attach_type(skel->progs.api_return, 0);
	}
}

static int
attach(const struct layer *l, struct probed *P, struct bpf_program *entry, struct bpf_program *ret)
{
	uint64_t t0 = layer_now();
	struct bpf_link **links = layer_links(l);
	__u64 *cookies = cut_xcalloc((size_t)P->nfuncs, sizeof(*cookies));
	for (int i = 0; i < P->nfuncs; i++)
		cookies[i] = (__u64)(P->base + i);
	if (P->multi) {
		/* Returns first and entries last, so that no entry goes without its return. */
		LIBBPF_OPTS(bpf_uprobe_multi_opts, o, .offsets = P->offsets, .cookies = cookies,
		            .cnt = (size_t)P->nfuncs, .retprobe = true);
		links[1] = bpf_program__attach_uprobe_multi(ret, -1, P->real, NULL, &o);
		o.retprobe = false;
		if (links[1])
			links[0] = bpf_program__attach_uprobe_multi(entry, -1, P->real, NULL, &o);
		if (!links[0]) {
			int e = errno;
			layer_detach_links(l);
			free(cookies);
			layer_off(l, "uprobe_multi on %s: %s", P->real, strerror(e));
			return -1;
		}
		P->attached = P->nfuncs;
	} else {
		P->single = cut_xcalloc((size_t)P->nfuncs * 2, sizeof(*P->single));
		for (int i = 0; i < P->nfuncs; i++) {
			LIBBPF_OPTS(bpf_uprobe_opts, o, .bpf_cookie = (__u64)(P->base + i),
			            .retprobe = true);
			size_t off = P->offsets[i];
			struct bpf_link *r =
			    bpf_program__attach_uprobe_opts(ret, -1, P->real, off, &o);
			o.retprobe = false;
			struct bpf_link *e =
			    r ? bpf_program__attach_uprobe_opts(entry, -1, P->real, off, &o) : NULL;
			if (!e) {
				bpf_link__destroy(r);
				P->failed++;
				continue;
			}
			P->single[2 * i] = e;
			P->single[2 * i + 1] = r;
			P->attached++;
		}
		if (!P->attached) {
			free(cookies);
			layer_off(l, "no uprobe could be attached to %s", P->real);
			return -1;
		}
		if (P->failed)
			warnx("%d of %d functions could not be probed", P->failed, P->nfuncs);
	}
	free(cookies);
	P->attach_ns = layer_now() - t0;
	return 0;
}

static void
detach(const struct layer *l, struct probed *P)
{
	uint64_t t0 = layer_now();
	layer_detach_links(l);
	for (int i = 0; P->single && i < 2 * P->nfuncs; i++) {
		bpf_link__destroy(P->single[i]);
		P->single[i] = NULL;
	}
	P->detach_ns = layer_now() - t0;
}

int
api_attach(const struct layer *l, struct cutcapture_bpf *skel)
{
	return attach(l, &A, skel->progs.api_entry, skel->progs.api_return);
}

void
api_detach(const struct layer *l)
{
	detach(l, &A);
}

/* ---- the runtime layer ---- */

void
rt_probe(const struct layer *l)
{
	char why[PATH_MAX + 128] = "";
	RT.base = A.nfuncs;
	if (!layer_is_on(l))
		return;
	RT.lib = layers_opts->libcudart ? cut_xstrdup(layers_opts->libcudart)
	                                : libcudart_find(layers_opts->pid);
	if (!RT.lib)
		layer_off(l, "libcudart.so.13 not found (give --libcudart)");
	else if (!realpath(RT.lib, RT.real))
		layer_off(l, "%s: %s", RT.lib, strerror(errno));
	else if ((RT.nfuncs = libcuda_functions(RT.real, true, NULL, 0, &RT.funcs, &RT.offsets, why,
	                                        sizeof(why))) < 0)
		layer_off(l, "%s", why);
	if (RT.nfuncs < 0)
		RT.nfuncs = 0;
	/* Only the functions of rt.def: those libcuthook wraps too. */
	int k = 0;
	for (int i = 0; i < RT.nfuncs; i++) {
		struct cut_api_desc d;
		cut_api_describe(&d, RT.funcs[i]);
		if (d.runtime && A.nfuncs + k < CC_MAX_FUNCS) {
			RT.funcs[k] = RT.funcs[i];
			RT.offsets[k++] = RT.offsets[i];
		} else
			free(RT.funcs[i]);
	}
	RT.nfuncs = k;
	if (!k && layer_is_on(l))
		layer_off(l, "%s exports no function of rt.def", RT.real);
	RT.multi = multi(); /* (with or without the api layer's probes) */
}

void
rt_open(const struct layer *l, struct cutcapture_bpf *skel)
{
	for (int i = 0; i < RT.nfuncs; i++) {
		struct cc_fdesc d = decode_fdesc((size_t)(RT.base + i));
		memcpy((void *)&skel->rodata->targ_fdesc[RT.base + i], &d, sizeof(d));
	}
	layer_autoload(l, skel);
	if (layer_is_on(l) && !RT.multi) {
		bpf_program__set_expected_attach_type(skel->progs.rt_entry, 0);
		bpf_program__set_expected_attach_type(skel->progs.rt_return, 0);
	}
}

int
rt_attach(const struct layer *l, struct cutcapture_bpf *skel)
{
	return attach(l, &RT, skel->progs.rt_entry, skel->progs.rt_return);
}

void
rt_detach(const struct layer *l)
{
	detach(l, &RT);
}

const char *
layers_libcudart(void)
{
	return RT.lib;
}

const char *const *
layers_api_functions(size_t *n)
{
	*n = (size_t)(A.nfuncs + RT.nfuncs);
	if (!all_funcs) {
		all_funcs = cut_xcalloc(*n, sizeof(char *));
		if (A.nfuncs) /* memcpy's source may not be NULL, even for nothing */
			memcpy(all_funcs, A.funcs, (size_t)A.nfuncs * sizeof(char *));
		if (RT.nfuncs)
			memcpy(all_funcs + A.nfuncs, RT.funcs, (size_t)RT.nfuncs * sizeof(char *));
	}
	return (const char *const *)all_funcs;
}

const char *
layers_libcuda(void)
{
	return A.lib;
}

void
layers_probes(struct cut_buf *b)
{
	buf_addkey(b, "probes");
	buf_addc(b, '{');
	buf_addkv_str(b, "mode",
	              layers_on(CC_L_API) ? (A.multi ? "uprobe_multi" : "uprobe") : "none");
	buf_addkv_int(b, "functions", A.nfuncs + RT.nfuncs);
	buf_addkv_int(b, "attached", A.attached + RT.attached);
	buf_addkv_int(b, "failed", A.failed + RT.failed);
	buf_addkv_int(b, "attach_ns", (int64_t)A.attach_ns);
	if (A.unprobed)
		buf_addkv_int(b, "left_to_libcuthook", A.unprobed);
	buf_addc(b, '}');
}

uint64_t
layers_attach_ns(void)
{
	return A.attach_ns;
}

uint64_t
layers_detach_ns(void)
{
	return A.detach_ns;
}

void
api_free(void)
{
	for (int i = 0; i < A.nfuncs; i++)
		free(A.funcs[i]);
	free(A.funcs);
	free(A.offsets);
	free(A.single);
	free(A.lib);
	memset(&A, 0, sizeof(A));
	for (int i = 0; i < RT.nfuncs; i++)
		free(RT.funcs[i]);
	free(RT.funcs);
	free(RT.offsets);
	free(RT.single);
	free(RT.lib);
	memset(&RT, 0, sizeof(RT));
	free(all_funcs);
	all_funcs = NULL;
}
