/* Alpha-beta model of collectives on a fabric topology, with link sharing, and its calibration against measured runs. */
#ifndef RB_FABRIC_SIM_INT_H
#define RB_FABRIC_SIM_INT_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "railbench/buf.h"
#include "railbench/busbw.h"
#include "topo_int.h"

/* The algorithms of railbench coll that the model knows (coll's "mpi" has no fixed schedule). */
enum rb_sim_algo { RB_SIM_RING, RB_SIM_RD, RB_SIM_RHD, RB_SIM_TREE, RB_SIM_HIER, RB_SIM_ALGOS };

/* Pipelining chunk of ring broadcast and reduce: fixed, so time stays linear in the link parameters. */
#define RB_SIM_CHUNK_BYTES (512.0 * 1024.0)

/* Above this many ranks, pairwise alltoall evaluates an even sample of its p-1 shift patterns. */
#define RB_SIM_ALLTOALL_EXACT_RANKS 4096
#define RB_SIM_ALLTOALL_SAMPLES 1024

/* "ring", "rd", "rhd", "tree", "hier"; NULL for an invalid algorithm. */
const char *rb_sim_algo_name(enum rb_sim_algo a);
/* Parses an algorithm name; returns 0 or -EINVAL. */
int rb_sim_algo_parse(const char *s, enum rb_sim_algo *a);
/* True when the model has a schedule for collective k with algorithm a (docs/fabric.md lists them). */
bool rb_sim_supports(enum rb_coll_kind k, enum rb_sim_algo a);

/*
 * A predicted time split by model parameter:
 * t = sum_c lat[c] * lat_s[c] + sum_c bytes[c] / bw[c] + reduce_bytes / reduce_bw.
 * lat counts link traversals on the critical path; bytes are charged to the
 * bottleneck class of each step, multiplied by how many flows share it.
 */
struct rb_sim_terms {
    double lat[RB_LINK_CLASSES];
    double bytes[RB_LINK_CLASSES];
    double reduce_bytes;
};

struct rb_sim;

/*
 * Prepares the model of topology t (finished, copied) with PXN on or off
 * (forced on for rail-only, which has no other cross-rail path). Needs at
 * least 2 GPUs. Returns 0, -EINVAL or -ENOMEM. Not thread-safe; one per thread.
 */
int rb_sim_create(const struct rb_topo *t, bool pxn, struct rb_sim **out);

/* Releases s; NULL-safe. */
void rb_sim_free(struct rb_sim *s);

/* Ranks (GPUs) of the modelled topology. */
int rb_sim_ranks(const struct rb_sim *s);

/* Replaces latencies, bandwidths and the reduction throughput; the geometry stays. */
void rb_sim_set_params(struct rb_sim *s, const struct rb_link link[RB_LINK_CLASSES], double reduce_bytes_per_s);

/*
 * Predicted time of one collective k with algorithm a moving size_bytes (the
 * "size" column of nccl-tests: the whole array for allgather and
 * reducescatter, one rank's send buffer for alltoall). terms, when not NULL,
 * receives the split. Returns 0, or -EINVAL for an unsupported pair or a
 * negative size.
 */
int rb_sim_time(struct rb_sim *s, enum rb_coll_kind k, enum rb_sim_algo a, double size_bytes, double *time_s,
                struct rb_sim_terms *terms);

/*
 * Predicted time of an all-to-all of uneven sizes, m[i x p + j] the bytes
 * rank i sends rank j (p = rb_sim_ranks), as a pairwise exchange: p - 1
 * shifts, each as long as its slowest message over the links the shift's
 * flows share (PXN as s was made). Returns 0, -EINVAL above
 * RB_SIM_ALLTOALL_EXACT_RANKS ranks, -ENOMEM.
 */
int rb_sim_alltoallv_time(struct rb_sim *s, const double *m, double *time_s);

/* Evaluates a split with other parameters. */
double rb_sim_terms_time(const struct rb_sim_terms *x, const struct rb_link link[RB_LINK_CLASSES],
                         double reduce_bytes_per_s);

/* railbench fabric sim moe (sim_moe.c); argv[0] is "moe". Returns the exit status. */
int rb_fabric_sim_moe_main(int argc, char **argv);

/* ---- Calibration (fabric/calibrate.c) ---- */

/* algo value of a measured row whose algorithm the model does not fix ("mpi"): the fastest modelled one. */
#define RB_CALIB_ALGO_BEST (-1)

/* One measured row of a railbench coll result. */
struct rb_calib_row {
    enum rb_coll_kind coll;
    int algo;                 /* enum rb_sim_algo or RB_CALIB_ALGO_BEST */
    char algo_name[16];
    double size_bytes;
    int ranks, ranks_per_node;
    double measured_s;
    double default_s, fitted_s; /* filled by rb_calib_fit */
};

/* Parameters fitted per link class, and how well they explain the rows. */
struct rb_calib {
    struct rb_link link[RB_LINK_CLASSES];
    double reduce_bytes_per_s;
    bool lat_fitted[RB_LINK_CLASSES]; /* the rows constrain this parameter (else it keeps its default) */
    bool bw_fitted[RB_LINK_CLASSES];
    bool reduce_fitted;
    double err_default;       /* mean |predicted - measured| / measured with the defaults */
    double err_fitted;        /* the same after the fit */
    int iterations;
    int unbounded;            /* parameters the times did not grow with (fit at 0): kept at the default */
};

/*
 * Reads the rows of a railbench coll result (a directory or its
 * result.json): summary.collective_rows[] with coll, algo, size_bytes,
 * ranks, ranks_per_node and oop.time_us (ip.time_us when oop is missing).
 * Predicted rows, rows of unknown collectives or algorithms, and rows
 * whose ranks are not a multiple of ranks_per_node are skipped and
 * counted in *skipped. Returns 0 (caller frees *rows), or -EINVAL with a
 * message in err (unreadable, not a coll result, no usable row).
 */
int rb_calib_read(const char *path, struct rb_calib_row **rows, size_t *n, size_t *skipped, char *err,
                  size_t errlen);

/*
 * Fits latency and bandwidth per link class and the reduction throughput
 * to the rows, starting from (and regularised towards) the parameters of
 * base, whose nodes and GPUs per node are replaced by each row's ranks and
 * ranks_per_node. Least squares on relative errors, parameters kept >= 0,
 * repeated while the bottleneck of a step moves. Fills out and each row's
 * default_s and fitted_s. Returns 0, -EINVAL (err says which row does not
 * fit the topology) or -ENOMEM.
 */
int rb_calib_fit(const struct rb_topo *base, bool pxn, struct rb_calib_row *rows, size_t n, struct rb_calib *out,
                 char *err, size_t errlen);

/* ---- Calibration per message-size band (fabric/calibrate_bands.c) ---- */

#define RB_CALIB_MAX_BANDS 4

/* One band: rows [first, first + n) of the size-sorted rows, sizes min_bytes..max_bytes, and their own fit. */
struct rb_calib_band {
    size_t first, n;
    double min_bytes, max_bytes;
    struct rb_calib fit;
    bool physical;   /* every fitted parameter is within rb_calib_physical's ranges */
    char why[160];   /* when not physical: which parameter, and its value */
};

struct rb_calib_bands {
    int nbands;
    struct rb_calib_band band[RB_CALIB_MAX_BANDS];
    double err_default, err_fitted; /* mean |predicted - measured| / measured over every row */
};

/*
 * True when every parameter c fitted lies in a physical range (latency
 * 1 ns .. 1 s, bandwidth 1 Mbit/s .. 100 Tbit/s, reduction 1 MB/s ..
 * 100 TB/s); else false with the first offender in why.
 */
bool rb_calib_physical(const struct rb_calib *c, char *why, size_t len);

/*
 * Piecewise calibration: sorts rows by size and splits them into at most
 * max_bands contiguous size bands of at least 3 distinct sizes each, every
 * band with its own rb_calib_fit (the curve of CPU ranks bends where
 * messages leave the caches). Takes the split with the lowest mean error;
 * one more band only when it cuts that error by 2 points and by a fifth;
 * splits with a parameter outside physical ranges are not taken. Fills out
 * and each row's default_s and fitted_s (from its band). Returns 0; -EDOM
 * for a degenerate fit, with the reason in err (one size only, or no split
 * with physical parameters); -EINVAL (err says why) or -ENOMEM.
 */
int rb_calib_fit_bands(const struct rb_topo *base, bool pxn, struct rb_calib_row *rows, size_t n, int max_bands,
                       struct rb_calib_bands *out, char *err, size_t errlen);

/*
 * fabric sim --calibrate PATH (fabric/calibrate_cmd.c): reads the coll
 * result, fits up to max_bands bands on base, prints each row's error, the
 * mean, and each band's parameters into out, adds "calibration" to summary,
 * and with save writes the topology of the band of the largest sizes.
 * Returns 0, RB_EXIT_USAGE (unreadable input), RB_EXIT_CHECK after one line
 * when the fit is degenerate, or RB_EXIT_RUNTIME.
 */
int rb_calib_cmd(const char *path, const struct rb_topo *base, bool pxn, const char *save, int max_bands,
                 struct rb_buf *out, cJSON *summary);

#endif
