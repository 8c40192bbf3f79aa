/* Log-linear latency histogram: bucket bounds, merge, percentiles and the JSON forms of hist.h. */
#include "railbench/hist.h"
#include "railbench/result.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* MPI reductions treat counts..sum_ns as one array; a padded or reordered struct would break that. */
_Static_assert(offsetof(struct rb_hist, count) == RB_HIST_BUCKETS * sizeof(uint64_t),
               "count must follow counts[] directly");
_Static_assert(offsetof(struct rb_hist, sum_ns) == (RB_HIST_U64S - 1) * sizeof(uint64_t),
               "sum_ns must be the last of the RB_HIST_U64S summed values");

/* Every integer up to 2^53 survives the trip through a JSON number (a double) exactly. */
#define JSON_EXACT_MAX (UINT64_C(1) << 53)

static uint64_t add_sat(uint64_t a, uint64_t b)
{
    uint64_t s = a + b;
    return s < a ? UINT64_MAX : s;
}

static uint64_t mul_sat(uint64_t a, uint64_t b)
{
    if (a != 0 && b > UINT64_MAX / a)
        return UINT64_MAX;
    return a * b;
}

void rb_hist_record_n(struct rb_hist *h, uint64_t v, uint64_t n)
{
    if (n == 0)
        return;
    size_t i = rb_hist_index(v);
    h->counts[i] = add_sat(h->counts[i], n);
    h->count = add_sat(h->count, n);
    h->sum_ns = add_sat(h->sum_ns, mul_sat(v, n));
    if (v < h->min_ns)
        h->min_ns = v;
    if (v > h->max_ns)
        h->max_ns = v;
}

void rb_hist_reset(struct rb_hist *h)
{
    memset(h, 0, sizeof(*h));
    h->min_ns = UINT64_MAX;
}

struct rb_hist *rb_hist_new(void)
{
    struct rb_hist *h = calloc(1, sizeof(*h));
    if (h)
        rb_hist_reset(h);
    return h;
}

void rb_hist_free(struct rb_hist *h)
{
    free(h);
}

/*
 * Inverse of rb_hist_index. Bucket i >= SUB_COUNT is sub-bucket i % SUB_COUNT
 * of group g = i / SUB_COUNT, which covers [2^(g+SUB_BITS-1), 2^(g+SUB_BITS)) in
 * steps of 2^(g-1); group 1 has step 1, so it continues the exact range.
 * Indices past the end are treated as the last bucket, mirroring rb_hist_index.
 */
uint64_t rb_hist_bucket_lower(size_t i)
{
    if (i >= RB_HIST_BUCKETS)
        i = RB_HIST_BUCKETS - 1;
    if (i < RB_HIST_SUB_COUNT)
        return (uint64_t)i;
    size_t g = i >> RB_HIST_SUB_BITS;
    uint64_t sub = (uint64_t)(i & (RB_HIST_SUB_COUNT - 1));
    return ((uint64_t)RB_HIST_SUB_COUNT + sub) << (g - 1);
}

/* The last bucket also takes every value past the layout's top, hence UINT64_MAX. */
uint64_t rb_hist_bucket_upper(size_t i)
{
    if (i >= RB_HIST_BUCKETS - 1)
        return UINT64_MAX;
    return rb_hist_bucket_lower(i + 1) - 1;
}

/*
 * Saturating rather than wrapping keeps an overflowed total recognisable
 * (UINT64_MAX) instead of silently small. Branch-free so the loop vectorises.
 */
void rb_hist_merge(struct rb_hist *dst, const struct rb_hist *src)
{
    uint64_t *d = dst->counts;
    const uint64_t *s = src->counts;
    for (size_t k = 0; k < RB_HIST_U64S; k++) {
        uint64_t v = d[k] + s[k];
        d[k] = v | -(uint64_t)(v < d[k]);
    }
    if (src->min_ns < dst->min_ns)
        dst->min_ns = src->min_ns;
    if (src->max_ns > dst->max_ns)
        dst->max_ns = src->max_ns;
}

/*
 * Nearest rank ceil(q/100 * count), clamped to [1, count]. q/100 is rarely
 * exact in binary (0.999 * 200000 comes out a hair above 199800), so a product
 * within a few ulps above an integer is taken as that integer rather than
 * rounded up to the next rank.
 */
static uint64_t percentile_rank(uint64_t count, double q)
{
    double x = q / 100.0 * (double)count;
    double f = floor(x);
    double r = (x - f <= x * 4 * 0x1p-52) ? f : f + 1;
    if (!(r >= 1))
        return 1;
    if (r >= (double)count)
        return count;
    return (uint64_t)r;
}

/*
 * q <= 0 and NaN give the minimum, q >= 100 the maximum. The first and last
 * ranks are reported exactly (min, max) because the histogram knows them;
 * every other rank gets its bucket's midpoint, which halves the worst-case
 * error relative to reporting a bound.
 */
uint64_t rb_hist_percentile(const struct rb_hist *h, double q)
{
    if (h->count == 0)
        return 0;
    if (!(q > 0))
        return h->min_ns;
    if (q >= 100)
        return h->max_ns;
    uint64_t rank = percentile_rank(h->count, q);
    if (rank <= 1)
        return h->min_ns;
    if (rank >= h->count)
        return h->max_ns;

    uint64_t seen = 0;
    for (size_t i = 0; i < RB_HIST_BUCKETS; i++) {
        seen = add_sat(seen, h->counts[i]);
        if (seen < rank)
            continue;
        uint64_t lo = rb_hist_bucket_lower(i);
        uint64_t hi = rb_hist_bucket_upper(i);
        uint64_t mid = lo + (hi - lo) / 2;
        if (mid < h->min_ns)
            return h->min_ns;
        if (mid > h->max_ns)
            return h->max_ns;
        return mid;
    }
    /* Reachable only when counts[] add up to less than count (saturated or wrapped totals). */
    return h->max_ns;
}

/* A saturated sum_ns makes this a lower bound, which is the best the stored data allows. */
double rb_hist_mean(const struct rb_hist *h)
{
    if (h->count == 0)
        return 0.0;
    return (double)h->sum_ns / (double)h->count;
}

/* An empty histogram summarises as all zeros: UINT64_MAX as a minimum would only mislead a report. */
void rb_hist_summarize(const struct rb_hist *h, struct rb_hist_summary *s)
{
    memset(s, 0, sizeof(*s));
    s->count = h->count;
    if (h->count == 0)
        return;
    s->min_ns = h->min_ns;
    s->max_ns = h->max_ns;
    s->mean_ns = rb_hist_mean(h);
    s->p50_ns = rb_hist_percentile(h, 50);
    s->p90_ns = rb_hist_percentile(h, 90);
    s->p99_ns = rb_hist_percentile(h, 99);
    s->p999_ns = rb_hist_percentile(h, 99.9);
    s->p9999_ns = rb_hist_percentile(h, 99.99);
}


static int add_u64(cJSON *obj, const char *key, uint64_t v)
{
    cJSON *item = rb_json_u64(v);
    if (!item)
        return -ENOMEM;
    if (!cJSON_AddItemToObject(obj, key, item)) {
        cJSON_Delete(item);
        return -ENOMEM;
    }
    return 0;
}

static int append_u64(cJSON *arr, uint64_t v)
{
    cJSON *item = rb_json_u64(v);
    if (!item)
        return -ENOMEM;
    if (!cJSON_AddItemToArray(arr, item)) {
        cJSON_Delete(item);
        return -ENOMEM;
    }
    return 0;
}

cJSON *rb_hist_to_json(const struct rb_hist *h)
{
    cJSON *obj = cJSON_CreateObject();
    if (!obj)
        return NULL;
    if (add_u64(obj, "count", h->count) || add_u64(obj, "sum_ns", h->sum_ns) ||
        add_u64(obj, "min_ns", h->min_ns) || add_u64(obj, "max_ns", h->max_ns))
        goto fail;
    cJSON *buckets = cJSON_AddArrayToObject(obj, "buckets");
    if (!buckets)
        goto fail;
    for (size_t i = 0; i < RB_HIST_BUCKETS; i++) {
        if (h->counts[i] == 0)
            continue;
        if (append_u64(buckets, (uint64_t)i) || append_u64(buckets, h->counts[i]))
            goto fail;
    }
    return obj;
fail:
    cJSON_Delete(obj);
    return NULL;
}

/*
 * Accepts a non-negative integral number no larger than 2^53 (a larger one may
 * already have been rounded by the parser, and the writer never emits one), or
 * a string of 1 to 20 decimal digits that fits in uint64_t.
 */
static int u64_from_json(const cJSON *item, uint64_t *out)
{
    if (cJSON_IsNumber(item)) {
        double d = item->valuedouble;
        if (!(d >= 0 && d <= (double)JSON_EXACT_MAX) || d != floor(d))
            return -EINVAL;
        *out = (uint64_t)d;
        return 0;
    }
    if (cJSON_IsString(item) && item->valuestring) {
        const char *p = item->valuestring;
        uint64_t v = 0;
        if (*p == '\0')
            return -EINVAL;
        for (; *p; p++) {
            if (*p < '0' || *p > '9')
                return -EINVAL;
            unsigned digit = (unsigned)(*p - '0');
            if (v > (UINT64_MAX - digit) / 10)
                return -EINVAL;
            v = v * 10 + digit;
        }
        *out = v;
        return 0;
    }
    return -EINVAL;
}

static int field_u64(const cJSON *obj, const char *key, uint64_t *out)
{
    return u64_from_json(cJSON_GetObjectItemCaseSensitive(obj, key), out);
}

/*
 * Validates completely before touching h, so a rejected input leaves h as it
 * was. Beyond well-formedness it checks the invariants the other functions
 * rely on: indices strictly increasing (no duplicates), counts summing to
 * count, min and max in the first and last non-empty buckets, and sum_ns
 * possible for those min, max and count. Unknown keys are ignored so the form
 * can grow.
 */
int rb_hist_from_json(const cJSON *json, struct rb_hist *h)
{
    uint64_t count, sum, min, max;
    if (!cJSON_IsObject(json))
        return -EINVAL;
    if (field_u64(json, "count", &count) || field_u64(json, "sum_ns", &sum) ||
        field_u64(json, "min_ns", &min) || field_u64(json, "max_ns", &max))
        return -EINVAL;
    const cJSON *buckets = cJSON_GetObjectItemCaseSensitive(json, "buckets");
    if (!cJSON_IsArray(buckets))
        return -EINVAL;

    uint64_t total = 0;
    size_t first = RB_HIST_BUCKETS, last = 0;
    bool have_prev = false;
    size_t prev = 0;
    const cJSON *it = buckets->child;
    while (it) {
        uint64_t idx, n;
        if (!it->next || u64_from_json(it, &idx) || u64_from_json(it->next, &n))
            return -EINVAL;
        if (idx >= RB_HIST_BUCKETS || (have_prev && idx <= prev))
            return -EINVAL;
        if (total + n < total)
            return -EINVAL;
        total += n;
        if (n > 0) {
            if (first == RB_HIST_BUCKETS)
                first = (size_t)idx;
            last = (size_t)idx;
        }
        prev = (size_t)idx;
        have_prev = true;
        it = it->next->next;
    }
    if (total != count)
        return -EINVAL;
    if (count == 0) {
        if (sum != 0 || min != UINT64_MAX || max != 0)
            return -EINVAL;
    } else {
        if (min > max || rb_hist_index(min) != first || rb_hist_index(max) != last)
            return -EINVAL;
        /*
         * One value is min, one is max, the rest lie between. Saturation is
         * monotonic, so a saturated sum still lies between the saturated
         * bounds; with count 1 the bounds cross unless min == max.
         */
        uint64_t lo = add_sat(mul_sat(min, count - 1), max);
        uint64_t hi = add_sat(mul_sat(max, count - 1), min);
        if (sum < lo || sum > hi)
            return -EINVAL;
    }

    rb_hist_reset(h);
    for (it = buckets->child; it; it = it->next->next) {
        uint64_t idx = 0, n = 0;
        u64_from_json(it, &idx);
        u64_from_json(it->next, &n);
        h->counts[idx] = n;
    }
    h->count = count;
    h->sum_ns = sum;
    h->min_ns = min;
    h->max_ns = max;
    return 0;
}

static int add_num(cJSON *obj, const char *key, double v)
{
    return cJSON_AddNumberToObject(obj, key, v) ? 0 : -ENOMEM;
}

cJSON *rb_hist_summary_json(const struct rb_hist *h)
{
    struct rb_hist_summary s;
    rb_hist_summarize(h, &s);
    cJSON *obj = cJSON_CreateObject();
    if (!obj)
        return NULL;
    if (s.count == 0) {
        /* Nothing was measured: every figure is absent, not 0. */
        static const char *const keys[] = {"min", "mean", "p50", "p90", "p99", "p999", "p9999", "max"};
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
            if (!cJSON_AddNullToObject(obj, keys[i])) {
                cJSON_Delete(obj);
                return NULL;
            }
        return obj;
    }
    if (add_num(obj, "min", (double)s.min_ns) || add_num(obj, "mean", s.mean_ns) ||
        add_num(obj, "p50", (double)s.p50_ns) || add_num(obj, "p90", (double)s.p90_ns) ||
        add_num(obj, "p99", (double)s.p99_ns) || add_num(obj, "p999", (double)s.p999_ns) ||
        add_num(obj, "p9999", (double)s.p9999_ns) || add_num(obj, "max", (double)s.max_ns)) {
        cJSON_Delete(obj);
        return NULL;
    }
    return obj;
}
