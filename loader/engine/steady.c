/* Steady-state detection: interval throughputs within PCT % of their mean over a trailing window. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "railbench/units.h"
#include "steady_int.h"

int rb_steady_parse(const char *s, double *pct, uint64_t *window_ns)
{
    const char *slash = s ? strchr(s, '/') : NULL;
    if (!slash || slash == s || !slash[1])
        return -EINVAL;
    char *end;
    double p = strtod(s, &end);
    if (end < slash && *end == '%')
        end++;
    if (end != slash || !(p > 0) || p > 100)
        return -EINVAL;
    uint64_t w;
    if (rb_parse_duration(slash + 1, &w) || w < 1000000)
        return -EINVAL;
    *pct = p;
    *window_ns = w;
    return 0;
}

void rb_steady_init(struct rb_steady *s, double pct, uint64_t window_ns)
{
    memset(s, 0, sizeof *s);
    s->pct = pct;
    s->window_s = (double)window_ns / 1e9;
}

bool rb_steady_add(struct rb_steady *s, double t_s, double amount)
{
    if (s->converged)
        return true;
    double dt = t_s - s->t_prev_s;
    bool ramp = s->t_prev_s == 0; /* the first interval: connections opening, caches filling */
    s->t_prev_s = t_s;
    if (ramp || dt <= 0)
        return false;
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 64;
        double *a = realloc(s->amount, cap * sizeof *a);
        if (!a)
            return false;
        s->amount = a;
        double *d = realloc(s->dt_s, cap * sizeof *d);
        if (!d)
            return false;
        s->dt_s = d;
        s->cap = cap;
    }
    s->amount[s->n] = amount;
    s->dt_s[s->n] = dt;
    s->n++;
    /* The trailing samples that cover the window (a tick late by a few ms still counts as covering it). */
    double span = 0, sum = 0;
    size_t first = s->n;
    while (first > 0 && span < s->window_s * 0.999) {
        first--;
        span += s->dt_s[first];
        sum += s->amount[first];
    }
    if (span < s->window_s * 0.999 || s->n - first < 2 || sum <= 0)
        return false;
    double mean = sum / span;
    for (size_t i = first; i < s->n; i++)
        if (fabs(s->amount[i] / s->dt_s[i] - mean) > mean * s->pct / 100)
            return false;
    s->converged = true;
    s->converged_at_s = t_s;
    return true;
}

void rb_steady_free(struct rb_steady *s)
{
    if (!s)
        return;
    free(s->amount);
    free(s->dt_s);
    s->amount = s->dt_s = NULL;
    s->n = s->cap = 0;
}
