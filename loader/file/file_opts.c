/* The file protocol's option group (--io-engine, --direct, --block-size, --fsync, --drop-cache, --cold-check). */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "../engine/engine_int.h"
#include "file_loop_int.h"
#include "../proto/target_int.h"
#include "../engine/fwatch_int.h"
#include "file_int.h"
#include "fsinfo_int.h"
#include "pagecache_int.h"
#include "railbench/cli.h"
#include "railbench/harness.h"
#include "railbench/log.h"
#include "railbench/result.h"
#include "railbench/stats.h"

void rb_file_options(struct rb_opts *t, struct rb_file_opts *fo)
{
    const struct rb_opt group[] = {
        {"io-engine", 0, RB_OPT_CHOICE, &fo->engine, "E",
         "file:// I/O engine: psync (pread/pwrite, one I/O at a time per thread) or io_uring (--inflight I/Os in "
         "flight per thread)",
         RB_FIO_ENGINE_CHOICES},
        {"direct", 0, RB_OPT_FLAG, &fo->direct, NULL,
         "file:// O_DIRECT: bypass the page cache (aligned buffers; --block-size a multiple of 4 KiB)", NULL},
        {"block-size", 0, RB_OPT_SIZE, &fo->block_bytes, "SIZE",
         "file:// bytes per read or write (fio's bs), apart from the file size", NULL},
        {"fsync", 0, RB_OPT_CHOICE, &fo->fsync, "WHEN",
         "file:// put: fsync never, once before close, or after each write", RB_FIO_FSYNC_CHOICES},
        {"drop-cache", 0, RB_OPT_CHOICE, &fo->drop_cache, "WHAT",
         "file:// reads: drop each file's cached pages before it is read (files), and as root the host's whole page "
         "cache before each read phase (host)",
         RB_FILE_DROP_CHOICES},
        {"cold-check", 0, RB_OPT_FLAG, &fo->cold_check, NULL,
         "file:// reads: count each file's pages in the page cache before it is read (mincore): cache_hit, "
         "cache_miss, cache_other (partly)",
         NULL},
        {0},
    };
    rb_opts_add(t, group);
}

int rb_file_opts_check(const struct rb_file_opts *fo)
{
    if (fo->block_bytes == 0 || fo->block_bytes > (1ull << 30))
        return rb_cli_usage_error("--block-size %" PRIu64 ": expected 1 byte to 1 GiB (e.g. 4k, 1M)", fo->block_bytes);
    if (fo->direct && fo->block_bytes % RB_FIO_ALIGN)
        return rb_cli_usage_error("--block-size %" PRIu64 " with --direct: expected a multiple of 4 KiB (O_DIRECT "
                                  "transfers whole aligned blocks)", fo->block_bytes);
    if (fo->drop_cache == RB_DROP_HOST && geteuid() != 0)
        return rb_cli_usage_error("--drop-cache host: needs root (it writes /proc/sys/vm/drop_caches on every host); "
                                  "--drop-cache files drops each file's pages as any user");
    return 0;
}

/*
 * What the run's file target is on, probed when its options are checked
 * against it and recorded with the summary: one target per process (main
 * thread only; set before any worker starts).
 */
static struct rb_fsinfo target_fs;
static bool target_fs_known;

/* Probes what the file target's directory is on; says so in one line (first rank). */
static void probe_target_fs(const struct rb_target *t, bool quiet)
{
    int rc = rb_fsinfo_probe(rb_target_file_root(t), NULL, &target_fs);
    target_fs_known = rc == 0;
    if (!target_fs_known || quiet || !rb_cli_first_rank())
        return;
    const struct rb_fsinfo *fi = &target_fs;
    if (strcmp(fi->kind, RB_FS_KIND_LOOP) == 0)
        rb_info("%s: %s on %s, a loop device over %s", rb_target_name(t), fi->fstype, fi->source,
                fi->backing[0] ? fi->backing : "an unknown file");
    else if (strcmp(fi->kind, RB_FS_KIND_FUSE) == 0)
        rb_info("%s: FUSE (%s, %s) mounted at %s: no block device; its client's network interfaces carry the data",
                rb_target_name(t), fi->fstype, fi->source, fi->mount);
    else if (strcmp(fi->kind, RB_FS_KIND_NETWORK) == 0)
        rb_info("%s: network file system %s (%s) mounted at %s", rb_target_name(t), fi->fstype, fi->source, fi->mount);
    else
        rb_info("%s: %s on %s mounted at %s", rb_target_name(t), fi->fstype, fi->source, fi->mount);
}

int rb_file_opts_target(const struct rb_file_opts *fo, const struct rb_target *t, const struct rb_cli *cli,
                        uint64_t *inflight)
{
    if (rb_target_can(t, RB_TCAP_FILES)) {
        probe_target_fs(t, cli->common.quiet);
        /* A worker's ring holds its --inflight I/Os; the kernel refuses a ring of more entries (IORING_MAX_ENTRIES). */
        if (fo->engine == RB_FIO_IO_URING && *inflight > RB_FIO_URING_MAX_ENTRIES)
            return rb_cli_usage_error("--inflight %" PRIu64 " with --io-engine io_uring: at most %u (the kernel's "
                                      "largest ring); use --threads for more I/Os in flight", *inflight,
                                      RB_FIO_URING_MAX_ENTRIES);
        /* psync blocks in each call: a thread has one request at a time, and --inflight is io_uring's depth. */
        if (fo->engine == RB_FIO_PSYNC && *inflight > 1) {
            if (rb_cli_given(cli, "--inflight") || rb_cli_given(cli, "-c"))
                rb_warn("--inflight %" PRIu64 ": --io-engine psync does one I/O at a time per thread, so 1 is in "
                        "flight per thread; use --threads N, or --io-engine io_uring for N in flight",
                        *inflight);
            *inflight = 1;
        }
        return 0;
    }
    static const char *const names[] = {"--io-engine", "--direct", "--block-size", "--fsync", "--drop-cache",
                                        "--cold-check"};
    const struct rb_file_opts d = RB_FILE_OPTS_DEFAULT;
    bool changed[] = {fo->engine != d.engine, fo->direct, fo->block_bytes != d.block_bytes, fo->fsync != d.fsync,
                      fo->drop_cache != d.drop_cache, fo->cold_check};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (changed[i])
            return rb_cli_usage_error("%s: a file-system option; %s is not a file:// target", names[i],
                                      rb_target_name(t));
    return 0;
}

int rb_file_space_check(const struct rb_target *t, uint64_t need, const char *what)
{
    struct statvfs sv;
    if (!rb_target_can(t, RB_TCAP_FILES) || statvfs(rb_target_file_root(t), &sv) != 0)
        return 0;
    if (sv.f_flag & ST_RDONLY) {
        rb_error("%s: %s: the file system under it is mounted read-only (EROFS): nothing written", rb_target_name(t),
                 what);
        return RB_EXIT_RUNTIME;
    }
    /* A FUSE or network file system's free space is its cluster's, which statvfs often does not tell (CephFS
     * through ceph-fuse on a memory store says 0): judged on local file systems only, that report a size. */
    const bool remote = target_fs_known && (strcmp(target_fs.kind, RB_FS_KIND_FUSE) == 0 ||
                                            strcmp(target_fs.kind, RB_FS_KIND_NETWORK) == 0);
    const uint64_t room = (uint64_t)sv.f_bavail * sv.f_frsize;
    if (need <= room || remote || sv.f_blocks == 0)
        return 0;
    rb_error("%s: %s needs %.3f GB, the file system under it has %.3f GB free: nothing written (ENOSPC)",
             rb_target_name(t), what, need / 1e9, room / 1e9);
    return RB_EXIT_RUNTIME;
}

void rb_file_summary_json(cJSON *summary, const struct rb_file_opts *fo)
{
    static const char *const engines[] = {"psync", "io_uring"}, *const syncs[] = {"none", "close", "each"},
                             *const drops[] = {"none", "files", "host"};
    cJSON *f = cJSON_AddObjectToObject(summary, "file");
    cJSON_AddStringToObject(f, "io_engine", engines[fo->engine]);
    cJSON_AddBoolToObject(f, "direct", fo->direct);
    cJSON_AddNumberToObject(f, "block_size_bytes", (double)fo->block_bytes);
    cJSON_AddStringToObject(f, "fsync", syncs[fo->fsync]);
    cJSON_AddStringToObject(f, "drop_cache", drops[fo->drop_cache]);
    cJSON_AddBoolToObject(f, "cold_check", fo->cold_check);
    if (target_fs_known)
        cJSON_AddItemToObject(f, "mount", rb_fsinfo_json(&target_fs, NULL));
    else
        cJSON_AddNullToObject(f, "mount");
}

bool rb_file_check_cold(struct rb_result *r, const char *what, const struct rb_file_opts *fo, const struct rb_stats *s)
{
    if (!fo->cold_check)
        return true;
    const uint64_t hit = s->extra[RB_LX_CACHE_HIT], part = s->extra[RB_LX_CACHE_OTHER],
                   miss = s->extra[RB_LX_CACHE_MISS], seen = hit + part + miss;
    char name[96];
    snprintf(name, sizeof name, "%s%scold", what ? what : "", what ? "_" : "");
    bool cold = seen > 0 && hit + part == 0;
    rb_result_check(r, name, cold, "%" PRIu64 " of %" PRIu64 " files read had no page in the page cache before the "
                    "read (mincore), %" PRIu64 " some, %" PRIu64 " all", miss, seen, part, hit);
    if (!cold && fo->drop_cache != RB_DROP_NONE)
        rb_error("--cold-check: %" PRIu64 " of %" PRIu64 " files had pages cached before they were read, despite "
                 "--drop-cache (the file system may not drop them: FUSE or NFS)", hit + part, seen);
    return cold;
}

int rb_file_drop_host_cache(struct rb_harness *h, const struct rb_file_opts *fo, const char *phase)
{
    if (fo->drop_cache != RB_DROP_HOST)
        return 0;
    cJSON *mine = NULL;
    if (h->local_rank == 0) {
        /* One rank per host: the cache is the host's, and a second drop would only measure the first. */
        uint64_t before = 0, after = 0;
        int rb = rb_pagecache_host_cached(NULL, &before), rc = rb_pagecache_drop_host(),
            ra = rb_pagecache_host_cached(NULL, &after);
        mine = cJSON_CreateObject();
        cJSON_AddStringToObject(mine, "host", h->host);
        if (phase)
            cJSON_AddStringToObject(mine, "phase", phase);
        cJSON_AddItemToObject(mine, "cached_before_bytes", rb ? cJSON_CreateNull() : rb_json_u64(before));
        cJSON_AddItemToObject(mine, "cached_after_bytes", ra ? cJSON_CreateNull() : rb_json_u64(after));
        cJSON_AddBoolToObject(mine, "dropped", rc == 0);
        if (rc)
            cJSON_AddStringToObject(mine, "error", strerror(-rc));
    }
    cJSON *all = rb_harness_gather_json(h, mine);
    cJSON_Delete(mine);
    int failed = 0;
    if (h->rank == 0 && all) {
        char detail[1024] = "";
        size_t n = 0, hosts = 0;
        const char *bad = NULL, *why = NULL;
        const cJSON *e;
        cJSON_ArrayForEach(e, all)
        {
            hosts++;
            const char *host = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "host"));
            uint64_t b = 0, a = 0;
            bool have = rb_json_get_u64(cJSON_GetObjectItemCaseSensitive(e, "cached_before_bytes"), &b) == 0 &&
                        rb_json_get_u64(cJSON_GetObjectItemCaseSensitive(e, "cached_after_bytes"), &a) == 0;
            if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "dropped")) && !bad) {
                bad = host;
                why = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "error"));
            }
            if (n < sizeof detail && have)
                n += (size_t)snprintf(detail + n, sizeof detail - n, "%s%s: Cached %" PRIu64 " MiB -> %" PRIu64 " MiB",
                                      n ? ", " : "", host ? host : "?", b >> 20, a >> 20);
        }
        char name[96];
        snprintf(name, sizeof name, "%s%shost_cache_dropped", phase ? phase : "", phase ? "_" : "");
        rb_result_check(&h->result, name, !bad, "page cache dropped on %zu of %zu host(s) before the read (%s)",
                        bad ? hosts - 1 : hosts, hosts, detail[0] ? detail : "no /proc/meminfo figure");
        cJSON *log = cJSON_GetObjectItemCaseSensitive(h->result.root, "page_cache_drops");
        if (!log) {
            rb_result_set(&h->result, "page_cache_drops", cJSON_CreateArray());
            log = cJSON_GetObjectItemCaseSensitive(h->result.root, "page_cache_drops");
        }
        while (cJSON_GetArraySize(all) > 0)
            cJSON_AddItemToArray(log, cJSON_DetachItemFromArray(all, 0));
        if (bad) {
            rb_error("--drop-cache host: %s could not drop its page cache (%s)", bad ? bad : "?", why ? why : "?");
            failed = 1;
        }
    }
    cJSON_Delete(all);
    RB_MPI_CHECK(MPI_Bcast(&failed, 1, MPI_INT, 0, h->comm));
    return failed ? RB_EXIT_RUNTIME : 0;
}

struct probe {
    const struct rb_target *t;
    uint64_t timeout_ns;
    char err[1024];
};

static int probe_main(void *arg)
{
    struct probe *p = arg;
    return rb_target_probe(p->t, p->timeout_ns, p->err, sizeof p->err);
}

int rb_file_target_probe(const struct rb_target *t, uint64_t timeout_ns, char *err, size_t errlen)
{
    struct probe *p = rb_target_can(t, RB_TCAP_FILES) ? calloc(1, sizeof *p) : NULL;
    if (!p)
        return rb_target_probe(t, timeout_ns, err, errlen); /* not file://: bounded by its own timeout */
    *p = (struct probe){.t = t, .timeout_ns = timeout_ns};
    int rc;
    if (rb_fwatch_call(timeout_ns, "stat", rb_target_file_root(t), probe_main, p, &rc) != 0) {
        err[0] = '\0';
        return -ETIMEDOUT; /* p stays with the thread left behind */
    }
    snprintf(err, errlen, "%s", p->err);
    free(p);
    return rc;
}
