/*
 * The driver of a put that notes what it wrote (o->track_written on libcurl and the native engine): the plain op
 * row's requests, each slot's object remembered (written.c), a success noted written for cleanup.
 */
#include "worker_int.h"

/* A put that cleans up after itself: the slot remembers its object, a success notes it written. */
static int issue_tracked(struct rb_worker *w, const char *name, uint64_t size, uint64_t intended_ns)
{
    unsigned slot = w->free_slots[w->nfree - 1];
    int rc = rb_xfer_issue(w, name, size, intended_ns);
    if (!rc)
        rb_written_slot_put(w, slot, w->cur_idx);
    return rc;
}

static int refill_tracked(struct rb_worker *w)
{
    return rb_worker_refill(w, issue_tracked);
}

static void complete_tracked(struct rb_worker *w, struct rb_req *r, CURLcode rc)
{
    uint64_t errors = w->local->errors;
    rb_xfer_complete(w, r, rc);
    if (w->local->errors == errors)
        rb_written_slot_stored(w, (unsigned)(r - w->reqs));
}

/* The state is w->written, set up for o->track_written whatever the driver (worker.c): no init or free of its own. */
const struct rb_worker_driver rb_written_driver = {
    .name = "written",
    .refill = refill_tracked,
    .complete = complete_tracked,
};
