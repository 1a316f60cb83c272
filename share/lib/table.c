/* table.c: report tables (table.h): a row at a time, written as text or CSV at once or added
 * to a JSON array, so that a table of many rows takes no more memory than one. */
#include <err.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "cut.h"
#include "demangle.h"
#include "table.h"
#include "text.h"
#include "units.h"

/* How text is shown: the columns a line may take (0: no limit) and whether names stay as the
 * trace has them. */
static size_t text_width = CUT_TABLE_WIDTH;
static bool keep_mangled;

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

/* Whether format f shows column c. */
static bool
shows(const struct cut_col *c, enum cut_fmt f)
{
	return (f == CUT_FMT_TEXT ? c->head : f == CUT_FMT_CSV ? c->csv : c->key) != NULL;
}

/* The column of a name (its key or its csv), one that format f shows first (f < 0: any). */
static int
col_named(const struct cut_table_def *def, const char *name, size_t n, int f)
{
	for (int pass = f < 0; pass < 2; pass++)
		for (int col = 0; col < def->ncols; col++) {
			const struct cut_col *c = &def->cols[col];
			if (pass == 0 && !shows(c, (enum cut_fmt)f))
				continue;
			if ((c->key && strlen(c->key) == n && memcmp(c->key, name, n) == 0) ||
			    (c->csv && strlen(c->csv) == n && memcmp(c->csv, name, n) == 0))
				return col;
		}
	bug("no column of that name", name, n);
}

struct cut_table *
cut_table_new(const struct cut_table_def *def, enum cut_fmt fmt)
{
	struct cut_table *t = cut_xcalloc(1, sizeof(*t));
	if (def->ncols > CUT_TABLE_MAX)
		bug("too many columns", "", 0);
	t->def = def;
	t->fmt = fmt;
	if (fmt == CUT_FMT_JSON && !(t->arr = json_array()))
		cut_out_of_memory();
	const char *order = fmt == CUT_FMT_TEXT ? def->text : fmt == CUT_FMT_CSV ? def->csv : NULL;
	int n = 0;
	if (!order)
		for (; n < def->ncols; n++)
			t->order[n] = n;
	else
		for (const char *p = order; *p && n < CUT_TABLE_MAX; n++) {
			size_t len = strcspn(p, " ");
			t->order[n] = col_named(def, p, len, (int)fmt);
			p += len + strspn(p + len, " ");
		}
	t->order[n] = -1;
	return t;
}

void
cut_table_hide(struct cut_table *t, const char *name)
{
	t->hidden[col_named(t->def, name, strlen(name), -1)] = true;
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

void
cut_table_display(size_t width, bool mangled)
{
	text_width = width;
	keep_mangled = mangled;
}

size_t
cut_table_width(void)
{
	return text_width;
}

const char *
cut_table_name(const char *name)
{
	return keep_mangled ? name : cut_demangle(name);
}

const char *
cut_table_mangled(const char *name)
{
	return name && !keep_mangled && cut_demangle(name) != name ? name : NULL;
}

const char *
cut_table_fit(const char *s, size_t room)
{
	return text_width && room ? cut_name_short(s, room) : s;
}

/* Prints the n bytes of s as lines of at most text_width columns, broken at spaces (a word
 * longer than a line stays whole), the lines after the first indented by two spaces. */
static void
print_wrapped(const char *s, size_t n)
{
	const char *indent = "";
	if (!n)
		putchar('\n');
	while (n) {
		size_t room = text_width ? text_width - strlen(indent) : SIZE_MAX;
		size_t cols = 0, i,
		       brk = SIZE_MAX; /* brk: the last space that ends a line in room */
		for (i = 0; i < n; i++) {
			if (s[i] == ' ' && i && cols <= room)
				brk = i;
			cols += (s[i] & 0xC0) != 0x80;
			if (cols > room)
				break;
		}
		if (i == n)
			brk = n;
		else if (brk == SIZE_MAX) /* no space in room: up to the next */
			for (brk = i; brk < n && s[brk] != ' '; brk++)
				;
		printf("%s%.*s\n", indent, (int)brk, s);
		brk += brk < n; /* the space */
		s += brk, n -= brk;
		indent = "  ";
	}
}

void
cut_table_say(const char *fmt, ...)
{
	static struct cut_buf b;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	buf_reset(&b);
	char *p = buf_room(&b, (size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	if (n && p[n - 1] == '\n')
		p[n - 1] = '\0';
	for (char *nl; (nl = strchr(p, '\n')); p = nl + 1)
		print_wrapped(p, (size_t)(nl - p));
	print_wrapped(p, strlen(p));
}

/* Whether a cell is set: a NULL string is not. */
static bool
is_set(const struct cut_cell *v)
{
	return v->tag && (v->tag != 's' || v->v.s);
}

/* A cell's text before padding: numbers formatted into d (n bytes), strings escaped. */
static const char *
text_of(const struct cut_col *c, const struct cut_cell *v, char *d, size_t n)
{
	if (!is_set(v))
		return "-";
	switch (c->kind) {
	case CUT_COL_STR:
		if (!*v->v.s && (c->flags & CUT_COL_DASH))
			return "-";
		return c->flags & CUT_COL_RAW ? v->v.s : cut_esc(v->v.s);
	case CUT_COL_INT: snprintf(d, n, "%lld", (long long)v->v.i); break;
	case CUT_COL_DUR: cut_format_duration((double)v->v.i, d, n); break;
	case CUT_COL_REAL: snprintf(d, n, "%.*f", c->prec, v->v.r); break;
	case CUT_COL_PCT: snprintf(d, n, "%.1f%%", v->v.r); break;
	case CUT_COL_JSON: return "";
	}
	return d;
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

/* Renders the header (row NULL) or a row as a line of text or CSV into t->line; in text,
 * the last cell shortened to the width left (cut_table_fit); with upto, the text up to the
 * table's last column. */
static void
render(struct cut_table *t, const struct cut_cell *row, bool upto)
{
	int last = -1, tlast = -1; /* text: a row ends at its last set (or null) cell */
	for (int k = 0, col; (col = t->order[k]) >= 0; k++) {
		if (name_in(t, col, t->fmt) &&
		    (!row || is_set(&row[col]) || (t->def->cols[col].flags & CUT_COL_NULL)))
			last = k;
		if (name_in(t, col, t->fmt))
			tlast = k;
	}
	if (upto)
		last = tlast;
	buf_reset(&t->line);
	buf_add(&t->line, "", 0);
	bool first = true;
	for (int k = 0, col; (col = t->order[k]) >= 0 && (t->fmt == CUT_FMT_CSV || k <= last);
	     k++) {
		const struct cut_col *c = &t->def->cols[col];
		const char *name = name_in(t, col, t->fmt), *s;
		char d[64];
		if (!name)
			continue;
		if (!first)
			buf_adds(&t->line, t->fmt == CUT_FMT_CSV    ? ","
			                   : c->flags & CUT_COL_GAP ? "  "
			                                            : " ");
		first = false;
		if (t->fmt == CUT_FMT_CSV) {
			if (!row)
				buf_adds(&t->line, name);
			else
				add_csv_cell(&t->line, c, &row[col]);
			continue;
		}
		if (k == last && upto)
			return;
		s = row ? text_of(c, &row[col], d, sizeof(d)) : name;
		if (k == last && row && c->kind == CUT_COL_STR)
			s = cut_table_fit(s, cut_table_room(t, NULL));
		buf_addf(&t->line, "%*s", c->width, s);
	}
	buf_addc(&t->line, '\n');
}

static void
write_line(struct cut_table *t, const struct cut_cell *row)
{
	render(t, row, false);
	cut_write_buf(&t->line);
}

size_t
cut_table_room(struct cut_table *t, const struct cut_cell *row)
{
	if (!text_width || t->fmt != CUT_FMT_TEXT)
		return 0;
	if (row) /* else the line rendered so far */
		render(t, row, true);
	size_t used = t->line.s ? cut_name_cols(t->line.s) : 0;
	return used + CUT_TABLE_MIN_ROOM < text_width ? text_width - used : CUT_TABLE_MIN_ROOM;
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
