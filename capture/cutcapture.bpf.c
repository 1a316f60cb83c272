// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* cutcapture.bpf.c: the probes of cutcapture(8): driver API entry/return (uprobes), ioctl,
 * open, close, mmap and munmap of NVIDIA device files, NVIDIA interrupts, the scheduling of
 * traced threads, and the process tree. One record per finished call into the ring buffer.
 * Here: the settings, the maps and helpers every layer uses; the programs of each layer are in
 * a *.bpf.h of their own, included at the end. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "records.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Settings, written by the loader before load. */
const volatile __u32 targ_layers = 0;
const volatile __u64 targ_wake_bytes = 1 << 20; /* wake the reader once this much waits */
const volatile __u64 targ_sched_min_ns = 0;
const volatile __u32 targ_ndevs = 0;
const volatile struct cc_dev targ_devs[CC_MAX_DEVS] = {};
const volatile struct cc_fdesc targ_fdesc[CC_MAX_FUNCS] = {};
const volatile __u32 targ_kisr = 0; /* bit i: kernel function i runs in interrupt context */
const volatile char targ_irq_prefix[CC_COMMLEN] = "nvidia";
const volatile __u32 targ_irq_prefix_len = 6;
/* Benchmark baseline: API probes only count calls and time them, writing nothing. */
const volatile bool targ_bare = false;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 24); /* the loader sets the size */
} events SEC(".maps");

/* Processes whose events are recorded, by tgid; the process tree is followed here. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u8);
} traced SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, struct cc_thread);
} threads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, CC_NCOUNTERS);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

static const struct cc_thread zero_thread;

#define PF_EXITING 0x4

static __always_inline void
count(__u32 i)
{
	__u64 *c = bpf_map_lookup_elem(&counters, &i);
	if (c)
		(*c)++;
}

static __always_inline bool
is_traced(__u32 tgid)
{
	return bpf_map_lookup_elem(&traced, &tgid) != NULL;
}

static __always_inline struct cc_thread *
thread_get(__u32 tid)
{
	struct cc_thread *t = bpf_map_lookup_elem(&threads, &tid);
	if (t)
		return t;
	bpf_map_update_elem(&threads, &tid, &zero_thread, BPF_NOEXIST);
	t = bpf_map_lookup_elem(&threads, &tid);
	if (!t)
		count(CC_C_NOTHREAD);
	return t;
}

/* Wakes the reader only once enough has piled up: a wakeup per record would cost more than
 * the record. */
static __always_inline __u64
wake_flags(void)
{
	return bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= targ_wake_bytes
	           ? BPF_RB_FORCE_WAKEUP
	           : BPF_RB_NO_WAKEUP;
}

/* Hands a record to the reader. */
static __always_inline void
submit(void *e)
{
	bpf_ringbuf_submit(e, wake_flags());
}

static __always_inline void
fill_hdr(struct cc_hdr *h, __u16 kind, __u16 size, __u64 ts, __u64 dur, __u32 pid, __u32 tid)
{
	h->ts = ts;
	h->dur = dur;
	h->pid = pid;
	h->tid = tid;
	h->kind = kind;
	h->size = size;
	h->cpu = bpf_get_smp_processor_id();
}

/* Whether the thread is doing libcuthook's own work (a command cutcapture started with the
 * library preloaded, hook.bpf.h): the library's thread, or a driver call the library makes for
 * itself on a program's thread (its mark read from the process: for ioctls only, as the driver
 * functions the library calls are not probed). */
static __always_inline bool
hook_own(const struct cc_thread *t)
{
	if (t->hook_thread)
		return true;
	if (!t->hook_mark)
		return false;
	struct cc_hook_mark m;
	if (bpf_probe_read_user(&m, sizeof(m), (void *)t->hook_mark))
		return false;
	return m.own != 0;
}

/* The programs, a file per layer (records.h's CC_L_* bits; layers.c's rows). */
#include "api.bpf.h"
#include "sys.bpf.h"
#include "irq.bpf.h"
#include "sched.bpf.h"
#include "task.bpf.h"
#include "kfunc.bpf.h"
#include "hook.bpf.h"
