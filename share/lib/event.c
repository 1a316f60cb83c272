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

static void
add_int_field(struct cut_buf *b, const char *key, size_t keylen, int64_t v)
{
	buf_add(b, key, keylen);
	buf_addi64(b, v);
}

static void
add_str_field(struct cut_buf *b, const char *key, size_t keylen, const char *v)
{
	buf_add(b, key, keylen);
	buf_addjstr(b, v, strlen(v));
}

#define KEY(s) s, sizeof(s) - 1

void
cut_event_format(struct cut_buf *b, const struct cut_event *ev)
{
	add_int_field(b, KEY("{\"ts\":"), ev->ts);
	if (ev->has & CUT_HAS_DUR)
		add_int_field(b, KEY(",\"dur\":"), ev->dur);
	if (ev->host)
		add_str_field(b, KEY(",\"host\":"), ev->host);
	if (ev->has & CUT_HAS_RANK)
		add_int_field(b, KEY(",\"rank\":"), ev->rank);
	add_int_field(b, KEY(",\"pid\":"), ev->pid);
	add_int_field(b, KEY(",\"tid\":"), ev->tid);
	add_str_field(b, KEY(",\"layer\":"), layer_name(ev->layer));
	add_str_field(b, KEY(",\"name\":"), ev->name ? ev->name : "");
	if (ev->cat)
		add_str_field(b, KEY(",\"cat\":"), ev->cat);
	if (ev->has & CUT_HAS_RET)
		add_int_field(b, KEY(",\"ret\":"), ev->ret);
	if (ev->has & CUT_HAS_ID)
		add_int_field(b, KEY(",\"id\":"), ev->id);
	if (ev->has & CUT_HAS_PARENT)
		add_int_field(b, KEY(",\"parent\":"), ev->parent);
	if (ev->pname)
		add_str_field(b, KEY(",\"pname\":"), ev->pname);
	if (ev->has & CUT_HAS_NIOCTL) {
		add_int_field(b, KEY(",\"nioctl\":"), ev->nioctl);
		add_int_field(b, KEY(",\"ioctl_ns\":"), ev->ioctl_ns);
	}
	if (ev->args) {
		buf_add(b, KEY(",\"args\":"));
		buf_adds(b, ev->args);
	}
	if (ev->extra && *ev->extra) {
		buf_addc(b, ',');
		buf_adds(b, ev->extra);
	}
	buf_addc(b, '}');
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
