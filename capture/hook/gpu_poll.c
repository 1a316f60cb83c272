/* gpu_poll.c: the gpu layer's completion thread (gpu.h): one per process, started at the first
 * timed submission. It queries each stream's oldest END without waiting, sleeps between rounds
 * (a thread spinning on cuEventQuery slows every launch of the program by the driver's lock),
 * keeps each context's clock anchored, and writes the gpu events and device records. Its own
 * driver calls are never events: it calls the real entry points, and is marked as
 * libcuthook's own. */
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "event.h"
#include "gpu.h"
#include "writer.h"

#define CUDA_ERROR_NOT_READY 600
/*
 * While a copy between host and device memory of COPY_CONTENDS_BYTES or more runs, the
 * device runs the rest of the process's stream operations slower, events among them: on an
 * H200 beside a 4 MiB copy from pinned memory (80-90 us), kernels of 1-6 us on other streams
 * started 2-3 us after their start from the call or the events and their ENDs ran 3-5 us after
 * they ended (against their own clocks and CUPTI; tests/gpu/progs/two_threads.cu), where the
 * same kernels away from copies came within a few hundred ns. Work that ran beside such a copy
 * has its start and end as bounds: it ran inside them. (Copies under a MiB take a few us;
 * no effect was measured. Copies between devices are not between host and device.)
 */
#define COPY_CONTENDS_BYTES (1u << 20)
#define COPIES_KEPT 32
#define CU_STREAM_CAPTURE_MODE_RELAXED 2
#define REF_EVERY_NS 50000000 /* a new reference event this often while work completes */
/* Rounds of anchoring, each a cheap anchor by the clock kernel where it runs (gpu_kernel.c),
 * and, less often, the pick-up samples (11 events waited for) with a round trip or events'
 * brackets. The kernel's anchors: every 10 ms for the first 50 (until two are far enough apart
 * to measure the clocks' rate, gpu_map.c, each maps with 50 ppm of doubt: 0.5 us at most), then
 * a quarter of the run's length later each time, 250 ms apart at most: a time is mapped at most
 * a quarter as far from the latest anchor as the anchors that measure the rate lie apart, which
 * keeps the rate's doubt times that distance near half an anchor's error. (Twice as far each
 * time, the doubt times the distance came to an anchor's error again: the stated errors'
 * largest twice their median.) The rest, and every anchor without the kernel: 50 ms after the
 * first, then twice as far from it each time, a second apart at most (each costs the completion
 * thread some 200 us, a round trip's 32 tries up to a ms). */
#define ANCHOR_FIRST_NS 10000000
#define ANCHOR_FIRST_UNTIL_NS 50000000
#define ANCHOR_MAX_NS 250000000
#define PICKUP_MIN_NS 50000000
#define PICKUP_MAX_NS 1000000000
#define ANCHOR_TRIES 11 /* events' brackets: the median of so many is kept */
/* Round trips through host memory: the narrowest is kept (32, not 8: on an H100 the stated
 * mapping error came out 10 % narrower, 4.0-4.2 us against 4.5-4.8, for 0.1 % of a core). */
#define WAIT_TRIES 32
/* A round trip: the stream is given this long to reach its wait before the host writes the
 * word (it is then in the wait, and the event runs when the word arrives), and is waited
 * for this long at most. */
#define WAIT_READY_NS 20000
#define WAIT_MAX_NS 1000000
#define WAIT_FIRST_MAX_NS 50000000 /* the first: the round trips' whole worth */
#define WAIT_YIELD_NS 5000
/* The clock kernel's anchors (gpu_kernel.c): so many warps, each starting its polls so many ns
 * after the one before (together they read the flags every 128 ns where one read takes about a
 * microsecond to come back), so many tries, the kernel's limit. On an H100: 8 warps 128 ns apart
 * 1.39 us wide (median), 4 warps 256 ns apart 1.52, 16 64 ns apart 1.42, one warp 2.50. */
#define KERNEL_WARPS 8
#define KERNEL_STAGGER_NS 128
#define KERNEL_TRIES 8
#define KERNEL_LIMIT_NS 2000000
/* The page of host memory anchors use: the round trips' word and ack, the kernel's flags (a
 * line each), its ack and ready words, its times. */
#define WORDS_BYTES 4096
#define WORDS_ACK 64
#define WORDS_KFLAGS 1024
#define WORDS_KACK 2048
#define WORDS_KOUT 2112
_Static_assert(WORDS_KFLAGS + 64 * KERNEL_WARPS <= WORDS_KACK &&
                   WORDS_KOUT + 8 * (2 * KERNEL_TRIES + 2) <= WORDS_BYTES,
               "the clock kernel's flags and times fit their places in the page");
#define CU_MEMHOSTALLOC_PORTABLE 1
#define CU_MEMHOSTALLOC_DEVICEMAP 2
#define CU_STREAM_WAIT_VALUE_GEQ 0
#define CU_STREAM_WRITE_VALUE_DEFAULT 0
/* Between rounds while work is outstanding. Each round's queries and elapsed times take the
 * driver's locks that the program's launches take too: polled every 100 us, an H200 slowed a
 * PyTorch launch by 340 ns (65 ns every 2 ms). Nothing waits for the results, and 2 ms of
 * submissions stay well inside MAX_OUTSTANDING. */
#define BUSY_SLEEP_NS 2000000
#define IDLE_SLEEP_NS 2000000 /* and while none is */
#define ERR_SAMPLES 4096      /* error bounds kept for the median */

static pthread_t poller;
static bool started; /* poller runs */
/* Held by the completion thread while it takes and completes work: the thread that stops it
 * takes it to write what it left. */
static pthread_mutex_t round_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	struct hook_thread *t;      /* the thread's writer */
	void *current;              /* the context current on this thread */
	struct gpu_stream **active; /* streams with queued work */
	unsigned nactive, capactive;
	int64_t busy_sleep; /* ns between rounds while work is outstanding */
	int64_t errs[ERR_SAMPLES];
	unsigned nerrs;
	uint64_t nseen, rng;     /* bounds seen; the sampling's state */
	struct gpu_twins *twins; /* kernels' latest durations (gpu_map.c); NULL until the first */
	/* Copies between host and device that slow the device's other work (copy_contends): the
	 * latest done, their spans and devices, and those taken but not yet done. */
	struct {
		int64_t start, end;
		int device;
	} copies[COPIES_KEPT];
	unsigned copies_next;
	struct gpu_sub *copying[COPIES_KEPT];
	unsigned ncopying;
	uint32_t rounds; /* rounds begun (round_once) */
} P;

static int64_t
now_ns(void)
{
	return hook_now();
}

static void
nap(int64_t ns)
{
	struct timespec ts = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};
	nanosleep(&ts, NULL);
}

static bool
make_current(void *ctx)
{
	if (P.current == ctx)
		return true;
	if (gpu_api.ctx_set_current(ctx) != 0)
		return false;
	P.current = ctx;
	return true;
}

static double
elapsed_ns(gpu_event_t a, gpu_event_t b, bool *ok)
{
	float ms = 0;
	*ok = gpu_api.event_elapsed(&ms, a, b) == 0;
	return (double)ms * 1e6;
}

/* ---- anchors ---- */

/* An event back to c's pool (one that does not fit is left: the pool is as large as the
 * events ever made for it). */
static void
pool_put(struct gpu_ctx *c, gpu_event_t e)
{
	pthread_mutex_lock(&gpu_sh.lock);
	if (c->npool < c->cap)
		c->pool[c->npool++] = e;
	pthread_mutex_unlock(&gpu_sh.lock);
}

/* Events recorded on the context's idle private stream, each between two clock reads. */
struct tries {
	gpu_event_t ev[ANCHOR_TRIES]; /* made: those up to the first NULL */
	int64_t before[ANCHOR_TRIES]; /* when its record was called */
	int64_t handed[ANCHOR_TRIES]; /* when its record returned */
	int64_t seen[ANCHOR_TRIES];   /* when the host saw it done */
	int n;                        /* recorded and seen done */
	int best;                     /* the try of median pick-up delay; -1: none */
};

/* Records an event on the context's idle private stream ANCHOR_TRIES times, and finds the one
 * whose delay from its record's return to the GPU running it is the median (gpu_map.c says why
 * its host time is when the record returned; an unusual delay would shift every time mapped
 * through it). Its host time is then handed[best], the bound on it seen[best] - handed[best]
 * (from the return to the host seeing it done). */
static void
bracket(struct gpu_ctx *c, struct tries *t)
{
	memset(t, 0, sizeof(*t));
	t->best = -1;
	for (; t->n < ANCHOR_TRIES; t->n++) {
		int n = t->n;
		if (gpu_api.event_create(&t->ev[n], 0) != 0) {
			t->ev[n] = NULL;
			break;
		}
		t->before[n] = now_ns();
		if (gpu_api.event_record(t->ev[n], c->priv) != 0)
			break;
		t->handed[n] = now_ns();
		if (gpu_api.event_sync(t->ev[n]) != 0)
			break;
		t->seen[n] = now_ns();
	}
	/* The try of median pick-up delay: the delay a launch's work meets too. (Taking the
	 * soonest picked up instead chose tries whose record returned late, and shifted every
	 * idle stream's work by microseconds on the H100.) */
	int ok_n = 0, idx[ANCHOR_TRIES];
	double score[ANCHOR_TRIES];
	for (int i = 0; i < t->n; i++) {
		bool ok = true;
		double rel = i ? elapsed_ns(t->ev[0], t->ev[i], &ok) : 0;
		if (!ok)
			continue;
		score[ok_n] = (double)(t->handed[i] - t->handed[0]) - rel;
		idx[ok_n++] = i;
	}
	for (int i = 1; i < ok_n; i++) /* insertion sort by score: a dozen at most */
		for (int j = i; j > 0 && score[j] < score[j - 1]; j--) {
			double x = score[j];
			score[j] = score[j - 1];
			score[j - 1] = x;
			int k = idx[j];
			idx[j] = idx[j - 1];
			idx[j - 1] = k;
		}
	if (ok_n)
		t->best = idx[ok_n / 2];
}

/* Of the tries, the one that ran in the narrowest interval of the host's time: after its
 * record was called, before the host saw it done (a bracket of true times, as a round trip's
 * is: gpu_map.c). Its index, its host time in *host and half width in *err; -1: none. */
static int
true_bracket(const struct tries *t, int64_t *host, int64_t *err)
{
	int best = -1;
	for (int i = 0; i < t->n; i++)
		if (best < 0 || t->seen[i] - t->before[i] < t->seen[best] - t->before[best])
			best = i;
	if (best >= 0) {
		*host = t->before[best] + (t->seen[best] - t->before[best]) / 2;
		*err = (t->seen[best] - t->before[best] + 1) / 2 + GPU_QUANTUM_NS;
	}
	return best;
}

/* Whether the anchors' host times are true brackets (the clock kernel's, round trips'), not
 * events' brackets of median pick-up delay. */
static bool
true_anchors(const struct gpu_ctx *c)
{
	return c->kernel_anchors || c->wait_anchors;
}

/* The anchor of a round: a (the clock kernel's or a round trip's, its host time and half width
 * in *host and *err; NULL: none came back) or, where narrower or none came back, the tries'
 * true bracket; where there are neither, the tries' bracket of median pick-up delay. NULL: none.
 * An anchor not taken goes back to the pool; *from_tries says the anchor is one of t's events. */
static gpu_event_t
pick_anchor(struct gpu_ctx *c, const struct tries *t, gpu_event_t a, int64_t *host, int64_t *err,
            bool *from_tries)
{
	int64_t bh, be;
	int i;
	*from_tries = true;
	if (!true_anchors(c)) {
		if (t->best < 0)
			return NULL;
		*host = t->handed[t->best];
		*err = t->seen[t->best] - t->handed[t->best];
		return t->ev[t->best];
	}
	if ((i = true_bracket(t, &bh, &be)) >= 0 && (!a || be < *err)) {
		if (a)
			pool_put(c, a);
		*host = bh;
		*err = be;
		return t->ev[i];
	}
	*from_tries = false;
	return a;
}

/* The tries' events back to the pool, but keep. */
static void
release(struct gpu_ctx *c, const struct tries *t, gpu_event_t keep)
{
	pthread_mutex_lock(&gpu_sh.lock);
	for (int i = 0; i < ANCHOR_TRIES && t->ev[i]; i++)
		if (t->ev[i] != keep && c->npool < c->cap)
			c->pool[c->npool++] = t->ev[i];
	pthread_mutex_unlock(&gpu_sh.lock);
}

/* The tries' pick-up delays, from their records' returns to their times as the clock maps
 * them: c's latest samples (their GPU times kept, and mapped again by the clock as it stands,
 * which later anchors make better), their median and largest (gpu_ctx). c->anchor is the
 * clock's reference. */
static void
note_pickups(struct gpu_ctx *c, const struct tries *t)
{
	for (int i = 0; i < t->n; i++) {
		bool ok;
		double g = elapsed_ns(c->anchor, t->ev[i], &ok);
		if (!ok)
			continue;
		struct gpu_pickup *p = &c->pickups[c->pickup_next];
		p->gpu = c->clock->ref + g;
		p->handed = t->handed[i];
		c->pickup_next = (c->pickup_next + 1) % GPU_PICKUPS;
		if (c->npickups < GPU_PICKUPS)
			c->npickups++;
	}
	if (!c->npickups)
		return;
	int64_t v[GPU_PICKUPS];
	for (unsigned i = 0; i < c->npickups; i++) {
		const struct gpu_pickup *p = &c->pickups[i];
		/* Not clamped at 0: a mapping off by some us moves the pieces it maps and this
		 * alike, which keeps them in their order. */
		v[i] = gpu_clock_map(c->clock, p->gpu - c->clock->ref, NULL) - p->handed;
	}
	gpu_pickups(v, (int)c->npickups, &c->pickup, &c->pickup_hi);
}

/*
 * A host function that holds the private stream until the calibration's events are all
 * queued behind it -- for HOLD_MAX_NS at most. While it holds, a driver call on another thread
 * that waits for every stream with the context's lock held (cuModuleLoadData does) waits for
 * it, and this thread's event records wait for that lock: without the bound they waited for
 * each other for good (JAX on an H200, loading cuDNN's modules as its first work completed).
 * A hold that gave up leaves the events spaced by the host, not back to back: not used.
 */
#define HOLD_MAX_NS 2000000
struct hold {
	int open;    /* the events are queued */
	int gave_up; /* the host function returned first */
	int64_t until;
};

static void
hold_stream(void *arg)
{
	struct hold *h = arg;
	while (!__atomic_load_n(&h->open, __ATOMIC_ACQUIRE)) {
		if (now_ns() > h->until) {
			__atomic_store_n(&h->gave_up, 1, __ATOMIC_RELEASE);
			return;
		}
		sched_yield();
	}
}

/* The differences between n events recorded back to back on the private stream (after a
 * host function that holds it until all are queued, when held); returns how many. */
static int
event_gaps(struct gpu_ctx *c, bool hold, int64_t *d, int n)
{
	gpu_event_t ev[16];
	static struct hold h;
	int made = 0;
	/* Made before the stream is held: the less the driver is asked meanwhile, the better. */
	while (made < n && made < 16 && gpu_api.event_create(&ev[made], 0) == 0)
		made++;
	__atomic_store_n(&h.open, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&h.gave_up, 0, __ATOMIC_RELEASE);
	h.until = now_ns() + HOLD_MAX_NS;
	bool held = made == n && hold && gpu_api.launch_host_func &&
	            gpu_api.launch_host_func(c->priv, hold_stream, &h) == 0;
	int k = 0;
	if (made == n && (held || !hold))
		while (k < n && gpu_api.event_record(ev[k], c->priv) == 0)
			k++;
	__atomic_store_n(&h.open, 1, __ATOMIC_RELEASE);
	int nd = 0;
	if (k == n && gpu_api.event_sync(ev[n - 1]) == 0 &&
	    !(held && __atomic_load_n(&h.gave_up, __ATOMIC_ACQUIRE)))
		for (int i = 1; i < n; i++) {
			bool ok;
			double g = elapsed_ns(ev[i - 1], ev[i], &ok);
			if (ok)
				d[nd++] = (int64_t)(g + 0.5);
		}
	pthread_mutex_lock(&gpu_sh.lock);
	for (int i = 0; i < made; i++)
		if (c->npool < c->cap)
			c->pool[c->npool++] = ev[i];
	pthread_mutex_unlock(&gpu_sh.lock);
	return nd;
}

/* The GPU time between back-to-back stream operations: the smaller of the median over events
 * queued behind a host function that holds the private stream (so that the GPU runs them one
 * after the other) and the shortest pair of events recorded at once without it. On the H100
 * both gave about 1.25 us, what CUPTI's durations asked for; on the H200 the held ones came
 * out 2.9 us apart, 1.2 us more than CUPTI's durations allowed. */
static int64_t
calibrate_gap(struct gpu_ctx *c)
{
	enum { N = 9 };
	int64_t d[N], g = 0;
	int nd = event_gaps(c, true, d, N);
	if (nd)
		g = gpu_median(d, nd);
	nd = event_gaps(c, false, d, N);
	for (int i = 0; i < nd; i++)
		if (!g || d[i] < g)
			g = d[i];
	return g;
}

static void
device_record(struct gpu_ctx *c, int64_t ts)
{
	char name[256] = "", bus[64] = "", path[128], info[1024];
	unsigned char u[16];
	struct cut_buf a = {0};
	buf_addkey(&a, "device");
	buf_addi64(&a, c->device);
	if (gpu_api.device_get_name && gpu_api.device_get_name(name, sizeof(name), c->device) == 0)
		buf_addkv_str(&a, "name", name);
	if (gpu_api.device_get_uuid && gpu_api.device_get_uuid(u, c->device) == 0) {
		char s[48];
		snprintf(s, sizeof(s),
		         "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		         u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11],
		         u[12], u[13], u[14], u[15]);
		buf_addkv_str(&a, "uuid", s);
	}
	if (gpu_api.device_get_bus && gpu_api.device_get_bus(bus, sizeof(bus), c->device) == 0) {
		for (char *p = bus; *p; p++)
			if (*p >= 'A' && *p <= 'F')
				*p = (char)(*p - 'A' + 'a');
		buf_addkv_str(&a, "bus", bus);
		/* The driver names the device file: /proc/driver/nvidia/gpus/<bus>/information. */
		snprintf(path, sizeof(path), "/proc/driver/nvidia/gpus/%s/information", bus);
		const char *m;
		if (hook_read_file(path, info, sizeof(info)) > 0 &&
		    (m = strstr(info, "Device Minor:"))) {
			char f[32];
			snprintf(f, sizeof(f), "nvidia%ld", strtol(m + 13, NULL, 10));
			buf_addkv_str(&a, "file", f);
		}
	}
	/* How its clock is anchored (gpu_map.c): by the clock kernel, round trips through host
	 * memory (after the first that comes back), or events' brackets. */
	buf_addkv_str(&a, "anchors",
	              c->kernel_anchors ? "kernel"
	              : c->wait_anchors ? "wait"
	                                : "event");
	buf_addc(&a, '}');
	if (own_begin(P.t)) {
		hook_meta(&P.t->out, ts, P.t->tid, "device", a.s);
		own_end(P.t);
	}
	buf_free(&a);
}

/*
 * While the private stream waits for the host's word, a driver call of this thread may wait for
 * a lock that another thread holds while it waits for every stream, this one too (a module load
 * does: as with the host function of calibrate_gap): the word would never come. A thread of the
 * library's own writes it then, WATCHDOG_NS after the wait was queued, and the round trip is
 * not used. Started with the first such anchor; it sleeps otherwise.
 */
#define WATCHDOG_NS 2000000
static struct {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool started;
	volatile uint32_t *word; /* armed: this word gets value at deadline (0: disarmed) */
	uint32_t value;
	int64_t deadline;
	bool fired;
} WD = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void *
watchdog_main(void *arg)
{
	(void)arg;
	hook_mark_thread(1);
	hook_guard = 1;
	pthread_mutex_lock(&WD.lock);
	for (;;) {
		if (!WD.deadline) {
			pthread_cond_wait(&WD.wake, &WD.lock);
			continue;
		}
		if (now_ns() >= WD.deadline) {
			__atomic_store_n(WD.word, WD.value, __ATOMIC_SEQ_CST);
			WD.fired = true;
			WD.deadline = 0;
			continue;
		}
		struct timespec ts = {(time_t)(WD.deadline / 1000000000),
		                      (long)(WD.deadline % 1000000000)};
		pthread_cond_timedwait(&WD.wake, &WD.lock, &ts);
	}
	return NULL;
}

/* Starts the watchdog; false when it cannot run (no round trips then). */
static bool
watchdog_start(void)
{
	if (WD.started)
		return true;
	pthread_condattr_t ca;
	pthread_t t;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* deadlines are now_ns()'s */
	pthread_cond_init(&WD.wake, &ca);
	pthread_condattr_destroy(&ca);
	WD.started = hook_own_thread(&t, 64 * 1024, true, watchdog_main, NULL) == 0;
	return WD.started;
}

static void
watchdog_arm(volatile uint32_t *word, uint32_t value)
{
	pthread_mutex_lock(&WD.lock);
	WD.word = word;
	WD.value = value;
	WD.fired = false;
	WD.deadline = now_ns() + WATCHDOG_NS;
	pthread_cond_signal(&WD.wake);
	pthread_mutex_unlock(&WD.lock);
}

/* Disarms it; false when it wrote the word first. */
static bool
watchdog_disarm(void)
{
	pthread_mutex_lock(&WD.lock);
	bool fired = WD.fired;
	WD.deadline = 0;
	pthread_mutex_unlock(&WD.lock);
	return !fired;
}

/* The page of host memory the device reads and writes for anchors (it stays: freeing host
 * memory syncs); false when the driver cannot map it. */
static bool
setup_words(struct gpu_ctx *c)
{
	void *p = NULL;
	uint64_t d = 0;
	if (!gpu_api.mem_host_alloc || !gpu_api.host_device_ptr ||
	    gpu_api.mem_host_alloc(&p, WORDS_BYTES,
	                           CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP) != 0 ||
	    gpu_api.host_device_ptr(&d, p, 0) != 0)
		return false;
	memset(p, 0, WORDS_BYTES);
	c->words = p;
	c->words_dev = d;
	c->flag = p;
	c->ack = (volatile uint32_t *)((char *)p + WORDS_ACK); /* a cache line of its own */
	c->flag_dev = d;
	c->ack_dev = d + WORDS_ACK;
	return true;
}

/* Anchors timed through the private stream's wait and write (wait_anchor); false when the
 * driver cannot, or CUTHOOK_GPU_ANCHORS=event. */
static bool
setup_wait(struct gpu_ctx *c)
{
	const char *how = getenv("CUTHOOK_GPU_ANCHORS");
	return !(how && !strcmp(how, "event")) && c->words && gpu_api.wait_value32 &&
	       gpu_api.write_value32 && watchdog_start();
}

/* Anchors dated by the clock kernel: loaded as the context was made (gpu.c). */
static bool
setup_kernel(struct gpu_ctx *c)
{
	pthread_mutex_lock(&gpu_sh.lock);
	bool k = c->kernel != NULL;
	pthread_mutex_unlock(&gpu_sh.lock);
	return k && c->words && gpu_api.launch_kernel;
}

/* An event from c's pool, else a new one; NULL: none. */
static gpu_event_t
pool_get(struct gpu_ctx *c)
{
	gpu_event_t e = NULL;
	pthread_mutex_lock(&gpu_sh.lock);
	if (c->npool)
		e = c->pool[--c->npool];
	pthread_mutex_unlock(&gpu_sh.lock);
	if (!e && gpu_api.event_create(&e, 0) != 0)
		e = NULL;
	return e;
}

/* Spins until the event has run or until is passed (then yielding); whether it ran. */
static bool
spin_for_event(gpu_event_t e, int64_t until)
{
	int64_t from = now_ns(), t;
	CUresult r;
	while ((r = gpu_api.event_query(e)) == CUDA_ERROR_NOT_READY) {
		if ((t = now_ns()) > until)
			return false;
		if (t - from > WAIT_YIELD_NS)
			sched_yield();
	}
	return r == 0;
}

/* The clock kernel's flags, each set to v: its polls see them. */
static void
kernel_flags(struct gpu_ctx *c, uint32_t v)
{
	for (int w = 0; w < KERNEL_WARPS; w++)
		__atomic_store_n((volatile uint32_t *)(c->words + WORDS_KFLAGS + 64 * w), v,
		                 __ATOMIC_SEQ_CST);
}

/* Spins until *word reaches v or until is passed, whether it did; yielding, letting others
 * run, once WAIT_YIELD_NS past from (a wait that long is too slow to be of use anyway). */
static bool
spin_for(volatile uint32_t *word, uint32_t v, int64_t from, int64_t until)
{
	int64_t t;
	while ((int32_t)(__atomic_load_n(word, __ATOMIC_ACQUIRE) - v) < 0) {
		if ((t = now_ns()) > until)
			return (int32_t)(__atomic_load_n(word, __ATOMIC_ACQUIRE) - v) >= 0;
		if (t - from > WAIT_YIELD_NS)
			sched_yield();
	}
	return true;
}

/*
 * An anchor dated by the clock kernel (gpu_kernel.c, gpu_map.c's gpu_kernel_anchor): the kernel
 * on the private stream, an event after it; once it runs (ready), KERNEL_TRIES times the host
 * writes its flags and spins until it acks them. The event in *ev, at host time *host +- *err;
 * the kernel's end on the GPU's clock in *kend (gpu_clock_link).
 * False when it did not come back: a kernel not running within max_ns (the device busy with
 * work that holds it) is let go, all its tries at once, and its event kept in c->held until it
 * has run; a driver that refuses the launch turns these anchors off.
 */
static bool
kernel_anchor(struct gpu_ctx *c, int64_t max_ns, int64_t gap, gpu_event_t *ev, int64_t *host,
              int64_t *err, uint64_t *kend)
{
	gpu_event_t e = pool_get(c);
	if (!e)
		return false;
	volatile uint32_t *ack = (volatile uint32_t *)(c->words + WORDS_KACK), *ready = ack + 1;
	volatile uint64_t *out = (volatile uint64_t *)(c->words + WORDS_KOUT);
	uint64_t flags_d = c->words_dev + WORDS_KFLAGS, ack_d = c->words_dev + WORDS_KACK,
	         out_d = c->words_dev + WORDS_KOUT, limit = KERNEL_LIMIT_NS;
	uint32_t seq = c->seq + 1, n = KERNEL_TRIES, stagger = KERNEL_STAGGER_NS;
	c->seq += KERNEL_TRIES + 1;
	out[2 * KERNEL_TRIES + 1] = 0;
	void *args[] = {&flags_d, &ack_d, &out_d, &seq, &n, &limit, &stagger};
	if (gpu_api.launch_kernel(c->kernel, 1, 1, 1, 32 * KERNEL_WARPS, 1, 1, 0, c->priv, args,
	                          NULL) != 0) {
		c->kernel_anchors = false;
		pool_put(c, e);
		return false;
	}
	int64_t from = now_ns();
	if (gpu_api.event_record(e, c->priv) != 0) {
		kernel_flags(c, seq + KERNEL_TRIES);
		pool_put(c, e);
		return false;
	}
	struct gpu_ktry t[KERNEL_TRIES];
	int i = 0;
	if (spin_for(ready, seq, from, from + max_ns))
		for (int64_t start = now_ns(); i < KERNEL_TRIES; i++) {
			uint32_t v = seq + 1 + (uint32_t)i;
			t[i].w0 = now_ns();
			kernel_flags(c, v);
			t[i].w1 = now_ns();
			if (!spin_for(ack, v, t[i].w1, start + KERNEL_LIMIT_NS))
				break;
			t[i].r = now_ns();
		}
	/* The kernel ends as it acks the last: its end's time is there once its event ran. */
	if (i < KERNEL_TRIES || !spin_for_event(e, now_ns() + max_ns) ||
	    !out[2 * KERNEL_TRIES + 1]) {
		kernel_flags(c, seq + KERNEL_TRIES);
		c->held = e;
		return false;
	}
	for (i = 0; i < KERNEL_TRIES; i++) {
		t[i].miss = out[1 + 2 * i];
		t[i].hit = out[2 + 2 * i];
	}
	if (!gpu_kernel_anchor(t, KERNEL_TRIES, out[2 * KERNEL_TRIES + 1], gap, host, err)) {
		pool_put(c, e);
		return false;
	}
	*ev = e;
	*kend = out[2 * KERNEL_TRIES + 1];
	return true;
}

/*
 * An anchor timed by the host (gpu_map.c): WAIT_TRIES times, the private stream waits for the
 * host to write a word of host memory, records an event, and writes another word back; the
 * host writes the first at t_w and spins until it sees the second at t_r, so the event ran
 * between the two. Keeps the narrowest round trip: its event in *ev, its host time and half
 * width in *host and *err. False when none came back: a stream that does not come back within
 * max_ns (it may share the device's queue with work that holds it) keeps its last event in
 * c->held until it has run; a driver that refuses the operations turns them off.
 */
static bool
wait_anchor(struct gpu_ctx *c, int64_t max_ns, gpu_event_t *ev, int64_t *host, int64_t *err)
{
	gpu_event_t best = NULL;
	int64_t width = INT64_MAX;
	for (int i = 0; i < WAIT_TRIES; i++) {
		gpu_event_t e = pool_get(c);
		if (!e)
			break;
		uint32_t v = ++c->seq;
		watchdog_arm(c->flag, v);
		int queued = 0; /* of the three operations */
		if (gpu_api.wait_value32(c->priv, c->flag_dev, v, CU_STREAM_WAIT_VALUE_GEQ) == 0) {
			queued = 1;
			if (gpu_api.event_record(e, c->priv) == 0) {
				queued = 2;
				if (gpu_api.write_value32(c->priv, c->ack_dev, v,
				                          CU_STREAM_WRITE_VALUE_DEFAULT) == 0)
					queued = 3;
			}
		}
		if (queued < 3) {
			/* The driver has no such operations: whatever was queued is let go, and the
			 * event waits for its turn if it had one. */
			__atomic_store_n(c->flag, v, __ATOMIC_SEQ_CST);
			watchdog_disarm();
			c->wait_anchors = false;
			if (queued == 2)
				c->held = e;
			else
				pool_put(c, e);
			break;
		}
		int64_t t_w = now_ns() + WAIT_READY_NS;
		while (now_ns() < t_w) /* yielding: nothing is timed yet */
			sched_yield();
		t_w = now_ns();
		__atomic_store_n(c->flag, v, __ATOMIC_SEQ_CST);
		bool mine = watchdog_disarm(); /* else the word came at no time known */
		if (!spin_for(c->ack, v, t_w, t_w + max_ns)) {
			c->held = e; /* not back: the event goes back once it has run */
			break;
		}
		int64_t t_r = now_ns(); /* after the word was seen */
		/* The narrowest yet is kept, and the one before goes back. */
		if (mine && t_r - t_w < width) {
			width = t_r - t_w;
			*host = t_w + width / 2;
			gpu_event_t old = best;
			best = e;
			e = old;
		}
		if (e)
			pool_put(c, e);
	}
	if (!best)
		return false;
	*ev = best;
	*err = (width + 1) / 2 + GPU_QUANTUM_NS;
	return true;
}

/* A round's true anchor: the clock kernel's, else (it is off, or did not come back but left
 * nothing held) a round trip's; false: none. */
static bool
timed_anchor(struct gpu_ctx *c, int64_t max_ns, int64_t gap, gpu_event_t *ev, int64_t *host,
             int64_t *err, uint64_t *kend)
{
	*kend = 0;
	if (c->kernel_anchors && kernel_anchor(c, max_ns, gap, ev, host, err, kend))
		return true;
	return c->wait_anchors && !c->held && wait_anchor(c, max_ns, ev, host, err);
}

/* The first anchor dated by the clock kernel, the better of two taken in turn: the one whose
 * event lagged its kernel's end less (the two clocks' offsets compared through the events'
 * elapsed time), where they differ by more than the link's spread. Its first moments are mapped
 * through it alone until the next anchor (gpu_clock_link). */
static void
first_kernel_anchor(struct gpu_ctx *c, int64_t gap, gpu_event_t *a, int64_t *host, int64_t *err,
                    uint64_t *kend)
{
	gpu_event_t b;
	int64_t bh, be;
	uint64_t bk;
	bool ok;
	if (!kernel_anchor(c, WAIT_FIRST_MAX_NS, gap, &b, &bh, &be, &bk))
		return;
	double later = elapsed_ns(*a, b, &ok) - (double)(int64_t)(bk - *kend); /* b's lag less a's */
	if (ok && later < -GPU_LINK_SPREAD_NS) {
		pool_put(c, *a);
		*a = b, *host = bh, *err = be, *kend = bk;
	} else
		pool_put(c, b);
}

/* A context's first use on this thread: its private stream, the gap, the first anchor, and
 * its device record, dated first. */
static bool
setup_ctx(struct gpu_ctx *c, int64_t first)
{
	if (c->ready)
		return true;
	if (c->broken || !make_current(c->ctx))
		goto broken;
	if (gpu_api.ctx_get_device(&c->device) != 0)
		c->device = -1;
	if (gpu_api.stream_create(&c->priv, CU_STREAM_NON_BLOCKING) != 0)
		goto broken;
	int64_t gap = calibrate_gap(c);
	if (!(c->clock = malloc(sizeof(*c->clock))))
		goto broken;
	setup_words(c);
	c->wait_anchors = setup_wait(c);
	c->kernel_anchors = setup_kernel(c);
	gpu_event_t a;
	int64_t host, err;
	struct tries t;
	/* The first anchor may wait longer for the stream: it alone maps the first moments, and
	 * the pick-up time measured then. */
	uint64_t kend;
	bool timed = timed_anchor(c, WAIT_FIRST_MAX_NS, gap, &a, &host, &err, &kend);
	if (timed && kend)
		first_kernel_anchor(c, gap, &a, &host, &err, &kend);
	bracket(c, &t); /* the pick-up time's samples, and maybe the first anchor */
	bool from_tries;
	if (!(c->anchor = pick_anchor(c, &t, timed ? a : NULL, &host, &err, &from_tries))) {
		release(c, &t, NULL);
		goto broken;
	}
	gpu_clock_init(c->clock, host, err, gap);
	if (!from_tries && kend)
		gpu_clock_link(c->clock, kend);
	c->clock_gen++;
	c->bracket_anchors = !true_anchors(c);
	note_pickups(c, &t);
	release(c, &t, c->anchor);
	c->first = now_ns();
	c->next_ref = c->first + REF_EVERY_NS;
	c->next_pickup = c->first + PICKUP_MIN_NS;
	c->next_anchor = c->kernel_anchors ? c->first + ANCHOR_FIRST_NS : c->next_pickup;
	if (!gpu_sh.gap)
		gpu_sh.gap = gap;
	if (c->device >= 0 && !c->device_told)
		device_record(c, first);
	c->device_told = c->device >= 0;
	c->ready = true;
	return true;
broken:
	c->broken = true;
	return false;
}

/* The event e back to the pool, once it has run (the one a round trip left, c->held). */
static bool
took_back(struct gpu_ctx *c, gpu_event_t *e)
{
	if (!*e)
		return true;
	if (gpu_api.event_query(*e) != 0)
		return false;
	pool_put(c, *e);
	*e = NULL;
	return true;
}

/* The reference event renewed, so that the GPU time from it to any event is small enough for
 * a float of ms to hold to a few ns; and a new anchor when one is due. */
static void
reanchor(struct gpu_ctx *c)
{
	int64_t now = now_ns();
	bool ok;
	if (c->ref && gpu_api.event_query(c->ref) == 0) { /* recorded last time: the reference */
		double g = elapsed_ns(c->anchor, c->ref, &ok);
		if (ok) {
			gpu_clock_advance(c->clock, g);
			gpu_event_t old = c->anchor;
			c->anchor = c->ref;
			c->ref = old;
			took_back(c, &c->ref);
		}
	}
	if (!c->ref && now >= c->next_ref) {
		pthread_mutex_lock(&gpu_sh.lock);
		if (c->npool)
			c->ref = c->pool[--c->npool];
		pthread_mutex_unlock(&gpu_sh.lock);
		if (c->ref && gpu_api.event_record(c->ref, c->priv) != 0)
			took_back(c, &c->ref); /* never recorded: done */
		c->next_ref = now + REF_EVERY_NS;
	}
	if ((now < c->next_anchor && now < c->next_pickup) || !took_back(c, &c->held))
		return;
	int64_t since = now - c->first;
	bool pickups = now >= c->next_pickup;
	if (pickups) {
		int64_t next = since < PICKUP_MIN_NS ? PICKUP_MIN_NS : since;
		c->next_pickup = now + (next > PICKUP_MAX_NS ? PICKUP_MAX_NS : next);
	}
	if (c->kernel_anchors) {
		int64_t next = since < ANCHOR_FIRST_UNTIL_NS ? ANCHOR_FIRST_NS : since / 4;
		c->next_anchor = now + (next > ANCHOR_MAX_NS ? ANCHOR_MAX_NS : next);
	} else
		c->next_anchor = c->next_pickup;
	gpu_event_t a = NULL;
	int64_t host, err;
	struct tries t;
	if (pickups)
		bracket(c, &t); /* the pick-up time's samples, and maybe the anchor */
	else {
		memset(&t, 0, sizeof(t));
		t.best = -1;
	}
	uint64_t kend;
	bool timed = timed_anchor(c, WAIT_MAX_NS, c->clock->gap, &a, &host, &err, &kend);
	bool from_tries;
	a = pick_anchor(c, &t, timed ? a : NULL, &host, &err, &from_tries);
	double g = a ? elapsed_ns(c->anchor, a, &ok) : 0;
	gpu_event_t back = NULL; /* the reference before, or an anchor that could not be used */
	if (a && ok) {
		if (c->bracket_anchors == !true_anchors(c)) {
			gpu_clock_anchor(c->clock, host, err, g);
			if (!from_tries && kend)
				gpu_clock_link(c->clock, kend);
		} else { /* the driver refused the round trips: the other kind of anchor, a clock of
			* its own, whose GPU times start again */
			gpu_clock_init(c->clock, host, err, c->clock->gap);
			c->clock_gen++;
			c->npickups = c->pickup_next = 0;
		}
		c->bracket_anchors = !true_anchors(c);
		back = c->anchor;
		c->anchor = a;
	} else if (a) {
		back = from_tries ? NULL : a; /* (one of the tries goes back with them) */
		a = NULL;
	}
	if (back)
		pool_put(c, back);
	note_pickups(c, &t);
	release(c, &t, a);
}

/* ---- work ---- */

static void
note_err(int64_t b)
{
	if (b > gpu_sh.err_max)
		gpu_sh.err_max = b;
	/* A uniform sample of the whole run's bounds (reservoir sampling): the first ERR_SAMPLES
	 * alone were the run's first moments, before the rate was measured. */
	uint64_t n = P.nseen++;
	if (n < ERR_SAMPLES) {
		P.errs[P.nerrs++] = b;
		return;
	}
	P.rng ^= P.rng << 13; /* xorshift64 */
	P.rng ^= P.rng >> 7;
	P.rng ^= P.rng << 17;
	if (P.rng % (n + 1) < ERR_SAMPLES)
		P.errs[P.rng % ERR_SAMPLES] = b;
}

/* Writes s, its span sp (cut-events(5), GPU work: args.start, args.end, args.clamped), into
 * w's buffer. Returns false when the completion thread was abandoned (gpu_poller_join): the
 * thread that stopped it counted s already. */
static bool
write_work(struct hook_thread *w, struct gpu_sub *s, const struct gpu_span *sp)
{
	static const char *const cats[] = {[GK_KERNEL] = "kernel",
	                                   [GK_KERNEL_EX] = "kernel",
	                                   [GK_COPY] = "memcpy",
	                                   [GK_SET] = "memset",
	                                   [GK_GRAPH] = "graph"};
	char name[64];
	const char *nm = name;
	const struct cut_name *kn = NULL;
	switch (s->kind) {
	case GK_KERNEL:
	case GK_KERNEL_EX:
		kn = s->name ? s->name : hook_name_of(s->handle);
		if (kn && kn->raw[0])
			nm = kn->raw;
		else
			snprintf(name, sizeof(name), "0x%llx", (unsigned long long)s->handle);
		break;
	case GK_COPY:
		snprintf(name, sizeof(name), s->dir[0] ? "memcpy %s" : "memcpy", s->dir);
		break;
	case GK_SET: snprintf(name, sizeof(name), "memset"); break;
	default: snprintf(name, sizeof(name), "graph 0x%llx", (unsigned long long)s->handle);
	}
	struct cut_buf *a = &w->args;
	buf_reset(a);
	buf_addkey(a, "corr");
	buf_addi64(a, (int64_t)s->corr);
	buf_addkey(a, "stream");
	buf_addhex(a, (uint64_t)(uintptr_t)s->stream);
	if (s->gc->device >= 0) {
		buf_addkey(a, "device");
		buf_addi64(a, s->gc->device);
	}
	if (s->kind == GK_KERNEL || s->kind == GK_KERNEL_EX) {
		const uint32_t *v[2] = {s->grid, s->block};
		for (int k = 0; k < 2; k++) {
			buf_addkey(a, k ? "block" : "grid");
			for (int i = 0; i < 3; i++) {
				buf_addc(a, i ? ',' : '[');
				buf_addi64(a, v[k][i]);
			}
			buf_addc(a, ']');
		}
		if (s->params) {
			buf_addkey(a, "params");
			buf_addi64(a, s->params);
		}
	}
	if ((s->kind == GK_COPY || s->kind == GK_SET) && s->bytes) {
		buf_addkey(a, "bytes");
		buf_addi64(a, (int64_t)s->bytes);
	}
	buf_addkey(a, "submit");
	buf_addi64(a, s->t0);
	if (sp->how & GPU_SPAN_FROM_CALL)
		buf_addkv_str(a, "start", "call");
	else if (sp->how & GPU_SPAN_FROM_TWINS)
		buf_addkv_str(a, "start", "twins");
	else if (sp->how & GPU_SPAN_LATE)
		buf_addkv_str(a, "start", "late");
	else if (sp->how & GPU_SPAN_START_BOUND)
		buf_addkv_str(a, "start", "bound");
	if (sp->how & GPU_SPAN_END_UNKNOWN)
		buf_addkv_str(a, "end", "unknown");
	else if (sp->how & GPU_SPAN_END_BOUND)
		buf_addkv_str(a, "end", "bound");
	static const char *const clamped[] = {NULL, "start", "end", "start,end"};
	const char *cl = clamped[(sp->how & (GPU_SPAN_CLAMPED_START | GPU_SPAN_CLAMPED_END)) >> 1];
	if (cl)
		buf_addkv_str(a, "clamped", cl);
	buf_addc(a, '}');
	struct cut_event ev;
	cut_event_init(&ev);
	ev.ts = sp->start;
	if (!(sp->how & GPU_SPAN_END_UNKNOWN)) {
		ev.dur = sp->end - sp->start;
		ev.has = CUT_HAS_DUR;
	}
	ev.pid = hook_w.pid_ns;
	ev.tid = s->tid;
	ev.layer = CUT_GPU;
	ev.name = nm;
	ev.cat = cats[s->kind];
	ev.args = a->s;
	hook_label(&ev);
	if (!own_begin(w))
		return true; /* the end is written: too late for this */
	/* Looked at inside the writer's busy window: the thread that abandons this one waits
	 * for the window to close before it counts what is left. */
	if (w == P.t && pthread_equal(pthread_self(), poller) &&
	    __atomic_load_n(&gpu_sh.abandon, __ATOMIC_SEQ_CST)) {
		own_end(w);
		return false;
	}
	cut_event_format(&w->out, &ev);
	buf_addc(&w->out, '\n');
	w->pending++;
	w->events++;
	__atomic_add_fetch(&hook_layer_events[CUT_GPU], 1, __ATOMIC_RELAXED);
	if (w->out.len >= FLUSH_AT)
		hook_flush(w);
	own_end(w);
	return true;
}

static bool write_unknown(struct hook_thread *w, struct gpu_sub *s);

/* Whether s is a copy between host and device memory that slows the device's other work
 * (COPY_CONTENDS_BYTES; a copy whose size or direction is not known is taken as one). */
static bool
copy_contends(const struct gpu_sub *s)
{
	return s->kind == GK_COPY && strcmp(s->dir, "DtoD") != 0 &&
	       (s->bytes >= COPY_CONTENDS_BYTES || !s->bytes);
}

/* s leaves the completion thread (done, untimed or its context ended): no longer copying. */
static void
copy_forget(const struct gpu_sub *s)
{
	for (unsigned i = 0; i < P.ncopying; i++)
		if (P.copying[i] == s) {
			P.copying[i] = P.copying[--P.ncopying];
			return;
		}
}

/* A copy that contends done, over sp on c's device: kept for the work that ends after it. */
static void
copy_done(const struct gpu_sub *s, const struct gpu_ctx *c, const struct gpu_span *sp)
{
	P.copies[P.copies_next].start = sp->start;
	P.copies[P.copies_next].end = sp->end;
	P.copies[P.copies_next].device = c->device;
	P.copies_next = (P.copies_next + 1) % COPIES_KEPT;
	copy_forget(s);
}

/*
 * Whether work of c that ran from start to end did so beside a copy that contends on its
 * device: one done whose span met it, or one not yet completed here of the same context whose
 * START had run before the work's end and whose END, if it has run, ran after the work's start
 * (the copy's END is the bound: it may not have been taken up yet, its stream's turn in the
 * round to come). A copy whose START has not run began after the work ended, whose END has
 * been seen done by now.
 */
static bool
copy_beside(const struct gpu_ctx *c, int64_t start, int64_t end)
{
	for (unsigned i = 0; i < COPIES_KEPT; i++)
		if (P.copies[i].end > start && P.copies[i].start < end &&
		    P.copies[i].device == c->device)
			return true;
	for (unsigned i = 0; i < P.ncopying; i++) {
		struct gpu_sub *k = P.copying[i];
		if (k->gc != c || !k->start)
			continue;
		bool ok;
		/* (Its START and END asked once a round at most, not again once they ran: each
		 * query contends with the program's launches for the driver.) */
		if (!k->began) {
			if (k->asked[0] == P.rounds)
				continue;
			k->asked[0] = P.rounds;
			if (gpu_api.event_query(k->start) != 0)
				continue;
			double g = elapsed_ns(c->anchor, k->start, &ok);
			if (!ok)
				continue;
			k->began = gpu_clock_map(c->clock, g, NULL);
		}
		if (k->began >= end)
			continue;
		if (!k->ended && k->asked[1] != P.rounds &&
		    (k->asked[1] = P.rounds, gpu_api.event_query(k->end) == 0)) {
			double g = elapsed_ns(c->anchor, k->end, &ok);
			if (ok)
				k->ended = gpu_clock_map(c->clock, g, NULL);
		}
		if (!k->ended || k->ended > start)
			return true;
	}
	return false;
}

/* Times s, whose END completed, and writes it. */
static void
complete(struct gpu_sub *s)
{
	int64_t seen = now_ns(); /* the END was seen done by now */
	struct gpu_ctx *c = s->gc;
	struct gpu_stream *st = s->st;
	/* The device record goes before the context's first work (its submission): readers
	 * then know the device by the time they meet its work. */
	bool ok = setup_ctx(c, s->t0 - 1) && make_current(c->ctx);
	int64_t end = 0, start = 0, before = st->last_end, b1 = 0, b2 = 0;
	double ge = 0;
	if (ok) {
		reanchor(c);
		ge = elapsed_ns(c->anchor, s->end, &ok);
		end = gpu_clock_map(c->clock, ge, &b1);
		/* The END before it mapped again as this one is: an anchor between the two moves
		 * the mapping, and the start from it would move by as much against this end. */
		if (st->have_last && st->last_end_gen == c->clock_gen)
			before = gpu_clock_map(c->clock, st->last_end_gpu - c->clock->ref, NULL);
		if (ok && s->start) {
			double gs = elapsed_ns(c->anchor, s->start, &ok);
			start = gpu_clock_map(c->clock, gs, &b2);
		}
	}
	if (!ok) {
		st->have_last = false;
		__atomic_fetch_add(&gpu_sh.untimed, 1, __ATOMIC_RELAXED);
		return;
	}
	/* Work on device memory alone (a memset, a device-to-device copy) that ran on past its
	 * call was handed over when the call returned, as a kernel is: no host memory was
	 * staged inside the call, so the START before the call (run at once on an idle stream)
	 * is no start of it. Measured on an H100: such 64 MiB work came out 1.7 to 2 times long
	 * from the START, 0.7 to 0.9 times from the return plus the pick-up time of work queued
	 * on an idle stream, within 8 % from the return. */
	bool device_only = s->kind == GK_SET || !strcmp(s->dir, "DtoD");
	bool handed_at_return = device_only && end - c->clock->gap > s->t1;
	/* An event's time is one stream operation's length after the work before it ended
	 * (measured on the H100: durations from END to END came out that much longer than
	 * CUPTI's). */
	struct gpu_span_in in = {
	    .end_ev = end,
	    .before_ev = s->start ? start : before,
	    /* (A START that waited for nothing ran within the pick-up time of its record, which
	     * followed the call's start.) */
	    .start_idle = s->start && start <= s->t0 + c->pickup_hi + GPU_BOUND_SLACK_NS,
	    .start_turns = s->start && s->start_turns,
	    .have_before = s->start || st->have_last,
	    .gap = c->clock->gap,
	    .t0 = s->t0,
	    .t1 = s->t1,
	    .t_er = s->t_er,
	    .sync = s->sync && !handed_at_return,
	    .kernel = s->kind == GK_KERNEL || s->kind == GK_KERNEL_EX,
	    .graph = s->kind == GK_GRAPH && !s->sync,
	    .pickup = c->pickup,
	    .pickup_hi = c->pickup_hi,
	    .at_return = handed_at_return,
	    .prev_end = st->last_written,
	    .have_prev = st->have_written,
	    .seen = seen,
	};
	/* A kernel's twins: how long it ran, launched alike, the latest times (gpu_twins_dur). */
	uint64_t key[4];
	int64_t twin_durs[2 * GPU_TWIN_KEEP];
	bool kernel = in.kernel;
	if (kernel) {
		gpu_twin_key(key, c->ctx, s->handle, s->grid, s->block);
		if (!P.twins)
			P.twins = calloc(1, sizeof(*P.twins)); /* (none: no twins) */
		in.have_twins = P.twins && gpu_twins_dur(P.twins, key, &in.twin, &in.twin_dev,
		                                         &in.twin_call, twin_durs, &in.twin_n);
		in.twin_durs = twin_durs;
	}
	struct gpu_span sp;
	gpu_work_span(&in, &sp);
	if (copy_contends(s))
		copy_done(s, c, &sp);
	else if (!(sp.how & GPU_SPAN_END_UNKNOWN) && copy_beside(c, sp.start, sp.end))
		sp.how = (sp.how & ~(GPU_SPAN_FROM_CALL | GPU_SPAN_FROM_TWINS | GPU_SPAN_LATE)) |
		         GPU_SPAN_START_BOUND | GPU_SPAN_END_BOUND;
	if (kernel && P.twins && !(sp.how & ~GPU_SPAN_FROM_CALL))
		gpu_twins_note(P.twins, key, sp.end - sp.start, s->t1 - s->t0,
		               false); /* measured */
	else if (kernel && P.twins && sp.how == (GPU_SPAN_FROM_CALL | GPU_SPAN_END_BOUND))
		gpu_twins_note(P.twins, key, sp.end - sp.start, s->t1 - s->t0, true);
	st->last_end = end;
	st->last_end_gpu = c->clock->ref + ge;
	st->last_end_gen = c->clock_gen;
	st->have_last = true;
	st->last_written = sp.end;
	st->have_written = true;
	if (!write_work(P.t, s, &sp))
		return;
	note_err(b1 > b2 ? b1 : b2);
	if (sp.how & GPU_SPAN_FROM_CALL)
		__atomic_fetch_add(&gpu_sh.from_call, 1, __ATOMIC_RELAXED);
	if (sp.how & GPU_SPAN_FROM_TWINS)
		__atomic_fetch_add(&gpu_sh.from_twins, 1, __ATOMIC_RELAXED);
	if (sp.how & GPU_SPAN_LATE)
		__atomic_fetch_add(&gpu_sh.late, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&gpu_sh.timed, 1, __ATOMIC_RELAXED);
}

/* Takes what the program's threads queued onto the streams' own lists. */
static void
take_queued(void)
{
	pthread_mutex_lock(&gpu_sh.lock);
	struct gpu_sub *s = gpu_sh.in_head;
	gpu_sh.in_head = gpu_sh.in_tail = NULL;
	pthread_mutex_unlock(&gpu_sh.lock);
	while (s) {
		struct gpu_sub *next = s->next;
		struct gpu_stream *st = s->st;
		s->next = NULL;
		if (copy_contends(s) && P.ncopying < COPIES_KEPT)
			P.copying[P.ncopying++] = s;
		if (!st->head) {
			st->head = s;
			if (P.nactive == P.capactive) {
				unsigned cap = P.capactive ? 2 * P.capactive : 64;
				struct gpu_stream **p = realloc(P.active, cap * sizeof(*p));
				if (!p)
					abort(); /* a few pointers: cannot happen short of memory
					            gone */
				P.active = p;
				P.capactive = cap;
			}
			P.active[P.nactive++] = st;
		} else
			st->tail->next = s;
		st->tail = s;
		s = next;
	}
}

/* One round over the streams with work. Returns how many submissions are still queued. */
static unsigned
round_once(bool give_up)
{
	unsigned left = 0;
	P.rounds++;
	for (unsigned i = 0; i < P.nactive;) {
		struct gpu_stream *st = P.active[i];
		struct gpu_sub *s;
		/* A stream runs its work in order: when its newest END is done, so is all of it,
		 * and one query answers for the lot (each query contends with the program's
		 * launches for the driver). */
		bool all_done = st->tail != st->head && gpu_api.event_query(st->tail->end) == 0;
		struct gpu_sub *done = NULL, **done_tail = &done;
		unsigned ndone = 0;
		while ((s = st->head)) {
			int q = all_done ? 0 : gpu_api.event_query(s->end);
			if (q == CUDA_ERROR_NOT_READY && !give_up)
				break;
			if (q == 0)
				complete(s);
			else { /* a broken event, or the end came: not timed, written so */
				st->have_last = false;
				if (write_unknown(P.t, s))
					__atomic_fetch_add(&gpu_sh.untimed, 1, __ATOMIC_RELAXED);
			}
			st->head = s->next;
			if (!st->head)
				st->tail = NULL;
			s->next = NULL;
			copy_forget(s);
			*done_tail = s;
			done_tail = &s->next;
			ndone++;
		}
		/* Handed back at once: the lock is the program's launches' too. (Work queued since
		 * is counted in submitted, so the stream goes idle only when this was all of it.)
		 */
		if (ndone) {
			pthread_mutex_lock(&gpu_sh.lock);
			st->completed += ndone;
			if (st->completed == st->submitted)
				gpu_stream_busy(done->gc, st, -1);
			while ((s = done)) {
				done = s->next;
				gpu_sub_free(s);
			}
			pthread_mutex_unlock(&gpu_sh.lock);
		}
		if (!st->head)
			P.active[i] = P.active[--P.nactive];
		else {
			for (s = st->head; s; s = s->next)
				left++;
			i++;
		}
	}
	return left;
}

static void *
poll_main(void *arg)
{
	(void)arg;
	hook_mark_thread(1); /* first: none of this thread's calls or time is the program's */
	hook_guard = 1;
	const char *e = getenv("CUTHOOK_GPU_POLL_US");
	P.busy_sleep = e && atol(e) > 0 ? atol(e) * 1000 : BUSY_SLEEP_NS;
	P.rng = 0x9e3779b97f4a7c15ull;
	P.t = hook_thread_new();
	if (P.t) {
		P.t->need_thread_record = false;
		__atomic_store_n(&gpu_sh.poller_tid, P.t->tid, __ATOMIC_RELEASE);
	}
	/* Without this, a query of ours while a program's thread captures a graph in global
	 * mode would invalidate that capture. */
	int mode = CU_STREAM_CAPTURE_MODE_RELAXED;
	if (gpu_api.exchange_capture_mode)
		gpu_api.exchange_capture_mode(&mode);
	for (;;) {
		pthread_mutex_lock(&round_lock);
		if (__atomic_load_n(&gpu_sh.abandon, __ATOMIC_ACQUIRE)) {
			pthread_mutex_unlock(&round_lock); /* gpu_poller_join wrote what is left */
			return NULL;
		}
		take_queued();
		pthread_mutex_lock(&gpu_sh.lock);
		bool stopping = gpu_sh.stopping;
		int64_t deadline = gpu_sh.stop_deadline;
		pthread_mutex_unlock(&gpu_sh.lock);
		bool give_up = stopping && now_ns() > deadline;
		unsigned left = P.t ? round_once(give_up) : 0;
		bool done = stopping && (left == 0 || give_up);
		if (done) {
			if (P.nerrs)
				gpu_sh.err_median = gpu_median(P.errs, (int)P.nerrs);
			if (P.t && own_begin(P.t)) {
				hook_flush(P.t);
				own_end(P.t);
			}
		}
		pthread_mutex_unlock(&round_lock);
		if (done)
			break;
		if (left || stopping)
			nap(P.busy_sleep);
		else {
			pthread_mutex_lock(&gpu_sh.lock);
			if (!gpu_sh.in_head && !gpu_sh.stopping) {
				struct timespec ts;
				clock_gettime(CLOCK_REALTIME, &ts);
				ts.tv_nsec += IDLE_SLEEP_NS;
				if (ts.tv_nsec >= 1000000000) {
					ts.tv_sec++;
					ts.tv_nsec -= 1000000000;
				}
				pthread_cond_timedwait(&gpu_sh.wake, &gpu_sh.lock, &ts);
			}
			pthread_mutex_unlock(&gpu_sh.lock);
		}
	}
	return NULL;
}

void
gpu_poller_start(void)
{
	int guard = hook_guard;
	hook_guard = 1;
	if (hook_own_thread(&poller, 256 * 1024, false, poll_main, NULL) != 0) {
		pthread_mutex_lock(&gpu_sh.lock);
		gpu_sh.stopping = true;
		pthread_mutex_unlock(&gpu_sh.lock);
	} else
		started = true;
	/* Exit handlers run before libraries' destructors, libcuda's among them: the work is
	 * written while the driver still answers. */
	atexit(hook_gpu_stop);
	hook_guard = guard;
}

/* Work the completion thread never timed, written by w with what is known: its call, no end,
 * its start no earlier than its call's (cut-events(5): args.end "unknown"). False when w could
 * not take it. */
static bool
write_unknown(struct hook_thread *w, struct gpu_sub *s)
{
	struct gpu_span sp = {
	    .start = s->t0, .end = s->t0, .how = GPU_SPAN_START_BOUND | GPU_SPAN_END_UNKNOWN};
	return w && write_work(w, s, &sp);
}

/* A lost record for n pieces of work, into w's buffer. */
static void
write_lost(struct hook_thread *w, uint64_t n)
{
	char args[256];
	snprintf(args, sizeof(args),
	         "{\"count\":%llu,\"reason\":\"GPU work the completion thread still held when the "
	         "process ended\",\"layer\":\"gpu\"}",
	         (unsigned long long)n);
	if (w && own_begin(w)) {
		hook_meta(&w->out, now_ns(), w->tid, "lost", args);
		own_end(w);
	}
}

/* A context about to end (a reset or destroy: gpu.c): its events and memory go with it. The
 * completion thread writes its work as it completes, which the end would wait for anyway;
 * what is not done by CTX_END_WAIT_NS (another thread kept submitting, or the thread is
 * starved) is written as not timed; then, between the thread's rounds, the context is
 * forgotten: its next work sets it up again, as a new one. */
#define CTX_END_WAIT_NS 5000000000LL
#define CTX_END_POLL_NS 100000

void
gpu_ctx_end(struct gpu_ctx *c)
{
	int64_t deadline = now_ns() + CTX_END_WAIT_NS;
	for (;;) {
		pthread_mutex_lock(&gpu_sh.lock);
		bool busy = c->busy > 0 && started;
		pthread_cond_signal(&gpu_sh.wake);
		pthread_mutex_unlock(&gpu_sh.lock);
		if (!busy || now_ns() > deadline)
			break;
		nap(CTX_END_POLL_NS);
	}
	pthread_mutex_lock(&round_lock);
	take_queued();
	uint64_t untimed = 0;
	for (unsigned i = 0; i < P.nactive;) {
		struct gpu_stream *st = P.active[i];
		if (st->ctx != c->ctx) {
			i++;
			continue;
		}
		struct gpu_sub *s, *done = st->head;
		unsigned n = 0;
		for (s = done; s; s = s->next, n++) {
			untimed += P.t && write_unknown(P.t, s);
			copy_forget(s);
		}
		st->head = st->tail = NULL;
		P.active[i] = P.active[--P.nactive];
		pthread_mutex_lock(&gpu_sh.lock);
		st->completed += n;
		if (st->completed == st->submitted)
			gpu_stream_busy(c, st, -1);
		while ((s = done)) {
			done = s->next;
			gpu_sub_free(s);
		}
		pthread_mutex_unlock(&gpu_sh.lock);
	}
	__atomic_add_fetch(&gpu_sh.untimed, untimed, __ATOMIC_RELAXED);
	if (P.current == c->ctx)
		P.current = NULL; /* set it again: the handle may name the context made next */
	if (P.twins)
		gpu_twins_forget(P.twins, c->ctx); /* its handles may be the next context's */
	pthread_mutex_lock(&gpu_sh.lock);
	gpu_ctx_forget(c);
	pthread_mutex_unlock(&gpu_sh.lock);
	pthread_mutex_unlock(&round_lock);
}

void
gpu_poller_join(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 3;
	if (started && pthread_timedjoin_np(poller, NULL, &ts) == 0)
		return;
	/* The completion thread did not end (or never ran): starved of CPU, or held in the
	 * driver. It writes
	 * nothing from now on (its buffer's busy window is waited for, write_work); this thread
	 * writes what it left, with what is known, and counts what it cannot reach. */
	__atomic_store_n(&gpu_sh.abandon, 1, __ATOMIC_SEQ_CST);
	for (int i = 0; P.t && i < 100000 && __atomic_load_n(&P.t->busy, __ATOMIC_ACQUIRE); i++)
		sched_yield();
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 1;
	/* Between its rounds, the thread's own lists are this one's too; in a round, only what
	 * it had not taken yet. */
	bool between = pthread_mutex_timedlock(&round_lock, &ts) == 0;
	struct hook_thread *w = between && P.t ? P.t : hook_self;
	uint64_t written = 0;
	pthread_mutex_lock(&gpu_sh.lock);
	struct gpu_sub *s = gpu_sh.in_head, *next;
	gpu_sh.in_head = gpu_sh.in_tail = NULL;
	pthread_mutex_unlock(&gpu_sh.lock);
	for (; s; s = next) {
		next = s->next;
		if (write_unknown(w, s)) {
			written++;
			pthread_mutex_lock(&gpu_sh.lock);
			gpu_sub_free(s);
			pthread_mutex_unlock(&gpu_sh.lock);
		}
	}
	for (unsigned i = 0; between && i < P.nactive; i++) {
		struct gpu_stream *st = P.active[i];
		while ((s = st->head)) {
			st->head = s->next;
			copy_forget(s);
			if (write_unknown(w, s)) {
				written++;
				pthread_mutex_lock(&gpu_sh.lock);
				gpu_sub_free(s);
				pthread_mutex_unlock(&gpu_sh.lock);
			}
		}
		st->tail = NULL;
	}
	if (between)
		P.nactive = 0;
	/* What is left was never written: counted lost, and as untimed with the rest. */
	pthread_mutex_lock(&gpu_sh.lock);
	uint64_t lost = gpu_sh.outstanding;
	pthread_mutex_unlock(&gpu_sh.lock);
	if (lost)
		write_lost(w, lost);
	__atomic_add_fetch(&gpu_sh.untimed, written + lost, __ATOMIC_RELAXED);
	__atomic_add_fetch(&gpu_sh.lost, lost, __ATOMIC_RELAXED);
	if (between) {
		if (P.nerrs)
			gpu_sh.err_median = gpu_median(P.errs, (int)P.nerrs);
		pthread_mutex_unlock(&round_lock);
	}
}
