/* The Prometheus registry's inside, shared by prom.c (registry, listener), prom_text.c (the walk, the text
 * formats) and prom_pb.c (the protobuf format with native histograms). */
#ifndef RB_PROM_INT_H
#define RB_PROM_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <microhttpd.h>

#include "railbench/prom.h"

/* One classic bucket per "le" boundary plus +Inf: an exemplar slot each. */
#define RB_PROM_SLOTS(n) ((n) + 1)

struct rb_prom_sample {
    char *name, *type, *help, *labels;
    double value;
};

/* An exemplar as kept: the largest value that fell into its bucket, with its request id. */
struct rb_prom_ex {
    bool set;
    double value_s, ts_s;
    char id[RB_PROM_ID_MAX + 1];
};

struct rb_prom_phase {
    char *phase, *op;
    const char *const *err;
    const char *const *extra;
    struct rb_stats *stats;
    bool has_stats;        /* rb_prom_phase has been called: an exemplar alone does not make a series */
    struct rb_prom_ex *ex; /* RB_PROM_SLOTS(rb_prom_le_count()) slots of the latency histogram, or NULL */
};

/* One request phase's (step's) histogram of a load phase and op (rb_prom_step). */
struct rb_prom_step {
    char *phase, *op, *step;
    struct rb_hist *h;
};

struct rb_prom {
    char *const_labels;
    struct rb_prom_sample *samples;
    size_t nsamples, capsamples;
    struct rb_prom_phase *phases;
    size_t nphases, capphases;
    struct rb_prom_step *steps;
    size_t nsteps, capsteps;

    struct MHD_Daemon *mhd;
    int fd;
    pthread_mutex_t lock; /* guards the published forms: the server thread reads them, the publisher swaps them */
    char *text, *om;
    void *pb;
    size_t pblen;
};

/*
 * What the walk over the registry hands to a format: a family's header, then its samples, each with its
 * own labels ('k="v",...', escaped; the constant labels are the format's to add). count is an integer
 * sample (counters of the phases), value any other; histogram a phase's histogram with its exemplar slots
 * (NULL when it has none).
 */
struct rb_prom_sink {
    void *ctx;
    void (*family)(void *ctx, const char *name, const char *type, const char *help);
    void (*count)(void *ctx, const char *name, const char *labels, uint64_t n);
    void (*value)(void *ctx, const char *name, const char *labels, double v);
    void (*histogram)(void *ctx, const char *name, const char *labels, const struct rb_hist *h,
                      const struct rb_prom_ex *ex);
};

/* Walks every family of the registry in exposition order. */
void rb_prom_walk(const struct rb_prom *p, const struct rb_prom_sink *k);

/* The exemplar slot of a latency in seconds: the first "le" above it, or the +Inf slot. */
size_t rb_prom_slot(double value_s);

#endif
