/* sort.c: an external merge sort of events by (ts, order added). Events are kept in one arena
 * as records (their numbers, then their strings), given back without parsing; a full arena is
 * sorted and written out as a run of canonical lines; the runs are merged at the end through a
 * heap, and when there are too many of them, merged into one first, so that the open files
 * stay few. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "buf.h"
#include "heap.h"
#include "parse.h"
#include "sort.h"

#define MAX_RUNS 64 /* runs open at once; more are merged into one first */
/* The arena is reserved once (address space only), its memory and room for one more record
 * past it (a record is at most its line, and lines at most 64 MiB): no copy as it fills, as
 * realloc made. (Huge pages were tried: with the kernel's direct compaction they cost more
 * than they saved, now and then twice the time.) */
#define ARENA_SLACK ((size_t)80 << 20)

struct entry {
	int64_t ts;
	uint64_t seq;
	uint64_t line;
	size_t off; /* of the event's record in the arena */
};

/* An event in the arena: its numbers, then its strings, each ended by a NUL, the whole
 * padded to 8 bytes. */
enum { REC_HOST, REC_NAME, REC_CAT, REC_PNAME, REC_ARGS, REC_EXTRA, REC_NSTR };
struct rec {
	int64_t ts, dur, rank, pid, tid, ret, id, parent, nioctl, ioctl_ns;
	uint32_t len[REC_NSTR]; /* string length + 1; 0 for a string absent (NULL) */
	uint32_t has;
	uint32_t layer;
};

/* A run on disk: "line\tcanonical event\n" lines in order, read back through a buffer. */
struct run {
	FILE *f;
	char *text; /* the current line */
	size_t cap;
	uint64_t pos; /* lines read so far: with the run's rank, what orders equal ts */
};

struct head {
	struct cut_heap_key key; /* ts, then the run's rank << 40 | the line's place in it */
	unsigned run;
	uint64_t line;
	char *text;
	size_t len;
};

struct cut_sorter {
	size_t mem;
	struct cut_buf arena; /* records (struct rec) */
	struct cut_buf line;  /* a record written out as a canonical line, for a run */
	struct entry *e;
	size_t n, cap;
	uint64_t seq;
	int64_t last_ts;
	bool sorted; /* added in order so far */
	struct run runs[MAX_RUNS];
	unsigned nruns, total_runs;
	bool finished;
	size_t next;          /* in memory: the next entry to give */
	struct cut_heap heap; /* on disk: the runs by their next event */
	struct cut_parser *parser;
	char *cur; /* the copy the last event given points into */
	size_t curcap;
};

size_t
cut_sort_memory(void)
{
	const char *env = getenv("CUT_SORT_MEMORY");
	char *end;
	unsigned long long mib = env && *env >= '0' && *env <= '9' ? strtoull(env, &end, 10) : 0;
	if (!mib)
		return CUT_SORT_MEMORY;
	/* past what size_t holds (as 2^44 MiB wrapped to 0): all there is */
	return mib > SIZE_MAX >> 20 ? SIZE_MAX & ~(size_t)0xfffff : (size_t)mib << 20;
}

struct cut_sorter *
cut_sorter_new(size_t mem)
{
	struct cut_sorter *s = calloc(1, sizeof(*s));
	if (!s || !(s->parser = cut_parser_new())) {
		free(s);
		return NULL;
	}
	s->mem = mem ? mem : cut_sort_memory();
	s->sorted = true;
	s->last_ts = INT64_MIN;
	heap_init(&s->heap, sizeof(struct head));
	return s;
}

static int
entry_cmp(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

FILE *
cut_temp_file(void)
{
	const char *dir = getenv("TMPDIR");
	char path[4096];
	snprintf(path, sizeof(path), "%s/cutsort.XXXXXX", dir && *dir ? dir : "/tmp");
	int fd = mkstemp(path);
	if (fd < 0)
		return NULL;
	unlink(path);
	FILE *f = fdopen(fd, "w+");
	if (!f)
		close(fd);
	return f;
}

/* Writes one event of a run: its source line, a tab, its canonical text and newline. */
static int
put_line(FILE *f, uint64_t line, const char *text, size_t len)
{
	return fprintf(f, "%llu\t", (unsigned long long)line) < 0 ||
	               fwrite(text, 1, len, f) != len || putc('\n', f) == EOF
	           ? -1
	           : 0;
}

/* The event of the record at off; its strings point into the arena. */
static void
rec_event(const struct cut_sorter *s, size_t off, struct cut_event *ev)
{
	const struct rec *r = (const struct rec *)(s->arena.s + off);
	const char *p = (const char *)(r + 1);
	const char *str[REC_NSTR];
	for (int i = 0; i < REC_NSTR; i++) {
		str[i] = r->len[i] ? p : NULL;
		p += r->len[i];
	}
	ev->ts = r->ts, ev->dur = r->dur, ev->rank = r->rank, ev->pid = r->pid, ev->tid = r->tid;
	ev->ret = r->ret, ev->id = r->id, ev->parent = r->parent, ev->nioctl = r->nioctl;
	ev->ioctl_ns = r->ioctl_ns;
	ev->layer = (enum cut_layer)r->layer;
	ev->has = r->has;
	ev->host = str[REC_HOST], ev->name = str[REC_NAME], ev->cat = str[REC_CAT];
	ev->pname = str[REC_PNAME], ev->args = str[REC_ARGS], ev->extra = str[REC_EXTRA];
}

/* Reads the next line of run r into h; false at its end. */
static bool
run_read(struct cut_sorter *s, unsigned r, struct head *h)
{
	struct run *run = &s->runs[r];
	ssize_t n = getline(&run->text, &run->cap, run->f);
	if (n <= 0)
		return false;
	char *tab = memchr(run->text, '\t', (size_t)n);
	if (!tab)
		return false;
	h->line = strtoull(run->text, NULL, 10);
	h->text = tab + 1;
	h->len = (size_t)(run->text + n - h->text) - 1; /* without its '\n' */
	/* canonical lines start {"ts":N */
	h->key.ts = strtoll(h->text + 6, NULL, 10);
	/* runs are in the order their events were added, and each is sorted by (ts, order) */
	h->key.seq = (uint64_t)r << 40 | run->pos++;
	h->run = r;
	return true;
}

/* Opens the merge of runs [from, nruns): the heap of their first lines. */
static int
merge_open(struct cut_sorter *s, unsigned from)
{
	heap_free(&s->heap);
	heap_init(&s->heap, sizeof(struct head));
	for (unsigned r = from; r < s->nruns; r++) {
		if (fflush(s->runs[r].f) || fseek(s->runs[r].f, 0, SEEK_SET))
			return -1;
		s->runs[r].pos = 0;
		struct head h;
		if (run_read(s, r, &h))
			heap_push(&s->heap, &h);
		else if (ferror(s->runs[r].f))
			return -1;
	}
	return 0;
}

/* The next line of the merge into *h; false when every run is done. */
static bool
merge_next(struct cut_sorter *s, struct head *h)
{
	struct head *top = heap_top(&s->heap);
	if (!top)
		return false;
	/* copy the text out: the run's buffer is reused by its next line */
	if (s->curcap < top->len + 1) {
		char *c = realloc(s->cur, top->len + 1);
		if (!c)
			return false;
		s->cur = c;
		s->curcap = top->len + 1;
	}
	memcpy(s->cur, top->text, top->len);
	s->cur[top->len] = 0;
	*h = *top;
	h->text = s->cur;
	struct head nx;
	if (run_read(s, top->run, &nx)) {
		*top = nx;
		heap_fix_top(&s->heap);
	} else {
		heap_pop(&s->heap, NULL);
	}
	return true;
}

static void
close_runs(struct cut_sorter *s, unsigned from)
{
	for (unsigned r = from; r < s->nruns; r++) {
		fclose(s->runs[r].f);
		free(s->runs[r].text);
	}
	s->nruns = from;
}

/* Too many runs: merges them all into one. */
static int
merge_runs(struct cut_sorter *s)
{
	FILE *f = cut_temp_file();
	if (!f || merge_open(s, 0) < 0) {
		if (f)
			fclose(f);
		return -1;
	}
	struct head h;
	while (merge_next(s, &h))
		if (put_line(f, h.line, h.text, h.len) < 0) {
			fclose(f);
			return -1;
		}
	close_runs(s, 0);
	s->runs[0] = (struct run){.f = f};
	s->nruns = 1;
	return 0;
}

/* Sorts what is in memory and writes it out as a run. */
static int
spill(struct cut_sorter *s)
{
	if (!s->n)
		return 0;
	if (s->nruns == MAX_RUNS && merge_runs(s) < 0)
		return -1;
	qsort(s->e, s->n, sizeof(*s->e), entry_cmp);
	FILE *f = cut_temp_file();
	if (!f)
		return -1;
	for (size_t i = 0; i < s->n; i++) {
		struct cut_event ev;
		rec_event(s, s->e[i].off, &ev);
		buf_reset(&s->line);
		cut_event_format(&s->line, &ev);
		if (put_line(f, s->e[i].line, s->line.s, s->line.len) < 0) {
			fclose(f);
			return -1;
		}
	}
	if (fflush(f)) {
		fclose(f);
		return -1;
	}
	s->runs[s->nruns++] = (struct run){.f = f};
	s->total_runs++;
	s->n = 0;
	buf_reset(&s->arena);
	return 0;
}

int
cut_sorter_add(struct cut_sorter *s, const struct cut_event *ev, uint64_t line)
{
	if (ev->ts < s->last_ts)
		s->sorted = false;
	else
		s->last_ts = ev->ts;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 4096;
		struct entry *e = realloc(s->e, cap * sizeof(*e));
		if (!e)
			return -1;
		s->e = e;
		s->cap = cap;
	}
	const char *str[REC_NSTR] = {ev->host, ev->name, ev->cat, ev->pname, ev->args, ev->extra};
	struct rec r = {ev->ts,     ev->dur,      ev->rank,       ev->pid,
	                ev->tid,    ev->ret,      ev->id,         ev->parent,
	                ev->nioctl, ev->ioctl_ns, .has = ev->has, .layer = (uint32_t)ev->layer};
	size_t size = sizeof(r);
	for (int i = 0; i < REC_NSTR; i++) {
		size_t n = str[i] ? strlen(str[i]) + 1 : 0;
		if (n > UINT32_MAX)
			return errno = E2BIG, -1;
		r.len[i] = (uint32_t)n;
		size += n;
	}
	size = (size + 7) & ~(size_t)7;
	if (!s->arena.s) {
		size_t cap = s->mem + ARENA_SLACK;
		void *a = mmap(NULL, cap, PROT_READ | PROT_WRITE,
		               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (a == MAP_FAILED)
			return errno = ENOMEM, -1;
		s->arena = (struct cut_buf){.s = a, .cap = cap};
	}
	if (s->arena.len + size + 1 > s->arena.cap && s->n && spill(s) < 0)
		return -1;
	if (s->arena.len + size + 1 > s->arena.cap)
		return errno = E2BIG, -1;
	size_t off = s->arena.len;
	char *p = s->arena.s + off;
	memcpy(p, &r, sizeof(r));
	char *q = p + sizeof(r);
	for (int i = 0; i < REC_NSTR; i++) {
		if (r.len[i]) /* str[i] may be NULL when empty */
			memcpy(q, str[i], r.len[i]);
		q += r.len[i];
	}
	s->arena.len += size;
	s->e[s->n++] = (struct entry){ev->ts, s->seq++, line, off};
	if (s->arena.len + s->n * sizeof(struct entry) >= s->mem)
		return spill(s);
	return 0;
}

static int
finish(struct cut_sorter *s)
{
	s->finished = true;
	if (s->nruns == 0) {
		if (!s->sorted)
			qsort(s->e, s->n, sizeof(*s->e), entry_cmp);
		return 0;
	}
	if (spill(s) < 0)
		return -1;
	return merge_open(s, 0);
}

int
cut_sorter_next(struct cut_sorter *s, struct cut_event *ev, uint64_t *line)
{
	if (!s->finished && finish(s) < 0)
		return -1;
	if (s->nruns == 0) { /* all in memory: the records as they are */
		if (s->next == s->n)
			return 0;
		struct entry *e = &s->e[s->next++];
		rec_event(s, e->off, ev);
		if (line)
			*line = e->line;
		return 1;
	}
	struct head h;
	if (!merge_next(s, &h)) {
		for (unsigned r = 0; r < s->nruns; r++)
			if (ferror(s->runs[r].f))
				return errno = EIO, -1;
		return 0;
	}
	char *text = h.text;
	size_t len = h.len;
	uint64_t at = h.line;
	char why[128];
	if (cut_parse(s->parser, text, len, ev, CUT_PARSE_AUTO, why, sizeof(why)) !=
	    CUT_PARSE_EVENT)
		return errno = EINVAL, -1; /* a canonical line of our own: cannot happen */
	if (line)
		*line = at;
	return 1;
}

uint64_t
cut_sorter_count(const struct cut_sorter *s)
{
	return s->seq;
}

unsigned
cut_sorter_runs(const struct cut_sorter *s)
{
	return s->total_runs;
}

int
cut_sorter_was_sorted(const struct cut_sorter *s)
{
	return s->sorted;
}

void
cut_sorter_free(struct cut_sorter *s)
{
	if (!s)
		return;
	close_runs(s, 0);
	heap_free(&s->heap);
	cut_parser_free(s->parser);
	if (s->arena.s)
		munmap(s->arena.s, s->arena.cap);
	buf_free(&s->line);
	free(s->e);
	free(s->cur);
	free(s);
}
