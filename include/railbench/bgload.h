/* A background object GET load each rank drives while another command measures (coll --background). */
#ifndef RB_BGLOAD_H
#define RB_BGLOAD_H

#include <stdint.h>

#include "railbench/harness.h"
#include "railbench/stats.h"

struct rb_bgload_opts {
    const char *url;          /* http://HOST[:PORT]/PATH, s3://BUCKET, ais://BUCKET, as for load get */
    uint64_t objects;         /* generated names <prefix>obj-<index>, split over the ranks */
    unsigned threads;         /* worker threads per rank */
    unsigned inflight;        /* requests in flight per thread (closed loop) */
    double rate_per_s;        /* this rank's open-loop rate; 0 = closed loop */
    uint64_t timeout_ns;      /* per request */
};

struct rb_bgload;

/*
 * Opens the target, makes one connection to it and prepares this rank's
 * share of the objects and the engine, without starting it. Collective.
 * Returns 0 or an exit status after the first rank printed why.
 * Free with rb_bgload_free.
 */
int rb_bgload_open(struct rb_harness *h, const struct rb_bgload_opts *o, struct rb_bgload **b);

/* Starts the load's threads. Returns 0 or -errno. */
int rb_bgload_start(struct rb_bgload *b);

/* Stops issuing requests (those in flight are abandoned) and joins the threads; rb_bgload_take then gets the rest. */
void rb_bgload_stop(struct rb_bgload *b);

/* Moves what the load did since the last call into into (merged). Main thread only. */
void rb_bgload_take(struct rb_bgload *b, struct rb_stats *into);

/* Stops the load (requests in flight abandoned) and frees it; NULL-safe. */
void rb_bgload_free(struct rb_bgload *b);

#endif
