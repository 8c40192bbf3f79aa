/* Internals shared by core/harness.c and its parts (harness_metrics.c, harness_hosts.c, harness_dir.c, harness_sys.c). */
#ifndef RB_HARNESS_INT_H
#define RB_HARNESS_INT_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "railbench/harness.h"

/* Starts the exporters the common options ask for; returns an exit status agreed by every rank. */
int rb_harness_metrics_init(struct rb_harness *h);

/* Final metrics: last publish, textfile, Pushgateway, then --prom-linger for a last scrape; frees them. */
void rb_harness_metrics_finish(struct rb_harness *h);

/*
 * Straggler hosts (core/harness_hosts.c): reduces every rank's phase total
 * over its host, gathers one record per host to rank 0, and adds "hosts"
 * and "outliers" (rb_outlier_is at RB_OUTLIER_THRESHOLD on throughput,
 * ops/s and p99 latency) to p->record; prints them unless quiet. Collective;
 * a no-op without MPI, on one host, or for a phase without stats.
 */
void rb_harness_hosts_record(struct rb_harness *h, struct rb_phase *p, const struct rb_stats *rank_total);

/* ---- harness_live.c: bounded agreements between ranks ---- */

/* Duplicates the agreements' communicator and gathers every rank's pid and host to rank 0. Collective. */
void rb_harness_live_init(struct rb_harness *h);
/* Rank 0: adds the phase record (totals, host counters, interruption) to the record r (h->result's, or a copy). */
void rb_harness_record_phase(struct rb_harness *h, struct rb_result *r, struct rb_phase *p, uint64_t wall0,
                             cJSON *counters);
/*
 * Rank 0: result.json as it stands, with the phase in its tick loop as far
 * as its ticks went and the interruption, written at once (mpirun sends
 * SIGKILL 1 s after SIGTERM); the end of the run writes the whole record over it.
 */
void rb_harness_write_early(struct rb_harness *h);
/* Rank 0: adds the phase in its tick loop (h->running) to the record as far as its ticks went ("cut_short"). */
void rb_harness_record_running(struct rb_harness *h);
/* Frees what rb_harness_live_init made, the record watchdog stopped. */
void rb_harness_live_free(struct rb_harness *h);
/* Rank 0 with ranks to wait for: starts the record watchdog (rb_harness_opts.own_watchdog). */
void rb_harness_watch_start(struct rb_harness *h);

/* ---- harness_dir.c: the result directory (rank 0) ---- */

/* This run's id: the start time and 24 random bits (two runs in one second still differ). */
void rb_harness_make_run_id(char *buf, size_t len);
/* The shallowest directory of path (itself included) that does not exist yet into made; "" when path exists. */
void rb_harness_first_missing(const char *path, char *made, size_t len);
/*
 * Makes the default result directory railbench-results/<UTC time>-<command>
 * (-2, -3, ... in the same second), its path into buf; made gets the first
 * directory it created. Returns 0 or -errno.
 */
int rb_harness_default_out_dir(char *buf, size_t len, const char *command, char *made, size_t made_len);
/* Removes what h's run made of its result directory (a run refused before measuring). */
void rb_harness_unmake_out_dir(const struct rb_harness *h);
/* Claims the result directory (rb_result_dir_claim): 0, or an exit status (2 or 3) after one line saying why. */
int rb_harness_claim_out_dir(const char *dir, bool force, const char *run_id);

/* ---- harness_sys.c: host facts from /proc ---- */

/* This host's record: name, kernel, CPU model, memory (the host's first rank). */
cJSON *rb_harness_host_info(const struct rb_harness *h);
/* Records every host's rss_max_bytes and pss_bytes in the result's hosts (collective, at the end). */
void rb_harness_record_rss(struct rb_harness *h);

#endif
