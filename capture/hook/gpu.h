/* gpu.h: libcuthook's gpu layer (cut-events(5), GPU work): what the submission side (gpu.c),
 * the completion thread (gpu_poll.c) and the clock mapping (gpu_map.c, pure functions) share.
 *
 * How work is timed. After a kernel launch, copy, memset or graph launch returns, the library
 * records a timing event (END) on the same stream. Work starts when its stream is done with
 * the timed work before it (END(k-1) is START(k)), but not before its call handed it to the
 * GPU: on an idle stream, when the call returned. A START event is recorded before the call
 * only where something else may have held the stream up (other work put on it, a wait, an
 * allocation from a pool, a wait of the whole context, other streams busy, a synchronous
 * copy): one event per launch in the common case, not two. A completion
 * thread of the library queries the events (never the program's threads), maps their GPU times onto
 * CLOCK_MONOTONIC through anchors, and writes one gpu event per submission. */
#ifndef HOOK_GPU_H
#define HOOK_GPU_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "hook.h"
#include "hooklib.h"

typedef void *gpu_event_t;

#define CU_STREAM_NON_BLOCKING 1 /* cuStreamCreate's flag (cuda.h) */

/* How a stream waits for others without being told (CUDA's implicit synchronization): the
 * legacy stream for the blocking streams' earlier work, a blocking stream (per-thread default
 * streams too) for the legacy stream's, a non-blocking stream for none. */
enum gpu_stream_class { SC_LEGACY, SC_BLOCKING, SC_NONBLOCKING };

/* A stream of a context, as both sides see it (under gpu_lock unless said otherwise). */
struct gpu_stream {
	void *ctx;
	uint64_t key;      /* the stream handle; 1 the legacy stream; tid << 8 | 2 per-thread */
	unsigned char cls; /* enum gpu_stream_class, as its latest submission found it */
	unsigned char busy_cls;   /* the class it was counted busy under (gpu_ctx) */
	bool created_nonblocking; /* seen created with CU_STREAM_NON_BLOCKING */
	uint64_t submitted;       /* timed submissions queued */
	uint64_t completed;       /* of them, those the completion thread saw end */
	bool force_start;         /* other work went on the stream since: record the next START */
	unsigned wait_gen;        /* its context's wait_gen when it last recorded a START */
	/* The completion thread's own: */
	struct gpu_sub *head, *tail; /* timed submissions not yet seen to end, in order */
	int64_t last_end;            /* host time of the END of the last timed work on it... */
	double last_end_gpu;         /* ...its GPU time (gpu_clock: ns since the first anchor)... */
	unsigned last_end_gen;       /* ...on the clock of this generation (gpu_ctx) */
	bool have_last;
	int64_t last_written; /* the end written for the last piece of work on it */
	bool have_written;
};

/* One timed submission. */
struct gpu_sub {
	struct gpu_sub *next;
	struct gpu_stream *st;
	struct gpu_ctx *gc;
	void *stream;           /* the handle events are recorded on */
	gpu_event_t start, end; /* start NULL: the stream's previous work's END */
	uint64_t corr;
	int64_t tid, t0, t1; /* the submitting thread; when its call started and returned */
	uint64_t er_end;     /* hook_end() once its END was recorded... */
	int64_t t_er;        /* ...and that time */
	bool sync; /* handed over inside its call: a copy or memset (may be done when its call
	            * returns), a graph handed over in parts */
	bool other_ctx;      /* a copy to a stream of a context not current: its events that one's */
	bool start_turns;    /* its START is for turns another context may take (-S, takes_turns) */
	uint64_t handle;     /* the CUfunction or CUgraphExec */
	uint64_t bytes;
	uint32_t grid[3], block[3];
	uint32_t params;    /* a kernel's parameters, bytes (param_bytes), 0: not known */
	const struct cut_name *name; /* a kernel's, as its call was decoded (a module unloaded
	                              * later may have its handle named anew); NULL: not known */
	char dir[6];        /* "HtoD"... for copies, "" when unknown */
	int64_t began, ended; /* a copy that slows other work: when its START and END ran, once
	                         seen */
	uint32_t asked[2];    /* ...and the completion thread's rounds they were last asked in */
	unsigned char kind; /* enum gpu_kind */
};

/* A context the program submitted to: its event pool, its private stream and its clock. */
#define GPU_PICKUPS 33 /* the latest three anchors' */
struct gpu_ctx {
	void *ctx;
	int device;        /* ordinal; -1 until known */
	bool device_told;  /* its device record is written (once, whatever ends the context) */
	/* Another context of the process is on its device: the two take turns (a GPU without MPS
	 * runs one context at a time), so every submission records a START (gpu.c). */
	bool takes_turns;
	gpu_event_t *pool;
	unsigned npool, cap;
	unsigned busy;                       /* streams with timed work outstanding... */
	unsigned busy_legacy, busy_blocking; /* ...of them, the legacy stream and blocking ones */
	unsigned wait_gen; /* waits of the whole context seen (cuCtxWaitEvent): each of its
	                      streams records a START at its next timed work */
	/* The completion thread's own: */
	bool ready;  /* private stream, gap and first anchor done */
	bool broken; /* the context could not be set up: its work is untimed */
	void *priv;  /* a non-blocking stream of its own, for anchors */
	gpu_event_t anchor;
	struct gpu_clock *clock;
	unsigned clock_gen; /* clock started so many times: another's GPU times are not its */
	/* The clock kernel, loaded as the context was made (gpu_kernel.c), or NULL; and whether
	 * that was tried. The completion thread's: whether it dates anchors. */
	void *kernel;
	bool kernel_tried;
	bool kernel_anchors;
	/* Anchors timed through host memory (gpu_map.c): a word the host writes and the stream
	 * waits for, a word the stream writes back; false: events' brackets instead. */
	bool wait_anchors;
	bool bracket_anchors; /* the clock's anchors are events' brackets */
	char *words;          /* a page of host memory the device reads and writes... */
	uint64_t words_dev;   /* ...where it sees it */
	volatile uint32_t *flag, *ack;
	uint64_t flag_dev, ack_dev; /* where the device sees them */
	uint32_t seq;               /* the value written last */
	gpu_event_t held;           /* an anchor's event the stream may not have run yet, or NULL */
	gpu_event_t ref;            /* a new reference event recorded, not yet taken */
	int64_t first;              /* host time of the first anchor */
	int64_t next_ref;           /* when to record a new reference event */
	int64_t next_anchor;        /* when to take the next anchor... */
	int64_t next_pickup;        /* ...and the next pick-up samples (gpu_poll.c's schedules) */
	/* How long the device takes to run an operation handed to an idle stream, from the
	 * return of the call that handed it over, as the anchors' events measure it: the median
	 * and the largest of the latest samples, but those that waited out another context's turn
	 * (gpu_pickups). */
	int64_t pickup, pickup_hi;
	struct gpu_pickup {
		double gpu;     /* an event's GPU time (gpu_clock)... */
		int64_t handed; /* ...and when its record returned */
	} pickups[GPU_PICKUPS];
	unsigned npickups, pickup_next;
};

/* GPU time to CLOCK_MONOTONIC (gpu_map.c): the latest anchors (events whose host times are
 * known within +-err), GPU times counted from the first one's through a reference event, and
 * the fit: the rate and the host time at the latest anchor. */
#define GPU_ANCHOR_WINDOW 16
struct gpu_anchor {
	double gpu;        /* its GPU time, ns since the first anchor's */
	int64_t host, err; /* its host time, +- err */
	/* Dated by the clock kernel's end (gpu_clock_link): its host time as the kernel's end
	 * gave it, and its GPU time less the kernel's end (its lag) */
	bool linked;
	int64_t host_linked;
	double lag;
};
struct gpu_clock {
	struct gpu_anchor a[GPU_ANCHOR_WINDOW]; /* the latest, oldest first */
	int na;                                 /* in a[] */
	int n;                                  /* anchors taken */
	double ref;      /* the reference event's GPU time, ns since the first anchor's */
	double gpu_at;   /* the fit: at this GPU time... */
	int64_t host_at; /* ...the host's was this... */
	int64_t err_at;  /* ...+- this... */
	double rate;     /* ...and it runs so many host ns per GPU ns... */
	double rate_err; /* ...+- this, relatively */
	int64_t gap;     /* GPU ns between back-to-back stream operations */
	uint64_t kbase;  /* the first linked anchor's kernel end: its lags are counted from it */
	bool have_link;
	double lag_min; /* the least lag of its linked anchors */
};

/* The rate's relative doubt until anchors far enough apart measure it: GPU clocks were
 * measured 18.4 ppm off CLOCK_MONOTONIC (RESEARCH-wave2.md); crystals are specified to some
 * 50 ppm. */
#define GPU_RATE_ERR_DEFAULT 50e-6
/* GPU event times are multiples of 32 ns. */
#define GPU_QUANTUM_NS 32

/* gpu_map.c */
/* The clock kernel's tries (gpu_kernel.c): in each, the host wrote the flags between its clock
 * reads w0 and w1 and saw the kernel's ack at r; on the GPU's clock (%globaltimer, the clock
 * events read), the latest read of a flag issued before the flags were written was issued at
 * miss (0: none), and the first read that saw them came back at hit (0: the try timed out). */
struct gpu_ktry {
	int64_t w0, w1, r;
	uint64_t miss, hit;
};
/* How much later than the kernel's end, as it reads the clock, the event recorded after it may
 * be stamped beyond the stamps after the program's work: the spread of that delay between
 * kernels (within +-225 ns on an H100: tests/bench/clockcal.c, BENCHMARKS). */
#define GPU_LINK_NS 224
/* Two such delays differ by up to twice that: a lag beyond it is not the link's spread (a
 * context switch is some 140 us: gpu_clock_link). */
#define GPU_LINK_SPREAD_NS (2 * GPU_LINK_NS)
/* The host time of GPU time end (the kernel's end) from n tries: the offset of the two clocks
 * each try allows (the GPU's at least miss - w1 and hit - r, at most hit - w0), all of them
 * together, else (they disagree: a clock stepped) the narrowest alone; the event after the
 * kernel, a stream operation (gap) after its end as every END is after its work (gpu_work_span),
 * at *host +- *err. False when no try bounds it. */
bool gpu_kernel_anchor(const struct gpu_ktry *t, int n, uint64_t end, int64_t gap, int64_t *host,
                       int64_t *err);
/* The first anchor, at host time host +- err: its event is the reference. */
void gpu_clock_init(struct gpu_clock *c, int64_t host, int64_t err, int64_t gap);
/* A new anchor at host time host +- err, gpu_ns after the reference event on the GPU's clock:
 * its event is the reference from now. */
void gpu_clock_anchor(struct gpu_clock *c, int64_t host, int64_t err, double gpu_ns);
/* The latest anchor (gpu_clock_init's or gpu_clock_anchor's) was dated by the clock kernel,
 * whose end the GPU's clock read as kend, its event taken as a stream operation later
 * (gpu_kernel_anchor). Events read the same clock, so its GPU time less kend is the same for
 * every such anchor but where the device turned to another context between the kernel's end and
 * the event: on an H200 with three contexts of one process taking turns, a first anchor's event
 * came 281 us (two switches) later than the next one's, and every time mapped through it that
 * much early. Each linked anchor in the window is held to the least lag of any: one that
 * lagged more than the link's spread (GPU_LINK_SPREAD_NS) beyond it has its host time moved later
 * by the difference (a new least moves the ones before), and the fit is made again. */
void gpu_clock_link(struct gpu_clock *c, uint64_t kend);
/* A new reference event, gpu_ns after the one before. */
void gpu_clock_advance(struct gpu_clock *c, double gpu_ns);
/* Host time of an event gpu_ns after the reference (negative: before it), and the bound on
 * that time's error in *bound (NULL: not wanted). */
int64_t gpu_clock_map(const struct gpu_clock *c, double gpu_ns, int64_t *bound);
/*
 * The span of a piece of work on a stream, from its events (host times, ns). It starts when
 * its stream reaches it, a gap after the event before it there (its START, else the END of the
 * work before it: a stream operation begins that long after the one before it), and not before
 * the device had it: an idle stream's work starts from its call, the device's pick-up time
 * after the call handed it over (a kernel's call when it returns, a copy or memset anywhere
 * from its start, as it may stage the data first: then the start is only a bound where the
 * call ran on past it). It ends a gap before its END, or before: where the END ran as soon as
 * the device could run it after its record, the work may have ended earlier, and the end is
 * only a bound (a start from the call after it makes the span the bounds of both). Then,
 * whatever the clock mapping did: no piece starts before its call began (t0) nor before the
 * piece before it on its stream ended (prev_end, as written), nor ends after the host saw its
 * END done (seen) or before it starts; what had to be moved is said in how
 * (GPU_SPAN_CLAMPED_*).
 */
struct gpu_span_in {
	int64_t end_ev;    /* its END's time */
	int64_t before_ev; /* the event before it on its stream, when have_before */
	bool have_before;
	bool start_idle;  /* before_ev is its own START, which ran on an idle stream */
	bool start_turns; /* before_ev is its own START, which may have waited out another's turn */
	int64_t gap;     /* a stream operation's length */
	int64_t t0, t1;  /* when its call began and returned */
	int64_t t_er;    /* when the record of its END returned */
	bool sync;       /* a copy or memset: handed over inside its call */
	bool kernel;     /* a kernel: set up by the device as it is picked up (GPU_KERNEL_*) */
	bool graph;      /* a graph handed over whole: set up as a kernel, handed over at return */
	int64_t pickup;  /* the events' pick-up time (gpu_ctx) */
	int64_t pickup_hi;
	bool at_return;   /* work on device memory alone, handed over as its call returned */
	int64_t prev_end; /* the end written for the stream's piece before it, when have_prev */
	bool have_prev;
	int64_t seen; /* when the host saw its END done: no later can it have ended */
	/* Its twins (gpu_twins_dur), when have_twins: how long work launched alike lasted, the
	 * median of the latest, and their median deviation from it; and those durations and the
	 * latest that ended at a bound (twin_n in all; none: not given). */
	int64_t twin, twin_dev;
	bool have_twins;
	const int64_t *twin_durs;
	int twin_n;
	int64_t twin_call; /* the median length of the twins' calls; 0: not known */
};
/* How close to its call's return a copy's start from its events may be and still be taken as
 * its start, not as a bound; how much later than the device could run it an END may run and
 * still make the end a bound. */
#define GPU_BOUND_SLACK_NS 1000
/* How much shorter than its twins work started from its call must come out for its start to
 * be taken from its end less their median (gpu_work_span): a slack, a share of their median
 * (a kernel's runtime drifts over a run: on an H200 a 342 us kernel's twins came out 2-3 us
 * longer than it did, their median deviation 148 ns), and twice their median deviation
 * (robust where the twins hold such calls too: the typical twin's spread, where a range would
 * be the worst one's). A start from the call is good to a microsecond or two where its call
 * handed the work over as it returned; the rule is for calls that ran on far longer. */
#define GPU_TWIN_SLACK_NS 2000
#define GPU_TWIN_SHARE 200 /* a two-hundredth */
#define GPU_TWIN_DEVS 2
/* A start is taken from the twins only where its call came out longer than theirs did (the
 * median) by as much as the start moves, less the slack: the call ran on. And work that lasted
 * as GPU_TWIN_ALIKE of its twins did (within the slack; the latest durations that ended at a
 * bound count too: gpu_twins_note) is of their kind and not moved, whatever their median
 * says. (Not the late rule's: on an H200 it then moved fewer than half the kernels it had moved,
 * and the starts from the events came out 0.3-0.45 us further off CUPTI's at the 90th
 * percentile.) Both for launches alike (one kernel, grid and block) whose work differs by
 * their arguments, as a gemm kernel run for a product of K 1,024 and of 4,096 on one output
 * shape (5.7 and 13 us on an H200, alternating): the rule put every short one's start 7.5 us
 * early, from calls no longer than the long ones'; the short ones mostly ended at a bound, and
 * only the long ones were measured. */
#define GPU_TWIN_ALIKE 2
/*
 * A kernel handed to an idle stream: when it starts, from its call. Against CUPTI in the same
 * process (58 runs of torch_gpu_work.py on H100s and H200s, 40-60 such kernels a run) the
 * start came at the call's start plus 0.86-0.95 of its length plus 1.5-2.8 us, the same in
 * every run, cuthook's and cutcapture's: the device picks a kernel up later than an event
 * handed over alike has its time (it sets the kernel up), and the call hands the work over
 * some nine-tenths of the way through (the rest, the END's record and the library's own
 * work, grows with the call as a slow CPU makes every part of it slower). So the start is
 * the return plus the events' pick-up time (less an operation) plus GPU_KERNEL_SETUP_NS, less
 * a ninth of the call, no more than GPU_KERNEL_HANDOVER_MAX_NS (a call that ran on far longer
 * was held after handing its work over, or before: the twins say which).
 */
#define GPU_KERNEL_SETUP_NS 1900
#define GPU_KERNEL_HANDOVER_PART 9 /* a ninth of the call: after the hand-over */
#define GPU_KERNEL_HANDOVER_MAX_NS 5000
/*
 * A graph launched whole on an idle stream (a chain of kernels: not handed over in parts) is
 * picked up as a kernel is, its first kernel set up GPU_KERNEL_SETUP_NS, and taken as handed
 * over as its launch returns: no part of the call comes off. On H200s (BENCHMARKS, "Graph
 * launches started from their call"): by the GPU's clock a graph's first kernel started from
 * 0.7 us sooner to 0.4 us later than a kernel alike did after its own launch returned
 * (tests/bench/graphstart.cu, two machines);
 * against CUPTI torch.compile's graphs' first kernels started 3.1 us after the return whatever
 * the launch's length (6.5-23 us): from the return and the pick-up alone they came out 1.9-2.6
 * us early (the median of each of 5 runs), with the kernel's rule 1.5-1.8, with this one
 * 0.28-0.65. A launch that runs long may have handed the graph over earlier: odd_apis.cu's
 * chain of two kernels started about a quarter of its launch's length (past some 7 us) before
 * the return, up to 2.2 us earlier than this rule puts it.
 */
/*
 * How much longer than its twins a kernel started from the events before it must come out for
 * its start to be taken from its end less their median, and how much longer at most: the
 * device sometimes starts a kernel after the work before it up to a microsecond or two late
 * (BENCHMARKS, "Starts from twins where a launch ran on": about one gemm kernel a step on an
 * H200, its duration from the events that much long, CUPTI's gaps showing the same without
 * cut), which no event before it can see. Longer than the most, it ran longer: a kernel whose
 * work changes from launch to launch alike, or one that waited out another process's turn.
 * Not for work timed from a START of its own that ran on an idle stream (the kernel's set-up
 * follows such a START), nor from one that may have waited out another context's turn (-S,
 * a context that takes turns: after a turn, the work's end comes late too; beside other
 * processes on an H100 the rule put the starts of most of a light process's short kernels
 * 0.5-0.8 us late).
 */
#define GPU_LATE_SLACK_NS 300
#define GPU_LATE_SHARE 1000 /* a thousandth of the twins' median */
#define GPU_LATE_MAX_NS 2000
enum {
	GPU_SPAN_FROM_CALL = 1,     /* the start is from the call: the stream was idle */
	GPU_SPAN_CLAMPED_START = 2, /* moved later, to the call's start or the piece before */
	GPU_SPAN_CLAMPED_END =
	    4, /* moved: earlier, to when the host saw it done; or later, to the start */
	GPU_SPAN_START_BOUND = 8,  /* the work started no earlier, maybe later */
	GPU_SPAN_END_UNKNOWN = 16, /* never timed: no end (the process ended first) */
	GPU_SPAN_END_BOUND = 32,   /* the work ended no later, maybe earlier */
	GPU_SPAN_FROM_TWINS = 64,  /* the start is its end less its twins' median: the stream was
	                              idle and the call ran on after handing the work over */
	GPU_SPAN_LATE = 128, /* the start is its end less its twins' median: the device started it
	                        late after the work before it (GPU_LATE_*) */
};
struct gpu_span {
	int64_t start, end;
	unsigned how; /* GPU_SPAN_* */
};
void gpu_work_span(const struct gpu_span_in *in, struct gpu_span *out);
/* Median of n values (sorted in place). */
int64_t gpu_median(int64_t *v, int n);
/*
 * Twins: the latest durations of work launched alike (one kernel, grid and block, in one
 * context: key), for the start of such work whose call ran on after handing it over. A launch
 * that returns long after the device took its work (on an H200 under a profiler, launches of
 * 25-67 us against 6-16, a 342 us kernel begun 3-22 us before the return) makes the start from
 * the return that much late, and nothing else recorded says when the work began; the same
 * kernel launched alike ran within some 3 us of its twins every time. GPU_TWINS kinds of
 * launch are remembered (those after go without); a kind keeps its latest GPU_TWIN_KEEP.
 */
#define GPU_TWINS 4096
#define GPU_TWIN_KEEP 9
#define GPU_TWIN_MIN 3 /* twins it takes to say how long work lasts */
struct gpu_twin {
	uint64_t key[4]; /* all 0: a free slot; UINT64_MAX, 0, 0, 0: one forgotten */
	int n, next;
	int64_t dur[GPU_TWIN_KEEP], call[GPU_TWIN_KEEP]; /* and their calls' lengths */
	int nb, nextb; /* ...and the latest durations that ended at a bound */
	int64_t bound[GPU_TWIN_KEEP];
};
struct gpu_twins {
	struct gpu_twin t[GPU_TWINS];
};
/* The key of a kernel launched by ctx as handle with grid and block. */
void gpu_twin_key(uint64_t key[4], const void *ctx, uint64_t handle, const uint32_t grid[3],
                  const uint32_t block[3]);
/* Notes a duration of work launched as key: measured (started from its call or the events,
 * not moved), with the length of its call, or, bound, one whose start was from its call and
 * whose end was a bound (its END ran as soon as it could after its record): no twin, but
 * evidence of the kind's durations that the measured ones may lack (work of a kind that is
 * always done before its END is recorded never ends other than at a bound). */
void gpu_twins_note(struct gpu_twins *tw, const uint64_t key[4], int64_t dur, int64_t call,
                    bool bound);
/* The median of the latest durations of work launched as key, and their median deviation
 * from it; call, when not NULL, gets the median length of their calls; durs, when not NULL,
 * gets those durations and then the latest that ended at a bound (2 * GPU_TWIN_KEEP at most),
 * *n how many: false when fewer than GPU_TWIN_MIN were measured. */
bool gpu_twins_dur(const struct gpu_twins *tw, const uint64_t key[4], int64_t *median, int64_t *dev,
                   int64_t *call, int64_t *durs, int *n);
/* Forgets the twins of a context that ended (its handles may be another's next). */
void gpu_twins_forget(struct gpu_twins *tw, const void *ctx);
/* A pick-up sample further than this above the median waited out another context's turn on
 * the device (gpu_pickups): a switch alone takes 126-145 us on an H100 without MPS. */
#define GPU_PICKUP_TURN_NS 100000
/* The device's pick-up time from n > 0 samples (sorted in place): the median in *median, and
 * in *hi the largest sample no more than GPU_PICKUP_TURN_NS above it. */
void gpu_pickups(int64_t *v, int n, int64_t *median, int64_t *hi);

/* gpu.c: the submission side */
extern unsigned char hook_gpu_kind[HOOK_NAPI];
extern HOOK_TLS uint64_t hook_corr; /* corr of the submission being recorded; 0: none */
/* Reads CUTHOOK_LAYERS and CUTHOOK_GPU_STARTS; fills hook_gpu_kind. */
void hook_gpu_init(void);
/* Whether the layer is on, and why not (for the header). */
const char *hook_gpu_off_reason(void);
/* Before a call of a kind: returns the submission to complete after the call, or NULL when
 * it is not timed (counted). */
struct gpu_sub *hook_gpu_before(enum hook_id id, const uint64_t *a);
/* After it: records END and sets hook_corr, returning s; or gives it back when the call
 * failed (NULL). */
struct gpu_sub *hook_gpu_after(struct gpu_sub *s, CUresult r, int64_t t0);
/* Once the call's args are decoded (NULL: none): takes a copy's bytes and direction from them
 * and hands s to the completion thread. */
void hook_gpu_queue(struct gpu_sub *s, const char *args, int64_t t1);
/* After a GK_ENQUEUE call: the stream's next timed work records a START. */
void hook_gpu_enqueued(enum hook_id id, const uint64_t *a);
/* After a GK_CONTEXT call that succeeded: loads the clock kernel into a context the layer has
 * seen no work of (gpu_kernel.c says why then). */
void hook_gpu_ctx_created(enum hook_id id, const uint64_t *a);
/* After a GK_STREAM call that succeeded: notes whether the new stream is non-blocking (no
 * driver query at launch: cuStreamGetFlags there invalidates a graph capture). */
void hook_gpu_stream_created(enum hook_id id, const uint64_t *a);
/* Before a GK_CTX_END call: the context it ends (its events, streams and memory go with it)
 * has its timed work written, waiting for the completion thread a bounded time, and is
 * started afresh at its next work (gpu_poll.c, gpu_ctx_end). */
void hook_gpu_ctx_ending(enum hook_id id, const uint64_t *a);
/* After a call that may end handles (hook_async_barrier: a module or library unloaded, a
 * context ended), recorded or not: the kernels' parameters' bytes known by handle are
 * forgotten, so a handle handed out again for another function is asked afresh. */
void hook_gpu_forget_params(void);
/* After a GK_INSTANTIATE call that succeeded: notes whether the driver will hand the graph's
 * work over in parts, the first soon after its launch call begins (gpu.c). */
void hook_gpu_graph_made(enum hook_id id, const uint64_t *a);
/* Stops the layer: waits a bounded time for outstanding work, writes it. Idempotent. */
void hook_gpu_stop(void);
/* The trailer's "gpu" members and own_thread, when the layer ran; the gpu events written. */
struct cut_trailer;
void hook_gpu_trailer(struct cut_trailer *t);
uint64_t hook_gpu_events(void);
/* Around fork, as hook_resolve_fork. */
void hook_gpu_fork(int phase);

/* The stream has timed work outstanding from now (delta 1) or no more (-1): c's counts of
 * busy streams, by the class the stream had when it became busy. Under gpu_sh.lock. */
void gpu_stream_busy(struct gpu_ctx *c, struct gpu_stream *st, int delta);

/* What both sides share (gpu.c). */
struct gpu_shared {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct gpu_sub *in_head, *in_tail; /* queued by the program's threads */
	struct gpu_sub *free_subs;
	unsigned outstanding;
	bool stopping;
	int64_t stop_deadline;
	int abandon; /* the completion thread did not stop in time: it writes nothing more */
	/* counts (atomics) */
	uint64_t timed, untimed, skips, starts, from_call, from_twins, late;
	uint64_t lost; /* of untimed, never written: the completion thread held them at the end */
	int64_t err_max, err_median;
	int64_t gap;        /* the first context's, for the trailer */
	int64_t poller_tid; /* the completion thread's, once it runs */
};
extern struct gpu_shared gpu_sh;

/* The real entry points the layer calls (never the wrappers: its own calls are no events). */
struct gpu_api {
	CUresult (*ctx_get_current)(void **);
	CUresult (*ctx_set_current)(void *);
	CUresult (*ctx_get_device)(int *);
	CUresult (*event_create)(gpu_event_t *, unsigned);
	CUresult (*event_record)(gpu_event_t, void *);
	CUresult (*event_query)(gpu_event_t);
	CUresult (*event_sync)(gpu_event_t);
	CUresult (*event_elapsed)(float *, gpu_event_t, gpu_event_t);
	CUresult (*stream_create)(void **, unsigned);
	CUresult (*stream_is_capturing)(void *, int *);
	CUresult (*exchange_capture_mode)(int *);
	CUresult (*device_get_name)(char *, int, int);
	CUresult (*device_get_uuid)(unsigned char *, int);
	CUresult (*device_get_bus)(char *, int, int);
	CUresult (*launch_host_func)(void *, void (*)(void *), void *);
	/* Optional: anchors timed by the host through stream memory operations (gpu_poll.c) */
	CUresult (*mem_host_alloc)(void **, size_t, unsigned);
	CUresult (*host_device_ptr)(uint64_t *, void *, unsigned);
	CUresult (*wait_value32)(void *, uint64_t, uint32_t, unsigned);
	CUresult (*write_value32)(void *, uint64_t, uint32_t, unsigned);
	/* Optional: anchors dated by the clock kernel (gpu_kernel.c) */
	CUresult (*module_load_data)(void **, const void *);
	CUresult (*module_get_function)(void **, void *, const char *);
	CUresult (*launch_kernel)(void *, unsigned, unsigned, unsigned, unsigned, unsigned,
	                          unsigned, unsigned, void *, void **, void **);
	/* Optional: a copy to a stream of another context, a green context's end (gpu.c) */
	CUresult (*stream_get_ctx)(void *, void **);
	CUresult (*ctx_from_green)(void **, void *);
	CUresult (*ctx_push)(void *);
	CUresult (*ctx_pop)(void **);
	/* Optional: the primary context a reset ends (gpu.c) */
	CUresult (*primary_get_state)(int, unsigned *, int *);
	CUresult (*primary_retain)(void **, int);
	CUresult (*primary_release)(int);
	/* Optional: how a graph will be handed over (gpu.c) */
	CUresult (*graph_get_nodes)(void *, void **, size_t *);
	CUresult (*graph_node_get_type)(void *, int *);
	CUresult (*graph_get_edges)(void *, void **, void **, size_t *);
	CUresult (*graph_get_edges_v2)(void *, void **, void **, void *, size_t *);
};
extern struct gpu_api gpu_api;
/* Resolves gpu_api; false when the driver lacks an entry point the layer needs. */
bool gpu_api_resolve(void);

/* gpu.c: a context that ended (gpu_ctx_end), and its streams, as new; under gpu_sh.lock, with
 * none of its work outstanding. */
void gpu_ctx_forget(struct gpu_ctx *c);
/* gpu_poll.c: writes the timed work of c, the completion thread's as it completes, else (not
 * done in a bounded time) as not timed, then forgets the context. */
void gpu_ctx_end(struct gpu_ctx *c);

/* gpu.c: pools */
struct gpu_ctx *gpu_ctx_of(void *ctx); /* under lock */
void gpu_sub_free(struct gpu_sub *s);  /* under lock: events back to the pool */

/* gpu_kernel.c: loads the clock kernel into ctx from a thread of the library's own, which it
 * waits for; returns the kernel, or NULL. */
void *gpu_kernel_load(void *ctx);

/* gpu_poll.c: the completion thread */
void gpu_poller_start(void);
/* Waits a bounded time for the completion thread to end; when it does not (starved of CPU,
 * held in the driver), writes what it has not with what is known and counts the rest lost. */
void gpu_poller_join(void);

#endif
