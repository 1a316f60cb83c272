/* layers_impl.h: what layers.c (the table, and the layers that are a tracepoint pair) shares
 * with the layers in files of their own: layers_api.c and layers_kernel.c. */
#ifndef CUT_CAPTURE_LAYERS_IMPL_H
#define CUT_CAPTURE_LAYERS_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#include "event.h"
#include "layers.h"

struct bpf_link;
struct bpf_program;

/* One row of the table. */
struct layer {
	const char *name;       /* in -l, the header, the trailer and lost records */
	unsigned bit;           /* CC_L_*: the BPF side's switch (targ_layers) */
	enum cut_layer layer;   /* of its events, for the trailer's counts */
	unsigned lost;          /* CC_C_LOST_*: its records the ring buffer had no room for */
	const char *progs[2];   /* its programs (cutcapture.bpf.c): entry and exit */
	const char *tracepoint; /* what attach_pair attaches, for messages */
	/* Before load: what it needs, and whether the kernel can do it; may turn it off. */
	void (*probe)(const struct layer *);
	/* After open: its settings (rodata) and which of its programs load. */
	void (*open)(const struct layer *, struct cutcapture_bpf *);
	/* Attaches; on failure turns the layer off (saying why) and returns -1. */
	int (*attach)(const struct layer *, struct cutcapture_bpf *);
	void (*detach)(const struct layer *);
};

/* The options (layers_probe's argument). */
extern const struct layer_opts *layers_opts;

bool layer_is_on(const struct layer *l);
/* Turns a layer off, saying why once on stderr and in the header. */
void layer_off(const struct layer *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The layer's two links (entry and exit), for layers with one link each way. */
struct bpf_link **layer_links(const struct layer *l);
void layer_detach_links(const struct layer *l);
struct bpf_program *layer_prog(struct cutcapture_bpf *skel, const char *name);
/* Loads the layer's two programs when it is on. */
void layer_autoload(const struct layer *l, struct cutcapture_bpf *skel);
uint64_t layer_now(void);

/* layers_api.c */
void api_probe(const struct layer *l);
void api_open(const struct layer *l, struct cutcapture_bpf *skel);
int api_attach(const struct layer *l, struct cutcapture_bpf *skel);
void api_detach(const struct layer *l);
void api_free(void);
void rt_probe(const struct layer *l);
void rt_open(const struct layer *l, struct cutcapture_bpf *skel);
int rt_attach(const struct layer *l, struct cutcapture_bpf *skel);
void rt_detach(const struct layer *l);

/* layers_kernel.c */
void kernel_probe(const struct layer *l);
void kernel_open(const struct layer *l, struct cutcapture_bpf *skel);
int kernel_attach(const struct layer *l, struct cutcapture_bpf *skel);
void kernel_detach(const struct layer *l);
/* Before the first open: fentry/fexit is tried when the layer is on. */
void kernel_fentry_begin(void);
/* After open: fentry was tried but no function has BTF (the load would be pointless). */
bool kernel_fentry_unusable(void);
/* The load failed with -e: when fentry was tried, says why and returns true (open again, for
 * kprobes this time). */
bool kernel_fentry_failed(int e);

#endif
