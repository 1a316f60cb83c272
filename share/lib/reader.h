/* reader.h: the input of every tool: files or stdin read line by line through the parser,
 * with line numbers and the one bad-line policy. */
#ifndef CUT_READER_H
#define CUT_READER_H

#include <stdbool.h>
#include <stdint.h>

#include "event.h"

/* The reader: a file or stdin, line numbers, and the one error policy of all tools. */
struct cut_reader;

enum {
	CUT_READ_STRICT = 1 << 0, /* stop at the first bad line (also: CUT_STRICT=1 in env) */
	CUT_READ_QUIET = 1 << 1,  /* count bad lines but say nothing (a read error is still said) */
	CUT_READ_SILENT = 1 << 2, /* say nothing at all, not even a read error: a second reading
	                           * of a file that another reader reports on */
};

/* The longest line read (bytes, newline excluded): a longer one is reported, skipped up to its
 * newline and counted as a bad line, so that no input takes more memory than this. */
#define CUT_LINE_MAX (64 << 20)

/*
 * Opens path for reading; NULL or "-" means standard input. Returns NULL with errno set
 * when the file cannot be opened (the caller reports it).
 */
struct cut_reader *cut_reader_open(const char *path, unsigned flags);
/* Reads the open file fd (closed by cut_reader_close), named name in messages as given. */
struct cut_reader *cut_reader_open_fd(int fd, const char *name, unsigned flags);
/*
 * Reads the next event. A bad line is reported on stderr as "prog: file:line: reason" (the
 * reason escaped by cut_esc: it may quote the trace), counted and skipped. Returns 1 with *ev
 * filled, 0 at end of input, -1 when reading must stop (strict mode after a bad line, or a
 * read error, both already reported; cut_reader_failed tells them apart).
 */
int cut_reader_next(struct cut_reader *r, struct cut_event *ev);
/*
 * Reads the next line as it is, without its newline, for a tool that looks at lines before
 * (or instead of) parsing them: *line points into the reader's buffer, valid until the next
 * call. cut_reader_line then gives its number; a line past CUT_LINE_MAX is skipped as by
 * cut_reader_next (so numbers may jump). Returns 1, 0 at end of input, -1 when reading must
 * stop (a read error, already reported unless silent; cut_reader_failed says so).
 */
int cut_reader_next_line(struct cut_reader *r, char **line, size_t *len);
/* Reports a problem at the line of the last event returned, in the reader's format, and
 * counts it as a bad line. */
void cut_reader_warn(struct cut_reader *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Name used in messages: the path escaped by cut_esc, "<stdin>" for standard input. */
const char *cut_reader_path(const struct cut_reader *r);
/* Line number of the last event returned (1-based). */
uint64_t cut_reader_line(const struct cut_reader *r);
/* Bytes of that line, its newline excluded (for a begin and end of an older format joined,
 * the end's). */
size_t cut_reader_line_bytes(const struct cut_reader *r);
/* Bad lines seen so far. */
uint64_t cut_reader_errors(const struct cut_reader *r);
/* Whether reading stopped on a read error (an I/O error, a directory): the rest of the input
 * is lost. */
bool cut_reader_failed(const struct cut_reader *r);
/* A number of its own for each reader this process opened (1, 2, ...): a new input. */
uint64_t cut_reader_serial(const struct cut_reader *r);
/* Bytes read so far. */
uint64_t cut_reader_bytes(const struct cut_reader *r);
/* Closes the reader. Returns its count of bad lines. */
uint64_t cut_reader_close(struct cut_reader *r);

enum {
	CUT_INPUTS_DISTINCT = 1 << 0, /* also refuse a regular file named twice */
};
/*
 * Refuses an input named twice among the nfiles files, exiting with status 2 after
 * "prog: A and B are the same input: name each once": standard input ("-", or a name of the
 * same pipe or terminal such as /dev/stdin), or any other file that can be read only once
 * (a pipe, a FIFO, a device), since two readers would each get part of it; with
 * CUT_INPUTS_DISTINCT, any file under two names. Names that cannot be looked at are left to
 * the open that follows. cut_read_all calls it first.
 */
void cut_check_inputs(int nfiles, char *const files[], unsigned flags);

/* What cut_read_all calls for each event; r is its reader, for cut_reader_warn. */
typedef void cut_event_fn(struct cut_reader *r, struct cut_event *ev, void *arg);
/*
 * The input loop of a filter: reads every event of the nfiles files in turn (standard input
 * when nfiles is 0; "-" names it too) and calls fn(reader, event, arg) for each. fn may change
 * the event; its strings belong to the reader. A file that cannot be opened or read (a
 * directory, an I/O error) is reported and the loop goes on with the next one. Returns
 * CUT_EXIT_OK; CUT_EXIT_BADINPUT when bad lines were reported (in strict mode reading stops
 * at the first); CUT_EXIT_LOST when an input, or the rest of one, could not be read.
 */
int cut_read_all(int nfiles, char *const files[], cut_event_fn *fn, void *arg);

#endif
