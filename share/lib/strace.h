/* strace.h: import of `strace -f -ttt -T -e trace=ioctl` output (also with -y, -yy, -v,
 * -X raw or -X verbose, and strace -o's "PID  " prefix) as cut ioctl events, so NVIDIA
 * ioctls recorded without BPF get the same decoding. */
#ifndef CUT_STRACE_H
#define CUT_STRACE_H

#include <stddef.h>
#include <stdint.h>

#include "event.h"

struct cut_strace;

/* What an import has seen so far. */
struct cut_strace_counts {
	uint64_t ioctls;     /* ioctl events produced */
	uint64_t other;      /* ioctls on files that are not NVIDIA devices (by -y path, or a
	                        request strace itself named, such as TCGETS): left out */
	uint64_t unfinished; /* calls never resumed (kept as instants) */
	uint64_t skipped;    /* lines of other system calls, signals and exits: ignored */
};

/* A new importer. Returns NULL when memory runs out. */
struct cut_strace *strace_new(void);
void strace_free(struct cut_strace *s);

/*
 * Reads one line of strace output (without its newline). line is the 1-based line number,
 * kept for messages about calls that never resumed. Returns 0, or -1 with a reason in why
 * when the line is not strace output this importer understands (the caller reports it
 * with its file and line and goes on). Finished calls become ready for strace_next.
 *
 * Timestamps: -ttt prints CLOCK_REALTIME seconds; an event's ts is that time in
 * nanoseconds since the epoch (the start of the call; for a call split into
 * "<unfinished ...>" and "<... ioctl resumed>" lines, the time of the first). Its dur is -T's
 * time in the call, else the time between the two halves. pid and tid are both the number
 * strace prints with -f (a thread id; 0 without -f).
 */
int strace_feed(struct cut_strace *s, const char *line, size_t len, uint64_t lineno, char *why,
                size_t whylen);
/* Marks the end of input: calls still unfinished become ready, as instants. */
void strace_finish(struct cut_strace *s);
/*
 * Takes the next ready event, in the order the calls started. An event is ready once it
 * and every call that started before it have finished (or the input has ended). Returns 1
 * with *ev filled (its strings stay valid until the next call), 0 when none is ready.
 * When the event is a call that never resumed, *unfinished_line is its line number, else 0.
 */
int strace_next(struct cut_strace *s, struct cut_event *ev, uint64_t *unfinished_line);
/* Counts so far. */
struct cut_strace_counts strace_counts(const struct cut_strace *s);

#endif
