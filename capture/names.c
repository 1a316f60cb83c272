/* names.c: the names cutcapture's records refer to by number: handles (from the calls that
 * name them, per process), threads (their name and process) and processes (their rank in a
 * distributed job, from their environment). */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/types.h>

#include "records.h"
#include "cut.h"
#include "event.h"
#include "idmap.h"
#include "names.h"

/* A map from a pair of integers to a string (and a flag): idmap.h's index into an array. */
struct entry {
	uint64_t a, b;
	char *s;
	uint32_t aux; /* threads: pid */
	bool flag;
};

struct table {
	struct cut_idmap *ids; /* (a, b) -> index in e */
	struct entry *e;
	size_t cap;
};

static struct entry *
table_get(const struct table *t, uint64_t a, uint64_t b)
{
	size_t i = t->ids ? idmap_get2(t->ids, (int64_t)a, (int64_t)b) : IDMAP_NONE;
	return i == IDMAP_NONE ? NULL : &t->e[i];
}

/* The entry for (a, b), created empty when missing. Entries may move. */
static struct entry *
table_put(struct table *t, uint64_t a, uint64_t b)
{
	if (!t->ids)
		t->ids = idmap_new();
	bool isnew;
	size_t i = idmap_put2(t->ids, (int64_t)a, (int64_t)b, &isnew);
	CUT_GROW(t->e, i + 1, t->cap);
	if (isnew)
		t->e[i] = (struct entry){.a = a, .b = b};
	return &t->e[i];
}

static void
table_free(struct table *t)
{
	size_t n = t->ids ? idmap_span(t->ids) : 0;
	for (size_t i = 0; i < n; i++)
		free(t->e[i].s);
	free(t->e);
	idmap_free(t->ids);
	memset(t, 0, sizeof(*t));
}

static void
set_str(char **dst, const char *s, size_t n)
{
	free(*dst);
	*dst = cut_xstrndup(s, n);
}

static struct {
	struct table handles;  /* (pid, handle) -> name; flag: its symbol record was written */
	struct table threads;  /* (tid, 0) -> comm; aux pid; flag: thread record written */
	struct table labels;   /* (pid, 0) -> struct label (in s) */
	struct cut_name found; /* what get returned last */
	struct entry *untold;  /* a host stub get named, whose symbol record is due */
} N;

/* A process's rank: cur from `since` on (its last exec), prev before. */
struct label {
	uint64_t since;
	struct cut_rank cur, prev;
};

static const struct cut_rank no_rank = {-1, -1, -1};

/* The rank named by the environment of process pid, now. */
static struct cut_rank
read_rank(uint32_t pid)
{
	struct cut_rank r = no_rank;
	char path[64];
	snprintf(path, sizeof(path), "/proc/%u/environ", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return r;
	size_t cap = 0, n = 0;
	char *buf = NULL;
	for (ssize_t k = 1; k > 0 && n < 1 << 24;) { /* 16 MiB of it at most */
		CUT_GROW(buf, n + (1 << 16) + 1, cap);
		k = read(fd, buf + n, cap - n - 1);
		n += k > 0 ? (size_t)k : 0;
	}
	close(fd);
	buf[n] = 0;
	struct cut_env_block b = {buf, n};
	cut_rank_read(&r, cut_env_block_get, &b);
	free(buf);
	return r;
}

static struct label *
label_of(uint32_t pid, bool *isnew)
{
	struct entry *e = table_put(&N.labels, pid, 0);
	*isnew = !e->s;
	if (!e->s) {
		struct label *l = cut_xcalloc(1, sizeof(*l));
		l->cur = l->prev = no_rank;
		e->s = (char *)l;
	}
	return (struct label *)e->s;
}

void
names_env_exec(uint32_t pid, uint64_t ts)
{
	bool isnew;
	struct label *l = label_of(pid, &isnew);
	if (!isnew) {
		l->prev = l->cur;
		l->since = ts;
	}
	l->cur = read_rank(pid);
	if (isnew)
		l->prev = l->cur;
}

void
names_env_block(uint32_t pid, const char *env, size_t len)
{
	bool isnew;
	struct label *l = label_of(pid, &isnew);
	struct cut_rank r;
	struct cut_env_block b = {env, len};
	/* A variable cut off at the end of the block is not taken */
	while (b.len > 0 && env[b.len - 1] != 0)
		b.len--;
	cut_rank_read(&r, cut_env_block_get, &b);
	l->cur = r;
	if (isnew)
		l->prev = r;
}

void
names_env_fork(uint32_t pid, uint32_t ppid)
{
	/* The child's environment is its parent's until it execs (reading the child's own
	 * would race with that exec). */
	bool isnew;
	struct label *p = label_of(ppid, &isnew);
	if (isnew)
		p->cur = p->prev = read_rank(ppid);
	struct cut_rank r = p->cur;
	struct label *l = label_of(pid, &isnew);
	l->cur = l->prev = r;
	l->since = 0;
}

const struct cut_rank *
names_rank(uint32_t pid, uint64_t ts)
{
	if (!pid)
		return NULL;
	bool isnew;
	struct label *l = label_of(pid, &isnew);
	if (isnew) /* never noted: its environment as it is now, if it is still there */
		l->cur = l->prev = read_rank(pid);
	const struct cut_rank *r = ts >= l->since ? &l->cur : &l->prev;
	return r->rank >= 0 ? r : NULL;
}

static const struct cut_name *
handle_get(struct cut_names *n, uint32_t pid, uint64_t h, bool ok, enum cut_name_of of)
{
	(void)n, (void)ok;
	struct entry *e = table_get(&N.handles, pid, h);
	if (!e || !e->s)
		return NULL;
	if (of == CUT_NAME_HOSTFN && !e->flag) {
		e->flag = true;
		N.untold = e;
	}
	N.found = (struct cut_name){e->s, NULL, 0};
	return &N.found;
}

bool
names_untold(uint64_t *handle, const char **name)
{
	struct entry *e = N.untold;
	N.untold = NULL;
	if (!e)
		return false;
	*handle = e->b;
	*name = e->s;
	return true;
}

static struct cut_names handles = {handle_get};

struct cut_names *
names_handles(void)
{
	return &handles;
}

void
names_set_handle(uint32_t pid, uint64_t handle, const char *name, size_t len, bool told)
{
	struct entry *e = table_put(&N.handles, pid, handle);
	set_str(&e->s, name, len);
	e->flag = told;
	N.untold = NULL; /* the table may have moved */
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
	table_free(&N.labels);
	table_free(&N.handles);
	table_free(&N.threads);
	memset(&N, 0, sizeof(N));
}
