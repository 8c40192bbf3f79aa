/* Training emulation's model: presets, seeded draws, epoch layout, step accounting, AU and throughput. */
#define _POSIX_C_SOURCE 200809L
#include "train_int.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "railbench/clock.h"
#include "../objset/objset_int.h"
#include "railbench/mix.h"
#include "railbench/perm.h"
#include "../engine/payload_int.h"
#include "railbench/units.h"

#define TWO_PI 6.283185307179586476925

/*
 * MLPerf Storage's training workloads as configured for H100 accelerators
 * (github.com/mlcommons/storage, configs/dlio/workload/resnet50_h100.yaml,
 * unet3d_h100.yaml, cosmoflow_h100.yaml): record_length_bytes (resnet50's
 * 114,660.07 rounded), record_length_bytes_stdev, num_samples_per_file,
 * batch_size, computation_time, read_threads and metric.au. CosmoFlow's
 * threshold is 70 %, the others' 90 %.
 */
#define DLRM_COLUMNS "c0,c1,c2,c3,c4,c5,c6,c7,c8,c9,c10,c11,c12,c13,c14,c15,c16,c17,c18,c19,c20,c21,c22,c23,c24," \
                     "c25,c26,c27,c28,c29,c30,c31,c32,c33,c34,c35,c36,c37,c38,c39"

/*
 * MLPerf Storage v3.0's training data sets, as configured for B200
 * accelerators (configs/dlio/workload/<name>_b200.yaml there): files, format,
 * samples a file, sample bytes, batch, computation_time, read_threads and
 * metric.au. unet3d's 7,200 npz files (its compute time and read threads the
 * H100 figures above); retinanet's 1,170,301 JPEGs; flux's 4,296 Parquet
 * files of 288 rows of 5 float32 list columns (row groups of 48 rows:
 * railbench's choice, a batch's); dlrm's 1,024 Parquet files of 4,718,592
 * rows of 200 scalar columns (761 bytes a row, row groups of 6,144, the 40
 * columns DLIO reads).
 */
static const struct rb_train_preset presets[] = {
    {"resnet50", 114660, 0, 1251, 400, 224 * RB_NS_PER_MS, 8, 90, 0, NULL, NULL, 0, NULL},
    {"unet3d", 146600628, 68341808, 1, 7, 323 * RB_NS_PER_MS, 4, 90, 7200, "npz", NULL, 0, NULL},
    {"cosmoflow", 2828486, 71311, 1, 1, 3500 * RB_NS_PER_US, 4, 70, 0, NULL, NULL, 0, NULL},
    {"retinanet", 322957, 0, 1, 24, 47550 * RB_NS_PER_US, 8, 85, 1170301, "jpeg", NULL, 0, NULL},
    {"flux", 2164832, 0, 288, 48, 1350 * RB_NS_PER_MS, 8, 90, 4296, "parquet", "list:5", 48, NULL},
    {"dlrm", 761, 0, 4718592, 16384, 375 * RB_NS_PER_US, 4, 70, 1024, "parquet", "scalar:200", 6144, DLRM_COLUMNS},
};
const char rb_train_preset_list[] = "resnet50, unet3d, cosmoflow, retinanet, flux or dlrm";

const struct rb_train_preset *rb_train_preset_find(const char *name)
{
    for (size_t i = 0; name && i < sizeof presets / sizeof presets[0]; i++)
        if (strcmp(presets[i].name, name) == 0)
            return &presets[i];
    return NULL;
}

/* ---- distributions ---- */

/* Splits "A/B" into a and b (b "" when there is no '/'); -EINVAL for empty parts or a second '/'. */
static int split_dist(const char *s, char *a, size_t alen, char *b, size_t blen)
{
    const char *slash = strchr(s, '/');
    size_t n = slash ? (size_t)(slash - s) : strlen(s);
    if (n == 0 || n >= alen)
        return -EINVAL;
    memcpy(a, s, n);
    a[n] = '\0';
    b[0] = '\0';
    if (slash) {
        const char *rest = slash + 1;
        if (!*rest || strchr(rest, '/') || strlen(rest) >= blen)
            return -EINVAL;
        strcpy(b, rest);
    }
    return 0;
}

int rb_train_parse_size_dist(const char *s, uint64_t *mean_bytes, uint64_t *stdev_bytes)
{
    char a[64], b[64];
    if (!s || split_dist(s, a, sizeof a, b, sizeof b) || rb_parse_size(a, mean_bytes))
        return -EINVAL;
    *stdev_bytes = 0;
    if (b[0] && rb_parse_size(b, stdev_bytes))
        return -EINVAL;
    return 0;
}

int rb_train_parse_duration_dist(const char *s, uint64_t *mean_ns, uint64_t *stdev_ns)
{
    char a[64], b[64];
    if (!s || split_dist(s, a, sizeof a, b, sizeof b) || rb_parse_duration(a, mean_ns))
        return -EINVAL;
    *stdev_ns = 0;
    if (b[0] && rb_parse_duration(b, stdev_ns))
        return -EINVAL;
    return 0;
}

double rb_train_normal(uint64_t key)
{
    /* u1 in (0, 1] keeps the logarithm finite; u2 in [0, 1). */
    double u1 = (double)((rb_mix64(key) >> 11) + 1) * 0x1.0p-53;
    double u2 = (double)(rb_mix64(key + RB_MIX_GOLDEN) >> 11) * 0x1.0p-53;
    return sqrt(-2.0 * log(u1)) * cos(TWO_PI * u2);
}

uint64_t rb_train_draw(uint64_t mean, uint64_t stdev, uint64_t key, uint64_t floor_value)
{
    if (!stdev)
        return mean > floor_value ? mean : floor_value;
    double v = (double)mean + (double)stdev * rb_train_normal(key);
    if (v < (double)floor_value)
        return floor_value;
    if (v >= 0x1.0p63)
        return UINT64_MAX;
    return (uint64_t)llround(v);
}

uint64_t rb_train_key_object_bytes(uint64_t payload_key, uint64_t spo, uint64_t mean_bytes, uint64_t stdev_bytes)
{
    /* Mixed with a constant so the size is not correlated with the payload's first words. */
    uint64_t key = rb_mix64(payload_key ^ 0x5a3e5a3e5a3e5a3eull);
    double stdev = (double)stdev_bytes * sqrt((double)spo);
    return rb_train_draw(mean_bytes * spo, (uint64_t)llround(stdev), key, 1);
}

uint64_t rb_train_object_bytes(uint64_t seed, const char *name, uint64_t spo, uint64_t mean_bytes,
                               uint64_t stdev_bytes)
{
    return rb_train_key_object_bytes(rb_payload_key(seed, name), spo, mean_bytes, stdev_bytes);
}

uint64_t rb_train_compute_ns(uint64_t mean_ns, uint64_t stdev_ns, uint64_t seed, uint64_t epoch, int rank,
                             unsigned accel, uint64_t step)
{
    if (!stdev_ns)
        return mean_ns;
    uint64_t key = rb_mix64(seed + RB_MIX_GOLDEN);
    key = rb_mix64(key ^ epoch);
    key = rb_mix64(key ^ (uint64_t)(unsigned)rank);
    key = rb_mix64(key ^ accel);
    key = rb_mix64(key ^ step);
    return rb_train_draw(mean_ns, stdev_ns, key, 0);
}

/* ---- layout ---- */

uint64_t rb_train_steps(uint64_t nobjects, int ranks, uint64_t spo, uint64_t accel, uint64_t batch,
                        uint64_t max_steps)
{
    if (ranks < 1 || !spo || !accel || !batch)
        return 0;
    uint64_t per_rank = nobjects / (uint64_t)ranks;
    if (per_rank && spo > UINT64_MAX / per_rank)
        return max_steps; /* more samples than any cap can ask for */
    uint64_t samples = per_rank * spo;
    uint64_t per_step = accel > UINT64_MAX / batch ? UINT64_MAX : accel * batch;
    uint64_t steps = samples / per_step;
    return max_steps && steps > max_steps ? max_steps : steps;
}

int rb_train_epoch_stream(size_t n, uint64_t seed, uint64_t epoch, int rank, int ranks, uint32_t **out,
                          size_t *nout)
{
    *out = NULL;
    *nout = 0;
    if (ranks < 1 || rank < 0 || rank >= ranks || n > UINT32_MAX)
        return -EINVAL;
    size_t mine = n / (size_t)ranks + ((size_t)rank < n % (size_t)ranks ? 1 : 0);
    uint32_t *s = malloc((mine ? mine : 1) * sizeof *s);
    if (!s)
        return -ENOMEM;
    /* The same permutation on every rank: it depends on the seed and the epoch only; computed per position. */
    struct rb_perm perm;
    if (n && rb_perm_init(&perm, n, rb_mix64(seed ^ (epoch * RB_MIX_GOLDEN)))) {
        free(s);
        return -EINVAL;
    }
    for (size_t k = 0; k < mine; k++)
        s[k] = (uint32_t)rb_perm_at(&perm, (uint64_t)rank + (uint64_t)k * (uint64_t)ranks);
    *out = s;
    *nout = mine;
    return 0;
}

void rb_train_batch_objects(uint64_t k, uint64_t batch, uint64_t spo, uint64_t *first, uint64_t *count)
{
    /* Objects whose first sample (index i x spo) falls in [k x batch, (k+1) x batch): i = ceil(j / spo). */
    uint64_t lo = (k * batch + spo - 1) / spo, hi = ((k + 1) * batch + spo - 1) / spo;
    *first = lo;
    *count = hi - lo;
}

/* ---- accounting ---- */

uint64_t rb_train_compute_end(const uint64_t *ready_ns, const uint64_t *compute_ns, unsigned n)
{
    uint64_t end = 0;
    for (unsigned a = 0; a < n; a++)
        if (ready_ns[a] + compute_ns[a] > end)
            end = ready_ns[a] + compute_ns[a];
    return end;
}

void rb_train_step_account(struct rb_train_tally *t, unsigned n, uint64_t batch, uint64_t start_ns,
                           const uint64_t *ready_ns, const uint64_t *compute_ns, uint64_t wake_ns,
                           uint64_t end_ns, struct rb_hist *wait)
{
    uint64_t wall = end_ns > start_ns ? end_ns - start_ns : 0;
    uint64_t cend = rb_train_compute_end(ready_ns, compute_ns, n);
    uint64_t late = wake_ns > cend ? wake_ns - cend : 0;
    for (unsigned a = 0; a < n; a++) {
        struct rb_train_tally *x = &t[a];
        /* MLPerf Storage leaves the first step out of AU: it holds the loader's start-up, not steady state. */
        if (x->steps > 0) {
            x->au_compute_ns += compute_ns[a] + (compute_ns[a] ? late : 0); /* no compute, no sleep to be late from */
            x->au_wall_ns += wall;
            if (wait)
                rb_hist_record(wait, ready_ns[a] > start_ns ? ready_ns[a] - start_ns : 0);
        }
        x->steps++;
        x->samples += batch;
        x->wall_ns += wall;
    }
}

double rb_train_au_pct(const struct rb_train_tally *t)
{
    /* MLPerf Storage: AU = compute time / wall time x 100, first step excluded (DLIO compute_metrics_train). */
    if (!t->au_wall_ns)
        return 0;
    return 100.0 * (double)t->au_compute_ns / (double)t->au_wall_ns;
}

double rb_train_per_s(uint64_t count, uint64_t wall_ns)
{
    return wall_ns ? (double)count * 1e9 / (double)wall_ns : 0;
}

void rb_train_rank_figures(const struct rb_train_tally *acc, unsigned n, uint64_t bytes, struct rb_train_rank *out)
{
    memset(out, 0, sizeof *out);
    out->bytes = bytes;
    if (!n)
        return;
    /* The accelerators of a rank share its steps, so they share the step count and the wall time. */
    out->steps = acc[0].steps;
    out->wall_ns = acc[0].wall_ns;
    double au = 0;
    for (unsigned a = 0; a < n; a++) {
        out->samples += acc[a].samples;
        au += rb_train_au_pct(&acc[a]);
    }
    out->au_pct = au / n;
}

void rb_train_epoch_figures(const struct rb_train_rank *ranks, size_t n, struct rb_train_figures *out)
{
    memset(out, 0, sizeof *out);
    if (!n)
        return;
    out->steps = UINT64_MAX;
    double au = 0;
    for (size_t r = 0; r < n; r++) {
        if (ranks[r].steps < out->steps)
            out->steps = ranks[r].steps;
        out->samples += ranks[r].samples;
        out->bytes += ranks[r].bytes;
        out->samples_per_s += rb_train_per_s(ranks[r].samples, ranks[r].wall_ns);
        out->bytes_per_s += rb_train_per_s(ranks[r].bytes, ranks[r].wall_ns);
        au += ranks[r].au_pct;
    }
    out->au_pct = au / (double)n;
}

void rb_train_run_figures(const struct rb_train_figures *epochs, size_t n, double *au_mean_pct,
                          double *samples_per_s)
{
    double au = 0, sps = 0;
    for (size_t i = 0; i < n; i++) {
        au += epochs[i].au_pct;
        sps += epochs[i].samples_per_s;
    }
    *au_mean_pct = n ? au / (double)n : NAN; /* no epoch ran to its end: nothing measured */
    *samples_per_s = n ? sps / (double)n : NAN;
}

/* ---- search ---- */

void rb_train_search_init(struct rb_train_search *s, uint64_t max)
{
    memset(s, 0, sizeof *s);
    s->max = max ? max : 1;
    s->next = 1;
}

void rb_train_search_record(struct rb_train_search *s, bool met)
{
    if (s->done)
        return;
    if (met)
        s->lo = s->next;
    else
        s->hi = s->next;
    if (!s->hi) {
        /* Nothing failed yet: keep doubling up to the bound. */
        if (s->lo >= s->max)
            s->done = true;
        else
            s->next = s->lo > s->max / 2 ? s->max : 2 * s->lo;
    } else if (s->hi - s->lo <= 1) {
        s->done = true;
    } else {
        s->next = s->lo + (s->hi - s->lo) / 2;
    }
}
