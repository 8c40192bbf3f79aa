/* Helpers shared by the fabric subcommands: topology options, design line, --save files, result output. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabric_int.h"
#include "railbench/file.h"
#include "railbench/harness.h"
#include "railbench/units.h"

static int usage_error(const char *opt, const char *val, const char *want)
{
    return rb_cli_usage_error("--%s: expected %s, got \"%s\"", opt, want, val);
}

/* Whole number >= min for option opt; leaves *v alone when s is NULL. */
static int opt_int(const char *opt, const char *s, long long min, int *v)
{
    if (!s)
        return 0;
    int64_t x;
    if (rb_parse_i64(s, &x) != 0 || x < min || x > RB_TOPO_MAX_GPUS) {
        char want[64];
        snprintf(want, sizeof want, "a whole number >= %lld", min);
        return usage_error(opt, s, want);
    }
    *v = (int)x;
    return 0;
}

/* "CLASS:GBIT[:LATENCY]" as in --link leaf:400:1us. */
static int opt_link(const char *s, struct rb_topo *t)
{
    static const char want[] = "CLASS:GBIT[:LATENCY] with CLASS nvlink, pcie, leaf or spine (e.g. leaf:400:1us)";
    char buf[128];
    if (strlen(s) >= sizeof buf)
        return usage_error("link", s, want);
    snprintf(buf, sizeof buf, "%s", s);
    char *cls = buf, *bw = strchr(buf, ':');
    if (!bw)
        return usage_error("link", s, want);
    *bw++ = '\0';
    char *lat = strchr(bw, ':');
    if (lat)
        *lat++ = '\0';
    enum rb_link_class c;
    if (rb_link_class_parse(cls, &c) != 0)
        return usage_error("link", s, want);
    double gbit;
    if (rb_parse_double(bw, &gbit) != 0 || !(gbit > 0))
        return usage_error("link", s, "a bandwidth in Gbit/s > 0 (e.g. leaf:400:1us)");
    if (lat) {
        uint64_t ns;
        /* A bare number would be seconds (rb_parse_duration); insist on a unit here. */
        size_t n = strlen(lat);
        if (n == 0 || !((lat[n - 1] >= 'a' && lat[n - 1] <= 'z')) || rb_parse_duration(lat, &ns) != 0)
            return usage_error("link", s, "a latency with a unit (e.g. leaf:400:1us or leaf:400:700ns)");
        t->link[c].lat_s = (double)ns * 1e-9;
    }
    t->link[c].bw_bytes_per_s = gbit * 1e9 / 8.0;
    return 0;
}

int rb_fabric_topo_resolve(const struct rb_topo_opts *o, struct rb_topo *t)
{
    char err[512];
    int rc;
    if (o->topology) {
        if (rb_topo_load(t, o->topology, err, sizeof err) != 0)
            return rb_cli_usage_error("topology %s: %s", o->topology, err);
    } else {
        rb_topo_default(t);
    }
    if (o->kind) {
        enum rb_topo_kind k;
        if (rb_topo_kind_parse(o->kind, &k) != 0)
            return usage_error("kind", o->kind, "fat-tree, rail-optimized or rail-only");
        if (k != t->kind) {
            /* Changing the design keeps NICs and links; rails follow the new kind's default. */
            const struct rb_topo_kind_def *to = rb_topo_kind_def(k), *from = rb_topo_kind_def(t->kind);
            if (!to->railed)
                t->rails = 1;
            else if (!from->railed)
                t->rails = t->nics_per_node;
            if (!to->spine_layer)
                t->spines = 0;
            t->kind = k;
        }
    }
    int nics_before = t->nics_per_node;
    if ((rc = opt_int("nodes", o->nodes, 1, &t->nodes)) || (rc = opt_int("gpus-per-node", o->gpus_per_node, 1, &t->gpus_per_node)) ||
        (rc = opt_int("nics-per-node", o->nics_per_node, 1, &t->nics_per_node)))
        return rc;
    /* Rails default to one per NIC: follow a changed NIC count unless --rails says otherwise. */
    if (rb_topo_kind_def(t->kind)->railed && t->nics_per_node != nics_before && t->rails == nics_before)
        t->rails = t->nics_per_node;
    if ((rc = opt_int("rails", o->rails, 1, &t->rails)) || (rc = opt_int("leaf-radix", o->leaf_radix, 2, &t->leaf_radix)) ||
        (rc = opt_int("spines", o->spines, 0, &t->spines)))
        return rc;
    if (o->oversubscription) {
        double x;
        if (rb_parse_double(o->oversubscription, &x) != 0 || !(x >= 1))
            return usage_error("oversubscription", o->oversubscription, "a number >= 1 (downlink:uplink ratio)");
        t->oversubscription = x;
    }
    for (size_t i = 0; i < o->links.n; i++)
        if ((rc = opt_link(o->links.v[i], t)) != 0)
            return rc;
    if (rb_topo_finish(t, err, sizeof err) != 0)
        return o->topology ? rb_cli_usage_error("topology %s: %s", o->topology, err)
                           : rb_cli_usage_error("topology: %s", err);
    return 0;
}

void rb_fabric_design_text(struct rb_buf *b, const struct rb_topo *t)
{
    rb_buf_printf(b, "%s \"%s\": %d nodes x %d GPUs, %d NICs per node", rb_topo_kind_name(t->kind), t->name,
                  t->nodes, t->gpus_per_node, t->nics_per_node);
    if (rb_topo_kind_def(t->kind)->railed)
        rb_buf_printf(b, ", %d rails", t->rails);
    rb_buf_printf(b, ", leaf radix %d, %d spines, oversubscription %g:1", t->leaf_radix, t->spines,
                  t->oversubscription);
}

int rb_fabric_save_json(const char *opt, const char *path, const cJSON *j)
{
    char *s = j ? cJSON_Print(j) : NULL;
    size_t n = s ? strlen(s) : 0;
    int rc = s ? 0 : -ENOMEM;
    if (s) {
        s[n] = '\n'; /* cJSON_Print's buffer holds the NUL: replace it, write n + 1 bytes */
        rc = rb_file_write_atomic(path, s, n + 1);
    }
    free(s);
    if (rc != 0) {
        fprintf(stderr, "railbench: error: %s %s: cannot write: %s\n", opt, path, strerror(-rc));
        return RB_EXIT_RUNTIME;
    }
    return 0;
}

int rb_fabric_emit(const char *command, struct rb_cli *cli, const char *table, cJSON *summary, bool json_out)
{
    int status = RB_EXIT_OK;
    if (cli->common.out_dir) {
        struct rb_harness h;
        /* Calculators: no MPI, a result directory only when asked for with --out. */
        int rc = rb_harness_init(&h, command, cli, NULL);
        if (rc != 0) {
            cJSON_Delete(summary);
            return rc;
        }
        rb_result_set(&h.result, "summary", cJSON_Duplicate(summary, 1));
        if (table)
            rb_result_write_table(&h.result, table);
        status = rb_harness_finish(&h, NULL, 0);
    }
    if (json_out) {
        char *s = cJSON_Print(summary);
        if (s) {
            fputs(s, stdout);
            fputc('\n', stdout);
            free(s);
        }
    } else if (table) {
        fputs(table, stdout);
    }
    fflush(stdout);
    cJSON_Delete(summary);
    return status;
}
