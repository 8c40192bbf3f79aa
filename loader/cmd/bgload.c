/* A background GET load on the loader's engine, for commands that measure something else meanwhile (coll --background). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../engine/engine_int.h"
#include "loader_int.h"
#include "../objset/objset_int.h"
#include "railbench/bgload.h"
#include "../proto/target_int.h"

struct rb_bgload {
    struct rb_target *t;
    struct rb_objset mine;
    struct rb_load_opts lo;
    struct rb_engine *e;
};

int rb_bgload_open(struct rb_harness *h, const struct rb_bgload_opts *o, struct rb_bgload **out)
{
    struct rb_bgload *b = calloc(1, sizeof *b);
    if (!b)
        rb_harness_fatal(h, RB_EXIT_RUNTIME, "out of memory");
    const struct rb_target_cfg tc = {.timeout_ns = o->timeout_ns};
    const struct rb_engine_args ea = {.max_redirects = RB_ENGINE_MAX_REDIRECTS};
    uint64_t total = 0;
    int status = rb_load_target_open(&tc, o->url, NULL, &b->t);
    if (!status)
        status = rb_load_target_probe(b->t, o->timeout_ns);
    char prefix[1100];
    if (!status) {
        snprintf(prefix, sizeof prefix, "%sobj-", rb_target_prefix(b->t));
        status = rb_load_build_objects(h, b->t, o->objects, NULL, prefix, o->timeout_ns, RB_ENGINE_AUTO,
                                       "for --background (give --bg-objects N)", false, &b->mine, &total);
    }
    if (status) {
        rb_bgload_free(b);
        return status;
    }
    b->lo = rb_load_opts_from(RB_LOAD_GET, b->t, &tc, &ea, h->rank);
    b->lo.objects = &b->mine;
    b->lo.threads = o->threads;
    b->lo.inflight = o->inflight;
    b->lo.pattern = RB_PATTERN_RANDOM;
    b->lo.rate_per_s = o->rate_per_s;
    b->lo.seed = 1;
    int rc = rb_engine_new(&b->e, &b->lo);
    if (rc)
        rb_harness_fatal(h, RB_EXIT_RUNTIME, "--background: cannot set up the load's engine: %s", strerror(-rc));
    *out = b;
    return 0;
}

int rb_bgload_start(struct rb_bgload *b)
{
    return rb_engine_start(b->e);
}

void rb_bgload_stop(struct rb_bgload *b)
{
    rb_engine_stop(b->e);
}

void rb_bgload_take(struct rb_bgload *b, struct rb_stats *into)
{
    rb_engine_collect(b->e, into, NULL);
}

void rb_bgload_free(struct rb_bgload *b)
{
    if (!b)
        return;
    rb_engine_free(b->e);
    rb_objset_free(&b->mine);
    rb_target_close(b->t);
    free(b);
}
