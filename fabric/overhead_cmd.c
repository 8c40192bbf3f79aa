/* railbench fabric overhead: wire bytes, packets and link efficiency per object for an MTU and header stack. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabric_int.h"
#include "overhead_int.h"
#include "railbench/units.h"

#define MTU_MIN_BYTES 68     /* RFC 791 */
#define MTU_MAX_BYTES 65536  /* Linux loopback's MTU */

static cJSON *stack_json(const char *s)
{
    cJSON *arr = cJSON_CreateArray();
    char buf[512];
    snprintf(buf, sizeof buf, "%s", s);
    for (char *save = NULL, *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(w, '=');
        if (!eq)
            continue;
        *eq = '\0';
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", w);
        cJSON_AddNumberToObject(o, "bytes", strtod(eq + 1, NULL));
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

/* One table row and one summary row per object size and MTU. */
static void table_rows(struct rb_buf *b, cJSON *rows, struct rb_overhead_cfg *cfg, const struct rb_u64s *sizes,
                       const struct rb_u64s *mtus, double link)
{
    for (size_t i = 0; i < sizes->n; i++)
        for (size_t m = 0; m < mtus->n; m++) {
            struct rb_overhead o;
            cfg->mtu_bytes = mtus->v[m];
            rb_overhead_compute(cfg, sizes->v[i], &o);
            double good = rb_overhead_goodput(&o, sizes->v[i], link);
            double objs = rb_overhead_objects_per_s(&o, link);
            char sz[32];
            rb_format_size(sz, sizeof sz, sizes->v[i]);
            rb_buf_printf(b, "| %s | %llu | %llu | %llu | %llu | %llu | %.3f %% | %.2f | %.1f |\n", sz,
                          (unsigned long long)mtus->v[m], (unsigned long long)o.payload_per_packet,
                          (unsigned long long)o.packets, (unsigned long long)o.header_bytes,
                          (unsigned long long)o.wire_bytes, 100 * o.efficiency, good * 8 / 1e9, objs);
            cJSON *r = cJSON_CreateObject();
            cJSON_AddNumberToObject(r, "object_bytes", (double)sizes->v[i]);
            cJSON_AddNumberToObject(r, "mtu_bytes", (double)mtus->v[m]);
            cJSON_AddNumberToObject(r, "payload_per_packet_bytes", (double)o.payload_per_packet);
            cJSON_AddNumberToObject(r, "packets", (double)o.packets);
            cJSON_AddNumberToObject(r, "header_bytes", (double)o.header_bytes);
            cJSON_AddNumberToObject(r, "wire_bytes", (double)o.wire_bytes);
            cJSON_AddNumberToObject(r, "efficiency", o.efficiency);
            cJSON_AddNumberToObject(r, "goodput_gbit_per_s", good * 8 / 1e9);
            cJSON_AddNumberToObject(r, "objects_per_s", objs);
            cJSON_AddItemToArray(rows, r);
        }
}

int rb_fabric_overhead_main(int argc, char **argv)
{
    struct rb_u64s sizes = {.n = 1, .v = {10 * RB_MIB}};
    struct rb_u64s mtus = {.n = 1, .v = {9000}};
    const char *l2 = "ethernet=14", *l3 = "ipv4=20,tcp=20,tcp-timestamps=12";
    uint64_t per_object = 0;
    double link_gbit = 100;
    bool includes_l2 = false, json = false;
    const struct rb_opt opts[] = {
        {"size", 's', RB_OPT_SIZES, &sizes, "SIZE,...", "object sizes", NULL},
        {"mtu", 0, RB_OPT_SIZES, &mtus, "BYTES,...", "MTUs (the IP packet size, as ip link sets it)", NULL},
        {"l2-headers", 0, RB_OPT_STR, &l2, "NAME=BYTES,...", "headers outside the MTU, per packet; add fcs=4,"
                                                             "preamble=8,gap=12 to count the physical layer", NULL},
        {"l3-headers", 0, RB_OPT_STR, &l3, "NAME=BYTES,...", "headers inside the MTU, per packet", NULL},
        {"mtu-includes-l2", 0, RB_OPT_FLAG, &includes_l2, NULL, "payload = MTU minus every header (the AIStore "
                                                                "write-up's arithmetic)", NULL},
        {"object-overhead", 0, RB_OPT_SIZE, &per_object, "BYTES", "application bytes per object (request and "
                                                                  "response headers)", NULL},
        {"link-rate", 0, RB_OPT_DOUBLE, &link_gbit, "GBIT", "link rate in Gbit/s for goodput and objects/s", NULL},
        {"json", 0, RB_OPT_FLAG, &json, NULL, "print the summary as JSON instead of the table", NULL},
        {0},
    };
    const struct rb_cmd_spec spec = {
        "railbench fabric overhead [options]",
        "Wire bytes and packets per object for an MTU and a header stack, and the efficiency of a link.\n"
        "Defaults: 66 header bytes a packet (Ethernet 14 outside the MTU; IPv4 20, TCP 20, timestamps 12\n"
        "inside), MTU 9000, a 10 MiB object, 100 Gbit/s.",
        opts, 0, 0, false};
    struct rb_cli cli;
    int rc;
    if (!rb_cli_parse_cmd(&cli, &spec, argc, argv, &rc))
        return rc;
    struct rb_overhead_cfg cfg;
    struct rb_buf b = {0};
    cJSON *summary = NULL;
    char err[256];
    rb_overhead_defaults(&cfg);
    cfg.mtu_includes_l2 = includes_l2;
    cfg.per_object_bytes = per_object;
    if (rb_overhead_parse_stack(l2, &cfg.l2_bytes, err, sizeof err) != 0) {
        rc = rb_cli_usage_error("--l2-headers: %s (e.g. ethernet=14,vlan=4)", err);
        goto done;
    }
    if (rb_overhead_parse_stack(l3, &cfg.l3_bytes, err, sizeof err) != 0) {
        rc = rb_cli_usage_error("--l3-headers: %s (e.g. ipv4=20,tcp=20,tcp-timestamps=12)", err);
        goto done;
    }
    if (!(link_gbit > 0)) {
        rc = rb_cli_usage_error("--link-rate: expected a rate in Gbit/s > 0, got %g", link_gbit);
        goto done;
    }
    for (size_t i = 0; i < sizes.n; i++)
        if (sizes.v[i] == 0) {
            rc = rb_cli_usage_error("--size: expected object sizes > 0 (e.g. 10MiB), got 0");
            goto done;
        }
    for (size_t i = 0; i < mtus.n; i++)
        if (mtus.v[i] <= cfg.l3_bytes + (includes_l2 ? cfg.l2_bytes : 0)) {
            rc = rb_cli_usage_error("--mtu: %llu leaves no payload after %llu header bytes inside it",
                                    (unsigned long long)mtus.v[i],
                                    (unsigned long long)(cfg.l3_bytes + (includes_l2 ? cfg.l2_bytes : 0)));
            goto done;
        }

    /* 68 is RFC 791's minimum MTU; 65536 is the largest Linux sets (loopback's). */
    for (size_t i = 0; i < mtus.n; i++)
        if (mtus.v[i] < MTU_MIN_BYTES || mtus.v[i] > MTU_MAX_BYTES) {
            rc = rb_cli_usage_error("--mtu %llu: expected %d to %d bytes (the IP packet size)",
                                    (unsigned long long)mtus.v[i], MTU_MIN_BYTES, MTU_MAX_BYTES);
            goto done;
        }
    double link = link_gbit * 1e9 / 8.0;
    summary = cJSON_CreateObject();
    cJSON *h = cJSON_AddObjectToObject(summary, "headers");
    cJSON_AddItemToObject(h, "l2", stack_json(l2));
    cJSON_AddItemToObject(h, "l3", stack_json(l3));
    cJSON_AddNumberToObject(h, "per_packet_bytes", (double)(cfg.l2_bytes + cfg.l3_bytes));
    cJSON_AddBoolToObject(h, "mtu_includes_l2", includes_l2);
    cJSON_AddNumberToObject(summary, "object_overhead_bytes", (double)per_object);
    cJSON_AddNumberToObject(summary, "link_gbit_per_s", link_gbit);
    cJSON *rows = cJSON_AddArrayToObject(summary, "rows");

    rb_buf_printf(&b, "# railbench fabric overhead: %llu header bytes a packet (%s outside the MTU; %s inside), ",
                  (unsigned long long)(cfg.l2_bytes + cfg.l3_bytes), l2[0] ? l2 : "none", l3[0] ? l3 : "none");
    rb_buf_printf(&b, "payload = MTU - %llu, link %g Gbit/s\n\n",
                  (unsigned long long)(cfg.l3_bytes + (includes_l2 ? cfg.l2_bytes : 0)), link_gbit);
    rb_buf_printf(&b, "| object | MTU | payload/packet | packets | header bytes | wire bytes | efficiency | "
                      "goodput (Gbit/s) | objects/s |\n");
    rb_buf_printf(&b, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    table_rows(&b, rows, &cfg, &sizes, &mtus, link);
    if (!includes_l2)
        rb_buf_printf(&b, "\nThe AIStore write-up's figures (~1,056 packets and ~70 KB of headers for 10 MiB, ~165 at "
                          "64K) are\n--mtu 10000,64000 --mtu-includes-l2: see docs/fabric.md.\n");
    rc = rb_fabric_emit("fabric overhead", &cli, b.s, summary, json);
    summary = NULL;
done:
    cJSON_Delete(summary);
    rb_buf_free(&b);
    rb_cli_free(&cli);
    return rc;
}
