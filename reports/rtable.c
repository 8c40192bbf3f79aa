/* Report tables: columns with units, rows of cells, markdown/CSV/JSON/HTML output, and comparison of two. */
#define _POSIX_C_SOURCE 200809L
#include "rtable_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "html_int.h"
#include "railbench/units.h"

#define MARK_REGRESSION "REGRESSION"
#define MARK_IMPROVED "improved"

struct rb_rtable *rb_rtable_new(const char *id, const char *title)
{
    struct rb_rtable *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->id = strdup(id);
    t->title = strdup(title);
    if (!t->id || !t->title) {
        rb_rtable_free(t);
        return NULL;
    }
    return t;
}

void rb_rtable_free(struct rb_rtable *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->nrows * t->ncols; i++)
        free(t->cells[i].text);
    free(t->cells);
    for (size_t i = 0; i < t->ncols; i++) {
        free(t->cols[i].key);
        free(t->cols[i].head);
    }
    free(t->cols);
    for (size_t i = 0; i < t->nnotes; i++)
        free(t->notes[i]);
    free(t->notes);
    free(t->id);
    free(t->title);
    free(t);
}

int rb_rtable_col(struct rb_rtable *t, const char *key, const char *head, enum rb_rfmt fmt, int decimals,
                  double scale, unsigned flags)
{
    if (t->oom || t->nrows)
        return -1;
    struct rb_rcol *c = realloc(t->cols, (t->ncols + 1) * sizeof *c);
    if (!c) {
        t->oom = true;
        return -1;
    }
    t->cols = c;
    struct rb_rcol *n = &c[t->ncols];
    *n = (struct rb_rcol){strdup(key), strdup(head), fmt, decimals, scale, flags};
    if (!n->key || !n->head) {
        free(n->key);
        free(n->head);
        t->oom = true;
        return -1;
    }
    return (int)t->ncols++;
}

int rb_rtable_find(const struct rb_rtable *t, const char *key)
{
    for (size_t i = 0; i < t->ncols; i++)
        if (strcmp(t->cols[i].key, key) == 0)
            return (int)i;
    return -1;
}

size_t rb_rtable_row(struct rb_rtable *t)
{
    if (t->nrows == t->caprows) {
        size_t cap = t->caprows ? 2 * t->caprows : 16;
        struct rb_rcell *c = realloc(t->cells, cap * (t->ncols ? t->ncols : 1) * sizeof *c);
        if (!c) {
            t->oom = true;
            return t->nrows ? t->nrows - 1 : 0;
        }
        t->cells = c;
        t->caprows = cap;
    }
    memset(&t->cells[t->nrows * t->ncols], 0, t->ncols * sizeof *t->cells);
    return t->nrows++;
}

static struct rb_rcell *cell(struct rb_rtable *t, size_t row, const char *key)
{
    int c = rb_rtable_find(t, key);
    if (c < 0 || row >= t->nrows)
        return NULL;
    return &t->cells[row * t->ncols + (size_t)c];
}

void rb_rtable_num(struct rb_rtable *t, size_t row, const char *key, double v)
{
    struct rb_rcell *c = cell(t, row, key);
    if (!c)
        return;
    c->has_num = isfinite(v);
    c->num = c->has_num ? v : 0;
}

void rb_rtable_text(struct rb_rtable *t, size_t row, const char *key, const char *s)
{
    struct rb_rcell *c = cell(t, row, key);
    if (!c)
        return;
    free(c->text);
    c->text = s ? strdup(s) : NULL;
    if (s && !c->text)
        t->oom = true;
}

void rb_rtable_note(struct rb_rtable *t, const char *fmt, ...)
{
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    char **n = realloc(t->notes, (t->nnotes + 1) * sizeof *n);
    if (!n) {
        t->oom = true;
        return;
    }
    t->notes = n;
    if (!(n[t->nnotes] = strdup(line))) {
        t->oom = true;
        return;
    }
    t->nnotes++;
}

/* value x scale with fixed decimals; never "-0.00". */
static void format_num(char *buf, size_t len, double v, double scale, int decimals, bool sign)
{
    double x = v * (scale != 0 ? scale : 1);
    if (fabs(x) < 0.5 * pow(10, -decimals))
        x = 0;
    snprintf(buf, len, sign ? "%+.*f" : "%.*f", decimals, x);
    if (sign && x == 0)
        snprintf(buf, len, "%.*f", decimals, 0.0);
}

static void format_value(const struct rb_rcol *c, double v, char *buf, size_t len, bool sign)
{
    if (c->fmt == RB_RF_SIZE && v >= 0 && v < 1.8e19 && !sign)
        rb_format_size(buf, len, (uint64_t)v);
    else
        format_num(buf, len, v, c->fmt == RB_RF_SIZE ? 1 : c->scale, c->fmt == RB_RF_SIZE ? 0 : c->decimals, sign);
}

void rb_rtable_cell_text(const struct rb_rtable *t, size_t row, size_t col, char *buf, size_t len)
{
    const struct rb_rcell *c = &t->cells[row * t->ncols + col];
    if (c->text)
        snprintf(buf, len, "%s", c->text);
    else if (c->has_num)
        format_value(&t->cols[col], c->num, buf, len, false);
    else
        snprintf(buf, len, "%s", (t->cols[col].flags & RB_RCOL_NOTE) ? "" : RB_RTABLE_MISSING);
}

/* Whether a shown cell is "–": no figure in that run's result (a note column is blank instead). */
static bool cell_missing(const struct rb_rtable *t, size_t row, size_t col)
{
    const struct rb_rcell *c = &t->cells[row * t->ncols + col];
    return !c->text && !c->has_num && !(t->cols[col].flags & RB_RCOL_NOTE);
}

/* Whether a column appears in text output (md, CSV, HTML), or in JSON. */
static bool column_shown(const struct rb_rtable *t, size_t col, bool json)
{
    const struct rb_rcol *c = &t->cols[col];
    if ((c->flags & RB_RCOL_JSON_ONLY) && !json)
        return false;
    if (!(c->flags & RB_RCOL_OPTIONAL))
        return true;
    for (size_t r = 0; r < t->nrows; r++) {
        const struct rb_rcell *x = &t->cells[r * t->ncols + col];
        if (x->text || x->has_num)
            return true;
    }
    return false;
}

/* Which columns appear, worked out once per output (an optional column looks at every row). */
static bool *visible(const struct rb_rtable *t, bool json)
{
    bool *v = calloc(t->ncols ? t->ncols : 1, sizeof *v);
    for (size_t c = 0; v && c < t->ncols; c++)
        v[c] = column_shown(t, c, json);
    return v;
}

static bool right_aligned(const struct rb_rcol *c)
{
    return c->fmt != RB_RF_TEXT;
}

/* Characters as a terminal shows them: UTF-8 continuation bytes do not count. */
static size_t display_width(const char *s)
{
    size_t w = 0;
    for (; *s; s++)
        w += ((unsigned char)*s & 0xC0) != 0x80;
    return w;
}

/* A cell's text made safe inside a markdown table: one line, pipes and HTML starts escaped. */
static void md_escape(char *out, size_t len, const char *s)
{
    size_t n = 0;
    for (; *s && n + 3 < len; s++) {
        unsigned char c = (unsigned char)*s;
        /* '<' only where it could open a tag ("<=2ms" stays as it is). */
        bool tag = c == '<' && (((s[1] | 0x20) >= 'a' && (s[1] | 0x20) <= 'z') || s[1] == '/' || s[1] == '!' ||
                                s[1] == '?');
        if (c == '|' || c == '\\' || c == '`' || tag) {
            out[n++] = '\\';
            out[n++] = (char)c;
        } else if (c < 0x20 || c == 0x7F) {
            out[n++] = ' ';
        } else {
            out[n++] = (char)c;
        }
    }
    out[n] = '\0';
}

#define CELL_MAX 512

void rb_rtable_md(const struct rb_rtable *t, struct rb_buf *out)
{
    size_t *width = calloc(t->ncols ? t->ncols : 1, sizeof *width);
    bool *vis = visible(t, false);
    char raw[CELL_MAX], esc[2 * CELL_MAX];
    if (!width || !vis) {
        free(width);
        free(vis);
        out->oom = true;
        return;
    }
    for (size_t c = 0; c < t->ncols; c++) {
        md_escape(esc, sizeof esc, t->cols[c].head);
        width[c] = display_width(esc);
        if (width[c] < 3)
            width[c] = 3;
        for (size_t r = 0; r < t->nrows; r++) {
            rb_rtable_cell_text(t, r, c, raw, sizeof raw);
            md_escape(esc, sizeof esc, raw);
            size_t w = display_width(esc);
            if (w > width[c])
                width[c] = w;
        }
    }
    md_escape(esc, sizeof esc, t->title);
    rb_buf_printf(out, "## %s\n\n", esc);
    for (int pass = 0; pass < 2; pass++) {
        for (size_t c = 0; c < t->ncols; c++) {
            if (!vis[c])
                continue;
            if (pass == 0) {
                md_escape(esc, sizeof esc, t->cols[c].head);
                int pad = (int)(width[c] - display_width(esc));
                if (right_aligned(&t->cols[c]))
                    rb_buf_printf(out, "| %*s%s ", pad, "", esc);
                else
                    rb_buf_printf(out, "| %s%*s ", esc, pad, "");
            } else {
                rb_buf_printf(out, "|%s", right_aligned(&t->cols[c]) ? "" : ":");
                for (size_t k = 0; k < width[c]; k++)
                    rb_buf_append(out, "-", 1);
                rb_buf_printf(out, "%s", right_aligned(&t->cols[c]) ? "-:" : "-");
            }
        }
        rb_buf_printf(out, "|\n");
    }
    bool missing = false, explained = false;
    for (size_t r = 0; r < t->nrows; r++) {
        for (size_t c = 0; c < t->ncols; c++) {
            if (!vis[c])
                continue;
            missing |= cell_missing(t, r, c);
            rb_rtable_cell_text(t, r, c, raw, sizeof raw);
            md_escape(esc, sizeof esc, raw);
            int pad = (int)(width[c] - display_width(esc));
            if (right_aligned(&t->cols[c]))
                rb_buf_printf(out, "| %*s%s ", pad, "", esc);
            else
                rb_buf_printf(out, "| %s%*s ", esc, pad, "");
        }
        rb_buf_printf(out, "|\n");
    }
    if (t->nnotes || missing)
        rb_buf_printf(out, "\n");
    for (size_t i = 0; i < t->nnotes; i++) {
        char note[4200];
        md_escape(note, sizeof note, t->notes[i]);
        rb_buf_printf(out, "- %s\n", note);
        explained |= strstr(t->notes[i], RB_RTABLE_MISSING) != NULL;
    }
    /* A figure shown as – says why once below the table: the kind's own note, or this one. */
    if (missing && !explained)
        rb_buf_printf(out, "- %s: not in that run's result (not measured there, or not applicable to that row)\n",
                      RB_RTABLE_MISSING);
    rb_buf_printf(out, "\n");
    free(width);
    free(vis);
}

/* RFC 4180: quoted when it holds a comma, quote or line break; quotes doubled. */
static void csv_field(struct rb_buf *out, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        rb_buf_append(out, s, strlen(s));
        return;
    }
    rb_buf_append(out, "\"", 1);
    for (; *s; s++) {
        if (*s == '"')
            rb_buf_append(out, "\"", 1);
        rb_buf_append(out, s, 1);
    }
    rb_buf_append(out, "\"", 1);
}

void rb_rtable_csv(const struct rb_rtable *t, struct rb_buf *out)
{
    char buf[CELL_MAX];
    bool *vis = visible(t, false);
    if (!vis) {
        out->oom = true;
        return;
    }
    rb_buf_printf(out, "# ");
    for (const char *p = t->title; *p; p++)
        rb_buf_append(out, (*p == '\n' || *p == '\r') ? " " : p, 1);
    rb_buf_printf(out, "\n");
    bool first = true;
    for (size_t c = 0; c < t->ncols; c++) {
        if (!vis[c])
            continue;
        if (!first)
            rb_buf_append(out, ",", 1);
        first = false;
        csv_field(out, t->cols[c].head);
    }
    rb_buf_printf(out, "\n");
    for (size_t r = 0; r < t->nrows; r++) {
        first = true;
        for (size_t c = 0; c < t->ncols; c++) {
            if (!vis[c])
                continue;
            if (!first)
                rb_buf_append(out, ",", 1);
            first = false;
            const struct rb_rcell *x = &t->cells[r * t->ncols + c];
            const struct rb_rcol *col = &t->cols[c];
            /* Machine-readable: sizes in bytes, empty for missing values. */
            if (x->text)
                csv_field(out, x->text);
            else if (x->has_num && col->fmt == RB_RF_SIZE)
                rb_buf_printf(out, "%.0f", x->num);
            else if (x->has_num) {
                format_value(col, x->num, buf, sizeof buf, false);
                rb_buf_append(out, buf, strlen(buf));
            }
        }
        rb_buf_printf(out, "\n");
    }
    rb_buf_printf(out, "\n");
    free(vis);
}

/* Figures shown in an HTML row beside the key columns; the others go to its detail row. */
#define HTML_MAIN_COLS 10

/* One HTML cell of row r, column c. */
static void html_cell(const struct rb_rtable *t, size_t r, size_t c, struct rb_buf *out)
{
    char buf[CELL_MAX];
    rb_rtable_cell_text(t, r, c, buf, sizeof buf);
    const char *cls = right_aligned(&t->cols[c]) ? "num" : NULL;
    if (strcmp(buf, MARK_REGRESSION) == 0)
        cls = "regression";
    else if (strcmp(buf, MARK_IMPROVED) == 0)
        cls = "improved";
    rb_buf_printf(out, cls ? "<td class=\"%s\">" : "<td>", cls);
    rb_html_escape(out, buf);
    rb_buf_printf(out, "</td>");
}

/* The detail row of r: the figures of the columns marked 2 in place, those with a value, folded. */
static void html_detail(const struct rb_rtable *t, size_t r, const unsigned char *place, size_t nmain,
                        struct rb_buf *out)
{
    char buf[CELL_MAX];
    size_t n = 0;
    for (size_t c = 0; c < t->ncols; c++)
        n += place[c] == 2 && (t->cells[r * t->ncols + c].text || t->cells[r * t->ncols + c].has_num);
    if (!n)
        return;
    rb_buf_printf(out, "<tr class=\"detail\"><td colspan=\"%zu\"><details><summary>%zu more</summary><dl>", nmain, n);
    for (size_t c = 0; c < t->ncols; c++) {
        if (place[c] != 2 || !(t->cells[r * t->ncols + c].text || t->cells[r * t->ncols + c].has_num))
            continue;
        rb_rtable_cell_text(t, r, c, buf, sizeof buf);
        rb_buf_printf(out, "<div><dt>");
        rb_html_escape(out, t->cols[c].head);
        rb_buf_printf(out, "</dt><dd>");
        rb_html_escape(out, buf);
        rb_buf_printf(out, "</dd></div>");
    }
    rb_buf_printf(out, "</dl></details></td></tr>\n");
}

void rb_rtable_html(const struct rb_rtable *t, struct rb_buf *out)
{
    bool *vis = visible(t, false);
    unsigned char *place = calloc(t->ncols ? t->ncols : 1, 1); /* 0 hidden, 1 in the row, 2 in the detail row */
    size_t *order = calloc(t->ncols ? t->ncols : 1, sizeof *order), nmain = 0, figs = 0;
    if (!vis || !place || !order) {
        out->oom = true;
        goto fail;
    }
    /* Key, run and label columns first, then the first figures; the rest fold away. */
    for (int pass = 0; pass < 2; pass++) {
        for (size_t c = 0; c < t->ncols; c++) {
            bool key = t->cols[c].flags & (RB_RCOL_KEY | RB_RCOL_IDENT);
            if (!vis[c] || key != (pass == 0))
                continue;
            bool main = key || (t->cols[c].flags & RB_RCOL_NOTE) || figs++ < HTML_MAIN_COLS;
            place[c] = main ? 1 : 2;
            if (main)
                order[nmain++] = c;
        }
    }
    rb_buf_printf(out, "<h3>");
    rb_html_escape(out, t->title);
    rb_buf_printf(out, "</h3>\n<div class=\"wrap\"><table data-table=\"");
    rb_html_escape(out, t->id);
    rb_buf_printf(out, "\">\n<thead><tr>");
    for (size_t k = 0; k < nmain; k++) {
        rb_buf_printf(out, "<th>");
        rb_html_escape(out, t->cols[order[k]].head);
        rb_buf_printf(out, "</th>");
    }
    rb_buf_printf(out, "</tr></thead>\n<tbody>\n");
    for (size_t r = 0; r < t->nrows; r++) {
        rb_buf_printf(out, "<tr>");
        for (size_t k = 0; k < nmain; k++)
            html_cell(t, r, order[k], out);
        rb_buf_printf(out, "</tr>\n");
        html_detail(t, r, place, nmain, out);
    }
    rb_buf_printf(out, "</tbody></table></div>\n");
    if (t->nnotes) {
        rb_buf_printf(out, "<ul class=\"notes\">\n");
        for (size_t i = 0; i < t->nnotes; i++) {
            rb_buf_printf(out, "<li>");
            rb_html_escape(out, t->notes[i]);
            rb_buf_printf(out, "</li>\n");
        }
        rb_buf_printf(out, "</ul>\n");
    }
fail:
    free(vis);
    free(place);
    free(order);
}

cJSON *rb_rtable_json(const struct rb_rtable *t)
{
    cJSON *o = cJSON_CreateObject();
    bool *vis = visible(t, true);
    if (!o || !vis) {
        cJSON_Delete(o);
        free(vis);
        return NULL;
    }
    cJSON_AddStringToObject(o, "id", t->id);
    cJSON_AddStringToObject(o, "title", t->title);
    cJSON *cols = cJSON_AddArrayToObject(o, "columns");
    for (size_t c = 0; c < t->ncols; c++) {
        if (!vis[c])
            continue;
        cJSON *col = cJSON_CreateObject();
        cJSON_AddItemToArray(cols, col);
        cJSON_AddStringToObject(col, "key", t->cols[c].key);
        cJSON_AddStringToObject(col, "head", t->cols[c].head);
    }
    cJSON *rows = cJSON_AddArrayToObject(o, "rows");
    for (size_t r = 0; r < t->nrows; r++) {
        cJSON *row = cJSON_CreateObject();
        cJSON_AddItemToArray(rows, row);
        for (size_t c = 0; c < t->ncols; c++) {
            if (!vis[c])
                continue;
            const struct rb_rcell *x = &t->cells[r * t->ncols + c];
            const char *k = t->cols[c].key;
            if (x->has_num)
                cJSON_AddNumberToObject(row, k, x->num);
            else if (x->text && t->cols[c].fmt == RB_RF_TEXT)
                cJSON_AddStringToObject(row, k, x->text);
            else
                cJSON_AddNullToObject(row, k);
        }
    }
    cJSON *notes = cJSON_AddArrayToObject(o, "notes");
    for (size_t i = 0; i < t->nnotes; i++)
        cJSON_AddItemToArray(notes, cJSON_CreateString(t->notes[i]));
    free(vis);
    if (!cols || !rows || !notes) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/*
 * The one place that says which way a figure is better, from its key. Rates
 * ("_per_s"), bandwidths (nccl-tests' algbw/busbw in GB/s), IOPS, accelerator
 * utilisation (MLPerf Storage: AU must stay >= its minimum) and speedups
 * ("warm_over_direct") are better higher (the AU minimum a run must meet is a
 * setting, not a result); latencies and times ("_ns", "_us"),
 * errors and wrong values better lower. Counts, sizes, durations of fixed-length
 * runs, utilisation, and what host counters observed (net_, disk_, cpu_, ib_)
 * say nothing good or bad by themselves.
 */
enum rb_better rb_rtable_better(const char *key)
{
    static const char *const observed[] = {"net_", "disk_", "cpu_", "ib_"};
    if (!key || strstr(key, "util"))
        return RB_BETTER_NONE;
    for (size_t i = 0; i < sizeof observed / sizeof observed[0]; i++)
        if (strncmp(key, observed[i], strlen(observed[i])) == 0)
            return RB_BETTER_NONE;
    if (ends_with(key, "_per_s") || ends_with(key, "_gbps") || strstr(key, "iops") || strcmp(key, "au_pct") == 0 ||
        strncmp(key, "au_mean", 7) == 0 || strstr(key, "_over_"))
        return RB_BETTER_HIGHER;
    if (ends_with(key, "_ns") || ends_with(key, "_us") || strstr(key, "error") || strstr(key, "wrong"))
        return RB_BETTER_LOWER;
    return RB_BETTER_NONE;
}

int rb_rtable_judge(enum rb_better better, double a, double b, double threshold_pct)
{
    if (better == RB_BETTER_NONE || !isfinite(a) || !isfinite(b))
        return 0;
    double change = b - a;
    if (better == RB_BETTER_LOWER)
        change = -change;
    /* From zero any change is beyond every threshold; the same value never is. */
    double limit = fabs(a) * threshold_pct / 100.0;
    if (change < -limit && change < 0)
        return -1;
    if (change > limit && change > 0)
        return 1;
    return 0;
}

/* The row's identity within its run: the shown text of its key columns. */
static void row_key(const struct rb_rtable *t, size_t r, char *buf, size_t len)
{
    size_t n = 0;
    char v[CELL_MAX];
    buf[0] = '\0';
    for (size_t c = 0; c < t->ncols; c++) {
        if (!(t->cols[c].flags & RB_RCOL_KEY) || (t->cols[c].flags & RB_RCOL_IDENT))
            continue;
        rb_rtable_cell_text(t, r, c, v, sizeof v);
        int w = snprintf(buf + n, len - n, "%s\x1f", v);
        if (w < 0 || (size_t)w >= len - n)
            break;
        n += (size_t)w;
    }
}

/* Copies row r's key cells of src into row dr of the comparison. */
static void copy_keys(struct rb_rtable *d, size_t dr, const struct rb_rtable *src, size_t r)
{
    for (size_t c = 0; c < src->ncols; c++) {
        const struct rb_rcol *col = &src->cols[c];
        if (!(col->flags & RB_RCOL_KEY) || (col->flags & RB_RCOL_IDENT))
            continue;
        const struct rb_rcell *x = &src->cells[r * src->ncols + c];
        if (x->has_num && !x->text)
            rb_rtable_num(d, dr, col->key, x->num);
        else if (x->text)
            rb_rtable_text(d, dr, col->key, x->text);
    }
}

static void compare_rows(struct rb_rtable *d, const struct rb_rtable *a, size_t ra, const struct rb_rtable *b,
                         size_t rb, double threshold_pct, size_t *regressions)
{
    char text[CELL_MAX];
    for (size_t c = 0; c < a->ncols; c++) {
        const struct rb_rcol *col = &a->cols[c];
        if (col->fmt != RB_RF_NUM || (col->flags & (RB_RCOL_KEY | RB_RCOL_IDENT | RB_RCOL_NOTE)))
            continue;
        int bc = rb_rtable_find(b, col->key);
        const struct rb_rcell *xa = &a->cells[ra * a->ncols + c];
        const struct rb_rcell *xb = bc >= 0 ? &b->cells[rb * b->ncols + (size_t)bc] : NULL;
        bool ha = xa->has_num, hb = xb && xb->has_num;
        if (!ha && !hb)
            continue;
        size_t r = rb_rtable_row(d);
        copy_keys(d, r, a, ra);
        rb_rtable_text(d, r, "figure", col->head);
        rb_rtable_text(d, r, "figure_key", col->key);
        if (ha) {
            format_value(col, xa->num, text, sizeof text, false);
            rb_rtable_num(d, r, "a", xa->num);
            rb_rtable_text(d, r, "a", text);
        }
        if (hb) {
            format_value(col, xb->num, text, sizeof text, false);
            rb_rtable_num(d, r, "b", xb->num);
            rb_rtable_text(d, r, "b", text);
        }
        if (!ha || !hb) {
            rb_rtable_text(d, r, "mark", ha ? "no value in B" : "no value in A");
            continue;
        }
        double delta = xb->num - xa->num;
        format_value(col, delta, text, sizeof text, true);
        rb_rtable_num(d, r, "delta", delta);
        rb_rtable_text(d, r, "delta", text);
        if (xa->num != 0) {
            double pct = 100.0 * delta / fabs(xa->num);
            format_num(text, sizeof text, pct, 1, 1, true);
            rb_rtable_num(d, r, "delta_pct", pct);
            rb_rtable_text(d, r, "delta_pct", text);
            rb_rtable_num(d, r, "ratio", xb->num / xa->num);
        }
        int verdict = rb_rtable_judge(rb_rtable_better(col->key), xa->num, xb->num, threshold_pct);
        if (verdict < 0) {
            rb_rtable_text(d, r, "mark", MARK_REGRESSION);
            (*regressions)++;
        } else if (verdict > 0) {
            rb_rtable_text(d, r, "mark", MARK_IMPROVED);
        }
    }
}

struct rb_rtable *rb_rtable_compare(const struct rb_rtable *a, const struct rb_rtable *b, double threshold_pct,
                                    size_t *regressions)
{
    char title[1024];
    *regressions = 0;
    snprintf(title, sizeof title, "Compare: %s", a->title);
    struct rb_rtable *d = rb_rtable_new(a->id, title);
    bool *used = calloc(b->nrows ? b->nrows : 1, sizeof *used);
    if (!d || !used)
        goto fail;
    for (size_t c = 0; c < a->ncols; c++) {
        const struct rb_rcol *col = &a->cols[c];
        if ((col->flags & RB_RCOL_KEY) && !(col->flags & RB_RCOL_IDENT))
            rb_rtable_col(d, col->key, col->head, col->fmt, col->decimals, col->scale, col->flags);
    }
    rb_rtable_col(d, "figure", "figure", RB_RF_TEXT, 0, 1, RB_RCOL_KEY);
    rb_rtable_col(d, "figure_key", "figure key", RB_RF_TEXT, 0, 1, RB_RCOL_JSON_ONLY);
    rb_rtable_col(d, "a", "A", RB_RF_NUM, 3, 1, 0);
    rb_rtable_col(d, "b", "B", RB_RF_NUM, 3, 1, 0);
    rb_rtable_col(d, "delta", "B - A", RB_RF_NUM, 3, 1, 0);
    rb_rtable_col(d, "delta_pct", "change %", RB_RF_NUM, 1, 1, 0);
    rb_rtable_col(d, "ratio", "B / A", RB_RF_NUM, 3, 1, 0);
    rb_rtable_col(d, "mark", "", RB_RF_TEXT, 0, 1, RB_RCOL_NOTE);
    if (d->oom)
        goto fail;

    char ka[2048], kb[2048];
    for (size_t ra = 0; ra < a->nrows; ra++) {
        row_key(a, ra, ka, sizeof ka);
        size_t match = b->nrows;
        for (size_t rb = 0; rb < b->nrows && match == b->nrows; rb++) {
            if (used[rb])
                continue;
            row_key(b, rb, kb, sizeof kb);
            if (strcmp(ka, kb) == 0)
                match = rb;
        }
        if (match == b->nrows) {
            size_t r = rb_rtable_row(d);
            copy_keys(d, r, a, ra);
            rb_rtable_text(d, r, "mark", "only in A");
            continue;
        }
        used[match] = true;
        compare_rows(d, a, ra, b, match, threshold_pct, regressions);
    }
    for (size_t rb = 0; rb < b->nrows; rb++) {
        if (used[rb])
            continue;
        size_t r = rb_rtable_row(d);
        copy_keys(d, r, b, rb);
        rb_rtable_text(d, r, "mark", "only in B");
    }
    if (d->oom)
        goto fail;
    free(used);
    return d;
fail:
    free(used);
    rb_rtable_free(d);
    return NULL;
}
