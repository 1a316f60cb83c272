/* event.c: the layers, event categories and the canonical writer. */
#include <stdlib.h>
#include <string.h>

#include "classify.h"
#include "event.h"

static const struct {
	const char *name, *label;
} layers[CUT_NLAYERS] = {
#define CUT_LAYER_ROW(e, name, rank, label) [CUT_##e] = {name, label},
    CUT_LAYERS(CUT_LAYER_ROW)
#undef CUT_LAYER_ROW
};

static inline const char *
layer_name(enum cut_layer l)
{
	return (unsigned)l < CUT_NLAYERS ? layers[l].name : "?";
}

const char *
cut_layer_name(enum cut_layer l)
{
	return layer_name(l);
}

const char *
cut_layer_label(enum cut_layer l)
{
	return (unsigned)l < CUT_NLAYERS ? layers[l].label : "?";
}

int
cut_layer_from_name(const char *s)
{
	for (int i = 0; i < CUT_NLAYERS; i++)
		if (strcmp(s, layers[i].name) == 0)
			return i;
	return -1;
}

const char *
cut_event_category(const struct cut_event *ev)
{
	if (ev->cat)
		return ev->cat;
	if (ev->layer == CUT_API)
		return cut_api_category(ev->name);
	int c;
	if (ev->layer == CUT_RUNTIME && (c = cut_api_category_find(ev->name)) >= 0)
		return cut_category_name((enum cut_category)c);
	return cut_layer_name(ev->layer);
}

/* ---- writer ---- */

/* A member's key, a constant: a fixed-size copy. */
#define PUT_KEY(p, k) (memcpy(p, k, sizeof(k) - 1), (p) + sizeof(k) - 1)

static inline size_t
len_or_0(const char *s)
{
	return s ? strlen(s) : 0;
}

/* One pass: room for the longest form once (numbers 20 bytes, strings escaped at worst 6
 * bytes a byte, args and extra as they are), then every member written in place. */
void
cut_event_format(struct cut_buf *b, const struct cut_event *ev)
{
	const char *name = ev->name ? ev->name : "";
	size_t nname = strlen(name), nhost = len_or_0(ev->host), ncat = len_or_0(ev->cat),
	       npname = len_or_0(ev->pname), nargs = len_or_0(ev->args),
	       nextra = len_or_0(ev->extra);
	char *p = buf_room(b, 512 + 6 * (nname + nhost + ncat + npname) + nargs + nextra);
	p = buf_put_i64(PUT_KEY(p, "{\"ts\":"), ev->ts);
	if (ev->has & CUT_HAS_DUR)
		p = buf_put_i64(PUT_KEY(p, ",\"dur\":"), ev->dur);
	if (ev->host)
		p = buf_put_jstr(PUT_KEY(p, ",\"host\":"), ev->host, nhost);
	if (ev->has & CUT_HAS_RANK)
		p = buf_put_i64(PUT_KEY(p, ",\"rank\":"), ev->rank);
	p = buf_put_i64(PUT_KEY(p, ",\"pid\":"), ev->pid);
	p = buf_put_i64(PUT_KEY(p, ",\"tid\":"), ev->tid);
	const char *layer = layer_name(ev->layer);
	p = buf_put_jstr(PUT_KEY(p, ",\"layer\":"), layer, strlen(layer));
	p = buf_put_jstr(PUT_KEY(p, ",\"name\":"), name, nname);
	if (ev->cat)
		p = buf_put_jstr(PUT_KEY(p, ",\"cat\":"), ev->cat, ncat);
	if (ev->has & CUT_HAS_RET)
		p = buf_put_i64(PUT_KEY(p, ",\"ret\":"), ev->ret);
	if (ev->has & CUT_HAS_ID)
		p = buf_put_i64(PUT_KEY(p, ",\"id\":"), ev->id);
	if (ev->has & CUT_HAS_PARENT)
		p = buf_put_i64(PUT_KEY(p, ",\"parent\":"), ev->parent);
	if (ev->pname)
		p = buf_put_jstr(PUT_KEY(p, ",\"pname\":"), ev->pname, npname);
	if (ev->has & CUT_HAS_NIOCTL) {
		p = buf_put_i64(PUT_KEY(p, ",\"nioctl\":"), ev->nioctl);
		p = buf_put_i64(PUT_KEY(p, ",\"ioctl_ns\":"), ev->ioctl_ns);
	}
	if (ev->args) {
		p = PUT_KEY(p, ",\"args\":");
		memcpy(p, ev->args, nargs);
		p += nargs;
	}
	if (nextra) {
		*p++ = ',';
		memcpy(p, ev->extra, nextra);
		p += nextra;
	}
	*p++ = '}';
	buf_commit(b, p);
}

int
cut_event_write(FILE *f, const struct cut_event *ev)
{
	static __thread struct cut_buf b;
	buf_reset(&b);
	cut_event_format(&b, ev);
	buf_addc(&b, '\n');
	return fwrite(b.s, 1, b.len, f) == b.len ? 0 : -1;
}
