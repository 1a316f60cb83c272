/* drain.c: the capture loop: what comes out of the ring buffer and what the loader adds to it
 * (lost and process records, parts of long off-CPU periods), held in order until nothing
 * older can still arrive, then written. */
#include <err.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "decode.h"
#include "drain.h"
#include "cut.h"
#include "event.h"
#include "layers.h"
#include "names.h"
#include "order.h"
#include "output.h"
#include "target.h"

#include "cutcapture.skel.h"

#define NS 1000000000ull
#define MS 1000000ull
/* How long a record may take from its clock reading to the ring buffer, at most. */
#define SLACK_NS (100 * MS)
/* How long an off-CPU period may hold the output back before it is written in parts. */
#define MAX_HOLD_NS (1 * NS)
#define SCAN_NS (100 * MS)
/* How often buffered output is written at the least, so that a reader of the pipe sees it. */
#define FLUSH_NS (1 * NS)

static struct order Q;

static struct cc_hdr *
copy_rec(const void *data, size_t size)
{
	struct cc_hdr *h = cut_xmalloc(size);
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
	if (h->kind == CC_EV_ENV) { /* read now; no record of its own */
		const struct cc_env *v = data;
		if (h->size >= sizeof(*v))
			names_env_block(h->pid, v->env, v->len < CC_ENVLEN ? v->len : CC_ENVLEN);
		return 0;
	}
	struct cc_hdr *rec = copy_rec(data, h->size);
	if (rec->kind == CC_EV_TASK) {
		const struct cc_task *t = (const struct cc_task *)rec;
		if (t->what == CC_TASK_THREAD || t->what == CC_TASK_EXIT)
			names_thread_note(t->h.pid, t->h.tid, t->comm);
		/* Its environment while it is there to read: a rank comes with an exec. */
		if (t->what == CC_TASK_EXEC)
			names_env_exec(t->h.pid, t->h.ts);
		else if (t->what == CC_TASK_FORK)
			names_env_fork(t->h.pid, t->ppid);
	} else if (rec->tid && !names_thread_known(rec->tid)) {
		names_thread_note(rec->pid, rec->tid, NULL);
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
	names_env_exec(pid, ts);
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
	r.h.pid = names_thread_pid(tid);
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

static uint64_t
now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS + (uint64_t)ts.tv_nsec;
}

/* Reads the per-CPU counters; queues a lost record for each increase. */
static void
check_counters(struct drain *d, uint64_t now)
{
	__u64 *v = cut_xcalloc((size_t)d->ncpu, sizeof(*v));
	for (__u32 i = 0; i < CC_NCOUNTERS; i++) {
		if (bpf_map__lookup_elem(d->skel->maps.counters, &i, sizeof(i), v,
		                         sizeof(*v) * (size_t)d->ncpu, 0))
			continue;
		uint64_t sum = 0;
		for (int c = 0; c < d->ncpu; c++)
			sum += v[c];
		uint64_t delta = sum - d->counters[i];
		d->counters[i] = sum;
		if (!delta)
			continue;
		if (i >= CC_C_BARE_CALLS)
			continue;
		if (i == CC_C_UNMATCHED) {
			if (!d->detaching)
				d->unmatched += delta;
			continue;
		}
		const char *why = i == CC_C_DEPTH ? "calls nested deeper than the probes follow"
		                  : i == CC_C_NOTHREAD ? "per-thread table full"
		                                       : "ring buffer full";
		drain_lost(now, layers_counter_name(i), delta, why);
		d->lost += delta;
	}
	free(v);
}

/* n off-CPU periods written in part whose record, the rest of each, never came. */
static void
periods_lost(struct drain *d, size_t n, uint64_t now)
{
	if (!n)
		return;
	drain_lost(now, layers_counter_name(CC_C_LOST_SCHED), n,
	           "off-CPU periods written in part whose end never came");
	d->lost += n;
}

/* Calls fn for every thread the BPF side is following, in batches of the thread table. */
static void
each_thread(struct drain *d, void (*fn)(struct drain *, __u32, const struct cc_thread *, void *),
            void *arg)
{
	int fd = bpf_map__fd(d->skel->maps.threads);
	__u32 batch, *in = NULL;
	for (;;) {
		__u32 count = 256;
		LIBBPF_OPTS(bpf_map_batch_opts, o);
		int e = bpf_map_lookup_batch(fd, in, &batch, d->keys, d->vals, &count, &o);
		int saved = errno;
		for (__u32 i = 0; i < count; i++)
			fn(d, d->keys[i], &d->vals[i], arg);
		if (e) {
			if (saved != ENOENT)
				warnx("reading the thread table: %s", strerror(saved));
			return;
		}
		in = &batch;
	}
}

struct hold {
	uint64_t now, hold, part_after;
};

static void
thread_hold(struct drain *d, __u32 tid, const struct cc_thread *t, void *arg)
{
	struct hold *h = arg;
	(void)d;
	if (t->api_oldest && t->api_oldest < h->hold)
		h->hold = t->api_oldest;
	if (t->sys_ts && t->sys_ts < h->hold)
		h->hold = t->sys_ts;
	if (t->off_ts) {
		uint64_t o = drain_offcpu_hold(tid, t->off_ts, t->off_state, t->off_cpu, h->now,
		                               h->part_after, h->now - SLACK_NS);
		if (o < h->hold)
			h->hold = o;
	}
}

/* The time before which no record can still arrive: the oldest start among calls, system
 * calls and off-CPU periods in flight, and now less the slack. */
static uint64_t
scan_inflight(struct drain *d, uint64_t now)
{
	/* A period is written in parts once it has lasted a second, or --sched-min if longer:
	 * a shorter one leaves no record to end it. */
	struct hold h = {now, now - SLACK_NS,
	                 d->sched_min > MAX_HOLD_NS ? d->sched_min : MAX_HOLD_NS};
	periods_lost(d, order_offcpu_sweep(&Q), now);
	each_thread(d, thread_hold, &h);
	uint64_t hold = h.hold;
	if (layers_on(CC_L_KERNEL)) {
		struct {
			__u32 tid, idx;
		} key, next, *prev = NULL;
		__u64 ts;
		int kfd = bpf_map__fd(d->skel->maps.kstart);
		while (bpf_map_get_next_key(kfd, prev, &next) == 0) {
			if (bpf_map_lookup_elem(kfd, &next, &ts) == 0 && ts < hold)
				hold = ts;
			key = next;
			prev = &key;
		}
	}
	return hold;
}

/* Whether thread tid is still off the CPU since off_ts, by the BPF side's thread table. */
static bool
still_off(uint32_t tid, uint64_t off_ts, void *arg)
{
	struct drain *d = arg;
	struct cc_thread t;
	if (bpf_map__lookup_elem(d->skel->maps.threads, &tid, sizeof(tid), &t, sizeof(t), 0))
		return false; /* gone: it exited */
	return t.off_ts == off_ts;
}

static void
thread_lost(struct drain *d, __u32 tid, const struct cc_thread *t, void *arg)
{
	(void)tid, (void)arg;
	uint64_t n = t->depth < CC_DEPTH ? t->depth : CC_DEPTH;
	if (!n)
		return;
	drain_lost(t->f[0].ts, "api", n, "calls in flight when the capture ended");
	d->lost += n;
}

int
drain_open(struct drain *d, struct cutcapture_bpf *skel)
{
	d->skel = skel;
	d->ncpu = libbpf_num_possible_cpus();
	d->vals = cut_xcalloc(256, sizeof(*d->vals));
	d->keys = cut_xcalloc(256, sizeof(*d->keys));
	d->rb = ring_buffer__new(bpf_map__fd(skel->maps.events), drain_ring, NULL, NULL);
	if (!d->rb) {
		warnx("cannot read the ring buffer: %s", strerror(errno));
		return -1;
	}
	return 0;
}

void
drain_progress(struct drain *d, uint64_t now, bool last)
{
	if (d->quiet)
		return;
	uint64_t every = d->progress_tty ? NS : 10 * NS;
	if (!last && now - d->last_progress < every)
		return;
	struct decode_counts c = decode_counts();
	uint64_t events = c.events + drain_pending();
	uint64_t lost = d->lost + c.unfinished;
	double secs = (double)(now - d->start) / 1e9;
	double rate = (double)(events - d->last_events) /
	              ((double)(now - d->last_progress ? now - d->last_progress : 1) / 1e9);
	if (d->progress_tty || !last)
		fprintf(stderr, "%scutcapture: %.0f s, %llu events, %.0f/s, %llu lost%s",
		        d->progress_tty ? "\r" : "", secs, (unsigned long long)events, rate,
		        (unsigned long long)lost, d->progress_tty && !last ? "   " : "\n");
	d->last_progress = now;
	d->last_events = events;
}

/* Nowhere to write: stops tracing at once (the command runs on). */
static void
stop_tracing(struct drain *d, struct target *t, int e)
{
	const char *waiting = t->child && !t->done ? ", waiting for the command, untraced" : "";
	if (e == EPIPE)
		warnx("the trace's reader has gone (%s): tracing stopped%s", strerror(e), waiting);
	else
		warnx("writing the trace to %s: %s: tracing stopped%s", d->out_name, strerror(e),
		      waiting);
	layers_detach_all(d->skel);
	d->untraced = true;
}

void
drain_run(struct drain *d, struct target *t)
{
	d->start = d->last_scan = d->last_count = d->last_progress = d->last_flush = now_ns();
	d->progress_tty = isatty(STDERR_FILENO);
	for (;;) {
		if (!d->untraced) {
			int n = ring_buffer__poll(d->rb, 50);
			if (n < 0 && n != -EINTR) {
				warnx("ring buffer: %s", strerror(-n));
				break;
			}
		} else {
			poll(NULL, 0, 50);
		}
		uint64_t now = now_ns();
		if (target_step(t, d->skel, now, d->untraced)) {
			/* A write that failed while the command ran is said as such, whether or
			 * not the command ended in the same round. */
			if (!d->untraced && out_error())
				stop_tracing(d, t, out_error());
			break;
		}
		if (d->untraced)
			continue;
		if (now - d->last_count >= 5 * SCAN_NS) {
			check_counters(d, now);
			d->last_count = now;
		}
		if (now - d->last_scan >= SCAN_NS) {
			uint64_t hold = scan_inflight(d, now);
			ring_buffer__consume(d->rb);
			drain_flush(hold);
			d->last_scan = now;
			if (now - d->last_flush >= FLUSH_NS) {
				out_flush();
				d->last_flush = now;
			}
		}
		int e = out_error();
		if (e) {
			stop_tracing(d, t, e);
			if (!t->child)
				break;
		}
		drain_progress(d, now, false);
	}
}

void
drain_finish(struct drain *d)
{
	if (d->untraced)
		return;
	/* Detach (the API probes timed), then take everything left. Entries go first, so
	 * returns of calls made meanwhile find no entry: not counted as unmatched. */
	check_counters(d, now_ns());
	d->detaching = true;
	layers_detach_api_tree(d->skel);
	/* The periods written in part that have ended have their records in the ring now. */
	order_offcpu_end(&Q, still_off, d);
	ring_buffer__consume(d->rb);
	check_counters(d, now_ns());
	periods_lost(d, order_offcpu_sweep(&Q), now_ns());
	/* Calls still in flight (the probes are gone, so they never return): counted lost,
	 * one record per thread. */
	each_thread(d, thread_lost, NULL);
	drain_flush(UINT64_MAX);
}

void
drain_close(struct drain *d)
{
	ring_buffer__free(d->rb);
	free(d->vals);
	free(d->keys);
	d->rb = NULL;
	d->vals = NULL;
	d->keys = NULL;
	order_free(&Q);
}
