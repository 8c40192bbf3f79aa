/*
 * A worker: its set-up and the driver it runs, and libcurl's request loop (curl multi handles on one epoll set);
 * what every loop does each turn (refill, wait, tick, stop) is worker_turn.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "mixed_int.h"
#include "multipart_int.h"
#include "ranged_int.h"
#include "payload_int.h"
#include "railbench/clock.h"
#include "railbench/log.h"
#include "railbench/mix.h"
#include "worker_int.h"

#define IDLE_POLL_MS 100

/* ---- where objects come from ---- */

static uint64_t object_size(const struct rb_load_opts *o, size_t i, const char *name)
{
    uint64_t size = rb_objset_size(o->objects, i);
    if (size)
        return size;
    if (o->max_size)
        return rb_payload_size(o->seed, name, o->min_size, o->max_size);
    return 0;
}

/* Engine workers: the picker chosen for the op and pattern; the name formatted into the worker's buffer. */
static bool next_picked(struct rb_worker *w, const char **name, uint64_t *size)
{
    size_t idx;
    if (!rb_picker_next(&w->pick, &idx))
        return false;
    *name = rb_objset_name(w->o->objects, idx, w->name_buf);
    *size = object_size(w->o, idx, *name);
    w->cur_idx = idx;
    return true;
}

/* The fetcher: the caller's objects, in order. */
static bool next_listed(struct rb_worker *w, const char **name, uint64_t *size)
{
    struct rb_fetch_list *f = &w->fetch;
    if (f->pos >= f->n)
        return false;
    if (f->len) { /* the item's range: rb_xfer_get_range (either engine) and the file loop read it */
        w->part_off = f->off[f->pos];
        w->part_len = f->len[f->pos];
    }
    uint64_t idx = f->idx[f->pos++];
    *name = rb_objset_name(f->set, idx, w->name_buf);
    /* A verified object is the seeded payload of its set's size: fewer bytes are a short read, on every protocol.
       A PUT sends the set's size. */
    *size = w->o->verify || w->o->op == RB_LOAD_PUT ? rb_objset_size(f->set, idx) : 0;
    return true;
}

/* ---- the loop ---- */

/* Drains finished transfers; returns how many completed. */
static unsigned drain(struct rb_worker *w)
{
    unsigned n = 0;
    for (unsigned i = 0; i < w->nshards; i++) {
        int left;
        CURLMsg *m;
        while ((m = curl_multi_info_read(w->shards[i].multi, &left))) {
            if (m->msg != CURLMSG_DONE)
                continue;
            struct rb_req *r = NULL;
            curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&r);
            CURLcode rc = m->data.result;
            w->drv->complete(w, r, rc);
            n++;
        }
    }
    return n;
}

/*
 * curl's socket callback: keeps the epoll set in step with the sockets curl
 * wants watched, so a wait costs O(ready sockets), not O(connections), and

 * thousands of requests in flight stay cheap (libcurl's multi_socket API).
 */
static int on_socket(CURL *easy, curl_socket_t s, int what, void *arg, void *socketp)
{
    (void)easy;
    struct rb_shard *sh = arg;
    struct rb_worker *w = sh->w;
    if (what == CURL_POLL_REMOVE) {
        epoll_ctl(w->epfd, EPOLL_CTL_DEL, s, NULL); /* may already be gone with a closed socket */
        return 0;
    }
    struct epoll_event ev = {.events = ((what & CURL_POLL_IN) ? EPOLLIN : 0u) | ((what & CURL_POLL_OUT) ? EPOLLOUT : 0u),
                             .data.u64 = (uint64_t)sh->idx << 32 | (uint32_t)s};
    int op = socketp ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
    if (epoll_ctl(w->epfd, op, s, &ev) != 0) {
        /* A descriptor number reused after a close, or dropped from the set when it closed. */
        op = errno == EEXIST ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
        if (epoll_ctl(w->epfd, op, s, &ev) != 0) {
            rb_error("epoll_ctl: %s", strerror(errno));
            return -1;
        }
    }
    if (!socketp)
        curl_multi_assign(sh->multi, s, sh);
    return 0;
}

static int on_timer(CURLM *multi, long timeout_ms, void *arg)
{
    (void)multi;
    struct rb_shard *sh = arg;
    sh->timer_ns = timeout_ms < 0 ? UINT64_MAX : rb_clock_ns() + (uint64_t)timeout_ms * RB_NS_PER_MS;
    return 0;
}

static int socket_action(struct rb_shard *sh, curl_socket_t s, int mask)
{
    int running = 0;
    CURLMcode mc = curl_multi_socket_action(sh->multi, s, mask, &running);
    if (mc != CURLM_OK) {
        rb_error("curl_multi_socket_action: %s", curl_multi_strerror(mc));
        return -EIO;
    }
    return 0;
}

int rb_worker_run(struct rb_worker *w, const atomic_bool *stop, const volatile int *stop2)
{
    return w->tp->run(w, stop, stop2);
}

/* libcurl's request loop; stop and stop2 may be NULL. Returns 0 or -errno. */
static int curls_run(struct rb_worker *w, const atomic_bool *stop, const volatile int *stop2)
{
    const bool open_loop = w->open.period_ns != 0;
    struct epoll_event evs[RB_EPOLL_BATCH];
    int rc = 0;
    uint64_t drain_until = 0;
    for (;;) {
        if (rb_worker_drained(w, stop, stop2, &drain_until))
            break;
        if ((rc = w->drv->refill(w)))
            return rc;
        if (w->exhausted && w->nfree == w->nreq)
            break;
        /* New handles ask for an immediate timeout action: that is what starts them. */
        uint64_t now = rb_clock_ns();
        for (unsigned i = 0; i < w->nshards; i++)
            if (w->shards[i].timer_ns <= now) {
                w->shards[i].timer_ns = UINT64_MAX;
                if ((rc = socket_action(&w->shards[i], CURL_SOCKET_TIMEOUT, 0)))
                    return rc;
            }
        unsigned done = drain(w);
        rb_worker_tick(w);
        /*
         * The last transfers just finished: leave now rather than after an
         * idle poll, which a fetcher's caller would pay on every batch; but
         * first let the driver send what those completions made due (a
         * multipart upload's next part or its completion), or it would be
         * aborted as left open.
         */
        if (w->exhausted && w->nfree == w->nreq) {
            if ((rc = w->drv->refill(w)))
                return rc;
            if (w->nfree == w->nreq)
                break;
        }
        if (done && w->nfree && !w->exhausted && !open_loop)
            continue; /* slots freed: refill before waiting */
        now = rb_clock_ns();
        uint64_t until = now + IDLE_POLL_MS * RB_NS_PER_MS;
        for (unsigned i = 0; i < w->nshards; i++)
            if (w->shards[i].timer_ns < until)
                until = w->shards[i].timer_ns;
        if (open_loop && w->nfree && !w->exhausted && w->open.next_ns < until)
            until = w->open.next_ns;
        int n = rb_worker_wait(w, evs, until > now ? until - now : 0);
        if (n < 0 && errno != EINTR) {
            rb_error("epoll_wait: %s", strerror(errno));
            return -errno;
        }
        for (int i = 0; i < n; i++) {
            if (evs[i].data.u64 == RB_EV_WAKE) {
                rb_worker_eat_wake(w);
                continue;
            }
            int mask = ((evs[i].events & EPOLLIN) ? CURL_CSELECT_IN : 0) |
                       ((evs[i].events & EPOLLOUT) ? CURL_CSELECT_OUT : 0) |
                       ((evs[i].events & (EPOLLERR | EPOLLHUP)) ? CURL_CSELECT_ERR : 0);
            unsigned sh = (unsigned)(evs[i].data.u64 >> 32);
            if (sh < w->nshards && (rc = socket_action(&w->shards[sh], (curl_socket_t)(uint32_t)evs[i].data.u64, mask)))
                return rc;
        }
    }
    /* Requests still in flight when the drain ran out are counted as abandoned, never dropped. */
    uint64_t now = rb_clock_ns();
    if (w->drv->finish)
        w->drv->finish(w, now); /* multipart: aborts the uploads still open; mixed: abandons under each op */
    for (unsigned i = 0; i < w->nreq; i++)
        if (w->reqs[i].busy) {
            rb_written_unknown(w, w->reqs[i].name); /* a put in flight may have been stored */
            rb_xfer_abandon(w, &w->reqs[i], w->reqs[i].name, 0, now);
        }
    return 0;
}

void *rb_worker_main(void *arg)
{
    struct rb_worker *w = arg;
    /* The default 50 us timer slack would be charged to every open-loop request. */
    if (w->open.period_ns)
        prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
    w->failed = rb_worker_run(w, &w->e->stop, NULL);
    rb_worker_flush_log(w);
    rb_worker_handover(w);
    w->done_ns = rb_clock_ns(); /* published by the store of finished below */
    atomic_store(&w->finished, true);
    atomic_fetch_add(&w->e->nfinished, 1);
    return NULL;
}

/* The op row's loop: the picker's objects through rb_xfer_issue. */
static int refill_picked(struct rb_worker *w)
{
    return rb_worker_refill(w, rb_xfer_issue);
}

/* One request per object through the op row, accounted by rb_xfer_complete. */
static const struct rb_worker_driver plain_driver = {
    .name = "plain",
    .refill = refill_picked,
    .complete = rb_xfer_complete,
};

/* Who issues and accounts w's requests (see struct rb_worker_driver): chosen once, never asked per request. */
static const struct rb_worker_driver *driver_for(const struct rb_load_opts *o)
{
    if (o->mix)
        return &rb_mix_driver;
    if (o->part_size && o->op == RB_LOAD_GET)
        return &rb_rg_driver;
    if (o->part_size && o->op == RB_LOAD_PUT)
        return &rb_mp_driver; /* notes what it wrote itself (rb_worker_wrote) */
    return o->track_written ? &rb_written_driver : &plain_driver;
}

static int choose_driver(struct rb_worker *w)
{
    const struct rb_load_opts *o = w->o;
    w->drv = driver_for(o);
    int rc;
    if (o->track_written && !o->mix && (rc = rb_written_new(w))) /* load mixed keeps its own (mixed.c) */
        return rc;
    return w->drv->init ? w->drv->init(w) : 0;
}

/* The picker's xorshift state (random ranges, mixed draws): seeded per seed, rank and thread, never 0. */
static void seed_rng(struct rb_worker *w)
{
    w->pick.rng = (w->o->seed + 1) * RB_MIX_GOLDEN ^ ((uint64_t)w->o->rank << 20) ^ w->id;
    if (!w->pick.rng)
        w->pick.rng = 1;
}

/* libcurl's multi handles (RB_SHARD_SLOTS slots each, on w's epoll set) and a handle per slot. Returns 0 or -errno. */
static int curls_init(struct rb_worker *w, size_t ep0)
{
    w->nshards = (w->nreq + RB_SHARD_SLOTS - 1) / RB_SHARD_SLOTS;
    if (!(w->shards = calloc(w->nshards, sizeof *w->shards)))
        return -ENOMEM;
    for (unsigned i = 0; i < w->nshards; i++) {
        struct rb_shard *sh = &w->shards[i];
        sh->w = w;
        sh->idx = i;
        sh->timer_ns = UINT64_MAX;
        if (!(sh->multi = curl_multi_init()))
            return -ENOMEM;
        curl_multi_setopt(sh->multi, CURLMOPT_MAXCONNECTS, (long)RB_SHARD_SLOTS);
        curl_multi_setopt(sh->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
        curl_multi_setopt(sh->multi, CURLMOPT_SOCKETDATA, sh);
        curl_multi_setopt(sh->multi, CURLMOPT_TIMERFUNCTION, on_timer);
        curl_multi_setopt(sh->multi, CURLMOPT_TIMERDATA, sh);
    }
    size_t neps = rb_target_endpoint_count(w->o->target);
    for (unsigned i = 0; i < w->nreq; i++) {
        w->reqs[i].sh = &w->shards[i / RB_SHARD_SLOTS];
        int rc = rb_xfer_slot_init(w, &w->reqs[i], (ep0 + i) % neps);
        if (rc)
            return rc;
        w->free_slots[w->nfree++] = w->nreq - 1 - i;
    }
    return 0;
}

/* Takes the requests still in flight out of their multi handles and frees the slots' handles and the multis. */
static void curls_free(struct rb_worker *w)
{
    for (unsigned i = 0; w->reqs && i < w->nreq; i++) {
        if (w->reqs[i].busy && w->reqs[i].sh && w->reqs[i].sh->multi)
            curl_multi_remove_handle(w->reqs[i].sh->multi, w->reqs[i].easy);
        rb_xfer_slot_free(&w->reqs[i]);
    }
    for (unsigned i = 0; w->shards && i < w->nshards; i++)
        if (w->shards[i].multi)
            curl_multi_cleanup(w->shards[i].multi);
    free(w->shards);
    w->shards = NULL;
    w->nshards = 0;
}

static bool curls_fit(const struct rb_load_opts *o, bool fetcher)
{
    (void)fetcher;
    return !rb_target_can(o->target, RB_TCAP_FILES) && rb_engine_kind(o) == RB_ENGINE_CURL;
}

RB_TRANSPORT(curl) = {.name = "curl", .fits = curls_fit, .init = curls_init, .run = curls_run, .free = curls_free};

int rb_worker_init(struct rb_worker *w, const struct rb_load_opts *o, unsigned id, size_t ep0)
{
    w->o = o;
    w->op = rb_xfer_op_for(o->op);
    w->tp = rb_transport_for(o, !w->e);
    if (!w->op || !w->tp)
        return w->op ? -EOPNOTSUPP : -EINVAL;
    w->next = o->objects ? next_picked : next_listed;
    w->id = id;
    w->nreq = o->inflight;
    w->epfd = epoll_create1(EPOLL_CLOEXEC);
    w->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    w->reqs = calloc(w->nreq, sizeof *w->reqs);
    w->free_slots = calloc(w->nreq, sizeof *w->free_slots);
    w->local = rb_stats_new();
    w->unc_local = rb_hist_new();
    w->box = rb_stats_new();
    w->unc_box = rb_hist_new();
    if (!w->reqs || !w->free_slots || !w->local || !w->unc_local || !w->box || !w->unc_box)
        return -ENOMEM;
    if (w->epfd < 0 || w->evfd < 0)
        return -errno;
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = RB_EV_WAKE};
    if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->evfd, &ev) != 0)
        return -errno;
    pthread_mutex_init(&w->mu, NULL);
    if (rb_rph_worker_init(w))
        return -ENOMEM;
    if (o->tar_samples && o->op == RB_LOAD_GET && rb_tar_new(w))
        return -ENOMEM;
    for (unsigned i = 0; i < w->nreq; i++) {
        w->reqs[i].w = w;
        w->reqs[i].slot = i;
    }
    int rc = w->tp->init(w, ep0);
    if (!rc && w->tp->drives && o->track_written)
        rc = rb_written_new(w); /* a transport that drives itself issues and accounts: no driver of ours */
    else if (!rc && !w->tp->drives)
        rc = choose_driver(w);
    if (!rc && o->log_fd >= 0 && !(w->log.buf = malloc(RB_LOG_BUF_BYTES)))
        rc = -ENOMEM;
    seed_rng(w);
    return rc;
}

void rb_worker_free(struct rb_worker *w)
{
    if (w->tp)
        w->tp->free(w);
    if (w->drv && w->drv->free)
        w->drv->free(w);
    rb_written_free(w);
    rb_rph_worker_free(w);
    rb_tar_free(w);
    if (w->epfd > 0)
        close(w->epfd);
    if (w->evfd > 0)
        close(w->evfd);
    if (w->box)
        pthread_mutex_destroy(&w->mu);
    free(w->reqs);
    free(w->free_slots);
    rb_picker_free(&w->pick);
    free(w->seg);
    free(w->log.buf);
    rb_stats_free(w->local);
    rb_stats_free(w->box);
    rb_hist_free(w->unc_local);
    rb_hist_free(w->unc_box);
}
