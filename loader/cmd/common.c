/* What every load command shares: parsing with libcurl set up, opening and probing targets, building object sets. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <curl/curl.h>

#include "../engine/engine_int.h"
#include "../file/file_int.h"
#include "loader_int.h"
#include "railbench/clock.h"
#include "railbench/log.h"

int rb_load_command(const struct rb_cmd_spec *spec, int argc, char **argv,
                    int (*run)(void *args, struct rb_cli *cli), void *args)
{
    struct rb_cli cli;
    int rc;
    if (!rb_cli_parse_cmd(&cli, spec, argc, argv, &rc))
        return rc;
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        rb_cli_free(&cli);
        fprintf(stderr, "railbench: error: curl_global_init failed\n");
        return RB_EXIT_RUNTIME;
    }
    rc = run(args, &cli);
    curl_global_cleanup();
    rb_cli_free(&cli);
    return rc;
}

void rb_load_defaults(struct rb_target_cfg *tgt, struct rb_engine_args *eng, struct rb_file_opts *file)
{
    *tgt = (struct rb_target_cfg){.timeout_ns = 30 * RB_NS_PER_S};
    if (eng)
        *eng = (struct rb_engine_args){.engine = RB_ENGINE_AUTO, .max_redirects = RB_ENGINE_MAX_REDIRECTS};
    if (file)
        *file = (struct rb_file_opts)RB_FILE_OPTS_DEFAULT;
}

void rb_load_options(struct rb_opts *t, struct rb_target_cfg *tgt, struct rb_engine_args *eng,
                     struct rb_file_opts *file)
{
    rb_target_options(t, tgt);
    if (eng)
        rb_engine_options(t, eng);
    if (file)
        rb_file_options(t, file);
}

int rb_load_target_open(const struct rb_target_cfg *cfg, const char *url, const char *what, struct rb_target **t)
{
    struct rb_target_cfg tc = *cfg;
    tc.url = url;
    char err[1024] = "";
    *t = NULL;
    if (rb_target_open(t, &tc, err, sizeof err) == 0)
        return 0;
    return what ? rb_cli_usage_error("%s: %s", what, err) : rb_cli_usage_error("%s", err);
}

int rb_load_target_probe(const struct rb_target *t, uint64_t timeout_ns)
{
    char err[1024] = "";
    if (rb_file_target_probe(t, timeout_ns, err, sizeof err) == 0)
        return 0;
    if (err[0] && rb_cli_first_rank()) /* "": the file watchdog's line said which call did not return */
        fprintf(stderr, "railbench: error: %s\n", err);
    return RB_EXIT_RUNTIME;
}

/* The set from count or filelist; rank 0 logs why not. Returns 0 or an exit status. */
static int build_local(struct rb_harness *h, uint64_t count, const char *filelist, const char *prefix, bool whole,
                       struct rb_objset *set, uint64_t *total)
{
    char err[1024] = "";
    if (count) {
        struct rb_objset all = {0};
        int rc = rb_objset_generate(&all, prefix, count);
        if (!rc && !whole)
            rc = rb_objset_partition(&all, h->rank, h->size, set);
        else if (!rc)
            *set = all, all = (struct rb_objset){0};
        rb_objset_free(&all);
        if (rc)
            rb_harness_fatal(h, RB_EXIT_RUNTIME, "cannot make %" PRIu64 " object names: %s", count, strerror(-rc));
        *total = count;
        return 0;
    }
    /* Whole: rank 0 alone reads the file (rb_objset_share hands it on); else every rank keeps its own lines. */
    int bad = whole && h->rank != 0 ? 0 : rb_objset_from_file(set, filelist, whole ? 0 : h->rank, whole ? 1 : h->size,
                                                                total, err, sizeof err) != 0, any = bad;
    if (h->mpi)
        RB_MPI_CHECK(MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, h->comm));
    if (h->mpi && whole)
        RB_MPI_CHECK(MPI_Bcast(total, 1, MPI_UINT64_T, 0, h->comm));
    if (any) {
        if (h->rank == 0)
            rb_error("%s", err[0] ? err : "--filelist: cannot be read on every rank");
        return RB_EXIT_USAGE;
    }
    if (*total == 0) {
        if (h->rank == 0)
            rb_error("--filelist %s: no object names in it", filelist);
        return RB_EXIT_USAGE;
    }
    return 0;
}

int rb_load_build_objects(struct rb_harness *h, const struct rb_target *t, uint64_t count, const char *filelist,
                          const char *prefix, uint64_t timeout_ns, enum rb_engine_kind engine, const char *hint, bool whole,
                          struct rb_objset *set, uint64_t *total)
{
    char err[1024] = "";
    if (count || filelist)
        return build_local(h, count, filelist, prefix, whole, set, total);
    int status = 0;
    if (h->rank == 0) {
        if (rb_engine_list(engine, t, prefix, timeout_ns, set, err, sizeof err)) {
            rb_error("%s", err);
            status = RB_EXIT_RUNTIME;
        } else if (set->n == 0) {
            rb_error("%s: no objects under prefix \"%s\" %s", rb_target_name(t), prefix, hint);
            status = RB_EXIT_RUNTIME;
        } else if (set->n > UINT32_MAX) {
            rb_error("%s: %" PRIu64 " objects listed, at most %u", rb_target_name(t), set->n, UINT32_MAX);
            status = RB_EXIT_RUNTIME;
        }
    }
    if (h->mpi)
        RB_MPI_CHECK(MPI_Bcast(&status, 1, MPI_INT, 0, h->comm));
    if (status)
        return status;
    *total = set->n;
    if (h->mpi && whole)
        RB_MPI_CHECK(MPI_Bcast(total, 1, MPI_UINT64_T, 0, h->comm));
    else if (h->mpi && rb_objset_scatter(set, 0, h->comm, total) != 0)
        rb_harness_fatal(h, RB_EXIT_RUNTIME, "cannot share the object listing between ranks");
    if (h->rank == 0)
        rb_info("%s: listed %" PRIu64 " objects under \"%s\"", rb_target_name(t), *total, prefix);
    return 0;
}
