/* drain.c: what comes out of the ring buffer, and what the loader adds to it (lost and
 * process records, parts of long off-CPU periods), held in order until it can be written. */
#include <err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "decode.h"
#include "drain.h"
#include "event.h"
#include "order.h"

static struct order Q;

static struct cc_hdr *
copy_rec(const void *data, size_t size)
{
	struct cc_hdr *h = malloc(size);
	if (!h)
		err(CUT_EXIT_FATAL, "malloc");
	memcpy(h, data, size);
	return h;
}

int
drain_ring(void *ctx, void *data, size_t size)
{
	(void)ctx;
	const struct cc_hdr *h = data;
	if (size < sizeof(*h) || h->size > size || h->size < sizeof(*h))
		return 0;
	struct cc_hdr *rec = copy_rec(data, h->size);
	if (rec->kind == CC_EV_TASK) {
		const struct cc_task *t = (const struct cc_task *)rec;
		if (t->what == CC_TASK_THREAD || t->what == CC_TASK_EXIT)
			decode_thread_note(t->h.pid, t->h.tid, t->comm);
	} else if (rec->tid && !decode_thread_known(rec->tid)) {
		decode_thread_note(rec->pid, rec->tid, NULL);
	}
	if (rec->kind == CC_EV_SCHED)
		order_offcpu_arrived(&Q, rec);
	order_push(&Q, rec);
	return 0;
}

void
drain_lost(uint64_t ts, const char *layer, uint64_t count, const char *reason)
{
	struct lost_rec r = {.count = count, .layer = layer, .reason = reason};
	r.h.ts = ts;
	r.h.kind = EV_LOST;
	r.h.size = sizeof(r);
	r.h.pid = r.h.tid = (uint32_t)getpid();
	order_push(&Q, copy_rec(&r, sizeof(r)));
}

void
drain_process(uint64_t ts, uint32_t pid, uint32_t ppid, const char *comm, const char *cmdline)
{
	struct cc_task t = {0};
	t.h.ts = ts;
	t.h.kind = EV_PROC;
	t.h.size = sizeof(t);
	t.h.pid = t.h.tid = pid;
	t.what = EV_PROC;
	t.ppid = ppid;
	snprintf(t.comm, sizeof(t.comm), "%s", comm);
	size_t n = strlen(cmdline);
	t.cmdlen = n < CC_CMDLEN ? (uint32_t)n : CC_CMDLEN;
	memcpy(t.cmd, cmdline, t.cmdlen);
	order_push(&Q, copy_rec(&t, sizeof(t)));
}

uint64_t
drain_offcpu_hold(uint32_t tid, uint64_t off_ts, uint32_t state, uint32_t cpu, uint64_t now,
                  uint64_t max_age, uint64_t upto)
{
	uint64_t part, hold = order_offcpu_hold(&Q, tid, off_ts, now, max_age, upto, &part);
	if (!part)
		return hold;
	struct cc_sched r = {0};
	r.h.ts = part;
	r.h.dur = upto - part;
	r.h.kind = CC_EV_SCHED;
	r.h.size = sizeof(r);
	r.h.pid = decode_thread_pid(tid);
	r.h.tid = tid;
	r.h.cpu = cpu;
	r.state = state;
	r.pad = 1;
	order_push(&Q, copy_rec(&r, sizeof(r)));
	return hold;
}

void
drain_flush(uint64_t upto)
{
	struct cc_hdr *h;
	while ((h = order_pop(&Q, upto))) {
		decode_record(h);
		free(h);
	}
}

size_t
drain_pending(void)
{
	return order_pending(&Q);
}

void
drain_free(void)
{
	order_free(&Q);
}
