/* record.c: cutcapture's records turned into cut events: driver API arguments, handle
 * names (symbol records), threads, devices and ioctl names, and the reorder buffer that
 * writes them sorted by ts. */
#include <err.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "buf.h"
#include "classify.h"
#include "cut.h"
#include "event.h"
#include "ioctl.h"
#include "record.h"

/* ---- driver API decoders ---- */

/* One decoded argument: key, argument index, format:
 *  d size or count (64-bit)   i int   u unsigned int   x pointer or handle (hex)
 *  o out value, hex           O out value, int (both only when the call succeeded)
 *  s the string read          k name of the handle in argument idx, when known
 *  g three unsigned ints from idx (grid, block)       b count in idx times elem (memsets)
 *  G three unsigned ints, U one, from the 32-bit slots of the words after the registers
 *    (the CUlaunchConfig of cuLaunchKernelEx) */
struct api_field {
	const char *key;
	signed char idx;
	char fmt;
};

struct api_decoder {
	const char *name;
	const char *dir;         /* copies: HtoD, DtoH, DtoD or any */
	const char *sym;         /* the call names a handle: its kind */
	unsigned char out;       /* 1 + argument whose target is read at return */
	unsigned char str;       /* 1 + argument holding the string */
	unsigned char strmode;   /* CC_STR_* */
	unsigned char extra;     /* CC_EXTRA_* */
	unsigned char elem;      /* memsets: bytes per element */
	unsigned char symhandle; /* 1 + argument holding the named handle; 0: the out value */
	unsigned char symfrom;   /* 1 + argument holding a handle whose name it takes; 0: str */
	struct api_field f[7];
};

/* One entry a line reads better than what clang-format makes of the table. */
/* clang-format off */
#define A(i) ((i) + 1)
#define ALLOC(n, b, o, ...) {.name = n, .out = A(o), .f = {{"bytes", b, 'd'}, __VA_ARGS__}}
#define COPY(n, d, ...) {.name = n, .dir = d, .f = {{"bytes", 2, 'd'}, {"dir", 0, 'D'}, \
	{"dst", 0, 'x'}, {"src", 1, 'x'}, __VA_ARGS__}}
#define COPYA(n, d) COPY(n, d, {"stream", 3, 'x'})
#define SET(n, e) {.name = n, .elem = e, .f = {{"bytes", 2, 'b'}, {"dst", 0, 'x'}, {"value", 1, 'u'}}}
#define SETA(n, e) {.name = n, .elem = e, .f = {{"bytes", 2, 'b'}, {"dst", 0, 'x'}, {"value", 1, 'u'}, \
	{"stream", 3, 'x'}}}
#define LAUNCH(n) {.name = n, .extra = CC_EXTRA_STACK, .f = {{"func", 0, 'x'}, {"kernel", 0, 'k'}, \
	{"grid", 1, 'g'}, {"block", 4, 'g'}, {"shmem", 7, 'u'}, {"stream", 8, 'x'}}}
#define ONE(n, k, fmt) {.name = n, .f = {{k, 0, fmt}}}
#define OUT1(n, k) {.name = n, .out = A(0), .f = {{k, 0, 'o'}}}

/* Sorted by name (strcmp). The _ptsz/_ptds variants use their base's entry. */
static const struct api_decoder decoders[] = {
	ONE("cuCtxPopCurrent_v2", "ctx", 'o'),
	ONE("cuCtxPushCurrent_v2", "ctx", 'x'),
	ONE("cuCtxSetCurrent", "ctx", 'x'),
	{.name = "cuDeviceGet", .out = A(0), .f = {{"ordinal", 1, 'i'}, {"device", 0, 'O'}}},
	{.name = "cuDeviceGetAttribute", .out = A(0),
	 .f = {{"attr", 1, 'i'}, {"dev", 2, 'i'}, {"value", 0, 'O'}}},
	ONE("cuDevicePrimaryCtxRelease_v2", "dev", 'i'),
	ONE("cuDevicePrimaryCtxReset_v2", "dev", 'i'),
	{.name = "cuDevicePrimaryCtxRetain", .out = A(0), .f = {{"dev", 1, 'i'}, {"ctx", 0, 'o'}}},
	{.name = "cuDriverGetVersion", .out = A(0), .f = {{"version", 0, 'O'}}},
	{.name = "cuEventCreate", .out = A(0), .f = {{"event", 0, 'o'}, {"flags", 1, 'u'}}},
	ONE("cuEventDestroy_v2", "event", 'x'),
	{.name = "cuEventElapsedTime", .f = {{"event", 1, 'x'}, {"end", 2, 'x'}}},
	{.name = "cuEventElapsedTime_v2", .f = {{"event", 1, 'x'}, {"end", 2, 'x'}}},
	ONE("cuEventQuery", "event", 'x'),
	{.name = "cuEventRecord", .f = {{"stream", 1, 'x'}, {"event", 0, 'x'}}},
	{.name = "cuEventRecordWithFlags", .f = {{"stream", 1, 'x'}, {"event", 0, 'x'}}},
	ONE("cuEventSynchronize", "event", 'x'),
	{.name = "cuFuncGetAttribute", .f = {{"func", 2, 'x'}, {"kernel", 2, 'k'}, {"attr", 1, 'i'}}},
	{.name = "cuFuncGetName", .str = A(0), .strmode = CC_STR_OUT, .sym = "function",
	 .symhandle = A(1), .f = {{"func", 1, 'x'}, {"name", 0, 's'}}},
	{.name = "cuFuncSetAttribute", .f = {{"func", 0, 'x'}, {"kernel", 0, 'k'}, {"attr", 1, 'i'}}},
	{.name = "cuGetProcAddress", .out = A(1), .str = A(0), .strmode = CC_STR_ARG,
	 .f = {{"symbol", 0, 's'}, {"version", 2, 'i'}, {"fn", 1, 'o'}}},
	{.name = "cuGetProcAddress_v2", .out = A(1), .str = A(0), .strmode = CC_STR_ARG,
	 .f = {{"symbol", 0, 's'}, {"version", 2, 'i'}, {"fn", 1, 'o'}}},
	{.name = "cuGraphLaunch", .f = {{"graph", 0, 'x'}, {"stream", 1, 'x'}}},
	{.name = "cuKernelGetFunction", .out = A(0), .sym = "function", .symfrom = A(1),
	 .f = {{"func", 0, 'o'}, {"kernel", 1, 'k'}, {"handle", 1, 'x'}}},
	{.name = "cuKernelGetName", .str = A(0), .strmode = CC_STR_OUT, .sym = "kernel",
	 .symhandle = A(1), .f = {{"handle", 1, 'x'}, {"name", 0, 's'}}},
	LAUNCH("cuLaunchCooperativeKernel"),
	{.name = "cuLaunchHostFunc", .f = {{"stream", 0, 'x'}, {"fn", 1, 'x'}}},
	LAUNCH("cuLaunchKernel"),
	{.name = "cuLaunchKernelEx", .extra = CC_EXTRA_ARG0,
	 .f = {{"func", 1, 'x'}, {"kernel", 1, 'k'}, {"grid", 0, 'G'}, {"block", 3, 'G'},
	       {"shmem", 6, 'U'}, {"stream", 10, 'x'}}},
	{.name = "cuLibraryGetKernel", .out = A(0), .str = A(2), .strmode = CC_STR_ARG, .sym = "kernel",
	 .f = {{"kernel", 0, 'o'}, {"library", 1, 'x'}, {"name", 2, 's'}}},
	{.name = "cuLibraryGetModule", .out = A(0), .f = {{"module", 0, 'o'}, {"library", 1, 'x'}}},
	OUT1("cuLibraryLoadData", "library"),
	{.name = "cuLibraryLoadFromFile", .out = A(0), .str = A(1), .strmode = CC_STR_ARG,
	 .sym = "library", .f = {{"library", 0, 'o'}, {"file", 1, 's'}}},
	ONE("cuLibraryUnload", "library", 'x'),
	{.name = "cuMemAddressFree", .f = {{"bytes", 1, 'd'}, {"dptr", 0, 'x'}}},
	ALLOC("cuMemAddressReserve", 1, 0, {"dptr", 0, 'o'}),
	ALLOC("cuMemAlloc", 1, 0, {"dptr", 0, 'o'}),
	ALLOC("cuMemAllocAsync", 1, 0, {"dptr", 0, 'o'}, {"stream", 2, 'x'}),
	ALLOC("cuMemAllocFromPoolAsync", 1, 0, {"dptr", 0, 'o'}, {"stream", 3, 'x'}),
	ALLOC("cuMemAllocHost", 1, 0, {"ptr", 0, 'o'}),
	ALLOC("cuMemAllocHost_v2", 1, 0, {"ptr", 0, 'o'}),
	ALLOC("cuMemAllocManaged", 1, 0, {"dptr", 0, 'o'}),
	OUT1("cuMemAllocPitch_v2", "dptr"),
	ALLOC("cuMemAlloc_v2", 1, 0, {"dptr", 0, 'o'}),
	ALLOC("cuMemCreate", 1, 0, {"handle", 0, 'o'}),
	ONE("cuMemFree", "dptr", 'x'),
	{.name = "cuMemFreeAsync", .f = {{"dptr", 0, 'x'}, {"stream", 1, 'x'}}},
	ONE("cuMemFreeHost", "ptr", 'x'),
	ONE("cuMemFree_v2", "dptr", 'x'),
	ALLOC("cuMemHostAlloc", 1, 0, {"ptr", 0, 'o'}),
	{.name = "cuMemHostRegister", .f = {{"bytes", 1, 'd'}, {"ptr", 0, 'x'}}},
	{.name = "cuMemHostRegister_v2", .f = {{"bytes", 1, 'd'}, {"ptr", 0, 'x'}}},
	ONE("cuMemHostUnregister", "ptr", 'x'),
	{.name = "cuMemMap", .f = {{"bytes", 1, 'd'}, {"dptr", 0, 'x'}}},
	ONE("cuMemRelease", "handle", 'x'),
	{.name = "cuMemUnmap", .f = {{"bytes", 1, 'd'}, {"dptr", 0, 'x'}}},
	COPY("cuMemcpy", "any"),
	ONE("cuMemcpy2DAsync_v2", "stream", 'x'),
	ONE("cuMemcpy3DAsync_v2", "stream", 'x'),
	COPYA("cuMemcpyAsync", "any"),
	COPY("cuMemcpyDtoD", "DtoD"),
	COPYA("cuMemcpyDtoDAsync", "DtoD"),
	COPYA("cuMemcpyDtoDAsync_v2", "DtoD"),
	COPY("cuMemcpyDtoD_v2", "DtoD"),
	COPY("cuMemcpyDtoH", "DtoH"),
	COPYA("cuMemcpyDtoHAsync", "DtoH"),
	COPYA("cuMemcpyDtoHAsync_v2", "DtoH"),
	COPY("cuMemcpyDtoH_v2", "DtoH"),
	COPY("cuMemcpyHtoD", "HtoD"),
	COPYA("cuMemcpyHtoDAsync", "HtoD"),
	COPYA("cuMemcpyHtoDAsync_v2", "HtoD"),
	COPY("cuMemcpyHtoD_v2", "HtoD"),
	{.name = "cuMemcpyPeer", .dir = "DtoD",
	 .f = {{"bytes", 4, 'd'}, {"dir", 0, 'D'}, {"dst", 0, 'x'}, {"src", 2, 'x'}}},
	{.name = "cuMemcpyPeerAsync", .dir = "DtoD",
	 .f = {{"bytes", 4, 'd'}, {"dir", 0, 'D'}, {"dst", 0, 'x'}, {"src", 2, 'x'},
	       {"stream", 5, 'x'}}},
	SET("cuMemsetD16", 2),
	SETA("cuMemsetD16Async", 2),
	SET("cuMemsetD16_v2", 2),
	SET("cuMemsetD32", 4),
	SETA("cuMemsetD32Async", 4),
	SET("cuMemsetD32_v2", 4),
	SET("cuMemsetD8", 1),
	SETA("cuMemsetD8Async", 1),
	SET("cuMemsetD8_v2", 1),
	{.name = "cuModuleGetFunction", .out = A(0), .str = A(2), .strmode = CC_STR_ARG,
	 .sym = "function", .f = {{"func", 0, 'o'}, {"module", 1, 'x'}, {"name", 2, 's'}}},
	{.name = "cuModuleLoad", .out = A(0), .str = A(1), .strmode = CC_STR_ARG, .sym = "module",
	 .f = {{"module", 0, 'o'}, {"file", 1, 's'}}},
	OUT1("cuModuleLoadData", "module"),
	OUT1("cuModuleLoadDataEx", "module"),
	OUT1("cuModuleLoadFatBinary", "module"),
	ONE("cuModuleUnload", "module", 'x'),
	{.name = "cuOccupancyMaxActiveClusters", .f = {{"func", 1, 'x'}, {"kernel", 1, 'k'}}},
	ONE("cuStreamBeginCapture_v2", "stream", 'x'),
	OUT1("cuStreamCreate", "stream"),
	{.name = "cuStreamCreateWithPriority", .out = A(0),
	 .f = {{"stream", 0, 'o'}, {"priority", 2, 'i'}}},
	ONE("cuStreamDestroy_v2", "stream", 'x'),
	ONE("cuStreamEndCapture", "stream", 'x'),
	ONE("cuStreamIsCapturing", "stream", 'x'),
	ONE("cuStreamQuery", "stream", 'x'),
	ONE("cuStreamSynchronize", "stream", 'x'),
	{.name = "cuStreamWaitEvent", .f = {{"stream", 0, 'x'}, {"event", 1, 'x'}}},
};
/* clang-format on */

static int
decoder_cmp(const void *key, const void *elem)
{
	return strcmp(key, ((const struct api_decoder *)elem)->name);
}

/* The decoder of a function, looking through the per-thread-stream suffixes. */
static const struct api_decoder *
decoder_find(const char *name)
{
	char base[128];
	size_t n = strlen(name);
	if (n >= sizeof(base))
		return NULL;
	memcpy(base, name, n + 1);
	if (n > 5 && (strcmp(base + n - 5, "_ptsz") == 0 || strcmp(base + n - 5, "_ptds") == 0))
		base[n - 5] = 0;
	return bsearch(base, decoders, sizeof(decoders) / sizeof(decoders[0]), sizeof(decoders[0]),
	               decoder_cmp);
}

struct cc_fdesc
rec_fdesc(const char *name)
{
	struct cc_fdesc d = {0};
	const struct api_decoder *dec = decoder_find(name);
	if (!dec)
		return d;
	d.out = dec->out;
	d.str = dec->str;
	d.strmode = dec->strmode;
	d.extra = dec->extra;
	d.nextra = dec->extra ? CC_NEXTRA : 0;
	return d;
}

/* ---- small tables ---- */

/* Open-addressing map from a pair of integers to a string (and a flag). */
struct entry {
	uint64_t a, b;
	char *s;
	uint32_t aux; /* threads: pid */
	bool used, flag;
};

struct table {
	struct entry *e;
	size_t cap, n;
};

static uint64_t
mix(uint64_t a, uint64_t b)
{
	uint64_t h = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull + (a << 6) + (a >> 2));
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 32);
}

static struct entry *table_put(struct table *t, uint64_t a, uint64_t b);

static struct entry *
table_get(const struct table *t, uint64_t a, uint64_t b)
{
	if (!t->cap)
		return NULL;
	for (size_t i = mix(a, b) & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
		struct entry *e = &t->e[i];
		if (!e->used)
			return NULL;
		if (e->a == a && e->b == b)
			return e;
	}
}

static void
table_grow(struct table *t)
{
	struct table old = *t;
	t->cap = old.cap ? old.cap * 2 : 256;
	t->n = 0;
	t->e = calloc(t->cap, sizeof(*t->e));
	if (!t->e)
		err(CUT_EXIT_FATAL, "calloc");
	for (size_t i = 0; i < old.cap; i++) {
		if (!old.e[i].used)
			continue;
		struct entry *e = table_put(t, old.e[i].a, old.e[i].b);
		*e = old.e[i];
	}
	free(old.e);
}

/* The entry for (a, b), created empty when missing. */
static struct entry *
table_put(struct table *t, uint64_t a, uint64_t b)
{
	if ((t->n + 1) * 2 > t->cap)
		table_grow(t);
	for (size_t i = mix(a, b) & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
		struct entry *e = &t->e[i];
		if (!e->used) {
			memset(e, 0, sizeof(*e));
			e->used = true;
			e->a = a;
			e->b = b;
			t->n++;
			return e;
		}
		if (e->a == a && e->b == b)
			return e;
	}
}

static void
table_free(struct table *t)
{
	for (size_t i = 0; i < t->cap; i++)
		if (t->e[i].used)
			free(t->e[i].s);
	free(t->e);
	memset(t, 0, sizeof(*t));
}

static void
set_str(char **dst, const char *s)
{
	free(*dst);
	*dst = strdup(s);
	if (!*dst)
		err(CUT_EXIT_FATAL, "strdup");
}

/* ---- state ---- */

enum { EV_LOST = 100, EV_PROC }; /* queued by the loader, not the BPF side */

struct lost_rec {
	struct cc_hdr h;
	uint64_t count;
	const char *layer;
	const char *reason;
};

struct pend {
	uint64_t ts, seq;
	struct cc_hdr *rec;
};

/* An off-CPU period already written up to upto. */
struct split {
	uint32_t tid;
	uint64_t off_ts, upto;
};

/* The output: whole lines written in large pieces. The first failed write stops it for good
 * (no gap in the middle of a trace); good is the end of the last whole line the file took,
 * where a regular file is cut back to. */
#define OUT_PIECE (1 << 20)
static struct {
	int fd;
	char *buf;
	size_t len;
	int error;     /* errno of the first failed write, 0 while none */
	int64_t base;  /* offset of the first byte in the file; -1 when not seekable */
	uint64_t sent; /* bytes the file took */
	uint64_t good; /* of which up to the end of the last whole line */
} W = {.fd = -1};

static void
out_flush(void)
{
	size_t off = 0;
	while (off < W.len && !W.error) {
		ssize_t n = write(W.fd, W.buf + off, W.len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			W.error = n < 0 ? errno : EIO;
			break;
		}
		off += (size_t)n;
	}
	W.sent += off;
	/* Lines are whole in the buffer: the last newline the file took ends a whole line. */
	for (size_t i = off; i > 0; i--)
		if (W.buf[i - 1] == '\n') {
			W.good = W.sent - off + i;
			break;
		}
	W.len = 0;
}

static void
out_add(const char *s, size_t n)
{
	if (W.error)
		return;
	if (W.len + n > OUT_PIECE)
		out_flush();
	if (n > OUT_PIECE) { /* never: records are far smaller */
		W.len = 0;
		while (n && !W.error) {
			size_t k = n < OUT_PIECE ? n : OUT_PIECE;
			memcpy(W.buf, s, k);
			W.len = k;
			out_flush();
			s += k;
			n -= k;
		}
		return;
	}
	memcpy(W.buf + W.len, s, n);
	W.len += n;
}

static struct {
	const char *const *funcs;
	size_t nfuncs;
	const struct api_decoder **dec; /* by cookie */
	const char **cat;               /* category, by cookie */
	const char *const *kfuncs;
	size_t nkfuncs;
	struct pend *heap;
	size_t nheap, capheap;
	uint64_t seq;
	struct table handles; /* (pid, handle) -> name */
	struct table threads; /* (tid, 0) -> comm; aux pid; flag: thread record written */
	struct split *splits;
	size_t nsplits, capsplits;
	struct cut_buf line, args;
	struct rec_counts counts;
	uint64_t last_ts;
} R;

static struct {
	struct cc_dev d[CC_MAX_DEVS];
	char name[CC_MAX_DEVS][32];
	size_t n;
} D;

void
rec_init(int fd, const char *const *funcs, size_t nfuncs, const char *const *kfuncs, size_t nkfuncs)
{
	W.fd = fd;
	W.buf = malloc(OUT_PIECE);
	struct stat st;
	W.base = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? lseek(fd, 0, SEEK_CUR) : -1;
	R.funcs = funcs;
	R.nfuncs = nfuncs;
	R.kfuncs = kfuncs;
	R.nkfuncs = nkfuncs;
	R.dec = calloc(nfuncs ? nfuncs : 1, sizeof(*R.dec));
	R.cat = calloc(nfuncs ? nfuncs : 1, sizeof(*R.cat));
	if (!R.dec || !R.cat || !W.buf)
		err(CUT_EXIT_FATAL, "calloc");
	for (size_t i = 0; i < nfuncs; i++) {
		R.dec[i] = decoder_find(funcs[i]);
		R.cat[i] = cut_api_category(funcs[i]);
	}
}

/* ---- devices ---- */

static void
dev_push(uint32_t major, uint32_t minor, unsigned kind, const char *name)
{
	if (D.n == CC_MAX_DEVS)
		return;
	D.d[D.n] = (struct cc_dev){major, minor, kind};
	size_t n = strnlen(name, sizeof(D.name[0]) - 1);
	memcpy(D.name[D.n], name, n);
	D.name[D.n][n] = 0;
	D.n++;
}

int
rec_dev_scan(void)
{
	FILE *f = fopen("/proc/devices", "r");
	char line[128], name[64];
	unsigned major;
	int n = 0, chars = 0;
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "Character", 9) == 0)
			chars = 1;
		else if (strncmp(line, "Block", 5) == 0)
			chars = 0;
		if (!chars || sscanf(line, "%u %63s", &major, name) != 2 ||
		    strncmp(name, "nvidia", 6) != 0)
			continue;
		/* /dev/nvidiactl shares the major of /dev/nvidia<N> ("nvidia"). */
		if (strcmp(name, "nvidiactl") == 0)
			continue;
		unsigned kind = strcmp(name, "nvidia") == 0       ? CC_DEV_RM
		                : strcmp(name, "nvidia-uvm") == 0 ? CC_DEV_UVM
		                                                  : CC_DEV_OTHER;
		dev_push(major, CC_ANY_MINOR, kind, name);
		n++;
	}
	fclose(f);
	return n;
}

int
rec_dev_add(const char *path, unsigned kind)
{
	struct stat st;
	if (stat(path, &st) < 0)
		return -1;
	if (!S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode)) {
		errno = ENODEV;
		return -1;
	}
	const char *base = strrchr(path, '/');
	dev_push(major(st.st_rdev), minor(st.st_rdev), kind, base ? base + 1 : path);
	return 0;
}

size_t
rec_devs(struct cc_dev *out, size_t max)
{
	size_t n = D.n < max ? D.n : max;
	memcpy(out, D.d, n * sizeof(*out));
	return n;
}

/* The name cut-events(5) gives the device of rdev (kernel encoding), and its kind. */
static const char *
dev_name(uint32_t rdev, unsigned *kind, char *buf, size_t n)
{
	uint32_t major = rdev >> 20, minor = rdev & 0xfffff;
	for (size_t i = 0; i < D.n; i++) {
		if (D.d[i].major != major)
			continue;
		if (D.d[i].minor != CC_ANY_MINOR && D.d[i].minor != minor)
			continue;
		*kind = D.d[i].kind;
		if (D.d[i].minor != CC_ANY_MINOR)
			return D.name[i];
		if (strcmp(D.name[i], "nvidia") == 0) {
			if (minor == 255)
				return "nvidiactl";
			if (minor == 254)
				return "nvidia-modeset";
			snprintf(buf, n, "nvidia%u", minor);
			return buf;
		}
		if (minor == 0)
			return D.name[i];
		if (strcmp(D.name[i], "nvidia-uvm") == 0 && minor == 1)
			return "nvidia-uvm-tools";
		snprintf(buf, n, "%s%u", D.name[i], minor);
		return buf;
	}
	*kind = 0;
	snprintf(buf, n, "%u:%u", major, minor);
	return buf;
}

/* ---- ioctl names ---- */

/* The escape or UVM command name from share/lib/ioctl.c's tables, else "ioctl". */
static const char *
ioctl_name(unsigned kind, uint32_t cmd)
{
	const char *name = NULL;
	if (kind == CC_DEV_RM && CUT_IOC_TYPE(cmd) == CUT_NV_IOCTL_MAGIC)
		name = ioctl_escape_name(CUT_IOC_NR(cmd));
	else if (kind == CC_DEV_UVM)
		name = ioctl_uvm_name(cmd);
	return name ? name : "ioctl";
}

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* ---- formatting ---- */

static void
args_begin(struct cut_buf *b)
{
	buf_reset(b);
}

static void
args_sep(struct cut_buf *b, const char *key)
{
	if (b->len == 0)
		buf_addc(b, '{');
	else
		buf_addc(b, ',');
	buf_addc(b, '"');
	buf_adds(b, key);
	buf_adds(b, "\":");
}

static void
arg_int(struct cut_buf *b, const char *key, int64_t v)
{
	args_sep(b, key);
	buf_addi64(b, v);
}

static void
arg_hex(struct cut_buf *b, const char *key, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	char s[20], *p = s + sizeof(s);
	args_sep(b, key);
	*--p = '"';
	do
		*--p = digits[v & 15];
	while (v >>= 4);
	*--p = 'x';
	*--p = '0';
	*--p = '"';
	buf_add(b, p, (size_t)(s + sizeof(s) - p));
}

static void
arg_str(struct cut_buf *b, const char *key, const char *s, size_t n)
{
	args_sep(b, key);
	buf_addjstr(b, s, n);
}

static void
arg_triple(struct cut_buf *b, const char *key, uint32_t x, uint32_t y, uint32_t z)
{
	args_sep(b, key);
	buf_addc(b, '[');
	buf_addi64(b, x);
	buf_addc(b, ',');
	buf_addi64(b, y);
	buf_addc(b, ',');
	buf_addi64(b, z);
	buf_addc(b, ']');
}

static const char *
args_end(struct cut_buf *b)
{
	if (b->len == 0)
		return NULL;
	buf_addc(b, '}');
	return b->s;
}

static void
emit(struct cut_event *ev)
{
	buf_reset(&R.line);
	cut_event_format(&R.line, ev);
	buf_addc(&R.line, '\n');
	out_add(R.line.s, R.line.len);
	R.counts.layer[ev->layer]++;
	R.counts.events++;
	R.last_ts = (uint64_t)ev->ts;
}

void
rec_write_line(const char *line, size_t len)
{
	out_add(line, len);
}

int
rec_out_flush(void)
{
	if (!W.error)
		out_flush();
	return W.error;
}

int
rec_out_error(void)
{
	return W.error;
}

int
rec_out_close(bool *cut)
{
	int e = rec_out_flush();
	*cut = false;
	/* A file that took part of a line is cut back to its last whole line. */
	if (e && W.base >= 0 && W.good < W.sent &&
	    ftruncate(W.fd, (off_t)(W.base + (int64_t)W.good)) == 0)
		*cut = true;
	free(W.buf);
	W.buf = NULL;
	return e;
}

static const char *
handle_name(uint32_t pid, uint64_t handle)
{
	struct entry *e = table_get(&R.handles, pid, handle);
	return e ? e->s : NULL;
}

/* A meta record (cut-events(5)) about process pid and thread tid. */
static void
meta_event(struct cut_event *ev, int64_t ts, int64_t pid, int64_t tid, const char *name)
{
	cut_event_init(ev);
	ev->ts = ts;
	ev->pid = pid;
	ev->tid = tid;
	ev->layer = CUT_META;
	ev->name = name;
}

/* Writes the thread record before the first event of a thread. */
static void
thread_seen(uint64_t ts, uint32_t pid, uint32_t tid)
{
	if (!tid)
		return;
	struct entry *e = table_put(&R.threads, tid, 0);
	if (e->flag)
		return;
	e->flag = true;
	if (!e->aux)
		e->aux = pid;
	if (!e->s)
		return;
	struct cut_event ev;
	meta_event(&ev, (int64_t)ts, pid, tid, "thread");
	args_begin(&R.args);
	arg_str(&R.args, "comm", e->s, strlen(e->s));
	ev.args = args_end(&R.args);
	emit(&ev);
}

static void
symbol_record(const struct cc_api *r, const char *via, const char *kind, uint64_t handle,
              const char *name)
{
	struct entry *e = table_put(&R.handles, r->h.pid, handle);
	set_str(&e->s, name);
	struct cut_event ev;
	meta_event(&ev, (int64_t)r->h.ts, r->h.pid, r->h.tid, "symbol");
	args_begin(&R.args);
	arg_hex(&R.args, "handle", handle);
	arg_str(&R.args, "name", name, strlen(name));
	arg_str(&R.args, "kind", kind, strlen(kind));
	arg_str(&R.args, "via", via, strlen(via));
	ev.args = args_end(&R.args);
	emit(&ev);
}

/* The 32-bit slot s of the words after the registers. */
static uint32_t
slot(const struct cc_api *r, int s)
{
	return (uint32_t)(r->a[6 + s / 2] >> (32 * (s % 2)));
}

/* The fields every span record shares: its time, its layer and, for a process's own events,
 * its pid and tid (interrupts belong to none). */
static void
span_event(struct cut_event *ev, const struct cc_hdr *h, enum cut_layer layer, bool has_ret,
           bool owned)
{
	cut_event_init(ev);
	ev->ts = (int64_t)h->ts;
	ev->dur = (int64_t)h->dur;
	ev->has = CUT_HAS_DUR | (has_ret ? CUT_HAS_RET : 0);
	if (owned) {
		ev->pid = h->pid;
		ev->tid = h->tid;
	}
	ev->layer = layer;
}

static void
write_api(const struct cc_api *r)
{
	const char *name = r->fid < R.nfuncs ? R.funcs[r->fid] : "?";
	const struct api_decoder *dec = r->fid < R.nfuncs ? R.dec[r->fid] : NULL;
	bool ok = r->ret == 0;
	const char *str = r->h.size > sizeof(*r) ? r->str : NULL;
	size_t slen = str ? strnlen(str, CC_STRLEN) : 0;
	struct cut_event ev;
	span_event(&ev, &r->h, CUT_API, true, true);
	ev.name = name;
	ev.cat = r->fid < R.nfuncs ? R.cat[r->fid] : cut_api_category(name);
	ev.ret = r->ret;
	args_begin(&R.args);
	for (int i = 0; dec && i < (int)NELEM(dec->f) && dec->f[i].key; i++) {
		const struct api_field *f = &dec->f[i];
		uint64_t v = f->idx < CC_NARGS ? r->a[f->idx] : 0;
		const char *hn;
		switch (f->fmt) {
		case 'd': arg_int(&R.args, f->key, (int64_t)v); break;
		case 'i': arg_int(&R.args, f->key, (int32_t)v); break;
		case 'u': arg_int(&R.args, f->key, (uint32_t)v); break;
		case 'x': arg_hex(&R.args, f->key, v); break;
		case 'o':
			if (ok)
				arg_hex(&R.args, f->key, r->out);
			break;
		case 'O':
			if (ok)
				arg_int(&R.args, f->key, (int32_t)r->out);
			break;
		case 's':
			if (str && (ok || dec->strmode == CC_STR_ARG) && slen)
				arg_str(&R.args, f->key, str, slen);
			break;
		case 'k':
			if ((hn = handle_name(r->h.pid, v)))
				arg_str(&R.args, f->key, hn, strlen(hn));
			break;
		case 'g':
			arg_triple(&R.args, f->key, (uint32_t)r->a[f->idx],
			           (uint32_t)r->a[f->idx + 1], (uint32_t)r->a[f->idx + 2]);
			break;
		case 'b': arg_int(&R.args, f->key, (int64_t)(v * dec->elem)); break;
		case 'D': arg_str(&R.args, f->key, dec->dir, strlen(dec->dir)); break;
		case 'G':
			arg_triple(&R.args, f->key, slot(r, f->idx), slot(r, f->idx + 1),
			           slot(r, f->idx + 2));
			break;
		case 'U': arg_int(&R.args, f->key, slot(r, f->idx)); break;
		}
	}
	ev.args = args_end(&R.args);
	emit(&ev);
	if (!dec || !dec->sym || !ok)
		return;
	uint64_t handle = dec->symhandle ? r->a[dec->symhandle - 1] : r->out;
	const char *sname = str && slen ? str : NULL;
	if (dec->symfrom)
		sname = handle_name(r->h.pid, r->a[dec->symfrom - 1]);
	if (sname && handle)
		symbol_record(r, name, dec->sym, handle, sname);
}

static void
write_ioctl(const struct cc_ioctl *r)
{
	char dbuf[32];
	unsigned kind;
	const char *dev = dev_name(r->rdev, &kind, dbuf, sizeof(dbuf));
	struct cut_event ev;
	span_event(&ev, &r->h, CUT_IOCTL, true, true);
	ev.name = ioctl_name(kind, r->cmd);
	ev.ret = r->ret;
	args_begin(&R.args);
	arg_int(&R.args, "fd", r->fd);
	arg_str(&R.args, "dev", dev, strlen(dev));
	arg_hex(&R.args, "cmd", r->cmd);
	if (kind != CC_DEV_UVM) {
		static const char *const dirs[] = {"none", "w", "r", "rw"};
		arg_str(&R.args, "dir", dirs[r->cmd >> 30], strlen(dirs[r->cmd >> 30]));
		arg_int(&R.args, "type", (r->cmd >> 8) & 0xff);
		arg_int(&R.args, "nr", r->cmd & 0xff);
		arg_int(&R.args, "size", (r->cmd >> 16) & 0x3fff);
	}
	if (r->flags & CC_IO_SUB)
		arg_hex(&R.args, r->flags & CC_IO_CLASS ? "class" : "ctrl", r->sub);
	if (r->flags & CC_IO_XFER)
		arg_hex(&R.args, "xfer", r->xfer);
	if (r->flags & CC_IO_STATUS)
		arg_int(&R.args, "status", r->status);
	ev.args = args_end(&R.args);
	emit(&ev);
}

static void
write_file(const struct cc_file *r)
{
	static const struct {
		unsigned nr;
		const char *name;
	} calls[] = {{2, "open"}, {257, "open"}, {3, "close"}, {9, "mmap"}, {11, "munmap"}};
	char dbuf[32];
	unsigned kind;
	const char *dev = dev_name(r->rdev, &kind, dbuf, sizeof(dbuf));
	struct cut_event ev;
	span_event(&ev, &r->h, CUT_IOCTL, true, true);
	ev.name = "?";
	for (size_t i = 0; i < NELEM(calls); i++)
		if (calls[i].nr == r->nr)
			ev.name = calls[i].name;
	ev.ret = r->nr == 9 && r->ret > 0 ? 0 : r->ret;
	args_begin(&R.args);
	if (r->nr != 11)
		arg_int(&R.args, "fd", r->fd);
	arg_str(&R.args, "dev", dev, strlen(dev));
	if (r->path[0])
		arg_str(&R.args, "path", r->path, strnlen(r->path, sizeof(r->path)));
	if (r->nr == 9 || r->nr == 11) {
		arg_int(&R.args, "bytes", (int64_t)r->len);
		if (r->nr == 11 || r->ret > 0 || r->ret < -4095)
			arg_hex(&R.args, "ptr", r->addr);
		if (r->nr == 9)
			arg_hex(&R.args, "offset", r->off);
	}
	ev.args = args_end(&R.args);
	emit(&ev);
}

static void
write_irq(const struct cc_irq *r)
{
	char name[CC_COMMLEN + 1];
	snprintf(name, sizeof(name), "%.*s", CC_COMMLEN, r->name);
	struct cut_event ev;
	span_event(&ev, &r->h, CUT_IRQ, true, false);
	ev.name = name[0] ? name : "irq";
	ev.ret = r->ret;
	args_begin(&R.args);
	arg_int(&R.args, "irq", r->irq);
	arg_int(&R.args, "cpu", r->h.cpu);
	arg_int(&R.args, "handled", r->ret != 0);
	ev.args = args_end(&R.args);
	emit(&ev);
}

static void
write_sched(const struct cc_sched *r)
{
	char state[2] = {(char)r->state, 0};
	struct cut_event ev;
	span_event(&ev, &r->h, CUT_SCHED, false, true);
	ev.name = "offcpu";
	args_begin(&R.args);
	arg_str(&R.args, "state", state, 1);
	arg_int(&R.args, "cpu", r->h.cpu);
	if (r->pad) {
		arg_int(&R.args, "split", 1);
	} else {
		arg_int(&R.args, "cpu_in", r->cpu_in);
		if (r->waker)
			arg_int(&R.args, "waker", r->waker);
		if (r->runq)
			arg_int(&R.args, "runq", (int64_t)r->runq);
	}
	ev.args = args_end(&R.args);
	emit(&ev);
}

static void
write_task(const struct cc_task *r)
{
	if (r->what != CC_TASK_FORK && r->what != CC_TASK_EXEC && r->what != EV_PROC)
		return;
	struct cut_event ev;
	meta_event(&ev, (int64_t)r->h.ts, r->h.pid, r->h.pid, "process");
	args_begin(&R.args);
	arg_str(&R.args, "comm", r->comm, strnlen(r->comm, sizeof(r->comm)));
	if (r->cmdlen) {
		/* The argument strings, NUL-separated, joined with spaces. */
		char cmd[CC_CMDLEN + 1];
		size_t n = r->cmdlen < CC_CMDLEN ? r->cmdlen : CC_CMDLEN;
		memcpy(cmd, r->cmd, n);
		while (n > 0 && cmd[n - 1] == 0)
			n--;
		for (size_t i = 0; i < n; i++)
			if (cmd[i] == 0)
				cmd[i] = ' ';
		arg_str(&R.args, "cmdline", cmd, n);
	}
	arg_int(&R.args, "ppid", r->ppid);
	ev.args = args_end(&R.args);
	emit(&ev);
}

static void
write_kfunc(const struct cc_kfunc *r)
{
	struct cut_event ev;
	span_event(&ev, &r->h, CUT_KERNEL, true, true);
	ev.name = r->idx < R.nkfuncs ? R.kfuncs[r->idx] : "?";
	ev.ret = r->ret;
	emit(&ev);
}

static void
write_lost(const struct lost_rec *r)
{
	struct cut_event ev;
	meta_event(&ev, (int64_t)r->h.ts, r->h.pid, r->h.tid, "lost");
	args_begin(&R.args);
	arg_int(&R.args, "count", (int64_t)r->count);
	arg_str(&R.args, "reason", r->reason, strlen(r->reason));
	if (r->layer)
		arg_str(&R.args, "layer", r->layer, strlen(r->layer));
	ev.args = args_end(&R.args);
	emit(&ev);
	R.counts.lost += r->count;
}

/* A call its thread never returned from (it ended inside): lost, and said so at its start. */
static void
write_unfinished(const struct cc_api *r)
{
	char reason[CC_STRLEN + 96];
	const char *name = r->fid < R.nfuncs ? R.funcs[r->fid] : "a driver API call";
	snprintf(reason, sizeof(reason), "%s in flight when thread %u of process %u ended", name,
	         r->h.tid, r->h.pid);
	struct lost_rec l = {.count = 1, .layer = "api", .reason = reason};
	l.h = r->h;
	l.h.pid = l.h.tid = (uint32_t)getpid();
	write_lost(&l);
	R.counts.unfinished++;
}

static void
write_record(const struct cc_hdr *h)
{
	if (h->kind != CC_EV_TASK && h->kind != EV_LOST && h->kind != EV_PROC &&
	    h->kind != CC_EV_UNFINISHED)
		thread_seen(h->ts, h->pid, h->tid);
	switch (h->kind) {
	case CC_EV_API: write_api((const struct cc_api *)h); break;
	case CC_EV_IOCTL: write_ioctl((const struct cc_ioctl *)h); break;
	case CC_EV_FILE: write_file((const struct cc_file *)h); break;
	case CC_EV_IRQ: write_irq((const struct cc_irq *)h); break;
	case CC_EV_SCHED: write_sched((const struct cc_sched *)h); break;
	case CC_EV_TASK:
	case EV_PROC: write_task((const struct cc_task *)h); break;
	case CC_EV_KFUNC: write_kfunc((const struct cc_kfunc *)h); break;
	case EV_LOST: write_lost((const struct lost_rec *)h); break;
	case CC_EV_UNFINISHED: write_unfinished((const struct cc_api *)h); break;
	}
}

/* ---- the reorder buffer: a binary heap on (ts, seq) ---- */

static bool
pend_less(const struct pend *a, const struct pend *b)
{
	return a->ts < b->ts || (a->ts == b->ts && a->seq < b->seq);
}

static void
heap_push(struct cc_hdr *rec)
{
	if (R.nheap == R.capheap) {
		R.capheap = R.capheap ? R.capheap * 2 : 4096;
		R.heap = realloc(R.heap, R.capheap * sizeof(*R.heap));
		if (!R.heap)
			err(CUT_EXIT_FATAL, "realloc");
	}
	struct pend p = {rec->ts, R.seq++, rec};
	size_t i = R.nheap++;
	while (i > 0) {
		size_t parent = (i - 1) / 2;
		if (!pend_less(&p, &R.heap[parent]))
			break;
		R.heap[i] = R.heap[parent];
		i = parent;
	}
	R.heap[i] = p;
}

static struct cc_hdr *
heap_pop(void)
{
	struct cc_hdr *top = R.heap[0].rec;
	struct pend last = R.heap[--R.nheap];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= R.nheap)
			break;
		if (c + 1 < R.nheap && pend_less(&R.heap[c + 1], &R.heap[c]))
			c++;
		if (!pend_less(&R.heap[c], &last))
			break;
		R.heap[i] = R.heap[c];
		i = c;
	}
	if (R.nheap)
		R.heap[i] = last;
	return top;
}

static struct cc_hdr *
copy_rec(const void *data, size_t size)
{
	struct cc_hdr *h = malloc(size);
	if (!h)
		err(CUT_EXIT_FATAL, "malloc");
	memcpy(h, data, size);
	return h;
}

/* Remembers the thread's process and name while /proc still has them. */
static void
thread_note(uint32_t pid, uint32_t tid, const char *comm)
{
	if (!tid)
		return;
	struct entry *e = table_get(&R.threads, tid, 0);
	if (e && (e->s || !comm))
		return;
	e = table_put(&R.threads, tid, 0);
	e->aux = pid;
	char path[64], buf[CC_COMMLEN + 1];
	snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", pid, tid);
	FILE *f = comm ? NULL : fopen(path, "r");
	if (f) {
		if (fgets(buf, sizeof(buf), f)) {
			buf[strcspn(buf, "\n")] = 0;
			set_str(&e->s, buf);
		}
		fclose(f);
	} else if (comm) {
		snprintf(buf, sizeof(buf), "%.*s", CC_COMMLEN, comm);
		set_str(&e->s, buf);
	}
}

/* The process of a thread never seen in a record (one that only sleeps), from /proc. */
static uint32_t
tid_pid(uint32_t tid)
{
	char path[64], line[128];
	uint32_t pid = 0;
	snprintf(path, sizeof(path), "/proc/%u/status", tid);
	FILE *f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %u", &pid) == 1)
			break;
	if (f)
		fclose(f);
	return pid;
}

static struct split *
split_find(uint32_t tid)
{
	for (size_t i = 0; i < R.nsplits; i++)
		if (R.splits[i].tid == tid)
			return &R.splits[i];
	return NULL;
}

int
rec_ring(void *ctx, void *data, size_t size)
{
	(void)ctx;
	const struct cc_hdr *h = data;
	if (size < sizeof(*h) || h->size > size || h->size < sizeof(*h))
		return 0;
	struct cc_hdr *rec = copy_rec(data, h->size);
	if (rec->kind == CC_EV_TASK) {
		const struct cc_task *t = (const struct cc_task *)rec;
		if (t->what == CC_TASK_THREAD || t->what == CC_TASK_EXIT)
			thread_note(t->h.pid, t->h.tid, t->comm);
	} else if (rec->tid && !table_get(&R.threads, rec->tid, 0)) {
		thread_note(rec->pid, rec->tid, NULL);
	}
	if (rec->kind == CC_EV_SCHED) {
		/* Part of this period was already written: the rest starts where that ended. */
		struct split *s = split_find(rec->tid);
		if (s && s->off_ts == rec->ts) {
			uint64_t end = rec->ts + rec->dur;
			rec->ts = s->upto;
			rec->dur = end > s->upto ? end - s->upto : 0;
			*s = R.splits[--R.nsplits];
		}
	}
	heap_push(rec);
	return 0;
}

void
rec_lost(uint64_t ts, const char *layer, uint64_t count, const char *reason)
{
	struct lost_rec r = {.count = count, .layer = layer, .reason = reason};
	r.h.ts = ts;
	r.h.kind = EV_LOST;
	r.h.size = sizeof(r);
	r.h.pid = r.h.tid = (uint32_t)getpid();
	heap_push(copy_rec(&r, sizeof(r)));
}

void
rec_process(uint64_t ts, uint32_t pid, uint32_t ppid, const char *comm, const char *cmdline)
{
	struct cc_task t = {0};
	t.h.ts = ts;
	t.h.kind = EV_PROC;
	t.h.size = sizeof(t);
	t.h.pid = t.h.tid = pid;
	t.what = EV_PROC;
	t.ppid = ppid;
	snprintf(t.comm, sizeof(t.comm), "%s", comm);
	size_t n = strlen(cmdline);
	t.cmdlen = n < CC_CMDLEN ? (uint32_t)n : CC_CMDLEN;
	memcpy(t.cmd, cmdline, t.cmdlen);
	heap_push(copy_rec(&t, sizeof(t)));
}

uint64_t
rec_offcpu_hold(uint32_t tid, uint64_t off_ts, uint32_t state, uint32_t cpu, uint64_t now,
                uint64_t max_age, uint64_t upto)
{
	struct split *s = split_find(tid);
	if (!s) {
		if (now < off_ts + max_age || upto <= off_ts)
			return off_ts;
		if (R.nsplits == R.capsplits) {
			R.capsplits = R.capsplits ? R.capsplits * 2 : 64;
			R.splits = realloc(R.splits, R.capsplits * sizeof(*R.splits));
			if (!R.splits)
				err(CUT_EXIT_FATAL, "realloc");
		}
		s = &R.splits[R.nsplits++];
		*s = (struct split){tid, off_ts, off_ts};
	} else if (s->off_ts != off_ts) {
		s->off_ts = s->upto = off_ts; /* a new period: the old one ended unseen */
	}
	if (now < s->upto + max_age || upto <= s->upto)
		return s->upto;
	struct entry *e = table_get(&R.threads, tid, 0);
	if (!e || !e->aux) {
		thread_note(tid_pid(tid), tid, NULL);
		e = table_get(&R.threads, tid, 0);
	}
	struct cc_sched r = {0};
	r.h.ts = s->upto;
	r.h.dur = upto - s->upto;
	r.h.kind = CC_EV_SCHED;
	r.h.size = sizeof(r);
	r.h.pid = e ? e->aux : 0;
	r.h.tid = tid;
	r.h.cpu = cpu;
	r.state = state;
	r.pad = 1;
	heap_push(copy_rec(&r, sizeof(r)));
	s->upto = upto;
	return upto;
}

void
rec_flush(uint64_t upto)
{
	while (R.nheap && R.heap[0].ts < upto) {
		struct cc_hdr *h = heap_pop();
		write_record(h);
		free(h);
	}
}

size_t
rec_pending(void)
{
	return R.nheap;
}

struct rec_counts
rec_counts(void)
{
	return R.counts;
}

void
rec_free(void)
{
	while (R.nheap)
		free(heap_pop());
	free(R.heap);
	free(R.splits);
	free(R.dec);
	free(R.cat);
	table_free(&R.handles);
	table_free(&R.threads);
	buf_free(&R.line);
	buf_free(&R.args);
	memset(&R, 0, sizeof(R));
	free(W.buf); /* when the capture stopped before rec_out_close */
	W.buf = NULL;
}
