/* The kinds of result: their list (gathered by RB_REPORT_KIND), which kind a result is (its schema says), and their
 * tables. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report_int.h"
#include "schema_commands.h" /* generated from schemas/ by scripts/gen-schema-commands.py */

/* The entries RB_REPORT_KIND put in section rb_report_kinds, from every kind_*.c linked in. */
extern const struct rb_report_kind_entry __start_rb_report_kinds[], __stop_rb_report_kinds[];

static int by_order(const void *a, const void *b)
{
    const struct rb_report_kind_entry *x = a, *y = b;
    return (x->order > y->order) - (x->order < y->order);
}

static struct rb_report_kind_entry sorted[64];

const struct rb_report_kind *const *rb_report_kind_list(size_t *n)
{
    static const struct rb_report_kind *kinds[64];
    static size_t nkinds;
    if (!nkinds) {
        /* The linker's bounds of one section: one array to cppcheck's eyes, two objects. */
        // cppcheck-suppress comparePointers
        size_t m = (size_t)(__stop_rb_report_kinds - __start_rb_report_kinds);
        m = m < 64 ? m : 64;
        memcpy(sorted, __start_rb_report_kinds, m * sizeof *sorted);
        qsort(sorted, m, sizeof *sorted, by_order);
        for (size_t i = 0; i < m; i++)
            kinds[i] = sorted[i].kind;
        nkinds = m;
    }
    *n = nkinds;
    return kinds;
}

/* Every command a schema declares: the kind that tables its results (NULL: none) and what its summary needs. */
static const struct {
    const char *command, *kind, *schema, *needs;
} schema_commands[] = {RB_SCHEMA_COMMANDS};

const struct rb_report_kind *rb_report_kind_named(const char *command, const char **needs)
{
    size_t best = 0, len = 0;
    for (size_t c = 0; c < sizeof schema_commands / sizeof schema_commands[0]; c++) {
        size_t n = strlen(schema_commands[c].command);
        bool names = strncmp(command, schema_commands[c].command, n) == 0 && (command[n] == '\0' || command[n] == ' ');
        if (names && n > len)
            best = c, len = n;
    }
    if (needs)
        *needs = len ? schema_commands[best].needs : "";
    if (!len || !schema_commands[best].kind)
        return NULL;
    size_t nkinds;
    const struct rb_report_kind *const *kinds = rb_report_kind_list(&nkinds);
    for (size_t k = 0; k < nkinds; k++)
        if (strcmp(sorted[k].id, schema_commands[best].kind) == 0)
            return kinds[k];
    return NULL;
}

const struct rb_report_kind *rb_report_kind_of(const struct rb_rundir *r)
{
    const struct rb_report_kind *kind = rb_report_kind_named(r->command, NULL);
    return kind ? kind : &rb_report_kind_phases;
}

/* Tables of runs[0..n) kind by kind (a kind's runs share one table, a row per run). */
int rb_report_build_tables(struct rb_rundir **runs, const struct rb_report_kind **rkind, size_t n,
                           struct rb_report_tables *out, struct rb_buf *html)
{
    struct rb_rundir **sel = malloc((n ? n : 1) * sizeof *sel);
    if (!sel)
        return -ENOMEM;
    size_t nkinds;
    const struct rb_report_kind *const *kinds = rb_report_kind_list(&nkinds);
    for (size_t k = 0; k < nkinds; k++) {
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
            if (rkind[i] == kinds[k])
                sel[m++] = runs[i];
        if (!m)
            continue;
        struct rb_report_set set;
        if (rb_report_set_init(&set, sel, m) != 0) {
            free(sel);
            return -ENOMEM;
        }
        size_t before = out->n;
        kinds[k]->tables(&set, out);
        rb_report_hosts_table(&set, out);
        if (html) {
            rb_buf_printf(html, "<div class=\"headline\">\n");
            kinds[k]->headline(&set, html);
            rb_buf_printf(html, "</div>\n");
            for (size_t t = before; t < out->n; t++)
                rb_rtable_html(out->v[t], html);
            if (kinds[k]->plots)
                kinds[k]->plots(&set, html);
        }
        rb_report_set_free(&set);
    }
    free(sel);
    return out->oom ? -ENOMEM : 0;
}
