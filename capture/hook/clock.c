/* clock.c: when a call starts and ends. Where the TSC can be trusted, each is one TSC read
 * mapped onto CLOCK_MONOTONIC (hook_call_start, hook_end_time in hook.h).
 *
 * Why TSC reads: the clock's read of the TSC is fenced (it waits for every load before it,
 * the misses of the wrapper's first loads among them), and around it come the vDSO's reads of
 * the kernel's time data; a plain TSC read waits for nothing. On an H200, in one run, the
 * launch loop's ten calls an op cost 0.36 us an op less with a TSC read than a clock read at
 * their start (BENCHMARKS, "Calls started from the TSC").
 *
 * The mapping. Each thread holds an anchor: a clock read t bracketed by TSC reads a and b, kept
 * as the pair (t, b) and the width w = b - a; and the rate (ns per tick) that the process learns
 * from such pairs. A call that returns at tick c ends at t + (c - b) * rate. An anchor serves
 * 2^20 ns (~1 ms) after it was taken; a call that returns later takes a new one, after its own
 * TSC read and so outside its duration. The rate is the slope between the first pair (taken at
 * start) and the latest, then between pairs half a second to a second apart, so that it follows
 * NTP's slewing of CLOCK_MONOTONIC; it is used once its error bound, (w1 + w2) / span, is at most
 * 1e-5 (~15 ms after start). Until then, and wherever the TSC is not used, a call's start and
 * end are clock reads.
 *
 * Error bound. The clock reads its own TSC somewhere between a and b, so a pair puts t at most w
 * ticks early: an end mapped from it lies up to w early, and a start is mapped and then put w
 * later, so that it lies up to w late and never before a clock read the program made before
 * the call (nor an NVTX record's, nor its parent call's start: hook_floor). A duration is so the
 * TSC's count of the call less at most w, and differs from it further by at most
 *     1.05 ms x the rate's relative error  (+ a few ns of out-of-order execution),
 * w being at most twice the narrowest bracket the process has seen (one TSC read plus one clock
 * read: ~50 ns on the development VM, whose 2 GHz TSC's rate came out within 0.02 ppm). The rate
 * term is at most 10.5 ns at first use and under 0.5 ns once the rate spans half a second, plus
 * 1.05 ms x any change in NTP's slewing of CLOCK_MONOTONIC within the last second (Linux allows
 * 500 ppm in all: 0.5 us at the very worst; NTP's changes are ppm-sized: under 1 ns). A duration
 * below zero is written as 0: calls shorter than w mostly are.
 *
 * Safety. The TSC is used only when it is invariant (CPUID 0x80000007 EDX bit 8, from which
 * Linux sets both constant_tsc and nonstop_tsc) and the kernel's clocksource reads the TSC (tsc,
 * kvm-clock, a hypervisor's TSC page): CLOCK_MONOTONIC is then a linear function of the TSC
 * between the kernel's updates, and the kernel has checked that CPUs agree. Each new anchor is
 * checked against the thread's previous one: a difference beyond both brackets, 2e-5 of the time
 * between them and 32 ns (TSCs that disagree between CPUs, a jump in the clock's rate) restarts
 * the calibration, and after 5 restarts each within 10 s of the one before, calls start and end
 * with clock reads for good. CUTHOOK_TSC=0 turns the TSC off. Builds for other machines than x86-64
 * read the clock at both ends.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>

#include "hook.h"

#define SPAN_NS (UINT64_C(1) << 20) /* an anchor's life: about 1 ms */
#define RETRY_NS 32768              /* no TSC rate or no narrow sample: time to the next try */
#define RATE_ERROR 1e-5             /* the largest rate error bound used */
#define WINDOW_NS 500000000.0       /* the rate's window slides once it spans 2x this */
#define MAX_RESTARTS 4              /* restarts less than RESTARTS_NS apart before giving up */
#define RESTARTS_NS 10000000000LL

int hook_tsc_on, hook_tsc_learning;

/* A clock read t bracketed by the TSC reads a and b: the pair (t, b), w = b - a. */
struct sample {
	int64_t t;
	uint64_t c, w;
};

static struct {
	int lock;
	bool have_base;
	int restarts;
	int64_t restarted;       /* when the last restart was */
	struct sample base, mid; /* the rate is the slope from base; mid becomes the next base */
	uint64_t mult;           /* the rate, ns per tick << 32; 0 while unknown */
	uint64_t wmin;           /* the narrowest bracket seen */
} C;

#ifdef HOOK_HAVE_TSC
#include <cpuid.h>

/* A clock read bracketed by TSC reads; false when no bracket of a few was narrow enough
 * (s->t then holds a clock read all the same). */
static bool
sample(struct sample *s)
{
	uint64_t wmin = __atomic_load_n(&C.wmin, __ATOMIC_RELAXED);
	for (int i = 0; i < 3; i++) {
		/* The clock's own TSC read is fenced, so a comes before it; b is not, like the
		 * read that ends a call, so that both lag the clock's return alike. */
		uint64_t a = __builtin_ia32_rdtsc();
		s->t = hook_now();
		s->c = __builtin_ia32_rdtsc();
		s->w = s->c - a;
		if (s->c <= a || s->c >= HOOK_END_TSC)
			return false;
		if (s->w < wmin || !wmin) {
			/* Racy, but only ever narrower than some thread's sample. */
			__atomic_store_n(&C.wmin, s->w, __ATOMIC_RELAXED);
			return true;
		}
		if (s->w <= 2 * wmin)
			return true;
	}
	return false;
}

/* Ticks to ns at the rate mult, for d ticks at most twice an anchor's span (the product fits
 * in 64 bits). */
static inline int64_t
ticks_ns(uint64_t d, uint64_t mult)
{
	return (int64_t)((d * mult) >> 32);
}

/* Forgets the rate, so that calls end with clock reads until it is learnt again; for good
 * after MAX_RESTARTS in a row, each within RESTARTS_NS of the one before (a rare jump in
 * NTP's slewing restarts it now and then; TSCs that disagree between CPUs, all the time).
 * Caller holds C.lock. */
static void
restart(const struct sample *s)
{
	if (C.restarts && s->t - C.restarted > RESTARTS_NS)
		C.restarts = 0;
	C.restarted = s->t;
	C.base = C.mid = *s;
	__atomic_store_n(&C.mult, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&hook_tsc_on, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&hook_tsc_learning, ++C.restarts <= MAX_RESTARTS, __ATOMIC_RELAXED);
}

/* Feeds a sample to the process's rate, after checking it against the thread's anchor a (when
 * it has a recent one). Returns the rate to use, or 0 (not known yet, or the sample
 * disagrees). */
static uint64_t
calibrate(const struct sample *s, const struct hook_tsc *a)
{
	if (__atomic_exchange_n(&C.lock, 1, __ATOMIC_ACQUIRE))
		return __atomic_load_n(&C.mult, __ATOMIC_RELAXED); /* another thread is at it */
	uint64_t mult = C.mult;
	if (!__atomic_load_n(&hook_tsc_on, __ATOMIC_RELAXED) &&
	    !__atomic_load_n(&hook_tsc_learning, __ATOMIC_RELAXED)) {
		mult = 0; /* given up for good */
		goto out;
	}
	if (!C.have_base) {
		C.base = C.mid = *s;
		C.have_base = true;
		goto out;
	}
	if (a && a->span && s->c > a->c && s->c - a->c <= 2 * a->span) {
		int64_t age = ticks_ns(s->c - a->c, a->mult);
		int64_t dev = s->t - (a->t + age);
		int64_t tol = ticks_ns(a->w + s->w, a->mult) + (int64_t)(2e-5 * (double)age) + 32;
		if (dev > tol || dev < -tol) {
			restart(s);
			mult = 0;
			goto out;
		}
	}
	if (s->c <= C.base.c || s->t <= C.base.t) {
		/* A sample older than the base (another thread's, taken before the base and fed
		 * after it) teaches nothing; one older by one clock and not the other disagrees. */
		if ((s->c < C.base.c) != (s->t < C.base.t)) {
			restart(s);
			mult = 0;
		}
		goto out;
	}
	double span = (double)(s->c - C.base.c);
	if ((double)(C.base.w + s->w) <= RATE_ERROR * span) {
		double rate = (double)(s->t - C.base.t) / span;
		mult = (uint64_t)(rate * 4294967296.0 + 0.5);
		__atomic_store_n(&C.mult, mult, __ATOMIC_RELAXED);
		__atomic_store_n(&hook_tsc_on, 1, __ATOMIC_RELAXED);
		__atomic_store_n(&hook_tsc_learning, 0, __ATOMIC_RELAXED);
		if ((double)(s->c - C.mid.c) * rate >= WINDOW_NS) {
			C.base = C.mid;
			C.mid = *s;
		}
	}
out:
	__atomic_store_n(&C.lock, 0, __ATOMIC_RELEASE);
	return mult;
}

/* Makes s the thread's anchor at the rate mult. */
static void
anchor(struct hook_tsc *a, const struct sample *s, uint64_t mult)
{
	a->t = s->t;
	a->c = s->c;
	a->w = s->w;
	a->mult = mult;
	a->span = (SPAN_NS << 32) / mult;
}

int64_t
hook_tsc_time_slow(struct hook_tsc *a, uint64_t c)
{
	struct sample s;
	uint64_t mult = 0;
	if (a->retry) {
		/* The last try found no narrow bracket: not again for a while. */
		s.t = hook_now();
		if (s.t < a->retry) {
			a->from_clock++;
			return s.t;
		}
	}
	bool ok = sample(&s);
	if (ok)
		mult = calibrate(&s, a); /* checks s against the anchor it replaces */
	a->retry = ok ? 0 : s.t + RETRY_NS;
	if (!mult) {
		a->span = 0;
		a->from_clock++;
		return s.t;
	}
	anchor(a, &s, mult);
	/* c came just before the sample, unless the TSC disagrees between CPUs. */
	if (c <= s.c && s.c - c < a->span)
		return s.t - ticks_ns(s.c - c, mult);
	a->from_clock++;
	return s.t;
}

void
hook_tsc_learn(struct hook_tsc *a, int64_t now)
{
	struct sample s;
	a->retry = now + RETRY_NS;
	if (!sample(&s))
		return;
	uint64_t mult = calibrate(&s, a);
	if (mult) {
		anchor(a, &s, mult);
		a->retry = 0;
	}
}

/* The kernel's clocksource reads the TSC (tsc, kvm-clock, hyperv_clocksource_tsc_page...). */
static bool
clocksource_is_tsc(void)
{
	char buf[64] = "";
	int fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource",
	              O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return strstr(buf, "tsc") || strncmp(buf, "kvm-clock", 9) == 0;
}

/* Invariant TSC: CPUID 0x80000007, EDX bit 8, from which Linux sets both constant_tsc and
 * nonstop_tsc. */
static bool
tsc_invariant(void)
{
	unsigned eax, ebx, ecx, edx;
	if (!__get_cpuid(0x80000000, &eax, &ebx, &ecx, &edx) || eax < 0x80000007)
		return false;
	__get_cpuid(0x80000007, &eax, &ebx, &ecx, &edx);
	return edx & (1u << 8);
}

void
hook_clock_init(void)
{
	const char *env = getenv("CUTHOOK_TSC");
	if ((env && strcmp(env, "0") == 0) || !tsc_invariant() || !clocksource_is_tsc())
		return;
	/* The first pair of the rate, from the narrowest of a few brackets: a call made later
	 * than ~15 ms after start has a rate at once. */
	struct sample s, best = {0, 0, UINT64_MAX};
	for (int i = 0; i < 4; i++)
		if (sample(&s) && s.w < best.w)
			best = s;
	if (best.w == UINT64_MAX)
		return;
	__atomic_store_n(&hook_tsc_learning, 1, __ATOMIC_RELAXED);
	calibrate(&best, NULL);
}

uint64_t
hook_tsc_hz(void)
{
	uint64_t mult = __atomic_load_n(&C.mult, __ATOMIC_RELAXED);
	return mult ? (uint64_t)(1e9 * 4294967296.0 / (double)mult + 0.5) : 0;
}

#else /* no TSC: both ends are clock reads */

int64_t
hook_tsc_time_slow(struct hook_tsc *a, uint64_t c)
{
	(void)c;
	a->from_clock++;
	return hook_now();
}

void
hook_tsc_learn(struct hook_tsc *a, int64_t now)
{
	(void)a, (void)now;
}

void
hook_clock_init(void)
{
}

uint64_t
hook_tsc_hz(void)
{
	return 0;
}

#endif

void
hook_clock_fork_child(void)
{
	/* A thread of the parent may have held it at the fork. */
	C.lock = 0;
}
