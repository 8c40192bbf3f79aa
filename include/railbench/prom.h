/* Prometheus exposition: a registry of the run's metrics, a /metrics listener, textfile and Pushgateway output. */
#ifndef RB_PROM_H
#define RB_PROM_H

#include <stddef.h>

#include "railbench/stats.h"

struct rb_prom;

/*
 * A new, empty registry. const_labels ('k="v",k2="v2"', already escaped, or
 * "" / NULL) are added to every series. Returns NULL when out of memory.
 */
struct rb_prom *rb_prom_new(const char *const_labels);

/* Stops the listener (if any) and frees everything; NULL-safe. */
void rb_prom_free(struct rb_prom *p);

/*
 * Serves GET /metrics from a background thread on spec "[ADDR:]PORT" (ADDR
 * defaults to 127.0.0.1). Scrapes read the text last published with
 * rb_prom_publish, never the live registry. Returns 0; -EINVAL when spec is
 * malformed (msg says why); another -errno when the socket cannot be bound
 * (e.g. -EADDRINUSE). msg gets one line without a trailing newline.
 */
int rb_prom_listen(struct rb_prom *p, const char *spec, char *msg, size_t msglen);

/*
 * Sets one sample of a gauge or counter family (type "gauge" or "counter";
 * counters are named *_total). labels is 'k="v",...' (escape values with
 * rb_prom_escape) or "". A later call with the same name and labels replaces
 * the value. Not thread-safe: call from the thread that publishes.
 */
void rb_prom_set(struct rb_prom *p, const char *name, const char *type, const char *help,
                 const char *labels, double value);

/*
 * Records a phase's cumulative totals (copied): requests, bytes, errors by
 * class, events (extra counters) and the latency and TTFB histograms with
 * labels {op, phase}. A later call for the same phase and op replaces them.
 */
void rb_prom_phase(struct rb_prom *p, const char *phase, const char *op,
                   const struct rb_stats_names *names, const struct rb_stats *total);

/* Renders the whole exposition text; caller frees. NULL when out of memory. */
char *rb_prom_render(const struct rb_prom *p);

/* Renders and makes the text what the listener serves from now on. */
void rb_prom_publish(struct rb_prom *p);

/* Writes DIR/railbench.prom through a temporary name and rename. Returns 0 or -errno. */
int rb_prom_write_textfile(const struct rb_prom *p, const char *dir);

/*
 * PUTs the exposition to a Pushgateway: URL/metrics/job/railbench/instance/<instance>.
 * Returns 0, or -EIO with msg naming the HTTP status or transport error.
 */
int rb_prom_push(const struct rb_prom *p, const char *url, const char *instance, char *msg,
                 size_t msglen);

/* Escapes a label value (backslash, double quote, newline) into out; truncates to fit. */
void rb_prom_escape(char *out, size_t len, const char *value);

/*
 * The histogram's "le" boundaries in nanoseconds: 2^e x {1, 1.25, 1.5, 1.75}
 * from 1.024 us to about 120 s. Each is a bucket boundary of struct rb_hist,
 * so cumulative counts are exact (a value equal to a boundary counts above it).
 */
size_t rb_prom_le_count(void);
uint64_t rb_prom_le_ns(size_t i);

#endif
