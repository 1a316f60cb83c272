/* summary.c: the log-scale histogram and the summary of summary.h: recognised, read (through
 * inflate.h: plain, gzip or zstd) and its items checked, for the job view and cutdiff alike.
 * It is written from cutstat's accumulators by analyze/stat/summarize.c. */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <math.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "cut.h"
#include "inflate.h"
#include "summary.h"
#include "text.h"

int
cut_hist_bucket(int64_t ns)
{
	if (ns < 1)
		return 0;
	int b = (int)floor(8 * log2((double)ns)) + 1;
	return b < CUT_HIST_N ? b : CUT_HIST_N - 1;
}

double
cut_hist_value(int b)
{
	return b <= 0 ? 0 : exp2(((double)b - 0.5) / 8);
}

double
cut_hist_quantile_range(const int64_t *h, int lo, int hi, int64_t n, double q)
{
	if (n <= 0 || lo >= hi)
		return 0;
	/* the rank of the value wanted, 1 to n, computed so that no n overflows it */
	double x = q * (double)(n - 1);
	int64_t want = x >= 0x1p63 ? INT64_MAX : (int64_t)x + 1, seen = 0;
	for (int b = lo; b < hi; b++)
		if (__builtin_add_overflow(seen, h[b - lo], &seen) || seen >= want)
			return cut_hist_value(b);
	return cut_hist_value(hi - 1);
}

double
cut_hist_quantile(const int64_t *h, int64_t n, double q)
{
	return cut_hist_quantile_range(h, 0, CUT_HIST_N, n, q);
}

void
cut_hist_of(struct cut_hist *h, const int64_t *v, size_t n)
{
	h->lo = CUT_HIST_N, h->hi = 0;
	for (size_t i = 0; i < n; i++) {
		int b = cut_hist_bucket(v[i]);
		h->lo = b < h->lo ? b : h->lo;
		h->hi = b >= h->hi ? b + 1 : h->hi;
	}
	if (h->lo >= h->hi) {
		h->lo = h->hi = 0;
		h->counts = NULL;
		return;
	}
	h->counts = cut_xcalloc((size_t)(h->hi - h->lo), sizeof(*h->counts));
	for (size_t i = 0; i < n; i++)
		h->counts[cut_hist_bucket(v[i]) - h->lo]++;
}

/* Makes h hold the buckets lo to hi - 1 at least. */
static void
widen(struct cut_hist *h, int lo, int hi)
{
	if (h->counts) {
		lo = lo < h->lo ? lo : h->lo;
		hi = hi > h->hi ? hi : h->hi;
		if (lo == h->lo && hi == h->hi)
			return;
	}
	int64_t *n = cut_xcalloc((size_t)(hi - lo), sizeof(*n));
	if (h->counts)
		memcpy(n + (h->lo - lo), h->counts, (size_t)(h->hi - h->lo) * sizeof(*n));
	free(h->counts);
	h->counts = n, h->lo = lo, h->hi = hi;
}

void
cut_hist_add(struct cut_hist *h, int64_t ns)
{
	int b = cut_hist_bucket(ns);
	widen(h, b, b + 1);
	if (h->counts[b - h->lo] < INT64_MAX)
		h->counts[b - h->lo]++;
}

void
cut_hist_merge(struct cut_hist *h, const int64_t *all, bool *saturated)
{
	int lo = 0, hi = CUT_HIST_N;
	while (lo < hi && !all[lo])
		lo++;
	while (hi > lo && !all[hi - 1])
		hi--;
	if (lo == hi)
		return;
	widen(h, lo, hi);
	for (int b = lo; b < hi; b++)
		if (__builtin_add_overflow(h->counts[b - h->lo], all[b], &h->counts[b - h->lo])) {
			h->counts[b - h->lo] = INT64_MAX;
			*saturated = true;
		}
}

void
cut_hist_free(struct cut_hist *h)
{
	free(h->counts);
	h->counts = NULL;
	h->lo = h->hi = 0;
}

/* ---- writing ---- */

const char *const cut_sum_list_key[CUT_SUM_NLISTS] = {"functions", "runtime", "kernels", "nvtx"};

/* ---- reading ---- */

/* A member that must be an integer of at least min; false (why says which) otherwise. */
static bool
int_member(json_t *o, const char *k, int64_t min, int64_t *v, char *why, size_t n)
{
	json_t *x = json_object_get(o, k);
	if (!json_is_integer(x) || (*v = json_integer_value(x)) < min) {
		snprintf(why, n, "\"%s\" %s", k, x ? "out of range" : "missing");
		return false;
	}
	return true;
}

/* Reads the histogram of an item into h (all buckets); false with why when bad. */
static bool
read_hist(json_t *list, int64_t *h, char *why, size_t n)
{
	size_t i;
	json_t *pair;
	memset(h, 0, CUT_HIST_N * sizeof(*h));
	if (list && !json_is_array(list)) {
		snprintf(why, n, "\"hist\" not an array");
		return false;
	}
	json_array_foreach(list, i, pair)
	{
		json_t *b = json_array_get(pair, 0), *c = json_array_get(pair, 1);
		if (json_array_size(pair) != 2 || !json_is_integer(b) || !json_is_integer(c) ||
		    json_integer_value(b) < 0 || json_integer_value(b) >= CUT_HIST_N ||
		    json_integer_value(c) < 0) {
			snprintf(why, n, "\"hist\"[%zu] not a [bucket, count] pair", i);
			return false;
		}
		if (__builtin_add_overflow(h[json_integer_value(b)], json_integer_value(c),
		                           &h[json_integer_value(b)]))
			h[json_integer_value(b)] = INT64_MAX;
	}
	return true;
}

bool
cut_summary_item(json_t *o, enum cut_sum_list list, struct cut_sum_item *it, char *why, size_t n)
{
	if (!json_is_object(o)) {
		snprintf(why, n, "not an object");
		return false;
	}
	if (!(it->name = json_string_value(json_object_get(o, "name")))) {
		snprintf(why, n, "\"name\" missing or not a string");
		return false;
	}
	json_t *d = json_object_get(o, "domain"), *k = json_object_get(o, "kind");
	it->domain = list == CUT_SUM_NVTX ? (json_is_string(d) ? json_string_value(d) : "") : NULL;
	it->kind = list == CUT_SUM_KERNELS && json_is_string(k) ? json_string_value(k) : NULL;
	if ((d && list == CUT_SUM_NVTX && !json_is_string(d)) ||
	    (k && list == CUT_SUM_KERNELS && !json_is_string(k))) {
		snprintf(why, n, "\"%s\" not a string", d ? "domain" : "kind");
		return false;
	}
	return int_member(o, "calls", 0, &it->calls, why, n) &&
	       int_member(o, "total_ns", 0, &it->total, why, n) &&
	       int_member(o, "min_ns", 0, &it->min, why, n) &&
	       int_member(o, "max_ns", it->min, &it->max, why, n) &&
	       read_hist(json_object_get(o, "hist"), it->hist, why, n);
}

size_t
cut_summary_ranks(json_t *s, int64_t **r, size_t *cap)
{
	json_t *one = json_object_get(s, "rank"), *many = json_object_get(s, "ranks"), *x;
	size_t n = 0, i;
	if (json_is_integer(one) && json_integer_value(one) >= 0) {
		*r = cut_grow(*r, cap, 1, sizeof(**r));
		(*r)[n++] = json_integer_value(one);
	}
	json_array_foreach(many, i, x)
	{
		if (!json_is_integer(x) || json_integer_value(x) < 0)
			continue;
		*r = cut_grow(*r, cap, n + 1, sizeof(**r));
		(*r)[n++] = json_integer_value(x);
	}
	return n;
}

/* Whether the first bytes of an input, n of them (eof: all there is), say it is a summary: a
 * JSON object whose first line is "{" alone (cutstat -j prints it indented), or a first line
 * that is an object with a "summary" member. Returns 1 or 0, or -1 when the first line is not
 * all there yet. */
static int
looks_like_summary(const char *b, size_t n, bool eof)
{
	size_t i = 0;
	while (i < n && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n'))
		i++;
	if (i == n)
		return eof ? 0 : -1;
	if (b[i] != '{')
		return 0;
	size_t j = i + 1;
	while (j < n && (b[j] == ' ' || b[j] == '\t' || b[j] == '\r'))
		j++;
	if (j < n && b[j] == '\n')
		return 1;
	const char *nl = memchr(b + i, '\n', n - i);
	if (!nl && !eof)
		return -1;
	json_t *o = json_loadb(b + i, (size_t)((nl ? nl : b + n) - (b + i)), 0, NULL);
	int yes = o && json_is_object(json_object_get(o, "summary"));
	json_decref(o);
	return yes;
}

/* The plain bytes of the n compressed ones of b (the start of a stream), up to cap into d:
 * how many. */
static size_t
inflate_bytes(const char *b, size_t n, char *d, size_t cap)
{
	size_t got = 0;
	int fd = memfd_create("cut-sniff", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	struct cut_inflate *z = NULL;
	if (write(fd, b, n) == (ssize_t)n && lseek(fd, 0, SEEK_SET) == 0 &&
	    (z = cut_inflate_new(fd))) {
		char why[128];
		ssize_t r;
		while (got < cap &&
		       (r = cut_inflate_read(z, d + got, cap - got, why, sizeof(why))) > 0)
			got += (size_t)r;
	}
	cut_inflate_free(z);
	close(fd);
	return got;
}

/* Whether the compressed formats inflate.h reads start b (n bytes). */
static bool
compressed(const char *b, size_t n)
{
	static const unsigned char gz[] = {0x1f, 0x8b}, zs[] = {0x28, 0xb5, 0x2f, 0xfd};
	return (n >= 2 && memcmp(b, gz, 2) == 0) || (n >= 4 && memcmp(b, zs, 4) == 0);
}

/* The first bytes of the pipe fd, copied with tee(2) so that they stay in it for whoever
 * reads it next, inflated when compressed: whether they say it is a summary, waiting for the
 * first line (or the writer's end). */
static bool
pipe_is_summary(int fd)
{
	static char b[65536], d[65536];
	int p[2];
	if (pipe2(p, O_CLOEXEC) != 0)
		return false;
	int yes = 0;
	for (;;) {
		struct pollfd pf = {fd, POLLIN, 0};
		if (poll(&pf, 1, -1) < 0 && errno != EINTR)
			break;
		bool eof = (pf.revents & POLLHUP) != 0;
		ssize_t got = tee(fd, p[1], sizeof(b), SPLICE_F_NONBLOCK);
		if (got < 0 && errno != EAGAIN)
			break;
		size_t n = 0;
		while (got > 0 && n < (size_t)got) {
			ssize_t r = read(p[0], b + n, (size_t)got - n);
			if (r <= 0)
				break;
			n += (size_t)r;
		}
		/* what a full pipe holds is all that can be seen without taking it */
		bool all = eof || n == sizeof(b) || got == 0;
		if (compressed(b, n)) {
			size_t dn = inflate_bytes(b, n, d, sizeof(d));
			yes = looks_like_summary(d, dn, all || dn == sizeof(d));
		} else
			yes = looks_like_summary(b, n, all);
		if (yes >= 0)
			break;
		/* the writer has not finished the first line: look again shortly */
		nanosleep(&(struct timespec){0, 1000000}, NULL);
	}
	close(p[0]);
	close(p[1]);
	return yes > 0;
}

/* jansson's reader of the plain bytes of an input (json_load_callback). */
struct src {
	struct cut_inflate *z;
	char why[128]; /* why the input broke off ("" with errno: a read error) */
	int err;
	bool failed;
	char head[256]; /* the first bytes */
	size_t nhead;
};

static size_t
read_plain(void *buf, size_t n, void *arg)
{
	struct src *s = arg;
	ssize_t r = cut_inflate_read(s->z, buf, n, s->why, sizeof(s->why));
	if (r < 0) {
		s->failed = true;
		s->err = errno;
		return (size_t)-1;
	}
	if (s->nhead < sizeof(s->head)) {
		size_t k =
		    sizeof(s->head) - s->nhead < (size_t)r ? sizeof(s->head) - s->nhead : (size_t)r;
		memcpy(s->head + s->nhead, buf, k);
		s->nhead += k;
	}
	return (size_t)r;
}

/* The JSON value that fd holds (plain, gzip or zstd); NULL with *e or s->failed set. */
static json_t *
load_fd(int fd, struct src *s, json_error_t *e)
{
	*s = (struct src){cut_inflate_new(fd), "", 0, false, "", 0};
	if (!s->z)
		err(CUT_EXIT_FATAL, "out of memory");
	json_t *o = json_load_callback(read_plain, s, 0, e);
	cut_inflate_free(s->z);
	return o;
}

bool
cut_summary_sniff(const char *path)
{
	/* Only a regular file or an anonymous pipe (/dev/stdin, <(...)) is looked at: the
	 * reader opens the path again, and must find every byte there. A pipe is peeked at
	 * without taking from it; a named FIFO or a device is never opened twice. */
	struct stat st;
	struct statfs fs;
	if (strcmp(path, "-") == 0 || stat(path, &st) != 0)
		return false;
	if (S_ISFIFO(st.st_mode)) {
		if (statfs(path, &fs) != 0 || fs.f_type != PIPEFS_MAGIC)
			return false;
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return false;
		bool yes = pipe_is_summary(fd);
		close(fd);
		return yes;
	}
	if (!S_ISREG(st.st_mode))
		return false;
	/* A regular file: its first JSON value, which jansson reads up to the first byte
	 * after it (a trace's second line ends it, text that is no JSON its first byte). */
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	struct src s;
	json_error_t e;
	json_t *o = load_fd(fd, &s, &e);
	close(fd);
	/* one cut short (compressed data that ends early) is a summary when it begins as
	 * cutstat -j writes one: reading it says what broke */
	bool yes = o ? json_is_object(json_object_get(o, "summary"))
	             : s.failed && looks_like_summary(s.head, s.nhead, false) == 1;
	json_decref(o);
	return yes;
}

json_t *
cut_summary_load(const char *path)
{
	int fd = strcmp(path, "-") == 0 ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		err(CUT_EXIT_LOST, "%s", cut_esc(path));
	struct src src;
	json_error_t e;
	json_t *root = load_fd(fd, &src, &e);
	if (fd != STDIN_FILENO)
		close(fd);
	if (src.failed && src.why[0])
		errx(CUT_EXIT_LOST, "%s: %s", cut_esc(path), src.why);
	if (src.failed)
		errx(CUT_EXIT_LOST, "%s: read: %s", cut_esc(path), strerror(src.err));
	/* what is wrong, said once the JSON is freed (errx would leave it behind) */
	json_t *s = root ? json_object_get(root, "summary") : NULL,
	       *v = json_object_get(s, "version");
	long long version = json_is_integer(v) ? json_integer_value(v) : 0;
	bool parsed = root != NULL;
	if (!json_is_object(s)) {
		json_decref(root);
		errx(CUT_EXIT_FATAL, "%s:%d: not a cutstat -j summary%s%s", cut_esc(path),
		     parsed ? 1 : e.line, parsed ? "" : ": ", parsed ? "" : cut_esc(e.text));
	}
	if (version < 1 || version > CUT_SUMMARY_VERSION)
		json_decref(root);
	if (version < 1)
		errx(CUT_EXIT_FATAL, "%s: not a cutstat -j summary: no \"version\"", cut_esc(path));
	if (version > CUT_SUMMARY_VERSION)
		errx(CUT_EXIT_FATAL,
		     "%s: a summary of version %lld, which this %s cannot read (it reads "
		     "version %d): use a %s as new as the cutstat that wrote it",
		     cut_esc(path), version, program_invocation_short_name, CUT_SUMMARY_VERSION,
		     program_invocation_short_name);
	json_incref(s);
	json_decref(root);
	return s;
}
