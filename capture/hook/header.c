/* header.c: libcuthook's meta records (cut-events(5)): the header and the process record,
 * formatted once and written first; a thread's record; the symbol record of a named handle. */
#include <stdbool.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "event.h"
#include "gpu.h"
#include "hook.h"
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

/* The command line from /proc/self/cmdline: a JSON array, or one string joined by spaces. */
static void
add_cmdline(struct cut_buf *b, bool array)
{
	char buf[8192];
	ssize_t n = hook_read_file("/proc/self/cmdline", buf, sizeof(buf));
	if (n < 0)
		n = 0;
	if (array)
		buf_addc(b, '[');
	for (ssize_t i = 0; i < n;) {
		size_t l = strlen(buf + i);
		if (i)
			buf_addc(b, array ? ',' : ' ');
		if (array)
			buf_addjstr(b, buf + i, l);
		else
			buf_add(b, buf + i, l);
		i += (ssize_t)l + 1;
	}
	if (array)
		buf_addc(b, ']');
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
	{
		struct cut_buf a = {0}, s = {0};
		struct cut_buf *line = &hook_w.header;
		struct utsname u;
		char buf[512];
		bool have_uname = uname(&u) == 0;
		buf_adds(&a, "{\"schema\":");
		buf_addi64(&a, CUT_SCHEMA_VERSION);
		buf_addkv_str(&a, "tool", "cuthook");
		buf_addkv_str(&a, "version", CUT_VERSION);
		if (have_uname) {
			buf_addkv_str(&a, "host", u.nodename);
			buf_addkv_str(&a, "kernel", u.release);
		}
		if (hook_read_file("/sys/module/nvidia/version", buf, sizeof(buf)) > 0) {
			trim(buf);
			buf_addkv_str(&a, "driver", buf);
		}
		if (hook_read_file("/proc/driver/nvidia/version", buf, sizeof(buf)) > 0)
			buf_addkv_str(&a, "driver_flavour",
			              strstr(buf, "Open Kernel Module") ? "open" : "proprietary");
		const char *libcuda = hook_libcuda_path();
		if (libcuda)
			buf_addkv_str(&a, "libcuda", libcuda);
		buf_addkey(&a, "clock");
		buf_adds(&a, "{\"monotonic_ns\":");
		buf_addi64(&a, hook_w.start_ns);
		buf_adds(&a, ",\"realtime_ns\":");
		buf_addi64(&a, hook_w.start_realtime_ns);
		buf_addc(&a, '}');
		buf_addkey(&a, "sorted");
		buf_adds(&a, "false");
		buf_addkey(&a, "layers");
		buf_adds(&a, "{\"api\":\"on\"");
		const char *gpu_off = hook_gpu_off_reason();
		buf_adds(&a, ",\"gpu\":");
		buf_addjstr(&a, gpu_off ? gpu_off : "on", strlen(gpu_off ? gpu_off : "on"));
		static const char *const off[] = {"ioctl", "kernel", "irq", "sched"};
		for (size_t i = 0; i < sizeof(off) / sizeof(off[0]); i++) {
			buf_adds(&a, ",\"");
			buf_adds(&a, off[i]);
			buf_adds(&a, "\":\"off: cuthook records no kernel-side layer\"");
		}
		buf_addc(&a, '}');
		buf_addkey(&a, "cmd");
		add_cmdline(&a, true);
		buf_addc(&a, '}');
		hook_meta(line, hook_w.start_ns, tid, "header", a.s);

		buf_reset(&a);
		if (hook_read_file("/proc/self/comm", buf, sizeof(buf)) >= 0) {
			trim(buf);
			buf_addkv_str(&a, "comm", buf);
		}
		buf_addkey(&a, "cmdline");
		add_cmdline(&s, false);
		buf_addjstr(&a, s.s ? s.s : "", s.len);
		buf_addkey(&a, "ppid");
		buf_addi64(&a, getppid());
		if (hook_w.rank.rank >= 0)
			buf_addkv_int(&a, "rank", hook_w.rank.rank);
		if (hook_w.rank.local_rank >= 0)
			buf_addkv_int(&a, "local_rank", hook_w.rank.local_rank);
		if (hook_w.rank.world_size >= 0)
			buf_addkv_int(&a, "world_size", hook_w.rank.world_size);
		buf_addc(&a, '}');
		hook_meta(line, hook_w.start_ns, tid, "process", a.s);
		buf_free(&a);
		buf_free(&s);
	}
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
	struct cut_buf a = {0};
	prctl(PR_GET_NAME, comm, 0, 0, 0);
	buf_addkv_str(&a, "comm", comm);
	buf_addc(&a, '}');
	hook_meta(&t->out, ts, t->tid, "thread", a.s);
	buf_free(&a);
	t->need_thread_record = false;
}

void
hook_symbol_record(struct hook_thread *t, int64_t ts, const struct hook_symbol *sym)
{
	struct cut_buf *a = &t->args;
	buf_reset(a);
	buf_addkey(a, "handle");
	buf_addhex(a, sym->handle);
	buf_addkv_str(a, "name", sym->name);
	buf_addkv_str(a, "kind", sym->kind);
	buf_addkv_str(a, "via", sym->via);
	buf_addc(a, '}');
	hook_meta(&t->out, ts, t->tid, "symbol", a->s);
}
