/* preload.h: the layers cutcapture takes from libcuthook, preloaded into a command it starts:
 * gpu and nvtx, which eBPF cannot see (the GPU's own timeline needs events recorded on the
 * program's streams; NVTX is header-only and reaches a tool only through its injection
 * variable), and api and runtime wherever the loader takes the preload (the library's wrappers
 * cost a tenth of what uprobes cost). The library writes a file per process into a directory of
 * cutcapture's; its marks (hook.bpf.h) keep its own driver calls, ioctls and thread out of the
 * uprobes' records and give each submitting call the corr of its GPU work; at the end its files and
 * cutcapture's records become one sorted trace. */
#ifndef CUT_CAPTURE_PRELOAD_H
#define CUT_CAPTURE_PRELOAD_H

#include <stdbool.h>
#include <stdint.h>

#include "event.h"

struct cutcapture_bpf;

struct preload_opts {
	/* The layers the library is to record, as bits (1u << enum cut_layer): of those only it
	 * records (CUT_HOOK_ONLY: gpu, nvtx) the ones -l asks for; api and runtime unless they are
	 * the uprobes' (runtime only with api). */
	unsigned layers;
	const char *lib; /* --hook, or NULL to find it (hooklib.h) */
	/* Why the command would ignore the library (exe.h): it is then not preloaded. */
	const char *ignored;
	/* The file whose runtime the uprobes record (libcudart, or a program with it linked in),
	 * or NULL: the library's trailer does not name it among the runtimes it cannot see. */
	const char *runtime_probed;
};

/*
 * Before the command is spawned: finds the library and makes the directory its files go to.
 * Returns true when the library goes in; else the layers it would record are off, and say why
 * (preload_header). command: whether cutcapture starts the command (with -p it cannot: nothing
 * can be preloaded into a running process).
 */
bool preload_start(const struct preload_opts *o, bool command);
/* In the command's process, forked, before exec: the environment that preloads the library
 * (cutcapture's own is left alone: what it runs itself, ldconfig for one, is not the command's).
 * Returns 0 (nothing to do when the library does not go in), or -1 with errno set. */
int preload_child_env(void);
/* Why the library is not preloaded (preload_start returned false). */
const char *preload_off_reason(void);
/* The layers (bits) the library was to record that it does not: the header leaves them to
 * whoever records them instead. */
void preload_drop(unsigned layers);
/* Opens the file cutcapture writes its own records to while the library is in (to merge
 * later): nameless. Returns its descriptor, or -1 having said why. */
int preload_open_own(void);
/* The header's state of the layers the library records: "on", or "off: why"; and their
 * sources: "preload" where on, none where off. */
void preload_header(const char *layers[CUT_NLAYERS], const char *sources[CUT_NLAYERS]);
/* Attaches the probe of the library's marks (every process that maps it). Returns 0, or -1
 * saying why: the library's own calls would then be recorded as the program's. */
int preload_attach(struct cutcapture_bpf *skel);
void preload_detach(void);
/*
 * After cutcapture's records are written and closed: the trace into the output opened with
 * out_open: the header (its layers as the library's headers say), every record of cutcapture's
 * file and of the library's files sorted by time (their headers and trailers folded into
 * cutcapture's), the trailer (with the library's events, losses and GPU timing added). own:
 * calls, ioctls and off-CPU spans of the library's own the probes left out. Returns 0; 1 when
 * the library could not write all its records (said, and counted in a lost record); or -1
 * having said why (the output then holds what was written before).
 */
int preload_merge(uint64_t own);
/* Removes the directory and what is in it. */
void preload_end(void);

#endif
