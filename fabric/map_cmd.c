/* railbench fabric map: this host's (or an hwloc XML file's) GPUs, NICs and NUMA; proposed rails and rank placement. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabric_int.h"
#include "map_int.h"

static const char *nic_name(const struct rb_map_nic *n)
{
    return n->rdma[0] ? n->rdma : n->netdev[0] ? n->netdev : n->busid;
}

static void tables(const struct rb_map *m, const char *source, struct rb_buf *b, cJSON *notes)
{
    int rdma = 0;
    for (int i = 0; i < m->nnics; i++)
        rdma += m->nics[i].rdma[0] != '\0';
    rb_buf_printf(b, "# railbench fabric map: %s (%s): %d NUMA node%s, %d cores, %d GPU%s, %d NIC%s (%d RDMA)\n",
                  m->host, source, m->numa_nodes, m->numa_nodes == 1 ? "" : "s", m->cores, m->ngpus,
                  m->ngpus == 1 ? "" : "s", m->nnics, m->nnics == 1 ? "" : "s", rdma);
    if (m->ngpus > 0) {
        rb_buf_printf(b, "\n| GPU | PCI | model | OS devices | NUMA | CPUs | NIC | rail | PCIe path |\n");
        rb_buf_printf(b, "|---:|---|---|---|---:|---|---|---:|---|\n");
        for (int i = 0; i < m->ngpus; i++) {
            const struct rb_map_gpu *g = &m->gpus[i];
            char rail[16] = "-";
            if (g->nic >= 0)
                snprintf(rail, sizeof rail, "%d", m->nics[g->nic].rail);
            rb_buf_printf(b, "| %d | %s | %s | %s | %d | %s | %s | %s | %s |\n", g->index, g->busid, g->model,
                          g->osdevs[0] ? g->osdevs : "-", g->numa, g->cpus, g->nic >= 0 ? nic_name(&m->nics[g->nic]) : "-",
                          rail, g->nic >= 0 ? rb_map_link_name((enum rb_map_link)m->dist[i][g->nic]) : "-");
        }
    }
    if (m->nnics > 0) {
        rb_buf_printf(b, "\n| NIC | PCI | id | transport | rate (Gbit/s) | NUMA | rail | GPUs |\n");
        rb_buf_printf(b, "|---|---|---|---|---:|---:|---:|---:|\n");
        for (int i = 0; i < m->nnics; i++) {
            const struct rb_map_nic *n = &m->nics[i];
            char rate[24] = "?", rail[16] = "-";
            if (n->rate_gbit_per_s > 0)
                snprintf(rate, sizeof rate, "%g", n->rate_gbit_per_s);
            if (n->rail >= 0)
                snprintf(rail, sizeof rail, "%d", n->rail);
            char name[72];
            if (n->rdma[0] && n->netdev[0])
                snprintf(name, sizeof name, "%s (%s)", n->rdma, n->netdev);
            else
                snprintf(name, sizeof name, "%s", nic_name(n));
            rb_buf_printf(b, "| %s | %s | %04x:%04x | %s | %s | %d | %s | %d |\n", name, n->busid, n->vendor_id,
                          n->device_id, n->transport, rate, n->numa, rail, n->gpus);
        }
    }
    if (m->ngpus > 0) {
        rb_buf_printf(b, "\nplacement on each node (local rank: GPU, NIC, cores):\n\n");
        rb_buf_printf(b, "| local rank | GPU | NIC | rail | NUMA | cores |\n|---:|---:|---|---:|---:|---|\n");
        for (int r = 0; r < m->ngpus; r++)
            for (int i = 0; i < m->ngpus; i++) {
                const struct rb_map_gpu *g = &m->gpus[i];
                if (g->local_rank != r)
                    continue;
                char rail[16] = "-";
                if (g->nic >= 0)
                    snprintf(rail, sizeof rail, "%d", m->nics[g->nic].rail);
                rb_buf_printf(b, "| %d | %d | %s | %s | %d | %s |\n", r, g->index,
                              g->nic >= 0 ? nic_name(&m->nics[g->nic]) : "-", rail, g->numa,
                              g->rank_cores[0] ? g->rank_cores : "-");
            }
    }
    char line[256];
    rb_map_mpirun(m, line, sizeof line);
    rb_buf_printf(b, "\n%s\n", line);

#define NOTE(...)                                                                                              \
    do {                                                                                                       \
        char n_[512];                                                                                          \
        snprintf(n_, sizeof n_, __VA_ARGS__);                                                                  \
        rb_buf_printf(b, "note: %s\n", n_);                                                                    \
        cJSON_AddItemToArray(notes, cJSON_CreateString(n_));                                                   \
    } while (0)
    if (m->ngpus == 0)
        NOTE("no GPU found (PCI classes 0x0302 3D and 0x1200 accelerator; 0x0300 VGA and 0x0380 display from "
             "NVIDIA, AMD or with a CUDA/NVML/RSMI/OpenCL/LevelZero device): nothing to map to rails; the line "
             "above places CPU ranks");
    if (m->nnics == 0)
        NOTE("no NIC found: ranks on this host can only talk to each other");
    else if (rdma == 0)
        NOTE("no InfiniBand or RDMA NIC (no OpenFabrics device)%s", m->ngpus ? "; Ethernet NICs stand in as rails" : "");
    if (m->ngpus > 0 && m->rails > 0 && m->rails < m->ngpus)
        NOTE("%d GPUs share %d rail NIC%s", m->ngpus, m->rails, m->rails == 1 ? "" : "s");
    for (int i = 0; i < m->ngpus; i++)
        if (m->gpus[i].nic >= 0 && m->dist[i][m->gpus[i].nic] >= RB_MAP_NODE)
            NOTE("GPU %d has no NIC on its PCIe switch or host bridge: %s is %s away", i,
                 nic_name(&m->nics[m->gpus[i].nic]), rb_map_link_name((enum rb_map_link)m->dist[i][m->gpus[i].nic]));
    if (m->ngpus > 0 && !m->binding_follows_numa)
        NOTE("binding ranks in core order (PE=%d) does not keep every rank on its GPU's NUMA node: bind each rank "
             "to the cores listed above instead", m->cores_per_rank);
    if (m->truncated)
        NOTE("more than %d GPUs or NICs: the rest are not shown", RB_MAP_MAX_DEV);
#undef NOTE
}

int rb_fabric_map_main(int argc, char **argv)
{
    const char *xml = NULL, *root = NULL;
    bool json = false;
    const struct rb_opt opts[] = {
        {"xml", 0, RB_OPT_STR, &xml, "FILE", "read an hwloc XML topology (lstopo --of xml) instead of this host", NULL},
        {"root", 0, RB_OPT_STR, &root, "DIR", "read link rates from DIR/sys/class (if not given: / for this "
                                               "host, none with --xml)", NULL},
        {"json", 0, RB_OPT_FLAG, &json, NULL, "print the map as JSON instead of the tables", NULL},
        {0},
    };
    const struct rb_cmd_spec spec = {
        "railbench fabric map [options]",
        "Discover GPUs, NICs, NUMA nodes and PCIe affinity (hwloc, sysfs); propose the GPU -> NIC (rail)\n"
        "assignment and a rank placement for mpirun.",
        opts, 0, 0, false};
    struct rb_cli cli;
    int rc;
    if (!rb_cli_parse_cmd(&cli, &spec, argc, argv, &rc))
        return rc;
    struct rb_map *m = malloc(sizeof *m);
    struct rb_buf b = {0};
    char err[512];
    if (!m) {
        rc = RB_EXIT_RUNTIME;
        goto done;
    }
    if (rb_map_discover(m, xml, root ? root : (xml ? NULL : "/"), err, sizeof err) != 0) {
        if (xml) {
            rc = rb_cli_usage_error("--xml: %s", err);
        } else {
            fprintf(stderr, "railbench: error: %s\n", err);
            rc = RB_EXIT_RUNTIME;
        }
        goto done;
    }
    cJSON *summary = rb_map_to_json(m);
    cJSON_AddStringToObject(summary, "source", xml ? xml : "this host");
    cJSON *notes = cJSON_AddArrayToObject(summary, "notes");
    tables(m, xml ? xml : "this host", &b, notes);
    rc = rb_fabric_emit("fabric map", &cli, b.s, summary, json);
done:
    free(m);
    rb_buf_free(&b);
    rb_cli_free(&cli);
    return rc;
}
