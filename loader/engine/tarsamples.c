/* GET bodies read as tar shards as they stream (load get --samples tar): each regular member one sample. */
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "railbench/clock.h"
#include "railbench/log.h"
#include "worker_int.h"

/* A worker's tar samples: one record per member read, and per slot its body read as a tar archive. */
struct rb_tars {
    struct rb_stats *samples;
    struct rb_tar_stream s[]; /* w->nreq, by rb_req.slot */
};

int rb_tar_new(struct rb_worker *w)
{
    struct rb_tars *t = calloc(1, sizeof *t + w->nreq * sizeof t->s[0]);
    if (!t || !(t->samples = rb_stats_new())) {
        free(t);
        return -ENOMEM;
    }
    w->tars = t;
    return 0;
}

void rb_tar_free(struct rb_worker *w)
{
    if (!w->tars)
        return;
    rb_stats_free(w->tars->samples);
    free(w->tars);
    w->tars = NULL;
}

void rb_tar_body(struct rb_req *r, const void *p, size_t n)
{
    struct rb_tar_stream *s = &r->w->tars->s[r->slot];
    if (!r->body) /* the body's first bytes: a new archive, its first sample timed from the request's send */
        rb_tar_stream_start(s, r->start_ns);
    rb_tar_stream_feed(s, p, n, rb_clock_ns(), r->w->tars->samples);
}

void rb_tar_request_end(struct rb_worker *w, struct rb_req *r)
{
    static atomic_flag said = ATOMIC_FLAG_INIT;
    struct rb_tar_stream *s = &w->tars->s[r->slot];
    if (!r->body)
        rb_tar_stream_start(s, r->start_ns);
    if (!rb_tar_stream_end(s))
        return;
    w->tars->samples->ops++; /* a record that is no sample: ops - errors stays the samples read */
    rb_stats_error(w->tars->samples, RB_LERR_OTHER);
    if (!atomic_flag_test_and_set(&said))
        rb_error("--samples tar: %s \"%s\": %s (at byte %" PRIu64 " of %" PRIu64 "); stopping (what was measured so "
                 "far is kept)", rb_target_name(w->o->target), r->name, s->why, s->bad_at, r->body);
    if (w->e)
        atomic_store(&w->e->stop, true);
}

void rb_tar_collect_samples(const struct rb_worker *w, struct rb_stats *into)
{
    if (w->tars)
        rb_stats_merge(into, w->tars->samples);
}
