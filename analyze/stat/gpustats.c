/* gpustats.c: one-pass accumulation of the gpu layer's numbers (gpustats.h). Every piece of
 * work is kept (its times and what it belongs to); gpustats_finish tells apart the work of
 * processes sharing a device (gpushare.h), then puts each interval under its name, device,
 * stream and process for the busy times and medians. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cut.h"
#include "args.h"
#include "gpushare.h"
#include "gpustats.h"
#include "idmap.h"
#include "procs.h"
#include "strtab.h"
#include "summary.h"

struct span {
	int64_t s, e;
};

/* A piece of work as recorded: its name, device ("P device D") and stream keys, its process. */
struct piece {
	int64_t s, e, submit; /* submit: -1 when absent or after the start */
	int64_t proc;
	uint32_t name, dev, stream;
	uint32_t shape;   /* 1 + its kernel and launch (shape_of), 0: not a kernel's */
	uint32_t params;  /* its kernel's parameters, bytes (args.params); 0: not known */
	bool from_call;   /* args.start "call" or "twins" */
	bool start_exact; /* no args.start: the device timed it */
	bool end_exact;   /* no args.end */
};

/* The work of one name, device, stream or process. */
struct group {
	int64_t proc; /* devices, streams, processes: the process (procs.h); -1: several */
	const char *cat;
	int64_t bytes, bw_bytes, bw_time, bounded; /* gpustats.h */
	struct span *v; /* the time its pieces kept (gpushare.h), a span or more each */
	size_t n, cap, work;
};

struct table {
	struct cut_strtab *keys;
	struct group *g;
	size_t cap;
};

/* Devices, streams and processes are keyed by the process (procs.h) here, "P device D" and
 * "P device D stream S" with P its index; gpustats_finish names them as reports do. */
struct priv {
	struct table names, devs, streams, procs;
	struct piece *pieces;
	size_t npieces, cap_pieces;
	struct cut_procs *pr;
	struct cut_strtab *shown; /* the keys as reports show them */
	struct cut_strtab *shapes; /* kernels and their launches (shape_of) */
	struct cut_idmap *devids; /* (process, ordinal) of device records to uuid[] */
	char **uuid;
	size_t cap_uuid;
	int64_t *lat;
	size_t nlat, lat_cap;
	int64_t *op_ns; /* per process: its trailer's gpu gap_ns, 0 where none */
	size_t cap_op;
	struct cut_buf key; /* a stream's key, built */
};

/* Adds b to *a, saturating at INT64_MAX (as stats.c does); *sat says it did. */
static inline void
sat_add(bool *sat, int64_t *a, int64_t b)
{
	if (__builtin_add_overflow(*a, b, a)) {
		*a = b > 0 ? INT64_MAX : INT64_MIN;
		*sat = true;
	}
}

static uint32_t shape_of(struct priv *p, const struct cut_event *ev, size_t name);

struct cut_gpu_stats *
gpustats_new(void)
{
	struct cut_gpu_stats *g = cut_xcalloc(1, sizeof(*g));
	struct priv *p = cut_xcalloc(1, sizeof(*p));
	p->names.keys = strtab_new();
	p->devs.keys = strtab_new();
	p->streams.keys = strtab_new();
	p->procs.keys = strtab_new();
	p->devids = idmap_new();
	p->pr = cut_procs_new();
	p->shown = strtab_new();
	p->shapes = strtab_new();
	g->priv = p;
	return g;
}

/* The group of key in t, made when new. */
static struct group *
group_at(struct table *t, const char *key, size_t *index)
{
	size_t i = strtab_intern(t->keys, key);
	CUT_GROW(t->g, i + 1, t->cap); /* zeroed */
	if (index)
		*index = i;
	return &t->g[i];
}

static void
group_add(struct group *gr, int64_t proc, int64_t s, int64_t e)
{
	gr->proc = proc;
	CUT_GROW(gr->v, gr->n + 1, gr->cap);
	gr->v[gr->n++] = (struct span){s, e};
}

/* A piece of work, the parts it kept (none: a span of no length at its resolved start). */
static void
group_piece(struct group *gr, int64_t proc, const struct cut_gpu_piece *q,
            const struct cut_gpu_span *parts)
{
	gr->work++;
	if (!q->nparts)
		group_add(gr, proc, q->resolved, q->resolved);
	for (size_t k = q->first; k < q->first + q->nparts; k++)
		group_add(gr, proc, parts[k].s, parts[k].e);
}

/* The uuid a process's device ordinal was recorded with, or NULL. */
static const char *
uuid_of(const struct priv *p, int64_t proc, int64_t dev)
{
	size_t i = idmap_get2(p->devids, proc, dev);
	return i == IDMAP_NONE ? NULL : p->uuid[i];
}

/* A string member of args, whole (NULL when absent): trace strings have no length limit. */
static char *
args_str(const char *args, const char *key)
{
	char small[64];
	int n = cut_args_str(args, key, small, sizeof(small));
	if (n < 0)
		return NULL;
	char *s = cut_xmalloc((size_t)n + 1);
	cut_args_str(args, key, s, (size_t)n + 1);
	return s;
}

static const char *
cat_name(const char *c)
{
	static const char *const known[] = {"kernel", "memcpy", "memset", "graph"};
	for (size_t i = 0; c && i < 4; i++)
		if (strcmp(c, known[i]) == 0)
			return known[i];
	return "other";
}

/* A process's stream operation as its writer calibrated it (the trailer's gpu gap_ns): how much
 * later than its START the work that ran first after a switch began (gpushare.h, rule 3). */
static void
trailer_gap(struct priv *p, int64_t proc, const char *args)
{
	const char *gpu = cut_args_find(args, "gpu");
	int64_t gap;
	if (!gpu || *gpu != '{' || cut_args_int(gpu, "gap_ns", &gap) != 0 || gap <= 0)
		return;
	CUT_GROW(p->op_ns, (size_t)proc + 1, p->cap_op); /* zeroed */
	p->op_ns[proc] = gap;
}

void
gpustats_add(struct cut_gpu_stats *g, const struct cut_event *ev)
{
	struct priv *p = g->priv;
	int64_t proc = (int64_t)cut_procs_of(p->pr, ev);
	if (ev->layer == CUT_META) {
		int64_t dev;
		char *u;
		bool isnew;
		if (strcmp(ev->name, "trailer") == 0) {
			trailer_gap(p, proc, ev->args);
			return;
		}
		if (strcmp(ev->name, "device") == 0 &&
		    cut_args_int(ev->args, "device", &dev) == 0 &&
		    (u = args_str(ev->args, "uuid")) != NULL) {
			size_t i = idmap_put2(p->devids, proc, dev, &isnew);
			if (isnew && *u) { /* the first record of the ordinal names it */
				CUT_GROW(p->uuid, i + 1, p->cap_uuid);
				p->uuid[i] = u;
			} else {
				if (isnew)
					idmap_del2(p->devids, proc, dev);
				free(u);
			}
		}
		return;
	}
	if (ev->layer != CUT_GPU || !(ev->has & CUT_HAS_DUR) || ev->dur < 0)
		return;
	const char *told = cut_args_find(ev->args, "told");
	int64_t part = 1;
	if (told) {
		g->told_before = true;
		cut_args_int(told, "part", &part);
	}
	int64_t dev = -1, submit, bytes;
	size_t name, devkey, streamkey;
	char key[64];
	g->count++;
	struct group *ng = group_at(&p->names, ev->name, &name);
	ng->cat = cat_name(ev->cat);
	char se[8] = "", ee[8] = "";
	cut_args_str(ev->args, "start", se, sizeof(se));
	cut_args_str(ev->args, "end", ee, sizeof(ee));
	bool bound = !strcmp(se, "bound") || !strcmp(ee, "bound");
	if (bound) {
		g->bounded++;
		sat_add(&g->saturated, &g->bounded_ns, ev->dur);
	}
	if (cut_args_int(ev->args, "bytes", &bytes) == 0 && bytes > 0) {
		sat_add(&g->saturated, &ng->bytes, bytes);
		if (bound)
			ng->bounded++;
		else {
			sat_add(&g->saturated, &ng->bw_bytes, bytes);
			sat_add(&g->saturated, &ng->bw_time, ev->dur);
		}
	}
	cut_args_int(ev->args, "device", &dev);
	char *stream = args_str(ev->args, "stream");
	/* Devices by process and ordinal here; gpustats_finish joins those of one physical GPU
	 * (its device records may come after its first work). */
	snprintf(key, sizeof(key), "%lld device %lld", (long long)proc, (long long)dev);
	group_at(&p->devs, key, &devkey)->proc = proc;
	p->key.len = 0;
	buf_addf(&p->key, "%s stream %s", key, stream ? stream : "?");
	free(stream);
	group_at(&p->streams, p->key.s, &streamkey)->proc = proc;
	/* (a part of a piece cutturns split after the first: not when its work started) */
	if (cut_args_int(ev->args, "submit", &submit) != 0 || submit < 0 || submit > ev->ts ||
	    part > 1)
		submit = -1;
	int64_t params; /* (CUDA's limit: 32,764 bytes) */
	if (cut_args_int(ev->args, "params", &params) != 0 || params < 0 || params > UINT32_MAX)
		params = 0;
	/* A start from the call, or from its end less its twins' (cut-events(5)): an estimate. */
	char start[8];
	int n = cut_args_str(ev->args, "start", start, sizeof(start));
	bool from_call =
	    (n == 4 && strcmp(start, "call") == 0) || (n == 5 && strcmp(start, "twins") == 0);
	CUT_GROW(p->pieces, p->npieces + 1, p->cap_pieces);
	p->pieces[p->npieces++] = (struct piece){.s = ev->ts,
	                                         .e = ev->ts + ev->dur,
	                                         .submit = submit,
	                                         .params = (uint32_t)params,
	                                         .proc = proc,
	                                         .name = (uint32_t)name,
	                                         .dev = (uint32_t)devkey,
	                                         .stream = (uint32_t)streamkey,
	                                         .shape = shape_of(p, ev, name),
	                                         .from_call = from_call,
	                                         .start_exact = !cut_args_find(ev->args, "start"),
	                                         .end_exact = !cut_args_find(ev->args, "end")};
}

/* A kernel as launched: its name (its index in p->names), grid and block (1 + its index among
 * them; 0: no grid, not a kernel's), which the rule of a shared device compares its pieces by
 * (gpushare.h). */
static uint32_t
shape_of(struct priv *p, const struct cut_event *ev, size_t name)
{
	if (!ev->cat || strcmp(ev->cat, "kernel") != 0) /* (only kernels have a grid) */
		return 0;
	const char *g = cut_args_find(ev->args, "grid"), *b = cut_args_find(ev->args, "block");
	const char *ge = g ? strchr(g, ']') : NULL, *be = b ? strchr(b, ']') : NULL;
	if (!ge || !be)
		return 0;
	p->key.len = 0; /* (not buf_addf: this is every kernel's) */
	buf_addi64(&p->key, (int64_t)name);
	buf_addc(&p->key, '\n');
	buf_add(&p->key, g, (size_t)(ge - g));
	buf_addc(&p->key, '\n');
	buf_add(&p->key, b, (size_t)(be - b));
	return (uint32_t)strtab_intern(p->shapes, p->key.s) + 1;
}

static int
cmp_span(const void *a, const void *b)
{
	const struct span *x = a, *y = b;
	return (x->s > y->s) - (x->s < y->s);
}

/* Time covered by at least one span (sorts them). */
static int64_t
covered(struct span *v, size_t n, int64_t *first, int64_t *last, bool *sat)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_span);
	int64_t busy = 0, cs = v[0].s, ce = v[0].e;
	*first = cs;
	*last = ce;
	for (size_t i = 1; i < n; i++) {
		if (v[i].s > ce) {
			sat_add(sat, &busy, ce - cs);
			cs = v[i].s;
			ce = v[i].e;
		} else if (v[i].e > ce)
			ce = v[i].e;
		if (ce > *last)
			*last = ce;
	}
	sat_add(sat, &busy, ce - cs);
	return busy;
}

static struct cut_gpu_busy *
busy_table(struct table *t, size_t *n, bool *sat)
{
	*n = strtab_len(t->keys);
	struct cut_gpu_busy *b = cut_xcalloc(*n, sizeof(*b));
	for (size_t i = 0; i < *n; i++) {
		struct group *gr = &t->g[i];
		b[i].key = strtab_key(t->keys, i);
		b[i].proc = gr->proc;
		b[i].work = (int64_t)gr->work;
		b[i].busy = covered(gr->v, gr->n, &b[i].first, &b[i].last, sat);
	}
	return b;
}

/* A piece on a physical device (an index), by process, for the overlaps. */
struct dspan {
	int64_t dev, proc, s, e;
};

static int
by_dev_proc(const void *a, const void *b)
{
	const struct dspan *x = a, *y = b;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->proc != y->proc)
		return x->proc < y->proc ? -1 : 1;
	return (x->s > y->s) - (x->s < y->s);
}

static int
by_dev(const void *a, const void *b)
{
	const struct dspan *x = a, *y = b;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return (x->s > y->s) - (x->s < y->s);
}

/* Adds the time the spans v[i..] of one key cover to *to; returns the index past them. */
static size_t
cover_run(const struct dspan *v, size_t i, size_t n, bool proc, int64_t *to, bool *sat)
{
	int64_t cs = v[i].s, ce = v[i].e;
	size_t j = i + 1;
	for (; j < n && v[j].dev == v[i].dev && (!proc || v[j].proc == v[i].proc); j++) {
		if (v[j].s > ce) {
			sat_add(sat, to, ce - cs);
			cs = v[j].s;
			ce = v[j].e;
		} else if (v[j].e > ce)
			ce = v[j].e;
	}
	sat_add(sat, to, ce - cs);
	return j;
}

/* What each process kept busy of each physical device, summed, less the device's own busy:
 * how long the processes' work overlapped there (a GPU time-slicing between them runs one at
 * a time), into ov[device]; the processes into procs[device]. Sorts v. */
static void
overlaps(struct dspan *v, size_t n, size_t ndev, int64_t *ov, int64_t *procs, bool *sat)
{
	int64_t *own = cut_xcalloc(ndev, sizeof(*own));
	qsort(v, n, sizeof(*v), by_dev_proc);
	for (size_t i = 0; i < n;) {
		procs[v[i].dev]++;
		i = cover_run(v, i, n, true, &ov[v[i].dev], sat);
	}
	qsort(v, n, sizeof(*v), by_dev);
	for (size_t i = 0; i < n;)
		i = cover_run(v, i, n, false, &own[v[i].dev], sat);
	for (size_t j = 0; j < ndev; j++) {
		ov[j] -= own[j];
		if (procs[j] < 2 || ov[j] < 0)
			ov[j] = 0;
	}
	free(own);
}

/* Names the rows of a busy table as reports show them: the index of the process a key starts
 * with replaced by the process's label ("pid 7", "pid 7 on gpu1"), with its pid, host and
 * rank. The keys stay valid until gpustats_free. */
static void
label(struct priv *p, struct cut_gpu_busy *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const char *key = b[i].key;
		size_t proc = (size_t)b[i].proc;
		b[i].rank = -1;
		p->key.len = 0;
		if (b[i].proc < 0)
			buf_adds(&p->key, key);
		else {
			b[i].pid = cut_procs_pid(p->pr, proc);
			b[i].host = cut_procs_host(p->pr, proc);
			b[i].rank = cut_procs_rank(p->pr, proc);
			buf_addf(&p->key, "%s%s", cut_procs_label(p->pr, proc),
			         key + strspn(key, "0123456789"));
		}
		b[i].key = strtab_key(p->shown, strtab_intern(p->shown, p->key.s));
	}
}

static int
cmp_name(const void *a, const void *b)
{
	const struct cut_gpu_name *x = a, *y = b;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return strcmp(x->name, y->name);
}

static double
quantile(const int64_t *v, size_t n, double q)
{
	size_t i = (size_t)(q * (double)(n - 1) + 0.5);
	return (double)v[i < n ? i : n - 1];
}

static void
table_free(struct table *t)
{
	size_t n = strtab_len(t->keys);
	for (size_t i = 0; i < n; i++)
		free(t->g[i].v);
	free(t->g);
}

/* The physical device of each of the keys "P device D": the uuid its device record gave,
 * else the key itself (a device no other process can be known to share). */
static struct cut_strtab *
physical(struct priv *p, size_t **of)
{
	struct cut_strtab *phys = strtab_new();
	size_t n = strtab_len(p->devs.keys);
	*of = cut_xcalloc(n, sizeof(**of));
	for (size_t i = 0; i < n; i++) {
		long long pid, dev;
		const char *k = strtab_key(p->devs.keys, i), *uuid = NULL;
		if (sscanf(k, "%lld device %lld", &pid, &dev) == 2)
			uuid = uuid_of(p, pid, dev);
		(*of)[i] = strtab_intern(phys, uuid ? uuid : k);
	}
	return phys;
}

void
gpustats_finish(struct cut_gpu_stats *g)
{
	struct priv *p = g->priv;
	size_t *phys_of, n = p->npieces;
	struct table phys = {physical(p, &phys_of), NULL, 0};
	size_t nphys = strtab_len(phys.keys);
	CUT_GROW(phys.g, nphys, phys.cap); /* its groups by index, as physical() interned them */
	size_t ndevkeys = strtab_len(p->devs.keys);
	bool *named = cut_xcalloc(ndevkeys ? ndevkeys : 1, sizeof(*named)); /* by a uuid */
	for (size_t i = 0; i < ndevkeys; i++)
		named[i] =
		    strcmp(strtab_key(phys.keys, phys_of[i]), strtab_key(p->devs.keys, i)) != 0;
	/* A device's processes: the first met, and whether another was (its work is then told
	 * apart, gpushare.h; the rest goes as recorded, at no cost). */
	int64_t *procs = cut_xcalloc(nphys ? nphys : 1, sizeof(*procs));
	int64_t *first = cut_xcalloc(nphys ? nphys : 1, sizeof(*first));
	size_t nshared = 0;
	for (size_t i = 0; i < n; i++) {
		size_t dev = phys_of[p->pieces[i].dev];
		if (!procs[dev]) {
			procs[dev] = 1;
			first[dev] = p->pieces[i].proc;
		} else if (first[dev] != p->pieces[i].proc)
			procs[dev] = 2;
	}
	for (size_t i = 0; i < n; i++)
		nshared += procs[phys_of[p->pieces[i].dev]] > 1;
	/* The shared devices' pieces: as recorded (their overlap), then told apart unless -O. */
	struct cut_gpu_piece *gp = cut_xcalloc(nshared ? nshared : 1, sizeof(*gp));
	struct dspan *ds = cut_xcalloc(nshared ? nshared : 1, sizeof(*ds));
	for (size_t i = 0, k = 0; i < n; i++) {
		const struct piece *pc = &p->pieces[i];
		size_t dev = phys_of[pc->dev];
		if (procs[dev] < 2)
			continue;
		int64_t op = (size_t)pc->proc < p->cap_op ? p->op_ns[pc->proc] : 0;
		gp[k] = (struct cut_gpu_piece){.start = pc->s,
		                               .end = pc->e,
		                               .device = dev,
		                               .proc = (uint64_t)pc->proc,
		                               .from_call = pc->from_call,
		                               .start_exact = pc->start_exact,
		                               .end_exact = pc->end_exact,
		                               .submit = pc->submit,
		                               .op_ns = op,
		                               .params = pc->params,
		                               .shape = pc->shape};
		ds[k++] = (struct dspan){(int64_t)dev, pc->proc, pc->s, pc->e};
	}
	int64_t *ov_rec = cut_xcalloc(nphys ? nphys : 1, sizeof(*ov_rec));
	int64_t *ov = cut_xcalloc(nphys ? nphys : 1, sizeof(*ov));
	int64_t *moved = cut_xcalloc(nphys ? nphys : 1, sizeof(*moved));
	int64_t *moved_ns = cut_xcalloc(nphys ? nphys : 1, sizeof(*moved_ns));
	int64_t *counted = cut_xcalloc(nphys ? nphys : 1, sizeof(*counted));
	overlaps(ds, nshared, nphys, ov_rec, counted, &g->saturated);
	for (size_t j = 0; j < nphys; j++)
		if (procs[j] > 1) /* the shared ones' processes counted */
			procs[j] = counted[j];
	free(counted);
	free(ds);
	struct cut_gpu_span *parts = NULL;
	size_t nparts = 0;
	int64_t *switch_ns = cut_xcalloc(nphys ? nphys : 1, sizeof(*switch_ns));
	if (g->told_before) /* (telling it apart again would move what the rule moved again) */
		g->as_recorded = true;
	size_t cap_told = 0;
	if (g->want_told) {
		g->told = cut_xcalloc(n ? n : 1, sizeof(*g->told));
		g->ntold = n;
	}
	if (!g->as_recorded) {
		g->resolved = (int64_t)cut_gpu_resolve(gp, nshared, &parts, &nparts);
		for (size_t k = 0; k < nshared; k++)
			switch_ns[gp[k].device] = gp[k].switch_ns;
	} else {
		parts = cut_xcalloc(nshared ? nshared : 1, sizeof(*parts));
		for (size_t k = 0; k < nshared; k++) {
			gp[k].resolved = gp[k].start;
			gp[k].kept = gp[k].end - gp[k].start;
			gp[k].first = nparts;
			gp[k].nparts = gp[k].kept > 0;
			parts[nparts] = (struct cut_gpu_span){gp[k].start, gp[k].end};
			nparts += gp[k].nparts;
		}
	}
	ds = cut_xcalloc(nparts ? nparts : 1, sizeof(*ds));
	size_t nds = 0, *proc_group = NULL, cap_pg = 0;
	char key[32];
	g->total = 0;
	for (size_t i = 0, k = 0; i < n; i++) {
		const struct piece *pc = &p->pieces[i];
		size_t dev = phys_of[pc->dev];
		/* its parts kept: a shared device's from the rule, another's its span */
		struct cut_gpu_span one = {pc->s, pc->e};
		struct cut_gpu_piece alone = {
		    .resolved = pc->s, .kept = pc->e - pc->s, .nparts = pc->e > pc->s};
		const struct cut_gpu_piece *q = &alone;
		const struct cut_gpu_span *pv = &one;
		if (procs[dev] > 1) {
			q = &gp[k++];
			pv = parts;
			for (size_t j = q->first; j < q->first + q->nparts; j++)
				ds[nds++] =
				    (struct dspan){(int64_t)dev, pc->proc, parts[j].s, parts[j].e};
		}
		if (g->want_told) {
			struct cut_gpu_told *t = &g->told[i];
			t->shared = procs[dev] > 1;
			t->kept = q->kept;
			t->resolved = q->resolved;
			t->first = g->ntold_parts;
			t->nparts = t->shared ? q->nparts : 0;
			CUT_GROW(g->told_parts, g->ntold_parts + t->nparts, cap_told);
			for (size_t j = 0; j < t->nparts; j++)
				g->told_parts[g->ntold_parts++] = (struct cut_gpu_told_part){
				    pv[q->first + j].s, pv[q->first + j].e};
			if ((t->nparts ? pv[q->first].s : q->resolved) < pc->s)
				g->told_earlier = true;
		}
		if (q->kept < pc->e - pc->s) {
			moved[dev]++;
			sat_add(&g->saturated, &moved_ns[dev], pc->e - pc->s - q->kept);
			sat_add(&g->saturated, &g->resolved_ns, pc->e - pc->s - q->kept);
		}
		sat_add(&g->saturated, &g->total, q->kept);
		struct group *ng = &p->names.g[pc->name]; /* its duration: the time it kept */
		ng->work++;
		group_add(ng, pc->proc, 0, q->kept);
		/* a device a uuid names is the processes', else the process's own */
		group_piece(&phys.g[dev], named[pc->dev] ? -1 : pc->proc, q, pv);
		group_piece(&p->streams.g[pc->stream], pc->proc, q, pv);
		size_t pi = (size_t)pc->proc;
		if (pi >= cap_pg) {
			size_t old = cap_pg;
			CUT_GROW(proc_group, pi + 1, cap_pg);
			memset(proc_group + old, 0xff, (cap_pg - old) * sizeof(*proc_group));
		}
		if (proc_group[pi] == SIZE_MAX) {
			snprintf(key, sizeof(key), "%lld", (long long)pc->proc);
			group_at(&p->procs, key, &proc_group[pi]);
		}
		group_piece(&p->procs.g[proc_group[pi]], pc->proc, q, pv);
		if (pc->submit >= 0) {
			CUT_GROW(p->lat, p->nlat + 1, p->lat_cap);
			p->lat[p->nlat++] = q->resolved - pc->submit;
		}
	}
	/* The overlap left, on the shared devices (the others' is none). */
	int64_t *left = cut_xcalloc(nphys ? nphys : 1, sizeof(*left));
	overlaps(ds, nds, nphys, ov, left, &g->saturated);
	free(left);
	free(ds);
	free(parts);
	free(gp);
	free(first);
	free(named);
	free(proc_group);
	free(phys_of);
	free(p->pieces);
	p->pieces = NULL;
	p->npieces = 0;
	g->nnames = strtab_len(p->names.keys);
	g->names = cut_xcalloc(g->nnames, sizeof(*g->names));
	int64_t *d = NULL;
	size_t dcap = 0;
	for (size_t i = 0; i < g->nnames; i++) {
		struct group *gr = &p->names.g[i];
		struct cut_gpu_name *nm = &g->names[i];
		nm->name = strtab_key(p->names.keys, i);
		nm->cat = gr->cat;
		nm->bytes = gr->bytes;
		nm->bw_bytes = gr->bw_bytes;
		nm->bw_time = gr->bw_time;
		nm->bounded = gr->bounded;
		nm->count = (int64_t)gr->n;
		CUT_GROW(d, gr->n, dcap);
		double mean = 0, m2 = 0;
		__int128 sum = 0;
		for (size_t k = 0; k < gr->n; k++) {
			int64_t x = gr->v[k].e - gr->v[k].s;
			d[k] = x;
			sat_add(&g->saturated, &nm->total, x);
			sum += x;
			if (!k || x < nm->min)
				nm->min = x;
			if (x > nm->max)
				nm->max = x;
			double dx = (double)x - mean; /* Welford */
			mean += dx / (double)(k + 1);
			m2 += dx * ((double)x - mean);
		}
		cut_hist_of(&nm->hist, d, gr->n);
		qsort(d, gr->n, sizeof(*d), cut_cmp_i64);
		nm->med = gr->n % 2 ? (double)d[gr->n / 2]
		                    : ((double)d[gr->n / 2 - 1] + (double)d[gr->n / 2]) / 2;
		nm->stddev = gr->n > 1 ? sqrt(m2 / (double)(gr->n - 1)) : 0;
		nm->avg = (double)sum / (double)gr->n;
	}
	free(d);
	qsort(g->names, g->nnames, sizeof(*g->names), cmp_name);
	/* A device is the physical GPU where its uuid is known: processes sharing it add up. */
	g->devices = busy_table(&phys, &g->ndevices, &g->saturated);
	for (size_t j = 0; j < g->ndevices; j++) {
		g->devices[j].procs = procs[j];
		g->devices[j].overlap = ov[j];
		g->devices[j].overlap_recorded = ov_rec[j];
		g->devices[j].resolved = moved[j];
		g->devices[j].resolved_ns = moved_ns[j];
		g->devices[j].switch_ns = switch_ns[j];
	}
	free(switch_ns);
	free(ov_rec);
	free(ov);
	free(procs);
	free(moved);
	free(moved_ns);
	label(p, g->devices, g->ndevices);
	table_free(&phys);
	strtab_free(phys.keys);
	g->streams = busy_table(&p->streams, &g->nstreams, &g->saturated);
	label(p, g->streams, g->nstreams);
	g->procs = busy_table(&p->procs, &g->nprocs, &g->saturated);
	label(p, g->procs, g->nprocs);
	g->lat_count = (int64_t)p->nlat;
	if (p->nlat) {
		qsort(p->lat, p->nlat, sizeof(*p->lat), cut_cmp_i64);
		g->lat_min = p->lat[0];
		g->lat_max = p->lat[p->nlat - 1];
		g->lat_med = quantile(p->lat, p->nlat, 0.5);
		g->lat_p90 = quantile(p->lat, p->nlat, 0.9);
		g->lat_p99 = quantile(p->lat, p->nlat, 0.99);
	}
}

void
gpustats_free(struct cut_gpu_stats *g)
{
	if (!g)
		return;
	free(g->told);
	free(g->told_parts);
	struct priv *p = g->priv;
	for (size_t i = 0; i < g->nnames; i++)
		cut_hist_free(&g->names[i].hist);
	free(g->names);
	free(g->devices);
	free(g->streams);
	free(g->procs);
	table_free(&p->names);
	table_free(&p->devs);
	table_free(&p->streams);
	table_free(&p->procs);
	strtab_free(p->names.keys);
	strtab_free(p->devs.keys);
	strtab_free(p->streams.keys);
	strtab_free(p->procs.keys);
	idmap_free(p->devids);
	cut_procs_free(p->pr);
	strtab_free(p->shown);
	strtab_free(p->shapes);
	for (size_t i = 0; i < p->cap_uuid; i++)
		free(p->uuid[i]);
	free(p->uuid);
	free(p->key.s);
	free(p->lat);
	free(p->op_ns);
	free(p);
	free(g);
}
