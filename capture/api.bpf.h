// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* api.bpf.h: the api and runtime layers: entry and return of driver and runtime API functions
 * (uprobes), one record per finished call; what is read of a call is capture/api's description (cc_fdesc).
 * Part of cutcapture.bpf.c, which includes it after the maps and helpers every layer uses. */

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

/* Entry of a call, probed: the runtime layer's programs are the same (cookies after the
 * driver's), so a runtime call and the driver calls inside it share the thread's frames. */
static __always_inline int
call_entry(struct pt_regs *ctx, bool runtime)
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
	if (t->hook_thread) { /* libcuthook's own thread (hook.bpf.h) */
		count(CC_C_OWN);
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
	f->flags = runtime ? CC_A_RUNTIME : 0;
	/* A call made by a probed function of the same layer (libcudart's cudaLaunchKernel
	 * calling its cudaLaunchKernel_ptsz directly, libcuda's exported functions calling each
	 * other) is the library's doing, not the program's: its frame is kept so that its
	 * return matches, but nothing is recorded (neither cuthook nor CUPTI sees such calls). */
	if (d > 0 && !(t->f[(d - 1) & (CC_DEPTH - 1)].flags & CC_A_RUNTIME) == !runtime) {
		f->flags |= CC_A_INNER;
		f->ts = bpf_ktime_get_ns();
		t->depth = d + 1;
		count(CC_C_INNER);
		return 0;
	}
	f->a[0] = PT_REGS_PARM1(ctx);
	f->a[1] = PT_REGS_PARM2(ctx);
	f->a[2] = PT_REGS_PARM3(ctx);
	f->a[3] = PT_REGS_PARM4(ctx);
	f->a[4] = PT_REGS_PARM5(ctx);
	f->a[5] = PT_REGS_PARM6(ctx);
	/* The words beyond the registers (capture/api/call.h says which): the stack, the
	 * struct argument 0 points to, or some words of it. */
	__u8 extra = targ_fdesc[fid].extra;
	__u32 n = targ_fdesc[fid].nextra;
	if (n > CC_NEXTRA)
		n = CC_NEXTRA;
	if (extra == CC_EXTRA_STACK || extra == CC_EXTRA_ARG0) {
		__u64 from = extra == CC_EXTRA_STACK ? f->sp + 8 : f->a[0];
		if (!bpf_probe_read_user(&f->a[6], n * 8, (void *)from))
			f->flags |= CC_A_EXTRA;
	} else if (extra == CC_EXTRA_GATHER) {
		long bad = 0;
		for (__u32 i = 0; i < CC_NEXTRA; i++) {
			if (i >= n)
				break;
			__u64 off = (__u64)targ_fdesc[fid].word[i] * 8;
			bad |= bpf_probe_read_user(&f->a[6 + i], 8, (void *)(f->a[0] + off));
		}
		if (!bad)
			f->flags |= CC_A_EXTRA;
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

static __always_inline int
call_return(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct cc_thread *t = bpf_map_lookup_elem(&threads, &tid);
	if (!t)
		return 0;
	__u64 now = bpf_ktime_get_ns();
	if (t->hook_thread)
		return 0;
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
	if (f->flags & CC_A_INNER)
		goto pop;
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

SEC("uprobe.multi")
int
api_entry(struct pt_regs *ctx)
{
	return call_entry(ctx, false);
}

SEC("uretprobe.multi")
int
api_return(struct pt_regs *ctx)
{
	return call_return(ctx);
}

SEC("uprobe.multi")
int
rt_entry(struct pt_regs *ctx)
{
	return call_entry(ctx, true);
}

SEC("uretprobe.multi")
int
rt_return(struct pt_regs *ctx)
{
	return call_return(ctx);
}
