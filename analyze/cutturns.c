/* cutturns: a trace whose processes shared a GPU, their work told apart as cutstat tells it
 * apart (cut-events(5), GPU work on a shared device): each piece of GPU work of a device that
 * several processes used starts at the first moment it kept and ends at the end of the last,
 * and says what it was as recorded (args.told), so that a timeline (cutchrome, cutperfetto,
 * cutplot) and cutgaps show who ran when. Everything else is copied as it is; the output is
 * sorted. Two passes: the first finds the work and tells it apart, the second writes; standard
 * input is kept in a temporary file between them. */
#include <err.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "cut.h"
#include "event.h"
#include "gpustats.h"
#include "heap.h"
#include "meta.h"
#include "reader.h"
#include "sort.h"

static const struct cut_opt_help opts[] = {
    {NULL, NULL},
};

static void
usage(void)
{
	fprintf(stderr, "usage: cutturns [file ...]\n");
	exit(CUT_EXIT_FATAL);
}

static struct {
	struct cut_gpu_stats *gs;
	FILE *spool; /* standard input's events, for the second pass; NULL: files are read again */
	struct cut_buf line;
	struct cut_sorter *sort; /* the input out of order: everything goes through it */
	/* The input in order (the first pass saw no ts go back): every event is written as it
	 * comes, but a piece told apart, which the rule only ever starts later than recorded,
	 * waits here (its line) until the input passes its new start. */
	bool in_order;
	int64_t last_ts;
	struct cut_heap held;
	uint64_t seq;
	struct cut_buf out;
	size_t piece; /* the second pass's pieces of GPU work so far */
	struct cut_buf args;
} g;

struct held_line {
	struct cut_heap_key key;
	char *line;
	size_t len;
};

/* What gpustats_add counts as a piece of work (its told[] is in that order). */
static bool
is_piece(const struct cut_event *ev)
{
	return ev->layer == CUT_GPU && (ev->has & CUT_HAS_DUR) && ev->dur >= 0;
}

static void
first_pass(struct cut_reader *r, struct cut_event *ev, void *arg)
{
	(void)r, (void)arg;
	gpustats_add(g.gs, ev);
	if (ev->ts < g.last_ts)
		g.in_order = false;
	g.last_ts = ev->ts;
	if (!g.spool)
		return;
	buf_reset(&g.line);
	cut_event_format(&g.line, ev);
	buf_addc(&g.line, '\n');
	if (fwrite(g.line.s, 1, g.line.len, g.spool) != g.line.len)
		err(CUT_EXIT_FATAL, "keeping standard input in a temporary file");
}

/* ev's args with "told" added: its span as recorded, the time it kept in all, and which of
 * its parts this is where it kept several. */
static const char *
told_args(const struct cut_event *ev, int64_t kept, size_t part, size_t parts)
{
	buf_reset(&g.args);
	const char *a = ev->args;
	size_t n = a ? strlen(a) : 0;
	while (n && a[n - 1] != '}') /* (the object's closing brace) */
		n--;
	if (n >= 2) {
		buf_add(&g.args, a, n - 1);
		if (n > 2)
			buf_addc(&g.args, ',');
	} else
		buf_addc(&g.args, '{');
	buf_adds(&g.args, "\"told\":{");
	buf_addkv_int(&g.args, "ts", ev->ts); /* (each adds the comma before it) */
	buf_addkv_int(&g.args, "dur", ev->dur);
	buf_addkv_int(&g.args, "kept", kept);
	if (parts > 1) {
		buf_addkv_int(&g.args, "part", (int64_t)part);
		buf_addkv_int(&g.args, "parts", (int64_t)parts);
	}
	buf_adds(&g.args, "}}");
	return g.args.s;
}

static void write_event(struct cut_buf *out, const struct cut_event *ev);

/* Writes the held lines that start no later than ts (an event of the input at ts follows
 * them; one held before it with the same ts came first in the input). */
static void
release_held(int64_t ts)
{
	struct held_line *h;
	while ((h = heap_top(&g.held)) && h->key.ts <= ts) {
		buf_add(&g.out, h->line, h->len);
		free(h->line);
		heap_pop(&g.held, NULL);
	}
	if (g.out.len >= (1u << 20))
		cut_write_buf(&g.out);
}

/* ev, as it is to be written; moved: a piece told apart, which may have to wait. */
static void
keep_as(struct cut_reader *r, const struct cut_event *ev, bool moved)
{
	if (!g.in_order) {
		if (cut_sorter_add(g.sort, ev, cut_reader_line(r)) < 0)
			err(CUT_EXIT_FATAL, "sorting");
		return;
	}
	if (!moved) {
		release_held(ev->ts);
		write_event(&g.out, ev);
		if (g.out.len >= (1u << 20))
			cut_write_buf(&g.out);
		return;
	}
	size_t at = g.out.len;
	write_event(&g.out, ev);
	struct held_line h = {
	    {ev->ts, g.seq++}, cut_xstrndup(g.out.s + at, g.out.len - at), g.out.len - at};
	g.out.len = at;
	heap_push(&g.held, &h);
}

static void
keep(struct cut_reader *r, const struct cut_event *ev)
{
	keep_as(r, ev, false);
}

/* A piece of a shared device as told apart: a part of it kept, one event each (a kernel
 * preempted for another's turn keeps its time before and after it), or where it kept
 * nothing, an instant at its end. */
static void
told_piece(struct cut_reader *r, const struct cut_event *ev, const struct cut_gpu_told *t)
{
	const struct cut_gpu_told_part *p = t->nparts ? &g.gs->told_parts[t->first] : NULL;
	bool same = t->nparts == 1 ? p->s == ev->ts && p->e == ev->ts + ev->dur
	                           : !t->nparts && !ev->dur && t->resolved == ev->ts;
	if (same) { /* (an instant that kept nothing, as a trace cutturns wrote holds it) */
		keep(r, ev);
		return;
	}
	struct cut_event e = *ev;
	if (!t->nparts) {
		e.args = told_args(ev, 0, 0, 0);
		e.ts = t->resolved;
		e.dur = 0;
		keep_as(r, &e, true);
		return;
	}
	for (size_t k = 0; k < t->nparts; k++) {
		e.args = told_args(ev, t->kept, k + 1, t->nparts);
		e.ts = p[k].s;
		e.dur = p[k].e - p[k].s;
		keep_as(r, &e, true);
	}
}

static void
second_pass(struct cut_reader *r, struct cut_event *ev, void *arg)
{
	(void)arg;
	if (is_piece(ev)) {
		const struct cut_gpu_told *t = g.piece < g.gs->ntold ? &g.gs->told[g.piece] : NULL;
		g.piece++;
		if (t && t->shared) {
			told_piece(r, ev, t);
			return;
		}
	}
	keep(r, ev);
}

/* Writes ev to out; a header says the trace is sorted, as it now is. */
static void
write_event(struct cut_buf *out, const struct cut_event *ev)
{
	if (ev->layer == CUT_META && cut_meta_kind(ev) == CUT_META_HEADER)
		cut_meta_sorted_header(out, ev);
	else {
		cut_event_format(out, ev);
		buf_addc(out, '\n');
	}
}

/* Reads r to its end through the second pass and closes it; whether it read it all. */
static bool
read_through(struct cut_reader *r)
{
	struct cut_event ev;
	int rc;
	while ((rc = cut_reader_next(r, &ev)) > 0)
		second_pass(r, &ev, NULL);
	bool whole = rc == 0 && !cut_reader_failed(r);
	cut_reader_close(r);
	return whole;
}

/* The second pass over the files, or over standard input's events kept. An input that cannot
 * be read now was reported by the first pass, or changed since (main's count of the work). */
static int
read_again(int nfiles, char *argv[])
{
	int status = CUT_EXIT_OK;
	if (!g.spool) {
		for (int i = 0; i < nfiles; i++) {
			struct cut_reader *r = cut_reader_open(argv[i], CUT_READ_SILENT);
			if (!r || !read_through(r))
				status = CUT_EXIT_LOST;
		}
		return status;
	}
	if (fflush(g.spool) != 0 || fseek(g.spool, 0, SEEK_SET) != 0)
		err(CUT_EXIT_FATAL, "the temporary file of standard input");
	int fd = dup(fileno(g.spool));
	struct cut_reader *r = fd < 0 ? NULL : cut_reader_open_fd(fd, "<stdin>", CUT_READ_SILENT);
	if (!r)
		err(CUT_EXIT_FATAL, "the temporary file of standard input");
	if (!read_through(r))
		errx(CUT_EXIT_FATAL,
		     "the temporary file of standard input could not be read again");
	return status;
}

int
main(int argc, char *argv[])
{
	cut_std_args_help(argc, argv, usage, opts);
	if (getopt(argc, argv, "") != -1)
		usage();
	argc -= optind;
	argv += optind;
	bool from_stdin = argc == 0;
	for (int i = 0; i < argc; i++)
		from_stdin |= strcmp(argv[i], "-") == 0;
	if (from_stdin && !(g.spool = cut_temp_file()))
		err(CUT_EXIT_FATAL, "a temporary file for standard input");
	g.gs = gpustats_new(); /* (exits on no memory) */
	g.gs->want_told = true;
	g.in_order = true;
	g.last_ts = INT64_MIN;
	int status = cut_read_all(argc, argv, first_pass, NULL);
	gpustats_finish(g.gs);
	if (g.gs->told_earlier) /* (not what the rule does: then the sort keeps the order) */
		g.in_order = false;
	heap_init(&g.held, sizeof(struct held_line));
	if (!g.in_order && !(g.sort = cut_sorter_new(0)))
		cut_out_of_memory();
	int again = read_again(argc, argv);
	if (again != CUT_EXIT_OK && status == CUT_EXIT_OK)
		status = again;
	if (g.piece != g.gs->ntold) { /* (a file changed between the passes) */
		warnx(
		    "the input changed between the two readings: %zu pieces of GPU work, then %zu",
		    g.gs->ntold, g.piece);
		status = CUT_EXIT_LOST;
	}
	struct cut_event ev;
	int rc;
	while (g.sort && (rc = cut_sorter_next(g.sort, &ev, NULL)) != 0) {
		if (rc < 0) {
			warn("sorting");
			status = CUT_EXIT_LOST;
			break;
		}
		write_event(&g.out, &ev);
		if (g.out.len >= (1u << 20))
			cut_write_buf(&g.out);
	}
	release_held(INT64_MAX);
	cut_write_buf(&g.out);
	buf_free(&g.out);
	heap_free(&g.held);
	buf_free(&g.line);
	buf_free(&g.args);
	cut_sorter_free(g.sort);
	gpustats_free(g.gs);
	if (g.spool)
		fclose(g.spool);
	return cut_finish_output(status);
}
