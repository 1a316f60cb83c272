/* decode.c: cutcapture's records turned into cut events (cut-events(5)), one function per
 * record kind; driver API arguments by the decoder both capture paths share (api/call.h). */
#include <err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/call.h"
#include "buf.h"
#include "classify.h"
#include "decode.h"
#include "devices.h"
#include "cut.h"
#include "event.h"
#include "ioctl.h"
#include "names.h"
#include "output.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

_Static_assert(CC_NARGS == CUT_API_NARGS && CC_NEXTRA == CUT_API_NEXTRA &&
                   CC_STRLEN == CUT_API_STRLEN,
               "records.h and api/call.h count the words of a call alike");
_Static_assert((int)CC_EXTRA_STACK == (int)CUT_EXTRA_STACK &&
                   (int)CC_EXTRA_ARG0 == (int)CUT_EXTRA_ARG0 &&
                   (int)CC_EXTRA_GATHER == (int)CUT_EXTRA_GATHER &&
                   (int)CC_STR_ARG == (int)CUT_STR_ARG && (int)CC_STR_OUT == (int)CUT_STR_OUT,
               "records.h and api/call.h read a call alike");

static struct {
	const char *const *funcs;
	size_t nfuncs;
	struct cut_api_desc *desc; /* by cookie */
	const char **cat;          /* category, by cookie */
	const char **as;           /* the name its events carry, by cookie (rt.def's "as") */
	const char *const *kfuncs;
	size_t nkfuncs;
	struct cut_buf line, args;
	struct decode_counts counts;
	uint64_t last_ts;
	int64_t self;          /* cutcapture's pid: its own records carry no rank */
	char host[256];        /* with the rank of a process that has one */
	const char *preloaded; /* the layers libcuthook records, or NULL (decode_preload) */
} R;

void
decode_preload(const char *layers)
{
	R.preloaded = layers;
}

void
decode_init(const char *const *funcs, size_t nfuncs, const char *const *kfuncs, size_t nkfuncs)
{
	R.funcs = funcs;
	R.nfuncs = nfuncs;
	R.kfuncs = kfuncs;
	R.nkfuncs = nkfuncs;
	R.self = getpid();
	if (gethostname(R.host, sizeof(R.host) - 1) < 0)
		snprintf(R.host, sizeof(R.host), "localhost");
	R.desc = cut_xcalloc(nfuncs, sizeof(*R.desc));
	R.cat = cut_xcalloc(nfuncs, sizeof(*R.cat));
	R.as = cut_xcalloc(nfuncs, sizeof(*R.as));
	for (size_t i = 0; i < nfuncs; i++) {
		if (cut_api_describe(&R.desc[i], funcs[i]) < 0)
			warnx("%s: its line in args.def asks more than its calls carry", funcs[i]);
		/* nvcc's __cudaLaunchKernel is recorded as the cudaLaunchKernel it jumps to. */
		R.as[i] = funcs[i];
		if (R.desc[i].runtime && !R.desc[i].silent && strncmp(funcs[i], "__cuda", 6) == 0)
			R.as[i] = funcs[i] + 2;
		R.cat[i] = cut_api_category(R.as[i]);
	}
}

struct cc_fdesc
decode_fdesc(size_t cookie)
{
	struct cc_fdesc f = {0};
	if (cookie >= R.nfuncs)
		return f;
	const struct cut_api_reads *rd = &R.desc[cookie].rd;
	memcpy(f.out, rd->out, sizeof(f.out));
	memcpy(f.outsize, rd->outsize, sizeof(f.outsize));
	f.str = rd->str;
	f.strmode = rd->strmode;
	f.extra = rd->extra;
	f.nextra = rd->nextra;
	memcpy(f.word, rd->word, sizeof(f.word));
	return f;
}

/* ---- ioctl names ---- */

/* The escape or UVM command name from share/lib/ioctl.c's tables, else "ioctl". */
static const char *
ioctl_name(unsigned kind, uint32_t cmd)
{
	const char *name = NULL;
	if (kind == CC_DEV_RM && CUT_IOC_TYPE(cmd) == CUT_NV_IOCTL_MAGIC)
		name = ioctl_escape_name(CUT_IOC_NR(cmd));
	else if (kind == CC_DEV_UVM)
		name = ioctl_uvm_name(cmd);
	return name ? name : "ioctl";
}

/* ---- formatting ---- */

static void
args_begin(struct cut_buf *b)
{
	buf_reset(b);
}

static void
args_sep(struct cut_buf *b, const char *key)
{
	if (b->len == 0)
		buf_addc(b, '{');
	else
		buf_addc(b, ',');
	buf_addc(b, '"');
	buf_adds(b, key);
	buf_adds(b, "\":");
}

static void
arg_int(struct cut_buf *b, const char *key, int64_t v)
{
	args_sep(b, key);
	buf_addi64(b, v);
}

static void
arg_hex(struct cut_buf *b, const char *key, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	char s[20], *p = s + sizeof(s);
	args_sep(b, key);
	*--p = '"';
	do
		*--p = digits[v & 15];
	while (v >>= 4);
	*--p = 'x';
	*--p = '0';
	*--p = '"';
	buf_add(b, p, (size_t)(s + sizeof(s) - p));
}

static void
arg_str(struct cut_buf *b, const char *key, const char *s, size_t n)
{
	args_sep(b, key);
	buf_addjstr(b, s, n);
}

static const char *
args_end(struct cut_buf *b)
{
	if (b->len == 0)
		return NULL;
	buf_addc(b, '}');
	return b->s;
}

static void
emit(struct cut_event *ev)
{
	/* Host and rank on every record of a process whose environment names a rank. */
	const struct cut_rank *rk = ev->pid > 0 && ev->pid != R.self
	                                ? names_rank((uint32_t)ev->pid, (uint64_t)ev->ts)
	                                : NULL;
	if (rk) {
		ev->host = R.host;
		ev->rank = rk->rank;
		ev->has |= CUT_HAS_RANK;
	}
	buf_reset(&R.line);
	cut_event_format(&R.line, ev);
	buf_addc(&R.line, '\n');
	out_add(R.line.s, R.line.len);
	R.counts.layer[ev->layer]++;
	R.counts.events++;
	R.last_ts = (uint64_t)ev->ts;
}

/* A meta record (cut-events(5)) about process pid and thread tid. */
static void
meta_event(struct cut_event *ev, int64_t ts, int64_t pid, int64_t tid, const char *name)
{
	cut_event_init(ev);
	ev->ts = ts;
	ev->pid = pid;
	ev->tid = tid;
	ev->layer = CUT_META;
	ev->name = name;
}

/* Writes the thread record before the first event of a thread. */
static void
thread_seen(uint64_t ts, uint32_t pid, uint32_t tid)
{
	const char *comm = tid ? names_thread_first(pid, tid) : NULL;
	if (!comm)
		return;
	struct cut_event ev;
	meta_event(&ev, (int64_t)ts, pid, tid, "thread");
	args_begin(&R.args);
	arg_str(&R.args, "comm", comm, strlen(comm));
	ev.args = args_end(&R.args);
	emit(&ev);
}

static void
symbol_line(uint64_t ts, const struct cc_hdr *h, uint64_t handle, const char *name, size_t len,
            const char *kind, const char *via)
{
	struct cut_event ev;
	meta_event(&ev, (int64_t)ts, h->pid, h->tid, "symbol");
	args_begin(&R.args);
	arg_hex(&R.args, "handle", handle);
	arg_str(&R.args, "name", name, len);
	arg_str(&R.args, "kind", kind, strlen(kind));
	arg_str(&R.args, "via", via, strlen(via));
	ev.args = args_end(&R.args);
	emit(&ev);
}

/* A handle the call named. A kernel's host stub (__cudaRegisterFunction, a silent call) gets
 * its record when a call first uses it instead: PyTorch registers some 20,000. */
static void
symbol_record(const struct cc_api *r, const char *via, bool silent, const struct cut_api_sym *sym)
{
	names_set_handle(r->h.pid, sym->handle, sym->name, sym->len, !silent);
	if (!silent)
		symbol_line(r->h.ts, &r->h, sym->handle, sym->name, sym->len, sym->kind, via);
}

/* The fields every span record shares: its time, its layer and, for a process's own events,
 * its pid and tid (interrupts belong to none). */
static void
span_event(struct cut_event *ev, const struct cc_hdr *h, enum cut_layer layer, bool has_ret,
           bool owned)
{
	cut_event_init(ev);
	ev->ts = (int64_t)h->ts;
	ev->dur = (int64_t)h->dur;
	ev->has = CUT_HAS_DUR | (has_ret ? CUT_HAS_RET : 0);
	if (owned) {
		ev->pid = h->pid;
		ev->tid = h->tid;
	}
	ev->layer = layer;
}

static void
write_api(const struct cc_api *r)
{
	const char *name = r->fid < R.nfuncs ? R.funcs[r->fid] : "?";
	struct cut_call c = {.ret = r->ret, .extra_ok = r->flags & CC_A_EXTRA};
	memcpy(c.a, r->a, sizeof(c.a));
	memcpy(c.out, r->out, sizeof(c.out));
	if (r->h.size > sizeof(*r)) {
		c.str = r->str;
		c.slen = strnlen(r->str, r->h.size - sizeof(*r));
		if (c.slen >= CUT_API_STRLEN)
			c.slen = CUT_API_STRLEN - 1;
	}
	const struct cut_api_desc *d = r->fid < R.nfuncs ? &R.desc[r->fid] : NULL;
	struct cut_event ev;
	span_event(&ev, &r->h, d && d->runtime ? CUT_RUNTIME : CUT_API, !(d && d->noret), true);
	ev.name = d ? R.as[r->fid] : name;
	ev.cat = d ? R.cat[r->fid] : cut_api_category(name);
	ev.ret = r->ret;
	struct cut_api_sym sym = {0};
	buf_reset(&R.args);
	if (d && d->decodes)
		cut_api_args(d, &c, r->h.pid, names_handles(), &R.args, &sym);
	ev.args = R.args.len ? R.args.s : NULL;
	uint64_t stub;
	const char *stub_name;
	bool untold = names_untold(&stub, &stub_name);
	/* A silent call (__cudaRegisterFunction) is no event: it names a kernel's host stub. */
	if (!(d && d->silent))
		emit(&ev);
	if (untold) /* at the call's start: the records stay in order */
		symbol_line(r->h.ts, &r->h, stub, stub_name, strlen(stub_name), "function",
		            "__cudaRegisterFunction");
	if (sym.handle)
		symbol_record(r, ev.name, d && d->silent, &sym);
}

static void
write_ioctl(const struct cc_ioctl *r)
{
	char dbuf[32];
	unsigned kind;
	const char *dev = dev_name(r->rdev, &kind, dbuf, sizeof(dbuf));
	struct cut_event ev;
	span_event(&ev, &r->h, CUT_IOCTL, true, true);
	ev.name = ioctl_name(kind, r->cmd);
	ev.ret = r->ret;
	args_begin(&R.args);
	arg_int(&R.args, "fd", r->fd);
	arg_str(&R.args, "dev", dev, strlen(dev));
	arg_hex(&R.args, "cmd", r->cmd);
	if (kind != CC_DEV_UVM) {
		static const char *const dirs[] = {"none", "w", "r", "rw"};
		arg_str(&R.args, "dir", dirs[r->cmd >> 30], strlen(dirs[r->cmd >> 30]));
		arg_int(&R.args, "type", (r->cmd >> 8) & 0xff);
		arg_int(&R.args, "nr", r->cmd & 0xff);
		arg_int(&R.args, "size", (r->cmd >> 16) & 0x3fff);
	}
	if (r->flags & CC_IO_SUB)
		arg_hex(&R.args, r->flags & CC_IO_CLASS ? "class" : "ctrl", r->sub);
	if (r->flags & CC_IO_XFER)
		arg_hex(&R.args, "xfer", r->xfer);
	if (r->flags & CC_IO_STATUS)
		arg_int(&R.args, "status", r->status);
	ev.args = args_end(&R.args);
	emit(&ev);
}

static void
write_file(const struct cc_file *r)
{
	static const struct {
		unsigned nr;
		const char *name;
	} calls[] = {{2, "open"}, {257, "open"}, {3, "close"}, {9, "mmap"}, {11, "munmap"}};
	char dbuf[32];
	unsigned kind;
	const char *dev = dev_name(r->rdev, &kind, dbuf, sizeof(dbuf));
	struct cut_event ev;
	span_event(&ev, &r->h, CUT_IOCTL, true, true);
	ev.name = "?";
	for (size_t i = 0; i < NELEM(calls); i++)
		if (calls[i].nr == r->nr)
			ev.name = calls[i].name;
	ev.ret = r->nr == 9 && r->ret > 0 ? 0 : r->ret;
	args_begin(&R.args);
	if (r->nr != 11)
		arg_int(&R.args, "fd", r->fd);
	arg_str(&R.args, "dev", dev, strlen(dev));
	if (r->path[0])
		arg_str(&R.args, "path", r->path, strnlen(r->path, sizeof(r->path)));
	if (r->nr == 9 || r->nr == 11) {
		arg_int(&R.args, "bytes", (int64_t)r->len);
		if (r->nr == 11 || r->ret > 0 || r->ret < -4095)
			arg_hex(&R.args, "ptr", r->addr);
		if (r->nr == 9)
			arg_hex(&R.args, "offset", r->off);
	}
	ev.args = args_end(&R.args);
	emit(&ev);
}

static void
write_irq(const struct cc_irq *r)
{
	char name[CC_COMMLEN + 1];
	snprintf(name, sizeof(name), "%.*s", CC_COMMLEN, r->name);
	struct cut_event ev;
	span_event(&ev, &r->h, CUT_IRQ, true, false);
	ev.name = name[0] ? name : "irq";
	ev.ret = r->ret;
	args_begin(&R.args);
	arg_int(&R.args, "irq", r->irq);
	arg_int(&R.args, "cpu", r->h.cpu);
	arg_int(&R.args, "handled", r->ret != 0);
	ev.args = args_end(&R.args);
	emit(&ev);
}

static void
write_sched(const struct cc_sched *r)
{
	char state[2] = {(char)r->state, 0};
	struct cut_event ev;
	span_event(&ev, &r->h, CUT_SCHED, false, true);
	ev.name = "offcpu";
	args_begin(&R.args);
	arg_str(&R.args, "state", state, 1);
	arg_int(&R.args, "cpu", r->h.cpu);
	if (r->pad) {
		arg_int(&R.args, "split", 1);
	} else {
		arg_int(&R.args, "cpu_in", r->cpu_in);
		if (r->waker)
			arg_int(&R.args, "waker", r->waker);
		if (r->runq)
			arg_int(&R.args, "runq", (int64_t)r->runq);
	}
	ev.args = args_end(&R.args);
	emit(&ev);
}

static void
write_task(const struct cc_task *r)
{
	if (r->what != CC_TASK_FORK && r->what != CC_TASK_EXEC && r->what != EV_PROC)
		return;
	struct cut_event ev;
	meta_event(&ev, (int64_t)r->h.ts, r->h.pid, r->h.pid, "process");
	args_begin(&R.args);
	arg_str(&R.args, "comm", r->comm, strnlen(r->comm, sizeof(r->comm)));
	if (r->cmdlen) {
		/* The argument strings, NUL-separated, joined with spaces. */
		char cmd[CC_CMDLEN + 1];
		size_t n = r->cmdlen < CC_CMDLEN ? r->cmdlen : CC_CMDLEN;
		memcpy(cmd, r->cmd, n);
		while (n > 0 && cmd[n - 1] == 0)
			n--;
		for (size_t i = 0; i < n; i++)
			if (cmd[i] == 0)
				cmd[i] = ' ';
		arg_str(&R.args, "cmdline", cmd, n);
	}
	arg_int(&R.args, "ppid", r->ppid);
	/* A program whose loader ignores the preload (static, secure execution) has none of the
	 * library's layers: said, as the process record's "preload". */
	if (r->what == CC_TASK_EXEC && r->loader && R.preloaded) {
		const char *why =
		    r->loader & CC_LOADER_STATIC ? "ignored: static" : "ignored: secure execution";
		arg_str(&R.args, "preload", why, strlen(why));
		warnx("process %u (%.*s) %s: LD_PRELOAD is ignored there: %s not recorded "
		      "for it",
		      r->h.pid, (int)strnlen(r->comm, sizeof(r->comm)), r->comm,
		      r->loader & CC_LOADER_STATIC ? "is a static program"
		                                   : "runs in secure-execution mode (setuid, "
		                                     "setgid or file capabilities)",
		      R.preloaded);
	}
	const struct cut_rank *rk = names_rank(r->h.pid, r->h.ts);
	if (rk) {
		arg_int(&R.args, "rank", rk->rank);
		if (rk->local_rank >= 0)
			arg_int(&R.args, "local_rank", rk->local_rank);
		if (rk->world_size >= 0)
			arg_int(&R.args, "world_size", rk->world_size);
	}
	ev.args = args_end(&R.args);
	emit(&ev);
}

static void
write_kfunc(const struct cc_kfunc *r)
{
	struct cut_event ev;
	span_event(&ev, &r->h, CUT_KERNEL, true, true);
	ev.name = r->idx < R.nkfuncs ? R.kfuncs[r->idx] : "?";
	ev.ret = r->ret;
	emit(&ev);
}

static void
write_lost(const struct lost_rec *r)
{
	struct cut_event ev;
	meta_event(&ev, (int64_t)r->h.ts, r->h.pid, r->h.tid, "lost");
	args_begin(&R.args);
	arg_int(&R.args, "count", (int64_t)r->count);
	arg_str(&R.args, "reason", r->reason, strlen(r->reason));
	if (r->layer)
		arg_str(&R.args, "layer", r->layer, strlen(r->layer));
	ev.args = args_end(&R.args);
	emit(&ev);
	R.counts.lost += r->count;
}

/* A call its thread never returned from (it ended inside): lost, and said so at its start. */
static void
write_unfinished(const struct cc_api *r)
{
	char reason[CC_STRLEN + 96];
	const char *name = r->fid < R.nfuncs ? R.funcs[r->fid] : "a driver API call";
	snprintf(reason, sizeof(reason), "%s in flight when thread %u of process %u ended", name,
	         r->h.tid, r->h.pid);
	struct lost_rec l = {.count = 1, .layer = "api", .reason = reason};
	l.h = r->h;
	l.h.pid = l.h.tid = (uint32_t)getpid();
	write_lost(&l);
	R.counts.unfinished++;
}

void
decode_record(const struct cc_hdr *h)
{
	if (h->kind != CC_EV_TASK && h->kind != EV_LOST && h->kind != EV_PROC &&
	    h->kind != CC_EV_UNFINISHED)
		thread_seen(h->ts, h->pid, h->tid);
	switch (h->kind) {
	case CC_EV_API: write_api((const struct cc_api *)h); break;
	case CC_EV_IOCTL: write_ioctl((const struct cc_ioctl *)h); break;
	case CC_EV_FILE: write_file((const struct cc_file *)h); break;
	case CC_EV_IRQ: write_irq((const struct cc_irq *)h); break;
	case CC_EV_SCHED: write_sched((const struct cc_sched *)h); break;
	case CC_EV_TASK:
	case EV_PROC: write_task((const struct cc_task *)h); break;
	case CC_EV_KFUNC: write_kfunc((const struct cc_kfunc *)h); break;
	case EV_LOST: write_lost((const struct lost_rec *)h); break;
	case CC_EV_UNFINISHED: write_unfinished((const struct cc_api *)h); break;
	}
}

struct decode_counts
decode_counts(void)
{
	return R.counts;
}

void
decode_free(void)
{
	free(R.desc);
	free(R.cat);
	free(R.as);
	buf_free(&R.line);
	buf_free(&R.args);
	memset(&R, 0, sizeof(R));
}
