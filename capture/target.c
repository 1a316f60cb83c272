/* target.c: the processes cutcapture traces (the command or a -p tree), when they are done,
 * and the signals passed on to the command. */
#include <dirent.h>
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "records.h"
#include "drain.h"
#include "cut.h"
#include "event.h"
#include "target.h"

#include "cutcapture.skel.h"

#define NS 1000000000ull
/* How long a signal from kill(1) waits before it is passed on: one sent to the process group
 * or to every process of a job reaches the command meanwhile, and is then not sent twice. */
#define FORWARD_WAIT_NS (100 * 1000000ull)

static volatile sig_atomic_t stop_sig, stop_count, stop_by_user;
static volatile uint64_t stop_ts; /* when the last one came, CLOCK_MONOTONIC ns */

static void
on_signal(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	stop_ts = (uint64_t)ts.tv_sec * NS + (uint64_t)ts.tv_nsec;
	stop_sig = sig;
	stop_count++;
	/* A signal from the terminal reached the command too; one from kill(1) may not have. */
	stop_by_user = si && si->si_code <= 0;
}

void
target_catch_signals(void)
{
	struct sigaction sa = {.sa_sigaction = on_signal, .sa_flags = SA_SIGINFO};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

char *
read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t cap = 0, n = 0;
	if (!f)
		return NULL;
	for (;;) {
		CUT_GROW(buf, n + 1024, cap);
		size_t r = fread(buf + n, 1, cap - n - 1, f);
		n += r;
		if (r == 0)
			break;
	}
	fclose(f);
	buf[n] = 0;
	if (len)
		*len = n;
	return buf;
}

static void
trace_pid(struct cutcapture_bpf *skel, pid_t pid)
{
	__u32 key = (__u32)pid;
	__u8 one = 1;
	bpf_map__update_elem(skel->maps.traced, &key, sizeof(key), &one, sizeof(one), BPF_ANY);
}

/* Parent of a process, or -1. */
static pid_t
proc_ppid(pid_t pid, char *comm, size_t commlen)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	char *s = read_file(path, NULL);
	pid_t ppid = -1;
	char *close_paren = s ? strrchr(s, ')') : NULL;
	if (close_paren) {
		char *open_paren = strchr(s, '(');
		if (comm && open_paren && open_paren < close_paren)
			snprintf(comm, commlen, "%.*s", (int)(close_paren - open_paren - 1),
			         open_paren + 1);
		sscanf(close_paren + 2, "%*c %d", &ppid);
	}
	free(s);
	return ppid;
}

/* Follows a running process and every descendant it has now. Queues a process record for
 * each. */
static void
trace_tree(struct cutcapture_bpf *skel, pid_t root, uint64_t ts)
{
	pid_t *todo = cut_xmalloc(sizeof(pid_t)), queue_len = 1;
	todo[0] = root;
	for (pid_t qi = 0; qi < queue_len; qi++) {
		pid_t pid = todo[qi];
		char comm[64] = "", path[64];
		pid_t ppid = proc_ppid(pid, comm, sizeof(comm));
		size_t n = 0;
		snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
		char *cmd = read_file(path, &n);
		for (size_t i = 0; cmd && i + 1 < n; i++)
			if (!cmd[i])
				cmd[i] = ' ';
		trace_pid(skel, pid);
		drain_process(ts, (uint32_t)pid, ppid > 0 ? (uint32_t)ppid : 0, comm,
		              cmd ? cmd : "");
		free(cmd);
		/* Its children: those of each of its threads. */
		snprintf(path, sizeof(path), "/proc/%d/task", pid);
		DIR *dir = opendir(path);
		struct dirent *d;
		while (dir && (d = readdir(dir))) {
			if (d->d_name[0] == '.')
				continue;
			char kpath[384];
			snprintf(kpath, sizeof(kpath), "/proc/%d/task/%s/children", pid, d->d_name);
			char *kids = read_file(kpath, NULL);
			for (char *p = kids, *end; p && *p; p = end) {
				long k = strtol(p, &end, 10);
				if (end == p)
					break;
				todo = cut_xrealloc(todo, (size_t)queue_len + 1, sizeof(pid_t));
				todo[queue_len++] = (pid_t)k;
			}
			free(kids);
		}
		if (dir)
			closedir(dir);
	}
	free(todo);
}

/* Dispositions cutcapture changes for itself, as it was given them, for the command. */
static struct {
	int sig;
	struct sigaction was;
} kept[4];
static int nkept;

void
target_keep_disposition(int sig)
{
	if (nkept < (int)(sizeof(kept) / sizeof(kept[0])) &&
	    sigaction(sig, NULL, &kept[nkept].was) == 0)
		kept[nkept++].sig = sig;
}

void
target_spawn(struct target *t, char **argv, bool stdout_is_trace, int (*env)(void))
{
	int go[2], fail[2];
	if (pipe2(go, O_CLOEXEC) < 0 || pipe2(fail, O_CLOEXEC) < 0)
		err(CUT_EXIT_FATAL, "pipe");
	pid_t pid = fork();
	if (pid < 0)
		err(CUT_EXIT_FATAL, "fork");
	if (pid == 0) {
		char c;
		close(go[1]);
		close(fail[0]);
		for (int i = 0; i < nkept; i++)
			sigaction(kept[i].sig, &kept[i].was, NULL);
		/* The trace owns standard output: the command's goes to standard error. */
		if (stdout_is_trace)
			dup2(STDERR_FILENO, STDOUT_FILENO);
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		if (!env || env() == 0)
			execvp(argv[0], argv);
		int e = errno;
		if (write(fail[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(fail[1]);
	t->child = pid;
	t->argv = argv;
	t->go_fd = go[1];
	t->fail_fd = fail[0];
}

int
target_check(pid_t pid)
{
	char state = 0, path[64];
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	char *s = read_file(path, NULL), *paren = s ? strrchr(s, ')') : NULL;
	if (paren && paren[1] == ' ')
		state = paren[2];
	free(s);
	if ((kill(pid, 0) < 0 && errno == ESRCH) || !paren) {
		warnx("-p %d: no such process", pid);
		return -1;
	}
	if (state == 'Z' || state == 'X') {
		warnx("-p %d: a zombie (it has exited; its parent has not reaped it): nothing to "
		      "trace",
		      pid);
		return -1;
	}
	/* Its tree would hold cutcapture, which would trace itself and never see it end. */
	for (pid_t p = getpid(); p > 0; p = proc_ppid(p, NULL, 0))
		if (p == pid) {
			warnx("-p %d: %s", pid,
			      p == getpid()
			          ? "cutcapture itself"
			          : "an ancestor of cutcapture (its tree holds cutcapture)");
			return -1;
		}
	return 0;
}

int
target_attach(struct target *t, pid_t pid)
{
	if (target_check(pid) < 0)
		return -1;
	t->pid = pid;
	t->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	/* Its command line, for the header. */
	char path[64];
	size_t n = 0;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	t->pid_cmdline = read_file(path, &n);
	t->pid_argv = cut_xcalloc(n + 2, sizeof(char *));
	int argc = 0;
	for (size_t i = 0; t->pid_cmdline && i < n; i += strlen(t->pid_cmdline + i) + 1)
		t->pid_argv[argc++] = t->pid_cmdline + i;
	t->argv = t->pid_argv;
	return 0;
}

void
target_follow(struct target *t, struct cutcapture_bpf *skel, uint64_t ts)
{
	if (t->child)
		trace_pid(skel, t->child);
	else
		trace_tree(skel, t->pid, ts);
	skel->bss->cmd_tgid = (__u32)t->child;
}

void
target_start(struct target *t)
{
	int e;
	if (!t->child)
		return;
	if (write(t->go_fd, "g", 1) != 1)
		warn("starting %s", t->argv[0]);
	t->started = true;
	close(t->go_fd);
	t->go_fd = -1;
	if (read(t->fail_fd, &e, sizeof(e)) == sizeof(e))
		warnx("%s: %s", t->argv[0], strerror(e));
	close(t->fail_fd);
	t->fail_fd = -1;
}

/* Whether a traced process is still alive. Entries of processes gone without their exit
 * being seen (one that ended while trace_tree listed it) are dropped. */
static bool
tree_alive(struct cutcapture_bpf *skel)
{
	int fd = bpf_map__fd(skel->maps.traced);
	__u32 key, next, *prev = NULL;
	bool alive = false;
	while (!alive && bpf_map_get_next_key(fd, prev, &next) == 0) {
		if (kill((pid_t)next, 0) == 0 || errno == EPERM) {
			alive = true;
		} else {
			bpf_map_delete_elem(fd, &next);
			continue; /* next key from the start: this one is gone */
		}
		key = next;
		prev = &key;
	}
	return alive;
}

bool
target_step(struct target *t, struct cutcapture_bpf *skel, uint64_t now, bool untraced)
{
	if (t->child && !t->done && waitpid(t->child, &t->wstatus, WNOHANG) == t->child)
		t->done = t->root_done = true;
	if (t->pid && !t->root_done) {
		struct pollfd p = {t->pidfd, POLLIN, 0};
		t->root_done = t->pidfd >= 0 ? poll(&p, 1, 0) == 1 : kill(t->pid, 0) < 0;
	}
	/* The capture ends once the command (or the -p process) and every process of its tree
	 * have exited: children left behind by a parent that exited first are followed to
	 * their end. Untraced, only the command is waited for. */
	if (t->root_done && (untraced || !tree_alive(skel)))
		return true;
	if (stop_count > t->handled) {
		t->handled = stop_count;
		/* First signal: the command ends as the signal says (passed on when it did not
		 * reach the command too); a second, one with -p or one once the command has
		 * exited stops now. */
		if (!t->child || t->done || t->handled > 1)
			return true;
		if (stop_by_user) {
			t->forward = stop_sig;
			t->forward_since = stop_ts;
			t->forward_at = skel->links.sig_generate ? stop_ts + FORWARD_WAIT_NS : 0;
		}
	}
	if (t->forward && t->done) {
		t->forward = 0; /* reaped: its pid is no longer its own */
	} else if (t->forward) {
		uint64_t got = skel->bss->cmd_sig_ts[t->forward & 31];
		if (skel->links.sig_generate && got && got + FORWARD_WAIT_NS >= t->forward_since) {
			t->forward = 0; /* the command got it itself */
		} else if (now >= t->forward_at) {
			kill(t->child, t->forward);
			t->forward = 0;
		}
	}
	return false;
}

int
target_status(struct target *t)
{
	if (t->child && !t->done && stop_count == 0 &&
	    waitpid(t->child, &t->wstatus, WNOHANG) == t->child)
		t->done = true;
	if (t->done)
		return WIFEXITED(t->wstatus) ? WEXITSTATUS(t->wstatus) : 128 + WTERMSIG(t->wstatus);
	if (t->child)
		return 128 + (stop_sig ? stop_sig : SIGTERM);
	return CUT_EXIT_OK;
}

void
target_close(struct target *t)
{
	if (t->go_fd >= 0)
		close(t->go_fd);
	if (t->fail_fd >= 0)
		close(t->fail_fd);
	if (t->pidfd >= 0)
		close(t->pidfd);
	if (t->child && !t->started) { /* never ran: it waits before exec */
		kill(t->child, SIGKILL);
		waitpid(t->child, NULL, 0);
	}
	free(t->pid_argv);
	free(t->pid_cmdline);
	t->go_fd = t->fail_fd = t->pidfd = -1;
	t->pid_argv = NULL;
	t->pid_cmdline = NULL;
}
