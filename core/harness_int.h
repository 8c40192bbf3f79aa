/* Internals shared by core/harness.c and core/harness_metrics.c. */
#ifndef RB_HARNESS_INT_H
#define RB_HARNESS_INT_H

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

#endif
