/* railbench report --baseline DIR: each run against the saved run of the same command, figure by figure (per host, link, size, phase); regressions named by one rule. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_int.h"

/* The saved runs: DIR itself when it is a result directory, else the result directories in it. *n of them. */
static struct rb_rundir *load_baselines(const char *dir, size_t *n)
{
    char **kids = NULL, *self[1] = {(char *)dir};
    size_t nk = 0;
    bool one = rb_rundir_is_result(dir);
    *n = 0;
    if (!one && rb_rundir_children(dir, &kids, &nk) != 0)
        return NULL;
    size_t want = one ? 1 : nk;
    struct rb_rundir *v = calloc(want ? want : 1, sizeof *v);
    for (size_t i = 0; v && i < want; i++) {
        const char *path = one ? self[0] : kids[i];
        if (rb_rundir_load(&v[*n], path, 0) == 0)
            (*n)++;
        else
            rb_rundir_free(&v[*n]);
    }
    for (size_t i = 0; i < nk; i++)
        free(kids[i]);
    free(kids);
    return v;
}

/* The key cells of row r of a comparison table, "get · client2" (the figure column left out). */
static void row_name(const struct rb_rtable *d, size_t r, char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = '\0';
    for (size_t c = 0; c < d->ncols && o + 1 < len; c++) {
        const struct rb_rcol *col = &d->cols[c];
        if (!(col->flags & RB_RCOL_KEY) || strcmp(col->key, "figure") == 0)
            continue;
        char cell[256];
        rb_rtable_cell_text(d, r, c, cell, sizeof cell);
        if (!cell[0] || strcmp(cell, RB_RTABLE_MISSING) == 0)
            continue;
        int w = snprintf(buf + o, len - o, "%s%s", o ? " · " : "", cell);
        o += w > 0 ? (size_t)w : 0;
    }
}

static double num_at(const struct rb_rtable *d, size_t r, const char *key)
{
    int c = rb_rtable_find(d, key);
    const struct rb_rcell *x = c >= 0 ? &d->cells[r * d->ncols + (size_t)c] : NULL;
    return x && x->has_num ? x->num : NAN;
}

/* Cell key of row r of d into regs' row k: the number, shown as d shows it (in the figure's own units). */
static void copy_value(struct rb_rtable *regs, size_t k, const char *to, const struct rb_rtable *d, size_t r,
                       const char *key)
{
    int c = rb_rtable_find(d, key);
    char text[128];
    rb_rtable_num(regs, k, to, num_at(d, r, key));
    if (c >= 0) {
        rb_rtable_cell_text(d, r, (size_t)c, text, sizeof text);
        rb_rtable_text(regs, k, to, text);
    }
}

/* Every REGRESSION row of comparison d (run `run`) as a row of regs. Returns how many. */
static size_t name_regressions(struct rb_rtable *regs, const struct rb_rtable *d, const struct rb_rundir *run,
                               const struct rb_rundir *base)
{
    size_t found = 0;
    int mark = rb_rtable_find(d, "mark"), fig = rb_rtable_find(d, "figure");
    for (size_t r = 0; mark >= 0 && r < d->nrows; r++) {
        const struct rb_rcell *m = &d->cells[r * d->ncols + (size_t)mark];
        if (!m->text || strcmp(m->text, "REGRESSION") != 0)
            continue;
        char what[1024], figure[256] = "";
        row_name(d, r, what, sizeof what);
        if (fig >= 0)
            rb_rtable_cell_text(d, r, (size_t)fig, figure, sizeof figure);
        size_t k = rb_rtable_row(regs);
        rb_rtable_text(regs, k, "run", run->name);
        rb_rtable_text(regs, k, "baseline", base->path);
        rb_rtable_text(regs, k, "table", d->title + (strncmp(d->title, "Compare: ", 9) ? 0 : 9));
        rb_rtable_text(regs, k, "row", what);
        rb_rtable_text(regs, k, "figure", figure);
        copy_value(regs, k, "baseline_value", d, r, "a");
        copy_value(regs, k, "value", d, r, "b");
        rb_rtable_num(regs, k, "ratio", num_at(d, r, "ratio"));
        found++;
    }
    return found;
}

int rb_report_baseline(struct rb_rundir *runs, const struct rb_report_kind *const *kinds, size_t n, const char *dir,
                       double ratio, struct rb_report_tables *out, size_t *regressions)
{
    size_t nb = 0;
    int rc = 0;
    *regressions = 0;
    struct rb_rundir *base = load_baselines(dir, &nb);
    if (!base || nb == 0) {
        fprintf(stderr, "railbench: error: report: --baseline %s: no result directory there (expected a saved run, or a "
                        "directory of them)\n", dir);
        rc = base ? -EINVAL : -ENOMEM;
        goto out;
    }
    char title[256];
    snprintf(title, sizeof title, "Regressions against the baseline (worse than %.2f× of it)", ratio);
    struct rb_rtable *regs = rb_rtable_new("baseline-regressions", title);
    if (!regs) {
        rc = -ENOMEM;
        goto out;
    }
    rb_rtable_col(regs, "run", "run", RB_RF_TEXT, 0, 1, RB_RCOL_KEY);
    rb_rtable_col(regs, "table", "table", RB_RF_TEXT, 0, 1, RB_RCOL_KEY);
    rb_rtable_col(regs, "row", "host, link, size or phase", RB_RF_TEXT, 0, 1, RB_RCOL_KEY);
    rb_rtable_col(regs, "figure", "figure", RB_RF_TEXT, 0, 1, RB_RCOL_KEY);
    rb_rtable_col(regs, "baseline_value", "baseline", RB_RF_NUM, 3, 1, 0);
    rb_rtable_col(regs, "value", "this run", RB_RF_NUM, 3, 1, 0);
    rb_rtable_col(regs, "ratio", "ratio", RB_RF_NUM, 3, 1, 0);
    rb_rtable_col(regs, "baseline", "baseline run", RB_RF_TEXT, 0, 1, RB_RCOL_JSON_ONLY);
    rb_report_tables_add(out, regs);
    /* The rule: rb_rtable_judge's "worse by more than PCT % of the baseline", PCT = (1 - ratio) x 100. */
    double pct = (1 - ratio) * 100;
    for (size_t i = 0; i < n && !rc; i++) {
        struct rb_rundir *run = &runs[i], *b = NULL;
        for (size_t j = 0; j < nb && !b; j++)
            if (strcmp(base[j].command, run->command) == 0 && rb_report_kind_of(&base[j]) == kinds[i])
                b = &base[j];
        if (!b) {
            fprintf(stderr, "railbench: error: report: --baseline %s: no saved run of \"%s\" there for %s\n", dir,
                    run->command, run->path);
            rc = -EINVAL;
            break;
        }
        const struct rb_report_kind *kb = kinds[i];
        struct rb_report_tables ta = {0}, tb = {0};
        if (rb_report_build_tables(&b, &kb, 1, &ta, NULL) || rb_report_build_tables(&run, &kb, 1, &tb, NULL))
            rc = -ENOMEM;
        for (size_t x = 0; x < ta.n && !rc; x++)
            for (size_t y = 0; y < tb.n; y++) {
                if (strcmp(ta.v[x]->id, tb.v[y]->id) != 0)
                    continue;
                size_t reg = 0;
                struct rb_rtable *d = rb_rtable_compare(ta.v[x], tb.v[y], pct, &reg);
                if (!d) {
                    rc = -ENOMEM;
                    break;
                }
                rb_rtable_note(d, "A = the baseline %s, B = %s; REGRESSION: worse than %.2f× of A", b->path,
                               run->path, ratio);
                *regressions += name_regressions(regs, d, run, b);
                rb_report_tables_add(out, d);
                break;
            }
        rb_report_tables_free(&ta);
        rb_report_tables_free(&tb);
    }
    if (!rc && *regressions == 0)
        rb_rtable_note(regs, "none: every figure of every run within %.2f× of its baseline", ratio);
    if (!rc && out->oom)
        rc = -ENOMEM;
out:
    for (size_t j = 0; j < nb; j++)
        rb_rundir_free(&base[j]);
    free(base);
    return rc;
}
