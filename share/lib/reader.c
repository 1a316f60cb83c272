/* reader.c: buffered line input with line numbers and the one bad-line policy. */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cut.h"
#include "inflate.h"
#include "parse.h"
#include "reader.h"
#include "text.h"

struct cut_reader {
	int fd;
	char *path;
	bool strict, quiet, silent, eof, stopped, failed;
	bool skipping; /* dropping the rest of a line longer than CUT_LINE_MAX */
	bool partial;  /* the last line returned had no newline */
	char *buf;
	size_t cap, start, end, scan; /* unread data is buf[start, end); no '\n' in [start, scan) */
	uint64_t line, event_line, errors, bytes, serial;
	size_t event_len;
	struct cut_parser *parser;
	struct cut_inflate *in; /* plain, gzip or zstd */
	char lost[160];         /* why the input broke off ("": a read error, lost_errno) */
	int lost_errno;
	char why[256];
};

/* A reader of fd (-1: the open failed, errno says why), named name in messages. */
static struct cut_reader *
reader_new(int fd, char *name, unsigned flags)
{
	int e = errno;
	struct cut_reader *r = calloc(1, sizeof(*r));
	if (!r) {
		if (fd > STDIN_FILENO)
			close(fd);
		free(name);
		errno = ENOMEM;
		return NULL;
	}
	const char *strict = getenv("CUT_STRICT");
	r->strict = (flags & CUT_READ_STRICT) || (strict && *strict && strcmp(strict, "0") != 0);
	r->silent = flags & CUT_READ_SILENT;
	r->quiet = r->silent || (flags & CUT_READ_QUIET);
	static uint64_t serial;
	r->serial = ++serial;
	r->fd = fd;
	r->path = name;
	r->cap = 1 << 20;
	r->buf = malloc(r->cap);
	r->parser = cut_parser_new();
	if (r->fd >= 0)
		r->in = cut_inflate_new(r->fd);
	if (r->fd < 0 || !r->path || !r->buf || !r->parser || !r->in) {
		e = r->fd < 0 ? e : ENOMEM;
		cut_reader_close(r);
		errno = e;
		return NULL;
	}
	return r;
}

struct cut_reader *
cut_reader_open(const char *path, unsigned flags)
{
	if (!path || strcmp(path, "-") == 0)
		return reader_new(STDIN_FILENO, strdup("<stdin>"), flags);
	/* the name as messages give it: a file name may hold an escape sequence or a newline
	 * that would forge a line of the report */
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	return reader_new(fd, fd < 0 ? NULL : strdup(cut_esc(path)), flags);
}

struct cut_reader *
cut_reader_open_fd(int fd, const char *name, unsigned flags)
{
	return reader_new(fd, strdup(name), flags);
}

static void report(struct cut_reader *r, uint64_t line, const char *why);

/* Makes room after the unread data, growing the buffer only for a line longer than it. A
 * line past CUT_LINE_MAX is reported and dropped up to its newline, so that no input can take
 * more memory than that. */
static void
make_room(struct cut_reader *r)
{
	if (r->start > 0) {
		memmove(r->buf, r->buf + r->start, r->end - r->start);
		r->end -= r->start;
		r->scan -= r->start;
		r->start = 0;
	}
	if (r->end - r->start >= CUT_LINE_MAX) {
		if (!r->skipping) {
			char why[96];
			snprintf(why, sizeof(why), "line longer than %d MiB: skipped",
			         CUT_LINE_MAX >> 20);
			report(r, r->line + 1, why);
		}
		r->skipping = true;
		r->start = r->end = r->scan = 0;
		return;
	}
	if (r->end == r->cap) {
		char *b = realloc(r->buf, r->cap * 2);
		if (!b)
			err(CUT_EXIT_FATAL, "%s: line %llu too long for memory", r->path,
			    (unsigned long long)r->line + 1);
		r->buf = b;
		r->cap *= 2;
	}
}

/* The end of the input: a read or decompression error that broke it off is said now, after
 * the lines before it were read, with the line it broke off in. */
static bool
at_end(struct cut_reader *r)
{
	if (r->failed && !r->stopped) {
		uint64_t line = r->line + (r->partial ? 0 : 1);
		if (!r->silent && r->lost[0])
			warnx("%s:%llu: %s", r->path, (unsigned long long)line, r->lost);
		else if (!r->silent)
			warnx("%s: read: %s", r->path, strerror(r->lost_errno));
		r->stopped = true;
	}
	return false;
}

/* Next line without its newline; false at end of input. A last line without a newline
 * still counts. */
static bool
next_line(struct cut_reader *r, char **line, size_t *len)
{
	for (;;) {
		char *nl = memchr(r->buf + r->scan, '\n', r->end - r->scan);
		if (nl && r->skipping) {
			/* the end of an overlong line: it was reported when it passed the limit */
			r->start = r->scan = (size_t)(nl - r->buf) + 1;
			r->line++;
			r->skipping = false;
			continue;
		}
		if (r->skipping && r->eof) {
			r->line++;
			r->skipping = false;
			r->start = r->scan = r->end;
			return at_end(r);
		}
		if (nl || (r->eof && r->end > r->start)) {
			size_t stop = nl ? (size_t)(nl - r->buf) : r->end;
			*line = r->buf + r->start;
			*len = stop - r->start;
			r->start = r->scan = nl ? stop + 1 : stop;
			r->line++;
			r->partial = !nl;
			/* A byte-order mark, which some Windows tools put at a file's start, is no
			 * part of its first line. */
			if (r->line == 1 && *len >= 3 && !memcmp(*line, "\xef\xbb\xbf", 3))
				*line += 3, *len -= 3;
			return true;
		}
		r->scan = r->end;
		if (r->eof)
			return at_end(r);
		make_room(r);
		ssize_t n = cut_inflate_read(r->in, r->buf + r->end, r->cap - r->end, r->lost,
		                             sizeof(r->lost));
		if (n < 0) {
			/* the rest is lost; the lines before the break are still read */
			r->lost_errno = errno;
			r->failed = r->eof = true;
			continue;
		}
		if (n == 0)
			r->eof = true;
		r->end += (size_t)n;
		r->bytes += (uint64_t)n;
	}
}

static void
report(struct cut_reader *r, uint64_t line, const char *why)
{
	if (!r->quiet)
		warnx("%s:%llu: %s", r->path, (unsigned long long)line, cut_esc(why));
	r->errors++;
	if (r->strict)
		r->stopped = true;
}

int
cut_reader_next(struct cut_reader *r, struct cut_event *ev)
{
	char *line = NULL;
	size_t len = 0;
	while (!r->stopped && next_line(r, &line, &len)) {
		int rc =
		    cut_parse(r->parser, line, len, ev, CUT_PARSE_AUTO, r->why, sizeof(r->why));
		if (rc == CUT_PARSE_NONE)
			continue;
		if (rc == CUT_PARSE_EVENT) {
			r->event_line = r->line;
			r->event_len = len;
			if (r->why[0])
				report(r, r->line, r->why);
			return 1;
		}
		report(r, r->line, r->why);
	}
	if (r->stopped)
		return -1;
	uint64_t bline;
	if (cut_parse_flush(r->parser, ev, &bline) == CUT_PARSE_EVENT) {
		r->event_line = bline;
		report(r, bline, "legacy begin without end: kept as an instant");
		return r->stopped ? -1 : 1;
	}
	return 0;
}

int
cut_reader_next_line(struct cut_reader *r, char **line, size_t *len)
{
	if (!r->stopped && next_line(r, line, len)) {
		r->event_line = r->line;
		r->event_len = *len;
		return 1;
	}
	return r->stopped ? -1 : 0;
}

void
cut_reader_warn(struct cut_reader *r, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	report(r, r->event_line, msg);
}

const char *
cut_reader_path(const struct cut_reader *r)
{
	return r->path;
}

uint64_t
cut_reader_line(const struct cut_reader *r)
{
	return r->event_line;
}

size_t
cut_reader_line_bytes(const struct cut_reader *r)
{
	return r->event_len;
}

uint64_t
cut_reader_errors(const struct cut_reader *r)
{
	return r->errors;
}

bool
cut_reader_failed(const struct cut_reader *r)
{
	return r->failed;
}

uint64_t
cut_reader_serial(const struct cut_reader *r)
{
	return r->serial;
}

uint64_t
cut_reader_bytes(const struct cut_reader *r)
{
	return r->bytes;
}

uint64_t
cut_reader_close(struct cut_reader *r)
{
	if (!r)
		return 0;
	uint64_t errors = r->errors;
	if (r->fd > STDIN_FILENO)
		close(r->fd);
	cut_parser_free(r->parser);
	cut_inflate_free(r->in);
	free(r->buf);
	free(r->path);
	free(r);
	return errors;
}

/* An input named on the command line, for cut_check_inputs: its file and its place. */
struct named {
	dev_t dev;
	ino_t ino;
	bool once; /* can be read only once: not a regular file */
	int i;
};

static int
by_file(const void *a, const void *b)
{
	const struct named *x = a, *y = b;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return (x->i > y->i) - (x->i < y->i);
}

void
cut_check_inputs(int nfiles, char *const files[], unsigned flags)
{
	struct named *v = cut_xcalloc(nfiles > 0 ? (size_t)nfiles : 0, sizeof(*v));
	int n = 0, stdin_at = -1;
	for (int i = 0; i < nfiles; i++) {
		struct stat st;
		bool in = strcmp(files[i], "-") == 0;
		if (in && stdin_at >= 0)
			errx(CUT_EXIT_FATAL, "%s and %s are the same input: name each once",
			     cut_esc(files[stdin_at]), cut_esc(files[i]));
		if (in)
			stdin_at = i;
		if ((in ? fstat(STDIN_FILENO, &st) : stat(files[i], &st)) < 0 ||
		    S_ISDIR(st.st_mode))
			continue;
		v[n++] = (struct named){st.st_dev, st.st_ino, !S_ISREG(st.st_mode), i};
	}
	qsort(v, (size_t)n, sizeof(*v), by_file);
	for (int k = 1; k < n; k++)
		if (v[k].dev == v[k - 1].dev && v[k].ino == v[k - 1].ino &&
		    (v[k].once || (flags & CUT_INPUTS_DISTINCT)))
			errx(CUT_EXIT_FATAL, "%s and %s are the same input: name each once",
			     cut_esc(files[v[k - 1].i]), cut_esc(files[v[k].i]));
	free(v);
}

int
cut_read_all(int nfiles, char *const files[], cut_event_fn *fn, void *arg)
{
	int status = CUT_EXIT_OK;
	cut_check_inputs(nfiles, files, 0);
	for (int i = 0; i < (nfiles ? nfiles : 1); i++) {
		const char *path = nfiles ? files[i] : NULL;
		struct cut_reader *rd = cut_reader_open(path, 0);
		if (!rd) {
			warn("%s", path ? cut_esc(path) : "<stdin>");
			status = CUT_EXIT_LOST;
			continue;
		}
		struct cut_event ev;
		int rc;
		while ((rc = cut_reader_next(rd, &ev)) > 0)
			fn(rd, &ev, arg);
		bool failed = cut_reader_failed(rd);
		if (cut_reader_close(rd) && status == CUT_EXIT_OK)
			status = CUT_EXIT_BADINPUT;
		if (failed)
			status = CUT_EXIT_LOST;
		else if (rc < 0) /* strict mode: stop at the first bad line */
			break;
	}
	return status;
}
