/* Unit tests for loader/tiers/tiers_fcache.c: a cache directory read through in front of a file:// origin. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine_int.h"
#include "payload_int.h"
#include "railbench/clock.h"
#include "railbench/stats.h"
#include "script_peer.h"
#include "tiers_fcache_int.h"

#define SIZE 10000u /* not a multiple of the block: the last read is short */
#define SEED 7

struct fixture {
    char origin[64], cache[64];
    struct rb_target *o, *t;
    struct rb_tiers_fcache *fc;
};

static void write_file(const char *dir, const char *name, const void *buf, size_t len)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, buf, len), (ssize_t)len);
    close(fd);
}

static size_t read_file(const char *dir, const char *name, char *buf, size_t len)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, len, f);
    fclose(f);
    return n;
}

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    snprintf(f->origin, sizeof f->origin, "/tmp/rb-fc-origin-XXXXXX");
    snprintf(f->cache, sizeof f->cache, "/tmp/rb-fc-cache-XXXXXX");
    if (!mkdtemp(f->origin) || !mkdtemp(f->cache))
        return -1;
    /* Five origin files holding the payload load put would write under their names. */
    for (int i = 0; i < 5; i++) {
        char name[32];
        static unsigned char buf[SIZE];
        snprintf(name, sizeof name, "obj-%08d", i);
        rb_payload_fill(NULL, rb_payload_key(SEED, name), 0, buf, SIZE);
        write_file(f->origin, name, buf, SIZE);
    }
    char url[128], err[256];
    struct rb_target_cfg cfg = {0};
    snprintf(url, sizeof url, "file://%s", f->origin);
    cfg.url = url;
    if (rb_target_open(&f->o, &cfg, err, sizeof err))
        return -1;
    snprintf(url, sizeof url, "file://%s", f->cache);
    if (rb_target_open(&f->t, &cfg, err, sizeof err))
        return -1;
    if (rb_tiers_fcache_new(&f->fc, f->t, f->o, 1, 4096))
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf %s %s", f->origin, f->cache);
    rb_tiers_fcache_free(f->fc);
    rb_target_close(f->o);
    rb_target_close(f->t);
    free(f);
    return system(cmd) == 0 ? 0 : -1;
}

/* One epoch of verified GETs of set through the cache, on one thread; what the engine counted. */
static void run_get(struct fixture *f, const struct rb_objset *set, struct rb_stats *st)
{
    struct rb_load_opts o = {0};
    o.op = RB_LOAD_GET;
    o.target = &f->fc->t;
    o.transport = &rb_tiers_fc_transport;
    o.objects = set;
    o.threads = o.inflight = 1;
    o.pattern = RB_PATTERN_EPOCH;
    o.epochs = 1;
    o.seed = SEED;
    o.verify = true;
    o.cache_header = "cache file lookup";
    o.log_fd = -1;
    sp_run_engine(&o, st);
}

static void test_cold_then_warm(void **state)
{
    struct fixture *f = *state;
    struct rb_objset set = {0};
    assert_int_equal(rb_objset_generate(&set, "obj-", 4), 0);
    rb_objset_set_common_size(&set, SIZE);
    assert_int_equal(rb_tiers_fcache_objects(f->fc, set.n), 0);
    uint64_t v[RB_TIERS_FC_COUNTS], n = 9;
    char first[512];
    assert_int_equal(rb_tiers_fcache_existing(f->fc, &set, &n, first, sizeof first), 0);
    assert_int_equal(n, 0);

    /* Cold: every GET a miss, each object fetched from the origin into a cache file of its own. */
    struct rb_stats *st = rb_stats_new();
    run_get(f, &set, st);
    assert_int_equal(st->ops, 4);
    assert_int_equal(st->errors, 0);
    assert_int_equal(st->bytes, 4 * SIZE);
    assert_int_equal(st->extra[RB_LX_CACHE_MISS], 4);
    assert_int_equal(st->extra[RB_LX_CACHE_HIT], 0);
    rb_tiers_fcache_take(f->fc, v);
    assert_int_equal(v[RB_TIERS_FC_ORIGIN_BYTES], 4 * SIZE);
    assert_int_equal(v[RB_TIERS_FC_CACHE_BYTES], 0);
    assert_int_equal(v[RB_TIERS_FC_FILLED], 4);
    static char a[SIZE + 1], b[SIZE + 1];
    assert_int_equal(read_file(f->cache, "obj-00000002", a, sizeof a), SIZE);
    assert_int_equal(read_file(f->origin, "obj-00000002", b, sizeof b), SIZE);
    assert_memory_equal(a, b, SIZE);

    /* Warm: every GET a hit, nothing from the origin. */
    rb_stats_free(st);
    st = rb_stats_new();
    run_get(f, &set, st);
    assert_int_equal(st->errors, 0);
    assert_int_equal(st->extra[RB_LX_CACHE_HIT], 4);
    assert_int_equal(st->extra[RB_LX_CACHE_MISS], 0);
    rb_tiers_fcache_take(f->fc, v);
    assert_int_equal(v[RB_TIERS_FC_ORIGIN_BYTES], 0);
    assert_int_equal(v[RB_TIERS_FC_CACHE_BYTES], 4 * SIZE);
    assert_int_equal(v[RB_TIERS_FC_FOREIGN_HITS], 0);

    uint64_t made, files, bytes;
    rb_tiers_fcache_on_disk(f->fc, &set, SIZE, &made, &files, &bytes);
    assert_int_equal(made, 4);
    assert_int_equal(files, 4);
    assert_int_equal(bytes, 4 * SIZE);

    /* A file the run did not make at a fifth name: found by the look-up, read as a foreign hit, never removed. */
    write_file(f->cache, "obj-00000004", "not ours", 8);
    struct rb_objset five = {0};
    assert_int_equal(rb_objset_generate(&five, "obj-", 5), 0);
    rb_objset_set_common_size(&five, SIZE);
    assert_int_equal(rb_tiers_fcache_existing(f->fc, &five, &n, first, sizeof first), 0);
    assert_int_equal(n, 5); /* the 4 kept cache files and the foreign one */
    assert_int_equal(rb_tiers_fcache_remove(f->fc, &set), 4);
    assert_int_equal(rb_tiers_fcache_existing(f->fc, &five, &n, first, sizeof first), 0);
    assert_int_equal(n, 1);
    assert_non_null(strstr(first, "/obj-00000004"));

    assert_int_equal(rb_tiers_fcache_objects(f->fc, five.n), 0);
    rb_stats_free(st);
    st = rb_stats_new();
    run_get(f, &five, st);
    assert_int_equal(st->extra[RB_LX_CACHE_MISS], 4);
    assert_int_equal(st->extra[RB_LX_CACHE_HIT], 1);
    assert_int_equal(st->errors, 1); /* its bytes are not the origin's: checksum (or short), with --verify */
    rb_tiers_fcache_take(f->fc, v);
    assert_int_equal(v[RB_TIERS_FC_FOREIGN_HITS], 1);
    assert_int_equal(v[RB_TIERS_FC_FILLED], 4);
    assert_int_equal(rb_tiers_fcache_remove(f->fc, &five), 4);
    assert_int_equal(read_file(f->cache, "obj-00000004", a, sizeof a), 8);
    assert_memory_equal(a, "not ours", 8);
    rb_stats_free(st);
    rb_objset_free(&set);
    rb_objset_free(&five);
}

/* A fetch from an origin file that is missing caches nothing and leaves no partial file behind. */
static void test_missing_origin(void **state)
{
    struct fixture *f = *state;
    struct rb_objset set = {0};
    assert_int_equal(rb_objset_generate(&set, "nope-", 2), 0);
    rb_objset_set_common_size(&set, SIZE);
    assert_int_equal(rb_tiers_fcache_objects(f->fc, set.n), 0);
    struct rb_stats *st = rb_stats_new();
    run_get(f, &set, st);
    assert_int_equal(st->ops, 2);
    assert_int_equal(st->errors, 2);
    uint64_t v[RB_TIERS_FC_COUNTS];
    rb_tiers_fcache_take(f->fc, v);
    assert_int_equal(v[RB_TIERS_FC_FILLED], 0);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "test -z \"$(ls -A %s)\"", f->cache);
    assert_int_equal(system(cmd), 0);
    rb_stats_free(st);
    rb_objset_free(&set);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_cold_then_warm, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_origin, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
