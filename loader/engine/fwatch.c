/* The file I/O watchdog: one thread per process that finds a file system call older than the run's --timeout. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fwatch_int.h"
#include "railbench/clock.h"
#include "railbench/harness.h"
#include "railbench/log.h"
#include "railbench/units.h"

#define SLOTS 1024u /* workers watched per process; more go unwatched */

/*
 * One worker's call. since_ns is published last (release) and cleared on
 * return; the watchdog reads since_ns, then op and path, then since_ns again:
 * a call that ended or changed meanwhile reads another since_ns and is
 * looked at again at the next turn.
 */
struct rb_fwatch {
    atomic_bool used, stuck;
    _Atomic uint64_t since_ns;   /* 0: inside no watched call */
    _Atomic(const char *) op;
    char path[PATH_MAX];
};

static struct rb_fwatch slots[SLOTS];
static _Atomic uint64_t deadline;
static atomic_bool fired;
static pthread_mutex_t start_mu = PTHREAD_MUTEX_INITIALIZER;
static bool started;

/* Copies s's call when it has run for age_ns or longer and is still the same call. */
static bool overdue(struct rb_fwatch *s, uint64_t now, uint64_t age_ns, const char **op, char *path, size_t len,
                    uint64_t *since)
{
    uint64_t t = atomic_load_explicit(&s->since_ns, memory_order_acquire);
    if (!t || now < t || now - t < age_ns)
        return false;
    *op = atomic_load(&s->op);
    for (size_t i = 0; i < len; i++) { /* byte by byte: the worker owns the buffer; a torn copy is rechecked below */
        path[i] = ((volatile const char *)s->path)[i];
        if (!path[i])
            break;
    }
    path[len - 1] = '\0';
    *since = t;
    return atomic_load_explicit(&s->since_ns, memory_order_acquire) == t;
}

static void *watch(void *arg)
{
    (void)arg;
    uint64_t d = atomic_load(&deadline);
    uint64_t period = d / 20 < 100 * RB_NS_PER_MS ? d / 20 : 100 * RB_NS_PER_MS;
    if (period < RB_NS_PER_MS)
        period = RB_NS_PER_MS;
    for (;;) {
        rb_clock_sleep_ns(period, NULL);
        uint64_t now = rb_clock_ns();
        for (unsigned i = 0; i < SLOTS; i++) {
            struct rb_fwatch *s = &slots[i];
            const char *op;
            char path[PATH_MAX];
            uint64_t since;
            if (!atomic_load(&s->used) || !overdue(s, now, d, &op, path, sizeof path, &since))
                continue;
            atomic_store(&s->stuck, true);
            if (atomic_exchange(&fired, true))
                continue; /* said once: the first call found is the one named */
            char lim[32];
            rb_format_duration_human(lim, sizeof lim, d);
            rb_error("%s %s has not returned after %.1f s (--timeout %s); the file system is not answering", op ? op : "call",
                     path, (double)(now - since) / 1e9, lim);
        }
    }
    return NULL;
}

int rb_fwatch_start(uint64_t deadline_ns)
{
    if (!deadline_ns)
        return 0;
    pthread_mutex_lock(&start_mu);
    int rc = 0;
    if (!started) {
        atomic_store(&deadline, deadline_ns);
        pthread_t th;
        pthread_attr_t at;
        pthread_attr_init(&at);
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        rc = -pthread_create(&th, &at, watch, NULL);
        pthread_attr_destroy(&at);
        started = rc == 0;
    }
    pthread_mutex_unlock(&start_mu);
    return rc;
}

struct rb_fwatch *rb_fwatch_claim(void)
{
    if (!atomic_load(&deadline))
        return NULL;
    for (unsigned i = 0; i < SLOTS; i++) {
        bool no = false;
        if (atomic_compare_exchange_strong(&slots[i].used, &no, true)) {
            atomic_store(&slots[i].since_ns, 0);
            return &slots[i];
        }
    }
    return NULL;
}

void rb_fwatch_release(struct rb_fwatch *s)
{
    if (!s || atomic_load(&s->stuck))
        return;
    atomic_store(&s->since_ns, 0);
    atomic_store(&s->used, false);
}

void rb_fwatch_enter_at(struct rb_fwatch *s, const char *op, const char *path, uint64_t since_ns)
{
    if (!s)
        return;
    atomic_store_explicit(&s->since_ns, 0, memory_order_release);
    atomic_store(&s->op, op);
    snprintf(s->path, sizeof s->path, "%s", path);
    atomic_store_explicit(&s->since_ns, since_ns ? since_ns : 1, memory_order_release);
}

void rb_fwatch_enter(struct rb_fwatch *s, const char *op, const char *path)
{
    if (s)
        rb_fwatch_enter_at(s, op, path, rb_clock_ns());
}

void rb_fwatch_leave(struct rb_fwatch *s)
{
    if (s)
        atomic_store_explicit(&s->since_ns, 0, memory_order_release);
}

long rb_fwatch_leave_rc(struct rb_fwatch *s, long rc)
{
    int e = errno;
    rb_fwatch_leave(s);
    errno = e;
    return rc;
}

bool rb_fwatch_fired(void)
{
    return atomic_load(&fired);
}

bool rb_fwatch_give_up(struct rb_fwatch *s, uint64_t grace_ns, const char *why)
{
    const char *op;
    char path[PATH_MAX];
    uint64_t since, now = rb_clock_ns();
    if (!s)
        return false;
    if (atomic_load(&s->stuck))
        return true;
    if (!overdue(s, now, grace_ns, &op, path, sizeof path, &since))
        return false;
    atomic_store(&s->stuck, true);
    atomic_store(&fired, true);
    rb_warn("%s: %s %s has not returned after %.1f s; left behind in the kernel", why, op ? op : "call", path,
            (double)(now - since) / 1e9);
    return true;
}

bool rb_fwatch_stuck(const struct rb_fwatch *s)
{
    return s && atomic_load(&s->stuck);
}

bool rb_fwatch_join(pthread_t th, struct rb_fwatch *s)
{
    if (!s)
        return pthread_join(th, NULL), true;
    for (;;) {
        uint64_t at = rb_clock_wall_ns() + 50 * RB_NS_PER_MS;
        struct timespec ts = {.tv_sec = (time_t)(at / RB_NS_PER_S), .tv_nsec = (long)(at % RB_NS_PER_S)};
        if (pthread_timedjoin_np(th, NULL, &ts) != ETIMEDOUT)
            return true;
        if (rb_fwatch_stuck(s) ||
            (rb_harness_signalled() && rb_fwatch_give_up(s, RB_NS_PER_S, "the run was interrupted"))) {
            pthread_detach(th);
            return false;
        }
    }
}

struct call {
    struct rb_fwatch *slot;
    const char *op, *path;
    int (*fn)(void *);
    void *arg;
    int rc;
};

static void *call_main(void *arg)
{
    struct call *c = arg;
    rb_fwatch_enter(c->slot, c->op, c->path);
    c->rc = c->fn(c->arg);
    rb_fwatch_leave(c->slot);
    return NULL;
}

int rb_fwatch_call(uint64_t deadline_ns, const char *op, const char *path, int (*fn)(void *), void *arg, int *rc)
{
    struct call *c = calloc(1, sizeof *c);
    pthread_t th;
    if (!c || !deadline_ns || rb_fwatch_start(deadline_ns) || !(c->slot = rb_fwatch_claim())) {
        free(c);
        *rc = fn(arg); /* no watchdog to be had: here, as before */
        return 0;
    }
    *c = (struct call){.slot = c->slot, .op = op, .path = path, .fn = fn, .arg = arg};
    if (pthread_create(&th, NULL, call_main, c) != 0) {
        rb_fwatch_release(c->slot);
        free(c);
        *rc = fn(arg);
        return 0;
    }
    if (!rb_fwatch_join(th, c->slot))
        return -ETIMEDOUT; /* c stays: the thread may still come back to it */
    *rc = c->rc;
    rb_fwatch_release(c->slot);
    free(c);
    return 0;
}
