/*
 * A slot's request whichever engine carries it, for the drivers (mixed.c, multipart.c, ranged.c): above both
 * transports (libcurl's slots in transfer.c, the native engine's connections), so neither calls the other.
 */
#include <curl/curl.h>

#include "worker_int.h"

struct rb_req *rb_worker_slot_busy(struct rb_worker *w, unsigned i, bool stop)
{
    struct rb_req *r = w->nat ? rb_native_req(w, i) : &w->reqs[i];
    if (w->nat ? !rb_native_busy(w, i) : !r->busy)
        return NULL;
    if (stop && w->nat) {
        rb_native_drop(w, i);
    } else if (stop) {
        curl_multi_remove_handle(r->sh->multi, r->easy);
        r->busy = false;
        w->free_slots[w->nfree++] = i;
    }
    return r;
}
