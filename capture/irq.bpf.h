// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* irq.bpf.h: the irq layer: NVIDIA interrupt handlers.
 * Part of cutcapture.bpf.c, which includes it after the maps and helpers every layer uses. */
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
