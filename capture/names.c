/* names.c: the names cutcapture's records refer to by number: handles (from the calls that
 * name them, per process) and threads (their name and process). */
#include <err.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/types.h>

#include "cutcapture.h"
#include "cut.h"
#include "event.h"
#include "names.h"

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
set_str(char **dst, const char *s, size_t n)
{
	free(*dst);
	*dst = strndup(s, n);
	if (!*dst)
		err(CUT_EXIT_FATAL, "strdup");
}

static struct {
	struct table handles;  /* (pid, handle) -> name */
	struct table threads;  /* (tid, 0) -> comm; aux pid; flag: thread record written */
	struct cut_name found; /* what get returned last */
} N;

static const struct cut_name *
handle_get(struct cut_names *n, uint32_t pid, uint64_t h, bool ok, enum cut_name_of of)
{
	(void)n, (void)ok, (void)of;
	struct entry *e = table_get(&N.handles, pid, h);
	if (!e || !e->s)
		return NULL;
	N.found = (struct cut_name){e->s, NULL, 0};
	return &N.found;
}

static struct cut_names handles = {handle_get};

struct cut_names *
names_handles(void)
{
	return &handles;
}

void
names_set_handle(uint32_t pid, uint64_t handle, const char *name, size_t len)
{
	struct entry *e = table_put(&N.handles, pid, handle);
	set_str(&e->s, name, len);
}

void
names_thread_note(uint32_t pid, uint32_t tid, const char *comm)
{
	if (!tid)
		return;
	struct entry *e = table_get(&N.threads, tid, 0);
	if (e && (e->s || !comm))
		return;
	e = table_put(&N.threads, tid, 0);
	e->aux = pid;
	char path[64], buf[CC_COMMLEN + 1];
	snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", pid, tid);
	FILE *f = comm ? NULL : fopen(path, "r");
	if (f) {
		if (fgets(buf, sizeof(buf), f)) {
			buf[strcspn(buf, "\n")] = 0;
			set_str(&e->s, buf, strlen(buf));
		}
		fclose(f);
	} else if (comm) {
		snprintf(buf, sizeof(buf), "%.*s", CC_COMMLEN, comm);
		set_str(&e->s, buf, strlen(buf));
	}
}

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

bool
names_thread_known(uint32_t tid)
{
	return table_get(&N.threads, tid, 0) != NULL;
}

uint32_t
names_thread_pid(uint32_t tid)
{
	struct entry *e = table_get(&N.threads, tid, 0);
	if (!e || !e->aux) {
		/* A thread never seen in a record (one that only sleeps): from /proc. */
		names_thread_note(tid_pid(tid), tid, NULL);
		e = table_get(&N.threads, tid, 0);
	}
	return e ? e->aux : 0;
}

const char *
names_thread_first(uint32_t pid, uint32_t tid)
{
	struct entry *e = table_put(&N.threads, tid, 0);
	if (e->flag)
		return NULL;
	e->flag = true;
	if (!e->aux)
		e->aux = pid;
	return e->s;
}

void
names_free(void)
{
	table_free(&N.handles);
	table_free(&N.threads);
	memset(&N, 0, sizeof(N));
}
