/* Report tables: columns with units, rows of cells, markdown/CSV/JSON/HTML output, and comparison of two. */
#ifndef RB_RTABLE_INT_H
#define RB_RTABLE_INT_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "railbench/buf.h"

/* How a column shows its numbers. */
enum rb_rfmt {
    RB_RF_TEXT, /* text cells */
    RB_RF_NUM,  /* value x scale with a fixed number of decimals */
    RB_RF_SIZE, /* bytes as "4 KiB", "1 MiB" (raw bytes in CSV) */
};

enum {
    RB_RCOL_KEY = 1u << 0,       /* identifies a row within one run (op, size, epoch) */
    RB_RCOL_IDENT = 1u << 1,     /* the run's name and labels; not matched when comparing */
    RB_RCOL_OPTIONAL = 1u << 2,  /* left out of the output when no row has a value */
    RB_RCOL_JSON_ONLY = 1u << 3, /* only in JSON output */
    RB_RCOL_NOTE = 1u << 4,      /* text beside the figures (knee, "best within SLO"); never compared */
};

/* What a cell without a figure shows (en dash): not measured, or not applicable; never 0. */
#define RB_RTABLE_MISSING "\xE2\x80\x93"

/* Which way a figure gets better. */
enum rb_better { RB_BETTER_NONE, RB_BETTER_HIGHER, RB_BETTER_LOWER };

struct rb_rcol {
    char *key;    /* JSON key with units ("latency_p99_ns"); also how rb_rtable_better judges it */
    char *head;   /* header with display units ("p99 (ms)") */
    enum rb_rfmt fmt;
    int decimals;
    double scale; /* display value = value x scale */
    unsigned flags;
};

/* A cell: text is shown when set, else num through the column's format; JSON gets num when has_num. */
struct rb_rcell {
    char *text;
    double num;
    bool has_num;
};

struct rb_rtable {
    char *id;     /* the table's kind ("load", "collectives"); tables compare only with the same id */
    char *title;
    struct rb_rcol *cols;
    size_t ncols;
    struct rb_rcell *cells; /* nrows x ncols */
    size_t nrows, caprows;
    char **notes;           /* lines printed under the table */
    size_t nnotes;
    bool oom;               /* an allocation failed; the table is incomplete */
};

/* A new empty table; NULL when out of memory. Free with rb_rtable_free (NULL-safe). */
struct rb_rtable *rb_rtable_new(const char *id, const char *title);
void rb_rtable_free(struct rb_rtable *t);

/*
 * Adds a column (before any row). key is unique within the table. Returns its
 * index, or -1 (and sets t->oom) when out of memory.
 */
int rb_rtable_col(struct rb_rtable *t, const char *key, const char *head, enum rb_rfmt fmt, int decimals,
                  double scale, unsigned flags);

/* Index of the column with this key, or -1. */
int rb_rtable_find(const struct rb_rtable *t, const char *key);

/* Appends an empty row and returns its index (t->oom and the last row's index when out of memory). */
size_t rb_rtable_row(struct rb_rtable *t);

/* Sets a number (NAN or infinity leaves the cell empty). An unknown key is ignored. */
void rb_rtable_num(struct rb_rtable *t, size_t row, const char *key, double v);

/* Sets a text cell (copied); NULL clears it. An unknown key is ignored. */
void rb_rtable_text(struct rb_rtable *t, size_t row, const char *key, const char *s);

/* Adds a line under the table (printf format). */
void rb_rtable_note(struct rb_rtable *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The cell as shown in markdown and HTML: its text, the formatted number, or "-" ("" in note columns). */
void rb_rtable_cell_text(const struct rb_rtable *t, size_t row, size_t col, char *buf, size_t len);

/* Writes the table: "## title", the table, then its notes as a list. Cells are escaped for markdown. */
void rb_rtable_md(const struct rb_rtable *t, struct rb_buf *out);

/* Writes "# title", a header row and the rows (RFC 4180 quoting); sizes in bytes. */
void rb_rtable_csv(const struct rb_rtable *t, struct rb_buf *out);

/* Writes an HTML <table> (every string escaped), then the notes; compare marks get a class. */
void rb_rtable_html(const struct rb_rtable *t, struct rb_buf *out);

/* {"id","title","columns":[{"key","head"}],"rows":[{key: value}],"notes":[]}; numbers in base units. NULL on OOM. */
cJSON *rb_rtable_json(const struct rb_rtable *t);

/*
 * Which way the figure named key gets better, from its name: rates,
 * bandwidths, IOPS, AU and speedups (higher); latencies, times, waits, errors
 * and wrong values (lower); counts, sizes, utilisation and host counters
 * (net_, disk_, cpu_, ib_) neither.
 */
enum rb_better rb_rtable_better(const char *key);

/*
 * Judges b against the baseline a: -1 when b is worse by more than
 * threshold_pct percent of |a|, +1 when better by more than that, 0 otherwise
 * (also when better is RB_BETTER_NONE or a value is missing).
 */
int rb_rtable_judge(enum rb_better better, double a, double b, double threshold_pct);

/*
 * A table of differences between baseline a and b (same id): for each row of a
 * matched by its key columns in b, one row per figure with A, B, B - A,
 * (B - A) / |A| in percent and a mark ("REGRESSION", "improved"); rows only on
 * one side say so. *regressions gets the number of REGRESSION marks.
 * Returns NULL when out of memory.
 */
struct rb_rtable *rb_rtable_compare(const struct rb_rtable *a, const struct rb_rtable *b, double threshold_pct,
                                    size_t *regressions);

#endif
