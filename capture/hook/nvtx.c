/* nvtx.c: libcuthook as an NVTX injection tool (NVTX_INJECTION64_PATH; cut-events(5) layer
 * nvtx). NVTX3 is header-only: each shared object that uses it loads the tool and calls
 * InitializeInjectionNvtx2 once, and the tool fills the slots of that object's function tables.
 * Ranges pushed and popped (per thread and domain), started and ended (on any thread), marks,
 * domains, registered strings, category names and payloads become events; thread, stream and
 * device names become meta records. A tool named in CUT_NVTX_NEXT (the one that was in
 * NVTX_INJECTION64_PATH before cuthook set it) is initialised first and sees every call too. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>
#include <wchar.h>

#include "event.h"
#include "hook.h"
#include "writer.h"

/* ---- the injection ABI (NVIDIA/NVTX c/include/nvtx3/nvtxDetail/nvtxTypes.h, NVTX 3) ---- */
enum { MOD_CORE = 1, MOD_CUDA = 2, MOD_CUDART = 4, MOD_CORE2 = 5, NMOD = 6 };
enum { ETID_CALLBACKS = 1, ETID_VERSIONINFO = 3 };
enum { MSG_ASCII = 1, MSG_UNICODE = 2, MSG_REGISTERED = 3 };
enum { COLOR_ARGB = 1 };
enum { PAY_U64 = 1, PAY_I64, PAY_DOUBLE, PAY_U32, PAY_I32, PAY_FLOAT };
typedef void (*fnptr)(void);
typedef const void *(*get_export_table_t)(uint32_t);
struct export_callbacks {
	size_t struct_size;
	int (*get_module_function_table)(int module, fnptr ***table, unsigned *size);
};
struct export_version {
	size_t struct_size;
	uint32_t version, reserved0;
	void (*set_injection_version)(uint32_t);
};
struct attrs { /* nvtxEventAttributes_v2 */
	uint16_t version, size;
	uint32_t category;
	int32_t color_type;
	uint32_t color;
	int32_t payload_type, reserved0;
	union {
		uint64_t u64;
		int64_t i64;
		double d;
		uint32_t u32;
		int32_t i32;
		float f;
	} payload;
	int32_t message_type;
	union {
		const char *ascii;
		const wchar_t *unicode;
		const void *registered;
	} message;
};
_Static_assert(sizeof(struct attrs) == 48, "nvtxEventAttributes_v2");

/* Slot ids (NVTX_CBID_*) this tool fills. */
enum {
	CORE_MarkEx = 1,
	CORE_MarkA,
	CORE_MarkW,
	CORE_RangeStartEx,
	CORE_RangeStartA,
	CORE_RangeStartW,
	CORE_RangeEnd,
	CORE_RangePushEx,
	CORE_RangePushA,
	CORE_RangePushW,
	CORE_RangePop,
	CORE_NameCategoryA,
	CORE_NameCategoryW,
	CORE_NameOsThreadA,
	CORE_NameOsThreadW,
	NCORE
};
enum {
	CORE2_DomainMarkEx = 1,
	CORE2_DomainRangeStartEx,
	CORE2_DomainRangeEnd,
	CORE2_DomainRangePushEx,
	CORE2_DomainRangePop,
	CORE2_DomainResourceCreate,
	CORE2_DomainResourceDestroy,
	CORE2_DomainNameCategoryA,
	CORE2_DomainNameCategoryW,
	CORE2_DomainRegisterStringA,
	CORE2_DomainRegisterStringW,
	CORE2_DomainCreateA,
	CORE2_DomainCreateW,
	CORE2_DomainDestroy,
	CORE2_Initialize,
	NCORE2
};
enum {
	CUDA_NameCuDeviceA = 1,
	CUDA_NameCuContextA = 3,
	CUDA_NameCuStreamA = 5,
	CUDA_NameCuEventA = 7
};
enum { CUDART_NameCudaDeviceA = 1, CUDART_NameCudaStreamA = 3, CUDART_NameCudaEventA = 5 };
#define NSLOT 16

/* ---- state ---- */

/* A category's name, in a domain. */
struct catname {
	uint32_t id;
	char *name;
	struct catname *next;
};
/* A domain this tool handed out (its handle is a pointer to this), and the chained tool's. */
struct domain {
	char *name;
	const void *next_handle;
	struct catname *cats;
};
/* A registered string, likewise. */
struct string {
	char *s;
	const void *next_handle;
};

static struct domain default_domain;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER; /* domains' categories, open ranges */

/* The chained tool's functions, per module and slot, as it installed them. */
static fnptr next_fn[NMOD][NSLOT];

/* A range being timed. */
struct range {
	int64_t ts, tid;
	char *name;
	struct domain *dom;
	uint32_t category;
	int32_t color_type, payload_type;
	uint32_t color;
	uint64_t payload;
	int depth;
	uint64_t id, next_id; /* start/end: ours, and the chained tool's */
};

/* A thread's pushed ranges, all domains, innermost last; registered for good, so that the end
 * writes those still open, even of threads gone (its lock: the owner against the end). */
struct stack {
	struct range *r;
	int n, cap;
	pthread_mutex_t lock;
	struct stack *next;
};
static __thread struct stack *my_stack;
static struct stack *stacks;

static struct stack *
own_stack(void)
{
	if (my_stack)
		return my_stack;
	struct stack *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_lock(&lock);
	s->next = stacks;
	stacks = s;
	pthread_mutex_unlock(&lock);
	return my_stack = s;
}

/* Started ranges, not yet ended (any thread ends them). */
static struct range *open_ranges;
static size_t nopen, capopen;
static uint64_t next_range_id = 1;

/* ---- helpers ---- */

/* A wide-character message as UTF-8, whatever the program's locale (wchar_t is UCS-4 here);
 * what is no character becomes U+FFFD. */
static char *
wide(const wchar_t *w)
{
	if (!w)
		return NULL;
	size_t n = wcslen(w);
	char *s = malloc(4 * n + 1), *p = s;
	if (!s)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		uint32_t c = (uint32_t)w[i];
		if (c > 0x10ffff || (c >= 0xd800 && c < 0xe000))
			c = 0xfffd;
		if (c < 0x80) {
			*p++ = (char)c;
		} else if (c < 0x800) {
			*p++ = (char)(0xc0 | c >> 6);
			*p++ = (char)(0x80 | (c & 0x3f));
		} else if (c < 0x10000) {
			*p++ = (char)(0xe0 | c >> 12);
			*p++ = (char)(0x80 | (c >> 6 & 0x3f));
			*p++ = (char)(0x80 | (c & 0x3f));
		} else {
			*p++ = (char)(0xf0 | c >> 18);
			*p++ = (char)(0x80 | (c >> 12 & 0x3f));
			*p++ = (char)(0x80 | (c >> 6 & 0x3f));
			*p++ = (char)(0x80 | (c & 0x3f));
		}
	}
	*p = 0;
	return s;
}

static struct domain *
dom_of(const void *h)
{
	return h ? (struct domain *)(uintptr_t)h : &default_domain;
}

/* The message of a, copied; "(unnamed)" when it has none. */
static char *
message(const struct attrs *a)
{
	const char *s = NULL;
	if (a && a->message_type == MSG_ASCII)
		s = a->message.ascii;
	else if (a && a->message_type == MSG_UNICODE)
		return a->message.unicode ? wide(a->message.unicode) : strdup("(unnamed)");
	else if (a && a->message_type == MSG_REGISTERED && a->message.registered)
		s = ((const struct string *)a->message.registered)->s;
	return strdup(s ? s : "(unnamed)");
}

static void
fill(struct range *r, struct domain *d, const struct attrs *a, char *name)
{
	memset(r, 0, sizeof(*r));
	r->ts = hook_record_now();
	r->dom = d;
	r->name = name;
	if (a) {
		r->category = a->category;
		r->color_type = a->color_type;
		r->color = a->color;
		r->payload_type = a->payload_type;
		r->payload = a->payload.u64;
	}
}

static const char *
category_name(struct domain *d, uint32_t id)
{
	const char *s = NULL;
	pthread_mutex_lock(&lock);
	for (struct catname *c = d->cats; c; c = c->next)
		if (c->id == id) {
			s = c->name;
			break;
		}
	pthread_mutex_unlock(&lock);
	return s;
}

/* The event of range r (cat range, startend or mark; dur < 0: an instant), its args in a. */
static void
range_event(struct cut_event *ev, struct cut_buf *a, const char *cat, const struct range *r,
            int64_t dur, int64_t end_tid, bool unended)
{
	buf_reset(a);
	buf_addc(a, '{');
	if (r->dom != &default_domain && r->dom->name)
		buf_addkv_str(a, "domain", r->dom->name);
	if (r->category) {
		buf_addkv_int(a, "category", r->category);
		const char *cn = category_name(r->dom, r->category);
		if (cn)
			buf_addkv_str(a, "category_name", cn);
	}
	if (r->color_type == COLOR_ARGB) {
		buf_addkey(a, "color");
		buf_addhex(a, r->color);
	}
	if (r->payload_type >= PAY_U64 && r->payload_type <= PAY_FLOAT) {
		union {
			uint64_t u64;
			int64_t i64;
			double d;
			uint32_t u32;
			int32_t i32;
			float f;
		} p = {.u64 = r->payload};
		buf_addkey(a, "payload");
		switch (r->payload_type) {
		case PAY_U64: buf_addf(a, "%llu", (unsigned long long)p.u64); break;
		case PAY_I64: buf_addi64(a, p.i64); break;
		case PAY_DOUBLE: buf_addf(a, "%.17g", p.d); break;
		case PAY_U32: buf_addi64(a, p.u32); break;
		case PAY_I32: buf_addi64(a, p.i32); break;
		default: buf_addf(a, "%.9g", (double)p.f); break;
		}
	}
	if (strcmp(cat, "range") == 0)
		buf_addkv_int(a, "depth", r->depth);
	if (end_tid && end_tid != r->tid)
		buf_addkv_int(a, "end_tid", end_tid);
	if (unended) {
		buf_addkey(a, "unended");
		buf_adds(a, "true");
	}
	if (a->len == 1)
		buf_reset(a);
	else
		buf_addc(a, '}');
	cut_event_init(ev);
	ev->ts = r->ts;
	ev->dur = dur;
	ev->pid = hook_w.pid_ns;
	ev->tid = r->tid;
	ev->layer = CUT_NVTX;
	ev->name = r->name;
	ev->cat = cat;
	ev->args = a->len ? a->s : NULL;
	ev->has = dur >= 0 ? CUT_HAS_DUR : 0;
}

/* Writes the event of range r to the calling thread's buffer. */
static void
emit(const char *cat, const struct range *r, int64_t dur, int64_t end_tid)
{
	struct hook_thread *t = hook_enter();
	if (!t)
		return;
	hook_guard = 1;
	struct cut_buf a = {0};
	struct cut_event ev;
	range_event(&ev, &a, cat, r, dur, end_tid, false);
	hook_record_line(t, &ev, NULL, NULL);
	buf_free(&a);
	hook_guard = 0;
}

/* A meta record (thread, symbol) of this process for thread tid, args as given. */
static void
emit_meta(const char *name, int64_t tid, struct cut_buf *args)
{
	struct hook_thread *t = hook_enter();
	if (!t)
		return;
	hook_guard = 1;
	struct cut_event ev;
	cut_event_init(&ev);
	ev.ts = hook_record_now();
	ev.pid = hook_w.pid_ns;
	ev.tid = tid ? tid : t->tid;
	ev.layer = CUT_META;
	ev.name = name;
	ev.args = args->s;
	hook_record_line(t, &ev, NULL, NULL);
	hook_guard = 0;
}

static int64_t
my_tid(void)
{
	struct hook_thread *t = hook_enter();
	return t ? t->tid : (int64_t)gettid();
}

/* ---- ranges ---- */

static int
push(struct domain *d, const struct attrs *a, char *name)
{
	struct stack *s = own_stack();
	if (!s) {
		free(name);
		return -1;
	}
	pthread_mutex_lock(&s->lock);
	if (s->n == s->cap) {
		int cap = s->cap ? 2 * s->cap : 16;
		struct range *v = realloc(s->r, (size_t)cap * sizeof(*v));
		if (!v) {
			pthread_mutex_unlock(&s->lock);
			free(name);
			return -1;
		}
		s->r = v;
		s->cap = cap;
	}
	struct range *r = &s->r[s->n];
	fill(r, d, a, name);
	r->tid = my_tid();
	for (int i = 0; i < s->n; i++)
		r->depth += s->r[i].dom == d;
	s->n++;
	int depth = r->depth;
	pthread_mutex_unlock(&s->lock);
	return depth;
}

static int
pop(struct domain *d)
{
	int64_t now = hook_record_now();
	struct stack *s = my_stack;
	if (!s)
		return -1;
	pthread_mutex_lock(&s->lock);
	for (int i = s->n - 1; i >= 0; i--) {
		if (s->r[i].dom != d)
			continue;
		struct range r = s->r[i];
		memmove(&s->r[i], &s->r[i + 1], (size_t)(s->n - i - 1) * sizeof(*s->r));
		s->n--;
		pthread_mutex_unlock(&s->lock);
		emit("range", &r, now - r.ts, 0);
		free(r.name);
		return r.depth;
	}
	pthread_mutex_unlock(&s->lock);
	return -1; /* a pop with nothing pushed: NVTX says -1 */
}

uint64_t
hook_nvtx_unended(struct cut_buf *out, int64_t now)
{
	uint64_t n = 0;
	struct cut_buf a = {0};
	struct cut_event ev;
	pthread_mutex_lock(&lock);
	struct stack *list = stacks;
	struct range *o = open_ranges;
	size_t no = nopen;
	open_ranges = NULL;
	nopen = capopen = 0;
	pthread_mutex_unlock(&lock);
	for (struct stack *s = list; s; s = s->next) {
		pthread_mutex_lock(&s->lock);
		for (int i = 0; i < s->n; i++, n++) {
			range_event(&ev, &a, "range", &s->r[i], now - s->r[i].ts, 0, true);
			hook_label(&ev);
			cut_event_format(out, &ev);
			buf_addc(out, '\n');
		}
		pthread_mutex_unlock(&s->lock);
	}
	for (size_t i = 0; i < no; i++, n++) {
		range_event(&ev, &a, "startend", &o[i], now - o[i].ts, 0, true);
		hook_label(&ev);
		cut_event_format(out, &ev);
		buf_addc(out, '\n');
	}
	free(o);
	buf_free(&a);
	__atomic_add_fetch(&hook_layer_events[CUT_NVTX], n, __ATOMIC_RELAXED);
	return n;
}

static uint64_t
start(struct domain *d, const struct attrs *a, char *name, uint64_t next_id)
{
	struct range r;
	fill(&r, d, a, name);
	r.tid = my_tid();
	r.next_id = next_id;
	pthread_mutex_lock(&lock);
	if (nopen == capopen) {
		size_t cap = capopen ? 2 * capopen : 64;
		struct range *o = realloc(open_ranges, cap * sizeof(*o));
		if (!o) {
			pthread_mutex_unlock(&lock);
			free(name);
			return 0;
		}
		open_ranges = o;
		capopen = cap;
	}
	r.id = next_range_id++;
	open_ranges[nopen++] = r;
	pthread_mutex_unlock(&lock);
	return r.id;
}

/* Ends range id; returns the chained tool's id for it (0: none). */
static uint64_t
end(uint64_t id)
{
	int64_t now = hook_record_now();
	struct range r;
	bool found = false;
	pthread_mutex_lock(&lock);
	for (size_t i = nopen; i-- > 0;)
		if (open_ranges[i].id == id) {
			r = open_ranges[i];
			open_ranges[i] = open_ranges[--nopen];
			found = true;
			break;
		}
	pthread_mutex_unlock(&lock);
	if (!found)
		return 0;
	emit("startend", &r, now - r.ts, my_tid());
	free(r.name);
	return r.next_id;
}

static void
mark(struct domain *d, const struct attrs *a, char *name)
{
	struct range r;
	fill(&r, d, a, name);
	r.tid = my_tid();
	emit("mark", &r, -1, 0);
	free(name);
}

/* The attributes as the chained tool must see them: its own handle for a registered string. */
static const struct attrs *
for_next(const struct attrs *a, struct attrs *copy)
{
	if (!a || a->message_type != MSG_REGISTERED || !a->message.registered)
		return a;
	const struct string *s = a->message.registered;
	memcpy(copy, a, a->size && a->size < sizeof(*copy) ? a->size : sizeof(*copy));
	if (s->next_handle)
		copy->message.registered = s->next_handle;
	else {
		copy->message_type = MSG_ASCII;
		copy->message.ascii = s->s;
	}
	return copy;
}

#define NEXT(mod, id, type) ((type)next_fn[mod][id])
#define NEXT_DOM(d) ((d) ? ((const struct domain *)(d))->next_handle : NULL)

/* ---- the slots: CORE ---- */

static void
n_mark_ex(const struct attrs *a)
{
	mark(&default_domain, a, message(a));
	struct attrs c;
	if (next_fn[MOD_CORE][CORE_MarkEx])
		NEXT(MOD_CORE, CORE_MarkEx, void (*)(const struct attrs *))(for_next(a, &c));
}
static void
n_mark_a(const char *m)
{
	mark(&default_domain, NULL, strdup(m ? m : "(unnamed)"));
	if (next_fn[MOD_CORE][CORE_MarkA])
		NEXT(MOD_CORE, CORE_MarkA, void (*)(const char *))(m);
}
static void
n_mark_w(const wchar_t *m)
{
	mark(&default_domain, NULL, m ? wide(m) : strdup("(unnamed)"));
	if (next_fn[MOD_CORE][CORE_MarkW])
		NEXT(MOD_CORE, CORE_MarkW, void (*)(const wchar_t *))(m);
}
static uint64_t
n_start_ex(const struct attrs *a)
{
	struct attrs c;
	uint64_t nid = next_fn[MOD_CORE][CORE_RangeStartEx]
	                   ? NEXT(MOD_CORE, CORE_RangeStartEx,
	                          uint64_t(*)(const struct attrs *))(for_next(a, &c))
	                   : 0;
	return start(&default_domain, a, message(a), nid);
}
static uint64_t
n_start_a(const char *m)
{
	uint64_t nid = next_fn[MOD_CORE][CORE_RangeStartA]
	                   ? NEXT(MOD_CORE, CORE_RangeStartA, uint64_t(*)(const char *))(m)
	                   : 0;
	return start(&default_domain, NULL, strdup(m ? m : "(unnamed)"), nid);
}
static uint64_t
n_start_w(const wchar_t *m)
{
	uint64_t nid = next_fn[MOD_CORE][CORE_RangeStartW]
	                   ? NEXT(MOD_CORE, CORE_RangeStartW, uint64_t(*)(const wchar_t *))(m)
	                   : 0;
	return start(&default_domain, NULL, m ? wide(m) : strdup("(unnamed)"), nid);
}
static void
n_end(uint64_t id)
{
	uint64_t nid = end(id);
	if (next_fn[MOD_CORE][CORE_RangeEnd])
		NEXT(MOD_CORE, CORE_RangeEnd, void (*)(uint64_t))(nid);
}
static int
n_push_ex(const struct attrs *a)
{
	struct attrs c;
	if (next_fn[MOD_CORE][CORE_RangePushEx])
		NEXT(MOD_CORE, CORE_RangePushEx, int (*)(const struct attrs *))(for_next(a, &c));
	return push(&default_domain, a, message(a));
}
static int
n_push_a(const char *m)
{
	if (next_fn[MOD_CORE][CORE_RangePushA])
		NEXT(MOD_CORE, CORE_RangePushA, int (*)(const char *))(m);
	return push(&default_domain, NULL, strdup(m ? m : "(unnamed)"));
}
static int
n_push_w(const wchar_t *m)
{
	if (next_fn[MOD_CORE][CORE_RangePushW])
		NEXT(MOD_CORE, CORE_RangePushW, int (*)(const wchar_t *))(m);
	return push(&default_domain, NULL, m ? wide(m) : strdup("(unnamed)"));
}
static int
n_pop(void)
{
	int depth = pop(&default_domain);
	if (next_fn[MOD_CORE][CORE_RangePop])
		NEXT(MOD_CORE, CORE_RangePop, int (*)(void))();
	return depth;
}

static void
name_category(struct domain *d, uint32_t id, char *name)
{
	struct catname *c = malloc(sizeof(*c));
	if (!c || !name) {
		free(c);
		free(name);
		return;
	}
	pthread_mutex_lock(&lock);
	*c = (struct catname){id, name, d->cats};
	d->cats = c; /* the latest name of a category is found first */
	pthread_mutex_unlock(&lock);
}
static void
n_name_category_a(uint32_t id, const char *name)
{
	name_category(&default_domain, id, name ? strdup(name) : NULL);
	if (next_fn[MOD_CORE][CORE_NameCategoryA])
		NEXT(MOD_CORE, CORE_NameCategoryA, void (*)(uint32_t, const char *))(id, name);
}
static void
n_name_category_w(uint32_t id, const wchar_t *name)
{
	name_category(&default_domain, id, wide(name));
	if (next_fn[MOD_CORE][CORE_NameCategoryW])
		NEXT(MOD_CORE, CORE_NameCategoryW, void (*)(uint32_t, const wchar_t *))(id, name);
}

static void
name_thread(uint32_t tid, const char *name)
{
	if (!name)
		return;
	struct cut_buf a = {0};
	buf_addc(&a, '{');
	char comm[17] = "";
	if ((int64_t)tid == my_tid() && prctl(PR_GET_NAME, comm, 0, 0, 0) == 0)
		buf_addkv_str(&a, "comm", comm);
	buf_addkv_str(&a, "name", name);
	buf_addc(&a, '}');
	emit_meta("thread", tid, &a);
	buf_free(&a);
}
static void
n_name_thread_a(uint32_t tid, const char *name)
{
	name_thread(tid, name);
	if (next_fn[MOD_CORE][CORE_NameOsThreadA])
		NEXT(MOD_CORE, CORE_NameOsThreadA, void (*)(uint32_t, const char *))(tid, name);
}
static void
n_name_thread_w(uint32_t tid, const wchar_t *name)
{
	char *s = wide(name);
	name_thread(tid, s);
	free(s);
	if (next_fn[MOD_CORE][CORE_NameOsThreadW])
		NEXT(MOD_CORE, CORE_NameOsThreadW, void (*)(uint32_t, const wchar_t *))(tid, name);
}

/* ---- CORE2: domains ---- */

static void
n_domain_mark_ex(const void *d, const struct attrs *a)
{
	mark(dom_of(d), a, message(a));
	struct attrs c;
	if (next_fn[MOD_CORE2][CORE2_DomainMarkEx])
		NEXT(MOD_CORE2, CORE2_DomainMarkEx, void (*)(const void *, const struct attrs *))
	(NEXT_DOM(d), for_next(a, &c));
}
static uint64_t
n_domain_start_ex(const void *d, const struct attrs *a)
{
	struct attrs c;
	uint64_t nid = next_fn[MOD_CORE2][CORE2_DomainRangeStartEx]
	                   ? NEXT(MOD_CORE2, CORE2_DomainRangeStartEx,
	                          uint64_t(*)(const void *, const struct attrs *))(NEXT_DOM(d),
	                                                                           for_next(a, &c))
	                   : 0;
	return start(dom_of(d), a, message(a), nid);
}
static void
n_domain_end(const void *d, uint64_t id)
{
	uint64_t nid = end(id);
	if (next_fn[MOD_CORE2][CORE2_DomainRangeEnd])
		NEXT(MOD_CORE2, CORE2_DomainRangeEnd, void (*)(const void *, uint64_t))
	(NEXT_DOM(d), nid);
}
static int
n_domain_push_ex(const void *d, const struct attrs *a)
{
	struct attrs c;
	if (next_fn[MOD_CORE2][CORE2_DomainRangePushEx])
		NEXT(MOD_CORE2, CORE2_DomainRangePushEx,
		     int (*)(const void *, const struct attrs *))
	(NEXT_DOM(d), for_next(a, &c));
	return push(dom_of(d), a, message(a));
}
static int
n_domain_pop(const void *d)
{
	int depth = pop(dom_of(d));
	if (next_fn[MOD_CORE2][CORE2_DomainRangePop])
		NEXT(MOD_CORE2, CORE2_DomainRangePop, int (*)(const void *))(NEXT_DOM(d));
	return depth;
}
static void
n_domain_name_category_a(const void *d, uint32_t id, const char *name)
{
	name_category(dom_of(d), id, name ? strdup(name) : NULL);
	if (next_fn[MOD_CORE2][CORE2_DomainNameCategoryA])
		NEXT(MOD_CORE2, CORE2_DomainNameCategoryA,
		     void (*)(const void *, uint32_t, const char *))
	(NEXT_DOM(d), id, name);
}
static void
n_domain_name_category_w(const void *d, uint32_t id, const wchar_t *name)
{
	name_category(dom_of(d), id, wide(name));
	if (next_fn[MOD_CORE2][CORE2_DomainNameCategoryW])
		NEXT(MOD_CORE2, CORE2_DomainNameCategoryW,
		     void (*)(const void *, uint32_t, const wchar_t *))
	(NEXT_DOM(d), id, name);
}
static const void *
register_string(char *s, const void *next_handle)
{
	struct string *r = malloc(sizeof(*r));
	if (!r || !s) {
		free(r);
		free(s);
		return NULL;
	}
	*r = (struct string){s, next_handle};
	return r; /* kept for the life of the process, as NVTX requires */
}
static const void *
n_register_string_a(const void *d, const char *s)
{
	const void *nh = next_fn[MOD_CORE2][CORE2_DomainRegisterStringA]
	                     ? NEXT(MOD_CORE2, CORE2_DomainRegisterStringA,
	                            const void *(*)(const void *, const char *))(NEXT_DOM(d), s)
	                     : NULL;
	return register_string(s ? strdup(s) : NULL, nh);
}
static const void *
n_register_string_w(const void *d, const wchar_t *s)
{
	const void *nh = next_fn[MOD_CORE2][CORE2_DomainRegisterStringW]
	                     ? NEXT(MOD_CORE2, CORE2_DomainRegisterStringW,
	                            const void *(*)(const void *, const wchar_t *))(NEXT_DOM(d), s)
	                     : NULL;
	return register_string(wide(s), nh);
}
static const void *
new_domain(char *name, const void *next_handle)
{
	struct domain *d = calloc(1, sizeof(*d));
	if (!d) {
		free(name);
		return NULL;
	}
	d->name = name;
	d->next_handle = next_handle;
	return d;
}
static const void *
n_domain_create_a(const char *name)
{
	const void *nh =
	    next_fn[MOD_CORE2][CORE2_DomainCreateA]
	        ? NEXT(MOD_CORE2, CORE2_DomainCreateA, const void *(*)(const char *))(name)
	        : NULL;
	return new_domain(name ? strdup(name) : NULL, nh);
}
static const void *
n_domain_create_w(const wchar_t *name)
{
	const void *nh =
	    next_fn[MOD_CORE2][CORE2_DomainCreateW]
	        ? NEXT(MOD_CORE2, CORE2_DomainCreateW, const void *(*)(const wchar_t *))(name)
	        : NULL;
	return new_domain(wide(name), nh);
}
static void
n_domain_destroy(const void *d)
{
	/* Kept: ranges still open may name it. */
	if (next_fn[MOD_CORE2][CORE2_DomainDestroy])
		NEXT(MOD_CORE2, CORE2_DomainDestroy, void (*)(const void *))(NEXT_DOM(d));
}

/* ---- CUDA and CUDART: names of devices, contexts, streams, events ---- */

static void
name_handle(uint64_t h, const char *name, const char *kind, const char *via)
{
	if (!name)
		return;
	struct cut_buf a = {0};
	buf_addc(&a, '{');
	buf_addkey(&a, "handle");
	buf_addhex(&a, h);
	buf_addkv_str(&a, "name", name);
	buf_addkv_str(&a, "kind", kind);
	buf_addkv_str(&a, "via", via);
	buf_addc(&a, '}');
	emit_meta("symbol", 0, &a);
	buf_free(&a);
}
#define NAMER(fn, mod, id, type, kind)                                                             \
	static void fn(type h, const char *name)                                                   \
	{                                                                                          \
		name_handle((uint64_t)(uintptr_t)h, name, kind, "nvtx" #fn + 1);                   \
		if (next_fn[mod][id])                                                              \
			NEXT(mod, id, void (*)(type, const char *))(h, name);                      \
	}
NAMER(nNameCuDeviceA, MOD_CUDA, CUDA_NameCuDeviceA, int, "device")
NAMER(nNameCuContextA, MOD_CUDA, CUDA_NameCuContextA, void *, "context")
NAMER(nNameCuStreamA, MOD_CUDA, CUDA_NameCuStreamA, void *, "stream")
NAMER(nNameCuEventA, MOD_CUDA, CUDA_NameCuEventA, void *, "event")
NAMER(nNameCudaDeviceA, MOD_CUDART, CUDART_NameCudaDeviceA, int, "device")
NAMER(nNameCudaStreamA, MOD_CUDART, CUDART_NameCudaStreamA, void *, "stream")
NAMER(nNameCudaEventA, MOD_CUDART, CUDART_NameCudaEventA, void *, "event")

/* ---- initialisation ---- */

static const struct {
	int mod, id;
	fnptr fn;
} slots[] = {
    {MOD_CORE, CORE_MarkEx, (fnptr)n_mark_ex},
    {MOD_CORE, CORE_MarkA, (fnptr)n_mark_a},
    {MOD_CORE, CORE_MarkW, (fnptr)n_mark_w},
    {MOD_CORE, CORE_RangeStartEx, (fnptr)n_start_ex},
    {MOD_CORE, CORE_RangeStartA, (fnptr)n_start_a},
    {MOD_CORE, CORE_RangeStartW, (fnptr)n_start_w},
    {MOD_CORE, CORE_RangeEnd, (fnptr)n_end},
    {MOD_CORE, CORE_RangePushEx, (fnptr)n_push_ex},
    {MOD_CORE, CORE_RangePushA, (fnptr)n_push_a},
    {MOD_CORE, CORE_RangePushW, (fnptr)n_push_w},
    {MOD_CORE, CORE_RangePop, (fnptr)n_pop},
    {MOD_CORE, CORE_NameCategoryA, (fnptr)n_name_category_a},
    {MOD_CORE, CORE_NameCategoryW, (fnptr)n_name_category_w},
    {MOD_CORE, CORE_NameOsThreadA, (fnptr)n_name_thread_a},
    {MOD_CORE, CORE_NameOsThreadW, (fnptr)n_name_thread_w},
    {MOD_CORE2, CORE2_DomainMarkEx, (fnptr)n_domain_mark_ex},
    {MOD_CORE2, CORE2_DomainRangeStartEx, (fnptr)n_domain_start_ex},
    {MOD_CORE2, CORE2_DomainRangeEnd, (fnptr)n_domain_end},
    {MOD_CORE2, CORE2_DomainRangePushEx, (fnptr)n_domain_push_ex},
    {MOD_CORE2, CORE2_DomainRangePop, (fnptr)n_domain_pop},
    {MOD_CORE2, CORE2_DomainNameCategoryA, (fnptr)n_domain_name_category_a},
    {MOD_CORE2, CORE2_DomainNameCategoryW, (fnptr)n_domain_name_category_w},
    {MOD_CORE2, CORE2_DomainRegisterStringA, (fnptr)n_register_string_a},
    {MOD_CORE2, CORE2_DomainRegisterStringW, (fnptr)n_register_string_w},
    {MOD_CORE2, CORE2_DomainCreateA, (fnptr)n_domain_create_a},
    {MOD_CORE2, CORE2_DomainCreateW, (fnptr)n_domain_create_w},
    {MOD_CORE2, CORE2_DomainDestroy, (fnptr)n_domain_destroy},
    {MOD_CUDA, CUDA_NameCuDeviceA, (fnptr)nNameCuDeviceA},
    {MOD_CUDA, CUDA_NameCuContextA, (fnptr)nNameCuContextA},
    {MOD_CUDA, CUDA_NameCuStreamA, (fnptr)nNameCuStreamA},
    {MOD_CUDA, CUDA_NameCuEventA, (fnptr)nNameCuEventA},
    {MOD_CUDART, CUDART_NameCudaDeviceA, (fnptr)nNameCudaDeviceA},
    {MOD_CUDART, CUDART_NameCudaStreamA, (fnptr)nNameCudaStreamA},
    {MOD_CUDART, CUDART_NameCudaEventA, (fnptr)nNameCudaEventA},
};

int InitializeInjectionNvtx2(get_export_table_t get);

const char *
hook_nvtx_off_reason(void)
{
	const char *path = getenv("NVTX_INJECTION64_PATH");
	Dl_info self;
	if (!path || !*path)
		return "off: NVTX_INJECTION64_PATH is not set (cuthook sets it)";
	char *a = realpath(path, NULL), *b = NULL;
	if (dladdr((void *)InitializeInjectionNvtx2, &self) && self.dli_fname)
		b = realpath(self.dli_fname, NULL);
	bool same = a && b && strcmp(a, b) == 0;
	free(a);
	free(b);
	return same ? NULL : "off: NVTX_INJECTION64_PATH names another tool (cuthook chains to it)";
}

/* Around fork: the child keeps the forking thread's ranges alone (the others' threads are
 * gone), and locks no thread of its own can release. */
static void
fork_prepare(void)
{
	pthread_mutex_lock(&lock);
	if (my_stack)
		pthread_mutex_lock(&my_stack->lock);
}
static void
fork_parent(void)
{
	if (my_stack)
		pthread_mutex_unlock(&my_stack->lock);
	pthread_mutex_unlock(&lock);
}
static void
fork_child(void)
{
	pthread_mutex_init(&lock, NULL);
	stacks = my_stack;
	if (my_stack) {
		pthread_mutex_init(&my_stack->lock, NULL);
		my_stack->next = NULL;
		/* This thread is another task now (life.c's handler, run before, renamed it). */
		int64_t tid = hook_self ? hook_self->tid : (int64_t)gettid();
		for (int i = 0; i < my_stack->n; i++)
			my_stack->r[i].tid = tid;
	}
	nopen = 0; /* started ranges are the parent's to end */
}

/* The chained tool's init, once: the one CUT_NVTX_NEXT names, unless that is this library. */
static int (*next_init)(get_export_table_t);
static pthread_once_t next_once = PTHREAD_ONCE_INIT;
static void
load_next(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	const char *path = getenv("CUT_NVTX_NEXT");
	if (!path || !*path)
		return;
	int guard = hook_guard;
	hook_guard = 1;
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	void *f = h ? dlsym(h, "InitializeInjectionNvtx2") : NULL;
	hook_guard = guard;
	if (f && f != (void *)InitializeInjectionNvtx2)
		next_init = (int (*)(get_export_table_t))f;
}

HOOK_EXPORT int
InitializeInjectionNvtx2(get_export_table_t get)
{
	if (!get)
		return 0;
	const struct export_version *v = get(ETID_VERSIONINFO);
	const struct export_callbacks *cb = get(ETID_CALLBACKS);
	if (!v || v->struct_size < sizeof(*v) || v->version < 2 || !cb ||
	    cb->struct_size < sizeof(*cb) || !cb->get_module_function_table)
		return 0;
	if (v->set_injection_version)
		v->set_injection_version(2);
	pthread_once(&next_once, load_next);
	/* Each slot as NVTX left it (its init trampoline), then as the chained tool left it:
	 * what the chained tool changed is what this tool calls on. */
	enum { N = sizeof(slots) / sizeof(slots[0]) };
	fnptr *where[N], before[N];
	for (size_t i = 0; i < N; i++) {
		fnptr **table = NULL;
		unsigned size = 0;
		where[i] = NULL;
		if (cb->get_module_function_table(slots[i].mod, &table, &size) && table &&
		    (unsigned)slots[i].id <= size && table[slots[i].id])
			before[i] = *(where[i] = table[slots[i].id]);
	}
	bool chained = next_init && next_init(get);
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < N; i++) {
		if (!where[i])
			continue;
		fnptr now = *where[i];
		if (chained && now && now != before[i] && now != slots[i].fn &&
		    !next_fn[slots[i].mod][slots[i].id])
			next_fn[slots[i].mod][slots[i].id] = now;
		*where[i] = slots[i].fn;
	}
	pthread_mutex_unlock(&lock);
	return 1;
}
