// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* cutcapture.bpf.c: the probes of cutcapture(8): driver API entry/return (uprobes), ioctl,
 * open, close, mmap and munmap of NVIDIA device files, NVIDIA interrupts, the scheduling of
 * traced threads, and the process tree. One record per finished call into the ring buffer. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "cutcapture.h"

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

struct irq_start {
	__u64 ts;
	__u32 irq;
	__u32 pad;
	char name[CC_COMMLEN];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct irq_start);
} irqstart SEC(".maps");

struct kkey {
	__u32 tid;
	__u32 idx;
};

/* Kernel-layer calls in flight, by thread and function. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, struct kkey);
	__type(value, __u64);
} kstart SEC(".maps");

/* A driver API record with a string, built here, then copied to the ring at its length. */
struct api_scratch {
	__u8 b[sizeof(struct cc_api) + CC_STRLEN];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct api_scratch);
} scratch SEC(".maps");

static const struct cc_thread zero_thread;

#define NR_open 2
#define NR_close 3
#define NR_mmap 9
#define NR_munmap 11
#define NR_ioctl 16
#define NR_openat 257
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

/* ---- driver API ---- */

SEC("uprobe.multi")
int
api_entry(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	if (!is_traced(id >> 32))
		return 0;
	struct cc_thread *t = thread_get((__u32)id);
	if (!t)
		return 0;
	if (targ_bare) {
		t->f[0].ts = bpf_ktime_get_ns();
		return 0;
	}
	__u32 d = t->depth;
	if (d >= CC_DEPTH) {
		count(CC_C_DEPTH);
		return 0;
	}
	struct cc_frame *f = &t->f[d];
	__u32 fid = bpf_get_attach_cookie(ctx) & (CC_MAX_FUNCS - 1);
	f->fid = fid;
	f->sp = PT_REGS_SP(ctx);
	f->a[0] = PT_REGS_PARM1(ctx);
	f->a[1] = PT_REGS_PARM2(ctx);
	f->a[2] = PT_REGS_PARM3(ctx);
	f->a[3] = PT_REGS_PARM4(ctx);
	f->a[4] = PT_REGS_PARM5(ctx);
	f->a[5] = PT_REGS_PARM6(ctx);
	/* The words beyond the registers (capture/api/args.h says which): the stack, the
	 * struct argument 0 points to, or some words of it. */
	__u8 extra = targ_fdesc[fid].extra;
	__u32 n = targ_fdesc[fid].nextra;
	if (n > CC_NEXTRA)
		n = CC_NEXTRA;
	f->flags = 0;
	if (extra == CC_EXTRA_STACK || extra == CC_EXTRA_ARG0) {
		__u64 from = extra == CC_EXTRA_STACK ? f->sp + 8 : f->a[0];
		if (!bpf_probe_read_user(&f->a[6], n * 8, (void *)from))
			f->flags = CC_A_EXTRA;
	} else if (extra == CC_EXTRA_GATHER) {
		long bad = 0;
		for (__u32 i = 0; i < CC_NEXTRA; i++) {
			if (i >= n)
				break;
			__u64 off = (__u64)targ_fdesc[fid].word[i] * 8;
			bad |= bpf_probe_read_user(&f->a[6 + i], 8, (void *)(f->a[0] + off));
		}
		if (!bad)
			f->flags = CC_A_EXTRA;
	}
	/* The clock last, so the probe's own work falls outside the call. */
	f->ts = bpf_ktime_get_ns();
	if (d == 0)
		t->api_oldest = f->ts;
	t->depth = d + 1;
	return 0;
}

static __always_inline void
api_fill(struct cc_api *e, const struct cc_frame *f, __u32 fid, __u64 now, __u64 id,
         struct pt_regs *ctx, __u16 size)
{
	fill_hdr(&e->h, CC_EV_API, size, f->ts, now - f->ts, id >> 32, (__u32)id);
	e->fid = fid;
	e->ret = (__s32)PT_REGS_RC(ctx);
	e->flags = f->flags;
	e->pad = 0;
	__builtin_memcpy(e->a, f->a, sizeof(e->a));
	/* The out values, at their size (a 4-byte int may end a page). */
	for (int k = 0; k < 2; k++) {
		__u8 out = targ_fdesc[fid].out[k];
		e->out[k] = 0;
		if (out && out <= CC_NARGS)
			bpf_probe_read_user(&e->out[k], targ_fdesc[fid].outsize[k] == 4 ? 4 : 8,
			                    (void *)f->a[(out - 1) & 15]);
	}
}

SEC("uretprobe.multi")
int
api_return(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct cc_thread *t = bpf_map_lookup_elem(&threads, &tid);
	if (!t)
		return 0;
	__u64 now = bpf_ktime_get_ns();
	if (targ_bare) {
		__u32 k = CC_C_BARE_NS;
		__u64 *c = bpf_map_lookup_elem(&counters, &k);
		if (c)
			*c += now - t->f[0].ts;
		count(CC_C_BARE_CALLS);
		return 0;
	}
	/* The return belongs to the frame entered with the stack pointer 8 bytes lower (the
	 * return address); frames above it never returned (longjmp, missed probes). */
	__u64 sp = PT_REGS_SP(ctx) - 8;
	__u32 d = t->depth;
	int i;
	struct cc_frame *f = NULL;
	for (i = CC_DEPTH - 1; i >= 0; i--) {
		if ((__u32)i < d && t->f[i].sp == sp) {
			f = &t->f[i];
			break;
		}
	}
	if (!f) {
		count(CC_C_UNMATCHED);
		return 0;
	}
	__u32 fid = f->fid & (CC_MAX_FUNCS - 1);
	__u8 strmode = targ_fdesc[fid].strmode;
	if (strmode == CC_STR_NONE) {
		struct cc_api *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
		if (!e) {
			count(CC_C_LOST_API);
			goto pop;
		}
		api_fill(e, f, fid, now, id, ctx, sizeof(*e));
		submit(e);
	} else {
		/* Built aside, then copied to the ring at the string's length. */
		__u32 zero = 0;
		struct api_scratch *sc = bpf_map_lookup_elem(&scratch, &zero);
		if (!sc)
			goto pop;
		struct cc_api *e = (struct cc_api *)sc->b;
		api_fill(e, f, fid, now, id, ctx, sizeof(*e));
		__u64 p = f->a[(targ_fdesc[fid].str - 1) & 15];
		if (strmode == CC_STR_OUT && bpf_probe_read_user(&p, sizeof(p), (void *)p))
			p = 0;
		long len = p ? bpf_probe_read_user_str(e->str, CC_STRLEN, (void *)p) : 0;
		if (len < 1) {
			e->str[0] = 0;
			len = 1;
		}
		if (len > CC_STRLEN)
			len = CC_STRLEN;
		__u32 size = sizeof(*e) + (__u32)len;
		e->h.size = (__u16)size;
		if (bpf_ringbuf_output(&events, e, size, wake_flags()))
			count(CC_C_LOST_API);
	}
pop:
	/* Only now, after the record is in the ring: the reader takes a thread without calls
	 * in flight as having nothing older to deliver. */
	t->depth = i;
	t->api_oldest = i > 0 ? t->f[0].ts : 0;
	return 0;
}

/* ---- ioctl, open, close, mmap, munmap of device files ---- */

static __always_inline __u32
fd_rdev(__u32 fd)
{
	struct task_struct *task = (void *)bpf_get_current_task();
	struct fdtable *fdt = BPF_CORE_READ(task, files, fdt);
	if (!fdt || fd >= BPF_CORE_READ(fdt, max_fds))
		return 0;
	struct file **fds = BPF_CORE_READ(fdt, fd);
	struct file *file = NULL;
	bpf_probe_read_kernel(&file, sizeof(file), &fds[fd]);
	if (!file)
		return 0;
	return BPF_CORE_READ(file, f_inode, i_rdev);
}

static __always_inline __u32
dev_kind(__u32 rdev)
{
	__u32 major = rdev >> 20, minor = rdev & 0xfffff;
	if (!rdev)
		return 0;
	for (int i = 0; i < CC_MAX_DEVS; i++) {
		if (i >= targ_ndevs)
			break;
		if (targ_devs[i].major == major &&
		    (targ_devs[i].minor == CC_ANY_MINOR || targ_devs[i].minor == minor))
			return targ_devs[i].kind;
	}
	return 0;
}

/* What an RM escape carries at entry: the control command (NVOS54.cmd at 8) or the class
 * (NVOS21/NVOS64.hClass at 12), and where its status will be (nv_ioctls.tsv offsets). */
static __always_inline void
rm_payload(struct cc_thread *t, __u32 nr, __u32 size, __u64 p)
{
	__u16 stoff = 0;
	switch (nr) {
	case 0x2A: /* NV_ESC_RM_CONTROL: NVOS54 */
		if (!bpf_probe_read_user(&t->sys_sub, 4, (void *)(p + 8)))
			t->sys_flags |= CC_IO_SUB;
		stoff = 28;
		break;
	case 0x2B: /* NV_ESC_RM_ALLOC: NVOS21 (32 bytes) or NVOS64 (48) */
		if (!bpf_probe_read_user(&t->sys_sub, 4, (void *)(p + 12)))
			t->sys_flags |= CC_IO_SUB | CC_IO_CLASS;
		stoff = size == 48 ? 40 : size == 32 ? 28 : 0;
		break;
	case 0x29: /* NV_ESC_RM_FREE: NVOS00 */ stoff = 12; break;
	case 0x27: /* NV_ESC_RM_ALLOC_MEMORY: NVOS02 with fd */
	case 0x4E: /* NV_ESC_RM_MAP_MEMORY: NVOS33 with fd */ stoff = 40; break;
	case 0xCE: /* NV_ESC_ALLOC_OS_EVENT */ stoff = 12; break;
	}
	if (stoff && p) {
		t->sys_ptr = p;
		t->sys_stoff = stoff;
	}
}

static __always_inline void
ioctl_enter(struct cc_thread *t, __u32 kind, __u32 cmd, __u64 arg)
{
	t->sys_cmd = cmd;
	t->sys_arg = arg;
	if (kind != CC_DEV_RM || ((cmd >> 8) & 0xff) != 'F')
		return;
	__u32 nr = cmd & 0xff, size = (cmd >> 16) & 0x3fff;
	__u64 p = arg;
	if (nr == 0xD3) { /* NV_ESC_IOCTL_XFER_CMD: {u32 cmd; u32 size; u64 ptr} */
		struct {
			__u32 cmd, size;
			__u64 ptr;
		} x;
		if (bpf_probe_read_user(&x, sizeof(x), (void *)arg))
			return;
		t->sys_xfer = x.cmd;
		t->sys_flags |= CC_IO_XFER;
		nr = x.cmd & 0xff;
		size = x.size;
		p = x.ptr;
	}
	rm_payload(t, nr, size, p);
}

struct vma_ctx {
	__u32 rdev;
};

static long
vma_rdev(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	struct vma_ctx *c = data;
	struct file *file = BPF_CORE_READ(vma, vm_file);
	if (file)
		c->rdev = BPF_CORE_READ(file, f_inode, i_rdev);
	return 0;
}

static __always_inline bool
sys_interesting(long nr)
{
	return nr == NR_ioctl || nr == NR_openat || nr == NR_open || nr == NR_close ||
	       nr == NR_mmap || nr == NR_munmap;
}

SEC("raw_tp/sys_enter")
int
sys_enter(struct bpf_raw_tracepoint_args *ctx)
{
	long nr = ctx->args[1];
	if (!sys_interesting(nr))
		return 0;
	__u64 id = bpf_get_current_pid_tgid();
	if (!is_traced(id >> 32))
		return 0;
	struct pt_regs *regs = (struct pt_regs *)ctx->args[0];
	__u32 fd = 0, rdev = 0, kind = 0;
	__u64 a0 = BPF_CORE_READ(regs, di), a1 = BPF_CORE_READ(regs, si);
	switch (nr) {
	case NR_ioctl:
	case NR_close: fd = (__u32)a0; break;
	case NR_mmap: fd = (__u32)BPF_CORE_READ(regs, r8); break;
	case NR_munmap:
		if (bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_find_vma)) {
			struct vma_ctx vc = {};
			bpf_find_vma(bpf_get_current_task_btf(), a0, vma_rdev, &vc, 0);
			rdev = vc.rdev;
		}
		break;
	}
	if (nr != NR_open && nr != NR_openat) {
		if (nr != NR_munmap)
			rdev = fd_rdev(fd);
		kind = dev_kind(rdev);
		if (!kind)
			return 0;
	}
	struct cc_thread *t = thread_get((__u32)id);
	if (!t)
		return 0;
	t->sys_nr = nr;
	t->sys_fd = fd;
	t->sys_rdev = rdev;
	t->sys_flags = 0;
	t->sys_ptr = 0;
	t->sys_stoff = 0;
	switch (nr) {
	case NR_ioctl: ioctl_enter(t, kind, (__u32)a1, BPF_CORE_READ(regs, dx)); break;
	case NR_open: t->sys_arg = a0; break;
	case NR_openat: t->sys_arg = a1; break;
	case NR_mmap:
		t->sys_arg = a1; /* length */
		t->sys_off = BPF_CORE_READ(regs, r9);
		break;
	case NR_munmap:
		t->sys_arg = a1;
		t->sys_off = a0; /* address */
		break;
	}
	t->sys_ts = bpf_ktime_get_ns();
	return 0;
}

static __always_inline void
file_exit(struct cc_thread *t, __u64 id, __u64 now, long ret)
{
	__u32 nr = t->sys_nr, rdev = t->sys_rdev, fd = t->sys_fd;
	if (nr == NR_open || nr == NR_openat) {
		if (ret < 0)
			return;
		fd = (__u32)ret;
		rdev = fd_rdev(fd);
		if (!dev_kind(rdev))
			return;
	}
	struct cc_file *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count(CC_C_LOST_IOCTL);
		return;
	}
	fill_hdr(&e->h, CC_EV_FILE, sizeof(*e), t->sys_ts, now - t->sys_ts, id >> 32, (__u32)id);
	e->ret = ret;
	e->nr = nr;
	e->fd = fd;
	e->rdev = rdev;
	e->addr = nr == NR_mmap ? (__u64)ret : t->sys_off;
	e->len = t->sys_arg;
	e->off = t->sys_off;
	e->path[0] = 0;
	if (nr == NR_open || nr == NR_openat) {
		e->len = 0;
		e->addr = 0;
		e->off = 0;
		bpf_probe_read_user_str(e->path, sizeof(e->path), (void *)t->sys_arg);
	}
	submit(e);
}

SEC("raw_tp/sys_exit")
int
sys_exit(struct bpf_raw_tracepoint_args *ctx)
{
	struct pt_regs *regs = (struct pt_regs *)ctx->args[0];
	long nr = BPF_CORE_READ(regs, orig_ax);
	if (!sys_interesting(nr))
		return 0;
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct cc_thread *t = bpf_map_lookup_elem(&threads, &tid);
	if (!t || !t->sys_ts)
		return 0;
	if (t->sys_nr != nr) {
		t->sys_ts = 0;
		return 0;
	}
	__u64 now = bpf_ktime_get_ns();
	long ret = ctx->args[1];
	if (nr != NR_ioctl) {
		file_exit(t, id, now, ret);
		t->sys_ts = 0;
		return 0;
	}
	struct cc_ioctl *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count(CC_C_LOST_IOCTL);
		t->sys_ts = 0;
		return 0;
	}
	fill_hdr(&e->h, CC_EV_IOCTL, sizeof(*e), t->sys_ts, now - t->sys_ts, id >> 32, tid);
	e->ret = ret;
	e->fd = t->sys_fd;
	e->rdev = t->sys_rdev;
	e->cmd = t->sys_cmd;
	e->sub = t->sys_sub;
	e->xfer = t->sys_xfer;
	e->flags = t->sys_flags;
	e->status = 0;
	if (t->sys_ptr && !bpf_probe_read_user(&e->status, 4, (void *)(t->sys_ptr + t->sys_stoff)))
		e->flags |= CC_IO_STATUS;
	submit(e);
	t->sys_ts = 0;
	return 0;
}

/* ---- interrupts ---- */

SEC("raw_tp/irq_handler_entry")
int
irq_entry(struct bpf_raw_tracepoint_args *ctx)
{
	struct irqaction *action = (void *)ctx->args[1];
	char name[CC_COMMLEN] = {};
	bpf_probe_read_kernel_str(name, sizeof(name), BPF_CORE_READ(action, name));
	for (int i = 0; i < CC_COMMLEN; i++) {
		if (i >= targ_irq_prefix_len)
			break;
		if (name[i] != targ_irq_prefix[i])
			return 0;
	}
	__u32 zero = 0;
	struct irq_start *s = bpf_map_lookup_elem(&irqstart, &zero);
	if (!s)
		return 0;
	s->irq = (__u32)ctx->args[0];
	__builtin_memcpy(s->name, name, sizeof(name));
	s->ts = bpf_ktime_get_ns();
	return 0;
}

SEC("raw_tp/irq_handler_exit")
int
irq_exit(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 zero = 0;
	struct irq_start *s = bpf_map_lookup_elem(&irqstart, &zero);
	if (!s || !s->ts)
		return 0;
	__u64 now = bpf_ktime_get_ns();
	struct cc_irq *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count(CC_C_LOST_IRQ);
		s->ts = 0;
		return 0;
	}
	fill_hdr(&e->h, CC_EV_IRQ, sizeof(*e), s->ts, now - s->ts, 0, 0);
	e->irq = s->irq;
	e->ret = (__s32)ctx->args[2];
	__builtin_memcpy(e->name, s->name, sizeof(e->name));
	submit(e);
	s->ts = 0;
	return 0;
}

/* ---- scheduling ---- */

static __always_inline __u32
state_letter(struct task_struct *p, bool preempt)
{
	long state;
	if (preempt)
		return 'R';
	if (bpf_core_field_exists(p->__state))
		state = BPF_CORE_READ(p, __state);
	else
		state = BPF_CORE_READ((struct task_struct___pre514 *)p, state);
	if (state & 1)
		return 'S';
	if (state & 2)
		return state & 0x400 ? 'I' : 'D'; /* TASK_NOLOAD: idle, not blocked */
	if (state & 4)
		return 'T';
	if (state & 8)
		return 't';
	return state ? '?' : 'R';
}

SEC("raw_tp/sched_switch")
int
sched_switch(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *prev = (void *)ctx->args[1], *next = (void *)ctx->args[2];
	__u64 now = 0;
	__u32 ptgid = BPF_CORE_READ(prev, tgid);
	if (is_traced(ptgid) && !(BPF_CORE_READ(prev, flags) & PF_EXITING)) {
		struct cc_thread *t = thread_get(BPF_CORE_READ(prev, pid));
		if (t) {
			now = bpf_ktime_get_ns();
			t->off_ts = now;
			t->wake_ts = 0;
			t->waker = 0;
			t->off_cpu = bpf_get_smp_processor_id();
			t->off_state = state_letter(prev, ctx->args[0]);
		}
	}
	__u32 ntgid = BPF_CORE_READ(next, tgid);
	if (!is_traced(ntgid))
		return 0;
	__u32 ntid = BPF_CORE_READ(next, pid);
	struct cc_thread *t = bpf_map_lookup_elem(&threads, &ntid);
	if (!t || !t->off_ts)
		return 0;
	if (!now)
		now = bpf_ktime_get_ns();
	__u64 dur = now - t->off_ts;
	if (dur >= targ_sched_min_ns) {
		struct cc_sched *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
		if (e) {
			fill_hdr(&e->h, CC_EV_SCHED, sizeof(*e), t->off_ts, dur, ntgid, ntid);
			e->h.cpu = t->off_cpu;
			e->cpu_in = bpf_get_smp_processor_id();
			e->state = t->off_state;
			e->waker = t->waker;
			e->runq = t->wake_ts ? now - t->wake_ts : 0;
			submit(e);
		} else {
			count(CC_C_LOST_SCHED);
		}
	}
	t->off_ts = 0;
	return 0;
}

SEC("raw_tp/sched_wakeup")
int
sched_wakeup(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *p = (void *)ctx->args[0];
	if (!is_traced(BPF_CORE_READ(p, tgid)))
		return 0;
	__u32 tid = BPF_CORE_READ(p, pid);
	struct cc_thread *t = bpf_map_lookup_elem(&threads, &tid);
	if (!t || !t->off_ts || t->wake_ts)
		return 0;
	t->wake_ts = bpf_ktime_get_ns();
	t->waker = (__u32)bpf_get_current_pid_tgid();
	return 0;
}

/* ---- the process tree ---- */

static __always_inline struct cc_task *
task_record(__u32 what, __u32 pid, __u32 tid, __u32 ppid)
{
	struct cc_task *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count(CC_C_LOST_META);
		return NULL;
	}
	fill_hdr(&e->h, CC_EV_TASK, sizeof(*e), bpf_ktime_get_ns(), 0, pid, tid);
	e->what = what;
	e->ppid = ppid;
	e->cmdlen = 0;
	return e;
}

SEC("raw_tp/sched_process_fork")
int
proc_fork(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *parent = (void *)ctx->args[0], *child = (void *)ctx->args[1];
	__u32 ptgid = BPF_CORE_READ(parent, tgid);
	if (!is_traced(ptgid))
		return 0;
	__u32 ctgid = BPF_CORE_READ(child, tgid), cpid = BPF_CORE_READ(child, pid);
	bool thread = ctgid == ptgid;
	if (!thread) {
		__u8 one = 1;
		bpf_map_update_elem(&traced, &ctgid, &one, BPF_ANY);
	}
	struct cc_task *e = task_record(thread ? CC_TASK_THREAD : CC_TASK_FORK, ctgid, cpid, ptgid);
	if (!e)
		return 0;
	BPF_CORE_READ_STR_INTO(&e->comm, child, comm);
	submit(e);
	return 0;
}

SEC("raw_tp/sched_process_exec")
int
proc_exec(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	if (!is_traced(id >> 32))
		return 0;
	struct task_struct *task = (void *)bpf_get_current_task();
	struct cc_task *e =
	    task_record(CC_TASK_EXEC, id >> 32, (__u32)id, BPF_CORE_READ(task, real_parent, tgid));
	if (!e)
		return 0;
	bpf_get_current_comm(&e->comm, sizeof(e->comm));
	unsigned long start = BPF_CORE_READ(task, mm, arg_start);
	unsigned long len = BPF_CORE_READ(task, mm, arg_end) - start;
	if (len > CC_CMDLEN)
		len = CC_CMDLEN;
	if (bpf_probe_read_user(e->cmd, len & (CC_CMDLEN * 2 - 1) & 0x1ff, (void *)start) == 0)
		e->cmdlen = len;
	submit(e);
	return 0;
}

/* A thread that ends inside driver API calls (a crash, exit() from a callback, a fatal
 * signal) never returns from them: each is handed over as CC_EV_UNFINISHED, so the loader
 * can say it was lost, never silently. */
static __always_inline void
api_unfinished(struct cc_thread *t, __u32 tgid, __u32 tid)
{
	if (targ_bare)
		return;
	__u32 d = t->depth;
	__u64 now = bpf_ktime_get_ns();
	for (int i = 0; i < CC_DEPTH; i++) {
		if ((__u32)i >= d)
			break;
		struct cc_api *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
		if (!e) {
			count(CC_C_LOST_API);
			continue;
		}
		fill_hdr(&e->h, CC_EV_UNFINISHED, sizeof(*e), t->f[i].ts, now - t->f[i].ts, tgid,
		         tid);
		e->fid = t->f[i].fid & (CC_MAX_FUNCS - 1);
		e->ret = 0;
		e->flags = t->f[i].flags;
		e->pad = 0;
		e->out[0] = e->out[1] = 0;
		__builtin_memcpy(e->a, t->f[i].a, sizeof(e->a));
		submit(e);
	}
}

SEC("raw_tp/sched_process_exit")
int
proc_exit(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;
	/* A thread of a traced process may get here after the last thread to leave has
	 * already removed the process (threads decrement "live" and reach this tracepoint in
	 * either order): its state goes too. */
	struct cc_thread *t = bpf_map_lookup_elem(&threads, &tid);
	if (!t && !is_traced(tgid))
		return 0;
	if (t)
		api_unfinished(t, tgid, tid);
	bpf_map_delete_elem(&threads, &tid);
	struct task_struct *task = (void *)bpf_get_current_task();
	if (BPF_CORE_READ(task, signal, live.counter) == 0)
		bpf_map_delete_elem(&traced, &tgid);
	struct cc_task *e = task_record(CC_TASK_EXIT, tgid, tid, 0);
	if (!e)
		return 0;
	bpf_get_current_comm(&e->comm, sizeof(e->comm));
	submit(e);
	return 0;
}

/* The command's pid, set by the loader once it is started, and when it was last sent each
 * signal: the loader passes a SIGINT or SIGTERM it got from kill(1) on to the command only
 * when the command did not get it too (a signal to the process group, or to every process
 * of a job, reaches both). */
__u32 cmd_tgid = 0;
__u64 cmd_sig_ts[32] = {};

SEC("raw_tp/signal_generate")
int
sig_generate(struct bpf_raw_tracepoint_args *ctx)
{
	int sig = (int)ctx->args[0];
	struct task_struct *task = (void *)ctx->args[2];
	if (!cmd_tgid || sig <= 0 || sig >= 32 || BPF_CORE_READ(task, tgid) != cmd_tgid)
		return 0;
	cmd_sig_ts[sig & 31] = bpf_ktime_get_ns();
	return 0;
}

/* ---- kernel layer: driver functions, where the kernel allows fentry or kprobes ---- */

static __always_inline int
kfunc_enter(__u32 idx)
{
	__u64 id = bpf_get_current_pid_tgid();
	if (!(targ_kisr & (1u << idx)) && !is_traced(id >> 32))
		return 0;
	struct kkey k = {(__u32)id, idx};
	__u64 now = bpf_ktime_get_ns();
	bpf_map_update_elem(&kstart, &k, &now, BPF_ANY);
	return 0;
}

static __always_inline int
kfunc_exit(__u32 idx, __s64 ret)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct kkey k = {(__u32)id, idx};
	__u64 *start = bpf_map_lookup_elem(&kstart, &k);
	if (!start)
		return 0;
	__u64 ts = *start, now = bpf_ktime_get_ns();
	bool isr = targ_kisr & (1u << idx);
	struct cc_kfunc *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (e) {
		fill_hdr(&e->h, CC_EV_KFUNC, sizeof(*e), ts, now - ts, isr ? 0 : id >> 32,
		         isr ? 0 : (__u32)id);
		e->ret = ret;
		e->idx = idx;
		submit(e);
	} else {
		count(CC_C_LOST_KERNEL);
	}
	bpf_map_delete_elem(&kstart, &k);
	return 0;
}

#define KFUNC_PAIR(i)                                                                              \
	SEC("fentry")                                                                              \
	int kfn_entry##i(void *ctx)                                                                \
	{                                                                                          \
		return kfunc_enter(i);                                                             \
	}                                                                                          \
	SEC("fexit")                                                                               \
	int kfn_exit##i(void *ctx)                                                                 \
	{                                                                                          \
		__u64 ret = 0;                                                                     \
		bpf_get_func_ret(ctx, &ret);                                                       \
		return kfunc_exit(i, (__s64)ret);                                                  \
	}
KFUNC_PAIR(0)
KFUNC_PAIR(1)
KFUNC_PAIR(2)
KFUNC_PAIR(3)
KFUNC_PAIR(4)
KFUNC_PAIR(5)
KFUNC_PAIR(6)
KFUNC_PAIR(7)

SEC("kprobe")
int
kprobe_entry(struct pt_regs *ctx)
{
	return kfunc_enter(bpf_get_attach_cookie(ctx) & (CC_MAX_KFUNCS - 1));
}

SEC("kretprobe")
int
kprobe_return(struct pt_regs *ctx)
{
	return kfunc_exit(bpf_get_attach_cookie(ctx) & (CC_MAX_KFUNCS - 1), PT_REGS_RC(ctx));
}
