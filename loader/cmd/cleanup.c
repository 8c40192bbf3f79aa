/* Cleanup at the end of load put and load mixed: one DELETE phase over what the run wrote, unless --keep. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup_int.h"
#include "railbench/file.h"
#include "railbench/log.h"
#include "safety_int.h"

static int cleanup(struct rb_harness *h, const struct rb_load_opts *o, const struct rb_objset *names, bool keep,
                   uint64_t kept, const char *where, struct rb_cleanup *out);

int rb_cleanup_run(struct rb_harness *h, const struct rb_load_opts *o, const struct rb_objset *names, bool keep,
                   uint64_t kept, const char *where, struct rb_cleanup *out)
{
    memset(out, 0, sizeof *out);
    /* Names that were there before the run (--overwrite) are the user's: written over, never deleted. */
    struct rb_objset own = {0};
    if (o->preexisting && o->preexisting->n) {
        if (rb_safety_without(names, o->preexisting, &own))
            rb_harness_fatal(h, RB_EXIT_RUNTIME, "out of memory for the cleanup's names");
        names = &own;
    }
    int status = cleanup(h, o, names, keep, kept, where, out);
    rb_objset_free(&own);
    return status;
}

/* rb_cleanup_run over names this run created. */
static int cleanup(struct rb_harness *h, const struct rb_load_opts *o, const struct rb_objset *names, bool keep,
                   uint64_t kept, const char *where, struct rb_cleanup *out)
{
    uint64_t mine = names->n;
    out->written = mine;
    if (h->mpi && h->size > 1)
        RB_MPI_CHECK(MPI_Allreduce(&mine, &out->written, 1, MPI_UINT64_T, MPI_SUM, h->comm));
    out->kept = keep;
    if (keep && kept != RB_CLEANUP_COUNTED)
        out->written = kept;
    if (keep || !out->written) {
        if (h->rank == 0 && keep)
            rb_info("kept %" PRIu64 " objects this run wrote under %s (--keep)", out->written, where);
        return 0;
    }
    if (h->interrupted) {
        /* A new phase would stop at its first tick: say what stays, and list it, rather than half-delete it. */
        out->failed = out->written;
        out->skipped = true;
        char list[4300] = "";
        int rc = rb_cleanup_list(h, names, list, sizeof list);
        if (h->rank == 0) {
            char how[4600] = "";
            if (!rc)
                snprintf(how, sizeof how, "; listed in %s (railbench load delete --filelist %s %s removes them)", list,
                         list, rb_target_name(o->target));
            else
                snprintf(how, sizeof how, " (cannot list them in %s: %s)", list, strerror(-rc));
            rb_warn("interrupted: no cleanup; the %" PRIu64 " objects this run wrote stay under %s%s", out->written,
                    where, how);
            rb_harness_kept(h, "the %" PRIu64 " objects this run wrote under %s (no cleanup%s%s)", out->written, where,
                            rc ? "" : "; listed in ", rc ? "" : list);
        }
        return 0;
    }
    /* What the run wrote, each once, with the run's connections: a DELETE phase like load delete's. */
    struct rb_load_opts d = *o;
    d.op = RB_LOAD_DELETE;
    d.objects = names;
    d.mix = NULL;
    d.part_size = 0;
    d.count = d.bytes = 0;
    d.rate_per_s = 0;
    d.verify = false;
    d.min_size = d.max_size = 0;
    d.cache_header = NULL;
    d.engine = o->engine; /* the run's own: native for its DELETEs where it ran native (--engine auto) */
    struct rb_load_result res = {0};
    int status = rb_load_run_phase(h, "cleanup", 0, &d, &res);
    if (h->rank == 0 && res.total) {
        out->failed = res.total->errors;
        out->deleted = res.total->ops - res.total->errors;
        /* A DELETE never sent (the run was cut short) leaves its object as surely as a failed one. */
        if (out->deleted + out->failed < out->written)
            out->failed = out->written - out->deleted;
        rb_info("deleted %" PRIu64 " objects this run wrote (--keep keeps them)", out->deleted);
        rb_result_check(&h->result, "cleanup", out->failed == 0, "%" PRIu64 " of %" PRIu64
                        " objects this run wrote deleted, %" PRIu64 " left under %s", out->deleted, out->written,
                        out->failed, where);
        /* A run that already ended on an error (a file system gone: ENOTCONN) keeps that as its cause. */
        char before[8];
        rb_log_last_error(before, sizeof before);
        if (out->failed)
            rb_log(before[0] ? RB_LOG_WARN : RB_LOG_ERROR, "cleanup: %" PRIu64 " of %" PRIu64 " objects this run wrote "
                   "could not be deleted and stay under %s", out->failed, out->written, where);
        if (!status && out->failed)
            status = RB_EXIT_CHECK;
    }
    rb_load_result_free(&res);
    return status;
}

int rb_cleanup_list(struct rb_harness *h, const struct rb_objset *names, char *path, size_t len)
{
    cJSON *mine = cJSON_CreateArray();
    char nb[RB_OBJSET_NAME_BYTES];
    for (uint64_t i = 0; mine && i < names->n; i++)
        cJSON_AddItemToArray(mine, cJSON_CreateString(rb_objset_name(names, i, nb)));
    cJSON *all = rb_harness_gather_json(h, mine);
    cJSON_Delete(mine);
    if (h->rank != 0)
        return 0;
    snprintf(path, len, "%s/%s", h->out_dir, RB_CLEANUP_LIST_NAME);
    size_t cap = 4096, n = 0;
    char *text = malloc(cap);
    const cJSON *rank, *name;
    cJSON_ArrayForEach(rank, all)
        cJSON_ArrayForEach(name, rank)
        {
            size_t l = strlen(name->valuestring);
            if (text && n + l + 2 > cap) {
                while (n + l + 2 > cap)
                    cap *= 2;
                char *nt = realloc(text, cap);
                if (!nt)
                    free(text);
                text = nt;
            }
            if (text) {
                memcpy(text + n, name->valuestring, l);
                n += l;
                text[n++] = '\n';
            }
        }
    cJSON_Delete(all);
    int rc = text ? rb_file_write_atomic(path, text, n) : -ENOMEM;
    free(text);
    return rc;
}

cJSON *rb_cleanup_json(const struct rb_cleanup *c)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "written", rb_json_u64(c->written));
    cJSON_AddItemToObject(o, "deleted", rb_json_u64(c->deleted));
    cJSON_AddItemToObject(o, "failed", rb_json_u64(c->failed));
    cJSON_AddBoolToObject(o, "kept", c->kept);
    cJSON_AddBoolToObject(o, "skipped", c->skipped);
    return o;
}
