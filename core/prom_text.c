/* The walk over a Prometheus registry in exposition order, and the two text formats it feeds: the classic
 * text format 0.0.4 and OpenMetrics 1.0.0 with exemplars. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "railbench/buf.h"

#include "prom_int.h"

/* Success class of a phase: HTTP phases count successes as 2xx, others as ok. */
static const char *ok_class(const struct rb_prom_phase *ph)
{
    for (size_t i = 0; ph->err && ph->err[i]; i++)
        if (strncmp(ph->err[i], "http_", 5) == 0)
            return "2xx";
    return "ok";
}

/* The code_class an error class belongs to: http_4xx -> 4xx, http_5xx -> 5xx, the rest -> error. */
static const char *err_code_class(const char *cls)
{
    if (strncmp(cls, "http_", 5) == 0)
        return cls + 5;
    return "error";
}

/* The labels op="..",phase=".." of a phase, escaped, followed by extra (a printf format) when given. */
static void phase_labels(char *out, size_t len, const struct rb_prom_phase *ph, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void phase_labels(char *out, size_t len, const struct rb_prom_phase *ph, const char *fmt, ...)
{
    char ph_[256], op_[128], more[512] = "";
    rb_prom_escape(ph_, sizeof ph_, ph->phase);
    rb_prom_escape(op_, sizeof op_, ph->op);
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(more, sizeof more, fmt, ap);
        va_end(ap);
    }
    snprintf(out, len, "op=\"%s\",phase=\"%s\"%s%s", op_, ph_, *more ? "," : "", more);
}

static void walk_requests(const struct rb_prom *p, const struct rb_prom_sink *k)
{
    char l[1024];
    k->family(k->ctx, "railbench_requests_total", "counter", "Completed operations by outcome class.");
    for (size_t i = 0; i < p->nphases; i++) {
        const struct rb_prom_phase *ph = &p->phases[i];
        if (!ph->has_stats)
            continue;
        const struct rb_stats *s = ph->stats;
        phase_labels(l, sizeof l, ph, "code_class=\"%s\"", ok_class(ph));
        k->count(k->ctx, "railbench_requests_total", l, s->ops - s->errors);
        /* Error classes sharing a code class (e.g. connect and timeout) add up into one series. */
        for (size_t c = 0; ph->err && ph->err[c]; c++) {
            const char *cc = err_code_class(ph->err[c]);
            bool first = true;
            for (size_t j = 0; j < c; j++)
                if (strcmp(err_code_class(ph->err[j]), cc) == 0)
                    first = false;
            if (!first)
                continue;
            uint64_t n = 0;
            for (size_t j = c; j < RB_STATS_ERR_MAX && ph->err[j]; j++)
                if (strcmp(err_code_class(ph->err[j]), cc) == 0)
                    n += s->err[j];
            phase_labels(l, sizeof l, ph, "code_class=\"%s\"", cc);
            k->count(k->ctx, "railbench_requests_total", l, n);
        }
    }
}

/* Counters named by the phase's class lists: error classes (err) or events (extra). */
static void walk_classes(const struct rb_prom *p, const struct rb_prom_sink *k, bool events)
{
    char l[1024], cls_[128];
    for (size_t i = 0; i < p->nphases; i++) {
        const struct rb_prom_phase *ph = &p->phases[i];
        const char *const *names = events ? ph->extra : ph->err;
        size_t max = events ? RB_STATS_EXTRA_MAX : RB_STATS_ERR_MAX;
        if (!ph->has_stats)
            continue;
        for (size_t c = 0; names && names[c] && c < max; c++) {
            rb_prom_escape(cls_, sizeof cls_, names[c]);
            phase_labels(l, sizeof l, ph, "%s=\"%s\"", events ? "event" : "class", cls_);
            k->count(k->ctx, events ? "railbench_events_total" : "railbench_errors_total", l,
                     events ? ph->stats->extra[c] : ph->stats->err[c]);
        }
    }
}

static void walk_phases(const struct rb_prom *p, const struct rb_prom_sink *k)
{
    char l[1024];
    bool any = false, any_events = false, any_ttfb = false;
    for (size_t i = 0; i < p->nphases; i++) {
        const struct rb_prom_phase *ph = &p->phases[i];
        any |= ph->has_stats;
        any_events |= ph->has_stats && ph->extra && ph->extra[0];
        any_ttfb |= ph->has_stats && ph->stats->ttfb.count > 0;
    }
    if (!any)
        return;
    walk_requests(p, k);
    k->family(k->ctx, "railbench_bytes_total", "counter", "Payload bytes moved.");
    for (size_t i = 0; i < p->nphases; i++) {
        if (!p->phases[i].has_stats)
            continue;
        phase_labels(l, sizeof l, &p->phases[i], NULL);
        k->count(k->ctx, "railbench_bytes_total", l, p->phases[i].stats->bytes);
    }
    k->family(k->ctx, "railbench_errors_total", "counter", "Failed operations by error class.");
    walk_classes(p, k, false);
    if (any_events) {
        k->family(k->ctx, "railbench_events_total", "counter",
                  "Command-specific events per phase (cache hits and misses, redirects).");
        walk_classes(p, k, true);
    }
    k->family(k->ctx, "railbench_request_duration_seconds", "histogram",
              "Operation latency, start to last byte (from the intended start under --rate).");
    for (size_t i = 0; i < p->nphases; i++) {
        if (!p->phases[i].has_stats)
            continue;
        phase_labels(l, sizeof l, &p->phases[i], NULL);
        k->histogram(k->ctx, "railbench_request_duration_seconds", l, &p->phases[i].stats->lat,
                     p->phases[i].ex);
    }
    if (any_ttfb) {
        k->family(k->ctx, "railbench_ttfb_seconds", "histogram", "Time to first byte.");
        for (size_t i = 0; i < p->nphases; i++) {
            if (!p->phases[i].has_stats || !p->phases[i].stats->ttfb.count)
                continue;
            phase_labels(l, sizeof l, &p->phases[i], NULL);
            k->histogram(k->ctx, "railbench_ttfb_seconds", l, &p->phases[i].stats->ttfb, NULL);
        }
    }
}

/* The request phases' histograms (rb_prom_step): {op, phase, step}. */
static void walk_steps(const struct rb_prom *p, const struct rb_prom_sink *k)
{
    if (!p->nsteps)
        return;
    k->family(k->ctx, "railbench_request_step_seconds", "histogram",
              "A request phase's (step's) time (--phases): queue, connect, tls, send, first_byte, body; file: open, "
              "first_io, last_io, fsync, close.");
    for (size_t i = 0; i < p->nsteps; i++) {
        char l[1024], ph_[256], op_[128], st_[64];
        rb_prom_escape(ph_, sizeof ph_, p->steps[i].phase);
        rb_prom_escape(op_, sizeof op_, p->steps[i].op);
        rb_prom_escape(st_, sizeof st_, p->steps[i].step);
        snprintf(l, sizeof l, "op=\"%s\",phase=\"%s\",step=\"%s\"", op_, ph_, st_);
        k->histogram(k->ctx, "railbench_request_step_seconds", l, p->steps[i].h, NULL);
    }
}

void rb_prom_walk(const struct rb_prom *p, const struct rb_prom_sink *k)
{
    walk_phases(p, k);
    walk_steps(p, k);
    /* Samples grouped by family, families in order of first appearance. */
    for (size_t i = 0; i < p->nsamples; i++) {
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = strcmp(p->samples[j].name, p->samples[i].name) == 0;
        if (seen)
            continue;
        k->family(k->ctx, p->samples[i].name, p->samples[i].type, p->samples[i].help);
        for (size_t j = i; j < p->nsamples; j++) {
            const struct rb_prom_sample *s = &p->samples[j];
            if (strcmp(s->name, p->samples[i].name) == 0)
                k->value(k->ctx, s->name, s->labels, s->value);
        }
    }
}

/* The text formats: one buffer, the constant labels, and whether it is OpenMetrics. */
struct text {
    struct rb_buf b;
    const char *cl;
    bool om;
};

/* Writes "{labels}" joining the series' own labels and the constant ones; nothing when both are empty. */
static void labelset(struct text *t, const char *own)
{
    if (!*own && !*t->cl)
        return;
    rb_buf_printf(&t->b, "{%s%s%s}", own, *own && *t->cl ? "," : "", t->cl);
}

/* OpenMetrics names a counter family without its samples' "_total"; a counter without it is "unknown". */
static void t_family(void *ctx, const char *name, const char *type, const char *help)
{
    struct text *t = ctx;
    size_t n = strlen(name);
    if (t->om && strcmp(type, "counter") == 0) {
        if (n > 6 && strcmp(name + n - 6, "_total") == 0)
            n -= 6;
        else
            type = "unknown";
    }
    rb_buf_printf(&t->b, "# HELP %.*s %s\n# TYPE %.*s %s\n", (int)n, name, help, (int)n, name, type);
}

static void t_count(void *ctx, const char *name, const char *labels, uint64_t n)
{
    struct text *t = ctx;
    rb_buf_printf(&t->b, "%s", name);
    labelset(t, labels);
    rb_buf_printf(&t->b, " %llu\n", (unsigned long long)n);
}

static void t_value(void *ctx, const char *name, const char *labels, double v)
{
    struct text *t = ctx;
    rb_buf_printf(&t->b, "%s", name);
    labelset(t, labels);
    /* The shortest of %.15g and %.17g that reads back as the same double. */
    char num[40];
    snprintf(num, sizeof num, "%.15g", v);
    if (strtod(num, NULL) != v)
        snprintf(num, sizeof num, "%.17g", v);
    rb_buf_printf(&t->b, " %s\n", num);
}

/* OpenMetrics: ' # {request_id="..."} value timestamp' after a bucket's count. */
static void t_exemplar(struct text *t, const struct rb_prom_ex *ex)
{
    if (!t->om || !ex || !ex->set)
        return;
    char id[2 * RB_PROM_ID_MAX + 8];
    rb_prom_escape(id, sizeof id, ex->id);
    rb_buf_printf(&t->b, " # {request_id=\"%s\"} %.9g %.3f", id, ex->value_s, ex->ts_s);
}

static void t_histogram(void *ctx, const char *name, const char *labels, const struct rb_hist *h,
                        const struct rb_prom_ex *ex)
{
    struct text *t = ctx;
    char l[1200];
    uint64_t cum = 0;
    size_t bucket = 0, n = rb_prom_le_count();
    for (size_t i = 0; i < n; i++) {
        size_t upto = rb_hist_index(rb_prom_le_ns(i)); /* buckets below this one are < le */
        for (; bucket < upto; bucket++)
            cum += h->counts[bucket];
        snprintf(l, sizeof l, "%s,le=\"%.9g\"", labels, (double)rb_prom_le_ns(i) / 1e9);
        rb_buf_printf(&t->b, "%s_bucket", name);
        labelset(t, l);
        rb_buf_printf(&t->b, " %llu", (unsigned long long)cum);
        t_exemplar(t, ex ? &ex[i] : NULL);
        rb_buf_printf(&t->b, "\n");
    }
    snprintf(l, sizeof l, "%s,le=\"+Inf\"", labels);
    rb_buf_printf(&t->b, "%s_bucket", name);
    labelset(t, l);
    rb_buf_printf(&t->b, " %llu", (unsigned long long)h->count);
    t_exemplar(t, ex ? &ex[n] : NULL);
    rb_buf_printf(&t->b, "\n%s_sum", name);
    labelset(t, labels);
    rb_buf_printf(&t->b, " %.9f\n%s_count", (double)h->sum_ns / 1e9, name);
    labelset(t, labels);
    rb_buf_printf(&t->b, " %llu\n", (unsigned long long)h->count);
}

static char *render_text(const struct rb_prom *p, bool om)
{
    struct text t = {.cl = p->const_labels, .om = om};
    const struct rb_prom_sink k = {&t, t_family, t_count, t_value, t_histogram};
    rb_prom_walk(p, &k);
    rb_buf_printf(&t.b, "%s", om ? "# EOF\n" : "");
    if (t.b.oom) {
        free(t.b.s);
        return NULL;
    }
    return t.b.s;
}

char *rb_prom_render(const struct rb_prom *p)
{
    return render_text(p, false);
}

char *rb_prom_render_openmetrics(const struct rb_prom *p)
{
    return render_text(p, true);
}
