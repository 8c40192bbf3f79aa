/* Drives the loader's fetcher API (the training emulation's reads): batches of GETs from the caller's thread. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "../../loader/engine/engine_int.h"

/*
 * Usage: loader_fetch URL N SEED BATCH INFLIGHT [auto|curl|native]; GETs obj-00000000..N-1 twice, BATCH
 * names per call, verified, on the engine named (default auto).
 */
int main(int argc, char **argv)
{
    if (argc != 6 && argc != 7) {
        fprintf(stderr, "usage: %s URL N SEED BATCH INFLIGHT [auto|curl|native]\n", argv[0]);
        return 2;
    }
    size_t n = strtoul(argv[2], NULL, 10), batch = strtoul(argv[4], NULL, 10);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    char err[512];
    struct rb_target_cfg cfg = {.url = argv[1]};
    struct rb_target *t = NULL;
    if (rb_target_open(&t, &cfg, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    struct rb_objset set = {0};
    if (rb_objset_generate(&set, "obj-", n) || !batch)
        return 3;
    struct rb_load_opts o = {.op = RB_LOAD_GET, .target = t, .inflight = (unsigned)strtoul(argv[5], NULL, 10),
                             .seed = strtoull(argv[3], NULL, 10), .verify = true, .timeout_ns = 10000000000ull,
                             .max_redirects = 5, .log_fd = -1};
    if (argc == 7)
        o.engine = strcmp(argv[6], "curl") == 0 ? RB_ENGINE_CURL : strcmp(argv[6], "native") == 0 ? RB_ENGINE_NATIVE
                                                                                                  : RB_ENGINE_AUTO;
    uint32_t *ids = malloc((n ? n : 1) * sizeof *ids);
    if (!ids)
        return 3;
    for (size_t i = 0; i < n; i++)
        ids[i] = (uint32_t)i;
    struct rb_fetcher *f = NULL;
    if (rb_fetcher_new(&f, &o))
        return 3;
    struct rb_stats *s = rb_stats_new();
    struct rb_hist *unc = rb_hist_new();
    int failed = 0, calls = 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < n; i += batch, calls++) {
            int rc = rb_fetcher_get(f, &set, ids + i, i + batch <= n ? batch : n - i, s, unc, NULL);
            if (rc < 0)
                return 3;
            failed += rc;
        }
    printf("{\"calls\":%d,\"requests\":%llu,\"bytes\":%llu,\"errors\":%llu,\"checksum\":%llu,\"failed\":%d,"
           "\"lat_count\":%llu,\"unc_count\":%llu}\n",
           calls, (unsigned long long)s->ops, (unsigned long long)s->bytes, (unsigned long long)s->errors,
           (unsigned long long)s->err[RB_LERR_CHECKSUM], failed, (unsigned long long)s->lat.count,
           (unsigned long long)unc->count);
    rb_fetcher_free(f);
    rb_stats_free(s);
    rb_hist_free(unc);
    free(ids);
    rb_objset_free(&set);
    rb_target_close(t);
    curl_global_cleanup();
    return 0;
}
