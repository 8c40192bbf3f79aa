/* Load phases on the harness: one engine per rank, interval stats, reduced results, the summary row and report. */
#ifndef RB_PHASE_INT_H
#define RB_PHASE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "engine_int.h"
#include "mixed_int.h"
#include "rphase_int.h"
#include "railbench/harness.h"
#include "steady_int.h"
#include "railbench/result.h"

/* Main thread only (a phase is collective over the ranks; its engine's threads stay inside). */

/* The outcome of one load phase on rank 0 (other ranks: only duration_s). */
struct rb_load_result {
    const char *phase, *op;
    struct rb_stats *total;           /* owned */
    /* owned: multipart PUT or ranged GET, one record per part (extras rb_mp_extra_names); a GET with tar_samples,
     * one record per sample; else NULL */
    struct rb_stats *parts;
    /*
     * An https:// endpoint: the native engine's TLS handshakes summed over
     * ranks (owned, rank 0: ops handshakes, lat their times, extras enum
     * rb_tls_extra), or NULL with tls_unmeasured when libcurl ran them (it
     * does not report them apart). Neither: no TLS.
     */
    struct rb_stats *tls;
    bool tls_unmeasured;
    /* load mixed (o->mix): each op's stats (rank 0; NULL otherwise), objects live and unknown at the end (rank 0). */
    struct rb_stats *mix_ops[RB_MIX_OPS];
    uint64_t mix_live, mix_unknown, mix_dry; /* mix_dry: threads that ran out of objects before their limits */
    struct rb_objset leftover;        /* every rank: its objects this put or mixed run wrote and left (what cleanup deletes) */
    struct rb_objset unknown;         /* every rank, o->track_written: its puts whose outcome is unknown (timed out, reset,
                                       * in flight at the end): the server may hold them (rb_written_unknown) */
    /* rb_cleanup_probe (rank 0's sums): puts looked up, found stored, not known (HEAD failed too); their list. */
    uint64_t probed, probed_left, probed_unknown;
    char probe_list[4200];
    struct rb_hist *uncorrected;      /* owned: latency from the actual send time */
    /* --phases: the requests' spans over all ranks (owned, rank 0), or NULL; --slowest: the slowest requests of all
     * ranks (rank 0), slowest first; inflight names their connections (rb_slow_id). */
    struct rb_rphases *rph;
    struct rb_rphases *mix_rph[RB_MIX_OPS]; /* load mixed with --phases: each op's spans (owned, rank 0), or NULL */
    struct rb_slowheap slow;
    unsigned inflight;
    const struct rb_target *target;   /* borrowed: the endpoints the slowest went to */
    uint64_t *segments;               /* owned: bytes per whole second, all ranks (requests for DELETE, HEAD) */
    bool segments_ops;                /* segments count requests: the op moves no bytes */
    size_t nsegments;
    double duration_s;
    /* Every rank: its own time from the phase start to the end of its engine's last worker loop (the phase's end
     * if it was stopped), for per-rank figures (load checkpoint's slowest rank). */
    double rank_busy_s;
    bool open_loop;
    double rate_per_s;                /* the open loop's target over all ranks; 0 closed loop */
    double send_window_s;             /* the open loop's send window (rb_engine_send_window_ns), latest over ranks */
    /* The host counters over the phase (rank 0): disk utilisation averaged over hosts, network summed over hosts. */
    double disk_util_ratio;
    double net_rx_bytes_per_s, net_tx_bytes_per_s;
    /* --until-steady (asked when steady_pct > 0): whether throughput settled before another limit, and when. */
    double steady_pct, steady_window_s, steady_at_s;
    bool steady_converged;
};

/*
 * Runs one GET or PUT phase of o on every rank (collective): an engine per
 * rank started at the harness's barrier, interval stats through the
 * harness, then the uncorrected histograms and 1-second segments reduced to
 * rank 0 into res, and the phase record extended with them. duration_ns 0
 * means until every rank's limits are reached. Returns 0 or an exit status.
 */
int rb_load_run_phase(struct rb_harness *h, const char *name, uint64_t duration_ns,
                      const struct rb_load_opts *o, struct rb_load_result *res);
/* How a phase runs beyond what its engine does (the engine's options, o, carry only what the engine uses). */
struct rb_load_phase_opts {
    /*
     * --until-steady (steady.pct > 0): the phase also ends once throughput is
     * steady (rank 0 decides at each tick from the merged interval: bytes for
     * GET/PUT, requests for DELETE/HEAD) and the record says whether it converged.
     */
    struct rb_steady_opts steady;
    /* This rank starts its requests this long after the phase start (a rank slowed on purpose: load checkpoint
     * --delay-rank); 0 = none. */
    uint64_t start_delay_ns;
    /*
     * A target that cannot serve the load ends the phase early: once the
     * ranks' first RB_LOAD_HOPELESS_REQUESTS requests were all answered 403
     * or 404 (a missing bucket, names the server does not have) and none
     * otherwise, checked at each tick. The phase then returns RB_EXIT_RUNTIME
     * after one error line.
     */
    bool stop_hopeless;
};

/* How many requests, all answered 403 or 404 and none otherwise, make a target hopeless (stop_hopeless). */
#define RB_LOAD_HOPELESS_REQUESTS 16


/* rb_load_run_phase as po says (NULL: as rb_load_run_phase). */
int rb_load_run_phase_with(struct rb_harness *h, const char *name, uint64_t duration_ns, const struct rb_load_opts *o,
                           const struct rb_load_phase_opts *po, struct rb_load_result *res);

/*
 * After the engine stopped: its request spans and slowest requests reduced
 * over the ranks into rank 0's res (rph, slow), and the phase record (rank
 * 0, may be NULL) given the spans' histograms. Collective. rphase_run.c.
 */
void rb_load_reduce_rphases(struct rb_harness *h, const struct rb_engine *e, const struct rb_load_opts *o,
                            struct rb_load_result *res, cJSON *record);
/* The summary row's "request_phases" and "slowest" of res (nothing when it has neither). rphase_run.c. */
void rb_load_rphases_json(cJSON *row, const struct rb_load_result *res);
/* Appends res's spans and slowest requests to the load table (markdown). Returns 0 or -ENOMEM. rphase_run.c. */
int rb_load_rphases_md(const struct rb_load_result *res, char **buf, size_t *len);
/*
 * Calls fn for each of res's slowest requests, slowest first (rank 0, after
 * the phase): its id (rb_slow_id), op name, latency and end (wall clock, ns
 * since the epoch). Stops at fn's first non-zero and returns it; 0 otherwise.
 */
int rb_load_slowest_each(const struct rb_load_result *res,
                         int (*fn)(const char *id, const char *op, uint64_t lat_ns, uint64_t end_wall_ns, void *arg),
                         void *arg);

/* Frees what rb_load_run_phase allocated in res; NULL-safe. */
void rb_load_result_free(struct rb_load_result *res);

/*
 * The warp-like summary row of res: op, phase, objects, bytes, throughput,
 * latency, TTFB and uncorrected latency summaries, 1-second segments
 * (fastest/median/slowest), errors by class and extra counters.
 */
cJSON *rb_load_summary_json(const struct rb_load_result *res);

/* Appends printf's fmt to the buffer *buf of *len bytes (realloc'd). Returns 0, -EINVAL or -ENOMEM. */
int rb_load_md_append(char **buf, size_t *len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Appends a table row "| label | avg | p50 | p90 | p99 | p99.9 | max |" of h (– where it is empty). As above. */
int rb_load_md_latency_row(char **buf, size_t *len, const char *label, const struct rb_hist *h);

/* Appends res's report section (markdown) to the buffer *buf of *len bytes (realloc'd). Returns 0 or -ENOMEM. */
int rb_load_report_md(const struct rb_load_result *res, char **buf, size_t *len);

/* The fraction of an open loop's target rate it must achieve, or its rate check fails. */
#define RB_LOAD_RATE_MIN_FRACTION 0.95

/*
 * The send rate res's open loop achieved: requests sent (every request but
 * those abandoned) over the window in which it was sending
 * (rb_engine_send_window_ns, the latest over ranks), so the last responses'
 * latency does not count against the rate. NAN without a window. Rank 0.
 */
double rb_load_achieved_rate(const struct rb_load_result *res);

/*
 * Records the check "rate" on r: achieved_per_s at least
 * RB_LOAD_RATE_MIN_FRACTION of target_per_s; what names the phase or is
 * NULL. Logs an error when it fails. Returns whether it passed.
 */
bool rb_load_check_rate(struct rb_result *r, const char *what, double target_per_s, double achieved_per_s);

/*
 * The load commands' one error policy: the run fails (check error_rate, exit 1)
 * when more than max_pct percent of its requests failed, and when no request
 * was made at all (nothing was measured). The default --max-error-rate of
 * every load command is 0: any failed request fails the run. what names the
 * phase (or NULL for the whole run), noun the request kind ("requests",
 * "reads"). Records the check on r in every case; returns whether it passed.
 */
bool rb_load_check_errors(struct rb_result *r, const char *what, const char *noun, const uint64_t *err_by_class,
                          uint64_t errors, uint64_t requests, double max_pct);

/* rb_load_check_errors without its error line: for a run that already ended on one (exit 3). */
bool rb_load_record_errors(struct rb_result *r, const char *what, const char *noun, const uint64_t *err_by_class,
                           uint64_t errors, uint64_t requests, double max_pct);

/* Whether errors of requests are above max_pct percent, or no request was made. */
bool rb_load_errors_over(uint64_t errors, uint64_t requests, double max_pct);

/* The help text of --max-error-rate, the same for every load command. */
#define RB_LOAD_MAX_ERROR_HELP "exit 1 (check error_rate) when more than PCT % of requests fail; default 0: any failure"

#endif
