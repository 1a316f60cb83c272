// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* task.bpf.h: the process tree (always on): forks, execs and exits of traced processes,
 * calls in flight when a thread ends, and the signals the command gets.
 * Part of cutcapture.bpf.c, which includes it after the maps and helpers every layer uses. */

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
	e->loader = 0;
	return e;
}

#define CC_AUXV_PAIRS 32 /* AT_VECTOR_SIZE is 52 words on x86-64: 26 pairs */
#define CC_AT_BASE 7
#define CC_AT_SECURE 23

/* What the new program's loader does with LD_PRELOAD (CC_LOADER_*), from the auxiliary vector
 * the kernel just wrote for it. */
static __always_inline __u32
exec_loader(struct task_struct *task)
{
	struct mm_struct *mm = BPF_CORE_READ(task, mm);
	unsigned long *auxv =
	    (unsigned long *)((char *)mm + bpf_core_field_offset(struct mm_struct, saved_auxv));
	unsigned long pair[2], base = 1, secure = 0;
	for (int i = 0; i < CC_AUXV_PAIRS; i++) {
		if (bpf_probe_read_kernel(pair, sizeof(pair), auxv + 2 * i) || pair[0] == 0)
			break;
		if (pair[0] == CC_AT_BASE)
			base = pair[1];
		else if (pair[0] == CC_AT_SECURE)
			secure = pair[1];
	}
	return (base ? 0 : CC_LOADER_STATIC) | (secure ? CC_LOADER_SECURE : 0);
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
	e->loader = exec_loader(task);
	unsigned long start = BPF_CORE_READ(task, mm, arg_start);
	unsigned long len = BPF_CORE_READ(task, mm, arg_end) - start;
	if (len > CC_CMDLEN)
		len = CC_CMDLEN;
	if (bpf_probe_read_user(e->cmd, len & (CC_CMDLEN * 2 - 1) & 0x1ff, (void *)start) == 0)
		e->cmdlen = len;
	__u64 ts = e->h.ts;
	submit(e);
	/* Its environment, for its rank (an auxiliary record: the loader reads /proc without). */
	struct cc_env *v = bpf_ringbuf_reserve(&events, sizeof(*v), 0);
	if (!v)
		return 0;
	fill_hdr(&v->h, CC_EV_ENV, sizeof(*v), ts, 0, id >> 32, (__u32)id);
	start = BPF_CORE_READ(task, mm, env_start);
	len = BPF_CORE_READ(task, mm, env_end) - start;
	if (len > CC_ENVLEN)
		len = CC_ENVLEN;
	v->len = 0;
	if (bpf_probe_read_user(v->env, len & (CC_ENVLEN * 2 - 1) & (CC_ENVLEN * 2 - 1),
	                        (void *)start) == 0)
		v->len = len;
	submit(v);
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
