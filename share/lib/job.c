/* job.c: summaries merged into the job (job.h). */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "cut.h"
#include "job.h"
#include "strtab.h"
#include "summary.h"
#include "text.h"
#include "units.h"

#define MAX_RANKS 4096

/* One function or kernel over the job. */
struct item {
	int64_t calls, total, min, max;
	int64_t hist[CUT_HIST_N];
	int64_t *rank_total; /* per summary */
	double *rank_med;    /* per summary: its median, from its own histogram */
};

struct table {
	struct cut_strtab *names;
	struct item *items;
	size_t cap;
};

static struct item *
item_of(struct table *t, const char *name, int nsum)
{
	size_t i = strtab_intern(t->names, name);
	if (i >= t->cap) {
		size_t n = t->cap ? 2 * t->cap : 64;
		while (n <= i)
			n *= 2;
		if (!(t->items = realloc(t->items, n * sizeof(*t->items))))
			err(CUT_EXIT_FATAL, "out of memory");
		memset(t->items + t->cap, 0, (n - t->cap) * sizeof(*t->items));
		t->cap = n;
	}
	struct item *it = &t->items[i];
	if (!it->rank_total && (!(it->rank_total = calloc((size_t)nsum, sizeof(int64_t))) ||
	                        !(it->rank_med = calloc((size_t)nsum, sizeof(double)))))
		err(CUT_EXIT_FATAL, "out of memory");
	return it;
}

static int64_t
int_of(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	return json_is_integer(v) ? json_integer_value(v) : 0;
}

static void
sat_add(int64_t *a, int64_t b)
{
	if (__builtin_add_overflow(*a, b, a))
		*a = b > 0 ? INT64_MAX : INT64_MIN;
}

/* Adds a summary's list of items (functions or kernels) as summary number k. */
static void
add_items(struct table *t, json_t *list, int k, int nsum)
{
	size_t i;
	json_t *o;
	json_array_foreach(list, i, o)
	{
		const char *name = json_string_value(json_object_get(o, "name"));
		if (!name)
			continue;
		struct item *it = item_of(t, name, nsum);
		int64_t calls = int_of(o, "calls"), total = int_of(o, "total_ns");
		int64_t mn = int_of(o, "min_ns"), mx = int_of(o, "max_ns");
		if (!it->calls || mn < it->min)
			it->min = mn;
		if (mx > it->max)
			it->max = mx;
		it->calls += calls;
		sat_add(&it->total, total);
		sat_add(&it->rank_total[k], total);
		size_t j;
		json_t *h;
		static int64_t mine[CUT_HIST_N];
		memset(mine, 0, sizeof(mine));
		json_array_foreach(json_object_get(o, "hist"), j, h)
		{
			json_int_t b = json_integer_value(json_array_get(h, 0));
			if (b >= 0 && b < CUT_HIST_N) {
				it->hist[b] += json_integer_value(json_array_get(h, 1));
				mine[b] += json_integer_value(json_array_get(h, 1));
			}
		}
		it->rank_med[k] = cut_hist_quantile(mine, calls, 0.5);
	}
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

/* The first bytes of the pipe fd, copied with tee(2) so that they stay in it for whoever
 * reads it next: up to n into b, waiting for the first line (or the writer's end). */
static bool
pipe_is_summary(int fd)
{
	static char b[65536];
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
		if ((yes = looks_like_summary(b, n, eof || n == sizeof(b) || got == 0)) >= 0)
			break;
		/* the writer has not finished the first line: look again shortly */
		nanosleep(&(struct timespec){0, 1000000}, NULL);
	}
	close(p[0]);
	close(p[1]);
	return yes > 0;
}

bool
cut_job_is_summary(const char *path)
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
	/* a regular file: read whole by jansson when it starts as an object does */
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	char b[256];
	ssize_t n = pread(fd, b, sizeof(b), 0);
	close(fd);
	if (n <= 0)
		return false;
	ssize_t i = 0;
	while (i < n && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n'))
		i++;
	if (i == n || b[i] != '{')
		return false;
	json_t *o = json_load_file(path, 0, NULL);
	bool yes = o && json_is_object(json_object_get(o, "summary"));
	json_decref(o);
	return yes;
}

struct job {
	int n;
	char **labels; /* per summary: "rank R" or its file */
	struct table fns, kernels;
};

static void
print_table(const struct job *j, const struct table *t, const char *what, bool json, json_t *out)
{
	char a[32], b[32], c[32];
	size_t n = strtab_len(t->names);
	/* longest total first */
	size_t *order = malloc((n ? n : 1) * sizeof(*order));
	for (size_t i = 0; i < n; i++) {
		size_t k = i;
		for (; k > 0 && t->items[order[k - 1]].total < t->items[i].total; k--)
			order[k] = order[k - 1];
		order[k] = i;
	}
	json_t *arr = json ? json_array() : NULL;
	if (!json)
		printf(
		    "\n%s over the job (quantiles from merged histograms, within %.1f%%)\n%14s %9s "
		    "%12s %12s %14s %14s  %-10s %s\n",
		    what, 100 * CUT_HIST_ERR, "Total(ns)", "Calls", "Med(ns)", "P99(ns)",
		    "rank min", "rank max", "slowest", "Name");
	for (size_t x = 0; x < n; x++) {
		const struct item *it = &t->items[order[x]];
		const char *name = strtab_key(t->names, order[x]);
		int lo = -1, hi = -1;
		for (int k = 0; k < j->n; k++) {
			if (lo < 0 || it->rank_total[k] < it->rank_total[lo])
				lo = k;
			if (hi < 0 || it->rank_total[k] > it->rank_total[hi])
				hi = k;
		}
		double med = cut_hist_quantile(it->hist, it->calls, 0.5);
		double p99 = cut_hist_quantile(it->hist, it->calls, 0.99);
		if (json) {
			json_t *o =
			    json_pack("{s:s,s:I,s:I,s:f,s:f,s:I,s:I}", "name", name, "calls",
			              (json_int_t)it->calls, "total_ns", (json_int_t)it->total,
			              "med_ns", med, "p99_ns", p99, "min_ns", (json_int_t)it->min,
			              "max_ns", (json_int_t)it->max);
			json_t *per = json_object();
			for (int k = 0; k < j->n; k++)
				json_object_set_new(per, j->labels[k],
				                    json_integer(it->rank_total[k]));
			json_object_set_new(o, "per_summary_ns", per);
			json_object_set_new(o, "slowest", json_string(j->labels[hi]));
			json_array_append_new(arr, o);
			continue;
		}
		printf("%14lld %9lld %12.0f %12.0f %14s %14s  %-10s %s\n", (long long)it->total,
		       (long long)it->calls, med, p99,
		       cut_format_duration((double)it->rank_total[lo], a, sizeof(a)),
		       cut_format_duration((double)it->rank_total[hi], b, sizeof(b)), j->labels[hi],
		       cut_esc(name));
		(void)c;
	}
	if (json)
		json_object_set_new(out, what[0] == 'D' ? "functions" : "kernels", arr);
	free(order);
}

/* Collective kernels (NCCL's): the ranks wait inside them for the last to arrive, so the rank
 * whose instances were shortest (the median: a few long ones do not decide) is the one the
 * others waited for. */
static void
print_stragglers(const struct job *j, bool json, json_t *out)
{
	char a[32], b[32];
	size_t n = strtab_len(j->kernels.names);
	json_t *arr = json ? json_array() : NULL;
	bool header = false;
	for (size_t i = 0; i < n; i++) {
		const char *name = strtab_key(j->kernels.names, i);
		if (!strstr(name, "nccl") && !strstr(name, "Nccl"))
			continue;
		const struct item *it = &j->kernels.items[i];
		int lo = 0, hi = 0, have = 0;
		for (int k = 0; k < j->n; k++) {
			if (!it->rank_total[k])
				continue;
			have++;
			if (it->rank_med[k] < it->rank_med[lo] || !it->rank_total[lo])
				lo = k;
			if (it->rank_med[k] > it->rank_med[hi])
				hi = k;
		}
		if (have < 2)
			continue;
		if (json) {
			json_array_append_new(
			    arr,
			    json_pack("{s:s,s:s,s:f,s:s,s:f}", "kernel", name, "straggler",
			              j->labels[lo], "its_med_ns", it->rank_med[lo], "most_waiting",
			              j->labels[hi], "most_waiting_med_ns", it->rank_med[hi]));
			continue;
		}
		if (!header)
			printf(
			    "\nStragglers: per collective kernel, the rank the others waited for "
			    "(its "
			    "instances were shortest: it arrived last; medians)\n%-10s %12s %-10s "
			    "%12s  %s\n",
			    "straggler", "its median", "waited most", "its median", "kernel");
		header = true;
		printf("%-10s %12s %-10s %12s  %s\n", j->labels[lo],
		       cut_format_duration(it->rank_med[lo], a, sizeof(a)), j->labels[hi],
		       cut_format_duration(it->rank_med[hi], b, sizeof(b)), cut_esc(name));
	}
	if (json)
		json_object_set_new(out, "stragglers", arr);
}

int
cut_job_print(int n, char **paths, bool json)
{
	struct job j = {
	    n, calloc((size_t)n, sizeof(char *)), {strtab_new(), NULL, 0}, {strtab_new(), NULL, 0}};
	if (!j.labels)
		err(CUT_EXIT_FATAL, "out of memory");
	for (int k = 0; k < n; k++) {
		json_error_t e;
		json_t *root = json_load_file(paths[k], 0, &e);
		json_t *s = root ? json_object_get(root, "summary") : NULL;
		if (!json_is_object(s))
			errx(CUT_EXIT_FATAL, "%s:%d: not a cutstat -j summary%s%s",
			     cut_esc(paths[k]), e.line, root ? "" : ": ",
			     root ? "" : cut_esc(e.text));
		json_t *rank = json_object_get(s, "rank");
		char label[64];
		if (json_is_integer(rank))
			snprintf(label, sizeof(label), "rank %lld",
			         (long long)json_integer_value(rank));
		else
			snprintf(label, sizeof(label), "#%d", k + 1);
		if (!(j.labels[k] = strdup(label)))
			err(CUT_EXIT_FATAL, "out of memory");
		add_items(&j.fns, json_object_get(s, "functions"), k, n);
		add_items(&j.kernels, json_object_get(s, "kernels"), k, n);
		json_decref(root);
	}
	json_t *out = json ? json_object() : NULL;
	if (json)
		json_object_set_new(out, "summaries", json_integer(n));
	else {
		printf("Job: %d summaries:", n);
		for (int k = 0; k < n; k++)
			printf(" %s", j.labels[k]);
		putchar('\n');
	}
	print_table(&j, &j.fns, "Driver API functions", json, out);
	if (strtab_len(j.kernels.names))
		print_table(&j, &j.kernels, "GPU kernels, copies and memsets", json, out);
	print_stragglers(&j, json, out);
	if (json) {
		json_t *root = json_object();
		json_object_set_new(root, "job", out);
		if (json_dumpf(root, stdout, JSON_INDENT(2)) < 0)
			err(CUT_EXIT_FATAL, "write error on standard output");
		putchar('\n');
		json_decref(root);
	}
	return CUT_EXIT_OK;
}
