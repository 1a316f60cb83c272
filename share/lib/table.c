/* table.c: report tables (table.h): a row at a time, written as text or CSV at once or added
 * to a JSON array, so that a table of many rows takes no more memory than one. */
#include <err.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "cut.h"
#include "table.h"
#include "text.h"
#include "units.h"

struct cut_table {
	const struct cut_table_def *def;
	enum cut_fmt fmt;
	bool header, hidden[CUT_TABLE_MAX];
	int order[CUT_TABLE_MAX + 1]; /* the columns in the format's order, then -1 */
	struct cut_buf line;
	json_t *arr;
};

/* A mistake of the program, not of the input. */
static _Noreturn void
bug(const char *what, const char *name, size_t n)
{
	warnx("table: %s: %.*s", what, (int)n, name);
	abort();
}

/* The column of a name: its key, else its csv (its csv first when csv_first). */
static int
col_named(const struct cut_table_def *def, const char *name, size_t n, bool csv_first)
{
	for (int pass = 0; pass < 2; pass++)
		for (int col = 0; col < def->ncols; col++) {
			const char *a =
			    (pass == 0) == csv_first ? def->cols[col].csv : def->cols[col].key;
			if (a && strlen(a) == n && memcmp(a, name, n) == 0)
				return col;
		}
	bug("no column of that name", name, n);
}

struct cut_table *
cut_table_new(const struct cut_table_def *def, enum cut_fmt fmt)
{
	struct cut_table *t = calloc(1, sizeof(*t));
	if (!t)
		err(CUT_EXIT_FATAL, "out of memory");
	if (def->ncols > CUT_TABLE_MAX)
		bug("too many columns", "", 0);
	t->def = def;
	t->fmt = fmt;
	if (fmt == CUT_FMT_JSON && !(t->arr = json_array()))
		err(CUT_EXIT_FATAL, "out of memory");
	const char *order = fmt == CUT_FMT_TEXT ? def->text : fmt == CUT_FMT_CSV ? def->csv : NULL;
	int n = 0;
	if (!order)
		for (; n < def->ncols; n++)
			t->order[n] = n;
	else
		for (const char *p = order; *p && n < CUT_TABLE_MAX; n++) {
			size_t len = strcspn(p, " ");
			t->order[n] = col_named(def, p, len, fmt == CUT_FMT_CSV);
			p += len + strspn(p + len, " ");
		}
	t->order[n] = -1;
	return t;
}

void
cut_table_hide(struct cut_table *t, const char *name)
{
	t->hidden[col_named(t->def, name, strlen(name), false)] = true;
}

/* The name column col has in format f, NULL when f does not show it. */
static const char *
name_in(const struct cut_table *t, int col, enum cut_fmt f)
{
	const struct cut_col *c = &t->def->cols[col];
	if (t->hidden[col])
		return NULL;
	return f == CUT_FMT_TEXT ? c->head : f == CUT_FMT_CSV ? c->csv : c->key;
}

/* Whether a cell is set: a NULL string is not. */
static bool
is_set(const struct cut_cell *v)
{
	return v->tag && (v->tag != 's' || v->v.s);
}

/* Appends s in the width of column c. */
static void
add_padded(struct cut_buf *b, const struct cut_col *c, const char *s)
{
	buf_addf(b, "%*s", c->width, s);
}

static void
add_text_cell(struct cut_buf *b, const struct cut_col *c, const struct cut_cell *v)
{
	char d[32];
	if (!is_set(v)) {
		add_padded(b, c, "-");
		return;
	}
	switch (c->kind) {
	case CUT_COL_STR: {
		const char *s = v->v.s;
		if (!*s && (c->flags & CUT_COL_DASH))
			s = "-";
		add_padded(b, c, c->flags & CUT_COL_RAW ? s : cut_esc(s));
		break;
	}
	case CUT_COL_INT: buf_addf(b, "%*lld", c->width, (long long)v->v.i); break;
	case CUT_COL_DUR:
		add_padded(b, c, cut_format_duration((double)v->v.i, d, sizeof(d)));
		break;
	case CUT_COL_REAL: buf_addf(b, "%*.*f", c->width, c->prec, v->v.r); break;
	case CUT_COL_PCT:
		buf_addf(b, "%*.1f%%", c->width > 0 ? c->width - 1 : c->width + 1, v->v.r);
		break;
	case CUT_COL_JSON: break;
	}
}

static void
add_csv_cell(struct cut_buf *b, const struct cut_col *c, const struct cut_cell *v)
{
	if (!is_set(v))
		return;
	switch (c->kind) {
	case CUT_COL_STR: cut_csv_field(b, v->v.s, strlen(v->v.s)); break;
	case CUT_COL_INT:
	case CUT_COL_DUR: buf_addi64(b, v->v.i); break;
	case CUT_COL_REAL: buf_addf(b, "%.*f", c->prec, v->v.r); break;
	case CUT_COL_PCT: buf_addf(b, "%.2f", v->v.r); break;
	case CUT_COL_JSON: break;
	}
}

/* Writes the header (row NULL) or a row as a line of text or CSV. */
static void
write_line(struct cut_table *t, const struct cut_cell *row)
{
	int last = -1; /* text: a row ends at its last set (or null) cell */
	for (int k = 0, col; (col = t->order[k]) >= 0; k++)
		if (name_in(t, col, t->fmt) &&
		    (!row || is_set(&row[col]) || (t->def->cols[col].flags & CUT_COL_NULL)))
			last = k;
	bool first = true;
	for (int k = 0, col; (col = t->order[k]) >= 0 && (t->fmt == CUT_FMT_CSV || k <= last);
	     k++) {
		const struct cut_col *c = &t->def->cols[col];
		const char *name = name_in(t, col, t->fmt);
		if (!name)
			continue;
		if (!first)
			buf_adds(&t->line, t->fmt == CUT_FMT_CSV    ? ","
			                   : c->flags & CUT_COL_GAP ? "  "
			                                            : " ");
		first = false;
		if (!row && t->fmt == CUT_FMT_TEXT)
			add_padded(&t->line, c, name);
		else if (!row)
			buf_adds(&t->line, name);
		else if (t->fmt == CUT_FMT_TEXT)
			add_text_cell(&t->line, c, &row[col]);
		else
			add_csv_cell(&t->line, c, &row[col]);
	}
	buf_addc(&t->line, '\n');
	cut_write_buf(&t->line);
}

/* A row as a JSON object. */
static json_t *
row_json(const struct cut_table *t, const struct cut_cell *row)
{
	json_t *o = json_object();
	for (int col = 0; col < t->def->ncols; col++) {
		const struct cut_col *c = &t->def->cols[col];
		const struct cut_cell *v = &row[col];
		if (!name_in(t, col, CUT_FMT_JSON) || (!is_set(v) && !(c->flags & CUT_COL_NULL)))
			continue;
		json_t *x = !is_set(v)                ? json_null()
		            : c->kind == CUT_COL_STR  ? json_string(v->v.s)
		            : c->kind == CUT_COL_JSON ? json_incref(v->v.j)
		            : v->tag == 'r'           ? json_real(v->v.r)
		                                      : json_integer(v->v.i);
		json_t *in = o;
		const char *key = c->key, *dot = strchr(key, '.');
		if (dot) { /* a member of a member */
			char outer[64];
			snprintf(outer, sizeof(outer), "%.*s", (int)(dot - key), key);
			if (!(in = json_object_get(o, outer)))
				json_object_set_new(o, outer, in = json_object());
			key = dot + 1;
		}
		json_object_set_new(in, key, x);
	}
	return o;
}

/* The tag a cell of a column of kind k has. */
static char
tag_of(enum cut_col_kind k)
{
	switch (k) {
	case CUT_COL_STR: return 's';
	case CUT_COL_INT:
	case CUT_COL_DUR: return 'i';
	case CUT_COL_REAL:
	case CUT_COL_PCT: return 'r';
	case CUT_COL_JSON: return 'j';
	}
	return 0;
}

void
cut_table_add(struct cut_table *t, const struct cut_cell *row)
{
	for (int col = 0; col < t->def->ncols; col++) {
		const struct cut_col *c = &t->def->cols[col];
		const char *name = c->key ? c->key : c->csv ? c->csv : c->head ? c->head : "?";
		if (row[col].tag && row[col].tag != tag_of(c->kind))
			bug("a cell of another kind than its column", name, strlen(name));
	}
	if (t->fmt == CUT_FMT_JSON)
		json_array_append_new(t->arr, row_json(t, row));
	else {
		if (!t->header)
			write_line(t, NULL);
		t->header = true;
		write_line(t, row);
	}
	for (int col = 0; col < t->def->ncols; col++)
		if (row[col].tag == 'j')
			json_decref(row[col].v.j);
}

json_t *
cut_table_end(struct cut_table *t)
{
	if (t->fmt != CUT_FMT_JSON && !t->header)
		write_line(t, NULL);
	json_t *arr = t->arr;
	buf_free(&t->line);
	free(t);
	return arr;
}
