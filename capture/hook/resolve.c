/* resolve.c: where real entry points come from, and how wrappers replace them: dlsym and
 * cuGetProcAddress are intercepted, and the audit of how each entry point was obtained. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "hook.h"

void *hook_real[HOOK_NAPI];

static void *(*real_dlsym)(void *, const char *);

/* How an entry point was obtained, besides being called through its exported symbol. */
enum { GOT_DLSYM = 1, GOT_GPA = 2 };
struct origin {
	unsigned got;
	/* The first cuGetProcAddress that returned it: which version of that function, the
	 * name asked for, the cudaVersion and the flags. */
	enum hook_id gpa;
	const char *symbol;
	int version;
	uint64_t flags;
};

/* Pointers cuGetProcAddress returned that are no exported function of the libcuda, so they
 * could not be wrapped: kept for the audit. */
#define MAX_UNWRAPPED 64
struct unwrapped {
	const char *symbol;
	enum hook_id gpa;
	int version;
	const char *why;
};

/* Real entry point -> id, sorted by pointer, built from each libcuda seen. */
struct pmap_entry {
	void *p;
	enum hook_id id;
};

#define MAX_OBJECTS 4
static struct {
	pthread_mutex_t lock; /* guards everything below; never taken on the call path */
	struct origin origin[HOOK_NAPI];
	struct unwrapped unwrapped[MAX_UNWRAPPED];
	unsigned nunwrapped, unwrapped_total;
	struct pmap_entry *pmap;
	size_t npmap;
	void *objects[MAX_OBJECTS]; /* load addresses of the libcudas already mapped */
	unsigned nobjects;
	char *libcuda;
} R = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void
resolve_dlsym(void)
{
	/* dlvsym is not intercepted, and an unversioned definition such as this library's never
	 * answers a dlvsym lookup. dlsym moved from libdl to libc in glibc 2.34; libc comes
	 * before this library when it is preloaded too. */
	static const char *const versions[] = {"GLIBC_2.34", "GLIBC_2.2.5"};
	void *p = NULL;
	for (size_t i = 0; !p && i < 2 * sizeof(versions) / sizeof(versions[0]); i++)
		p = dlvsym(i < 2 ? RTLD_NEXT : RTLD_DEFAULT, "dlsym", versions[i % 2]);
	__atomic_store_n(&real_dlsym, (void *(*)(void *, const char *))p, __ATOMIC_RELEASE);
}

/* The real dlsym, for this library's own lookups (RTLD_NEXT: after this library). */
static void *
sym(void *handle, const char *name)
{
	void *(*f)(void *, const char *) = __atomic_load_n(&real_dlsym, __ATOMIC_ACQUIRE);
	if (!f) {
		resolve_dlsym();
		f = __atomic_load_n(&real_dlsym, __ATOMIC_ACQUIRE);
	}
	return f ? f(handle, name) : NULL;
}

static int
cmp_name(const void *key, const void *elem)
{
	return strcmp(key, *(const char *const *)elem);
}

int
hook_lookup(const char *name)
{
	const char *const *p =
	    bsearch(name, hook_names, HOOK_NAPI, sizeof(hook_names[0]), cmp_name);
	return p ? (int)(p - hook_names) : -1;
}

/* The id of p when it is one of this library's wrappers, else -1. */
static int
own_id(void *p)
{
	for (int i = 0; i < HOOK_NAPI; i++)
		if (p == hook_exports[i] || p == hook_pointers[i])
			return i;
	return -1;
}

static bool
is_ours(void *p)
{
	return own_id(p) >= 0;
}

/* Makes p the real entry point of id unless another one is known. Returns whether id's wrapper
 * calls p. */
static bool
adopt(enum hook_id id, void *p)
{
	void *none = NULL;
	if (__atomic_compare_exchange_n(&hook_real[id], &none, p, false, __ATOMIC_RELEASE,
	                                __ATOMIC_ACQUIRE))
		return true;
	return none == p;
}

void *
hook_real_slow(enum hook_id id)
{
	void *p = __atomic_load_n(&hook_real[id], __ATOMIC_ACQUIRE);
	if (p)
		return p;
	int guard = hook_guard;
	hook_guard = 1;
	p = sym(RTLD_NEXT, hook_names[id]);
	if (!p) {
		/* A libcuda loaded with RTLD_LOCAL (dlopen'ed itself, or needed by a library that
		 * was) is not in the global scope. */
		void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
		if (h) {
			p = sym(h, hook_names[id]);
			dlclose(h);
		}
	}
	hook_guard = guard;
	if (!p || is_ours(p) || !adopt(id, p))
		return NULL;
	return p;
}

void
hook_resolve_init(void)
{
	resolve_dlsym();
	for (int i = 0; i < HOOK_NAPI; i++) {
		void *p = sym(RTLD_NEXT, hook_names[i]);
		if (p && !is_ours(p))
			adopt((enum hook_id)i, p);
	}
}

const char *
hook_libcuda_path(void)
{
	pthread_mutex_lock(&R.lock);
	for (int i = 0; i < HOOK_NAPI && !R.libcuda; i++) {
		void *p = __atomic_load_n(&hook_real[i], __ATOMIC_ACQUIRE);
		Dl_info info;
		if (p && dladdr(p, &info) && info.dli_fname)
			R.libcuda = strdup(info.dli_fname);
	}
	const char *s = R.libcuda;
	pthread_mutex_unlock(&R.lock);
	return s;
}

void *
hook_next(const char *name)
{
	return sym(RTLD_NEXT, name);
}

void
hook_resolve_fork(int phase)
{
	if (phase == 0)
		pthread_mutex_lock(&R.lock);
	else
		pthread_mutex_unlock(&R.lock);
}

/* ---- dlsym ---- */

static void *
dlsym_cu(void *handle, const char *name, int id)
{
	int guard = hook_guard;
	hook_guard = 1;
	void *p = sym(handle, name);
	void *ret = p;
	if (p) {
		if (p == hook_exports[id])
			/* The global scope found this library's own symbol: the driver's comes
			 * after it, or there is none (then say so, as without cuthook). */
			p = hook_real_slow((enum hook_id)id);
		if (!p)
			ret = NULL;
		else if (adopt((enum hook_id)id, p)) {
			pthread_mutex_lock(&R.lock);
			R.origin[id].got |= GOT_DLSYM;
			pthread_mutex_unlock(&R.lock);
			ret = hook_pointers[id];
		}
	}
	hook_guard = guard;
	return ret;
}

/*
 * cudart loads libcuda with dlopen and looks cuGetProcAddress up with dlsym(handle, ...), which
 * symbol interposition never sees; so dlsym hands out wrappers for driver functions (and
 * for runtime functions, rt.c). Other
 * lookups, and RTLD_NEXT ones (whose meaning depends on the caller), go straight to the real
 * dlsym as a tail call, so it sees the caller's return address (tests/scripts/hook-resolve.sh
 * checks it).
 */
HOOK_EXPORT void *
dlsym(void *handle, const char *name)
{
	if (__builtin_expect(!__atomic_load_n(&real_dlsym, __ATOMIC_ACQUIRE), 0)) {
		resolve_dlsym();
		if (!real_dlsym)
			return NULL;
	}
	int id;
	if (handle != RTLD_NEXT && !hook_guard &&
	    (strncmp(name, "cuda", 4) == 0 || strncmp(name, "__cuda", 6) == 0))
		return hook_rt_dlsym(handle, name);
	if (name[0] == 'c' && name[1] == 'u' && handle != RTLD_NEXT && !hook_guard &&
	    (id = hook_lookup(name)) >= 0)
		return dlsym_cu(handle, name, id);
	return real_dlsym(handle, name);
}

/* ---- cuGetProcAddress ---- */

static int
cmp_pmap(const void *a, const void *b)
{
	const struct pmap_entry *x = a, *y = b;
	if (x->p != y->p)
		return (uintptr_t)x->p < (uintptr_t)y->p ? -1 : 1;
	return (int)x->id - (int)y->id;
}

/* Adds every wrapped function the object holding p exports to the pointer map. Caller holds
 * R.lock. */
static void
map_object(void *p)
{
	Dl_info info;
	if (!dladdr(p, &info) || !info.dli_fname || !info.dli_fbase)
		return;
	for (unsigned i = 0; i < R.nobjects; i++)
		if (R.objects[i] == info.dli_fbase)
			return;
	if (R.nobjects == MAX_OBJECTS)
		return;
	R.objects[R.nobjects++] = info.dli_fbase;
	void *h = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		return;
	struct pmap_entry *m = realloc(R.pmap, (R.npmap + HOOK_NAPI) * sizeof(*m));
	if (!m) {
		dlclose(h);
		return;
	}
	R.pmap = m;
	for (int i = 0; i < HOOK_NAPI; i++) {
		void *f = sym(h, hook_names[i]);
		Dl_info fi;
		/* Only the object's own definitions: a handle's lookup also searches its
		 * dependencies. */
		if (f && dladdr(f, &fi) && fi.dli_fbase == info.dli_fbase)
			m[R.npmap++] = (struct pmap_entry){f, (enum hook_id)i};
	}
	dlclose(h);
	qsort(R.pmap, R.npmap, sizeof(*R.pmap), cmp_pmap);
}

/* Strips _ptds/_ptsz and a trailing _v<digits> from s into out. */
static void
base_name(const char *s, char *out, size_t outlen)
{
	size_t n = strlen(s);
	if (n >= outlen)
		n = outlen - 1;
	memcpy(out, s, n);
	out[n] = '\0';
	if (n > 5 && (strcmp(out + n - 5, "_ptds") == 0 || strcmp(out + n - 5, "_ptsz") == 0))
		out[n -= 5] = '\0';
	char *u = strrchr(out, '_');
	if (u && u[1] == 'v' && u[2] && strspn(u + 2, "0123456789") == strlen(u + 2))
		*u = '\0';
}

static bool
per_thread_name(const char *s)
{
	size_t n = strlen(s);
	return n > 5 && (strcmp(s + n - 5, "_ptds") == 0 || strcmp(s + n - 5, "_ptsz") == 0);
}

/*
 * Which function q is: the names the libcuda exports at q. Aliases (several names, one address)
 * are told apart by the name asked for and the per-thread-stream flag. Returns -1 when q is no
 * exported function. Caller holds R.lock.
 */
static int
identify(void *q, const char *symbol, uint64_t flags)
{
	struct pmap_entry key = {q, (enum hook_id)0};
	size_t lo = 0, hi = R.npmap;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (cmp_pmap(&R.pmap[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	char want[128], have[128];
	base_name(symbol, want, sizeof(want));
	int best = -1, best_score = -1;
	for (size_t i = lo; i < R.npmap && R.pmap[i].p == q; i++) {
		const char *name = hook_names[R.pmap[i].id];
		base_name(name, have, sizeof(have));
		int score = strcmp(name, symbol) == 0 ? 4 : strcmp(have, want) == 0 ? 2 : 0;
		if (per_thread_name(name) == !!(flags & HOOK_GPA_PER_THREAD_STREAM))
			score++;
		if (score > best_score)
			best = (int)R.pmap[i].id, best_score = score;
	}
	return best;
}

static void
note_unwrapped(const char *symbol, enum hook_id gpa, int version, const char *why)
{
	R.unwrapped_total++;
	for (unsigned i = 0; i < R.nunwrapped; i++)
		if (strcmp(R.unwrapped[i].symbol, symbol) == 0)
			return;
	if (R.nunwrapped < MAX_UNWRAPPED) {
		char *s = strdup(symbol);
		if (s)
			R.unwrapped[R.nunwrapped++] = (struct unwrapped){s, gpa, version, why};
	}
}

void
hook_gpa_fixup(enum hook_id gpa, CUresult r, const uint64_t *a)
{
	const char *symbol = (const char *)(uintptr_t)a[0];
	void **pfn = (void **)(uintptr_t)a[1];
	int version = (int)a[2];
	uint64_t flags = a[3];
	if (r != HOOK_CUDA_SUCCESS || !pfn || !*pfn || !symbol)
		return;
	void *q = *pfn;
	int guard = hook_guard;
	hook_guard = 1;
	pthread_mutex_lock(&R.lock);
	/* A libcuda whose own references are interposed hands out this library's exported
	 * symbols: the same function, obtained through cuGetProcAddress all the same. */
	int id = own_id(q);
	if (id < 0) {
		map_object(q);
		id = identify(q, symbol, flags);
		if (id < 0) {
			note_unwrapped(symbol, gpa, version, "not an exported function");
		} else if (!adopt((enum hook_id)id, q)) {
			note_unwrapped(symbol, gpa, version, "another libcuda's function");
			id = -1;
		}
	}
	if (id >= 0) {
		struct origin *o = &R.origin[id];
		if (!(o->got & GOT_GPA)) {
			o->got |= GOT_GPA;
			o->gpa = gpa;
			o->symbol = strdup(symbol);
			o->version = version;
			o->flags = flags;
		}
		*pfn = hook_pointers[id];
	}
	pthread_mutex_unlock(&R.lock);
	hook_guard = guard;
}

/* ---- the audit ---- */

static void
add_key(struct cut_buf *b, const char *key)
{
	buf_addjstr(b, key, strlen(key));
	buf_addc(b, ':');
}

void
hook_audit(struct cut_buf *b, const uint64_t (*calls)[HOOK_NVIA])
{
	pthread_mutex_lock(&R.lock);
	unsigned n_link = 0, n_dlsym = 0, n_gpa = 0, n_called = 0;
	for (int i = 0; i < HOOK_NAPI; i++) {
		n_link += calls[i][HOOK_VIA_LINK] > 0;
		n_dlsym += !!(R.origin[i].got & GOT_DLSYM);
		n_gpa += !!(R.origin[i].got & GOT_GPA);
		n_called += calls[i][HOOK_VIA_LINK] + calls[i][HOOK_VIA_POINTER] > 0;
	}
	buf_adds(b, "{\"cuda_h\":");
	buf_addi64(b, HOOK_CUDA_H_VERSION);
	buf_adds(b, ",\"wrapped\":");
	buf_addi64(b, HOOK_NAPI);
	buf_adds(b, ",\"obtained\":{\"link\":");
	buf_addi64(b, n_link);
	buf_adds(b, ",\"dlsym\":");
	buf_addi64(b, n_dlsym);
	buf_adds(b, ",\"cuGetProcAddress\":");
	buf_addi64(b, n_gpa);
	buf_adds(b, "},\"called\":");
	buf_addi64(b, n_called);
	/* One entry per function obtained or called, in name order. */
	buf_adds(b, ",\"functions\":[");
	bool first = true;
	for (int i = 0; i < HOOK_NAPI; i++) {
		const struct origin *o = &R.origin[i];
		uint64_t nl = calls[i][HOOK_VIA_LINK], np = calls[i][HOOK_VIA_POINTER];
		if (!o->got && !nl && !np)
			continue;
		if (!first)
			buf_addc(b, ',');
		first = false;
		buf_adds(b, "{\"name\":");
		buf_addjstr(b, hook_names[i], strlen(hook_names[i]));
		buf_adds(b, ",\"via\":[");
		const char *sep = "";
		if (nl) {
			buf_adds(b, "\"link\"");
			sep = ",";
		}
		if (o->got & GOT_DLSYM) {
			buf_adds(b, sep);
			buf_adds(b, "\"dlsym\"");
			sep = ",";
		}
		if (o->got & GOT_GPA) {
			buf_adds(b, sep);
			buf_addjstr(b, hook_names[o->gpa], strlen(hook_names[o->gpa]));
		}
		buf_addc(b, ']');
		if (o->got & GOT_GPA) {
			buf_addc(b, ',');
			add_key(b, "symbol");
			buf_addjstr(b, o->symbol ? o->symbol : "",
			            o->symbol ? strlen(o->symbol) : 0);
			buf_addc(b, ',');
			add_key(b, "version");
			buf_addi64(b, o->version);
			buf_addc(b, ',');
			add_key(b, "flags");
			buf_addi64(b, (int64_t)o->flags);
		}
		buf_adds(b, ",\"calls\":");
		buf_addi64(b, (int64_t)(nl + np));
		if (nl && np) {
			buf_adds(b, ",\"link_calls\":");
			buf_addi64(b, (int64_t)nl);
		}
		buf_addc(b, '}');
	}
	buf_adds(b, "],\"unwrapped\":");
	buf_addi64(b, R.unwrapped_total);
	if (R.nunwrapped) {
		buf_adds(b, ",\"unwrapped_symbols\":[");
		for (unsigned i = 0; i < R.nunwrapped; i++) {
			const struct unwrapped *u = &R.unwrapped[i];
			buf_adds(b, i ? ",{\"symbol\":" : "{\"symbol\":");
			buf_addjstr(b, u->symbol, strlen(u->symbol));
			buf_adds(b, ",\"via\":");
			buf_addjstr(b, hook_names[u->gpa], strlen(hook_names[u->gpa]));
			buf_adds(b, ",\"version\":");
			buf_addi64(b, u->version);
			buf_adds(b, ",\"why\":");
			buf_addjstr(b, u->why, strlen(u->why));
			buf_addc(b, '}');
		}
		buf_addc(b, ']');
	}
	buf_addc(b, '}');
	pthread_mutex_unlock(&R.lock);
}
