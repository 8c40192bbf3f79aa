/* Ranged GET in parts: a worker reads each large object as parallel Range GETs (the read side of multipart). */
#ifndef RB_RANGED_INT_H
#define RB_RANGED_INT_H

#include <curl/curl.h>

#include "railbench/stats.h"

struct rb_worker;
struct rb_req;
struct rb_worker_driver;

/*
 * A GET with o->part_size > 0 reads every object larger than
 * o->multipart_threshold as Range requests of o->part_size bytes (the last
 * shorter), up to the worker's free slots in parallel; smaller objects (and
 * objects of unknown size) take one plain GET. The object counts once in the
 * phase's stats (latency from its first part's send to its last part's end,
 * bytes the whole object, failed when any part failed: a server answering a
 * part with 200 instead of 206 ignored the Range, class other); each part is
 * one record of the part statistics (rb_rg_collect_parts). This is the
 * worker's driver (struct rb_worker_driver); its state is w->rg.
 */
extern const struct rb_worker_driver rb_rg_driver;

/* Adds w's per-part statistics into into (nothing without ranged reads). After the worker's thread joined. */
void rb_rg_collect_parts(const struct rb_worker *w, struct rb_stats *into);

#endif
