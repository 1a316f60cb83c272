// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* sched.bpf.h: the sched layer: off-CPU periods of traced threads, with their state, waker
 * and run-queue wait.
 * Part of cutcapture.bpf.c, which includes it after the maps and helpers every layer uses. */

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
		if (t && !t->hook_thread) {
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
	if (!t || !t->off_ts || t->hook_thread) /* libcuthook's thread, registered since */
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
