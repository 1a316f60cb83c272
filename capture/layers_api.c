/* layers_api.c: the api layer: entry and return of every driver API function libcuda
 * exports, through one uprobe_multi link each way (kernels from 6.6), else a uprobe pair per
 * function. */
#include <err.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "decode.h"
#include "layers_impl.h"
#include "libcuda.h"

#include "cutcapture.skel.h"

/* The api layer: the library probed, its functions (cookie = index) and their links. */
static struct {
	char *libcuda; /* as found */
	char real[PATH_MAX];
	char **funcs;
	unsigned long *offsets;
	int nfuncs;
	bool multi;               /* one uprobe_multi link each way */
	struct bpf_link **single; /* else 2 per function */
	int attached, failed;
	uint64_t attach_ns, detach_ns;
} A;

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

void
api_probe(const struct layer *l)
{
	char why[PATH_MAX + 128] = "";
	if (!layer_is_on(l))
		return;
	A.libcuda =
	    layers_opts->libcuda ? strdup(layers_opts->libcuda) : libcuda_find(layers_opts->pid);
	if (!A.libcuda)
		layer_off(l, "libcuda.so.1 not found (give --libcuda)");
	else if (!realpath(A.libcuda, A.real))
		layer_off(l, "%s: %s", A.libcuda, strerror(errno));
	else if ((A.nfuncs =
	              libcuda_functions(A.real, layers_opts->patterns, layers_opts->npatterns,
	                                &A.funcs, &A.offsets, why, sizeof(why))) < 0)
		layer_off(l, "%s", why);
	if (A.nfuncs < 0)
		A.nfuncs = 0;
	A.multi = !layers_opts->single && have_uprobe_multi();
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

int
api_attach(const struct layer *l, struct cutcapture_bpf *skel)
{
	uint64_t t0 = layer_now();
	struct bpf_link **links = layer_links(l);
	__u64 *cookies = calloc((size_t)A.nfuncs, sizeof(*cookies));
	for (int i = 0; i < A.nfuncs; i++)
		cookies[i] = (__u64)i;
	if (A.multi) {
		/* Returns first and entries last, so that no entry goes without its return. */
		LIBBPF_OPTS(bpf_uprobe_multi_opts, o, .offsets = A.offsets, .cookies = cookies,
		            .cnt = (size_t)A.nfuncs, .retprobe = true);
		links[1] =
		    bpf_program__attach_uprobe_multi(skel->progs.api_return, -1, A.real, NULL, &o);
		o.retprobe = false;
		if (links[1])
			links[0] = bpf_program__attach_uprobe_multi(skel->progs.api_entry, -1,
			                                            A.real, NULL, &o);
		if (!links[0]) {
			int e = errno;
			layer_detach_links(l);
			free(cookies);
			layer_off(l, "uprobe_multi on %s: %s", A.real, strerror(e));
			return -1;
		}
		A.attached = A.nfuncs;
	} else {
		A.single = calloc((size_t)A.nfuncs * 2, sizeof(*A.single));
		for (int i = 0; i < A.nfuncs; i++) {
			LIBBPF_OPTS(bpf_uprobe_opts, o, .bpf_cookie = (__u64)i, .retprobe = true);
			size_t off = A.offsets[i];
			struct bpf_link *r = bpf_program__attach_uprobe_opts(skel->progs.api_return,
			                                                     -1, A.real, off, &o);
			o.retprobe = false;
			struct bpf_link *e = r ? bpf_program__attach_uprobe_opts(
			                             skel->progs.api_entry, -1, A.real, off, &o)
			                       : NULL;
			if (!e) {
				bpf_link__destroy(r);
				A.failed++;
				continue;
			}
			A.single[2 * i] = e;
			A.single[2 * i + 1] = r;
			A.attached++;
		}
		if (!A.attached) {
			free(cookies);
			layer_off(l, "no uprobe could be attached to %s", A.real);
			return -1;
		}
		if (A.failed)
			warnx("%d of %d functions could not be probed", A.failed, A.nfuncs);
	}
	free(cookies);
	A.attach_ns = layer_now() - t0;
	return 0;
}

void
api_detach(const struct layer *l)
{
	uint64_t t0 = layer_now();
	layer_detach_links(l);
	for (int i = 0; A.single && i < 2 * A.nfuncs; i++) {
		bpf_link__destroy(A.single[i]);
		A.single[i] = NULL;
	}
	A.detach_ns = layer_now() - t0;
}

const char *const *
layers_api_functions(size_t *n)
{
	*n = (size_t)A.nfuncs;
	return (const char *const *)A.funcs;
}

const char *
layers_libcuda(void)
{
	return A.libcuda;
}

void
layers_probes(struct cut_buf *b)
{
	buf_addkey(b, "probes");
	buf_addc(b, '{');
	buf_addkv_str(b, "mode",
	              layers_on(CC_L_API) ? (A.multi ? "uprobe_multi" : "uprobe") : "none");
	buf_addkv_int(b, "functions", A.nfuncs);
	buf_addkv_int(b, "attached", A.attached);
	buf_addkv_int(b, "failed", A.failed);
	buf_addkv_int(b, "attach_ns", (int64_t)A.attach_ns);
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
	free(A.libcuda);
	memset(&A, 0, sizeof(A));
}
