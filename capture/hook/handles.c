/* handles.c: libcuthook's table of handle names (from the calls that name them), read on every
 * launch without a lock, behind the interface the argument decoder names handles through
 * (capture/api/call.h); a handle no call named is asked about once, of the driver. */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "hook.h"
#include "writer.h"

/* Open addressing, never resized or freed: lookups on every launch take no lock. A slot's
 * name is published before its handle. */
#define NAMES_CAP (1u << 16)
struct name_slot {
	uint64_t handle;
	const struct cut_name *name; /* raw "" when the handle is known to have none */
	unsigned char told;          /* a host stub's: its symbol record was written */
};
static struct name_slot *names;
static unsigned nnames;
static pthread_mutex_t names_lock = PTHREAD_MUTEX_INITIALIZER;

static inline unsigned
slot_of(uint64_t h)
{
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 32;
	return (unsigned)h & (NAMES_CAP - 1);
}

static const struct cut_name no_name = {"", "\"\"", 2};

uint32_t hook_names_gen;

/* The slot of handle h, NULL when never seen. */
static struct name_slot *
find(uint64_t h)
{
	struct name_slot *tab = __atomic_load_n(&names, __ATOMIC_ACQUIRE);
	if (!tab || !h)
		return NULL;
	for (unsigned i = slot_of(h), n = 0; n < NAMES_CAP; i = (i + 1) & (NAMES_CAP - 1), n++) {
		uint64_t k = __atomic_load_n(&tab[i].handle, __ATOMIC_ACQUIRE);
		if (k == h)
			return &tab[i];
		if (!k)
			return NULL;
	}
	return NULL;
}

/* Name of handle h: NULL when never seen, raw "" when known to have none. */
static const struct cut_name *
name_of(uint64_t h)
{
	struct name_slot *sl = find(h);
	return sl ? __atomic_load_n(&sl->name, __ATOMIC_ACQUIRE) : NULL;
}

const struct cut_name *
hook_name_of(uint64_t h)
{
	return name_of(h);
}

const struct cut_name *
hook_name_set(uint64_t h, const char *raw, size_t len)
{
	if (!h || !raw)
		return NULL;
	/* A handle named anew: the calls queued for the formatter name it as it was. */
	const struct cut_name *was = name_of(h);
	if (was && (strlen(was->raw) != len || strncmp(was->raw, raw, len) != 0))
		hook_async_drain();
	const struct cut_name *nm = &no_name;
	if (len) {
		struct cut_name *m = malloc(sizeof(*m));
		struct cut_buf j = {0};
		buf_addjstr(&j, raw, len);
		if (!m || !(m->raw = strndup(raw, len))) {
			free(m);
			buf_free(&j);
			return NULL;
		}
		m->json = j.s;
		m->json_len = j.len;
		nm = m;
	}
	pthread_mutex_lock(&names_lock);
	struct name_slot *tab = names;
	if (!tab && (tab = calloc(NAMES_CAP, sizeof(*tab))))
		__atomic_store_n(&names, tab, __ATOMIC_RELEASE);
	const struct cut_name *ret = NULL;
	if (tab) {
		for (unsigned i = slot_of(h), n = 0; n < NAMES_CAP;
		     i = (i + 1) & (NAMES_CAP - 1), n++) {
			if (tab[i].handle == h) {
				__atomic_store_n(&tab[i].name, nm, __ATOMIC_RELEASE);
				__atomic_store_n(&tab[i].told, 0,
				                 __ATOMIC_RELAXED); /* named anew */
				ret = nm;
				break;
			}
			/* Keep a quarter free so that misses stay short. */
			if (!tab[i].handle && nnames < NAMES_CAP / 4 * 3) {
				tab[i].name = nm;
				__atomic_store_n(&tab[i].handle, h, __ATOMIC_RELEASE);
				nnames++;
				ret = nm;
				break;
			}
		}
	}
	/* After the name is in place: a reader that sees the new count sees the new name. */
	__atomic_fetch_add(&hook_names_gen, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&names_lock);
	return ret;
}

void
hook_names_fork(int phase)
{
	if (phase == 0)
		pthread_mutex_lock(&names_lock);
	else
		pthread_mutex_unlock(&names_lock);
}

/* The name of a function or kernel handle, or of a kernel's host stub (named only by
 * __cudaRegisterFunction); asks the driver (cuFuncGetName, then cuKernelGetName
 * for a CUkernel passed as a function) once about a handle no call named, when the call that
 * used it succeeded (only a handle the driver accepted is worth asking about). A host stub's
 * symbol record is written when a call first uses it, not when it is registered: PyTorch
 * registers some 20,000 and launches a few hundred. */
static const struct cut_name *
get(struct cut_names *names, uint32_t pid, uint64_t h, bool ok, enum cut_name_of of)
{
	struct hook_names *hn = (struct hook_names *)names;
	(void)pid;
	if (of == CUT_NAME_HOSTFN) {
		struct name_slot *sl = find(hook_hostfn_key(h));
		const struct cut_name *n = sl ? __atomic_load_n(&sl->name, __ATOMIC_ACQUIRE) : NULL;
		if (n && *n->raw) {
			if (!__atomic_exchange_n(&sl->told, 1, __ATOMIC_ACQ_REL))
				hn->asked = (struct hook_symbol){h, n->raw, "function",
				                                 "__cudaRegisterFunction"};
			return n;
		}
		/* CUDA 13's host stubs launch their kernel's handle (__cudaGetKernel), a CUkernel
		 * the driver's calls named: by that name, never asking the driver about what may
		 * be a host address. */
		n = name_of(h);
		return n && *n->raw ? n : NULL;
	}
	const struct cut_name *n = name_of(h);
	if (n)
		return *n->raw ? n : NULL;
	if (!ok || !h)
		return NULL;
	static const enum hook_id askers[] = {HOOK_ID_cuFuncGetName, HOOK_ID_cuKernelGetName};
	for (size_t i = 0; i < sizeof(askers) / sizeof(askers[0]); i++) {
		CUresult (*ask)(const char **, void *) =
		    (CUresult(*)(const char **, void *))hook_real_slow(askers[i]);
		const char *s = NULL;
		int guard = hook_guard;
		hook_guard = HOOK_GUARD_ASK;
		uint32_t own = hook_mark.own;
		hook_mark.own = 1;
		CUresult r = ask ? ask(&s, (void *)(uintptr_t)h) : HOOK_CUDA_ERROR_NOT_INITIALIZED;
		hook_mark.own = own;
		hook_guard = guard;
		if (r == HOOK_CUDA_SUCCESS && s && *s) {
			n = hook_name_set(h, s, strlen(s));
			if (n)
				hn->asked = (struct hook_symbol){
				    h, n->raw, i ? "kernel" : "function", hook_names[askers[i]]};
			return n;
		}
	}
	hook_name_set(h, "", 0);
	return NULL;
}

void
hook_names_begin(struct hook_names *hn)
{
	hn->names.get = get;
	hn->asked.handle = 0;
}
