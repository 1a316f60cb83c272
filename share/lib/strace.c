/* strace.c: strace's text for ioctl calls turned into cut ioctl events, in the order the
 * calls started. */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "ioctl.h"
#include "strace.h"

enum {
	HAS_DUR = 1 << 0,
	HAS_RET = 1 << 1,
	HAS_CTRL = 1 << 2,
	HAS_CLASS = 1 << 3,
	HAS_XFER = 1 << 4,
	HAS_STATUS = 1 << 5,
};

/* One call, from its first line until it is handed out. */
struct call {
	int64_t ts, dur, ret, tid, fd;
	uint32_t cmd, ctrl, cls, xfer, status;
	unsigned has;
	bool done;
	uint64_t line;
	char dev[64];
};

struct cut_strace {
	struct call *q; /* ring of calls in the order they started */
	size_t cap, head, n;
	bool finished;
	struct cut_strace_counts counts;
	struct cut_buf args;
	char name[64];
};

/* Names strace prints for numbers UVM uses too (linux/fs.h: FIBMAP _IO(0,1), FIGETBSZ
 * _IO(0,2)); any other name strace knows belongs to a device that is not NVIDIA's. */
static const struct {
	const char *name;
	uint32_t cmd;
} strace_aliases[] = {{"FIBMAP", 1}, {"FIGETBSZ", 2}};

struct cut_strace *
strace_new(void)
{
	return calloc(1, sizeof(struct cut_strace));
}

void
strace_free(struct cut_strace *s)
{
	if (!s)
		return;
	free(s->q);
	buf_free(&s->args);
	free(s);
}

struct cut_strace_counts
strace_counts(const struct cut_strace *s)
{
	return s->counts;
}

static struct call *
at(struct cut_strace *s, size_t i)
{
	return &s->q[(s->head + i) % s->cap];
}

static struct call *
push(struct cut_strace *s)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		struct call *q = malloc(cap * sizeof(*q));
		if (!q)
			return NULL;
		for (size_t i = 0; i < s->n; i++)
			q[i] = *at(s, i);
		free(s->q);
		s->q = q;
		s->cap = cap;
		s->head = 0;
	}
	struct call *c = at(s, s->n++);
	memset(c, 0, sizeof(*c));
	return c;
}

/* ---- scanning ---- */

struct scan {
	const char *p, *e;
};

static bool
starts(struct scan *sc, const char *lit)
{
	size_t n = strlen(lit);
	if ((size_t)(sc->e - sc->p) < n || memcmp(sc->p, lit, n) != 0)
		return false;
	sc->p += n;
	return true;
}

static void
spaces(struct scan *sc)
{
	while (sc->p < sc->e && (*sc->p == ' ' || *sc->p == '\t'))
		sc->p++;
}

/* An unsigned decimal or 0x-prefixed hexadecimal number. */
static bool
number(struct scan *sc, uint64_t *v)
{
	const char *p = sc->p;
	int base = 10;
	if (sc->e - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		base = 16, p += 2;
	uint64_t n = 0;
	const char *d = p;
	for (; p < sc->e; p++) {
		int c = (unsigned char)*p, x;
		if (c >= '0' && c <= '9')
			x = c - '0';
		else if (base == 16 && isxdigit(c))
			x = (c | 0x20) - 'a' + 10;
		else
			break;
		if (n > (UINT64_MAX - (uint64_t)x) / (uint64_t)base)
			return false;
		n = n * (uint64_t)base + (uint64_t)x;
	}
	if (p == d)
		return false;
	*v = n;
	sc->p = p;
	return true;
}

/* Seconds with a fraction ("1700000000.123456", -ttt) as nanoseconds. */
static bool
seconds(struct scan *sc, int64_t *ns)
{
	uint64_t sec, frac = 0;
	const char *p0 = sc->p;
	if (!number(sc, &sec) || sec > 9000000000u || sc->p - p0 > 10 || !starts(sc, ".")) {
		sc->p = p0;
		return false;
	}
	int digits = 0;
	while (sc->p < sc->e && *sc->p >= '0' && *sc->p <= '9') {
		if (digits < 9)
			frac = frac * 10 + (uint64_t)(*sc->p - '0'), digits++;
		sc->p++;
	}
	for (; digits < 9; digits++)
		frac *= 10;
	*ns = (int64_t)(sec * 1000000000u + frac);
	return true;
}

static bool
word(struct scan *sc, char *out, size_t n)
{
	size_t k = 0;
	while (sc->p < sc->e && (isalnum((unsigned char)*sc->p) || *sc->p == '_')) {
		if (k + 1 < n)
			out[k++] = *sc->p;
		sc->p++;
	}
	out[k] = '\0';
	return k > 0;
}

/* A quoted C string as strace prints it (\xHH, \ooo, \n...); keeps up to max bytes and
 * skips strace's "..." after a truncated one. */
static bool
qstring(struct scan *sc, unsigned char *out, size_t max, size_t *len)
{
	size_t n = 0;
	if (!starts(sc, "\""))
		return false;
	while (sc->p < sc->e && *sc->p != '"') {
		unsigned c = (unsigned char)*sc->p++;
		if (c == '\\' && sc->p < sc->e) {
			c = (unsigned char)*sc->p++;
			if (c == 'x') {
				c = 0;
				for (int i = 0;
				     i < 2 && sc->p < sc->e && isxdigit((unsigned char)*sc->p); i++)
					c = c * 16 + (unsigned)(isdigit((unsigned char)*sc->p)
					                            ? *sc->p - '0'
					                            : (*sc->p | 0x20) - 'a' + 10),
					sc->p++;
			} else if (c >= '0' && c <= '7') {
				c -= '0';
				for (int i = 0;
				     i < 2 && sc->p < sc->e && *sc->p >= '0' && *sc->p <= '7'; i++)
					c = c * 8 + (unsigned)(*sc->p++ - '0');
			} else {
				const char *from = "ntrvfab", *to = "\n\t\r\v\f\a\b";
				const char *f = strchr(from, (int)c);
				if (f && c)
					c = (unsigned char)to[f - from];
			}
		}
		if (n < max)
			out[n++] = (unsigned char)c;
	}
	if (!starts(sc, "\""))
		return false;
	starts(sc, "...");
	*len = n;
	return true;
}

/* ---- the parts of an ioctl line ---- */

/* "5", "5</dev/nvidiactl>", "5</dev/nvidiactl<char 195:255>>" (-y, -yy). Returns false
 * for a path that is not an NVIDIA device, with *other set. */
static bool
fd_part(struct scan *sc, struct call *c, bool *other)
{
	uint64_t fd;
	bool neg = starts(sc, "-");
	if (!number(sc, &fd))
		return false;
	c->fd = neg ? -(int64_t)fd : (int64_t)fd;
	if (!starts(sc, "<"))
		return true;
	const char *path = sc->p;
	int depth = 1;
	while (sc->p < sc->e && depth > 0) {
		if (*sc->p == '<')
			depth++;
		else if (*sc->p == '>')
			depth--;
		sc->p++;
	}
	if (depth)
		return false;
	size_t n = strcspn(path, "<>");
	char dev[64];
	snprintf(dev, sizeof(dev), "%.*s", (int)(n < 63 ? n : 63), path);
	if (ioctl_dev_kind(dev) == CUT_NVDEV_OTHER) {
		*other = true;
		return true;
	}
	snprintf(c->dev, sizeof(c->dev), "%s", strncmp(dev, "/dev/", 5) == 0 ? dev + 5 : dev);
	return true;
}

/* "_IOC(_IOC_READ|_IOC_WRITE, 0x46, 0x2a, 0x20)" */
static bool
ioc_form(struct scan *sc, uint32_t *cmd)
{
	uint64_t dir = 0, f[3];
	for (;;) {
		if (starts(sc, "_IOC_NONE"))
			;
		else if (starts(sc, "_IOC_READ"))
			dir |= 2;
		else if (starts(sc, "_IOC_WRITE"))
			dir |= 1;
		else if (!number(sc, &f[0]) || f[0] > 3)
			return false;
		else
			dir |= f[0];
		if (!starts(sc, "|"))
			break;
	}
	for (int i = 0; i < 3; i++) {
		if (!starts(sc, ","))
			return false;
		spaces(sc);
		if (!number(sc, &f[i]))
			return false;
	}
	if (!starts(sc, ")") || f[0] > 0xff || f[1] > 0xff || f[2] > 0x3fff)
		return false;
	*cmd = (uint32_t)(dir << 30 | f[2] << 16 | f[0] << 8 | f[1]);
	return true;
}

/* The request: "0xc020462a" (-X raw), the same followed by a comment holding its _IOC form
 * (-X verbose), "_IOC(...)" (a number strace does not know) or a name strace knew. */
static bool
request_part(struct scan *sc, struct call *c, bool *other)
{
	uint64_t v;
	if (sc->p < sc->e && isdigit((unsigned char)*sc->p)) {
		if (!number(sc, &v) || v > UINT32_MAX)
			return false;
		c->cmd = (uint32_t)v;
		spaces(sc);
		if (starts(sc, "/*")) {
			const char *end = memmem(sc->p, (size_t)(sc->e - sc->p), "*/", 2);
			if (!end)
				return false;
			sc->p = end + 2;
		}
		return true;
	}
	if (starts(sc, "_IOC("))
		return ioc_form(sc, &c->cmd);
	char name[64];
	if (!word(sc, name, sizeof(name)))
		return false;
	for (size_t i = 0; i < sizeof(strace_aliases) / sizeof(strace_aliases[0]); i++)
		if (strcmp(name, strace_aliases[i].name) == 0) {
			c->cmd = strace_aliases[i].cmd;
			return true;
		}
	*other = true;
	return true;
}

static uint32_t
le32(const unsigned char *b)
{
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/* The parameter struct strace -v prints as a string, before (entry) or after the call
 * (exit): the fields nv_ioctls.tsv gives offsets for. */
static void
params(struct call *c, const unsigned char *b, size_t n, bool exit)
{
	if (CUT_IOC_TYPE(c->cmd) != CUT_NV_IOCTL_MAGIC || !CUT_IOC_DIR(c->cmd))
		return;
	unsigned nr = CUT_IOC_NR(c->cmd), size = CUT_IOC_SIZE(c->cmd);
	int status_at = -1;
	switch (nr) {
	case 0x2A: /* NV_ESC_RM_CONTROL: NVOS54 cmd@8, status@28 */
		if (!exit && n >= 12)
			c->ctrl = le32(b + 8), c->has |= HAS_CTRL;
		status_at = 28;
		break;
	case 0x2B: /* NV_ESC_RM_ALLOC: hClass@12; status@28 (NVOS21) or @40 (NVOS64) */
		if (!exit && n >= 16)
			c->cls = le32(b + 12), c->has |= HAS_CLASS;
		status_at = size == 32 ? 28 : size == 48 ? 40 : -1;
		break;
	case 0x27: /* NV_ESC_RM_ALLOC_MEMORY: hClass@12, status@40 */
	case 0x28: /* NV_ESC_RM_ALLOC_OBJECT: hClass@12 */
		if (!exit && n >= 16)
			c->cls = le32(b + 12), c->has |= HAS_CLASS;
		status_at = nr == 0x27 ? 40 : -1;
		break;
	case 0x29: /* NV_ESC_RM_FREE: status@12 */ status_at = 12; break;
	case 0xD3: /* NV_ESC_IOCTL_XFER_CMD: inner cmd@0 */
		if (!exit && n >= 4)
			c->xfer = le32(b), c->has |= HAS_XFER;
		break;
	}
	if (exit && status_at >= 0 && n >= (size_t)status_at + 4)
		c->status = le32(b + status_at), c->has |= HAS_STATUS;
}

/* ", \"...\"" and " => \"...\"" after the request or at the start of a resumed line. */
static void
arg_strings(struct scan *sc, struct call *c)
{
	unsigned char b[64];
	size_t n;
	struct scan t = *sc;
	if (starts(&t, ",")) {
		spaces(&t);
		if (qstring(&t, b, sizeof(b), &n)) {
			params(c, b, n, false);
			*sc = t;
		}
	}
	t = *sc;
	spaces(&t);
	if (starts(&t, "=>")) {
		spaces(&t);
		if (qstring(&t, b, sizeof(b), &n)) {
			params(c, b, n, true);
			*sc = t;
		}
	}
}

static int64_t
errno_value(const char *name)
{
	for (int i = 1; i < 4096; i++) {
		const char *s = strerrorname_np(i);
		if (s && strcmp(s, name) == 0)
			return -i;
	}
	return -1;
}

/* ") = 0 <0.000021>", ") = -1 ENOTTY (Inappropriate ioctl for device) <0.000005>",
 * ") = ?" : the end of a finished call. */
static int
result_part(struct scan *sc, struct call *c, char *why, size_t wl)
{
	const char *tail = NULL;
	for (const char *p = sc->p; (p = memmem(p, (size_t)(sc->e - p), ") = ", 4)); p++)
		tail = p;
	if (!tail) {
		snprintf(why, wl, "no \") = \" result in an ioctl line");
		return -1;
	}
	sc->p = tail + 4;
	uint64_t v;
	if (starts(sc, "?")) {
		/* the process went away during the call: no result */
	} else {
		bool neg = starts(sc, "-");
		if (!number(sc, &v) || v > INT64_MAX) {
			snprintf(why, wl, "bad ioctl result");
			return -1;
		}
		c->ret = neg ? -(int64_t)v : (int64_t)v;
		c->has |= HAS_RET;
		spaces(sc);
		char err[32];
		if (neg && word(sc, err, sizeof(err)))
			c->ret = errno_value(err);
	}
	const char *lt = NULL;
	for (const char *p = sc->p; (p = memchr(p, '<', (size_t)(sc->e - p))); p++)
		lt = p;
	if (lt) {
		struct scan t = {lt + 1, sc->e};
		int64_t d;
		if (seconds(&t, &d) && starts(&t, ">"))
			c->dur = d, c->has |= HAS_DUR;
	}
	return 0;
}

static bool
unfinished(struct scan *sc)
{
	static const char tag[] = "<unfinished ...>";
	const char *e = sc->e;
	while (e > sc->p && e[-1] == ' ')
		e--;
	return (size_t)(e - sc->p) >= sizeof(tag) - 1 &&
	       memcmp(e - (sizeof(tag) - 1), tag, sizeof(tag) - 1) == 0;
}

static int
bad(char *why, size_t wl, const char *what)
{
	snprintf(why, wl, "%s", what);
	return -1;
}

int
strace_feed(struct cut_strace *s, const char *line, size_t len, uint64_t lineno, char *why,
            size_t wl)
{
	struct scan sc = {line, line + len};
	uint64_t v;
	int64_t tid = 0, ts;
	while (sc.e > sc.p && (sc.e[-1] == '\r' || sc.e[-1] == ' '))
		sc.e--;
	spaces(&sc);
	if (sc.p == sc.e || starts(&sc, "strace: "))
		return 0;
	if (starts(&sc, "[pid")) {
		spaces(&sc);
		if (!number(&sc, &v) || !starts(&sc, "]"))
			return bad(why, wl, "bad [pid N] prefix");
		tid = (int64_t)v;
		spaces(&sc);
	} else {
		/* strace -f -o FILE starts lines with "PID  "; a timestamp has a dot. */
		struct scan t = sc;
		if (number(&t, &v) && t.p < t.e && *t.p == ' ') {
			tid = (int64_t)v;
			sc = t;
			spaces(&sc);
		}
	}
	if (tid < 0 || tid > INT32_MAX) /* a number past INT64_MAX reads negative */
		return bad(why, wl, "pid out of range");
	if (!seconds(&sc, &ts))
		return bad(why, wl, "no -ttt timestamp (seconds.fraction)");
	spaces(&sc);
	if (starts(&sc, "---") || starts(&sc, "+++")) {
		s->counts.skipped++;
		return 0;
	}
	char name[32];
	if (starts(&sc, "<... ")) {
		if (!word(&sc, name, sizeof(name)) || !starts(&sc, " resumed>"))
			return bad(why, wl, "bad \"<... resumed>\" line");
		if (strcmp(name, "ioctl") != 0) {
			s->counts.skipped++;
			return 0;
		}
		struct call *c = NULL;
		for (size_t i = s->n; i-- > 0;)
			if (!at(s, i)->done && at(s, i)->tid == tid) {
				c = at(s, i);
				break;
			}
		if (!c)
			return bad(why, wl, "ioctl resumed without an unfinished call of that pid");
		arg_strings(&sc, c);
		if (result_part(&sc, c, why, wl) < 0)
			return -1;
		if (!(c->has & HAS_DUR))
			c->dur = ts - c->ts, c->has |= c->dur >= 0 ? HAS_DUR : 0;
		c->done = true;
		return 0;
	}
	if (!word(&sc, name, sizeof(name)) || !starts(&sc, "("))
		return bad(why, wl, "not a system call line");
	if (strcmp(name, "ioctl") != 0) {
		s->counts.skipped++;
		return 0;
	}
	struct call tmp = {.ts = ts, .tid = tid, .line = lineno};
	bool other = false;
	if (!fd_part(&sc, &tmp, &other))
		return bad(why, wl, "bad file descriptor in ioctl line");
	spaces(&sc);
	if (!starts(&sc, ","))
		return bad(why, wl, "bad ioctl line: no request");
	spaces(&sc);
	if (!request_part(&sc, &tmp, &other))
		return bad(why, wl, "bad ioctl request");
	if (other) {
		s->counts.other++;
		return 0;
	}
	arg_strings(&sc, &tmp);
	bool split = unfinished(&sc);
	if (!split && result_part(&sc, &tmp, why, wl) < 0)
		return -1;
	struct call *c = push(s);
	if (!c)
		return bad(why, wl, "out of memory");
	*c = tmp;
	c->done = !split;
	return 0;
}

void
strace_finish(struct cut_strace *s)
{
	s->finished = true;
}

static void
arg_hex(struct cut_buf *b, const char *key, uint32_t v)
{
	buf_addf(b, ",\"%s\":\"0x%x\"", key, v);
}

int
strace_next(struct cut_strace *s, struct cut_event *ev, uint64_t *unfinished_line)
{
	if (!s->n || (!at(s, 0)->done && !s->finished))
		return 0;
	struct call *c = at(s, 0);
	s->head = (s->head + 1) % s->cap;
	s->n--;
	*unfinished_line = c->done ? 0 : c->line;
	if (!c->done)
		s->counts.unfinished++;
	s->counts.ioctls++;
	enum cut_nvdev dev = ioctl_dev_kind(c->dev);
	ioctl_request_name(c->cmd, dev, s->name, sizeof(s->name));
	buf_reset(&s->args);
	buf_addf(&s->args, "{\"fd\":%lld", (long long)c->fd);
	if (c->dev[0]) {
		buf_adds(&s->args, ",\"dev\":");
		buf_addjstr(&s->args, c->dev, strlen(c->dev));
	}
	arg_hex(&s->args, "cmd", c->cmd);
	if (c->has & HAS_CTRL)
		arg_hex(&s->args, "ctrl", c->ctrl);
	if (c->has & HAS_CLASS)
		arg_hex(&s->args, "class", c->cls);
	if (c->has & HAS_XFER)
		arg_hex(&s->args, "xfer", c->xfer);
	if (c->has & HAS_STATUS)
		buf_addf(&s->args, ",\"status\":%u", c->status);
	buf_addc(&s->args, '}');
	cut_event_init(ev);
	ev->ts = c->ts;
	if (c->has & HAS_DUR)
		ev->dur = c->dur, ev->has |= CUT_HAS_DUR;
	ev->pid = ev->tid = c->tid;
	ev->layer = CUT_IOCTL;
	ev->name = s->name;
	if (c->has & HAS_RET)
		ev->ret = c->ret, ev->has |= CUT_HAS_RET;
	ev->args = s->args.s;
	return 1;
}
