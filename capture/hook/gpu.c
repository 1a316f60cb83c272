/* gpu.c: the submission side of the gpu layer (gpu.h says how work is timed): which calls
 * submit work, the checks before one (a stream being captured into a graph is never touched),
 * the START and END events around it, and the pools both sides share. The program's thread
 * only records events and queues; it never queries an event or waits. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "classify.h"
#include "gpu.h"
#include "layer.h"
#include "meta.h"
#include "writer.h"

unsigned char hook_gpu_kind[HOOK_NAPI];
HOOK_TLS uint64_t hook_corr;
struct gpu_shared gpu_sh = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .wake = PTHREAD_COND_INITIALIZER,
};
struct gpu_api gpu_api;

#define MAX_OUTSTANDING 32768 /* timed submissions not yet written: memory stays bounded */
#define EVENT_CHUNK 64        /* events created at a time when a context's pool is empty */
#define MAX_CTX 32
#define MAX_PRIMARY 64 /* devices whose primary context's references are counted */
#define STREAM_SLOTS 4096
#define GRAPH_SLOTS 1024 /* executable graphs remembered, by handle */
#define GRAPH_MAX_NODES (1 << 20)
#define CU_GRAPH_NODE_TYPE_KERNEL 0
#define CU_STREAM_PER_THREAD ((void *)0x2)
#define CUDA_ERROR_NOT_READY 600
/* A context's wait (context-wait in api-categories.tsv: cuCtxWaitEvent) holds every stream of
 * the context it names; a green context's (cuGreenCtxWaitEvent) those of a green context, which
 * is not told apart from the others here: every context's. */
enum { CTX_WAIT_ONE = 1, CTX_WAIT_ALL };

static struct {
	bool on;
	bool all_starts; /* CUTHOOK_GPU_STARTS=all: a START before every submission */
	const char *off;
	bool poller;                         /* the completion thread was started */
	unsigned char stream_arg[HOOK_NAPI]; /* 1 + argument index of the stream; 0: none */
	bool per_thread[HOOK_NAPI];          /* a _ptsz/_ptds entry point */
	bool async[HOOK_NAPI];               /* returns before its work is done */
	unsigned char ctx_wait[HOOK_NAPI];   /* CTX_WAIT_*: makes a whole context wait */
	bool resets_primary[HOOK_NAPI];      /* ends the primary context of a device */
	bool ends_green[HOOK_NAPI];          /* ends the green context it names */
	bool retains_primary[HOOK_NAPI];     /* takes a reference to it */
	bool releases_primary[HOOK_NAPI];    /* gives one back: the last ends it */
	int primary_refs[MAX_PRIMARY];       /* the references the program holds, by device */
	struct gpu_ctx ctx[MAX_CTX];
	unsigned nctx;
	struct gpu_stream *streams[STREAM_SLOTS];
	unsigned nstreams;
	/* Executable graphs the driver hands over in parts (graph_made): a cache by handle, each
	 * instantiation writing its slot, so that a handle made again is never taken for an
	 * older graph's; one it lost is handed over whole, as before it was known. */
	struct {
		uint64_t exec;
		bool in_parts;
	} graphs[GRAPH_SLOTS];
	uint64_t corr;
} G = {.off = "off: not started"};

void
hook_gpu_init(void)
{
	if (!hook_layer_wanted(CUT_GPU)) {
		G.off = HOOK_OFF_UNWANTED;
		return;
	}
	const char *s = getenv("CUTHOOK_GPU_STARTS");
	G.all_starts = s && !strcmp(s, "all");
	for (int i = 0; i < HOOK_NAPI; i++) {
		const char *n = hook_names[i], *r = hook_roles[i];
		size_t len = strlen(n);
		hook_gpu_kind[i] = (unsigned char)cut_gpu_kind_of(n);
		G.per_thread[i] =
		    len > 5 && (!strcmp(n + len - 5, "_ptsz") || !strcmp(n + len - 5, "_ptds"));
		enum gpu_kind k = hook_gpu_kind[i];
		/* A copy or memset may return only once done though it is "Async" (pageable host
		 * memory is staged): from the call's start, with a START, like a synchronous one.
		 */
		G.async[i] = k == GK_KERNEL || k == GK_KERNEL_EX || k == GK_GRAPH;
		const char *sp = strchr(r, 'S');
		G.stream_arg[i] = sp ? (unsigned char)(sp - r + 1) : 0;
		unsigned f = cut_api_flags(n);
		G.resets_primary[i] = f & CUT_API_RESETS_CONTEXT;
		G.ends_green[i] = (f & CUT_API_DESTROYS_CONTEXT) && (f & CUT_API_GREEN);
		G.retains_primary[i] = f & CUT_API_RETAINS_PRIMARY;
		G.releases_primary[i] = f & CUT_API_RELEASES_PRIMARY;
		G.ctx_wait[i] = !(f & CUT_API_CONTEXT_WAIT) ? 0
		                : f & CUT_API_GREEN         ? CTX_WAIT_ALL
		                                            : CTX_WAIT_ONE;
	}
	G.on = true;
	G.off = NULL;
}

const char *
hook_gpu_off_reason(void)
{
	return G.on ? NULL : G.off;
}

/* ---- the driver's entry points ---- */

static void *
real(enum hook_id id)
{
	void *p = __atomic_load_n(&hook_real[id], __ATOMIC_ACQUIRE);
	return p ? p : hook_real_slow(id);
}

bool
gpu_api_resolve(void)
{
	struct gpu_api a;
	a.ctx_get_current = real(HOOK_ID_cuCtxGetCurrent);
	a.ctx_set_current = real(HOOK_ID_cuCtxSetCurrent);
	a.ctx_get_device = real(HOOK_ID_cuCtxGetDevice);
	a.event_create = real(HOOK_ID_cuEventCreate);
	a.event_record = real(HOOK_ID_cuEventRecord);
	a.event_query = real(HOOK_ID_cuEventQuery);
	a.event_sync = real(HOOK_ID_cuEventSynchronize);
	a.event_elapsed = real(HOOK_ID_cuEventElapsedTime_v2);
	if (!a.event_elapsed)
		a.event_elapsed = real(HOOK_ID_cuEventElapsedTime);
	a.stream_create = real(HOOK_ID_cuStreamCreate);
	a.stream_is_capturing = real(HOOK_ID_cuStreamIsCapturing);
	a.exchange_capture_mode = real(HOOK_ID_cuThreadExchangeStreamCaptureMode);
	a.device_get_name = real(HOOK_ID_cuDeviceGetName);
	a.device_get_uuid = real(HOOK_ID_cuDeviceGetUuid_v2);
	if (!a.device_get_uuid)
		a.device_get_uuid = real(HOOK_ID_cuDeviceGetUuid);
	a.device_get_bus = real(HOOK_ID_cuDeviceGetPCIBusId);
	a.launch_host_func = real(HOOK_ID_cuLaunchHostFunc);
	a.mem_host_alloc = real(HOOK_ID_cuMemHostAlloc);
	a.host_device_ptr = real(HOOK_ID_cuMemHostGetDevicePointer_v2);
	a.wait_value32 = real(HOOK_ID_cuStreamWaitValue32_v2);
	a.write_value32 = real(HOOK_ID_cuStreamWriteValue32_v2);
	a.module_load_data = real(HOOK_ID_cuModuleLoadData);
	a.module_get_function = real(HOOK_ID_cuModuleGetFunction);
	a.launch_kernel = real(HOOK_ID_cuLaunchKernel);
	a.primary_get_state = real(HOOK_ID_cuDevicePrimaryCtxGetState);
	a.primary_retain = real(HOOK_ID_cuDevicePrimaryCtxRetain);
	a.primary_release = real(HOOK_ID_cuDevicePrimaryCtxRelease_v2);
	if (!a.primary_release)
		a.primary_release = real(HOOK_ID_cuDevicePrimaryCtxRelease);
	a.stream_get_ctx = real(HOOK_ID_cuStreamGetCtx);
	a.ctx_from_green = real(HOOK_ID_cuCtxFromGreenCtx);
	a.ctx_push = real(HOOK_ID_cuCtxPushCurrent_v2);
	a.ctx_pop = real(HOOK_ID_cuCtxPopCurrent_v2);
	a.graph_get_nodes = real(HOOK_ID_cuGraphGetNodes);
	a.graph_node_get_type = real(HOOK_ID_cuGraphNodeGetType);
	a.graph_get_edges = real(HOOK_ID_cuGraphGetEdges);
	a.graph_get_edges_v2 = real(HOOK_ID_cuGraphGetEdges_v2);
	if (!a.ctx_get_current || !a.ctx_set_current || !a.ctx_get_device || !a.event_create ||
	    !a.event_record || !a.event_query || !a.event_sync || !a.event_elapsed ||
	    !a.stream_create || !a.stream_is_capturing)
		return false;
	gpu_api = a;
	return true;
}

/* The entry points, once libcuda is loaded (PyTorch loads it long after this library). */
static bool
api_ready(void)
{
	static int state; /* 0 unknown, 1 ready, -1 missing */
	int st = __atomic_load_n(&state, __ATOMIC_ACQUIRE);
	if (__builtin_expect(st == 1, 1))
		return true;
	if (st < 0)
		return false;
	pthread_mutex_lock(&gpu_sh.lock);
	if (!state) {
		if (gpu_api_resolve())
			__atomic_store_n(&state, 1, __ATOMIC_RELEASE);
		else {
			state = -1;
			G.on = false;
			G.off = "off: the driver lacks an entry point the layer needs";
		}
	}
	pthread_mutex_unlock(&gpu_sh.lock);
	return state == 1;
}

/* ---- pools (under gpu_sh.lock) ---- */

struct gpu_ctx *
gpu_ctx_of(void *ctx)
{
	for (unsigned i = 0; i < G.nctx; i++)
		if (G.ctx[i].ctx == ctx)
			return &G.ctx[i];
	if (G.nctx == MAX_CTX)
		return NULL;
	struct gpu_ctx *c = &G.ctx[G.nctx++];
	memset(c, 0, sizeof(*c));
	c->ctx = ctx;
	c->device = -1;
	return c;
}

static struct gpu_stream *
stream_of(void *ctx, uint64_t key)
{
	uint64_t h = key ^ (uint64_t)(uintptr_t)ctx * 0x9e3779b97f4a7c15ull;
	h ^= h >> 31;
	for (unsigned i = (unsigned)h, n = 0; n < STREAM_SLOTS; i++, n++) {
		struct gpu_stream **slot = &G.streams[i & (STREAM_SLOTS - 1)];
		if (!*slot) {
			if (G.nstreams >= STREAM_SLOTS / 2 || !(*slot = calloc(1, sizeof(**slot))))
				return NULL;
			G.nstreams++;
			(*slot)->ctx = ctx;
			(*slot)->key = key;
			return *slot;
		}
		if ((*slot)->ctx == ctx && (*slot)->key == key)
			return *slot;
	}
	return NULL;
}

static struct gpu_sub *
sub_alloc(void)
{
	if (!gpu_sh.free_subs) {
		struct gpu_sub *chunk = calloc(256, sizeof(*chunk));
		if (!chunk)
			return NULL;
		for (int i = 0; i < 256; i++) {
			chunk[i].next = gpu_sh.free_subs;
			gpu_sh.free_subs = &chunk[i];
		}
	}
	struct gpu_sub *s = gpu_sh.free_subs;
	gpu_sh.free_subs = s->next;
	memset(s, 0, sizeof(*s));
	return s;
}

void
gpu_sub_free(struct gpu_sub *s)
{
	struct gpu_ctx *c = s->gc;
	gpu_event_t ev[2] = {s->start, s->end};
	for (int i = 0; i < 2; i++)
		if (ev[i] && c->npool < c->cap)
			c->pool[c->npool++] = ev[i];
	s->next = gpu_sh.free_subs;
	gpu_sh.free_subs = s;
	gpu_sh.outstanding--;
}

/* Makes room for n more events in c's pool, creating a chunk when it has fewer: on the
 * calling thread, once per EVENT_CHUNK submissions at most, with the lock released. */
static bool
fill_pool(struct gpu_ctx *c, unsigned n)
{
	if (c->npool >= n)
		return true;
	if (c->cap >= 2 * MAX_OUTSTANDING + EVENT_CHUNK)
		return false;
	gpu_event_t fresh[EVENT_CHUNK];
	unsigned made = 0;
	pthread_mutex_unlock(&gpu_sh.lock);
	while (made < EVENT_CHUNK && gpu_api.event_create(&fresh[made], 0) == 0)
		made++;
	pthread_mutex_lock(&gpu_sh.lock);
	gpu_event_t *p = realloc(c->pool, (c->cap + made) * sizeof(*p));
	if (!p)
		return false;
	c->pool = p;
	c->cap += made;
	memcpy(c->pool + c->npool, fresh, made * sizeof(*fresh));
	c->npool += made;
	return c->npool >= n;
}

/* ---- a submission ---- */

/* The stream a call's work goes to, and its key: the per-thread default stream when a _ptsz
 * entry point was given stream 0 (or a _ptds one has no stream), else the handle (0 and
 * CU_STREAM_LEGACY are the same legacy stream). */
static void *
stream_for(enum hook_id id, const uint64_t *a, int64_t tid, uint64_t *key)
{
	uint64_t h = 0;
	if (hook_gpu_kind[id] == GK_KERNEL_EX) {
		/* CUlaunchConfig: seven unsigned ints, then hStream at byte 32. */
		if (a[0])
			memcpy(&h, (const char *)(uintptr_t)a[0] + 32, sizeof(h));
	} else if (G.stream_arg[id])
		h = a[G.stream_arg[id] - 1];
	if ((h == 0 && G.per_thread[id]) || h == (uint64_t)(uintptr_t)CU_STREAM_PER_THREAD) {
		*key = (uint64_t)tid << 8 | 2;
		return CU_STREAM_PER_THREAD;
	}
	*key = h ? h : 1;
	return (void *)(uintptr_t)h;
}

/* How the stream waits for others unasked (gpu.h): from how it was created, a stream not
 * seen created counting as blocking (a START where one may be needed). Under the lock. */
static enum gpu_stream_class
class_of(const struct gpu_stream *st)
{
	if (st->key == 1)
		return SC_LEGACY;
	return st->created_nonblocking ? SC_NONBLOCKING : SC_BLOCKING;
}

void
gpu_stream_busy(struct gpu_ctx *c, struct gpu_stream *st, int delta)
{
	if (delta > 0)
		st->busy_cls = st->cls;
	c->busy += (unsigned)delta;
	if (st->busy_cls == SC_LEGACY)
		c->busy_legacy += (unsigned)delta;
	else if (st->busy_cls == SC_BLOCKING)
		c->busy_blocking += (unsigned)delta;
}

static void
count(uint64_t *c)
{
	__atomic_fetch_add(c, 1, __ATOMIC_RELAXED);
}

static void
fill(struct gpu_sub *s, enum hook_id id, const uint64_t *a)
{
	switch (s->kind) {
	case GK_KERNEL:
		s->handle = a[0];
		for (int i = 0; i < 3; i++) {
			s->grid[i] = (uint32_t)a[1 + i];
			s->block[i] = (uint32_t)a[4 + i];
		}
		break;
	case GK_KERNEL_EX:
		s->handle = a[1];
		if (a[0]) {
			uint32_t w[6];
			memcpy(w, (const void *)(uintptr_t)a[0], sizeof(w));
			memcpy(s->grid, w, sizeof(s->grid));
			memcpy(s->block, w + 3, sizeof(s->block));
		}
		break;
	case GK_GRAPH: s->handle = a[0]; break;
	default: break;
	}
	(void)id;
}

/* ---- contexts that take turns ---- */

/* The device of c, current on this thread (a context new to the layer, or one it forgot), and
 * whether another context of the process is on it: a GPU without MPS runs one context at a
 * time, so work handed to an idle stream of one may wait out the other's turn, which its call
 * does not tell (on an H200, kernels in a second context and in a green context started
 * 130-140 us after their calls returned, every round): both then record a START before each
 * submission, an event that runs once its context has the device. Under the lock. */
static void
note_device(struct gpu_ctx *c)
{
	int dev = -1;
	if (gpu_api.ctx_get_device(&dev) != 0 || dev < 0)
		return;
	c->device = dev;
	for (unsigned i = 0; i < G.nctx; i++) {
		struct gpu_ctx *o = &G.ctx[i];
		if (o != c && o->ctx && o->device == dev)
			o->takes_turns = c->takes_turns = true;
	}
}

/* ---- graphs ---- */

static unsigned
graph_slot(uint64_t exec)
{
	return (unsigned)((exec >> 4) * 0x9e3779b97f4a7c15ull >> 54) & (GRAPH_SLOTS - 1);
}

/* Whether the driver hands the executable graph over in parts. Under the lock. */
static bool
graph_in_parts(uint64_t exec)
{
	unsigned i = graph_slot(exec);
	return G.graphs[i].exec == exec && G.graphs[i].in_parts;
}

static int
cmp_ptr(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
	return (x > y) - (x < y);
}

/* A graph's edges (from and to NULL: how many), through whichever entry point the driver has;
 * an edge with data (a programmatic dependency) makes either fail. */
static CUresult
graph_edges(void *graph, void **from, void **to, size_t *n)
{
	if (gpu_api.graph_get_edges)
		return gpu_api.graph_get_edges(graph, from, to, n);
	return gpu_api.graph_get_edges_v2 ? gpu_api.graph_get_edges_v2(graph, from, to, NULL, n) : 1;
}

/* Whether some node of n (sorted) appears twice. */
static bool
repeats(void **v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_ptr);
	for (size_t i = 1; i < n; i++)
		if (v[i] == v[i - 1])
			return true;
	return false;
}

/* Whether the driver will hand graph's work over in parts: anything but one chain of kernels
 * (another kind of node, a branch, a child graph). Measured on an H100 (BENCHMARKS, "Graphs
 * handed over in parts"): a chain of kernels launched on an idle stream started as its launch
 * call returned, where with a host function, a memset, a copy or an event node between its
 * kernels, or a branch beside them, the first kernel started 3-4 us after the call began,
 * 3-15 us before it returned. -1: not known (the driver said nothing usable). */
static int
graph_parts(void *graph)
{
	size_t n = 0, ne = 0;
	if (!gpu_api.graph_get_nodes || !gpu_api.graph_node_get_type ||
	    gpu_api.graph_get_nodes(graph, NULL, &n) != 0 || n == 0 || n > GRAPH_MAX_NODES ||
	    graph_edges(graph, NULL, NULL, &ne) != 0)
		return -1;
	if (ne != n - 1)
		return 1; /* one chain of n nodes has n - 1 edges */
	void **v = malloc((n + 2 * ne) * sizeof(*v));
	if (!v)
		return -1;
	void **from = v + n, **to = from + ne;
	size_t got = n, got_e = ne;
	int r = -1;
	if (gpu_api.graph_get_nodes(graph, v, &got) != 0 || got != n ||
	    (ne && (graph_edges(graph, from, to, &got_e) != 0 || got_e != ne)))
		goto out;
	r = 0;
	for (size_t i = 0; i < n && !r; i++) {
		int type = -1;
		if (gpu_api.graph_node_get_type(v[i], &type) != 0)
			r = -1;
		else if (type != CU_GRAPH_NODE_TYPE_KERNEL)
			r = 1;
	}
	/* n - 1 edges, no node leaving or entering twice: one chain (a cycle cannot be made) */
	if (!r && (repeats(from, ne) || repeats(to, ne)))
		r = 1;
out:
	free(v);
	return r;
}

static void
graph_made(const uint64_t *a)
{
	if (!G.on || !hook_self || !api_ready() || !a[0] || !a[1])
		return;
	/* cuGraphInstantiate*(CUgraphExec *exec, CUgraph graph, ...) */
	uint64_t exec;
	memcpy(&exec, (const void *)(uintptr_t)a[0], sizeof(exec));
	int parts = graph_parts((void *)(uintptr_t)a[1]);
	pthread_mutex_lock(&gpu_sh.lock);
	unsigned i = graph_slot(exec);
	G.graphs[i].exec = exec;
	G.graphs[i].in_parts = parts > 0;
	pthread_mutex_unlock(&gpu_sh.lock);
}

void
hook_gpu_graph_made(enum hook_id id, const uint64_t *a)
{
	(void)id;
	hook_mark.own = 1;
	graph_made(a);
	hook_mark.own = 0;
}

/* A copy may go to a stream of another context than the current one (cudaMemcpyPeerAsync on
 * the source device's stream while the destination's is current: CUDA takes it, but not an
 * event of the current context recorded there: on two H200s 21 of 21 such copies went untimed).
 * That context, pushed current, or NULL: the stream is the current context's, or a stream
 * every context has (the legacy and per-thread ones), or the submission is no copy. */
static void *
stream_ctx(enum hook_id id, void *stream, void *current)
{
	void *sc = NULL;
	if (hook_gpu_kind[id] != GK_COPY || !stream || stream == (void *)1 ||
	    stream == CU_STREAM_PER_THREAD || !gpu_api.stream_get_ctx || !gpu_api.ctx_push ||
	    !gpu_api.ctx_pop || gpu_api.stream_get_ctx(stream, &sc) != 0 || !sc || sc == current ||
	    gpu_api.ctx_push(sc) != 0)
		return NULL;
	return sc;
}

static struct gpu_sub *submission(enum hook_id id, const uint64_t *a, void *stream, uint64_t key,
                                  int64_t tid, void *ctx);

static struct gpu_sub *
before(enum hook_id id, const uint64_t *a)
{
	if (!G.on || !CUT_GPU_TIMES(hook_gpu_kind[id]) || !hook_self || !api_ready())
		return NULL;
	int64_t tid = hook_self->tid;
	uint64_t key;
	void *stream = stream_for(id, a, tid, &key);
	int capturing = 0;
	/* Also non-zero (CUDA_ERROR_STREAM_CAPTURE_IMPLICIT) for the legacy stream while another
	 * stream captures in global mode: recording there would break that capture. */
	if (gpu_api.stream_is_capturing(stream, &capturing) != 0 || capturing) {
		count(&gpu_sh.skips);
		return NULL;
	}
	void *ctx = NULL;
	if (gpu_api.ctx_get_current(&ctx) != 0 || !ctx) {
		count(&gpu_sh.untimed);
		return NULL;
	}
	void *other = stream_ctx(id, stream, ctx);
	if (other)
		ctx = other; /* made current: the events are its */
	struct gpu_sub *s = submission(id, a, stream, key, tid, ctx);
	if (s)
		s->other_ctx = other != NULL;
	if (other)
		gpu_api.ctx_pop(&other);
	return s;
}

/* before(), with the context whose events the submission takes current. */
static struct gpu_sub *
submission(enum hook_id id, const uint64_t *a, void *stream, uint64_t key, int64_t tid, void *ctx)
{
	pthread_mutex_lock(&gpu_sh.lock);
	struct gpu_ctx *c = gpu_ctx_of(ctx);
	if (c && c->device < 0)
		note_device(c);
	struct gpu_stream *st = c ? stream_of(ctx, key) : NULL;
	if (!st || gpu_sh.stopping || c->broken || gpu_sh.outstanding >= MAX_OUTSTANDING) {
		if (st)
			st->force_start = true;
		pthread_mutex_unlock(&gpu_sh.lock);
		count(&gpu_sh.untimed);
		return NULL;
	}
	/* START where the stream may have been held up by something other than its own timed
	 * work: other work put on it, a busy stream it waits for unasked (the legacy stream and
	 * blocking streams wait for each other; a non-blocking stream for none), a synchronous
	 * call; or every start is asked for. */
	enum gpu_stream_class cls = class_of(st);
	st->cls = (unsigned char)cls;
	unsigned held = cls == SC_LEGACY     ? c->busy_blocking
	                : cls == SC_BLOCKING ? c->busy_legacy
	                                     : 0;
	bool sync = !G.async[id] || (hook_gpu_kind[id] == GK_GRAPH && graph_in_parts(a[0]));
	bool need_start = G.all_starts || sync || c->takes_turns || st->force_start || held > 0 ||
	                  st->wait_gen != c->wait_gen;
	struct gpu_sub *s = NULL;
	if (fill_pool(c, need_start ? 2 : 1) && (s = sub_alloc())) {
		gpu_sh.outstanding++;
		s->gc = c;
		s->st = st;
		s->end = c->pool[--c->npool];
		if (need_start)
			s->start = c->pool[--c->npool];
		s->start_turns = need_start && (G.all_starts || c->takes_turns);
		st->force_start = false;
		st->wait_gen = c->wait_gen;
	} else
		st->force_start = true;
	pthread_mutex_unlock(&gpu_sh.lock);
	if (!s) {
		count(&gpu_sh.untimed);
		return NULL;
	}
	s->stream = stream;
	s->sync = sync;
	s->tid = tid;
	s->kind = hook_gpu_kind[id];
	fill(s, id, a);
	s->corr = __atomic_add_fetch(&G.corr, 1, __ATOMIC_RELAXED);
	if (s->start && gpu_api.event_record(s->start, stream) != 0) {
		/* Nothing was queued before the call: it is the stream's previous END's turn. */
		pthread_mutex_lock(&gpu_sh.lock);
		c->pool[c->npool++] = s->start;
		pthread_mutex_unlock(&gpu_sh.lock);
		s->start = NULL;
	}
	return s;
}

static void note_args(struct gpu_sub *s, const char *args);

static void
give_back(struct gpu_sub *s, bool untimed)
{
	pthread_mutex_lock(&gpu_sh.lock);
	if (untimed)
		s->st->force_start = true;
	gpu_sub_free(s);
	pthread_mutex_unlock(&gpu_sh.lock);
	if (untimed)
		count(&gpu_sh.untimed);
}

/* The bytes of a kernel's parameters (the last one's offset and size), or 0 where the driver
 * does not say. After another context's turn the device takes longer to start a kernel handed
 * more than some 200 bytes of parameters (an H200: 0.2-0.4 us for 16 or 32 bytes, 1.1-1.5 us
 * for 272 to 4,016, the first kernel of a turn), so a reader of a shared device needs them
 * (cut-events(5): args.params). Asked once a handle (cuFuncGetParamInfo, then
 * cuKernelGetParamInfo for a CUkernel launched as a function) by the thread that launched it,
 * as the launch returns: then the handle is one the driver took (a module may be unloaded
 * before the work is written). A call that may end handles (a module or library unloaded, a
 * context ended: hook_async_barrier) empties the table, so a handle the driver hands out again
 * for another function is asked afresh. Threads that meet a handle new to the table at once may
 * both ask (a slot taken by one, filled by either: both would store the same).
 *
 * A slot is one word, so that emptying it cannot tear a handle from its bytes: the handle in
 * the upper 48 bits (a user-space address), the bytes + 1 in the lower 16 (CUDA's limit is
 * 32,764 bytes; 0 while not yet asked). A handle above 2^48 is asked at each launch. */
#define PARAMS_CAP 4096 /* handles; one not kept is asked at each launch */
#define PARAMS_BYTE_BITS 16
static uint64_t param_tab[PARAMS_CAP];

static uint32_t
ask_param_bytes(uint64_t h)
{
	static const enum hook_id askers[] = {HOOK_ID_cuFuncGetParamInfo,
	                                      HOOK_ID_cuKernelGetParamInfo};
	for (size_t k = 0; k < sizeof(askers) / sizeof(askers[0]); k++) {
		CUresult (*ask)(void *, size_t, size_t *, size_t *) =
		    (CUresult(*)(void *, size_t, size_t *, size_t *))hook_real_slow(askers[k]);
		if (!ask)
			continue;
		size_t end = 0, off, size, i;
		for (i = 0; i < 1024; i++) { /* (CUDA's limit: 32,764 bytes of 4-byte words) */
			if (ask((void *)(uintptr_t)h, i, &off, &size) != 0)
				break;
			if (off + size > end)
				end = off + size;
		}
		if (i > 0)
			return end < UINT16_MAX ? (uint32_t)end : UINT16_MAX - 1;
		/* (not a handle this asker takes, or no parameter at all: 0 either way) */
	}
	return 0;
}

static uint32_t
param_bytes(uint64_t h)
{
	if (!h || h >> (64 - PARAMS_BYTE_BITS))
		return h ? ask_param_bytes(h) : 0;
	const uint64_t mine = h << PARAMS_BYTE_BITS, bytes_mask = (1u << PARAMS_BYTE_BITS) - 1;
	size_t i0 = (size_t)((h >> 4) * 0x9e3779b97f4a7c15ull >> 52) % PARAMS_CAP;
	for (size_t j = 0; j < 16; j++) {
		size_t i = (i0 + j) % PARAMS_CAP;
		uint64_t seen = __atomic_load_n(&param_tab[i], __ATOMIC_ACQUIRE);
		if ((seen & ~bytes_mask) == mine) {
			if (seen & bytes_mask)
				return (uint32_t)(seen & bytes_mask) - 1;
			break; /* (being asked by another thread) */
		}
		if (!seen && __atomic_compare_exchange_n(&param_tab[i], &seen, mine, false,
		                                         __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			uint32_t b = ask_param_bytes(h);
			/* (fails where the table was emptied meanwhile: the slot is left empty) */
			uint64_t taken = mine;
			__atomic_compare_exchange_n(&param_tab[i], &taken, mine | (b + 1), false,
			                            __ATOMIC_RELEASE, __ATOMIC_RELAXED);
			return b;
		}
		if ((seen & ~bytes_mask) == mine)
			break;
	}
	return ask_param_bytes(h);
}

void
hook_gpu_forget_params(void)
{
	for (size_t i = 0; i < PARAMS_CAP; i++)
		if (__atomic_load_n(&param_tab[i], __ATOMIC_RELAXED))
			__atomic_store_n(&param_tab[i], 0, __ATOMIC_RELEASE);
}

static struct gpu_sub *
after(struct gpu_sub *s, CUresult r, int64_t t0)
{
	if (r != 0) { /* no work was submitted */
		give_back(s, false);
		return NULL;
	}
	void *popped;
	bool pushed = s->other_ctx && gpu_api.ctx_push(s->gc->ctx) == 0;
	CUresult er = gpu_api.event_record(s->end, s->stream);
	if (pushed)
		gpu_api.ctx_pop(&popped);
	if (er != 0) {
		give_back(s, true);
		return NULL;
	}
	/* When the END was handed over: an END that ran as soon as the device could run it
	 * after that bounds the work's end without measuring it (gpu_work_span). A TSC read,
	 * mapped once the call's own end is (hook_gpu_queue). */
	s->er_end = hook_end();
	s->t0 = t0;
	if (s->kind == GK_KERNEL || s->kind == GK_KERNEL_EX)
		s->params = param_bytes(s->handle);
	if (s->start)
		count(&gpu_sh.starts);
	hook_corr = s->corr;
	return s;
}

/* The CLOCK_MONOTONIC time of a hook_end() value read after the call's own end, which
 * hook_end_time mapped already (without counting it as a call's end, as that does). */
static int64_t
time_of_end(uint64_t end)
{
	if (!(end & HOOK_END_TSC) || !hook_self)
		return (int64_t)(end & ~HOOK_END_TSC);
	struct hook_tsc *a = &hook_self->tsc;
	uint64_t d = (end & ~HOOK_END_TSC) - a->c;
	if (d < a->span)
		return a->t + (int64_t)((d * a->mult) >> 32);
	uint64_t calls = a->from_clock; /* it counts calls' ends: this is none */
	int64_t t = hook_tsc_time_slow(a, end & ~HOOK_END_TSC);
	a->from_clock = calls;
	return t;
}

void
hook_gpu_queue(struct gpu_sub *s, const char *args, int64_t t1)
{
	note_args(s, args);
	if (s->kind == GK_KERNEL || s->kind == GK_KERNEL_EX)
		s->name = hook_name_of(s->handle);
	s->t1 = t1;
	s->t_er = time_of_end(s->er_end);
	if (s->t_er < t1)
		s->t_er = t1;
	pthread_mutex_lock(&gpu_sh.lock);
	struct gpu_stream *st = s->st;
	if (st->submitted++ == st->completed)
		gpu_stream_busy(s->gc, st, 1);
	if (gpu_sh.in_tail)
		gpu_sh.in_tail->next = s;
	else
		gpu_sh.in_head = s;
	gpu_sh.in_tail = s;
	bool start_poller = !G.poller;
	G.poller = true;
	pthread_mutex_unlock(&gpu_sh.lock);
	if (start_poller)
		gpu_poller_start();
}

/* Copies and memsets: the bytes and direction of the API call's own args (decoded from the
 * one description both capture paths share), so the work says what the call said. */
static void
note_args(struct gpu_sub *s, const char *args)
{
	if (!args || (s->kind != GK_COPY && s->kind != GK_SET))
		return;
	const char *p = strstr(args, "\"bytes\":");
	if (p)
		s->bytes = strtoull(p + 8, NULL, 10);
	p = strstr(args, "\"dir\":\"");
	if (p && strlen(p + 7) >= 4 && p[11] == '"') {
		memcpy(s->dir, p + 7, 4);
		s->dir[4] = '\0';
	}
}

/* A wait of a whole context: every stream of it, those not used yet included, records a
 * START at its next timed work. Under the lock. */
static void
ctx_waited(enum hook_id id, const uint64_t *a)
{
	if (G.ctx_wait[id] == CTX_WAIT_ALL) {
		for (unsigned i = 0; i < G.nctx; i++)
			G.ctx[i].wait_gen++;
		return;
	}
	struct gpu_ctx *c = gpu_ctx_of((void *)(uintptr_t)a[0]);
	if (c)
		c->wait_gen++;
}

static void
enqueued(enum hook_id id, const uint64_t *a)
{
	if (!G.on || !hook_self || !api_ready())
		return;
	if (G.ctx_wait[id]) {
		pthread_mutex_lock(&gpu_sh.lock);
		ctx_waited(id, a);
		pthread_mutex_unlock(&gpu_sh.lock);
		return;
	}
	uint64_t key;
	stream_for(id, a, hook_self->tid, &key);
	void *ctx = NULL;
	if (gpu_api.ctx_get_current(&ctx) != 0 || !ctx)
		return;
	pthread_mutex_lock(&gpu_sh.lock);
	struct gpu_ctx *c = gpu_ctx_of(ctx);
	struct gpu_stream *st = c ? stream_of(ctx, key) : NULL;
	if (st)
		st->force_start = true;
	pthread_mutex_unlock(&gpu_sh.lock);
}

/* The driver calls the three below make are the library's own: marked for cutcapture's
 * ioctl probes (hook_mark), which leave out what the driver does for them. */
struct gpu_sub *
hook_gpu_before(enum hook_id id, const uint64_t *a)
{
	hook_mark.own = 1;
	struct gpu_sub *s = before(id, a);
	hook_mark.own = 0;
	return s;
}

struct gpu_sub *
hook_gpu_after(struct gpu_sub *s, CUresult r, int64_t t0)
{
	hook_mark.own = 1;
	s = after(s, r, t0);
	hook_mark.own = 0;
	return s;
}

void
hook_gpu_enqueued(enum hook_id id, const uint64_t *a)
{
	hook_mark.own = 1;
	enqueued(id, a);
	hook_mark.own = 0;
}

static void
stream_created(enum hook_id id, const uint64_t *a)
{
	if (!G.on || !hook_self || !api_ready() || !a[0])
		return;
	/* cuStreamCreate(&s, flags), cuStreamCreateWithPriority(&s, flags, priority),
	 * cuGreenCtxStreamCreate(&s, green context, flags, priority) */
	bool green = cut_api_flags(hook_names[id]) & CUT_API_GREEN; /* flags one further */
	unsigned flags = (unsigned)a[green ? 2 : 1];
	uint64_t handle;
	memcpy(&handle, (const void *)(uintptr_t)a[0], sizeof(handle));
	void *ctx = NULL;
	if (!handle || gpu_api.ctx_get_current(&ctx) != 0 || !ctx)
		return;
	pthread_mutex_lock(&gpu_sh.lock);
	struct gpu_stream *st = gpu_ctx_of(ctx) ? stream_of(ctx, handle) : NULL;
	if (st) /* a handle used again is a new stream */
		st->created_nonblocking = flags & CU_STREAM_NON_BLOCKING;
	pthread_mutex_unlock(&gpu_sh.lock);
}

/* A context made, or the primary context retained: the clock kernel is loaded into it while it
 * has no work (gpu_kernel.c), unless the layer saw work of it already or tried before.
 * CUTHOOK_GPU_ANCHORS=wait or event: never. */
static void
ctx_created(const uint64_t *a)
{
	const char *how = getenv("CUTHOOK_GPU_ANCHORS");
	if (!G.on || !hook_self || !api_ready() || !a[0] ||
	    (how && (!strcmp(how, "wait") || !strcmp(how, "event"))))
		return;
	void *ctx;
	memcpy(&ctx, (const void *)(uintptr_t)a[0], sizeof(ctx));
	if (!ctx)
		return;
	void *current = NULL;
	gpu_api.ctx_get_current(&current);
	pthread_mutex_lock(&gpu_sh.lock);
	struct gpu_ctx *c = gpu_ctx_of(ctx);
	if (c && c->device < 0 && current == ctx) /* made current (cuCtxCreate): its device */
		note_device(c);
	bool load = c && !c->kernel_tried && !c->busy && !c->ready;
	if (load)
		c->kernel_tried = true;
	pthread_mutex_unlock(&gpu_sh.lock);
	if (!load)
		return;
	void *fn = gpu_kernel_load(ctx);
	pthread_mutex_lock(&gpu_sh.lock);
	c->kernel = fn;
	pthread_mutex_unlock(&gpu_sh.lock);
}

/* The references to a device's primary context the program took (cuDevicePrimaryCtxRetain, the
 * runtime's among them) and gave back: where a release gives back the last, the driver ends the
 * context, as a reset does (CUDA's cuDevicePrimaryCtxRelease). True for that release. What the
 * library itself takes and gives back goes to the driver directly and is not counted; a device
 * whose references were taken unseen counts none, and its releases end nothing. */
static bool
primary_ref(uint64_t dev, int by)
{
	if (dev >= MAX_PRIMARY)
		return false;
	pthread_mutex_lock(&gpu_sh.lock);
	int *n = &G.primary_refs[dev];
	bool last = by < 0 && *n == 1;
	if (by > 0 || *n > 0)
		*n += by;
	pthread_mutex_unlock(&gpu_sh.lock);
	return last;
}

void
hook_gpu_ctx_created(enum hook_id id, const uint64_t *a)
{
	if (G.on && G.retains_primary[id]) /* cuDevicePrimaryCtxRetain(&ctx, dev) */
		primary_ref(a[1], +1);
	hook_mark.own = 1;
	ctx_created(a);
	hook_mark.own = 0;
}

/* ---- a context's end ---- */

void
gpu_ctx_forget(struct gpu_ctx *c)
{
	free(c->pool); /* its events went with the context */
	free(c->clock);
	struct gpu_ctx keep = {.ctx = c->ctx, .device = -1, .device_told = c->device_told,
	                       .clock_gen = c->clock_gen + 1};
	*c = keep;
	for (unsigned i = 0; i < STREAM_SLOTS; i++) {
		struct gpu_stream *st = G.streams[i];
		if (st && st->ctx == c->ctx)
			*st = (struct gpu_stream){.ctx = st->ctx, .key = st->key};
	}
}

/* The context a destroys-context or resets-context call ends, when it is one the layer knows:
 * a green context's is the context its work was put in (cuCtxFromGreenCtx, as the streams made
 * in it say); a reset's is the device's primary context, if it is active (its handle, by a
 * retain the release gives back), as is that of a release that gives back the last reference.
 * At exit PyTorch's releases come after the driver's own end (CUDA_ERROR_DEINITIALIZED): the
 * state cannot be had then, and nothing is ended. */
static struct gpu_ctx *
ending_ctx(enum hook_id id, const uint64_t *a)
{
	void *ctx = (void *)(uintptr_t)a[0];
	if (G.ends_green[id] &&
	    (!gpu_api.ctx_from_green || gpu_api.ctx_from_green(&ctx, (void *)(uintptr_t)a[0]) != 0))
		return NULL;
	if (G.resets_primary[id] || G.releases_primary[id]) {
		int dev = (int)a[0], active = 0;
		unsigned flags;
		ctx = NULL;
		if (!gpu_api.primary_get_state || !gpu_api.primary_retain ||
		    !gpu_api.primary_release ||
		    gpu_api.primary_get_state(dev, &flags, &active) != 0 || !active ||
		    gpu_api.primary_retain(&ctx, dev) != 0)
			return NULL;
		gpu_api.primary_release(dev);
	}
	struct gpu_ctx *c = NULL;
	pthread_mutex_lock(&gpu_sh.lock);
	for (unsigned i = 0; i < G.nctx && !c; i++)
		if (G.ctx[i].ctx == ctx)
			c = &G.ctx[i];
	pthread_mutex_unlock(&gpu_sh.lock);
	return c;
}

void
hook_gpu_ctx_ending(enum hook_id id, const uint64_t *a)
{
	if (!G.on || !hook_self || !api_ready() ||
	    (G.releases_primary[id] && !primary_ref(a[0], -1))) /* cuDevicePrimaryCtxRelease(dev) */
		return;
	hook_mark.own = 1;
	struct gpu_ctx *c = ending_ctx(id, a);
	if (c)
		gpu_ctx_end(c);
	hook_mark.own = 0;
}

void
hook_gpu_stream_created(enum hook_id id, const uint64_t *a)
{
	hook_mark.own = 1;
	stream_created(id, a);
	hook_mark.own = 0;
}

/* ---- the end, fork ---- */

void
hook_gpu_stop(void)
{
	pthread_mutex_lock(&gpu_sh.lock);
	bool was = G.on;
	G.on = false;
	bool poller = G.poller;
	if (was && poller) {
		gpu_sh.stopping = true;
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		/* Work still queued at exit gets a second to end; the program is never waited for
		 * beyond that. */
		gpu_sh.stop_deadline = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec + 1000000000;
		pthread_cond_signal(&gpu_sh.wake);
	}
	pthread_mutex_unlock(&gpu_sh.lock);
	if (was && poller)
		gpu_poller_join();
}

uint64_t
hook_gpu_events(void)
{
	return __atomic_load_n(&hook_layer_events[CUT_GPU], __ATOMIC_RELAXED);
}

void
hook_gpu_trailer(struct cut_trailer *t)
{
	if (!G.poller && !gpu_sh.skips && !gpu_sh.untimed)
		return;
	t->gpu_timed = (int64_t)gpu_sh.timed;
	t->gpu_untimed = (int64_t)gpu_sh.untimed;
	t->lost += (int64_t)gpu_sh.lost; /* never written: said by a lost record too */
	t->gpu_capture_skips = (int64_t)gpu_sh.skips;
	t->gpu_starts = (int64_t)gpu_sh.starts;
	t->gpu_starts_from_call = (int64_t)gpu_sh.from_call;
	t->gpu_starts_from_twins = (int64_t)gpu_sh.from_twins;
	t->gpu_starts_late = (int64_t)gpu_sh.late;
	t->gpu_gap_ns = gpu_sh.gap;
	t->gpu_error_ns = gpu_sh.err_max;
	t->gpu_error_ns_median = gpu_sh.err_median;
	/* The library's own thread, which cutcapture leaves out of its records. */
	int64_t own = __atomic_load_n(&gpu_sh.poller_tid, __ATOMIC_ACQUIRE);
	if (own > 0)
		t->own_thread = own;
}

void
hook_gpu_fork(int phase)
{
	if (phase == 0)
		pthread_mutex_lock(&gpu_sh.lock);
	else if (phase == 1)
		pthread_mutex_unlock(&gpu_sh.lock);
	else {
		/* The child has no completion thread, and CUDA is not usable in it anyway: its
		 * submissions go untimed rather than into the parent's pools. */
		pthread_mutex_init(&gpu_sh.lock, NULL);
		pthread_cond_init(&gpu_sh.wake, NULL);
		gpu_sh.in_head = gpu_sh.in_tail = NULL;
		gpu_sh.timed = gpu_sh.untimed = gpu_sh.skips = gpu_sh.starts = 0;
		gpu_sh.from_call = gpu_sh.from_twins = gpu_sh.late = gpu_sh.lost = 0;
		gpu_sh.err_max = gpu_sh.err_median = 0;
		G.on = false;
		G.off = "off: a forked child (CUDA is not usable after fork)";
		G.poller = false;
	}
}
