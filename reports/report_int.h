/* Internals of railbench report: the kinds of result it knows, and what their tables and plots share. */
#ifndef RB_REPORT_INT_H
#define RB_REPORT_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "railbench/buf.h"
#include "rtable_int.h"
#include "rundir_int.h"
#include "svg_int.h"
#include "railbench/units.h"


/* Runs of one kind reported together, and the label keys any of them has (the label columns). */
struct rb_report_set {
    struct rb_rundir *const *runs;
    size_t n;
    const char **label_keys; /* borrowed from the runs' labels */
    size_t nlabel_keys;
    bool paired;             /* A and B of --compare: a figure of both in one hue, B dashed */
};

/* Tables a report collects, in order. */
struct rb_report_tables {
    struct rb_rtable **v;
    size_t n, cap;
    bool oom;
};

/*
 * A kind of result, chosen by the command the result records alone: the
 * schema in schemas/ whose "x-railbench-commands" names the command names
 * the kind too (reports/kinds.c). It owns the tables users of the matching
 * tool expect and its plots.
 */
struct rb_report_kind {
    const char *name;                       /* "load get|put", for messages */
    void (*tables)(const struct rb_report_set *s, struct rb_report_tables *out);
    void (*headline)(const struct rb_report_set *s, struct rb_buf *html); /* the figure shown first */
    void (*plots)(const struct rb_report_set *s, struct rb_buf *html);    /* the others, after the tables; or NULL */
};

/* Where a kind stands among the others: its tables come in order (lower first). */
struct rb_report_kind_entry {
    int order;
    const char *id;                         /* NAME of RB_REPORT_KIND: what schemas/ call the kind */
    const struct rb_report_kind *kind;
};

/*
 * Defines the kind rb_report_kind_NAME and lists it among every kind (the
 * linker gathers the entries of section rb_report_kinds): adding a kind is
 * its file kind_<name>.c, `RB_REPORT_KIND(name, order) = {...};`, and its
 * commands in its schema's "x-railbench-commands" ({"command": "name"});
 * nothing else names it. order places its tables in a report (phases, the
 * kind of any other command's result, last: 1000).
 */
#define RB_REPORT_KIND(name, order)                                                                              \
    extern const struct rb_report_kind rb_report_kind_##name;                                                    \
    static const struct rb_report_kind_entry rb_report_kind_entry_##name                                         \
        __attribute__((used, section("rb_report_kinds"), aligned(sizeof(void *)))) = {order, #name,              \
                                                                                      &rb_report_kind_##name}; \
    const struct rb_report_kind rb_report_kind_##name

/* The kind of any result no other kind tables (kind_phases.c). */
extern const struct rb_report_kind rb_report_kind_phases;

/* Every kind, in the order a report shows their tables; *n gets how many. Main thread. */
const struct rb_report_kind *const *rb_report_kind_list(size_t *n);

/*
 * The kind of a result of command: the kind its schema's
 * "x-railbench-commands" names for the longest command there that names it
 * ("coll" names "coll allreduce"); NULL when none does, or the schema gives
 * the command no kind (reports/kinds.c). *needs (when not NULL) gets the
 * summary keys the schema requires, space-separated ("" for none).
 */
const struct rb_report_kind *rb_report_kind_named(const char *command, const char **needs);

/* The kind of a run: the one its recorded command names, else phases (reports/kinds.c). */
const struct rb_report_kind *rb_report_kind_of(const struct rb_rundir *r);

/*
 * Tables of runs[0..n) kind by kind (a kind's runs share one table, a row
 * per run), appended to out; with html, each kind's section too. 0 or -ENOMEM.
 */
int rb_report_build_tables(struct rb_rundir **runs, const struct rb_report_kind **rkind, size_t n,
                           struct rb_report_tables *out, struct rb_buf *html);

/*
 * report --baseline DIR (reports/baseline.c): each of runs[0..n) (kinds[i]
 * its kind) against the run of the same command and kind saved in DIR (a
 * result directory, or a directory of them), table by table and row by row
 * (host, link, size, phase): a figure worse than ratio x the baseline's
 * (rb_rtable_judge at (1 - ratio) x 100 %) is a regression. Appends the
 * table of regressions, then the comparisons, to out; *regressions gets
 * their number. Returns 0, -EINVAL when DIR holds no run or none for a run
 * (said on stderr), or -ENOMEM.
 */
int rb_report_baseline(struct rb_rundir *runs, const struct rb_report_kind *const *kinds, size_t n, const char *dir,
                       double ratio, struct rb_report_tables *out, size_t *regressions);

/*
 * report --mlperf (reports/mlperf.c): whether the results in args[0..nargs)
 * (result directories, or directories of them) meet MLPerf Storage's closed
 * rules, one line per rule; the verdict as Markdown, or JSON with json, to
 * out (NULL: stdout). client_ram, when not 0, is the clients' total memory
 * the data set sizes are held against instead of each run's provenance
 * record (scaled-down sets). Returns the exit status: 0 every rule applying
 * holds, 1 one does not, 2 bad input (one error line), 3 output failed.
 */
int rb_report_mlperf(const char *const *args, size_t nargs, bool json, const char *out, uint64_t client_ram);

/* Fills s for runs[0..n) (label keys in first-seen order). Returns 0 or -ENOMEM; free with rb_report_set_free. */
int rb_report_set_init(struct rb_report_set *s, struct rb_rundir *const *runs, size_t n);
void rb_report_set_free(struct rb_report_set *s);

/*
 * A new table appended to out, with the run and label columns first when s
 * holds several runs. NULL when out of memory (out->oom set).
 */
struct rb_rtable *rb_report_table(struct rb_report_tables *out, const struct rb_report_set *s, const char *id,
                                  const char *title);

/*
 * Adds the "hosts" table when a run's phases carry per-host records (a run
 * under MPI on two or more hosts): each phase's figures per host and the
 * straggler rule's verdict. Adds nothing otherwise.
 */
void rb_report_hosts_table(const struct rb_report_set *s, struct rb_report_tables *out);

/*
 * Adds a load run's "load_phases" table (each op's request spans, --phases)
 * and its "load_slowest" table (the slowest requests named, --slowest) when
 * some run of s recorded them; nothing otherwise (reports/load_phases.c).
 */
void rb_report_load_phases(const struct rb_report_set *s, struct rb_report_tables *out);
/* The HTML report's stacked latency breakdown by percentile of the same runs; nothing without --phases. */
void rb_report_plot_load_phases(const struct rb_report_set *s, struct rb_buf *html);

/* Appends a table built elsewhere (taking ownership; freed and out->oom set when it cannot). */
void rb_report_tables_add(struct rb_report_tables *out, struct rb_rtable *t);

/* Frees every table; NULL-safe. */
void rb_report_tables_free(struct rb_report_tables *out);

/* A new row of t for run i of s, its run and label cells filled when t has them. */
size_t rb_report_row(struct rb_rtable *t, const struct rb_report_set *s, size_t i);

/* A note under t about run i, prefixed with the run's name when s holds several runs. */
void rb_report_note(struct rb_rtable *t, const struct rb_report_set *s, size_t i, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The name of a series of run i: "phase" alone, or "run: phase" with several runs. */
void rb_report_series_name(char *buf, size_t len, const struct rb_report_set *s, size_t i, const char *what);

/* Renders p into html when anything can be drawn, then frees it. NULL-safe. */
void rb_report_plot_emit(struct rb_plot *p, struct rb_buf *html);

/*
 * A series of plot p for what of run i: its own colour, or with s->paired the
 * colour of what in the other run, dashed for B. Returns the series index or -1.
 */
int rb_report_series(struct rb_plot *p, const struct rb_report_set *s, size_t i, const char *what);

/*
 * The run on one time axis (intervals.jsonl): throughput, then p50 and p99
 * latency per interval, the phases in sequence and named; MiB/s or GiB/s to suit.
 */
void rb_report_plot_timeline(const struct rb_report_set *s, struct rb_buf *html);

/* Latency percentiles p50 ... p99.99 per phase from the full histograms, log-log. */
void rb_report_plot_latency(const struct rb_report_set *s, struct rb_buf *html);

/* v x scale with decimals into buf, or "-" when v is not a number (a figure not measured is not 0 or "nan"). */
const char *rb_report_fig(char *buf, size_t len, double v, double scale, int decimals);

/* "1 MiB" for a byte count. */
void rb_report_size(char *buf, size_t len, double bytes);

/* Sets the latency columns "<prefix>_<p>_ns" of row r from obj (min mean p50 p90 p99 p999 p9999 max). */
void rb_report_latency_cells(struct rb_rtable *t, size_t r, const char *prefix, const cJSON *obj);

#endif
