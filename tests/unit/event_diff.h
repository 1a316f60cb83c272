/* event_diff.h: field-by-field comparison of events (args and extra compared as JSON), and
 * deep copies, shared by the reader's unit tests and its differential fuzzer. */
#ifndef EVENT_DIFF_H
#define EVENT_DIFF_H

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event.h"

static inline int
json_text_equal(const char *a, const char *b)
{
	if (!a || !b)
		return a == b;
	if (strcmp(a, b) == 0) /* also for numbers jansson cannot hold, which the reader keeps */
		return 1;
	json_t *x = json_loads(a, 0, NULL), *y = json_loads(b, 0, NULL);
	int eq = x && y && json_equal(x, y);
	json_decref(x);
	json_decref(y);
	return eq;
}

static inline int
str_equal(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static inline int
extra_equal(const char *a, const char *b)
{
	if (!a || !b)
		return a == b;
	char *x = malloc(strlen(a) + 3), *y = malloc(strlen(b) + 3);
	sprintf(x, "{%s}", a);
	sprintf(y, "{%s}", b);
	int eq = json_text_equal(x, y);
	free(x);
	free(y);
	return eq;
}

/* Field by field equality; returns the name of the first field that differs, or NULL. */
static inline const char *
event_diff(const struct cut_event *a, const struct cut_event *b)
{
	if (a->has != b->has)
		return "has";
	if (a->ts != b->ts)
		return "ts";
	if ((a->has & CUT_HAS_DUR) && a->dur != b->dur)
		return "dur";
	if (!str_equal(a->host, b->host))
		return "host";
	if ((a->has & CUT_HAS_RANK) && a->rank != b->rank)
		return "rank";
	if (a->pid != b->pid || a->tid != b->tid)
		return "pid/tid";
	if (a->layer != b->layer)
		return "layer";
	if (!str_equal(a->name, b->name))
		return "name";
	if (!str_equal(a->cat, b->cat))
		return "cat";
	if ((a->has & CUT_HAS_RET) && a->ret != b->ret)
		return "ret";
	if ((a->has & CUT_HAS_ID) && a->id != b->id)
		return "id";
	if ((a->has & CUT_HAS_PARENT) && a->parent != b->parent)
		return "parent";
	if (!str_equal(a->pname, b->pname))
		return "pname";
	if ((a->has & CUT_HAS_NIOCTL) && (a->nioctl != b->nioctl || a->ioctl_ns != b->ioctl_ns))
		return "nioctl";
	if (!json_text_equal(a->args, b->args))
		return "args";
	if (!extra_equal(a->extra, b->extra))
		return "extra";
	return NULL;
}

/* A deep copy of the strings of ev, so two parsers' events can be compared. */
struct owned {
	struct cut_event ev;
	char *s[6];
};

static inline void
own(struct owned *o, const struct cut_event *ev)
{
	o->ev = *ev;
	const char **f[6] = {&o->ev.host,  &o->ev.name, &o->ev.cat,
	                     &o->ev.pname, &o->ev.args, &o->ev.extra};
	for (int i = 0; i < 6; i++)
		o->s[i] = *f[i] ? strdup(*f[i]) : NULL, *f[i] = o->s[i];
}

static inline void
disown(struct owned *o)
{
	for (int i = 0; i < 6; i++)
		free(o->s[i]);
}

#endif
