/* procs.c: processes by pid and host, with the rule for records that lack host or rank
 * (procs.h). Every tool asks it of every record: the processes of recent records are looked
 * at first, in a small cache by pid. */
#include <err.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "buf.h"
#include "cut.h"
#include "idmap.h"
#include "meta.h"
#include "procs.h"
#include "strtab.h"

struct proc {
	int64_t pid;
	size_t host;               /* 1 + index in hosts; 0: none known */
	int64_t ev_rank, arg_rank; /* from an envelope, from a process record's args; -1: none */
};

#define NRECENT_BITS 6
#define NRECENT (1 << NRECENT_BITS)

struct cut_procs {
	struct cut_strtab *hosts;
	struct cut_idmap *bypid, *byhost; /* pid, (host, pid) -> index in the arrays below */
	size_t *bypid_proc, *byhost_proc, capbypid, capbyhost;
	struct proc *v;
	size_t n, cap;
	/* the processes of recent records, by pid and the host they named (NULL: none) */
	struct recent {
		bool used;
		int64_t pid;
		const char *host;
		size_t proc;
	} recent[NRECENT];
	struct cut_buf label;
};

struct cut_procs *
cut_procs_new(void)
{
	struct cut_procs *p = cut_xcalloc(1, sizeof(*p));
	p->hosts = strtab_new();
	p->bypid = idmap_new();
	p->byhost = idmap_new();
	return p;
}

void
cut_procs_free(struct cut_procs *p)
{
	if (!p)
		return;
	strtab_free(p->hosts);
	idmap_free(p->bypid);
	idmap_free(p->byhost);
	free(p->bypid_proc);
	free(p->byhost_proc);
	free(p->v);
	buf_free(&p->label);
	free(p);
}

static size_t
new_proc(struct cut_procs *p, size_t host, int64_t pid)
{
	CUT_GROW(p->v, p->n + 1, p->cap);
	p->v[p->n] = (struct proc){pid, host, -1, -1};
	return p->n++;
}

/* The host a record names: its envelope's, else a header's (kind) args.host; 1 + its index, or
 * 0. */
static size_t
host_of(struct cut_procs *p, const struct cut_event *ev, enum cut_meta_kind kind)
{
	if (ev->host)
		return strtab_intern(p->hosts, ev->host) + 1;
	if (kind != CUT_META_HEADER)
		return 0;
	struct cut_meta m;
	size_t host = 0;
	if (cut_meta_read(ev, &m) == CUT_META_HEADER && m.header.host && *m.header.host)
		host = strtab_intern(p->hosts, m.header.host) + 1;
	cut_meta_release(&m);
	return host;
}

/* The process of a pid and host (0: none) by the rule. */
static size_t
lookup(struct cut_procs *p, int64_t pid, size_t host)
{
	bool isnew;
	size_t k = idmap_put(p->bypid, pid, &isnew);
	CUT_GROW(p->bypid_proc, k + 1, p->capbypid);
	if (isnew)
		p->bypid_proc[k] = new_proc(p, host, pid);
	size_t i = p->bypid_proc[k];
	if (!host || p->v[i].host == host)
		return i;
	size_t h = idmap_put2(p->byhost, (int64_t)host, pid, &isnew);
	CUT_GROW(p->byhost_proc, h + 1, p->capbyhost);
	if (isnew && !p->v[i].host) /* the first of the pid, met without a host so far */
		p->v[i].host = host, p->byhost_proc[h] = i;
	else if (isnew)
		p->byhost_proc[h] = new_proc(p, host, pid);
	return p->byhost_proc[h];
}

size_t
cut_procs_of(struct cut_procs *p, const struct cut_event *ev)
{
	size_t i;
	/* headers and process records say more in their args; the rest only in the envelope
	 * (a name's first letter first: most meta records are symbols) */
	enum cut_meta_kind kind = CUT_META_NONE;
	if (ev->layer == CUT_META && (*ev->name == 'h' || *ev->name == 'p'))
		kind = cut_meta_kind(ev);
	bool says = kind == CUT_META_HEADER || kind == CUT_META_PROCESS;
	struct recent *r =
	    &p->recent[(uint64_t)ev->pid * 0x9E3779B97F4A7C15u >> (64 - NRECENT_BITS)];
	if (!says && r->used && ev->pid == r->pid &&
	    (ev->host ? r->host && strcmp(ev->host, r->host) == 0 : !r->host))
		i = r->proc;
	else {
		size_t host = host_of(p, ev, kind);
		i = lookup(p, ev->pid, host);
		if (!says)
			*r = (struct recent){true, ev->pid,
			                     host ? strtab_key(p->hosts, host - 1) : NULL, i};
	}
	struct proc *pr = &p->v[i];
	if ((ev->has & CUT_HAS_RANK) && ev->rank >= 0 && pr->ev_rank < 0)
		pr->ev_rank = ev->rank;
	if (kind == CUT_META_PROCESS && pr->arg_rank < 0) {
		struct cut_meta m;
		if (cut_meta_read(ev, &m) == CUT_META_PROCESS && m.task.rank != CUT_ABSENT &&
		    m.task.rank >= 0)
			pr->arg_rank = m.task.rank;
		cut_meta_release(&m);
	}
	return i;
}

size_t
cut_procs_count(const struct cut_procs *p)
{
	return p->n;
}

int64_t
cut_procs_pid(const struct cut_procs *p, size_t i)
{
	return p->v[i].pid;
}

const char *
cut_procs_host(const struct cut_procs *p, size_t i)
{
	return p->v[i].host ? strtab_key(p->hosts, p->v[i].host - 1) : NULL;
}

int64_t
cut_procs_rank(const struct cut_procs *p, size_t i)
{
	return p->v[i].ev_rank >= 0 ? p->v[i].ev_rank : p->v[i].arg_rank;
}

size_t
cut_procs_hosts(const struct cut_procs *p)
{
	return strtab_len(p->hosts);
}

const char *
cut_procs_label(const struct cut_procs *p, size_t i)
{
	struct cut_buf *b = (struct cut_buf *)&p->label;
	const char *host = cut_procs_host(p, i);
	buf_reset(b);
	buf_addf(b, "pid %lld", (long long)p->v[i].pid);
	if (host && cut_procs_hosts(p) > 1)
		buf_addf(b, " on %s", host);
	return b->s;
}
