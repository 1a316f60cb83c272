/* table.h: a section of a report written once, as typed columns and rows of cells, and printed
 * from the same cells as aligned text, CSV or JSON (cutstat, cutgaps and the job view), as
 * bpftrace's Output prints one map as text or JSON. */
#ifndef CUT_TABLE_H
#define CUT_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

enum cut_fmt { CUT_FMT_TEXT, CUT_FMT_CSV, CUT_FMT_JSON };

/* What a column holds, which decides how each format writes it. */
enum cut_col_kind {
	CUT_COL_STR,  /* a string (from the trace): escaped in text (cut_esc), a CSV field
	                 (cut_csv), a JSON string */
	CUT_COL_INT,  /* an integer (a count, a rank, nanoseconds as they are) */
	CUT_COL_DUR,  /* nanoseconds: "1.250 ms" in text, an integer in CSV and JSON */
	CUT_COL_REAL, /* a real: prec decimals in text and CSV, a JSON real */
	CUT_COL_PCT,  /* a percentage: one decimal and "%" in text, two decimals in CSV, a JSON
	                 real */
	CUT_COL_JSON, /* a JSON value the caller builds (JSON only) */
};

/* Column flags. */
enum {
	CUT_COL_GAP = 1,  /* text: two spaces before it, not one */
	CUT_COL_DASH = 2, /* text: "-" for an empty string */
	CUT_COL_NULL = 4, /* not set: null in JSON (else the member is left out), "-" in text
	                     even at the end of a row */
	CUT_COL_RAW = 8,  /* text: printed as it is (the caller escaped what came from the trace) */
};

/*
 * A column. A format shows it when it has a name there: key (the JSON member; "a.b" is member
 * b of the row's object a, made where a first appears), csv (the CSV header) or head (the text
 * header). In text, width > 0 right-aligns the cell and its header in width columns, width < 0
 * left-aligns them in -width, and 0 writes them as they are (the last column). A row's text
 * ends at its last set cell; an unset cell before it prints "-"; in CSV it is an empty field.
 */
struct cut_col {
	const char *key, *csv, *head;
	enum cut_col_kind kind;
	int width, prec;
	unsigned flags;
};

/*
 * A table's columns, in the order of the JSON members, and the order of the text and CSV
 * columns where it differs: the columns' names separated by spaces (a column is named by its
 * key or its csv; of two of a name, the one the format shows). ncols is CUT_NCOLS(cols).
 */
struct cut_table_def {
	const struct cut_col *cols;
	int ncols;
	const char *text, *csv;
};
#define CUT_NCOLS(cols) ((int)(sizeof(cols) / sizeof((cols)[0])))

struct cut_table;

/* A table of def printed in fmt: text and CSV on standard output, each row as it is added,
 * after the header (written before the first row, or at the end when there is none); JSON
 * into an array that cut_table_end returns. Exits with status 2 when memory runs out. */
struct cut_table *cut_table_new(const struct cut_table_def *def, enum cut_fmt fmt);
/* Leaves the column of that name out of every format (before the first row). */
void cut_table_hide(struct cut_table *t, const char *name);
/*
 * A row: a cell per column, in the order of the table's columns, made with CUT_ROW(CUT_S(name),
 * CUT_I(calls), ...). A cell's value must be of its column's kind: a string for CUT_COL_STR,
 * an integer for CUT_COL_INT and CUT_COL_DUR, a real for CUT_COL_REAL and CUT_COL_PCT, a JSON
 * value (taken over) for CUT_COL_JSON; a cell left out, CUT_IF false or a NULL string is not
 * set. A table has at most CUT_TABLE_MAX columns.
 */
struct cut_cell {
	char tag; /* 's', 'i', 'r', 'j'; 0: not set */
	union {
		const char *s;
		int64_t i;
		double r;
		json_t *j;
	} v;
};
#define CUT_S(x) ((struct cut_cell){.tag = 's', .v.s = (x)})
#define CUT_I(x) ((struct cut_cell){.tag = 'i', .v.i = (x)})
#define CUT_R(x) ((struct cut_cell){.tag = 'r', .v.r = (x)})
#define CUT_J(x) ((struct cut_cell){.tag = 'j', .v.j = (x)})
#define CUT_IF(cond, cell) ((cond) ? (cell) : (struct cut_cell){0})
#define CUT_TABLE_MAX 32
#define CUT_ROW(...) ((const struct cut_cell[CUT_TABLE_MAX]){__VA_ARGS__})

/* Writes a row (text and CSV) or adds it to the array (JSON). A cell of the wrong kind is a
 * mistake of the program: it aborts. */
void cut_table_add(struct cut_table *t, const struct cut_cell *row);
/* Writes the header if no row did, frees the table and returns the JSON array (a new
 * reference), or NULL in text and CSV. */
json_t *cut_table_end(struct cut_table *t);

/*
 * How text shows names and how wide its lines are, for every table and cut_table_say:
 * width, the columns a line may take (CUT_TABLE_WIDTH by default; 0: no limit, names whole);
 * mangled, names as the trace has them rather than demangled. A tool calls it once, from its
 * options (-w, -M), before it prints.
 */
#define CUT_TABLE_WIDTH 160
void cut_table_display(size_t width, bool mangled);
/* The width set (0: no limit). */
size_t cut_table_width(void);
/* The name a report shows for a name from the trace: demangled (cut_demangle), or as it is
 * with mangled. NULL gives NULL. */
const char *cut_table_name(const char *name);
/* The name as the trace has it when the report shows another (demangled), else NULL: for the
 * "mangled" member and column that go with a name. */
const char *cut_table_mangled(const char *name);
/*
 * The columns the text of a row's cell in the table's last column may take so that the line
 * fits the width: the width less what the row's cells before it take (at least
 * CUT_TABLE_MIN_ROOM), or 0 when there is no limit or the table is not text. For a cell the
 * caller puts together from names (cut_table_fit them to it); a string that ends a row is
 * fitted by the table itself.
 */
#define CUT_TABLE_MIN_ROOM 24
size_t cut_table_room(struct cut_table *t, const struct cut_cell *row);
/* s shortened to room columns by the rule of cut_name_short (its template arguments and
 * parameter lists elided first), or s when room is 0 or there is no limit. */
const char *cut_table_fit(const char *s, size_t room);
/* Prints a line of text (printf), broken at spaces into lines of the width, those after the
 * first indented by two spaces; a newline in it starts a line. */
void cut_table_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
