/* Prometheus exposition: a registry of the run's metrics, a /metrics listener, textfile and Pushgateway output. */
#ifndef RB_PROM_H
#define RB_PROM_H

#include <stddef.h>
#include <stdint.h>

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
 * defaults to 127.0.0.1), in the format the scrape's Accept header asks for
 * (rb_prom_negotiate). Scrapes read what was last published with
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

/*
 * Records one request phase's histogram (--phases: a span such as
 * "first_byte", here its "step") of a load phase and op (copied):
 * railbench_request_step_seconds{op, phase, step}, a histogram family
 * beside the latency's (classic buckets; native buckets in the protobuf
 * form). A later call for the same phase, op and step replaces it. Not
 * thread-safe: call from the thread that publishes.
 */
void rb_prom_step(struct rb_prom *p, const char *phase, const char *op, const char *step, const struct rb_hist *h);

/* Longest request id an exemplar keeps (longer ones are cut to this many bytes). */
#define RB_PROM_ID_MAX 64

/*
 * Offers one request as an exemplar of the latency histogram of {op, phase}:
 * value_s its latency in seconds, request_id its id, ts_s when it completed
 * (Unix seconds; Prometheus drops an exemplar older than the last it stored
 * for a series). Each classic bucket keeps at most one exemplar, the largest
 * value offered to it, so the slowest request stays visible. Rendered in the
 * OpenMetrics and protobuf forms (never in the classic text). Not
 * thread-safe: call from the thread that publishes.
 */
void rb_prom_exemplar(struct rb_prom *p, const char *phase, const char *op, double value_s,
                      const char *request_id, double ts_s);

/* Renders the whole exposition text (classic text format 0.0.4); caller frees. NULL when out of memory. */
char *rb_prom_render(const struct rb_prom *p);

/* Renders OpenMetrics 1.0.0 text with exemplars, ending "# EOF"; caller frees. NULL when out of memory. */
char *rb_prom_render_openmetrics(const struct rb_prom *p);

/*
 * Renders the protobuf form: length-delimited io.prometheus.client.MetricFamily
 * messages, histograms with their classic buckets and native buckets of
 * schema RB_PROM_NATIVE_SCHEMA. *out (caller frees) gets *len bytes. Returns 0
 * or -ENOMEM.
 */
int rb_prom_render_protobuf(const struct rb_prom *p, void **out, size_t *len);

/* Renders every form and makes them what the listener serves from now on. */
void rb_prom_publish(struct rb_prom *p);

enum rb_prom_format { RB_PROM_TEXT, RB_PROM_OPENMETRICS, RB_PROM_PROTOBUF };

/*
 * The format for a scrape's Accept header (NULL: none): the acceptable media
 * range with the highest q (the first on a tie) among protobuf
 * (application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;
 * encoding=delimited), OpenMetrics (application/openmetrics-text) and the
 * classic text (text/plain or any type); the classic text when none is.
 */
enum rb_prom_format rb_prom_negotiate(const char *accept);

/*
 * Native histograms: schema 6, 64 buckets per power of two, bucket k covering
 * (2^((k-1)/64), 2^(k/64)] seconds. Each bucket of struct rb_hist goes whole
 * into the native bucket holding its midpoint (rb_prom_native_index), so a
 * native bucket's count is exact for the values that bucket assignment gives
 * it, and a quantile read from the native histogram is within a factor
 * RB_PROM_NATIVE_ERROR of railbench's own (0 < q < 1).
 */
#define RB_PROM_NATIVE_SCHEMA 6
#define RB_PROM_NATIVE_ERROR 1.015
/* The native bucket index of a value in seconds (> 0) at RB_PROM_NATIVE_SCHEMA. */
int32_t rb_prom_native_index(double v_s);
/* The upper bound in seconds of native bucket k (its lower bound is rb_prom_native_upper(k - 1)). */
double rb_prom_native_upper(int32_t k);
/* The value in seconds a bucket of struct rb_hist stands for in the native histogram: its midpoint. */
double rb_prom_native_value(size_t hist_bucket);

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
