/* Ranged GET in parts: a worker reads each large object as parallel Range GETs (the read side of multipart). */
#ifndef RB_RANGED_INT_H
#define RB_RANGED_INT_H

#include <curl/curl.h>

#include "railbench/stats.h"

struct rb_worker;
struct rb_req;

/*
 * A GET with o->part_size > 0 reads every object larger than
 * o->multipart_threshold as Range requests of o->part_size bytes (the last
 * shorter), up to the worker's free slots in parallel; smaller objects (and
 * objects of unknown size) take one plain GET. The object counts once in the
 * phase's stats (latency from its first part's send to its last part's end,
 * bytes the whole object, failed when any part failed: a server answering a
 * part with 200 instead of 206 ignored the Range, class other); each part is
 * one record of the part statistics (rb_rg_collect_parts).
 */

/* Sets up w's ranged-read state. Returns 0 or -ENOMEM. Before the worker's thread starts. */
int rb_rg_new(struct rb_worker *w);
/* Frees w's ranged-read state; safe when there is none. */
void rb_rg_free(struct rb_worker *w);
/*
 * Issues requests on w's free slots: the next parts of objects under way
 * first, then the next object. Sets w->exhausted once no object is left and
 * every object under way is finished. Returns 0 or -errno. Worker thread.
 */
int rb_rg_refill(struct rb_worker *w);
/* Accounts the finished request on slot r (a whole GET or a part) and frees the slot. Worker thread. */
void rb_rg_complete(struct rb_worker *w, struct rb_req *r, CURLcode rc);
/* After the loop: parts in flight and objects under way are counted abandoned. Worker thread. */
void rb_rg_finish(struct rb_worker *w, uint64_t now_ns);
/* Adds w's per-part statistics into into (nothing without ranged reads). After the worker's thread joined. */
void rb_rg_collect_parts(const struct rb_worker *w, struct rb_stats *into);

#endif
