/*
 * Listings on the native engine: the pages of a listing (ListObjectsV2 with
 * continuation tokens, AIStore's list action, an autoindex page) one after
 * the other on one keep-alive connection of a one-slot worker, each page
 * described by the target's table (rb_target_list_spec) and read by it
 * (rb_target_list_page), as libcurl's listing does. The commands list through
 * rb_engine_list_pages with their --engine: curl (or a target that lists
 * itself, or has no listing request) goes down to proto's rb_target_list_pages,
 * anything else runs here. Each thread keeps its
 * listing worker (and its keep-alive connection) for its next listing of the
 * same target: setting one up (its buffers and statistics, zeroed pages) cost
 * more than the pages of a short listing.
 */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "railbench/clock.h"
#include "worker_int.h"

/* One listing: the worker it runs on, where it is, and what it reports to. */
struct nlist {
    struct rb_worker w;          /* first: the driver's callbacks find the listing from their worker */
    struct rb_load_opts o;       /* what w runs (w->o) */
    char ident[1200];            /* the target it lists (rb_nlist_ident): the thread's next listing reuses it if equal */
    const struct rb_target *t;
    const char *prefix;
    struct rb_objset *out;
    rb_list_page_fn *on_page;
    void *ctx;
    char *token;                 /* the next page's, or NULL */
    struct rb_list_spec spec;    /* the page in flight */
    bool sent, ended;            /* a page went out (the first is sent without a token); the listing ended */
    int rc;
    char *err;
    size_t errlen;
};

static struct nlist *nlist_of(struct rb_worker *w)
{
    return (struct nlist *)((char *)w - offsetof(struct nlist, w));
}

/* Sends the next page when none is in flight; the worker is done once the listing ended. */
static int list_refill(struct rb_worker *w)
{
    struct nlist *l = nlist_of(w);
    if (l->ended || !w->nfree) {
        w->exhausted = l->ended;
        return 0;
    }
    if (l->sent && !l->token) {
        l->ended = w->exhausted = true;
        return 0;
    }
    int rc = rb_target_list_spec(l->t, l->prefix, l->token, &l->spec, l->err, l->errlen);
    char ctype[100];
    if (!rc && l->spec.content_type)
        snprintf(ctype, sizeof ctype, "Content-Type: %s", l->spec.content_type);
    const char *path = strstr(l->spec.url, "://");
    path = path ? path + 3 + strcspn(path + 3, "/?") : "";
    char root[2] = "/";
    if (!rc) {
        const struct rb_nreq q = {.method = l->spec.method, .path = *path == '/' ? path : root,
                                  .header = l->spec.content_type ? ctype : NULL, .sends_body = l->spec.body != NULL,
                                  .keep_body = true, .body_mem = l->spec.body,
                                  .body_len = l->spec.body ? strlen(l->spec.body) : 0};
        l->sent = true;
        if ((rc = rb_native_send(w, &q)))
            snprintf(l->err, l->errlen, "%s: a listing request does not fit (native engine)", rb_target_name(l->t));
    }
    if (rc) {
        rb_list_spec_free(&l->spec);
        l->rc = rc;
        l->ended = w->exhausted = true;
    }
    return 0;
}

/* A page answered: its names into the listing, the next page's token kept (rb_target_list_page). */
static void list_done(struct rb_worker *w, struct rb_req *r, CURLcode rc, long status, uint64_t ttfb_ns,
                      uint64_t total_ns, long redirects, uint64_t now)
{
    (void)ttfb_ns; /* from the response's first byte, as libcurl's listing */
    (void)redirects;
    (void)now;
    struct nlist *l = nlist_of(w);
    rb_list_spec_free(&l->spec);
    uint64_t ttfb = r->response_ns > r->start_ns ? r->response_ns - r->start_ns : total_ns;
    if (rc == CURLE_OK && r->errbody.oom) {
        rc = CURLE_FILESIZE_EXCEEDED;
        snprintf(r->ebuf, sizeof r->ebuf, "a page longer than %u bytes (native engine)", RB_LIST_BODY_LIMIT);
    }
    l->rc = rb_target_list_page(l->t, l->prefix, rc, status, r->ebuf, r->errbody.len ? r->errbody.s : "",
                                r->errbody.len, l->out, &l->token, l->on_page, l->ctx, total_ns,
                                ttfb < total_ns ? ttfb : total_ns, l->err, l->errlen);
    if (l->rc || !l->token)
        l->ended = true;
}

static const struct rb_worker_driver list_driver = {
    .name = "list",
    .refill = list_refill,
    .done = list_done,
};

/* What a kept worker must match to list t again: the target (its address and id, one per opened target), the timeout. */
static void ident(const struct rb_target *t, uint64_t timeout_ns, char *buf, size_t len)
{
    snprintf(buf, len, "%p|%llu|%llu", (const void *)t, (unsigned long long)t->id, (unsigned long long)timeout_ns);
}

static void nlist_free(struct nlist *l)
{
    if (!l)
        return;
    rb_list_spec_free(&l->spec);
    free(l->token);
    rb_worker_free(&l->w);
    free(l);
}

/* Each thread's kept listing worker: freed when the thread ends (the main thread's at exit). */
static pthread_key_t kept_key;
static pthread_once_t kept_once = PTHREAD_ONCE_INIT;

static void kept_drop(void *p)
{
    nlist_free(p);
}

static void kept_drop_main(void)
{
    nlist_free(pthread_getspecific(kept_key));
    pthread_setspecific(kept_key, NULL);
}

static void kept_init(void)
{
    if (pthread_key_create(&kept_key, kept_drop) == 0)
        atexit(kept_drop_main);
}

/* The thread's worker for t: the kept one when it lists the same target, else a new one. NULL: out of memory or -errno in *rc. */
static struct nlist *nlist_get(const struct rb_target *t, uint64_t timeout_ns, int *rc)
{
    char id[sizeof ((struct nlist *)0)->ident];
    ident(t, timeout_ns, id, sizeof id);
    struct nlist *l = pthread_getspecific(kept_key);
    if (l && strcmp(l->ident, id) == 0)
        return l;
    nlist_free(l);
    pthread_setspecific(kept_key, NULL);
    if (!(l = calloc(1, sizeof *l))) {
        *rc = -ENOMEM;
        return NULL;
    }
    l->o = (struct rb_load_opts){.op = RB_LOAD_GET, .target = t, .timeout_ns = timeout_ns, .inflight = 1,
                                 .engine = RB_ENGINE_NATIVE, .listing = true, .log_fd = -1};
    snprintf(l->ident, sizeof l->ident, "%s", id);
    l->t = t;
    if ((*rc = rb_worker_init(&l->w, &l->o, 0, 0))) {
        nlist_free(l);
        return NULL;
    }
    l->w.drv = &list_driver;
    rb_native_req(&l->w, 0)->errbody.limit = RB_LIST_BODY_LIMIT + 1;
    pthread_setspecific(kept_key, l);
    return l;
}

int rb_engine_list_pages(enum rb_engine_kind engine, const struct rb_target *t, const char *prefix,
                         uint64_t timeout_ns, struct rb_objset *out, rb_list_page_fn *on_page, void *ctx, char *err,
                         size_t errlen)
{
    if (engine == RB_ENGINE_CURL || t->ops->list || !t->ops->list_spec)
        return rb_target_list_pages(t, prefix, timeout_ns, out, on_page, ctx, err, errlen);
    pthread_once(&kept_once, kept_init);
    err[0] = '\0';
    int rc = 0;
    struct nlist *l = nlist_get(t, timeout_ns, &rc);
    if (l) {
        l->prefix = prefix;
        l->out = out;
        l->on_page = on_page;
        l->ctx = ctx;
        l->err = err;
        l->errlen = errlen;
        l->sent = l->ended = l->w.exhausted = false;
        l->rc = 0;
        rc = rb_native_run(&l->w, NULL, NULL);
        free(l->token);
        l->token = NULL;
        rb_list_spec_free(&l->spec);
        if (rc) {
            /* The loop itself failed: the worker is not kept. */
            nlist_free(l);
            pthread_setspecific(kept_key, NULL);
        }
    }
    if (rc && !err[0])
        snprintf(err, errlen, "%s: listing: %s (native engine)", rb_target_name(t), strerror(-rc));
    return rc ? rc : l->rc;
}

int rb_engine_list(enum rb_engine_kind engine, const struct rb_target *t, const char *prefix, uint64_t timeout_ns,
                   struct rb_objset *out, char *err, size_t errlen)
{
    return rb_engine_list_pages(engine, t, prefix, timeout_ns, out, NULL, NULL, err, errlen);
}
