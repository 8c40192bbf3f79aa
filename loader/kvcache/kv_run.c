/* load kvcache on one rank: threads playing users turn by turn; entries as NumPy files (fsync'd, dropped, read). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../engine/fwatch_int.h"
#include "../engine/payload_int.h"
#include "kvcache_int.h"
#include "railbench/beneath.h"
#include "railbench/clock.h"
#include "railbench/mix.h"

#define POLL_NS (20 * UINT64_C(1000000)) /* a waiting thread looks at the stop flag this often */

const char *const rb_kv_count_names[RB_KV_NCOUNTS] = {
    "turns", "prefill_tokens", "generated_tokens", "conversations", "writes", "bytes_written", "tokens_written",
    "reads", "bytes_read", "tokens_read", "cpu_writes", "cpu_reads", "cpu_bytes_read", "cpu_hits", "cpu_misses",
    "storage_hits", "storage_misses", "demotions", "evictions", "deletes", "verify_failures", "requests",
    "blocks_read", "blocks_written", "block_misses", "block_repeats",
};
const char *const rb_kv_timeline_names[RB_KV_NTIMELINE] = {"storage_write", "storage_read", "cpu_write",
                                                           "cpu_read"};
const char *const rb_kv_hist_names[RB_KV_NHIST] = {"device_write", "device_read", "host_write", "host_read",
                                                   "request"};

/* The entry's file name beneath the target: <rank dir>/u<user>-c<conversation>-t<turn>.npy. */
void rb_kv_entry_name(const struct rb_kv_worker *w, const struct rb_kv_entry *e, char *out, size_t len)
{
    if (e->is_block) {
        rb_kv_block_name(w->rank, e->block, out, len);
        return;
    }
    snprintf(out, len, "%s/u%" PRIu32 "-c%" PRIu32 "-t%" PRIu32 ".npy", w->rank->dir, e->user, e->conv, e->turn);
}

int rb_kv_fail(struct rb_kv_worker *w, int err, const char *what, const char *name)
{
    if (!w->err) {
        w->err = err;
        snprintf(w->errmsg, sizeof w->errmsg, "%s %s: %s%s", what, name, strerror(err),
                 err == ENOSPC ? " (the file system is full)" : "");
    }
    return -err;
}

/* One operation into the interval figures: the harness's (storage only) and the timeline's (tl: its series). */
static void note_op(struct rb_kv_worker *w, enum rb_kv_timeline tl, uint64_t bytes, uint64_t ns)
{
    pthread_mutex_lock(&w->mu);
    if (tl == RB_KV_TL_STORAGE_WRITE || tl == RB_KV_TL_STORAGE_READ) {
        w->since_ops++;
        w->since_bytes += bytes;
        rb_hist_record(w->since_lat, ns);
    }
    rb_hist_record(w->since_op[tl], ns);
    pthread_mutex_unlock(&w->mu);
}

void rb_kv_account(struct rb_kv_worker *w, bool write, struct rb_kv_entry *e, uint64_t dev_ns, uint64_t host_ns)
{
    w->count[write ? RB_KV_WRITES : RB_KV_READS]++;
    w->count[write ? RB_KV_BYTES_WRITTEN : RB_KV_BYTES_READ] += e->bytes;
    w->count[write ? RB_KV_TOKENS_WRITTEN : RB_KV_TOKENS_READ] += e->tokens;
    rb_hist_record(w->hist[write ? RB_KV_DEV_WRITE : RB_KV_DEV_READ], dev_ns);
    rb_hist_record(w->hist[write ? RB_KV_HOST_WRITE : RB_KV_HOST_READ], host_ns);
    note_op(w, write ? RB_KV_TL_STORAGE_WRITE : RB_KV_TL_STORAGE_READ, e->bytes, dev_ns + host_ns);
}

/* The bytes of e at offset off (len): from the CPU tier's copy (src), else the seeded payload after the header. */
static void entry_bytes(const struct rb_kv_worker *w, const struct rb_kv_entry *e, uint64_t key,
                        const unsigned char *src, uint64_t off, unsigned char *buf, size_t len)
{
    if (src) {
        memcpy(buf, src + off, len);
        return;
    }
    size_t h = 0;
    if (off < RB_KV_NPY_HEADER) {
        unsigned char hdr[RB_KV_NPY_HEADER];
        rb_kv_npy_header(&w->rank->a->model, (uint32_t)w->rank->a->tp, e->tokens, hdr);
        h = RB_KV_NPY_HEADER - off < len ? RB_KV_NPY_HEADER - off : len;
        memcpy(buf, hdr + off, h);
    }
    if (h < len)
        rb_payload_plain_fill(key, off + h - RB_KV_NPY_HEADER, buf + h, len - h);
}

void rb_kv_block_name(const struct rb_kv_rank *r, uint64_t block, char *out, size_t len)
{
    snprintf(out, len, "%s/b%016" PRIx64 ".npy", r->block_dir, block);
}

/*
 * Writes e as a new file (its bytes from src, or made now), fsync'd: device time = open to close, host = the bytes.
 * A hash block, which other ranks may read, is written under name.part and renamed into place once whole.
 */
static int file_write(struct rb_kv_worker *w, struct rb_kv_entry *e, const unsigned char *src)
{
    const struct rb_kv_args *a = w->rank->a;
    char final[320], name[330];
    rb_kv_entry_name(w, e, final, sizeof final);
    snprintf(name, sizeof name, "%s%s", final, e->is_block ? ".part" : "");
    uint64_t key = rb_payload_key(a->seed, final), host = 0, dev = 0, t = rb_clock_ns();
    int fd = (int)RB_FWATCHED(w->fw, "open", name,
                              rb_beneath_open(w->rank->root, name, O_WRONLY | O_CREAT | O_EXCL, 0644));
    if (fd < 0)
        return rb_kv_fail(w, -fd, "open", name);
    dev += rb_clock_ns() - t;
    for (uint64_t off = 0; off < e->bytes;) {
        size_t len = e->bytes - off < a->block_bytes ? (size_t)(e->bytes - off) : (size_t)a->block_bytes;
        t = rb_clock_ns();
        entry_bytes(w, e, key, src, off, w->chunk, len);
        uint64_t t2 = rb_clock_ns();
        host += t2 - t;
        ssize_t n = RB_FWATCHED(w->fw, "write", name, write(fd, w->chunk, len));
        dev += rb_clock_ns() - t2;
        if (n <= 0) {
            int err = n < 0 ? errno : EIO;
            close(fd);
            rb_beneath_unlink(w->rank->root, name);
            return rb_kv_fail(w, err, "write", name);
        }
        off += (uint64_t)n;
    }
    t = rb_clock_ns();
    int rc = (int)RB_FWATCHED(w->fw, "fsync", name, fsync(fd));
    int err = rc ? errno : 0;
    if (close(fd) && !err)
        err = errno;
    dev += rb_clock_ns() - t;
    if (!err && e->is_block) {
        int rn = (int)RB_FWATCHED(w->fw, "rename", name,
                                  rb_beneath_rename(w->rank->root, name, final, RENAME_NOREPLACE));
        if (rn) {
            rb_beneath_unlink(w->rank->root, name);
            return rb_kv_fail(w, -rn, "rename", name);
        }
    }
    if (err) {
        rb_beneath_unlink(w->rank->root, name);
        return rb_kv_fail(w, err, "fsync", name);
    }
    e->where = RB_KV_IN_STORAGE;
    rb_kv_account(w, true, e, dev, host);
    return 0;
}

/* Compares buf (bytes of e at off) with what was written; a difference is counted and ends the thread. */
static int check(struct rb_kv_worker *w, const struct rb_kv_entry *e, uint64_t key, uint64_t off,
                 const unsigned char *buf, size_t len, const char *name)
{
    unsigned char *want = malloc(len);
    if (!want)
        return rb_kv_fail(w, ENOMEM, "verify", name);
    entry_bytes(w, e, key, NULL, off, want, len);
    int bad = memcmp(want, buf, len) != 0;
    free(want);
    if (!bad)
        return 0;
    w->count[RB_KV_VERIFY_FAILURES]++;
    return rb_kv_fail(w, EIO, "verify (bytes read differ from the seeded payload)", name);
}

int rb_kv_write(struct rb_kv_worker *w, struct rb_kv_entry *e)
{
    return w->rank->store->write(w, e, NULL);
}

/* Reads e's file whole after dropping its pages: device time = open to close, host = --verify's comparison. */
static int file_read(struct rb_kv_worker *w, struct rb_kv_entry *e)
{
    const struct rb_kv_args *a = w->rank->a;
    char name[320];
    rb_kv_entry_name(w, e, name, sizeof name);
    uint64_t key = rb_payload_key(a->seed, name), host = 0, dev = 0, t = rb_clock_ns(), got = 0;
    int fd = (int)RB_FWATCHED(w->fw, "open", name, rb_beneath_open(w->rank->root, name, O_RDONLY, 0));
    if (fd == -ENOENT && e->is_block)
        return fd; /* not written yet: a miss */
    if (fd < 0)
        return rb_kv_fail(w, -fd, "open", name);
    RB_FWATCHED(w->fw, "fadvise", name, posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED));
    dev += rb_clock_ns() - t;
    int err = 0;
    while (got < e->bytes) {
        size_t len = e->bytes - got < a->block_bytes ? (size_t)(e->bytes - got) : (size_t)a->block_bytes;
        t = rb_clock_ns();
        ssize_t n = RB_FWATCHED(w->fw, "read", name, read(fd, w->chunk, len));
        uint64_t t2 = rb_clock_ns();
        dev += t2 - t;
        if (n <= 0) {
            err = n < 0 ? errno : EIO; /* short: the file is not the entry written */
            break;
        }
        if (a->verify && check(w, e, key, got, w->chunk, (size_t)n, name)) {
            close(fd);
            return w->err ? -w->err : -EIO;
        }
        host += rb_clock_ns() - t2;
        got += (uint64_t)n;
    }
    t = rb_clock_ns();
    close(fd);
    dev += rb_clock_ns() - t;
    if (err)
        return rb_kv_fail(w, err, "read", name);
    rb_kv_account(w, false, e, dev, host);
    return 0;
}

/* Removes the file name (an entry or a hash block this run wrote). 0 or -errno (w->err). */
static int file_remove(struct rb_kv_worker *w, const char *name)
{
    int rc = (int)RB_FWATCHED(w->fw, "unlink", name, rb_beneath_unlink(w->rank->root, name));
    return rc ? rb_kv_fail(w, -rc, "unlink", name) : 0;
}

static const struct rb_kv_store file_store = {file_write, file_read, file_remove};

int rb_kv_read(struct rb_kv_worker *w, struct rb_kv_entry *e)
{
    return w->rank->store->read(w, e);
}

/* Removes e from wherever it is (its file unlinked, its memory freed); counts a deleted file. */
int rb_kv_drop(struct rb_kv_worker *w, struct rb_kv_entry *e)
{
    int rc = 0;
    if (e->where == RB_KV_IN_CPU) {
        rb_kv_tier_unlink(&w->cpu, e);
        free(e->mem);
        e->mem = NULL;
    } else if (e->where == RB_KV_IN_STORAGE) {
        char name[320];
        rb_kv_entry_name(w, e, name, sizeof name);
        rb_kv_tier_unlink(&w->storage, e);
        if (!(rc = w->rank->store->remove(w, name)))
            w->count[RB_KV_DELETES]++;
    }
    e->where = RB_KV_NOWHERE;
    return rc;
}

/* Room in storage for bytes more: its least recently used entries evicted (deleted) until they fit. */
static int storage_room(struct rb_kv_worker *w, uint64_t bytes)
{
    if (!w->storage.capacity_bytes)
        return 0;
    struct rb_kv_entry *v;
    while ((v = rb_kv_tier_victim(&w->storage, bytes, 1.0))) {
        int rc = rb_kv_drop(w, v);
        if (rc)
            return rc;
        w->count[RB_KV_EVICTIONS]++;
    }
    return 0;
}

/* Stores e in storage (its bytes from src or made now), making room first. */
static int to_storage(struct rb_kv_worker *w, struct rb_kv_entry *e, const unsigned char *src)
{
    int rc = storage_room(w, e->bytes);
    if (!rc && !(rc = w->rank->store->write(w, e, src)))
        rb_kv_tier_push(&w->storage, e);
    return rc;
}

/* The CPU tier's fill target (MLPerf Storage: a tier is filled to 0.8 of its size before it demotes). */
#define CPU_FILL 0.8

/* Writes a new entry: into the CPU tier when it is on and the entry fits (demoting its LRU entries), else storage. */
int rb_kv_put(struct rb_kv_worker *w, struct rb_kv_entry *e)
{
    if (!w->cpu.capacity_bytes || (double)e->bytes > CPU_FILL * (double)w->cpu.capacity_bytes)
        return to_storage(w, e, NULL);
    struct rb_kv_entry *v;
    while ((v = rb_kv_tier_victim(&w->cpu, e->bytes, CPU_FILL))) {
        rb_kv_tier_unlink(&w->cpu, v);
        unsigned char *mem = v->mem;
        v->mem = NULL;
        int rc = to_storage(w, v, mem);
        free(mem);
        if (rc)
            return rc;
        w->count[RB_KV_DEMOTIONS]++;
    }
    uint64_t t = rb_clock_ns();
    if (!(e->mem = malloc(e->bytes)))
        return rb_kv_fail(w, ENOMEM, "CPU tier entry", "");
    char name[320];
    rb_kv_entry_name(w, e, name, sizeof name);
    entry_bytes(w, e, rb_payload_key(w->rank->a->seed, name), NULL, 0, e->mem, e->bytes);
    note_op(w, RB_KV_TL_CPU_WRITE, e->bytes, rb_clock_ns() - t);
    e->where = RB_KV_IN_CPU;
    rb_kv_tier_push(&w->cpu, e);
    w->count[RB_KV_CPU_WRITES]++;
    return 0;
}

/* Reads an entry from the highest tier holding it; hits and misses counted per tier. */
int rb_kv_get(struct rb_kv_worker *w, struct rb_kv_entry *e)
{
    if (e->where == RB_KV_IN_CPU) {
        w->count[RB_KV_CPU_HITS]++;
        w->count[RB_KV_CPU_READS]++;
        w->count[RB_KV_CPU_BYTES_READ] += e->bytes;
        uint64_t t = rb_clock_ns();
        for (uint64_t off = 0; off < e->bytes; off += w->rank->a->block_bytes) {
            uint64_t len = e->bytes - off < w->rank->a->block_bytes ? e->bytes - off : w->rank->a->block_bytes;
            memcpy(w->chunk, e->mem + off, (size_t)len); /* to the accelerator's buffer */
        }
        note_op(w, RB_KV_TL_CPU_READ, e->bytes, rb_clock_ns() - t);
        rb_kv_tier_touch(&w->cpu, e);
        return 0;
    }
    if (w->cpu.capacity_bytes)
        w->count[RB_KV_CPU_MISSES]++;
    if (e->where != RB_KV_IN_STORAGE) {
        w->count[RB_KV_STORAGE_MISSES]++; /* evicted: the serving engine would compute it again */
        return 0;
    }
    w->count[RB_KV_STORAGE_HITS]++;
    rb_kv_tier_touch(&w->storage, e);
    return rb_kv_read(w, e);
}

/* One turn of user u: reload earlier turns' entries, prefill (write), decode (reads); the conversation may end. */
static int turn(struct rb_kv_worker *w, struct rb_kv_user *u)
{
    const struct rb_kv_args *a = w->rank->a;
    struct rb_kv_turn t;
    rb_kv_draw_turn(u->kind, a->scale_den, u->turns + 1, &u->rng, &t);
    int rc = 0;
    for (uint32_t i = 0; i < u->turns && !rc && !atomic_load(&w->rank->stop); i++)
        rc = rb_kv_get(w, &u->entry[i]);
    struct rb_kv_entry *e = &u->entry[u->turns];
    *e = (struct rb_kv_entry){.tokens = t.tokens, .bytes = RB_KV_NPY_HEADER + t.tokens * a->bytes_per_token,
                              .user = u->id, .conv = u->conv, .turn = u->turns + 1};
    if (rc || atomic_load(&w->rank->stop) || (rc = rb_kv_put(w, e)))
        return rc;
    u->turns++;
    w->count[RB_KV_TURNS]++;
    w->count[RB_KV_PREFILL_TOKENS] += t.tokens;
    for (uint32_t i = 0; i < rb_kv_decode_reads(t.generated) && !rc && !atomic_load(&w->rank->stop); i++)
        rc = rb_kv_get(w, e);
    if (rc || atomic_load(&w->rank->stop))
        return rc;
    w->count[RB_KV_GENERATED_TOKENS] += t.generated;
    if (t.last) {
        for (uint32_t i = 0; i < u->turns && !rc; i++)
            rc = rb_kv_drop(w, &u->entry[i]);
        u->turns = 0;
        u->conv++;
        w->count[RB_KV_CONVERSATIONS]++;
    }
    u->ready_ns = rb_clock_ns() + t.think_ns;
    return rc;
}

static void *worker_main(void *arg)
{
    struct rb_kv_worker *w = arg;
    w->fw = rb_fwatch_claim();
    while (!atomic_load(&w->rank->stop) && !rb_fwatch_fired()) {
        struct rb_kv_user *next = &w->users[0];
        for (uint32_t i = 1; i < w->nusers; i++)
            if (w->users[i].ready_ns < next->ready_ns)
                next = &w->users[i];
        uint64_t now = rb_clock_ns();
        if (next->ready_ns > now) {
            uint64_t wait = next->ready_ns - now;
            rb_clock_sleep_ns(wait < POLL_NS ? wait : POLL_NS, NULL);
            continue;
        }
        if (turn(w, next))
            break;
    }
    return NULL;
}

int rb_kv_rank_init(struct rb_kv_rank *r, const struct rb_kv_args *a, int rank)
{
    r->a = a;
    r->rank = rank;
    r->t0_ns = r->t1_ns = 0;
    r->store = r->objects ? &rb_kv_obj_store : &file_store;
    r->nworkers = (unsigned)(a->inflight < a->users && !r->trace ? a->inflight : a->users);
    if (r->trace)
        r->nworkers = (unsigned)a->inflight;
    if (!(r->w = calloc(r->nworkers, sizeof *r->w)))
        return -ENOMEM;
    uint64_t now = rb_clock_ns();
    for (unsigned i = 0; i < r->nworkers; i++) {
        struct rb_kv_worker *w = &r->w[i];
        w->rank = r;
        w->index = i;
        pthread_mutex_init(&w->mu, NULL);
        w->nusers = r->trace ? 1 : (uint32_t)((a->users - i + r->nworkers - 1) / r->nworkers); /* replay: none used */
        w->cpu.capacity_bytes = a->cpu_tier_bytes / r->nworkers;
        w->storage.capacity_bytes = a->storage_tier_bytes / r->nworkers;
        w->users = calloc(w->nusers, sizeof *w->users);
        w->chunk = malloc(a->block_bytes);
        w->since_lat = rb_hist_new();
        for (int k = 0; k < RB_KV_NTIMELINE; k++)
            if (!(w->since_op[k] = rb_hist_new()))
                return -ENOMEM;
        for (int k = 0; k < RB_KV_NHIST; k++)
            if (!(w->hist[k] = rb_hist_new()))
                return -ENOMEM;
        if (!w->users || !w->chunk || !w->since_lat)
            return -ENOMEM;
        for (uint32_t j = 0; j < w->nusers; j++) {
            struct rb_kv_user *u = &w->users[j];
            u->id = i + j * r->nworkers;
            /* MLPerf Storage seeds each rank with seed + rank; each user draws from its own stream of it. */
            u->rng = rb_mix64((a->seed + (uint64_t)rank) * RB_MIX_GOLDEN ^ rb_mix64(u->id + 1));
            u->kind = (enum rb_kv_user_kind)(rb_mix64_next(&u->rng) % RB_KV_USER_KINDS);
            const struct rb_kv_user_profile *p = &rb_kv_profiles[u->kind];
            u->ready_ns = now + (rb_mix64_next(&u->rng) % (p->think_max_ms + 1)) * UINT64_C(1000000);
        }
    }
    return 0;
}

int rb_kv_rank_start(struct rb_kv_rank *r)
{
    atomic_store(&r->stop, false);
    r->t0_ns = rb_clock_ns();
    for (unsigned i = 0; i < r->nworkers; i++) {
        struct rb_kv_worker *w = &r->w[i];
        int rc = pthread_create(&w->th, NULL, r->trace ? rb_kv_replay_main : worker_main, w);
        if (rc) {
            rb_kv_rank_stop(r);
            return -rc;
        }
        w->started = true;
    }
    return 0;
}

void rb_kv_rank_stop(struct rb_kv_rank *r)
{
    atomic_store(&r->stop, true);
    for (unsigned i = 0; r->w && i < r->nworkers; i++)
        if (r->w[i].started) {
            if (rb_fwatch_join(r->w[i].th, r->w[i].fw))
                rb_fwatch_release(r->w[i].fw);
            r->w[i].started = false;
        }
    if (!r->t1_ns)
        r->t1_ns = rb_clock_ns();
}

uint64_t rb_kv_rank_clear(struct rb_kv_rank *r, bool remove)
{
    uint64_t left = 0;
    for (unsigned i = 0; r->w && i < r->nworkers; i++) {
        struct rb_kv_worker *w = &r->w[i];
        for (uint32_t j = 0; w->users && j < w->nusers; j++)
            for (uint32_t k = 0; k < RB_KV_MAX_TURNS; k++) {
                struct rb_kv_entry *e = &w->users[j].entry[k];
                bool file = e->where == RB_KV_IN_STORAGE;
                if (!remove)
                    left += file;
                else if (e->where != RB_KV_NOWHERE && rb_kv_drop(w, e) && file)
                    left++;
            }
        for (size_t k = 0; k < w->nwrote; k++) {
            char name[320];
            rb_kv_block_name(r, w->wrote[k], name, sizeof name);
            int rc = remove ? r->store->remove(w, name) : -EBUSY;
            if (rc)
                left++;
            else
                w->count[RB_KV_DELETES]++;
        }
        if (remove)
            w->nwrote = 0;
    }
    return left;
}

void rb_kv_rank_free(struct rb_kv_rank *r)
{
    if (!r || !r->w)
        return;
    for (unsigned i = 0; i < r->nworkers; i++) {
        struct rb_kv_worker *w = &r->w[i];
        rb_kv_obj_free(w);
        free(w->users);
        free(w->wrote);
        free(w->chunk);
        rb_hist_free(w->since_lat);
        for (int k = 0; k < RB_KV_NTIMELINE; k++)
            rb_hist_free(w->since_op[k]);
        for (int k = 0; k < RB_KV_NHIST; k++)
            rb_hist_free(w->hist[k]);
        pthread_mutex_destroy(&w->mu);
    }
    free(r->w);
    r->w = NULL;
}

int rb_kv_rank_error(const struct rb_kv_rank *r, char *msg, size_t len)
{
    for (unsigned i = 0; i < r->nworkers; i++)
        if (r->w[i].err) {
            snprintf(msg, len, "%s", r->w[i].errmsg);
            return r->w[i].err;
        }
    return 0;
}

void rb_kv_rank_sum(const struct rb_kv_rank *r, uint64_t count[RB_KV_NCOUNTS], struct rb_hist *hist[RB_KV_NHIST])
{
    memset(count, 0, RB_KV_NCOUNTS * sizeof *count);
    for (int k = 0; k < RB_KV_NHIST; k++)
        rb_hist_reset(hist[k]);
    for (unsigned i = 0; i < r->nworkers; i++) {
        for (int c = 0; c < RB_KV_NCOUNTS; c++)
            count[c] += r->w[i].count[c];
        for (int k = 0; k < RB_KV_NHIST; k++)
            rb_hist_merge(hist[k], r->w[i].hist[k]);
    }
}
