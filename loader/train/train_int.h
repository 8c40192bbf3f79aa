/* Training emulation's model: reference workloads, dataset layout per epoch, step accounting, AU and throughput. */
#ifndef RB_TRAIN_INT_H
#define RB_TRAIN_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "railbench/hist.h"

/*
 * Thread-safety: the model keeps no state of its own (the presets are
 * const); every function works only on what its caller passes, so the
 * trainer and read threads may call them at once on different data.
 */

/* ---- Reference workloads ---- */

/*
 * A reference workload of MLPerf Storage (DLIO configuration files
 * configs/dlio/workload/<name>_h100.yaml in github.com/mlcommons/storage):
 * record_length_bytes (and _stdev), num_samples_per_file, batch_size,
 * computation_time, read_threads and the AU threshold (metric.au).
 */
struct rb_train_preset {
    const char *name;
    uint64_t sample_bytes, sample_stdev_bytes;
    uint64_t samples_per_object;
    uint64_t batch_size;
    uint64_t compute_ns;        /* 0: not recorded here, --compute-time must be given */
    uint64_t read_threads;      /* 0: not recorded here (1 unless given) */
    double au_min_pct;
    /* MLPerf Storage v3.0's data set (0, NULL: none recorded): its files (--scale multiplies them), their format,
     * and for Parquet the schema, rows a row group and the columns read. */
    uint64_t files;
    const char *format, *pq_schema;
    uint64_t pq_rg_rows;
    const char *pq_columns;
};

/* The preset called name, or NULL. */
const struct rb_train_preset *rb_train_preset_find(const char *name);

/* The preset names for messages: "resnet50, unet3d, ..., flux or dlrm". */
extern const char rb_train_preset_list[];

/* ---- Distributions: "MEAN[/STDEV]" values drawn per object or per step, seeded ---- */

/* Parses "SIZE" or "SIZE/STDEV" (sizes as rb_parse_size reads them). Returns 0 or -EINVAL. */
int rb_train_parse_size_dist(const char *s, uint64_t *mean_bytes, uint64_t *stdev_bytes);

/* Parses "D" or "D/STDEV" (durations as rb_parse_duration reads them). Returns 0 or -EINVAL. */
int rb_train_parse_duration_dist(const char *s, uint64_t *mean_ns, uint64_t *stdev_ns);

/* A standard normal variate that is a pure function of key (Box-Muller over two SplitMix64 outputs). */
double rb_train_normal(uint64_t key);

/* mean + stdev x rb_train_normal(key), rounded, never below floor_value. */
uint64_t rb_train_draw(uint64_t mean, uint64_t stdev, uint64_t key, uint64_t floor_value);

/*
 * Size of object name holding spo samples whose sizes are normal (mean,
 * stdev): a sum of spo such samples is normal (spo x mean, sqrt(spo) x
 * stdev), drawn once from (seed, name). At least 1 byte.
 */
uint64_t rb_train_object_bytes(uint64_t seed, const char *name, uint64_t spo, uint64_t mean_bytes,
                               uint64_t stdev_bytes);
/* The same from the object's payload key (rb_payload_key(seed, name)): what a file format's fill draws. */
uint64_t rb_train_key_object_bytes(uint64_t payload_key, uint64_t spo, uint64_t mean_bytes, uint64_t stdev_bytes);

/* Compute time of one accelerator in one step, from --compute-time MEAN/STDEV and the step's coordinates. */
uint64_t rb_train_compute_ns(uint64_t mean_ns, uint64_t stdev_ns, uint64_t seed, uint64_t epoch, int rank,
                             unsigned accel, uint64_t step);

/* ---- Dataset layout of an epoch ---- */

/*
 * Steps every rank takes in an epoch: the samples of the smallest rank's
 * share (floor(nobjects / ranks) objects of spo samples) divided by the
 * samples one step consumes (accel x batch), rounded down — the partial
 * last step is dropped, as DLIO drops it (steps = floor(samples / (batch
 * x ranks))). max_steps (0 = none) caps it.
 */
uint64_t rb_train_steps(uint64_t nobjects, int ranks, uint64_t spo, uint64_t accel, uint64_t batch,
                        uint64_t max_steps);

/*
 * The objects rank reads in an epoch, in order: positions rank, rank +
 * ranks, ... of the epoch's seeded permutation of all n objects, so every
 * object belongs to exactly one rank per epoch and the owner changes from
 * epoch to epoch. *out is malloc'd (caller frees). Returns 0 or -ENOMEM.
 */
int rb_train_epoch_stream(size_t n, uint64_t seed, uint64_t epoch, int rank, int ranks, uint32_t **out,
                          size_t *nout);

/*
 * Batch k takes samples [k x batch, (k+1) x batch) of the rank's stream;
 * with spo samples per object, sample j lives in object j / spo, and an
 * object is read whole by the batch that takes its first sample (the later
 * samples come from memory, as sharded readers such as TFRecord do).
 * Sets the objects batch k reads: stream positions [*first, *first + *count).
 */
void rb_train_batch_objects(uint64_t k, uint64_t batch, uint64_t spo, uint64_t *first, uint64_t *count);

/* ---- Step accounting: AU and throughput ---- */

/* One simulated accelerator's sums over an epoch. */
struct rb_train_tally {
    uint64_t steps;          /* steps completed, the first included */
    uint64_t samples;        /* samples consumed, the first step included */
    uint64_t wall_ns;        /* wall time of every step, the first included */
    uint64_t au_compute_ns;  /* compute time of the steps after the first */
    uint64_t au_wall_ns;     /* wall time of the steps after the first */
};

/*
 * When the slowest of n accelerators finishes its compute: the largest
 * ready_ns[a] + compute_ns[a]. Each accelerator starts computing the
 * moment its batch is ready, all of them in parallel (they are separate devices).
 */
uint64_t rb_train_compute_end(const uint64_t *ready_ns, const uint64_t *compute_ns, unsigned n);

/*
 * Accounts one completed step of n accelerators, each consuming batch
 * samples: the step ran from start_ns to end_ns (after the barrier or
 * all-reduce); accelerator a's batch was ready at ready_ns[a] and it
 * computed for compute_ns[a]; the trainer woke at wake_ns. A late wake
 * (wake_ns past rb_train_compute_end) is the host's timer, not storage: it
 * is charged to compute, as DLIO's clock-measured compute time charges it,
 * of the accelerators that computed (a starved one, compute_ns[a] 0, had no
 * sleep to be late from: a step whose reads all failed adds no compute).
 * Data waits (ready_ns[a] - start_ns) of steps after the first go into
 * wait when it is not NULL.
 */
void rb_train_step_account(struct rb_train_tally *t, unsigned n, uint64_t batch, uint64_t start_ns,
                           const uint64_t *ready_ns, const uint64_t *compute_ns, uint64_t wake_ns,
                           uint64_t end_ns, struct rb_hist *wait);

/*
 * Accelerator utilisation of one accelerator in percent: compute time over
 * wall time, both without the first step (MLPerf Storage rules; DLIO's
 * compute_metrics_train: AU = sum(compute) / (epoch time - first step)).
 * 0 when fewer than two steps were taken.
 */
double rb_train_au_pct(const struct rb_train_tally *t);

/* Throughput: count (samples or bytes) per second of wall_ns; 0 when wall_ns is 0. */
double rb_train_per_s(uint64_t count, uint64_t wall_ns);

/* One rank's figures of an epoch. */
struct rb_train_rank {
    uint64_t steps, samples, bytes, wall_ns;
    double au_pct;           /* mean over the rank's accelerators */
};

/* Combines a rank's n accelerator tallies (and the bytes its loader read) into its figures. */
void rb_train_rank_figures(const struct rb_train_tally *acc, unsigned n, uint64_t bytes, struct rb_train_rank *out);

/* An epoch's figures over every rank. */
struct rb_train_figures {
    uint64_t steps;          /* fewest steps of any rank (they differ only when interrupted) */
    uint64_t samples, bytes; /* summed over ranks */
    double samples_per_s;    /* sum over ranks of each rank's samples / its wall time */
    double bytes_per_s;      /* the same for bytes */
    double au_pct;           /* mean over ranks (every rank has the same number of accelerators) */
};

/*
 * Samples/s and bytes/s summed over ranks (MLPerf Storage's throughput is
 * samples/s summed over the simulated accelerators), AU averaged.
 */
void rb_train_epoch_figures(const struct rb_train_rank *ranks, size_t n, struct rb_train_figures *out);

/* The run's AU and samples/s: plain means over the epochs, as DLIO reports train_au_mean_percentage and throughput. */
void rb_train_run_figures(const struct rb_train_figures *epochs, size_t n, double *au_mean_pct,
                          double *samples_per_s);

/* ---- Searching the most accelerators that keep AU at or above the threshold ---- */

/*
 * Doubling, then bisection, over accelerators per rank in [1, max]: next
 * is the count to try; after each trial rb_train_search_record says
 * whether it met the threshold. lo is the largest count that met it (0:
 * none did), hi the smallest that failed (0: none failed yet).
 */
struct rb_train_search {
    uint64_t max, next, lo, hi;
    bool done;
};

/* Starts a search up to max accelerators per rank (max >= 1). */
void rb_train_search_init(struct rb_train_search *s, uint64_t max);

/* Records whether s->next met the threshold; sets the next count to try, or done. */
void rb_train_search_record(struct rb_train_search *s, bool met);

/* ---- Command ---- */

/* `railbench load train` (argv[0] = "train"); returns the exit status. */
int rb_load_train_main(int argc, char **argv);

#endif
