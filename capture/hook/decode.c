/* decode.c: a call's arguments as the args object of cut-events(5) (bytes, dir, dst, src,
 * dptr, ptr, value, func, kernel, grid, block, shmem, stream, event), and the table of handle
 * names that lets launches be named. */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "hook.h"

/* ---- handle names ---- */

/* Open addressing, never resized or freed: lookups on every launch take no lock. A slot's
 * name is published before its handle. */
#define NAMES_CAP (1u << 16)
struct name {
	const char *raw;  /* "" when the handle is known to have none */
	const char *json; /* raw as a quoted JSON string */
	size_t json_len;
};
struct name_slot {
	uint64_t handle;
	const struct name *name;
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

static const struct name no_name = {"", "\"\"", 2};

/* Name of handle h: NULL when never seen, raw "" when known to have none. */
static const struct name *
name_of(uint64_t h)
{
	struct name_slot *tab = __atomic_load_n(&names, __ATOMIC_ACQUIRE);
	if (!tab || !h)
		return NULL;
	for (unsigned i = slot_of(h), n = 0; n < NAMES_CAP; i = (i + 1) & (NAMES_CAP - 1), n++) {
		uint64_t k = __atomic_load_n(&tab[i].handle, __ATOMIC_ACQUIRE);
		if (k == h)
			return __atomic_load_n(&tab[i].name, __ATOMIC_ACQUIRE);
		if (!k)
			return NULL;
	}
	return NULL;
}

/* Names handle h (copies are kept). Returns the kept name, or NULL when out of room. */
static const struct name *
set_name(uint64_t h, const char *raw)
{
	if (!h || !raw)
		return NULL;
	const struct name *nm = &no_name;
	if (*raw) {
		struct name *m = malloc(sizeof(*m));
		struct cut_buf j = {0};
		buf_addjstr(&j, raw, strlen(raw));
		if (!m || !(m->raw = strdup(raw))) {
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
	const struct name *ret = NULL;
	if (tab) {
		for (unsigned i = slot_of(h), n = 0; n < NAMES_CAP;
		     i = (i + 1) & (NAMES_CAP - 1), n++) {
			if (tab[i].handle == h) {
				__atomic_store_n(&tab[i].name, nm, __ATOMIC_RELEASE);
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
	pthread_mutex_unlock(&names_lock);
	return ret;
}

void
hook_decode_fork(int phase)
{
	if (phase == 0)
		pthread_mutex_lock(&names_lock);
	else
		pthread_mutex_unlock(&names_lock);
}

/* ---- output helpers: direct writes into room made first (these run on every call) ---- */

/* Makes room for the separator, "key": and extra bytes, writes the first two and returns where
 * the value goes (NULL when memory ran out). */
static char *
put_key(struct cut_buf *b, const char *k, size_t n, size_t extra)
{
	char *p = buf_try_room(b, n + 4 + extra);
	if (!p)
		return NULL;
	*p++ = b->len ? ',' : '{';
	*p++ = '"';
	memcpy(p, k, n);
	p += n;
	*p++ = '"';
	*p++ = ':';
	return p;
}
#define KEY(b, k, extra) put_key(b, k, sizeof(k) - 1, extra)

#define ARG_INT(b, k, v)                                                                           \
	do {                                                                                       \
		char *p_ = KEY(b, k, 32);                                                          \
		if (p_)                                                                            \
			buf_commit(b, buf_put_i64(p_, (int64_t)(v)));                              \
	} while (0)
#define ARG_HEX(b, k, v)                                                                           \
	do {                                                                                       \
		char *p_ = KEY(b, k, 32);                                                          \
		if (p_)                                                                            \
			buf_commit(b, buf_put_hex(p_, (uint64_t)(v)));                             \
	} while (0)

/* An already escaped JSON string of n bytes. */
static void
arg_json(struct cut_buf *b, const char *k, size_t kn, const char *j, size_t n)
{
	char *p = put_key(b, k, kn, n);
	if (p) {
		memcpy(p, j, n);
		buf_commit(b, p + n);
	}
}
#define ARG_JSON(b, k, j, n) arg_json(b, k, sizeof(k) - 1, j, n)

/* Any string, escaped. */
static void
arg_str(struct cut_buf *b, const char *k, size_t kn, const char *s)
{
	char *p = put_key(b, k, kn, 0);
	if (p) {
		buf_commit(b, p);
		buf_addjstr(b, s, strlen(s));
	}
}

static void
arg_dim3(struct cut_buf *b, const char *k, size_t kn, uint64_t x, uint64_t y, uint64_t z)
{
	char *p = put_key(b, k, kn, 96);
	if (!p)
		return;
	*p++ = '[';
	p = buf_put_i64(p, (int64_t)x);
	*p++ = ',';
	p = buf_put_i64(p, (int64_t)y);
	*p++ = ',';
	p = buf_put_i64(p, (int64_t)z);
	*p++ = ']';
	buf_commit(b, p);
}

/* The value an output pointer received. */
#define OUT(a) (*(const uint64_t *)(uintptr_t)(a))
#define OUTSTR(a) (*(const char *const *)(uintptr_t)(a))

/* ---- decoders: one per argument layout, named after a function that has it ---- */

struct call {
	const uint64_t *a;
	bool ok;                 /* CUDA_SUCCESS */
	struct cut_buf *b;       /* the args object */
	struct hook_symbol *sym; /* a handle the call named */
	const char *name;        /* the function's name without _ptds/_ptsz */
	const char *dir;         /* "\"HtoD\"" for cuMemcpyHtoD..., from the name */
	uint64_t esize;          /* element size of a memset, from the name */
	bool stream;             /* the decoder wrote "stream" */
};
typedef void decoder(struct call *c);

static void
dec_alloc(struct call *c) /* (CUdeviceptr *dptr, size_t bytes, ...) */
{
	ARG_INT(c->b, "bytes", c->a[1]);
	if (c->ok && c->a[0])
		ARG_HEX(c->b, "dptr", OUT(c->a[0]));
}

static void
dec_alloc_pitch(struct call *c) /* (dptr *, size_t *pitch, width, height, elemsize) */
{
	uint64_t pitch = c->ok && c->a[1] ? OUT(c->a[1]) : c->a[2];
	ARG_INT(c->b, "bytes", pitch * c->a[3]);
	if (c->ok && c->a[0])
		ARG_HEX(c->b, "dptr", OUT(c->a[0]));
}

static void
dec_alloc_host(struct call *c) /* (void **pp, size_t bytes, ...) */
{
	ARG_INT(c->b, "bytes", c->a[1]);
	if (c->ok && c->a[0])
		ARG_HEX(c->b, "ptr", OUT(c->a[0]));
}

static void
dec_free(struct call *c) /* (CUdeviceptr dptr, ...) */
{
	ARG_HEX(c->b, "dptr", c->a[0]);
}

static void
dec_free_host(struct call *c) /* (void *p) */
{
	ARG_HEX(c->b, "ptr", c->a[0]);
}

static void
dec_host_register(struct call *c) /* (void *p, size_t bytes, ...) */
{
	ARG_INT(c->b, "bytes", c->a[1]);
	ARG_HEX(c->b, "ptr", c->a[0]);
}

static void
dec_host_devptr(struct call *c) /* (CUdeviceptr *dptr, void *p, flags) */
{
	if (c->ok && c->a[0])
		ARG_HEX(c->b, "dptr", OUT(c->a[0]));
	ARG_HEX(c->b, "ptr", c->a[1]);
}

static void
dec_range(struct call *c) /* (CUdeviceptr dptr, size_t bytes, ...) */
{
	ARG_INT(c->b, "bytes", c->a[1]);
	ARG_HEX(c->b, "dptr", c->a[0]);
}

static void
dec_create(struct call *c) /* (handle *, size_t bytes, ...) */
{
	ARG_INT(c->b, "bytes", c->a[1]);
}

static void
xfer(struct call *c, uint64_t bytes, const char *dir, uint64_t dst, uint64_t src)
{
	ARG_INT(c->b, "bytes", bytes);
	ARG_JSON(c->b, "dir", dir, strlen(dir));
	ARG_HEX(c->b, "dst", dst);
	ARG_HEX(c->b, "src", src);
}

/* The direction from the name: cuMemcpyHtoD..., arrays count as device memory. */
static const char *
dir_of(const char *name)
{
	const char *d = strstr(name, "to");
	if (!d || d == name || strncmp(name, "cuMemcpy", 8) != 0)
		return "\"any\"";
	bool from_host = d[-1] == 'H', to_host = d[2] == 'H';
	return from_host ? (to_host ? "\"HtoH\"" : "\"HtoD\"")
	                 : (to_host ? "\"DtoH\"" : "\"DtoD\"");
}

static void
dec_copy(struct call *c) /* (dst, src, size_t bytes, ...): HtoD, DtoH, DtoD */
{
	xfer(c, c->a[2], c->dir, c->a[0], c->a[1]);
}

static void
dec_memcpy(struct call *c) /* (dst, src, bytes, ...): unified addressing decides */
{
	xfer(c, c->a[2], "\"any\"", c->a[0], c->a[1]);
}

static void
dec_peer(struct call *c) /* (dst, dstctx, src, srcctx, bytes, ...) */
{
	xfer(c, c->a[4], "\"DtoD\"", c->a[0], c->a[2]);
}

static void
dec_to_array(struct call *c) /* (CUarray dst, size_t off, src, bytes, ...): HtoA, DtoA */
{
	xfer(c, c->a[3], c->dir, c->a[0], c->a[2]);
}

static void
dec_from_array(struct call *c) /* (dst, CUarray src, size_t off, bytes, ...): AtoH, AtoD */
{
	xfer(c, c->a[3], c->dir, c->a[0], c->a[1]);
}

static void
dec_array_array(struct call *c) /* (CUarray dst, off, CUarray src, off, bytes) */
{
	xfer(c, c->a[4], "\"DtoD\"", c->a[0], c->a[2]);
}

static bool
on_host(int type)
{
	return type == HOOK_MEMORYTYPE_HOST;
}

static const char *
dir_of_types(int src, int dst)
{
	if (src == HOOK_MEMORYTYPE_UNIFIED || dst == HOOK_MEMORYTYPE_UNIFIED)
		return "\"any\"";
	return on_host(src) ? (on_host(dst) ? "\"HtoH\"" : "\"HtoD\"")
	                    : (on_host(dst) ? "\"DtoH\"" : "\"DtoD\"");
}

static uint64_t
address(int type, const void *host, uint64_t dev, const void *array)
{
	return type == HOOK_MEMORYTYPE_HOST    ? (uint64_t)(uintptr_t)host
	       : type == HOOK_MEMORYTYPE_ARRAY ? (uint64_t)(uintptr_t)array
	                                       : dev;
}

static void
dec_copy2d(struct call *c) /* (const CUDA_MEMCPY2D *, ...) */
{
	const struct hook_memcpy2d *p = (const void *)(uintptr_t)c->a[0];
	if (!p)
		return;
	xfer(c, (uint64_t)p->WidthInBytes * p->Height,
	     dir_of_types(p->srcMemoryType, p->dstMemoryType),
	     address(p->dstMemoryType, p->dstHost, p->dstDevice, p->dstArray),
	     address(p->srcMemoryType, p->srcHost, p->srcDevice, p->srcArray));
}

static void
dec_copy3d(struct call *c) /* (const CUDA_MEMCPY3D *, ...) */
{
	const struct hook_memcpy3d *p = (const void *)(uintptr_t)c->a[0];
	if (!p)
		return;
	xfer(c, (uint64_t)p->WidthInBytes * p->Height * p->Depth,
	     dir_of_types(p->srcMemoryType, p->dstMemoryType),
	     address(p->dstMemoryType, p->dstHost, p->dstDevice, p->dstArray),
	     address(p->srcMemoryType, p->srcHost, p->srcDevice, p->srcArray));
}

/* Element size of a memset from its name: cuMemsetD8, D16, D32, D2D8... */
static uint64_t
elem_size(const char *name)
{
	const char *d = strstr(name, "D2D");
	d = d ? d + 3 : name + strlen("cuMemsetD");
	return d[0] == '8' ? 1 : d[0] == '1' ? 2 : 4;
}

static void
dec_memset(struct call *c) /* (CUdeviceptr dst, value, size_t n, ...) */
{
	ARG_INT(c->b, "bytes", c->a[2] * c->esize);
	ARG_HEX(c->b, "dst", c->a[0]);
	ARG_INT(c->b, "value", c->a[1]);
}

static void
dec_memset2d(struct call *c) /* (dst, size_t pitch, value, size_t width, size_t height, ...) */
{
	ARG_INT(c->b, "bytes", c->a[3] * c->a[4] * c->esize);
	ARG_HEX(c->b, "dst", c->a[0]);
	ARG_INT(c->b, "value", c->a[2]);
}

/* The kernel name of a function handle; asks the driver (cuFuncGetName, then cuKernelGetName
 * for a CUkernel passed as a function) once for a handle no call has named. */
static const struct name *
kernel_name(struct call *c, uint64_t f)
{
	const struct name *n = name_of(f);
	if (n)
		return *n->raw ? n : NULL;
	if (!c->ok)
		return NULL; /* only a handle the driver accepted is worth asking about */
	static const enum hook_id askers[] = {HOOK_ID_cuFuncGetName, HOOK_ID_cuKernelGetName};
	for (size_t i = 0; i < sizeof(askers) / sizeof(askers[0]); i++) {
		CUresult (*ask)(const char **, void *) =
		    (CUresult(*)(const char **, void *))hook_real_slow(askers[i]);
		const char *s = NULL;
		if (ask && ask(&s, (void *)(uintptr_t)f) == HOOK_CUDA_SUCCESS && s && *s) {
			n = set_name(f, s);
			if (n)
				*c->sym = (struct hook_symbol){f, n->raw, i ? "kernel" : "function",
				                               hook_names[askers[i]]};
			return n;
		}
	}
	set_name(f, "");
	return NULL;
}

static void
launch(struct call *c, uint64_t f, const uint64_t g[3], const uint64_t bl[3], uint64_t shmem)
{
	ARG_HEX(c->b, "func", f);
	const struct name *n = kernel_name(c, f);
	if (n)
		ARG_JSON(c->b, "kernel", n->json, n->json_len);
	arg_dim3(c->b, "grid", 4, g[0], g[1], g[2]);
	arg_dim3(c->b, "block", 5, bl[0], bl[1], bl[2]);
	ARG_INT(c->b, "shmem", shmem);
}

static void
dec_launch(struct call *c) /* (f, gx, gy, gz, bx, by, bz, shmem, stream, ...) */
{
	launch(c, c->a[0], c->a + 1, c->a + 4, c->a[7]);
}

static void
dec_launch_ex(struct call *c) /* (const CUlaunchConfig *, CUfunction, ...) */
{
	const struct hook_launch_config *cf = (const void *)(uintptr_t)c->a[0];
	if (!cf) {
		ARG_HEX(c->b, "func", c->a[1]);
		return;
	}
	uint64_t g[3] = {cf->gridDimX, cf->gridDimY, cf->gridDimZ};
	uint64_t bl[3] = {cf->blockDimX, cf->blockDimY, cf->blockDimZ};
	launch(c, c->a[1], g, bl, cf->sharedMemBytes);
	ARG_HEX(c->b, "stream", (uint64_t)(uintptr_t)cf->hStream);
	c->stream = true;
}

static void
name_handle(struct call *c, uint64_t h, const char *name, const char *kind)
{
	const struct name *n = set_name(h, name);
	if (n)
		*c->sym = (struct hook_symbol){h, n->raw, kind, c->name};
}

static void
dec_get_function(struct call *c) /* (CUfunction *, CUmodule, const char *name) */
{
	if (c->ok && c->a[0] && c->a[2])
		name_handle(c, OUT(c->a[0]), (const char *)(uintptr_t)c->a[2], "function");
}

static void
dec_get_kernel(struct call *c) /* (CUkernel *, CUlibrary, const char *name) */
{
	if (c->ok && c->a[0] && c->a[2])
		name_handle(c, OUT(c->a[0]), (const char *)(uintptr_t)c->a[2], "kernel");
}

static void
dec_kernel_function(struct call *c) /* (CUfunction *, CUkernel) */
{
	const struct name *n = c->ok && c->a[0] ? name_of(c->a[1]) : NULL;
	if (n && *n->raw)
		name_handle(c, OUT(c->a[0]), n->raw, "function");
}

static void
dec_get_name(struct call *c) /* (const char **name, CUfunction or CUkernel) */
{
	if (c->ok && c->a[0] && OUTSTR(c->a[0]))
		name_handle(c, c->a[1], OUTSTR(c->a[0]),
		            strcmp(c->name, "cuKernelGetName") == 0 ? "kernel" : "function");
}

static void
dec_load_file(struct call *c) /* (CUmodule * or CUlibrary *, const char *path, ...) */
{
	if (c->ok && c->a[0] && c->a[1])
		name_handle(c, OUT(c->a[0]), (const char *)(uintptr_t)c->a[1],
		            strncmp(c->name, "cuLibrary", 9) == 0 ? "library" : "module");
}

static void
dec_gpa(struct call *c) /* (const char *symbol, void **pfn, int version, flags, ...) */
{
	if (c->a[0])
		arg_str(c->b, "symbol", 6, (const char *)(uintptr_t)c->a[0]);
	ARG_INT(c->b, "version", (uint64_t)(int64_t)(int)c->a[2]);
	ARG_INT(c->b, "flags", c->a[3]);
}

/* Exact names (with their _ptds/_ptsz twins): older versions with other layouts are left out. */
static const struct {
	const char *name;
	decoder *fn;
} table[] = {
    {"cuMemAlloc_v2", dec_alloc},
    {"cuMemAllocAsync", dec_alloc},
    {"cuMemAllocFromPoolAsync", dec_alloc},
    {"cuMemAllocManaged", dec_alloc},
    {"cuMemAllocPitch_v2", dec_alloc_pitch},
    {"cuMemAllocHost_v2", dec_alloc_host},
    {"cuMemHostAlloc", dec_alloc_host},
    {"cuMemFree_v2", dec_free},
    {"cuMemFreeAsync", dec_free},
    {"cuMemFreeHost", dec_free_host},
    {"cuMemHostRegister_v2", dec_host_register},
    {"cuMemHostUnregister", dec_free_host},
    {"cuMemHostGetDevicePointer_v2", dec_host_devptr},
    {"cuMemAddressReserve", dec_alloc},
    {"cuMemAddressFree", dec_range},
    {"cuMemMap", dec_range},
    {"cuMemUnmap", dec_range},
    {"cuMemSetAccess", dec_range},
    {"cuMemCreate", dec_create},
    {"cuMemPrefetchAsync", dec_range},
    {"cuMemPrefetchAsync_v2", dec_range},
    {"cuMemAdvise", dec_range},
    {"cuMemAdvise_v2", dec_range},
    {"cuMemcpy", dec_memcpy},
    {"cuMemcpyAsync", dec_memcpy},
    {"cuMemcpyPeer", dec_peer},
    {"cuMemcpyPeerAsync", dec_peer},
    {"cuMemcpyHtoD_v2", dec_copy},
    {"cuMemcpyHtoDAsync_v2", dec_copy},
    {"cuMemcpyDtoH_v2", dec_copy},
    {"cuMemcpyDtoHAsync_v2", dec_copy},
    {"cuMemcpyDtoD_v2", dec_copy},
    {"cuMemcpyDtoDAsync_v2", dec_copy},
    {"cuMemcpyHtoA_v2", dec_to_array},
    {"cuMemcpyHtoAAsync_v2", dec_to_array},
    {"cuMemcpyDtoA_v2", dec_to_array},
    {"cuMemcpyAtoH_v2", dec_from_array},
    {"cuMemcpyAtoHAsync_v2", dec_from_array},
    {"cuMemcpyAtoD_v2", dec_from_array},
    {"cuMemcpyAtoA_v2", dec_array_array},
    {"cuMemcpy2D_v2", dec_copy2d},
    {"cuMemcpy2DUnaligned_v2", dec_copy2d},
    {"cuMemcpy2DAsync_v2", dec_copy2d},
    {"cuMemcpy3D_v2", dec_copy3d},
    {"cuMemcpy3DAsync_v2", dec_copy3d},
    {"cuMemsetD8_v2", dec_memset},
    {"cuMemsetD16_v2", dec_memset},
    {"cuMemsetD32_v2", dec_memset},
    {"cuMemsetD8Async", dec_memset},
    {"cuMemsetD16Async", dec_memset},
    {"cuMemsetD32Async", dec_memset},
    {"cuMemsetD2D8_v2", dec_memset2d},
    {"cuMemsetD2D16_v2", dec_memset2d},
    {"cuMemsetD2D32_v2", dec_memset2d},
    {"cuMemsetD2D8Async", dec_memset2d},
    {"cuMemsetD2D16Async", dec_memset2d},
    {"cuMemsetD2D32Async", dec_memset2d},
    {"cuLaunchKernel", dec_launch},
    {"cuLaunchCooperativeKernel", dec_launch},
    {"cuLaunchKernelEx", dec_launch_ex},
    {"cuModuleGetFunction", dec_get_function},
    {"cuLibraryGetKernel", dec_get_kernel},
    {"cuKernelGetFunction", dec_kernel_function},
    {"cuFuncGetName", dec_get_name},
    {"cuKernelGetName", dec_get_name},
    {"cuModuleLoad", dec_load_file},
    {"cuLibraryLoadFromFile", dec_load_file},
    {"cuGetProcAddress", dec_gpa},
    {"cuGetProcAddress_v2", dec_gpa},
};

static decoder *decoders[HOOK_NAPI];
unsigned char hook_decodes[HOOK_NAPI];
static const char *bare[HOOK_NAPI]; /* names without _ptds/_ptsz */
static const char *dirs[HOOK_NAPI];
static unsigned char esizes[HOOK_NAPI];

void
hook_decode_init(void)
{
	for (int i = 0; i < HOOK_NAPI; i++) {
		const char *name = hook_names[i];
		size_t n = strlen(name);
		bare[i] = name;
		if (n > 5 &&
		    (strcmp(name + n - 5, "_ptds") == 0 || strcmp(name + n - 5, "_ptsz") == 0)) {
			char *s = strndup(name, n - 5);
			if (s)
				bare[i] = s;
		}
		for (size_t j = 0; j < sizeof(table) / sizeof(table[0]); j++)
			if (strcmp(bare[i], table[j].name) == 0)
				decoders[i] = table[j].fn;
		hook_decodes[i] = decoders[i] || strpbrk(hook_roles[i], "SsEe");
		dirs[i] = dir_of(bare[i]);
		esizes[i] = (unsigned char)elem_size(bare[i]);
	}
}

void
hook_decode(enum hook_id id, CUresult r, const uint64_t *a, struct cut_buf *b,
            struct hook_symbol *sym)
{
	struct call c = {.a = a,
	                 .ok = r == HOOK_CUDA_SUCCESS,
	                 .b = b,
	                 .sym = sym,
	                 .name = bare[id] ? bare[id] : hook_names[id],
	                 .dir = dirs[id],
	                 .esize = esizes[id]};
	if (decoders[id])
		decoders[id](&c);
	/* Streams and events wherever a parameter has that type (the first of each). */
	const char *roles = hook_roles[id];
	const char *st = c.stream ? NULL : strpbrk(roles, "Ss"), *ev = strpbrk(roles, "Ee");
	if (st && *st == 'S')
		ARG_HEX(b, "stream", a[st - roles]);
	else if (st && c.ok && a[st - roles])
		ARG_HEX(b, "stream", OUT(a[st - roles]));
	if (ev && *ev == 'E')
		ARG_HEX(b, "event", a[ev - roles]);
	else if (ev && c.ok && a[ev - roles])
		ARG_HEX(b, "event", OUT(a[ev - roles]));
	if (b->len)
		buf_addc(b, '}');
}
