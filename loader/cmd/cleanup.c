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
static int write_names(cJSON *all, const char *path);

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

/*
 * After the cleanup's DELETE phase (collective): when any DELETE failed, the names it did not delete (names less
 * the phase's leftover, the DELETEs that succeeded) are listed in the run's directory; list (rank 0) gets the path,
 * "" when nothing failed or the list could not be written.
 */
static void list_failed(struct rb_harness *h, const struct rb_objset *names, uint64_t written,
                        const struct rb_load_result *res, char *list, size_t len)
{
    int failed = h->rank == 0 && (!res->total || res->total->ops - res->total->errors < written);
    if (h->mpi && h->size > 1)
        RB_MPI_CHECK(MPI_Bcast(&failed, 1, MPI_INT, 0, h->comm));
    if (!failed)
        return;
    struct rb_objset stay = {0};
    if (rb_safety_without(names, &res->leftover, &stay))
        rb_harness_fatal(h, RB_EXIT_RUNTIME, "out of memory");
    int rc = rb_cleanup_list(h, &stay, list, len);
    rb_objset_free(&stay);
    if (rc)
        list[0] = '\0';
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
            char how[2 * sizeof list + RB_URL_MAX + 64] = ""; /* the list twice and the target */
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
    d.track_written = true; /* the phase's leftover: the names deleted, so the ones that stay can be listed */
    struct rb_load_result res = {0};
    int status = rb_load_run_phase(h, "cleanup", 0, &d, &res);
    char list[4300] = "";
    list_failed(h, names, out->written, &res, list, sizeof list);
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
                   "could not be deleted and stay under %s%s%s%s%s%s%s%s", out->failed, out->written, where,
                   list[0] ? "; listed in " : "", list, list[0] ? " (railbench load delete --filelist " : "", list,
                   list[0] ? " " : "", list[0] ? rb_target_name(o->target) : "", list[0] ? " removes them)" : "");
        if (!status && out->failed)
            status = RB_EXIT_CHECK;
    }
    rb_load_result_free(&res);
    return status;
}

/* names as a JSON array of strings (NULL out of memory). */
static cJSON *names_json(const struct rb_objset *names)
{
    cJSON *a = cJSON_CreateArray();
    char nb[RB_OBJSET_NAME_BYTES];
    for (uint64_t i = 0; a && i < names->n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateString(rb_objset_name(names, i, nb)));
    return a;
}

int rb_cleanup_list(struct rb_harness *h, const struct rb_objset *names, char *path, size_t len)
{
    cJSON *mine = names_json(names);
    cJSON *all = rb_harness_gather_json(h, mine);
    cJSON_Delete(mine);
    if (h->rank != 0)
        return 0;
    snprintf(path, len, "%s/%s", h->out_dir, RB_CLEANUP_LIST_NAME);
    return write_names(all, path);
}

/* Rank 0: the names of every rank's array in all (arrays of strings), one a line, into path. 0 or -errno. */
static int write_names(cJSON *all, const char *path)
{
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

/* Rank 0: up to RB_PROBE_NAMED names of what (an array of every rank's arrays) into buf, ", "-separated. */
static void first_names(const cJSON *all, const char *key, char *buf, size_t len)
{
    size_t n = 0, k = 0;
    buf[0] = '\0';
    const cJSON *rank, *name;
    cJSON_ArrayForEach(rank, all)
        cJSON_ArrayForEach(name, cJSON_GetObjectItem(rank, key))
            if (k++ < RB_PROBE_NAMED && n < len)
                n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "", name->valuestring);
    if (k > RB_PROBE_NAMED && n < len)
        snprintf(buf + n, len - n, ", ...");
}

void rb_cleanup_probe(struct rb_harness *h, const struct rb_target *t, struct rb_load_result *res, uint64_t timeout_ns,
                      bool keep)
{
    struct rb_objset left = {0}, unknown = {0};
    if (rb_safety_probe(t, &res->unknown, timeout_ns, &left, &unknown) && res->unknown.n) {
        rb_objset_free(&left);
        rb_objset_free(&unknown);
        if (rb_safety_without(&res->unknown, NULL, &unknown))
            rb_harness_fatal(h, RB_EXIT_RUNTIME, "out of memory");
    }
    /* What HEAD found stored is the run's like any object it wrote: cleanup deletes it (unless --keep). */
    char nb[RB_OBJSET_NAME_BYTES];
    for (uint64_t i = 0; !keep && i < left.n; i++)
        if (rb_objset_add(&res->leftover, rb_objset_name(&left, i, nb), 0))
            rb_harness_fatal(h, RB_EXIT_RUNTIME, "out of memory");
    unsigned long long n[3] = {res->unknown.n, left.n, unknown.n}, all_n[3] = {n[0], n[1], n[2]};
    if (h->mpi && h->size > 1)
        RB_MPI_CHECK(MPI_Allreduce(n, all_n, 3, MPI_UNSIGNED_LONG_LONG, MPI_SUM, h->comm));
    res->probed = all_n[0];
    res->probed_left = all_n[1];
    res->probed_unknown = all_n[2];
    if (!all_n[0]) {
        rb_objset_free(&left);
        rb_objset_free(&unknown);
        return;
    }
    cJSON *mine = cJSON_CreateObject();
    cJSON_AddItemToObject(mine, "left", names_json(&left));
    cJSON_AddItemToObject(mine, "unknown", names_json(&unknown));
    rb_objset_free(&left);
    rb_objset_free(&unknown);
    cJSON *all = rb_harness_gather_json(h, mine);
    cJSON_Delete(mine);
    if (h->rank != 0)
        return;
    char l[1200], u[1200], path[4200];
    first_names(all, "left", l, sizeof l);
    first_names(all, "unknown", u, sizeof u);
    /* The list: every name that may be stored, one a line (what load delete --filelist takes). */
    cJSON *lists = cJSON_CreateArray();
    const cJSON *rank;
    cJSON_ArrayForEach(rank, all)
    {
        cJSON_AddItemToArray(lists, cJSON_Duplicate(cJSON_GetObjectItem(rank, "left"), true));
        cJSON_AddItemToArray(lists, cJSON_Duplicate(cJSON_GetObjectItem(rank, "unknown"), true));
    }
    cJSON_Delete(all);
    snprintf(path, sizeof path, "%s/%s", h->out_dir, RB_PROBE_LIST_NAME);
    int rc = all_n[1] + all_n[2] ? write_names(lists, path) : (cJSON_Delete(lists), 0);
    snprintf(res->probe_list, sizeof res->probe_list, "%s", rc || !(all_n[1] + all_n[2]) ? "" : path);
    /* What may be stored and could not be looked up is left behind for all the run knows: a failed check. */
    rb_result_check(&h->result, "unknown_outcome", all_n[2] == 0, "%llu put(s) of unknown outcome looked up: %llu "
                    "stored, %llu not, %llu unknown (HEAD or stat failed too)%s%s", all_n[0], all_n[1],
                    all_n[0] - all_n[1] - all_n[2], all_n[2], res->probe_list[0] ? "; listed in " : "", res->probe_list);
    rb_warn("%llu put(s) timed out, were reset or were in flight at the end: their outcome was not known; HEAD after "
            "the phase: %llu stored (%s)%s%s, %llu not stored, %llu unknown (HEAD failed too)%s%s%s%s",
            all_n[0], all_n[1], keep ? "they stay: --keep" : "cleanup deletes them", all_n[1] ? ": " : "", l,
            all_n[0] - all_n[1] - all_n[2], all_n[2], all_n[2] ? ": " : "", u,
            res->probe_list[0] ? "; all listed in " : "", res->probe_list);
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
