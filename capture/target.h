/* target.h: the processes cutcapture traces: the command, started stopped before exec until
 * every probe is in place, or a running process (-p) with its whole tree; when they are done;
 * and the signals cutcapture gets, passed on to the command when it did not get them too. */
#ifndef CUT_CAPTURE_TARGET_H
#define CUT_CAPTURE_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct cutcapture_bpf;

struct target {
	pid_t child;    /* the command; 0 with -p */
	pid_t pid;      /* -p: the process followed with its tree; 0 otherwise */
	char **argv;    /* the command line, for the header */
	bool started;   /* the command was let run */
	bool done;      /* the command was reaped: wstatus is its wait status */
	bool root_done; /* the command, or the -p process, has exited */
	int wstatus;
	int go_fd, fail_fd; /* the command waits before exec for a byte on go_fd */
	int pidfd;          /* -p: a pidfd of the process, -1 if none */
	char **pid_argv;    /* -p: argv, from /proc */
	char *pid_cmdline;
	/* A signal from kill(1) waiting to be passed on to the command. */
	int handled, forward;
	uint64_t forward_at, forward_since;
};

/* Catches SIGINT, SIGTERM and SIGHUP: a first one ends the command as it says, a second one
 * (or any with -p, or once the command has exited) ends the capture now. */
void target_catch_signals(void);
/* Forks the command, which waits before exec until target_start; its standard output goes to
 * standard error when stdout_is_trace; env, when not NULL, sets its environment in the child
 * (returning 0, or -1 with errno set: exec is then not tried, and target_start says why).
 * Exits with status 2 when it cannot fork. */
void target_spawn(struct target *t, char **argv, bool stdout_is_trace, int (*env)(void));
/* Keeps sig's disposition as cutcapture was given it (call before changing it), for the
 * command target_spawn starts. */
void target_keep_disposition(int sig);
/* Whether -p pid can be traced: returns 0, or -1 (saying why) when it does not exist, is a
 * zombie, or is cutcapture or one of its ancestors. */
int target_check(pid_t pid);
/* For -p: returns 0, or -1 (saying so) when target_check fails. */
int target_attach(struct target *t, pid_t pid);
/* Has the BPF side follow the command, or the -p process and every descendant it has now
 * (queuing a process record for each, at ts); later ones come through the fork tracepoint.
 * Tells the BPF side which process the command is, for the signals it gets. */
void target_follow(struct target *t, struct cutcapture_bpf *skel, uint64_t ts);
/* Lets the command run: exec, saying so when exec failed. */
void target_start(struct target *t);
/* One step of the capture loop at time now: reaps the command, sees whether the traced tree
 * is alive, handles the signals that came. Returns true when the capture is to end. When
 * untraced, only the command is waited for. */
bool target_step(struct target *t, struct cutcapture_bpf *skel, uint64_t now, bool untraced);
/* cutcapture's exit status: the command's (128 + signal when a signal ended it; the signal
 * cutcapture got when it ended before the command), 0 with -p. */
int target_status(struct target *t);
/* Lets go of the descriptors; kills the command if it never ran (it waits before exec). */
void target_close(struct target *t);
/* The whole of a small file (/proc's included), NUL-terminated, its length in *len when len
 * is not NULL; NULL when it cannot be read. The caller frees it. */
char *read_file(const char *path, size_t *len);

#endif
