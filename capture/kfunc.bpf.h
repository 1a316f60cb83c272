// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* kfunc.bpf.h: the kernel layer: NVIDIA driver functions, through fentry/fexit or kprobes.
 * Part of cutcapture.bpf.c, which includes it after the maps and helpers every layer uses. */
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
