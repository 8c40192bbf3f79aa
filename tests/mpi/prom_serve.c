/*
 * Serves a Prometheus registry with known latencies and exemplars for tests/integration/prom_native.sh:
 * prom_serve PORT REQUESTS BATCHES INTERVAL_MS LINGER_S. Records REQUESTS latencies (log-uniform from
 * 100 us to 50 ms, seeded; request "req-<n>"), in BATCHES batches INTERVAL_MS apart, each request also
 * offered as an exemplar, and publishes after each batch; then prints what a scrape must agree with, one
 * JSON line: {"count":N,"p99_ns":P,"slowest_id":"...","slowest_s":S}, and serves LINGER_S seconds more.
 * No MPI: it links the library as the MPI test programs do.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "railbench/clock.h"
#include "railbench/mix.h"
#include "railbench/prom.h"

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "prom_serve: error: usage: prom_serve PORT REQUESTS BATCHES INTERVAL_MS LINGER_S\n");
        return 2;
    }
    long n = atol(argv[2]), batches = atol(argv[3]), interval_ms = atol(argv[4]), linger = atol(argv[5]);
    if (n < 1 || batches < 1 || interval_ms < 0 || linger < 0) {
        fprintf(stderr, "prom_serve: error: REQUESTS and BATCHES must be >= 1, the times >= 0\n");
        return 2;
    }
    struct rb_prom *p = rb_prom_new("run=\"native\"");
    struct rb_stats *s = rb_stats_new();
    char msg[256];
    int rc = p && s ? rb_prom_listen(p, argv[1], msg, sizeof msg) : -ENOMEM;
    if (rc) {
        fprintf(stderr, "prom_serve: error: %s\n", rc == -ENOMEM ? "out of memory" : msg);
        return rc == -EINVAL ? 2 : 3;
    }
    static const char *const errs[] = {"http_5xx", NULL};
    const struct rb_stats_names names = {errs, NULL};
    uint64_t seed = 46, slowest_ns = 0;
    char slowest[32] = "";
    for (long b = 0, i = 0; b < batches; b++) {
        for (; i < n * (b + 1) / batches; i++) {
            double u = (double)(rb_mix64_next(&seed) >> 11) * 0x1p-53;
            uint64_t ns = (uint64_t)(100e3 * pow(500.0, u)); /* 100 us .. 50 ms */
            char id[32];
            snprintf(id, sizeof id, "req-%ld", i);
            rb_hist_record(&s->lat, ns);
            s->ops++;
            s->bytes += 4096;
            if (ns > slowest_ns) {
                slowest_ns = ns;
                snprintf(slowest, sizeof slowest, "%s", id);
            }
            rb_prom_exemplar(p, "get", "GET", (double)ns / 1e9, id, (double)rb_clock_wall_ns() / 1e9);
        }
        rb_prom_phase(p, "get", "GET", &names, s);
        rb_prom_publish(p);
        if (b + 1 < batches)
            usleep((useconds_t)interval_ms * 1000);
    }
    printf("{\"count\":%llu,\"p99_ns\":%llu,\"slowest_id\":\"%s\",\"slowest_s\":%.9g}\n",
           (unsigned long long)s->lat.count, (unsigned long long)rb_hist_percentile(&s->lat, 99), slowest,
           (double)slowest_ns / 1e9);
    fflush(stdout);
    sleep((unsigned)linger);
    rb_stats_free(s);
    rb_prom_free(p);
    return 0;
}
