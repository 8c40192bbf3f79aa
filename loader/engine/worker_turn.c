/*
 * What every request loop of a worker does each turn, whichever transport carries its requests (libcurl in
 * worker.c, the native engine's epoll and io_uring loops, the file loop) and whichever driver issues them: the next
 * object, refilling free slots (open or closed loop), the wait, the tick's handover of statistics, the stop.
 * Below the transports and the drivers: they call it, it calls them only through the worker's pointers.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "railbench/clock.h"
#include "railbench/log.h"
#include "worker_int.h"

bool rb_worker_next(struct rb_worker *w, const char **name, uint64_t *size)
{
    if (w->count_limit && w->issued >= w->count_limit)
        return false;
    if (w->bytes_limit && w->bytes_done >= w->bytes_limit)
        return false;
    return w->next(w, name, size);
}

void rb_worker_handover(struct rb_worker *w)
{
    if (w->drv && w->drv->fold)
        w->drv->fold(w);
    pthread_mutex_lock(&w->mu);
    rb_stats_merge(w->box, w->local);
    rb_hist_merge(w->unc_box, w->unc_local);
    w->box_inflight = w->nreq - w->nfree;
    w->box_answered = w->answered;
    w->box_refused = w->refused;
    pthread_mutex_unlock(&w->mu);
    rb_stats_reset(w->local);
    rb_hist_reset(w->unc_local);
}

void rb_worker_wake(struct rb_worker *w)
{
    uint64_t one = 1;
    if (write(w->evfd, &one, sizeof one) < 0 && errno != EAGAIN)
        rb_warn("eventfd write: %s", strerror(errno));
}

/*
 * Waits for socket events at most wait_ns. An open loop's sends are due at
 * exact moments and any lateness is charged to latency, so the wait has
 * nanosecond resolution (epoll_pwait2, Linux 5.11) rather than epoll_wait's
 * milliseconds, which would add half a millisecond to every corrected latency.
 */
int rb_worker_wait(struct rb_worker *w, struct epoll_event *evs, uint64_t wait_ns)
{
    static atomic_bool no_pwait2;
    if (!atomic_load_explicit(&no_pwait2, memory_order_relaxed)) {
        struct timespec ts = {.tv_sec = (time_t)(wait_ns / RB_NS_PER_S), .tv_nsec = (long)(wait_ns % RB_NS_PER_S)};
        int n = epoll_pwait2(w->epfd, evs, RB_EPOLL_BATCH, &ts, NULL);
        if (n >= 0 || errno != ENOSYS)
            return n;
        atomic_store(&no_pwait2, true);
    }
    /* Rounded up: a send at most 1 ms late is still timed from its intended moment. */
    return epoll_wait(w->epfd, evs, RB_EPOLL_BATCH, (int)((wait_ns + RB_NS_PER_MS - 1) / RB_NS_PER_MS));
}

int rb_worker_refill(struct rb_worker *w, int (*issue)(struct rb_worker *w, const char *name, uint64_t size,
                                                  uint64_t intended_ns))
{
    struct rb_open_loop *ol = &w->open;
    const bool open_loop = ol->period_ns != 0;
    uint64_t now = open_loop ? rb_clock_ns() : 0;
    for (unsigned round = 0; w->nfree && !w->exhausted && round < w->nreq; round++) {
        if (open_loop && now < ol->next_ns)
            break;
        const char *name;
        uint64_t size;
        if (!rb_worker_next(w, &name, &size)) {
            w->exhausted = true;
            break;
        }
        uint64_t intended = open_loop ? ol->next_ns : 0;
        if (open_loop)
            ol->next_ns += ol->period_ns;
        int rc = issue(w, name, size, intended);
        if (rc)
            return rc;
    }
    return 0;
}

int rb_worker_refill_split(struct rb_worker *w, bool *no_more, int (*pending)(struct rb_worker *w),
                           int (*object)(struct rb_worker *w, const char *name, uint64_t size),
                           bool (*under_way)(const struct rb_worker *w))
{
    if (w->exhausted)
        *no_more = true;
    while (w->nfree) {
        int rc = pending(w);
        if (rc < 0)
            return rc;
        if (rc == 0)
            continue; /* sent one */
        const char *name;
        uint64_t size;
        if (*no_more || !rb_worker_next(w, &name, &size)) {
            *no_more = true;
            break;
        }
        if ((rc = object(w, name, size)))
            return rc;
    }
    if (*no_more && !under_way(w))
        w->exhausted = true;
    return 0;
}

void rb_worker_tick(struct rb_worker *w)
{
    if (w->e && atomic_load_explicit(&w->e->seq, memory_order_acquire) != atomic_load(&w->acked)) {
        unsigned seq = atomic_load(&w->e->seq);
        rb_worker_handover(w);
        atomic_store_explicit(&w->acked, seq, memory_order_release);
    }
}

void rb_worker_eat_wake(struct rb_worker *w)
{
    uint64_t v;
    if (read(w->evfd, &v, sizeof v) < 0 && errno != EAGAIN)
        rb_warn("eventfd read: %s", strerror(errno));
}

/*
 * Told to stop: issue nothing more. An open loop's sends that were due but
 * found no free slot (every slot busy) are counted as abandoned now
 * (latency from their intended time); requests in flight get until the
 * returned moment, their --timeout from now, to finish and be counted
 * normally (no timeout: none; rb_worker_run abandons what is left).
 */
uint64_t rb_worker_stop_issuing(struct rb_worker *w)
{
    uint64_t now = rb_clock_ns();
    const char *name;
    uint64_t size;
    if (!w->exhausted)
        w->stop_issue_ns = now; /* the open loop was still sending: its send window lasts until now */
    /* Only sends held back for want of a slot: with one free, a send due now is at the boundary, not late. */
    struct rb_open_loop *ol = &w->open;
    while (ol->period_ns && !w->exhausted && !w->nfree && ol->next_ns <= now && rb_worker_next(w, &name, &size)) {
        rb_xfer_abandon(w, NULL, name, ol->next_ns, now);
        ol->next_ns += ol->period_ns;
    }
    w->exhausted = true;
    return now + (w->o->timeout_ns ? w->o->timeout_ns + 100 * RB_NS_PER_MS : 1);
}

bool rb_worker_drained(struct rb_worker *w, const atomic_bool *stop, const volatile int *stop2, uint64_t *drain_until)
{
    if (!*drain_until && ((stop && atomic_load_explicit(stop, memory_order_relaxed)) || (stop2 && *stop2)))
        *drain_until = rb_worker_stop_issuing(w);
    return *drain_until && rb_clock_ns() >= *drain_until;
}
