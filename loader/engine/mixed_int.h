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

/*
 * For a target with a request loop of its own (file://, which has no curl
 * slots): the loop sets w->drv to &rb_mix_driver and runs its init, then
 * issues through rb_mix_refill and accounts each finished request with
 * rb_mix_slot_stats and rb_mix_settle (or rb_mix_abandoned). Worker thread.
 */

/* Starts op on name (size bytes for a PUT) on w's last free slot (w->free_slots[w->nfree - 1]). Returns 0 or -errno. */
typedef int (*rb_mix_issue_fn)(struct rb_worker *w, enum rb_load_op op, const char *name, uint64_t size);

/*
 * Issues requests on w's free slots, each with an op drawn by weight and an
 * object that is not in flight: live for GET, STAT and DELETE; absent (or,
 * with none absent, live: an overwrite) for PUT. An op with no such object
 * is drawn again. Sets w->exhausted at the count or byte limit, or when no
 * op can be drawn and nothing is in flight. Returns 0 or issue's -errno.
 */
int rb_mix_refill(struct rb_worker *w, rb_mix_issue_fn issue);

/* Whether slot's request is a PUT over a live object (one this run wrote, or named with --overwrite). */
bool rb_mix_slot_overwrites(const struct rb_worker *w, unsigned slot);

/* The stats slot's finished request is recorded under (its op's); sets w->op to that op's. */
struct rb_stats *rb_mix_slot_stats(struct rb_worker *w, unsigned slot);

/* Moves slot's object to where its request left it: live or absent when ok, back where it was when not. */
void rb_mix_settle(struct rb_worker *w, unsigned slot, bool ok);

/* slot's request was abandoned: a GET's or STAT's object is live again, a PUT's or DELETE's state unknown. */
void rb_mix_abandoned(struct rb_worker *w, unsigned slot);


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
