/* The protobuf exposition format: length-delimited io.prometheus.client.MetricFamily messages (protobuf-c,
 * core/prom_metrics.proto), histograms with their classic buckets and native buckets beside them. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "railbench/buf.h"

#include "prom_int.h"
#include "prom_metrics.pb-c.h"

typedef Io__Prometheus__Client__MetricFamily Family;
typedef Io__Prometheus__Client__Metric Metric;
typedef Io__Prometheus__Client__LabelPair LabelPair;
typedef Io__Prometheus__Client__Histogram Histogram;
typedef Io__Prometheus__Client__Bucket Bucket;
typedef Io__Prometheus__Client__BucketSpan BucketSpan;
typedef Io__Prometheus__Client__Exemplar Exemplar;
typedef Io__Prometheus__Client__Timestamp Timestamp;

/* Prometheus's default zero bucket: |v| <= 2^-128. Only a latency of 0 ns falls into it. */
#define ZERO_THRESHOLD 0x1p-128

double rb_prom_native_upper(int32_t k)
{
    return exp2((double)k / (1 << RB_PROM_NATIVE_SCHEMA));
}

int32_t rb_prom_native_index(double v_s)
{
    int32_t k = (int32_t)ceil(log2(v_s) * (1 << RB_PROM_NATIVE_SCHEMA));
    /* log2 may round across a boundary: settle on upper(k - 1) < v <= upper(k). */
    while (rb_prom_native_upper(k - 1) >= v_s)
        k--;
    while (rb_prom_native_upper(k) < v_s)
        k++;
    return k;
}

double rb_prom_native_value(size_t i)
{
    uint64_t lo = rb_hist_bucket_lower(i);
    if (i >= RB_HIST_BUCKETS - 1)
        return (double)lo / 1e9; /* the open-ended last bucket stands for its lower bound */
    return ((double)lo + (double)(rb_hist_bucket_upper(i) - lo) / 2) / 1e9;
}

/* Every allocation of one family, freed together once it is packed. */
struct arena {
    void **v;
    size_t n, cap;
    bool oom;
};

static void *arena_get(struct arena *a, size_t size)
{
    if (a->n == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 256;
        void **v = realloc(a->v, cap * sizeof *v);
        if (!v) {
            a->oom = true;
            return NULL;
        }
        a->v = v;
        a->cap = cap;
    }
    void *m = calloc(1, size ? size : 1);
    if (!m)
        a->oom = true;
    else
        a->v[a->n++] = m;
    return m;
}

static void arena_clear(struct arena *a)
{
    for (size_t i = 0; i < a->n; i++)
        free(a->v[i]);
    a->n = 0;
}

struct pb {
    struct arena a;
    const char *cl;
    Family fam;
    bool open;
    Metric **metrics;
    size_t n, cap;
    struct rb_buf out;
};

/* Appends labels 'k="v",...' (escaped as rb_prom_escape writes them) to pairs; returns the new count. */
static size_t parse_labels(struct pb *b, const char *s, LabelPair **pairs, size_t n)
{
    while (*s) {
        while (*s == ',')
            s++;
        const char *eq = strchr(s, '=');
        if (!eq || eq[1] != '"')
            break;
        LabelPair *lp = arena_get(&b->a, sizeof *lp);
        char *name = arena_get(&b->a, (size_t)(eq - s) + 1), *val = arena_get(&b->a, strlen(eq));
        if (!lp || !name || !val)
            break;
        io__prometheus__client__label_pair__init(lp);
        memcpy(name, s, (size_t)(eq - s));
        size_t o = 0;
        for (s = eq + 2; *s && *s != '"'; s++) {
            if (*s == '\\' && s[1]) {
                s++;
                val[o++] = *s == 'n' ? '\n' : *s;
            } else {
                val[o++] = *s;
            }
        }
        if (*s == '"')
            s++;
        lp->name = name;
        lp->value = val;
        pairs[n++] = lp;
    }
    return n;
}

/* Packs the open family as one length-delimited message. */
static void flush(struct pb *b)
{
    if (b->open && !b->a.oom) {
        b->fam.n_metric = b->n;
        b->fam.metric = b->metrics;
        size_t len = io__prometheus__client__metric_family__get_packed_size(&b->fam);
        uint8_t hdr[10], *msg = malloc(len ? len : 1);
        size_t h = 0;
        for (size_t v = len; h == 0 || v; v >>= 7)
            hdr[h++] = (uint8_t)((v & 0x7f) | (v >> 7 ? 0x80 : 0));
        if (!msg || io__prometheus__client__metric_family__pack(&b->fam, msg) != len ||
            rb_buf_append(&b->out, hdr, h) != 0 || rb_buf_append(&b->out, msg, len) != 0)
            b->a.oom = true;
        free(msg);
    }
    arena_clear(&b->a);
    b->n = 0;
    b->open = false;
}

static void p_family(void *ctx, const char *name, const char *type, const char *help)
{
    struct pb *b = ctx;
    flush(b);
    io__prometheus__client__metric_family__init(&b->fam);
    b->fam.name = (char *)name;
    b->fam.help = (char *)help;
    b->fam.has_type = true;
    b->fam.type = strcmp(type, "counter") == 0     ? IO__PROMETHEUS__CLIENT__METRIC_TYPE__COUNTER
                  : strcmp(type, "gauge") == 0     ? IO__PROMETHEUS__CLIENT__METRIC_TYPE__GAUGE
                  : strcmp(type, "histogram") == 0 ? IO__PROMETHEUS__CLIENT__METRIC_TYPE__HISTOGRAM
                                                   : IO__PROMETHEUS__CLIENT__METRIC_TYPE__UNTYPED;
    b->open = true;
}

/* A new metric of the open family with the series' labels and the constant ones; NULL when out of memory. */
static Metric *metric(struct pb *b, const char *labels)
{
    if (b->n == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 16;
        Metric **m = realloc(b->metrics, cap * sizeof *m);
        if (!m) {
            b->a.oom = true;
            return NULL;
        }
        b->metrics = m;
        b->cap = cap;
    }
    size_t most = 0;
    for (const char *c = labels; *c; c++)
        most += *c == '=';
    for (const char *c = b->cl; *c; c++)
        most += *c == '=';
    Metric *m = arena_get(&b->a, sizeof *m);
    LabelPair **pairs = arena_get(&b->a, most * sizeof *pairs);
    if (!m || !pairs)
        return NULL;
    io__prometheus__client__metric__init(m);
    m->label = pairs;
    m->n_label = parse_labels(b, b->cl, pairs, parse_labels(b, labels, pairs, 0));
    b->metrics[b->n++] = m;
    return m;
}

static void p_value(void *ctx, const char *name, const char *labels, double v)
{
    (void)name;
    struct pb *b = ctx;
    Metric *m = metric(b, labels);
    if (!m)
        return;
    if (b->fam.type == IO__PROMETHEUS__CLIENT__METRIC_TYPE__COUNTER) {
        m->counter = arena_get(&b->a, sizeof *m->counter);
        if (m->counter) {
            io__prometheus__client__counter__init(m->counter);
            m->counter->has_value = true;
            m->counter->value = v;
        }
    } else if (b->fam.type == IO__PROMETHEUS__CLIENT__METRIC_TYPE__GAUGE) {
        m->gauge = arena_get(&b->a, sizeof *m->gauge);
        if (m->gauge) {
            io__prometheus__client__gauge__init(m->gauge);
            m->gauge->has_value = true;
            m->gauge->value = v;
        }
    } else {
        m->untyped = arena_get(&b->a, sizeof *m->untyped);
        if (m->untyped) {
            io__prometheus__client__untyped__init(m->untyped);
            m->untyped->has_value = true;
            m->untyped->value = v;
        }
    }
}

static void p_count(void *ctx, const char *name, const char *labels, uint64_t n)
{
    p_value(ctx, name, labels, (double)n);
}

static Exemplar *exemplar(struct pb *b, const struct rb_prom_ex *e)
{
    Exemplar *x = arena_get(&b->a, sizeof *x);
    LabelPair **lp = arena_get(&b->a, sizeof *lp);
    LabelPair *pair = arena_get(&b->a, sizeof *pair);
    Timestamp *ts = arena_get(&b->a, sizeof *ts);
    if (!x || !lp || !pair || !ts)
        return NULL;
    io__prometheus__client__exemplar__init(x);
    io__prometheus__client__label_pair__init(pair);
    io__prometheus__client__timestamp__init(ts);
    pair->name = "request_id";
    pair->value = (char *)e->id;
    lp[0] = pair;
    x->n_label = 1;
    x->label = lp;
    x->has_value = true;
    x->value = e->value_s;
    double sec = floor(e->ts_s);
    ts->has_seconds = ts->has_nanos = true;
    ts->seconds = (int64_t)sec;
    ts->nanos = (int32_t)((e->ts_s - sec) * 1e9);
    x->timestamp = ts;
    return x;
}

/*
 * The classic buckets ("le" as the text formats write them, +Inf left implicit). Only the bucket of the
 * largest exemplar carries it: Prometheus up to 2.4x ingests one exemplar per native histogram and scrape,
 * the first a bucket carries, and the slowest request is the one to keep. The native histogram's own
 * exemplar list (field exemplars) has every bucket's.
 */
static bool classic(struct pb *b, Histogram *hg, const struct rb_hist *h, const struct rb_prom_ex *ex)
{
    size_t n = rb_prom_le_count(), top = SIZE_MAX, nex = 0;
    for (size_t i = 0; ex && i < RB_PROM_SLOTS(n); i++)
        if (ex[i].set) {
            top = i;
            nex++;
        }
    hg->bucket = arena_get(&b->a, n * sizeof *hg->bucket);
    hg->exemplars = arena_get(&b->a, nex * sizeof *hg->exemplars);
    if (!hg->bucket || !hg->exemplars)
        return false;
    uint64_t cum = 0;
    size_t fine = 0;
    for (size_t i = 0; i < n; i++) {
        size_t upto = rb_hist_index(rb_prom_le_ns(i));
        for (; fine < upto; fine++)
            cum += h->counts[fine];
        Bucket *bk = arena_get(&b->a, sizeof *bk);
        if (!bk)
            return false;
        io__prometheus__client__bucket__init(bk);
        bk->has_cumulative_count = bk->has_upper_bound = true;
        bk->cumulative_count = cum;
        bk->upper_bound = (double)rb_prom_le_ns(i) / 1e9;
        if (i == top)
            bk->exemplar = exemplar(b, &ex[i]);
        hg->bucket[hg->n_bucket++] = bk;
    }
    for (size_t i = 0; ex && i < RB_PROM_SLOTS(n); i++)
        if (ex[i].set && (hg->exemplars[hg->n_exemplars] = exemplar(b, &ex[i])))
            hg->n_exemplars++;
    return true;
}

/* The native buckets: each bucket of h whole into the native bucket of its midpoint, as spans and deltas. */
static bool native(struct pb *b, Histogram *hg, const struct rb_hist *h)
{
    size_t used = 0;
    for (size_t i = 1; i < RB_HIST_BUCKETS; i++)
        used += h->counts[i] != 0;
    hg->positive_span = arena_get(&b->a, used * sizeof *hg->positive_span);
    hg->positive_delta = arena_get(&b->a, used * sizeof *hg->positive_delta);
    if (!hg->positive_span || !hg->positive_delta)
        return false;
    hg->has_schema = hg->has_zero_threshold = hg->has_zero_count = true;
    hg->schema = RB_PROM_NATIVE_SCHEMA;
    hg->zero_threshold = ZERO_THRESHOLD;
    hg->zero_count = h->counts[0];
    int32_t last = 0;
    int64_t prev = 0;
    BucketSpan *span = NULL;
    for (size_t i = 1; i < RB_HIST_BUCKETS; i++) {
        if (!h->counts[i])
            continue;
        int32_t k = rb_prom_native_index(rb_prom_native_value(i));
        if (span && k == last) { /* another of our buckets in the same native bucket */
            hg->positive_delta[hg->n_positive_delta - 1] += (int64_t)h->counts[i];
            prev += (int64_t)h->counts[i];
            continue;
        }
        if (!span || k != last + 1) {
            span = arena_get(&b->a, sizeof *span);
            if (!span)
                return false;
            io__prometheus__client__bucket_span__init(span);
            span->has_offset = span->has_length = true;
            span->offset = hg->n_positive_span ? k - last - 1 : k;
            hg->positive_span[hg->n_positive_span++] = span;
        }
        span->length++;
        hg->positive_delta[hg->n_positive_delta++] = (int64_t)h->counts[i] - prev;
        prev = (int64_t)h->counts[i];
        last = k;
    }
    return true;
}

static void p_histogram(void *ctx, const char *name, const char *labels, const struct rb_hist *h,
                        const struct rb_prom_ex *ex)
{
    (void)name;
    struct pb *b = ctx;
    Metric *m = metric(b, labels);
    Histogram *hg = m ? arena_get(&b->a, sizeof *hg) : NULL;
    if (!hg)
        return;
    io__prometheus__client__histogram__init(hg);
    hg->has_sample_count = hg->has_sample_sum = true;
    hg->sample_count = h->count;
    hg->sample_sum = (double)h->sum_ns / 1e9;
    if (!classic(b, hg, h, ex) || !native(b, hg, h))
        b->a.oom = true;
    m->histogram = hg;
}

int rb_prom_render_protobuf(const struct rb_prom *p, void **out, size_t *len)
{
    struct pb b = {.cl = p->const_labels};
    const struct rb_prom_sink k = {&b, p_family, p_count, p_value, p_histogram};
    rb_prom_walk(p, &k);
    flush(&b);
    bool oom = b.a.oom || b.out.oom;
    free(b.a.v);
    free(b.metrics);
    if (oom) {
        rb_buf_free(&b.out);
        return -ENOMEM;
    }
    *out = b.out.s ? b.out.s : calloc(1, 1);
    *len = b.out.len;
    return *out ? 0 : -ENOMEM;
}
