/* railbench report: the tables each kind of result calls for, comparisons of two runs, and a self-contained HTML report. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "railbench/file.h"
#include "railbench/cli.h"
#include "railbench/command.h"
#include "html_int.h"
#include "railbench/log.h"
#include "railbench/result.h"
#include "report_int.h"

enum format { FMT_MD, FMT_CSV, FMT_JSON, FMT_HTML };

struct report {
    struct rb_rundir *runs;
    const struct rb_report_kind **kind; /* per run */
    size_t n, cap;
    char **warnings;                    /* every warning, also printed on stderr as it came (after loading) */
    size_t nwarnings;
    bool loading;                       /* loading the directories: their warnings wait (errors if none loads) */
    bool oom;
    /* options */
    int format;
    const char *out;
    const char *html;
    bool compare;
    double threshold_pct;
    const char *group_by;
    const char *baseline;               /* --baseline DIR (reports/baseline.c) */
    double baseline_ratio;
    bool mlperf;                        /* --mlperf (reports/mlperf.c) */
    uint64_t mlperf_client_ram;
    bool phases;                        /* --phases: only the load runs' request phases and slowest requests */
    /* results */
    size_t regressions;
};

static void add_warning(struct report *R, const char *w)
{
    if (!R->loading)
        rb_warn("%s", w);
    char **v = realloc(R->warnings, (R->nwarnings + 1) * sizeof *v);
    if (!v) {
        R->oom = true;
        return;
    }
    R->warnings = v;
    if ((v[R->nwarnings] = strdup(w)))
        R->nwarnings++;
    else
        R->oom = true;
}

/* Loads one result directory; a missing one is one line, a broken one its warnings. Returns 0 or -ENOMEM. */
static int load_one(struct report *R, const char *path, unsigned flags)
{
    if (R->n == R->cap) {
        size_t cap = R->cap ? 2 * R->cap : 16;
        struct rb_rundir *v = realloc(R->runs, cap * sizeof *v);
        if (!v)
            return -ENOMEM;
        R->runs = v;
        const struct rb_report_kind **k = realloc(R->kind, cap * sizeof *k);
        if (!k)
            return -ENOMEM;
        R->kind = k;
        R->cap = cap;
    }
    struct rb_rundir *r = &R->runs[R->n];
    int rc = rb_rundir_load(r, path, flags);
    for (size_t i = 0; i < r->nwarnings; i++)
        add_warning(R, r->warnings[i]);
    if (rc == -ENOENT || rc == -ENOTDIR) {
        char line[4300];
        snprintf(line, sizeof line, "%s: %s", path, rc == -ENOENT ? "no such directory" : "not a directory");
        add_warning(R, line);
    }
    if (rc) {
        rb_rundir_free(r);
        return rc == -ENOMEM ? rc : 0;
    }
    /* The command decides the kind; a summary without a key its schema requires leaves rows out (said once). */
    const char *needs;
    R->kind[R->n] = rb_report_kind_of(r);
    if (rb_report_kind_named(r->command, &needs) && !r->partial) {
        for (const char *k = needs; *k;) {
            size_t n = strcspn(k, " ");
            char key[64];
            snprintf(key, sizeof key, "%.*s", (int)(n < sizeof key ? n : sizeof key - 1), k);
            if (!cJSON_GetObjectItemCaseSensitive(r->summary, key)) {
                char line[4400];
                snprintf(line, sizeof line,
                         "%s/result.json: a \"%.60s\" result without summary.%s, which its schema requires; "
                         "its tables miss what it holds",
                         r->path, r->command, key);
                add_warning(R, line);
                break;
            }
            k += n + (k[n] == ' ');
        }
    }
    R->n++;
    return 0;
}

/* Loads every argument; a directory of result directories stands for them (sorted by name). */
static int load_all(struct report *R, const struct rb_cli *cli, unsigned flags)
{
    for (int a = 0; a < cli->nargs; a++) {
        const char *arg = cli->args[a];
        struct stat st;
        if (!R->compare && stat(arg, &st) == 0 && S_ISDIR(st.st_mode) && !rb_rundir_is_result(arg)) {
            char **kids = NULL;
            size_t nk = 0;
            int rc = rb_rundir_children(arg, &kids, &nk);
            if (rc == -ENOMEM)
                return rc;
            if (nk) {
                for (size_t i = 0; i < nk && !rc; i++)
                    rc = load_one(R, kids[i], flags);
                for (size_t i = 0; i < nk; i++)
                    free(kids[i]);
                free(kids);
                if (rc)
                    return rc;
                continue;
            }
            free(kids);
        }
        int rc = load_one(R, arg, flags);
        if (rc)
            return rc;
    }
    return 0;
}

/* "a, b, c +2 more" from the hosts' names. */
static void host_names(const struct rb_rundir *r, char *buf, size_t len)
{
    size_t n = 0, shown = 0, total = 0;
    buf[0] = '\0';
    const cJSON *h;
    cJSON_ArrayForEach(h, rb_rundir_array(r->root, "hosts"))
    {
        const char *name = rb_rundir_str(h, "name");
        total++;
        if (!name || shown >= 4 || n >= len)
            continue;
        n += (size_t)snprintf(buf + n, len - n, "%s%s", shown ? ", " : "", name);
        shown++;
    }
    if (total > shown && n < len)
        snprintf(buf + n, len - n, " +%zu more", total - shown);
}

static struct rb_rtable *runs_table(struct report *R, struct rb_rundir *const *runs, size_t n)
{
    struct rb_rtable *t = rb_rtable_new("runs", "Runs");
    if (!t)
        return NULL;
    rb_rtable_col(t, "run", "dir", RB_RF_TEXT, 0, 1, RB_RCOL_KEY);
    rb_rtable_col(t, "path", "path", RB_RF_TEXT, 0, 1, RB_RCOL_JSON_ONLY);
    rb_rtable_col(t, "command", "command", RB_RF_TEXT, 0, 1, 0);
    rb_rtable_col(t, "started_at", "started", RB_RF_TEXT, 0, 1, 0);
    rb_rtable_col(t, "version", "version", RB_RF_TEXT, 0, 1, 0);
    rb_rtable_col(t, "hosts", "hosts", RB_RF_TEXT, 0, 1, 0);
    rb_rtable_col(t, "ranks", "ranks", RB_RF_NUM, 0, 1, 0);
    rb_rtable_col(t, "labels", "labels", RB_RF_TEXT, 0, 1, 0);
    rb_rtable_col(t, "checks", "checks", RB_RF_TEXT, 0, 1, 0);
    rb_rtable_col(t, "record", "record", RB_RF_TEXT, 0, 1, 0);
    for (size_t i = 0; i < n; i++) {
        const struct rb_rundir *r = runs[i];
        size_t row = rb_rtable_row(t);
        char buf[1024];
        rb_rtable_text(t, row, "run", r->name);
        rb_rtable_text(t, row, "path", r->path);
        rb_rtable_text(t, row, "command", *r->command ? r->command : "?");
        rb_rtable_text(t, row, "started_at", rb_rundir_str(r->root, "started_at"));
        rb_rtable_text(t, row, "version", rb_rundir_str(r->root, "version"));
        host_names(r, buf, sizeof buf);
        rb_rtable_text(t, row, "hosts", *buf ? buf : NULL);
        rb_rtable_num(t, row, "ranks", rb_rundir_num(r->root, "mpi.size"));
        size_t len = 0;
        buf[0] = '\0';
        const cJSON *l;
        cJSON_ArrayForEach(l, r->labels)
        {
            if (cJSON_IsString(l) && len < sizeof buf)
                len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s=%s", len ? " " : "", l->string,
                                        l->valuestring);
        }
        rb_rtable_text(t, row, "labels", *buf ? buf : "none");
        size_t passed = 0, failed = 0;
        len = 0;
        buf[0] = '\0';
        const cJSON *c;
        cJSON_ArrayForEach(c, rb_rundir_array(r->root, "checks"))
        {
            const char *name = rb_rundir_str(c, "name"), *detail = rb_rundir_str(c, "detail");
            if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "passed"))) {
                passed++;
                continue;
            }
            failed++;
            if (len < sizeof buf)
                len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s", len ? ", " : "", name ? name : "?");
            rb_rtable_note(t, "%s: check %s failed: %s", r->name, name ? name : "?", detail ? detail : "");
        }
        char checks[1100];
        if (failed)
            snprintf(checks, sizeof checks, "FAILED: %s", buf);
        else if (passed)
            snprintf(checks, sizeof checks, "passed (%zu)", passed);
        else
            snprintf(checks, sizeof checks, "none");
        rb_rtable_text(t, row, "checks", checks);
        rb_rtable_text(t, row, "record", r->partial ? "partial: rebuilt from intervals.jsonl" : "result.json");
    }
    if (R->oom || t->oom) {
        rb_rtable_free(t);
        return NULL;
    }
    return t;
}

/* A section of the report: tables, and for HTML the plots of the runs behind them. */
struct section {
    char *heading;            /* group heading, or NULL */
    char *group_value;
    struct rb_report_tables tables;
};

static void md_heading_escape(struct rb_buf *b, const char *s)
{
    for (; *s; s++)
        rb_buf_append(b, (*s == '\n' || *s == '\r') ? " " : s, 1);
}

/* Writes the finished document (md, csv, json) of these tables. */
static void render_text(struct report *R, int format, struct rb_rtable *runs, struct section *secs, size_t nsecs,
                        struct rb_buf *out)
{
    if (format == FMT_JSON) {
        cJSON *doc = cJSON_CreateObject();
        cJSON_AddStringToObject(doc, "schema", "railbench.report/v1");
        cJSON_AddStringToObject(doc, "version", rb_version());
        cJSON *jr = cJSON_AddArrayToObject(doc, "runs");
        for (size_t i = 0; i < R->n; i++) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddItemToArray(jr, o);
            cJSON_AddStringToObject(o, "path", R->runs[i].path);
            cJSON_AddStringToObject(o, "name", R->runs[i].name);
            cJSON_AddStringToObject(o, "command", R->runs[i].command);
            cJSON_AddStringToObject(o, "kind", R->kind[i]->name);
            cJSON_AddBoolToObject(o, "partial", R->runs[i].partial);
            cJSON_AddItemToObject(o, "labels",
                                  R->runs[i].labels ? cJSON_Duplicate(R->runs[i].labels, 1) : cJSON_CreateObject());
        }
        cJSON *jt = cJSON_AddArrayToObject(doc, "tables");
        cJSON_AddItemToArray(jt, rb_rtable_json(runs));
        for (size_t s = 0; s < nsecs; s++) {
            for (size_t t = 0; t < secs[s].tables.n; t++) {
                cJSON *tj = rb_rtable_json(secs[s].tables.v[t]);
                if (tj && R->group_by) {
                    cJSON *g = cJSON_AddObjectToObject(tj, "group");
                    cJSON_AddStringToObject(g, "label", R->group_by);
                    if (secs[s].group_value)
                        cJSON_AddStringToObject(g, "value", secs[s].group_value);
                    else
                        cJSON_AddNullToObject(g, "value");
                }
                cJSON_AddItemToArray(jt, tj);
            }
        }
        if (R->compare) {
            cJSON *c = cJSON_AddObjectToObject(doc, "compare");
            cJSON_AddStringToObject(c, "a", R->runs[0].path);
            cJSON_AddStringToObject(c, "b", R->runs[1].path);
            cJSON_AddNumberToObject(c, "threshold_pct", R->threshold_pct);
            cJSON_AddNumberToObject(c, "regressions", (double)R->regressions);
        }
        cJSON *w = cJSON_AddArrayToObject(doc, "warnings");
        for (size_t i = 0; i < R->nwarnings; i++)
            cJSON_AddItemToArray(w, cJSON_CreateString(R->warnings[i]));
        char *text = cJSON_Print(doc);
        if (text) {
            rb_buf_printf(out, "%s\n", text);
            free(text);
        } else {
            out->oom = true;
        }
        cJSON_Delete(doc);
        return;
    }
    if (format == FMT_MD)
        rb_buf_printf(out, "# railbench report\n\n");
    if (format == FMT_MD)
        rb_rtable_md(runs, out);
    else
        rb_rtable_csv(runs, out);
    for (size_t s = 0; s < nsecs; s++) {
        if (secs[s].heading && format == FMT_MD) {
            rb_buf_printf(out, "# ");
            md_heading_escape(out, secs[s].heading);
            rb_buf_printf(out, "\n\n");
        }
        for (size_t t = 0; t < secs[s].tables.n; t++) {
            if (format == FMT_MD)
                rb_rtable_md(secs[s].tables.v[t], out);
            else
                rb_rtable_csv(secs[s].tables.v[t], out);
        }
    }
    if (format == FMT_MD && R->nwarnings) {
        rb_buf_printf(out, "## Warnings\n\n");
        for (size_t i = 0; i < R->nwarnings; i++) {
            rb_buf_printf(out, "- ");
            md_heading_escape(out, R->warnings[i]);
            rb_buf_printf(out, "\n");
        }
        rb_buf_printf(out, "\n");
    }
}

static void html_head(struct report *R, struct rb_rtable *runs, struct rb_buf *html)
{
    rb_html_begin(html, "railbench report");
    rb_buf_printf(html, "<p class=\"meta\">%zu run%s, railbench ", R->n, R->n == 1 ? "" : "s");
    rb_html_escape(html, rb_version());
    if (R->compare)
        rb_buf_printf(html, "; comparison with threshold %g %%: %zu regression%s", R->threshold_pct, R->regressions,
                      R->regressions == 1 ? "" : "s");
    rb_buf_printf(html, "</p>\n");
    if (R->nwarnings) {
        rb_buf_printf(html, "<h2>Warnings</h2>\n<ul class=\"warnings\">\n");
        for (size_t i = 0; i < R->nwarnings; i++) {
            rb_buf_printf(html, "<li>");
            rb_html_escape(html, R->warnings[i]);
            rb_buf_printf(html, "</li>\n");
        }
        rb_buf_printf(html, "</ul>\n");
    }
    rb_buf_printf(html, "<section data-kind=\"runs\">\n");
    rb_rtable_html(runs, html);
    rb_buf_printf(html, "</section>\n");
}

/* Distinct values of the group label in order of first appearance; NULL stands for runs without it. */
static int group_values(struct report *R, const char ***vals, size_t *nvals)
{
    const char **v = malloc((R->n + 1) * sizeof *v);
    size_t n = 0;
    bool none = false;
    if (!v)
        return -ENOMEM;
    for (size_t i = 0; i < R->n; i++) {
        const char *x = rb_rundir_label(&R->runs[i], R->group_by);
        if (!x) {
            none = true;
            continue;
        }
        size_t k = 0;
        while (k < n && strcmp(v[k], x) != 0)
            k++;
        if (k == n)
            v[n++] = x;
    }
    if (none)
        v[n++] = NULL;
    *vals = v;
    *nvals = n;
    return 0;
}

/* "a, b" of the label names the runs carry (each once) into out; "none" when they carry none. */
static void label_names(const struct report *R, char *out, size_t len)
{
    size_t n = 0;
    out[0] = '\0';
    for (size_t i = 0; i < R->n; i++) {
        const cJSON *l;
        cJSON_ArrayForEach(l, R->runs[i].labels)
        {
            char word[300];
            snprintf(word, sizeof word, "%s", l->string);
            bool seen = false;
            for (const char *p = out; !seen && (p = strstr(p, word)); p += strlen(word))
                seen = (p == out || p[-1] == ' ') && (p[strlen(word)] == ',' || p[strlen(word)] == '\0');
            if (!seen && n + strlen(word) + 3 < len)
                n += (size_t)snprintf(out + n, len - n, "%s%s", n ? ", " : "", word);
        }
    }
    if (!n)
        snprintf(out, len, "none");
}

static int report_runs(struct report *R, struct section **secs_out, size_t *nsecs, struct rb_buf *html)
{
    const char **vals = NULL;
    size_t nvals = 1;
    int rc = 0;
    if (R->group_by && (rc = group_values(R, &vals, &nvals)) != 0)
        return rc;
    if (R->group_by && nvals == 1 && !vals[0]) {
        char names[1024], w[1400];
        label_names(R, names, sizeof names);
        snprintf(w, sizeof w, "--group-by %s: none of the %zu run(s) has the label %s (labels they have: %s); a run "
                 "gets it with --label %s=VALUE", R->group_by, R->n, R->group_by, names, R->group_by);
        add_warning(R, w);
    }
    struct section *secs = calloc(nvals, sizeof *secs);
    struct rb_rundir **sel = malloc((R->n ? R->n : 1) * sizeof *sel);
    const struct rb_report_kind **selk = malloc((R->n ? R->n : 1) * sizeof *selk);
    if (!secs || !sel || !selk) {
        rc = -ENOMEM;
        goto out;
    }
    for (size_t g = 0; g < nvals && !rc; g++) {
        size_t m = 0;
        for (size_t i = 0; i < R->n; i++) {
            const char *x = R->group_by ? rb_rundir_label(&R->runs[i], R->group_by) : NULL;
            if (R->group_by && !(vals[g] ? x && strcmp(x, vals[g]) == 0 : !x))
                continue;
            sel[m] = &R->runs[i];
            selk[m++] = R->kind[i];
        }
        if (R->group_by) {
            char h[1024];
            if (vals[g])
                snprintf(h, sizeof h, "%s = %s", R->group_by, vals[g]);
            else
                snprintf(h, sizeof h, "%s not set (%zu run(s) without --label %s=VALUE)", R->group_by, m, R->group_by);
            secs[g].heading = strdup(h);
            secs[g].group_value = vals[g] ? strdup(vals[g]) : NULL;
            if (html) {
                rb_buf_printf(html, "<h2 class=\"group\">");
                rb_html_escape(html, h);
                rb_buf_printf(html, "</h2>\n");
            }
        }
        if (html)
            rb_buf_printf(html, "<section>\n");
        rc = rb_report_build_tables(sel, selk, m, &secs[g].tables, html);
        if (html)
            rb_buf_printf(html, "</section>\n");
    }
out:
    free(vals);
    free(sel);
    free(selk);
    *secs_out = secs;
    *nsecs = secs ? nvals : 0;
    return rc;
}

/* Figures of A and B together, a figure of both in one hue (B dashed). */
static void paired_plots(struct report *R, void (*draw)(const struct rb_report_set *, struct rb_buf *),
                         struct rb_buf *html)
{
    struct rb_report_set set;
    struct rb_rundir *both[2] = {&R->runs[0], &R->runs[1]};
    if (rb_report_set_init(&set, both, 2) == 0) {
        set.paired = true;
        draw(&set, html);
    }
    rb_report_set_free(&set);
}

/* --compare A B: each table of A against the table of the same kind of B. */
static int report_compare(struct report *R, struct section **secs_out, size_t *nsecs, struct rb_buf *html)
{
    struct section *secs = calloc(1, sizeof *secs);
    struct rb_report_tables ta = {0}, tb = {0};
    struct rb_rundir *a = &R->runs[0], *b = &R->runs[1];
    *secs_out = secs;
    *nsecs = secs ? 1 : 0;
    if (!secs || rb_report_build_tables(&a, &R->kind[0], 1, &ta, NULL) || rb_report_build_tables(&b, &R->kind[1], 1, &tb, NULL)) {
        rb_report_tables_free(&ta);
        rb_report_tables_free(&tb);
        return -ENOMEM;
    }
    size_t pairs = 0;
    for (size_t i = 0; i < ta.n; i++) {
        for (size_t j = 0; j < tb.n; j++) {
            if (strcmp(ta.v[i]->id, tb.v[j]->id) != 0)
                continue;
            size_t reg = 0;
            struct rb_rtable *d = rb_rtable_compare(ta.v[i], tb.v[j], R->threshold_pct, &reg);
            if (d) {
                rb_rtable_note(d, "A = %s, B = %s", a->path, b->path);
                rb_rtable_note(d,
                               "%zu regression%s beyond %g %%: lower throughput, IOPS, busbw or AU, or higher latency, "
                               "time, errors or wrong values",
                               reg, reg == 1 ? "" : "s", R->threshold_pct);
            }
            rb_report_tables_add(&secs->tables, d);
            R->regressions += reg;
            pairs++;
            break;
        }
    }
    rb_report_tables_free(&ta);
    rb_report_tables_free(&tb);
    if (secs->tables.oom)
        return -ENOMEM;
    if (!pairs) {
        fprintf(stderr, "railbench: error: report: --compare: %s is a \"%s\" result and %s a \"%s\" one; they share no table\n",
                a->path, R->kind[0]->name, b->path, R->kind[1]->name);
        return -EINVAL;
    }
    if (html) {
        /* The figures of both runs first (A's series then B's, paired by colour, B dashed), in the kind of A. */
        if (R->kind[0] == R->kind[1]) {
            rb_buf_printf(html, "<section data-kind=\"compare-plots\">\n<h2>A and B</h2>\n<div class=\"headline\">\n");
            paired_plots(R, R->kind[0]->headline, html);
            rb_buf_printf(html, "</div>\n</section>\n");
        }
        rb_buf_printf(html, "<section data-kind=\"compare\">\n");
        for (size_t t = 0; t < secs->tables.n; t++)
            rb_rtable_html(secs->tables.v[t], html);
        rb_buf_printf(html, "</section>\n");
        if (R->kind[0] == R->kind[1] && R->kind[0]->plots)
            paired_plots(R, R->kind[0]->plots, html);
    }
    return 0;
}

static int write_out(const char *path, const struct rb_buf *b, const char *what)
{
    if (!path) {
        if (b->len && fwrite(b->s, 1, b->len, stdout) != b->len)
            return -EIO;
        return fflush(stdout) == 0 ? 0 : -EIO;
    }
    int rc = rb_file_write_atomic(path, b->s ? b->s : "", b->len);
    if (rc)
        fprintf(stderr, "railbench: error: report: %s %s: cannot write: %s\n", what, path, strerror(-rc));
    return rc;
}

static void free_report(struct report *R, struct section *secs, size_t nsecs)
{
    for (size_t s = 0; s < nsecs; s++) {
        free(secs[s].heading);
        free(secs[s].group_value);
        rb_report_tables_free(&secs[s].tables);
    }
    free(secs);
    for (size_t i = 0; i < R->n; i++)
        rb_rundir_free(&R->runs[i]);
    free(R->runs);
    free(R->kind);
    for (size_t i = 0; i < R->nwarnings; i++)
        free(R->warnings[i]);
    free(R->warnings);
}

/* Options that do not go together: one line and non-zero (a usage error), else 0. */
static int check_options(const struct report *R, int nargs)
{
    if (R->compare && nargs != 2) {
        fprintf(stderr, "railbench: error: --compare: needs exactly two result directories, A (the baseline) then B; got %d\n",
                nargs);
        return -1;
    }
    if (R->compare && R->group_by) {
        fprintf(stderr, "railbench: error: --group-by: cannot be combined with --compare (which takes two runs)\n");
        return -1;
    }
    if (R->mlperf && (R->compare || R->group_by || R->baseline || R->html || R->format == FMT_CSV ||
                      R->format == FMT_HTML)) {
        fprintf(stderr, "railbench: error: --mlperf: takes --format md|json and --out only\n");
        return -1;
    }
    if (!R->mlperf && R->mlperf_client_ram) {
        fprintf(stderr, "railbench: error: --mlperf-client-ram: only with --mlperf\n");
        return -1;
    }
    if (R->baseline && (R->compare || R->group_by || !(R->baseline_ratio > 0 && R->baseline_ratio < 1))) {
        fprintf(stderr, "railbench: error: --baseline: %s\n", R->compare || R->group_by
                                                          ? "cannot be combined with --compare or --group-by"
                                                          : "--baseline-ratio: expected a number in (0, 1), e.g. 0.9");
        return -1;
    }
    return 0;
}

/*
 * The report's sections: against --baseline, A against B (--compare), or the
 * runs' tables (one section per --group-by value); with body, their HTML too.
 * Returns 0, -EINVAL (said why) or -ENOMEM.
 */
static int build_sections(struct report *R, struct section **secs, size_t *nsecs, struct rb_buf *body)
{
    if (!R->baseline)
        return R->compare ? report_compare(R, secs, nsecs, body) : report_runs(R, secs, nsecs, body);
    *secs = calloc(1, sizeof **secs);
    *nsecs = *secs ? 1 : 0;
    int rc = *secs ? rb_report_baseline(R->runs, R->kind, R->n, R->baseline, R->baseline_ratio, &(*secs)->tables,
                                        &R->regressions)
                   : -ENOMEM;
    for (size_t t = 0; body && !rc && t < (*secs)->tables.n; t++)
        rb_rtable_html((*secs)->tables.v[t], body);
    return rc;
}

/* --phases: keeps only the tables of the load runs' request phases and slowest requests. Returns how many stay. */
static size_t keep_phases(struct section *secs, size_t nsecs)
{
    size_t kept = 0;
    for (size_t s = 0; s < nsecs; s++) {
        struct rb_report_tables *t = &secs[s].tables;
        size_t k = 0;
        for (size_t i = 0; i < t->n; i++) {
            if (strcmp(t->v[i]->id, "load_phases") == 0 || strcmp(t->v[i]->id, "load_slowest") == 0)
                t->v[k++] = t->v[i];
            else
                rb_rtable_free(t->v[i]);
        }
        t->n = k;
        kept += k;
    }
    return kept;
}

/*
 * Writes the report: the text format to --out (or stdout), the HTML page
 * (body: its sections, or NULL without HTML) to --out with --format html
 * and to --html. Returns 0, -ENOMEM, or -EIO after a line saying what could not be written.
 */
static int emit(struct report *R, struct rb_rtable *runs, struct section *secs, size_t nsecs, const struct rb_buf *body)
{
    struct rb_buf text = {0}, html = {0};
    int rc = 0;
    if (body) {
        html_head(R, runs, &html);
        rb_buf_append(&html, body->s ? body->s : "", body->len);
        rb_html_end(&html);
    }
    if (R->format != FMT_HTML)
        render_text(R, R->format, runs, secs, nsecs, &text);
    if (html.oom || text.oom)
        rc = -ENOMEM;
    else if (write_out(R->out, R->format == FMT_HTML ? &html : &text, "--out") != 0)
        rc = -EIO;
    else if (R->html && write_out(R->html, &html, "--html") != 0)
        rc = -EIO;
    else if (R->html)
        rb_info("HTML report: %s", R->html);
    rb_buf_free(&text);
    rb_buf_free(&html);
    return rc;
}

/* What the directories said: warnings beside a report, errors when none could be read (the run ends there). */
static void say_warnings(const struct report *R)
{
    for (size_t i = 0; i < R->nwarnings; i++) {
        if (R->n == 0 && !R->compare)
            rb_error("report: %s", R->warnings[i]);
        else
            rb_warn("%s", R->warnings[i]);
    }
}

int rb_report_main(int argc, char **argv)
{
    struct report R = {.threshold_pct = 5, .baseline_ratio = 0.9};
    const struct rb_opt opts[] = {
        {"format", 'f', RB_OPT_CHOICE, &R.format, "md|csv|json|html", "output format", "md|csv|json|html"},
        {"out", 'o', RB_OPT_STR, &R.out, "FILE", "write the report to FILE instead of stdout", NULL},
        {"html", 0, RB_OPT_STR, &R.html, "FILE",
         "also write a self-contained HTML report with plots (no network fetches) to FILE", NULL},
        {"compare", 0, RB_OPT_FLAG, &R.compare, NULL,
         "compare two runs: the first is the baseline A, the second B; exit 1 on regressions", NULL},
        {"threshold", 0, RB_OPT_PERCENT, &R.threshold_pct, "PCT",
         "--compare marks a figure worse by more than PCT % of A as a regression", NULL},
        {"group-by", 0, RB_OPT_STR, &R.group_by, "LABEL", "one section per value of this --label of the runs", NULL},
        {"baseline", 0, RB_OPT_STR, &R.baseline, "DIR",
         "compare each run with the saved run of its command in DIR, per host, link, size and phase; exit 1 on "
         "regressions", NULL},
        {"phases", 0, RB_OPT_FLAG, &R.phases, NULL,
         "only the load runs' request phases and slowest requests (recorded by load --phases and --slowest)", NULL},
        {"baseline-ratio", 0, RB_OPT_DOUBLE, &R.baseline_ratio, "X",
         "--baseline: a figure below X times the baseline's (a latency or time above 2 - X times) is a regression",
         NULL},
        {"mlperf", 0, RB_OPT_FLAG, &R.mlperf, NULL,
         "check load train and load checkpoint results against MLPerf Storage's closed rules, one PASS/FAIL line "
         "per rule; exit 1 when one fails", NULL},
        {"mlperf-client-ram", 0, RB_OPT_SIZE, &R.mlperf_client_ram, "SIZE",
         "--mlperf: the clients' total memory the data set is held against instead of the runs' provenance "
         "records (for scaled-down sets)", NULL},
        {0},
    };
    static const struct rb_cmd_spec spec = {
        "railbench report [options] RESULT_DIR...",
        "Print the tables each kind of result calls for (tiers, warp-like per op, nccl-tests, fio IOPS vs "
        "latency, sweep knee, training AU), one row per run across runs; compare two runs; write an HTML report "
        "with plots. A directory holding result directories stands for all of them.",
        NULL, 1, -1, true};
    struct rb_cmd_spec s = spec;
    s.opts = opts;
    struct rb_cli cli;
    int status = RB_EXIT_OK;
    int rc = rb_cli_parse(&cli, &s, argc, argv);
    if (rc != 0) {
        rb_cli_free(&cli);
        return rc == RB_CLI_HELP ? RB_EXIT_OK : RB_EXIT_USAGE;
    }
    rb_log_set_level(cli.common.quiet ? RB_LOG_WARN : RB_LOG_INFO);
    if (check_options(&R, cli.nargs)) {
        rb_cli_free(&cli);
        return RB_EXIT_USAGE;
    }
    if (R.mlperf) {
        status = rb_report_mlperf(cli.args, (size_t)cli.nargs, R.format == FMT_JSON, R.out, R.mlperf_client_ram);
        rb_cli_free(&cli);
        return status;
    }
    bool want_html = R.html || R.format == FMT_HTML;
    unsigned flags = want_html ? RB_RUNDIR_SERIES | RB_RUNDIR_CURVES : 0;
    struct section *secs = NULL;
    size_t nsecs = 0;
    struct rb_rtable *runs = NULL;
    struct rb_rundir **all = NULL;
    struct rb_buf body = {0};

    R.loading = true;
    rc = load_all(&R, &cli, flags);
    R.loading = false;
    if (rc)
        goto oom;
    say_warnings(&R);
    /* Each directory that gave nothing has said why in its own line. */
    if (R.n == 0 || (R.compare && R.n != 2)) {
        if (R.compare)
            fprintf(stderr, "railbench: error: --compare: needs both runs; %zu of 2 could be read\n", R.n);
        status = RB_EXIT_USAGE;
        goto done;
    }
    all = malloc(R.n * sizeof *all);
    if (!all)
        goto oom;
    for (size_t i = 0; i < R.n; i++)
        all[i] = &R.runs[i];
    runs = runs_table(&R, all, R.n);
    if (!runs)
        goto oom;

    /* The HTML page gathers sections as they are built, then gets its head (which needs the totals). */
    rc = build_sections(&R, &secs, &nsecs, want_html ? &body : NULL);
    if (rc == -EINVAL) {
        status = RB_EXIT_USAGE;
        goto done;
    }
    if (rc || body.oom)
        goto oom;
    if (R.phases && !keep_phases(secs, nsecs)) {
        fprintf(stderr, "railbench: error: --phases: no run here recorded request phases or slowest requests (load "
                        "get|put|delete|stat|mixed --phases, --slowest N)\n");
        status = RB_EXIT_USAGE;
        goto done;
    }
    if ((rc = emit(&R, runs, secs, nsecs, want_html ? &body : NULL)) == -ENOMEM)
        goto oom;
    if (rc) {
        status = RB_EXIT_RUNTIME;
        goto done;
    }
    if ((R.compare || R.baseline) && R.regressions)
        status = RB_EXIT_CHECK;
    goto done;
oom:
    fprintf(stderr, "railbench: error: report: out of memory\n");
    status = RB_EXIT_RUNTIME;
done:
    free(all);
    rb_buf_free(&body);
    rb_rtable_free(runs);
    free_report(&R, secs, nsecs);
    rb_cli_free(&cli);
    return status;
}
