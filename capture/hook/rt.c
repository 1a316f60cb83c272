/* rt.c: the runtime layer of libcuthook: a wrapper for every function of rt.def (libcudart's
 * cuda* API), exported with the version node libcudart.so.13 (hook.map), so that references
 * bound to that version (PyTorch's libraries') reach it as unversioned ones do; dlsym hands it
 * out too. Each call is an event of layer runtime, decoded by capture/api as cutcapture's
 * uprobes are; the driver calls it makes are recorded inside it as usual. */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classify.h"
#include "event.h"
#include "hook.h"
#include "layer.h"
#include "writer.h"

enum rt_id {
#define HOOK_RT(fn, as, ret, params, args, pack, roles, proto) RT_ID_##fn,
#include "api/rt.def"
	RT_N
};

static const char *const rt_names[RT_N] = {
#define HOOK_RT(fn, as, ret, params, args, pack, roles, proto) [RT_ID_##fn] = #fn,
#include "api/rt.def"
};
/* The name calls are recorded as (nvcc's __cudaLaunchKernel is cudaLaunchKernel). */
static const char *const rt_as[RT_N] = {
#define HOOK_RT(fn, as, ret, params, args, pack, roles, proto) [RT_ID_##fn] = #as,
#include "api/rt.def"
};

/* By-value parameters and results, ABI-equivalent to the runtime's (see rt.def). */
struct hook_dim3 {
	uint32_t x, y, z;
};
#define HOOK_RTBLOB(n)                                                                             \
	struct hook_rtblob##n {                                                                    \
		uint64_t w[(n) / 8];                                                               \
	};
#define HOOK_RBLOB(n)                                                                              \
	struct hook_rblob##n {                                                                     \
		unsigned char b[n];                                                                \
	};
#define HOOK_RT(fn, as, ret, params, args, pack, roles, proto)
#include "api/rt.def"

#define HOOK_P(x) ((uint64_t)(uintptr_t)(x))
#define HOOK_U(x) ((uint64_t)(x))
#define HOOK_I(x) ((uint64_t)(int64_t)(x))
#define HOOK_L(x) ((uint64_t)(x))
#define HOOK_F(x) rt_fbits(x)
#define HOOK_B(x) ((uint64_t)(uintptr_t) & (x))
#define HOOK_D3XY(v) ((uint64_t)(v).x | (uint64_t)(v).y << 32)
#define HOOK_D3Z(v) ((uint64_t)(v).z)
#define HOOK_EXPAND(...) __VA_ARGS__

static inline uint64_t
rt_fbits(double d)
{
	uint64_t v;
	memcpy(&v, &d, sizeof(v));
	return v;
}

/* The return types, and what a wrapper returns when there is no runtime to call. */
#define RT_T_ERR int
#define RT_T_PTR const void *
#define RT_T_VOID void
#define RT_T_RBLOB20 struct hook_rblob20
#define RT_FAIL_ERR 3 /* cudaErrorInitializationError */
#define RT_FAIL_PTR NULL
#define RT_FAIL_VOID
#define RT_FAIL_RBLOB20 ((struct hook_rblob20){{0}})
#define RT_RET_ERR(r) ((int64_t)(r))
#define RT_RET_PTR(r) 0
#define RT_RET_RBLOB20(r) 0

/* Why the layer is off (left to cutcapture's uprobes, or not in CUTHOOK_LAYERS), or NULL. */
static const char *off;
static void *rt_real[RT_N];
static void *rt_real_slow(enum rt_id id);
static void rt_record(struct hook_thread *t, enum rt_id id, int64_t t0, uint64_t end, int64_t r,
                      const uint64_t *a);
static void rt_register(const uint64_t *a);

#define RT_REAL(fn, ret, params)                                                                   \
	typedef RT_T_##ret(*real_t) params;                                                        \
	real_t real = (real_t)__atomic_load_n(&rt_real[RT_ID_##fn], __ATOMIC_ACQUIRE);             \
	if (__builtin_expect(!real, 0) && !(real = (real_t)rt_real_slow(RT_ID_##fn)))              \
		return RT_FAIL_##ret;

/* A function with a result. */
#define RT_BODY(fn, ret, params, args, pack)                                                       \
	{                                                                                          \
		RT_REAL(fn, ret, params)                                                           \
		struct hook_thread *t_ = hook_enter();                                             \
		if (!t_)                                                                           \
			return real args;                                                          \
		int64_t t0_ = hook_call_start(&t_->tsc);                                           \
		hook_flight_in(t_, off ? NULL : rt_as[RT_ID_##fn], CUT_RUNTIME, t0_);              \
		RT_T_##ret r_ = real args;                                                         \
		uint64_t end_ = hook_end();                                                        \
		hook_flight_out(t_);                                                               \
		uint64_t a_[] = {HOOK_EXPAND pack};                                                \
		rt_record(t_, RT_ID_##fn, t0_, end_, RT_RET_##ret(r_), a_);                        \
		return r_;                                                                         \
	}
/* The only void one, __cudaRegisterFunction: no event, it names a kernel's host stub. */
#define RT_BODY_VOID(fn, params, args, pack)                                                       \
	{                                                                                          \
		RT_REAL(fn, VOID, params)                                                          \
		real args;                                                                         \
		uint64_t a_[] = {HOOK_EXPAND pack};                                                \
		rt_register(a_);                                                                   \
	}
#define RT_PICK_ERR RT_BODY
#define RT_PICK_PTR RT_BODY
#define RT_PICK_RBLOB20 RT_BODY
#define RT_PICK_VOID(fn, ret, params, args, pack) RT_BODY_VOID(fn, params, args, pack)

#define HOOK_RT(fn, as, ret, params, args, pack, roles, proto)                                     \
	HOOK_EXPORT RT_T_##ret fn params RT_PICK_##ret(fn, ret, params, args, pack)
#include "api/rt.def"

static void *const rt_exports[RT_N] = {
#define HOOK_RT(fn, as, ret, params, args, pack, roles, proto) [RT_ID_##fn] = (void *)fn,
#include "api/rt.def"
};

/* ---- where the real functions are ---- */

static int
cmp_name(const void *key, const void *elem)
{
	return strcmp(key, *(const char *const *)elem);
}

static int
rt_lookup(const char *name)
{
	const char *const *p = bsearch(name, rt_names, RT_N, sizeof(rt_names[0]), cmp_name);
	return p ? (int)(p - rt_names) : -1;
}

/* The libcudart mapped, by file name: libcudart.so.13 (the version the wrappers carry), else
 * the first other one. Loaded with RTLD_LOCAL (a dependency of a library Python imported), it
 * is in no scope RTLD_NEXT searches. */
static int
find_cudart(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	const char **found = data;
	const char *base = strrchr(info->dlpi_name, '/');
	base = base ? base + 1 : info->dlpi_name;
	if (strncmp(base, "libcudart.so", 12) != 0)
		return 0;
	if (!*found)
		*found = info->dlpi_name;
	if (strcmp(base, "libcudart.so.13") != 0)
		return 0;
	*found = info->dlpi_name;
	return 1;
}

/* Makes p the real entry point of id unless another one is known; whether id's wrapper calls p. */
static bool
adopt(enum rt_id id, void *p)
{
	void *none = NULL;
	if (__atomic_compare_exchange_n(&rt_real[id], &none, p, false, __ATOMIC_RELEASE,
	                                __ATOMIC_ACQUIRE))
		return true;
	return none == p;
}

static void *
rt_real_slow(enum rt_id id)
{
	void *p = __atomic_load_n(&rt_real[id], __ATOMIC_ACQUIRE);
	if (p)
		return p;
	int guard = hook_guard;
	hook_guard = 1; /* dlsym below goes straight to the real one */
	/* The definition of the version the wrappers carry first: another runtime in the global
	 * scope (libcudart.so.12) must not answer for libcudart.so.13's callers. */
	p = dlvsym(RTLD_NEXT, rt_names[id], "libcudart.so.13");
	if (!p)
		p = hook_next(rt_names[id]);
	if (!p || p == rt_exports[id]) {
		const char *path = NULL;
		p = NULL;
		dl_iterate_phdr(find_cudart, &path);
		void *h = path ? dlopen(path, RTLD_LAZY | RTLD_NOLOAD) : NULL;
		if (h) {
			p = dlsym(h, rt_names[id]);
			dlclose(h);
		}
	}
	hook_guard = guard;
	if (!p || p == rt_exports[id] || !adopt(id, p))
		return NULL;
	return p;
}

void *
hook_rt_dlsym(void *handle, const char *name)
{
	int id = rt_lookup(name);
	int guard = hook_guard;
	hook_guard = 1;
	void *p = dlsym(handle, name);
	hook_guard = guard;
	if (id < 0 || !p)
		return p;
	if (p == rt_exports[id])
		return rt_real_slow((enum rt_id)id) ? p : NULL;
	return adopt((enum rt_id)id, p) ? rt_exports[id] : p;
}

/* ---- runtimes linked into other objects ---- */

/*
 * Every CUDA runtime asks the driver for its private tables (cuGetExportTable) as it starts,
 * libcudart.so and each copy of it linked into another object alike: PyTorch's cuBLAS, cuBLASLt
 * and cuDNN, NCCL, a program nvcc built with its default -cudart=static. The calls of those
 * copies are calls inside their object, which no wrapper of this layer sees (their driver calls
 * are recorded). The objects that asked, but libcudart.so, the driver's own libraries (libcuda,
 * libnvidia-*: NVML asks) and CUPTI (a tool, which asks too), are named in the trailer
 * (runtimes_unrecorded) so that a runtime layer short of a profiler's counts says why.
 */
static struct {
	const void *base;
	char name[64];
} unrecorded[HOOK_RT_UNRECORDED];
static unsigned nunrecorded;
static pthread_mutex_t unrecorded_lock = PTHREAD_MUTEX_INITIALIZER;

void
hook_rt_exporter(const void *ra, CUresult r)
{
	Dl_info di, self;
	if (r != 0 || hook_guard || !dladdr(ra, &di) || !di.dli_fbase || !di.dli_fname)
		return;
	if (dladdr((const void *)hook_rt_exporter, &self) && self.dli_fbase == di.dli_fbase)
		return;
	const char *b = strrchr(di.dli_fname, '/');
	b = b ? b + 1 : di.dli_fname;
	if (!*b || !strncmp(b, "libcudart.so", 12) || !strncmp(b, "libcuda.so", 10) ||
	    !strncmp(b, "libnvidia-", 10) || !strncmp(b, "libcupti.so", 11))
		return;
	pthread_mutex_lock(&unrecorded_lock);
	unsigned n = nunrecorded, i = 0;
	while (i < n && unrecorded[i].base != di.dli_fbase)
		i++;
	if (i == n && n < HOOK_RT_UNRECORDED) {
		unrecorded[n].base = di.dli_fbase;
		snprintf(unrecorded[n].name, sizeof(unrecorded[n].name), "%s", b);
		__atomic_store_n(&nunrecorded, n + 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&unrecorded_lock);
}

void
hook_rt_fork_child(void)
{
	pthread_mutex_init(&unrecorded_lock, NULL);
}

size_t
hook_rt_unrecorded(const char **names, size_t max)
{
	size_t n = __atomic_load_n(&nunrecorded, __ATOMIC_ACQUIRE);
	if (n > max)
		n = max;
	for (size_t i = 0; i < n; i++)
		names[i] = unrecorded[i].name;
	return n;
}

/* ---- recording ---- */

/* Per id, made once at start: what its calls say and the fixed part of their lines. */
static struct cut_api_desc descs[RT_N];
static struct hook_frag frags[RT_N];

void
hook_rt_init(void)
{
	off = hook_layer_skipped(CUT_RUNTIME)   ? HOOK_OFF_UPROBES
	      : !hook_layer_wanted(CUT_RUNTIME) ? HOOK_OFF_UNWANTED
	                                        : NULL;
	for (int i = 0; i < RT_N; i++) {
		cut_api_describe(&descs[i], rt_names[i]);
		hook_frag_make(&frags[i], CUT_RUNTIME, rt_as[i], cut_api_category(rt_as[i]),
		               !descs[i].noret);
		hook_frag_queue(&frags[i], &descs[i]);
	}
}

const char *
hook_rt_off_reason(void)
{
	return off;
}

static void
rt_record(struct hook_thread *t, enum rt_id id, int64_t t0, uint64_t end, int64_t r,
          const uint64_t *a)
{
	if (off) /* cutcapture's uprobes record it, or it was not asked for */
		return;
	hook_record_call(t, &frags[id], &descs[id], t0, end, r, a);
}

/* __cudaRegisterFunction(handle, hostFun, deviceFun, deviceName, ...): the host stub's name,
 * for the launches that name it (its symbol record comes with the first: handles.c). */
static void
rt_register(const uint64_t *a)
{
	const char *name = (const char *)(uintptr_t)a[3];
	if (!a[1] || !name || !*name)
		return;
	int guard = hook_guard;
	hook_guard = 1;
	hook_name_set(hook_hostfn_key(a[1]), name, strlen(name));
	hook_guard = guard;
}
