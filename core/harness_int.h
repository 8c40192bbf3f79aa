/* Internals shared by core/harness.c and core/harness_metrics.c. */
#ifndef RB_HARNESS_INT_H
#define RB_HARNESS_INT_H

#include "railbench/harness.h"

/* Starts the exporters the common options ask for; returns an exit status agreed by every rank. */
int rb_harness_metrics_init(struct rb_harness *h);

/* Final metrics: last publish, textfile, Pushgateway, then --prom-linger for a last scrape; frees them. */
void rb_harness_metrics_finish(struct rb_harness *h);

#endif
