// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* sys.bpf.h: the ioctl layer: ioctl, open, close, mmap and munmap of NVIDIA device files
 * (raw system call tracepoints), with what an RM escape carries.
 * Part of cutcapture.bpf.c, which includes it after the maps and helpers every layer uses. */

#define NR_open 2
#define NR_close 3
#define NR_mmap 9
#define NR_munmap 11
#define NR_ioctl 16
#define NR_openat 257

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
	if (hook_own(t)) {
		count(CC_C_OWN);
		return 0;
	}
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
