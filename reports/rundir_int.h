/* A result directory read back for reports: result.json, or what intervals.jsonl still holds. */
#ifndef RB_RUNDIR_INT_H
#define RB_RUNDIR_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

/* What to read besides the records tables need (plots need both). */
enum {
    RB_RUNDIR_SERIES = 1u << 0, /* throughput over time from intervals.jsonl */
    RB_RUNDIR_CURVES = 1u << 1, /* latency percentile curves from each phase's latency_hist */
};

/* A figure over time, one entry per interval line; NAN where the line lacks the figure. */
struct rb_series {
    char *name;            /* phase name, or "<host> net" / "<host> disk" for counters */
    double *t_s;           /* seconds since the phase started, at the end of the interval */
    double *bytes_per_s;
    double *at_s;          /* wall-clock time of the line ("ts"), seconds since 1970 */
    double *p50_ns, *p99_ns; /* latency of the interval's requests */
    size_t n, cap;
};

/* Latency at ascending percentiles of one phase, nearest rank over its full histogram. */
struct rb_curve {
    char *phase;
    double *q_pct;         /* 50, then 1/(1-q) in steps of 10^0.1 while the samples resolve it */
    double *lat_ns;
    size_t n;
    uint64_t count;        /* samples in the histogram */
};

struct rb_rundir {
    char *path;            /* as given, without trailing slashes */
    char *name;            /* last path component: the run's name in tables */
    char *command;         /* "load get"; "" when unknown */
    cJSON *root;           /* result.json without histograms, or phases rebuilt from intervals */
    const cJSON *summary;  /* root.summary, or NULL */
    const cJSON *phases;   /* root.phases when it is an array, or NULL */
    const cJSON *labels;   /* root.labels when it is an object, or NULL */
    bool partial;          /* no usable result.json: phases rebuilt from intervals.jsonl */
    size_t interval_lines; /* well-formed lines of intervals.jsonl, when it was read */
    struct rb_series *series;
    size_t nseries;
    struct rb_curve *curves;
    size_t ncurves;
    char **warnings;       /* one line each, naming the file and what is wrong */
    size_t nwarnings;
};

/*
 * Reads the result directory dir (flags: RB_RUNDIR_*). Problems inside its
 * files become warnings in r->warnings and whatever could be read is kept.
 * Returns 0 when there is something to report; -ENOENT or -ENOTDIR when dir
 * is missing or not a directory; -ENODATA when neither result.json nor
 * intervals.jsonl gave anything (warnings say why); -ENOMEM. r is always
 * initialised; release it with rb_rundir_free. Not thread-safe.
 */
int rb_rundir_load(struct rb_rundir *r, const char *dir, unsigned flags);

/* Frees what rb_rundir_load allocated; NULL-safe and idempotent. */
void rb_rundir_free(struct rb_rundir *r);

/* True when dir holds result.json or intervals.jsonl. */
bool rb_rundir_is_result(const char *dir);

/*
 * Lists the immediate subdirectories of dir that are result directories,
 * sorted by name, as newly allocated paths in *out (free each and the array).
 * Returns 0 (possibly with *n == 0), or -errno when dir cannot be read.
 */
int rb_rundir_children(const char *dir, char ***out, size_t *n);

/* The string labels[key] of the run, or NULL. */
const char *rb_rundir_label(const struct rb_rundir *r, const char *key);

/*
 * The number at a dotted path below o ("latency_ns.p99"); decimal strings
 * written for values past 2^53 count too. NAN when any step is missing or of
 * another type.
 */
double rb_rundir_num(const cJSON *o, const char *path);

/* The string at a dotted path below o, or NULL. */
const char *rb_rundir_str(const cJSON *o, const char *path);

/* The array at a dotted path below o, or NULL when missing or not an array. */
const cJSON *rb_rundir_array(const cJSON *o, const char *path);

#endif
