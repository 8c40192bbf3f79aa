/* Request phases (spans that sum to a request's latency) and the bounded heap of the slowest requests. */
#include "rphase_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "railbench/clock.h"
#include "mixed_int.h"
#include "worker_int.h"

const char *const rb_rph_names[RB_RPH_COUNT + 1] = {
    [RB_RPH_QUEUE] = "queue",       [RB_RPH_CONNECT] = "connect",   [RB_RPH_TLS] = "tls",
    [RB_RPH_SEND] = "send",         [RB_RPH_FIRST_BYTE] = "first_byte", [RB_RPH_BODY] = "body",
    [RB_RPH_OPEN] = "open",         [RB_RPH_FIRST_IO] = "first_io", [RB_RPH_LAST_IO] = "last_io",
    [RB_RPH_FSYNC] = "fsync",       [RB_RPH_CLOSE] = "close",       [RB_RPH_COUNT] = NULL,
};

/* The spans of each kind in the order a request meets them (rb_rph_spans). */
static const uint8_t kind_spans[2][RB_RPH_MARKS + 2] = {
    [RB_RPH_NET] = {RB_RPH_QUEUE, RB_RPH_CONNECT, RB_RPH_TLS, RB_RPH_SEND, RB_RPH_FIRST_BYTE, RB_RPH_BODY},
    [RB_RPH_FILE] = {RB_RPH_QUEUE, RB_RPH_OPEN, RB_RPH_FIRST_IO, RB_RPH_LAST_IO, RB_RPH_FSYNC, RB_RPH_CLOSE},
};

/* rb_rph_split's spans in the order of kind_spans into v; returns their sum (end - intended, clamped). */
static inline uint64_t split_ordered(uint64_t intended, uint64_t start, const uint64_t marks[RB_RPH_MARKS],
                                     uint64_t end, uint64_t v[RB_RPH_MARKS + 2])
{
    if (start < intended)
        start = intended;
    if (end < start)
        end = start;
    v[0] = start - intended;
    uint64_t prev = start;
#pragma GCC unroll 4
    for (int i = 0; i < RB_RPH_MARKS; i++) {
        uint64_t m = marks[i];
        if (m < prev)
            m = prev; /* not reached, or before the span before it */
        if (m > end)
            m = end;
        v[i + 1] = m - prev;
        prev = m;
    }
    v[RB_RPH_MARKS + 1] = end - prev;
    return end - intended;
}

void rb_rph_split(enum rb_rph_kind k, uint64_t intended, uint64_t start, const uint64_t marks[RB_RPH_MARKS],
                  uint64_t end, uint64_t out[RB_RPH_COUNT])
{
    uint64_t v[RB_RPH_MARKS + 2];
    memset(out, 0, RB_RPH_COUNT * sizeof *out);
    split_ordered(intended, start, marks, end, v);
    for (int i = 0; i < RB_RPH_MARKS + 2; i++)
        out[kind_spans[k][i]] = v[i];
}

void rb_rph_reset(struct rb_rphases *p)
{
    for (int i = 0; i < RB_RPH_COUNT; i++)
        rb_hist_reset(&p->span[i]);
    rb_hist_reset(&p->total);
    memset(p->band_count, 0, sizeof p->band_count);
    memset(p->band_sum, 0, sizeof p->band_sum);
    memset(p->zeros, 0, sizeof p->zeros);
    p->raw = 0;
}

/*
 * What a recording worker leaves out of a span's histogram, added where its
 * spans are merged: the spans of 0 ns (zeros, bucket 0), and the count and
 * sum of the others (their buckets' sum; their bands' sums: every span of a
 * request above 0 ns is in its band's sum).
 */
static void span_rest(const struct rb_rphases *p, int i, uint64_t *count, uint64_t *sum)
{
    *count = *sum = 0;
    if (!p->raw)
        return;
    for (size_t k = 0; k < RB_HIST_BUCKETS; k++)
        *count += p->span[i].counts[k];
    for (int b = 0; b < RB_RPH_BANDS; b++)
        *sum += p->band_sum[b][i];
}

/* Adds a recording worker's left-out figures of span i of src (span_rest, zeros) to h. */
static void add_rest(struct rb_hist *h, const struct rb_rphases *src, int i)
{
    uint64_t count, sum;
    span_rest(src, i, &count, &sum);
    h->count += count + src->zeros[i];
    h->sum_ns += sum;
    h->counts[0] += src->zeros[i];
    if (src->zeros[i])
        h->min_ns = 0;
}

void rb_rph_merge(struct rb_rphases *dst, const struct rb_rphases *src)
{
    for (int i = 0; dst->raw && i < RB_RPH_COUNT; i++) {
        add_rest(&dst->span[i], dst, i); /* dst itself recorded: its own figures first */
        dst->zeros[i] = 0;
    }
    dst->raw = 0;
    for (int i = 0; i < RB_RPH_COUNT; i++) {
        rb_hist_merge(&dst->span[i], &src->span[i]);
        add_rest(&dst->span[i], src, i);
    }
    rb_hist_merge(&dst->total, &src->total);
    for (int b = 0; b < RB_RPH_BANDS; b++) {
        dst->band_count[b] += src->band_count[b];
        for (int i = 0; i < RB_RPH_COUNT; i++)
            dst->band_sum[b][i] += src->band_sum[b][i];
    }
}

int rb_rph_spans(enum rb_rph_kind k, int out[RB_RPH_COUNT])
{
    for (int i = 0; i < RB_RPH_MARKS + 2; i++)
        out[i] = kind_spans[k][i];
    return RB_RPH_MARKS + 2;
}

/* Span i's value v of a request in band b: 0 ns a count (zeros); else its bucket, min, max and band sum. */
static inline __attribute__((always_inline)) void record_span(struct rb_rphases *p, unsigned b, unsigned i, uint64_t v)
{
    if (!v) {
        p->zeros[i]++;
        return;
    }
    struct rb_hist *h = &p->span[i];
    h->counts[rb_hist_index(v)]++;
    if (v < h->min_ns)
        h->min_ns = v;
    if (v > h->max_ns)
        h->max_ns = v;
    p->band_sum[b][i] += v;
}

/*
 * Records spans v (kind_spans' order of kind k, a constant where this is inlined) summing to sum: the band's count,
 * each span (record_span), the sum's histogram. The spans' own histograms get their count and sum at a merge.
 */
static inline __attribute__((always_inline)) void record_ordered(struct rb_rphases *p, enum rb_rph_kind k,
                                                                 const uint64_t v[RB_RPH_MARKS + 2], uint64_t sum)
{
    unsigned b = rb_rph_band(sum);
    p->band_count[b]++;
#pragma GCC unroll 6
    for (int j = 0; j < RB_RPH_MARKS + 2; j++)
        record_span(p, b, kind_spans[k][j], v[j]);
    rb_hist_record(&p->total, sum);
}

void rb_rph_record(struct rb_rphases *p, const uint64_t spans[RB_RPH_COUNT])
{
    enum rb_rph_kind k = p->kind == RB_RPH_FILE ? RB_RPH_FILE : RB_RPH_NET;
    uint64_t v[RB_RPH_MARKS + 2], sum = 0;
    for (int j = 0; j < RB_RPH_MARKS + 2; j++)
        sum += v[j] = spans[kind_spans[k][j]];
    p->raw = 1;
    if (k == RB_RPH_FILE)
        record_ordered(p, RB_RPH_FILE, v, sum);
    else
        record_ordered(p, RB_RPH_NET, v, sum);
}

/* The breakdown at percentile q of the latency: the band its value falls in, and that band's mean spans. */
static cJSON *band_json(const struct rb_rphases *p, double q, const int *idx, int n)
{
    cJSON *o = cJSON_CreateObject();
    uint64_t v = rb_hist_percentile(&p->total, q);
    unsigned b = rb_rph_band(v);
    cJSON_AddNumberToObject(o, "percentile", q);
    cJSON_AddNumberToObject(o, "latency_ns", (double)v);
    cJSON *band = cJSON_AddArrayToObject(o, "band_ns");
    cJSON_AddItemToArray(band, cJSON_CreateNumber(b ? (double)(1ull << (b - 1)) : 0));
    if (b + 1 < RB_RPH_BANDS)
        cJSON_AddItemToArray(band, cJSON_CreateNumber(b ? (double)(1ull << b) : 1));
    else
        cJSON_AddItemToArray(band, cJSON_CreateNull()); /* the last band has no top */
    cJSON_AddNumberToObject(o, "requests", (double)p->band_count[b]);
    cJSON *m = cJSON_AddObjectToObject(o, "mean_ns");
    for (int k = 0; k < n; k++)
        cJSON_AddNumberToObject(m, rb_rph_names[idx[k]], (double)p->band_sum[b][idx[k]] / (double)p->band_count[b]);
    return o;
}

cJSON *rb_rph_json(const struct rb_rphases *p, bool full_hist)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    int idx[RB_RPH_COUNT], n = rb_rph_spans((enum rb_rph_kind)p->kind, idx);
    cJSON_AddStringToObject(o, "kind", p->kind == RB_RPH_FILE ? "file" : "network");
    cJSON_AddNumberToObject(o, "requests", (double)p->total.count);
    cJSON_AddItemToObject(o, "total_ns", rb_hist_summary_json(&p->total));
    cJSON *spans = cJSON_AddObjectToObject(o, "spans");
    for (int k = 0; k < n; k++)
        cJSON_AddItemToObject(spans, rb_rph_names[idx[k]], rb_hist_summary_json(&p->span[idx[k]]));
    cJSON *pct = cJSON_AddArrayToObject(o, "by_percentile");
    static const double qs[] = {50, 90, 99, 99.9};
    for (size_t i = 0; p->total.count && i < sizeof qs / sizeof qs[0]; i++)
        cJSON_AddItemToArray(pct, band_json(p, qs[i], idx, n));
    if (full_hist) {
        cJSON *hists = cJSON_AddObjectToObject(o, "hist");
        for (int k = 0; k < n; k++)
            cJSON_AddItemToObject(hists, rb_rph_names[idx[k]], rb_hist_to_json(&p->span[idx[k]]));
        cJSON_AddItemToObject(hists, "total", rb_hist_to_json(&p->total));
    }
    return o;
}

/* ---- the slowest requests: a min-heap on latency ---- */

int rb_slow_init(struct rb_slowheap *h, size_t cap)
{
    h->n = 0;
    h->cap = cap > RB_SLOW_MAX ? RB_SLOW_MAX : cap;
    h->v = NULL;
    if (h->cap && !(h->v = calloc(h->cap, sizeof *h->v)))
        return -ENOMEM;
    return 0;
}

void rb_slow_free(struct rb_slowheap *h)
{
    free(h->v);
    h->v = NULL;
    h->n = h->cap = 0;
}

/* a is kept before b when it is slower; equal latencies by rank, thread, seq (so merges are repeatable). */
static int slower(const struct rb_slow *a, const struct rb_slow *b)
{
    if (a->lat_ns != b->lat_ns)
        return a->lat_ns > b->lat_ns ? -1 : 1;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    if (a->thread != b->thread)
        return a->thread < b->thread ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static void swap(struct rb_slow *a, struct rb_slow *b)
{
    struct rb_slow t = *a;
    *a = *b;
    *b = t;
}

/* The heap's order: a parent is never slower than either child (v[0] the fastest kept). */
static void sift_down(struct rb_slowheap *h, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < h->n && slower(&h->v[m], &h->v[l]) < 0)
            m = l;
        if (r < h->n && slower(&h->v[m], &h->v[r]) < 0)
            m = r;
        if (m == i)
            return;
        swap(&h->v[i], &h->v[m]);
        i = m;
    }
}

void rb_slow_offer(struct rb_slowheap *h, const struct rb_slow *e)
{
    if (!h->cap)
        return;
    if (h->n < h->cap) {
        size_t i = h->n++;
        h->v[i] = *e;
        while (i > 0 && slower(&h->v[(i - 1) / 2], &h->v[i]) < 0) {
            swap(&h->v[i], &h->v[(i - 1) / 2]);
            i = (i - 1) / 2;
        }
        return;
    }
    if (slower(e, &h->v[0]) >= 0)
        return; /* not slower than the fastest kept */
    h->v[0] = *e;
    sift_down(h, 0);
}

void rb_slow_merge(struct rb_slowheap *dst, const struct rb_slow *src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        rb_slow_offer(dst, &src[i]);
}

static int cmp_slow(const void *a, const void *b)
{
    return slower(a, b);
}

void rb_slow_sort(struct rb_slowheap *h)
{
    if (h->n)
        qsort(h->v, h->n, sizeof *h->v, cmp_slow);
}

int rb_slow_id(const struct rb_slow *e, unsigned inflight, char *buf, size_t len)
{
    return snprintf(buf, len, "r%" PRId32 "-c%" PRIu64 "-%" PRIu64, e->rank,
                    (uint64_t)e->thread * inflight + e->slot, e->seq);
}

/* ---- a worker's side ---- */

int rb_rph_worker_init(struct rb_worker *w)
{
    if (w->o->phases) {
        size_t n = w->o->mix ? RB_MIX_OPS : 1; /* load mixed: one per op */
        if (!(w->rph = malloc(n * sizeof *w->rph)))
            return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
            w->rph[i].kind = w->tp->files ? RB_RPH_FILE : RB_RPH_NET;
            rb_rph_reset(&w->rph[i]);
            w->rph[i].raw = 1; /* recorded by rb_rph_note */
        }
    }
    return rb_slow_init(&w->slow, w->o->slowest);
}

void rb_rph_worker_free(struct rb_worker *w)
{
    free(w->rph);
    w->rph = NULL;
    rb_slow_free(&w->slow);
}

void rb_rph_note(struct rb_worker *w, const struct rb_req *r, int cls, long status, uint64_t total_ns, uint64_t lat_ns)
{
    uint64_t v[RB_RPH_MARKS + 2];
    bool split = w->rph && r->ph_marked;
    enum rb_rph_kind kind = w->tp->files ? RB_RPH_FILE : RB_RPH_NET;
    if (split) {
        uint64_t m[RB_RPH_MARKS] = {r->ph_ns[0], r->ph_ns[1], r->ph_ns[2], r->ph_ns[3]};
        if (kind == RB_RPH_FILE)
            m[1] = r->response_ns; /* the first I/O's end: the file loop's time to first byte */
        else if (w->nat)
            m[3] = r->response_ns; /* the native engine's first response byte */
        uint64_t sum = split_ordered(r->intended_ns, r->start_ns, m, r->start_ns + total_ns, v);
        struct rb_rphases *p = w->mix_slot_op ? &w->rph[rb_mix_slot_op(w, r->slot)] : w->rph;
        if (cls >= 0)
            ; /* only the requests whose latency is recorded: successes */
        else if (kind == RB_RPH_FILE)
            record_ordered(p, RB_RPH_FILE, v, sum);
        else
            record_ordered(p, RB_RPH_NET, v, sum);
    }
    if (!rb_slow_wants(&w->slow, lat_ns))
        return;
    struct rb_slow e = {
        .lat_ns = lat_ns,
        .end_wall_ns = rb_clock_wall_ns(),
        .seq = w->answered,
        .rank = w->o->rank,
        .thread = w->id,
        .slot = r->slot,
        .ep = (uint32_t)r->ep,
        .status = (int32_t)status,
        .cls = cls,
        .op = (int32_t)(w->mix_slot_op ? rb_mix_slot_op(w, r->slot) : w->o->op),
        .has_spans = split,
        .kind = (uint8_t)kind,
    };
    for (int k = 0; split && k < RB_RPH_MARKS + 2; k++)
        e.span_ns[kind_spans[kind][k]] = v[k];
    snprintf(e.name, sizeof e.name, "%s", r->name ? r->name : "");
    rb_slow_offer(&w->slow, &e);
}
