/* wrap.c: the wrappers of every function in api.def, two each: the exported symbol that normal
 * linking binds to, and a hidden twin handed out by dlsym and cuGetProcAddress. */
#include <string.h>

#include "gpu.h"
#include "hook.h"
#include "layer.h"
#include "writer.h"

/* Each argument as a uint64_t, for the decoder (writer.c). */
#define HOOK_P(x) ((uint64_t)(uintptr_t)(x))
#define HOOK_U(x) ((uint64_t)(x))
#define HOOK_I(x) ((uint64_t)(int64_t)(x))
#define HOOK_F(x) hook_fbits(x)
#define HOOK_B(x) ((uint64_t)(uintptr_t) & (x))
#define HOOK_EXPAND(...) __VA_ARGS__

static inline uint64_t
hook_fbits(double d)
{
	uint64_t v;
	memcpy(&v, &d, sizeof(v));
	return v;
}

#define HOOK_IS_GPA(id) ((id) == HOOK_ID_cuGetProcAddress || (id) == HOOK_ID_cuGetProcAddress_v2)
/* After any call: a runtime asking for the driver's tables is noted by where it is (rt.c). */
#define HOOK_AFTER(id, r)                                                                          \
	do {                                                                                       \
		if ((id) == HOOK_ID_cuGetExportTable)                                              \
			hook_rt_exporter(__builtin_return_address(0), (r));                        \
	} while (0)

/*
 * The body of both wrappers. The real entry point is loaded on every call (it is written once,
 * when first known); a call that is not recorded still goes through cuGetProcAddress's fixup,
 * so pointers it hands out are always wrappers. A recorded call is decoded before the fixup:
 * its "fn" is the driver's pointer, as the BPF side sees it.
 */
#define HOOK_BODY(name, params, args, pack, via)                                                   \
	{                                                                                          \
		typedef CUresult(*real_t) params;                                                  \
		real_t real =                                                                      \
		    (real_t)__atomic_load_n(&hook_real[HOOK_ID_##name], __ATOMIC_ACQUIRE);         \
		if (__builtin_expect(!real, 0) &&                                                  \
		    !(real = (real_t)hook_real_slow(HOOK_ID_##name)))                              \
			return HOOK_CUDA_ERROR_NOT_INITIALIZED;                                    \
		struct hook_thread *t_ = hook_enter();                                             \
		if (!t_) {                                                                         \
			CUresult r_ = real args;                                                   \
			if (__builtin_expect(hook_async_barrier[HOOK_ID_##name], 0))               \
				hook_gpu_forget_params();                                          \
			HOOK_AFTER(HOOK_ID_##name, r_);                                            \
			if (HOOK_IS_GPA(HOOK_ID_##name)) {                                         \
				uint64_t a_[] = {HOOK_EXPAND pack};                                \
				hook_gpa_fixup(HOOK_ID_##name, r_, a_);                            \
			}                                                                          \
			return r_;                                                                 \
		}                                                                                  \
		uint64_t a_[] = {HOOK_EXPAND pack};                                                \
		struct gpu_sub *g_ = NULL;                                                         \
		unsigned char gk_ = hook_gpu_kind[HOOK_ID_##name];                                 \
		if (__builtin_expect(CUT_GPU_TIMES(gk_), 0))                                       \
			g_ = hook_gpu_before(HOOK_ID_##name, a_);                                  \
		else if (__builtin_expect(gk_ == GK_CTX_END, 0))                                   \
			hook_gpu_ctx_ending(HOOK_ID_##name, a_);                                   \
		unsigned char ends_ = hook_async_barrier[HOOK_ID_##name];                          \
		if (__builtin_expect(ends_, 0))                                                    \
			hook_async_drain();                                                        \
		int64_t t0_ = hook_call_start(&t_->tsc);                                           \
		hook_flight_in(t_, hook_skip_api && !hook_keep[HOOK_ID_##name] ? NULL : #name,     \
		               CUT_API, t0_);                                                      \
		CUresult r_ = real args;                                                           \
		uint64_t end_ = hook_end();                                                        \
		hook_flight_out(t_);                                                               \
		if (__builtin_expect(ends_, 0))                                                    \
			hook_gpu_forget_params();                                                  \
		if (g_)                                                                            \
			g_ = hook_gpu_after(g_, r_, t0_);                                          \
		else if (__builtin_expect(gk_ == GK_ENQUEUE, 0) && r_ == 0)                        \
			hook_gpu_enqueued(HOOK_ID_##name, a_);                                     \
		else if (__builtin_expect(gk_ == GK_STREAM, 0) && r_ == 0)                         \
			hook_gpu_stream_created(HOOK_ID_##name, a_);                               \
		else if (__builtin_expect(gk_ == GK_CONTEXT, 0) && r_ == 0)                        \
			hook_gpu_ctx_created(HOOK_ID_##name, a_);                                  \
		else if (__builtin_expect(gk_ == GK_INSTANTIATE, 0) && r_ == 0)                    \
			hook_gpu_graph_made(HOOK_ID_##name, a_);                                   \
		hook_record(t_, HOOK_ID_##name, via, t0_, end_, r_, a_, g_);                       \
		HOOK_AFTER(HOOK_ID_##name, r_);                                                    \
		if (HOOK_IS_GPA(HOOK_ID_##name))                                                   \
			hook_gpa_fixup(HOOK_ID_##name, r_, a_);                                    \
		return r_;                                                                         \
	}

/* Structs passed by value, as blobs of their size (see api.def). */
#define HOOK_BLOB(n)                                                                               \
	struct hook_blob##n {                                                                      \
		uint64_t w[(n) / 8];                                                               \
	};
#define HOOK_API(name, params, args, pack, roles, proto)                                           \
	HOOK_EXPORT CUresult name params HOOK_BODY(                                                \
	    name, params, args, pack, HOOK_VIA_LINK) static CUresult hookp_##name params           \
	HOOK_BODY(name, params, args, pack, HOOK_VIA_POINTER)
#include "api/api.def"

const char *const hook_names[HOOK_NAPI] = {
#define HOOK_API(name, params, args, pack, roles, proto) [HOOK_ID_##name] = #name,
#include "api/api.def"
};

const char *const hook_roles[HOOK_NAPI] = {
#define HOOK_API(name, params, args, pack, roles, proto) [HOOK_ID_##name] = roles,
#include "api/api.def"
};

void *const hook_exports[HOOK_NAPI] = {
#define HOOK_API(name, params, args, pack, roles, proto) [HOOK_ID_##name] = (void *)name,
#include "api/api.def"
};

void *const hook_pointers[HOOK_NAPI] = {
#define HOOK_API(name, params, args, pack, roles, proto) [HOOK_ID_##name] = (void *)hookp_##name,
#include "api/api.def"
};

const char *
hook_api_off_reason(void)
{
	return hook_skip_api ? HOOK_OFF_UPROBES : NULL;
}
