/* Steady-state detection for --until-steady PCT/WINDOW (warp's --autoterm, fio's ss=iops:PCT%). */
#ifndef RB_STEADY_INT_H
#define RB_STEADY_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Throughput samples of one phase, one per interval tick. The phase is
 * steady when the samples of the last window_s seconds (the first
 * interval, the ramp, never counts) each stay within pct % of their mean
 * rate, as fio's ss=iops:PCT% mean-deviation limit. One thread.
 */
struct rb_steady {
    double pct, window_s;
    double t_prev_s;            /* end of the last sample */
    size_t n, cap;
    double *amount, *dt_s;      /* per sample: work done and its length */
    bool converged;
    double converged_at_s;      /* phase time of the tick that converged */
};

/* A phase's --until-steady PCT/WINDOW (struct rb_load_phase_opts); pct 0: off. */
struct rb_steady_opts {
    double pct;
    uint64_t window_ns;
};

/*
 * Parses "PCT/WINDOW" ("5/10s", "2.5%/30s"): PCT in (0, 100], WINDOW a
 * duration of at least 1 ms. Returns 0 or -EINVAL.
 */
int rb_steady_parse(const char *s, double *pct, uint64_t *window_ns);

/* Sets s up (no samples yet). Free with rb_steady_free (NULL-safe). */
void rb_steady_init(struct rb_steady *s, double pct, uint64_t window_ns);

/*
 * Adds the work done (bytes or requests) between the previous sample's end
 * and t_s (phase time in seconds). Returns true once steady (and stays
 * true); false also when out of memory (it just never converges).
 */
bool rb_steady_add(struct rb_steady *s, double t_s, double amount);

/* Frees s's samples; NULL-safe. */
void rb_steady_free(struct rb_steady *s);

#endif
