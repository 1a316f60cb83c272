/* header.c: libcuthook's meta records (cut-events(5)), written through share/lib/meta.h: the
 * header and the process record, formatted once and written first; a thread's record; the
 * symbol record of a named handle. */
#include <stdbool.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "event.h"
#include "meta.h"
#include "hook.h"
#include "layer.h"
#include "writer.h"

void
hook_meta(struct cut_buf *b, int64_t ts, int64_t tid, const char *name, const char *args)
{
	struct cut_event ev;
	cut_event_init(&ev);
	ev.ts = ts;
	ev.pid = hook_w.pid_ns;
	ev.tid = tid;
	ev.layer = CUT_META;
	ev.name = name;
	ev.args = args;
	hook_label(&ev);
	cut_event_format(b, &ev);
	buf_addc(b, '\n');
}

void
hook_meta_record(struct cut_buf *b, int64_t ts, int64_t tid, const struct cut_meta *m)
{
	struct cut_event at;
	cut_event_init(&at);
	at.ts = ts;
	at.pid = hook_w.pid_ns;
	at.tid = tid;
	hook_label(&at);
	cut_meta_format(b, &at, m);
	buf_addc(b, '\n');
}

/* The command line from /proc/self/cmdline: its strings (pointing into buf, up to max of them)
 * and, joined by spaces, into line. Returns how many. */
static size_t
read_cmdline(char *buf, size_t len, const char **argv, size_t max, struct cut_buf *line)
{
	ssize_t n = hook_read_file("/proc/self/cmdline", buf, len);
	size_t argc = 0;
	for (ssize_t i = 0; i < n && argc < max;) {
		size_t l = strlen(buf + i);
		if (argc)
			buf_addc(line, ' ');
		buf_add(line, buf + i, l);
		argv[argc++] = buf + i;
		i += (ssize_t)l + 1;
	}
	return argc;
}

static void
trim(char *s)
{
	size_t n = strlen(s);
	while (n && (s[n - 1] == '\n' || s[n - 1] == ' '))
		s[--n] = '\0';
}

/* Formats the header and this process's record into hook_w.header. It is done when the first call
 * is recorded, not at start (the libcuda path is known by then), so that a fatal signal
 * handler, which must not format, can still write them. Caller holds header_lock. */
static void
build_header_locked(int64_t tid)
{
	if (hook_w.header_ready)
		return;
	static char cmdbuf[8192], driver[512], flavour[512], comm[64];
	static const char *argv[1024];
	struct cut_buf cmdline = {0};
	struct utsname u;
	bool have_uname = uname(&u) == 0;
	size_t argc = read_cmdline(cmdbuf, sizeof(cmdbuf), argv, 1024, &cmdline);

	struct cut_meta m;
	cut_meta_init(&m, CUT_META_HEADER);
	struct cut_header *h = &m.header;
	h->tool = "cuthook";
	h->version = CUT_VERSION;
	if (have_uname) {
		h->host = u.nodename;
		h->kernel = u.release;
	}
	if (hook_read_file("/sys/module/nvidia/version", driver, sizeof(driver)) > 0) {
		trim(driver);
		h->driver = driver;
	}
	if (hook_read_file("/proc/driver/nvidia/version", flavour, sizeof(flavour)) > 0)
		h->driver_flavour = strstr(flavour, "Open Kernel Module") ? "open" : "proprietary";
	h->libcuda = hook_libcuda_path();
	h->monotonic_ns = hook_w.start_ns;
	h->realtime_ns = hook_w.start_realtime_ns;
	h->sorted = 0;
	for (int l = 0; l < CUT_NLAYERS; l++)
		if (l != CUT_META)
			h->layers[l] = "off: cuthook records no kernel-side layer";
	for (size_t i = 0; i < hook_nlayers; i++) {
		const char *off = hook_layers[i].off_reason();
		h->layers[hook_layers[i].layer] = off ? off : "on";
		h->sources[hook_layers[i].layer] = off ? NULL : "preload";
	}
	h->cmd = argv;
	h->ncmd = argc;
	hook_meta_record(&hook_w.header, hook_w.start_ns, tid, &m);

	cut_meta_init(&m, CUT_META_PROCESS);
	struct cut_task *p = &m.task;
	if (hook_read_file("/proc/self/comm", comm, sizeof(comm)) >= 0) {
		trim(comm);
		p->comm = comm;
	}
	p->cmdline = cmdline.s ? cmdline.s : "";
	p->ppid = getppid();
	if (hook_w.rank.rank >= 0)
		p->rank = hook_w.rank.rank;
	if (hook_w.rank.local_rank >= 0)
		p->local_rank = hook_w.rank.local_rank;
	if (hook_w.rank.world_size >= 0)
		p->world_size = hook_w.rank.world_size;
	hook_meta_record(&hook_w.header, hook_w.start_ns, tid, &m);
	buf_free(&cmdline);
	__atomic_store_n(&hook_w.header_ready, 1, __ATOMIC_RELEASE);
}

void
hook_prepare_header(int64_t tid)
{
	if (__atomic_load_n(&hook_w.header_ready, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&hook_w.header_lock);
	build_header_locked(tid);
	pthread_mutex_unlock(&hook_w.header_lock);
}

void
hook_ensure_header(int64_t tid)
{
	if (__atomic_load_n(&hook_w.header_done, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&hook_w.header_lock);
	if (!hook_w.header_done && hook_output_ok()) {
		build_header_locked(tid);
		hook_write_lines(hook_w.header.s, hook_w.header.len);
	}
	__atomic_store_n(&hook_w.header_done, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&hook_w.header_lock);
}

void
hook_thread_record(struct hook_thread *t, int64_t ts)
{
	char comm[17] = "";
	prctl(PR_GET_NAME, comm, 0, 0, 0);
	struct cut_meta m;
	cut_meta_init(&m, CUT_META_THREAD);
	m.task.comm = comm;
	hook_meta_record(&t->out, ts, t->tid, &m);
	t->need_thread_record = false;
}

void
hook_symbol_line(struct cut_buf *b, int64_t tid, int64_t ts, const struct hook_symbol *sym)
{
	struct cut_meta m;
	cut_meta_init(&m, CUT_META_SYMBOL);
	m.symbol.handle = (int64_t)sym->handle;
	m.symbol.name = sym->name;
	m.symbol.kind = sym->kind;
	m.symbol.via = sym->via;
	hook_meta_record(b, ts, tid, &m);
}

void
hook_symbol_record(struct hook_thread *t, int64_t ts, const struct hook_symbol *sym)
{
	hook_symbol_line(&t->out, t->tid, ts, sym);
}
