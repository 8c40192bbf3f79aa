/* load mixed: a warp-like mix of GET, PUT, DELETE and STAT over a live set of objects, drawn per request. */
#ifndef RB_MIXED_INT_H
#define RB_MIXED_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <curl/curl.h>

#include "railbench/stats.h"
#include "../proto/target_int.h"

/* The ops of a mix are the load ops themselves (GET, PUT, DELETE, HEAD = warp's STAT), indexed by enum rb_load_op. */
#define RB_MIX_OPS 4

/* Weights per op; an op of weight 0 is never drawn. total is their sum (> 0 once parsed). */
struct rb_mix {
    unsigned weight[RB_MIX_OPS];
    unsigned total;
};

/* warp mixed's default distribution: GET 45, PUT 15, DELETE 10, STAT 30. */
#define RB_MIX_DEFAULT "get=45,put=15,delete=10,stat=30"

/*
 * Parses "get=45,put=15,delete=10,stat=30" (any subset, each op once,
 * weights 0 to 1,000,000, at least one above 0) into m. Returns 0, or
 * -EINVAL with the offending item (or what is missing) in bad. Pure.
 */
int rb_mix_parse(const char *s, struct rb_mix *m, char *bad, size_t badlen);

/* The --mix key of op ("get", "put", "delete", "stat"). Pure. */
const char *rb_mix_key(enum rb_load_op op);

struct rb_worker;
struct rb_req;
struct rb_engine;
struct rb_worker_driver;

/*
 * The driver of a load mixed worker (o->mix; struct rb_worker_driver): its
 * state (w->mix) is the thread's share of the rank's objects (index %
 * threads == thread), all live at the start, and per-op stats; each request
 * draws an op by weight and an object that is not in flight (live for GET,
 * STAT and DELETE; absent, or live as an overwrite, for PUT); completions
 * move objects between live and absent; at each handover the per-op stats
 * fold into the worker's.
 */
extern const struct rb_worker_driver rb_mix_driver;


/* Adds op's stats over the phase, of every worker of e, into into. After rb_engine_stop. */
void rb_engine_mix_stats(const struct rb_engine *e, enum rb_load_op op, struct rb_stats *into);
/*
 * The objects of e's workers that are live at the end (written or never
 * deleted) into *live, those whose PUT or DELETE was abandoned (state
 * unknown) into *unknown, and the threads that stopped for want of an
 * object (before their limits) into *dry. After rb_engine_stop.
 */
void rb_engine_mix_live(const struct rb_engine *e, uint64_t *live, uint64_t *unknown, uint64_t *dry);
/*
 * Calls fn(name, arg) for every object live at the end on e's workers
 * (name borrowed for the call). After rb_engine_stop. Returns 0 or fn's first non-zero.
 */
int rb_engine_mix_each_live(const struct rb_engine *e, int (*fn)(const char *name, void *arg), void *arg);

#endif
