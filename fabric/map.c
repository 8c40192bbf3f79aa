/* Host discovery for railbench fabric map: GPUs, NICs, NUMA and PCIe affinity via hwloc and sysfs; rails and placement. */
#define _POSIX_C_SOURCE 200809L
#include "map_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hwloc.h>

static const char *const link_names[] = {"PIX", "PHB", "NODE", "SYS"};

const char *rb_map_link_name(enum rb_map_link l)
{
    return (unsigned)l <= RB_MAP_SYS ? link_names[l] : "?";
}

/* OS devices that compute (not just display): CUDA, NVML, RSMI, OpenCL, LevelZero and other co-processors. */
static bool compute_osdev(hwloc_obj_t c)
{
    if (c->attr->osdev.type == HWLOC_OBJ_OSDEV_COPROC)
        return true;
    if (c->attr->osdev.type != HWLOC_OBJ_OSDEV_GPU || !c->name)
        return false;
    return strncmp(c->name, "nvml", 4) == 0 || strncmp(c->name, "rsmi", 4) == 0;
}

static bool is_gpu(hwloc_obj_t o)
{
    unsigned cls = o->attr->pcidev.class_id, ven = o->attr->pcidev.vendor_id;
    if (cls == 0x0302 || cls == 0x1200)
        return true;
    if (cls != 0x0300 && cls != 0x0380)
        return false;
    /* A VGA function is usually the BMC's (ASPEED, Matrox): only vendors of compute GPUs or a compute device count. */
    if (ven == 0x10de || ven == 0x1002)
        return true;
    for (hwloc_obj_t c = o->io_first_child; c; c = c->next_sibling)
        if (c->type == HWLOC_OBJ_OS_DEVICE && compute_osdev(c))
            return true;
    return false;
}

static hwloc_obj_t osdev_of(hwloc_obj_t o, hwloc_obj_osdev_type_t type)
{
    for (hwloc_obj_t c = o->io_first_child; c; c = c->next_sibling)
        if (c->type == HWLOC_OBJ_OS_DEVICE && c->attr->osdev.type == type)
            return c;
    return NULL;
}

static bool is_nic(hwloc_obj_t o)
{
    unsigned cls = o->attr->pcidev.class_id;
    return cls == 0x0200 || cls == 0x0207 || osdev_of(o, HWLOC_OBJ_OSDEV_OPENFABRICS) != NULL;
}

static void busid(hwloc_obj_t o, char *buf, size_t len)
{
    snprintf(buf, len, "%04x:%02x:%02x.%x", (unsigned)o->attr->pcidev.domain, o->attr->pcidev.bus,
             o->attr->pcidev.dev, o->attr->pcidev.func);
}

static void locality(hwloc_topology_t topo, hwloc_obj_t o, int *numa, char *cpus, size_t len)
{
    hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(topo, o);
    *numa = -1;
    cpus[0] = '\0';
    if (!anc)
        return;
    if (anc->nodeset && hwloc_bitmap_weight(anc->nodeset) == 1)
        *numa = hwloc_bitmap_first(anc->nodeset);
    if (anc->cpuset)
        hwloc_bitmap_list_snprintf(cpus, len, anc->cpuset);
}

/* First line of root/path, trimmed; "" when unreadable. */
static void read_sys(const char *root, const char *path, char *buf, size_t len)
{
    char full[1024];
    buf[0] = '\0';
    snprintf(full, sizeof full, "%s/%s", root, path);
    FILE *f = fopen(full, "r");
    if (!f)
        return;
    if (fgets(buf, (int)len, f))
        buf[strcspn(buf, "\r\n")] = '\0';
    else
        buf[0] = '\0';
    fclose(f);
}

/* Rate and link layer from sysfs: infiniband/<dev>/ports/1/rate ("400 Gb/sec (4X NDR)"), net/<if>/speed (Mb/s). */
static void sys_link(const char *root, struct rb_map_nic *n, char *layer, size_t llen)
{
    char path[256], v[128];
    layer[0] = '\0';
    if (!root)
        return;
    if (n->rdma[0]) {
        snprintf(path, sizeof path, "sys/class/infiniband/%s/ports/1/rate", n->rdma);
        read_sys(root, path, v, sizeof v);
        double g;
        char unit[16];
        if (sscanf(v, "%lf %15s", &g, unit) == 2 && g > 0 && strncmp(unit, "Gb", 2) == 0)
            n->rate_gbit_per_s = g;
        snprintf(path, sizeof path, "sys/class/infiniband/%s/ports/1/link_layer", n->rdma);
        read_sys(root, path, layer, llen);
    }
    if (n->rate_gbit_per_s == 0 && n->netdev[0]) {
        snprintf(path, sizeof path, "sys/class/net/%s/speed", n->netdev);
        read_sys(root, path, v, sizeof v);
        char *end;
        long mb = strtol(v, &end, 10);
        if (end != v && mb > 0)
            n->rate_gbit_per_s = (double)mb / 1000.0;
    }
}

/* hwloc_get_common_ancestor_obj compares depths, which I/O objects do not have: walk the parents instead. */
static hwloc_obj_t common_ancestor(hwloc_obj_t a, hwloc_obj_t b)
{
    for (hwloc_obj_t x = a; x; x = x->parent)
        for (hwloc_obj_t y = b; y; y = y->parent)
            if (x == y)
                return x;
    return NULL;
}

static enum rb_map_link distance(hwloc_obj_t a, hwloc_obj_t b, int numa_a, int numa_b)
{
    hwloc_obj_t c = common_ancestor(a, b);
    if (c && c->type == HWLOC_OBJ_BRIDGE)
        return c->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_PCI ? RB_MAP_PIX : RB_MAP_PHB;
    if (c && c->type == HWLOC_OBJ_PCI_DEVICE)
        return RB_MAP_PIX; /* functions of one device */
    return numa_a >= 0 && numa_a == numa_b ? RB_MAP_NODE : RB_MAP_SYS;
}

static void add_osdev_names(hwloc_obj_t o, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    for (hwloc_obj_t c = o->io_first_child; c; c = c->next_sibling)
        if (c->type == HWLOC_OBJ_OS_DEVICE && c->name && n + 1 < len) {
            int w = snprintf(buf + n, len - n, "%s%s", n ? "," : "", c->name);
            if (w > 0)
                n += (size_t)w < len - n ? (size_t)w : len - n - 1;
        }
}

static void gpu_model(hwloc_obj_t o, char *buf, size_t len)
{
    for (hwloc_obj_t c = o->io_first_child; c; c = c->next_sibling) {
        const char *m = c->type == HWLOC_OBJ_OS_DEVICE ? hwloc_obj_get_info_by_name(c, "GPUModel") : NULL;
        if (m) {
            snprintf(buf, len, "%s", m);
            return;
        }
    }
    const char *d = hwloc_obj_get_info_by_name(o, "PCIDevice");
    if (d)
        snprintf(buf, len, "%s", d);
    else
        snprintf(buf, len, "[%04x:%04x]", o->attr->pcidev.vendor_id, o->attr->pcidev.device_id);
}

int rb_map_discover(struct rb_map *m, const char *xml_path, const char *sys_root, char *err, size_t errlen)
{
    hwloc_topology_t topo;
    memset(m, 0, sizeof *m);
    if (hwloc_topology_init(&topo) != 0) {
        snprintf(err, errlen, "hwloc_topology_init failed");
        return -ENOMEM;
    }
    hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_ALL);
    if (xml_path && hwloc_topology_set_xml(topo, xml_path) != 0) {
        snprintf(err, errlen, "hwloc cannot use %s as XML input: %s", xml_path, strerror(errno));
        hwloc_topology_destroy(topo);
        return -EINVAL;
    }
    if (hwloc_topology_load(topo) != 0) {
        snprintf(err, errlen, "hwloc cannot load %s: %s", xml_path ? xml_path : "this host's topology",
                 strerror(errno));
        hwloc_topology_destroy(topo);
        return -EINVAL;
    }
    const char *hn = hwloc_obj_get_info_by_name(hwloc_get_root_obj(topo), "HostName");
    if (hn)
        snprintf(m->host, sizeof m->host, "%s", hn);
    else if (gethostname(m->host, sizeof m->host) != 0)
        snprintf(m->host, sizeof m->host, "unknown");
    m->host[sizeof m->host - 1] = '\0';
    m->cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
    m->pus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
    if (m->cores <= 0)
        m->cores = m->pus;
    int nn = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
    for (int i = 0; i < nn && m->numa_nodes < RB_MAP_MAX_NUMA; i++) {
        hwloc_obj_t node = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, (unsigned)i);
        int k = m->numa_nodes++;
        m->numa_os[k] = (int)node->os_index;
        m->numa_first_core[k] = -1;
        for (int c = 0; c < m->cores; c++) {
            hwloc_obj_t core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, (unsigned)c);
            if (!core)
                core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, (unsigned)c);
            if (core && core->nodeset && hwloc_bitmap_isset(core->nodeset, node->os_index)) {
                if (m->numa_first_core[k] < 0)
                    m->numa_first_core[k] = c;
                m->numa_ncores[k]++;
            }
        }
    }

    hwloc_obj_t gobj[RB_MAP_MAX_DEV], nobj[RB_MAP_MAX_DEV];
    unsigned vendor_count[3] = {0, 0, 0}; /* NVIDIA, AMD, others: GPUs seen so far */
    for (hwloc_obj_t o = NULL; (o = hwloc_get_next_pcidev(topo, o)) != NULL;) {
        if (is_gpu(o)) {
            if (m->ngpus == RB_MAP_MAX_DEV) {
                m->truncated = true;
                continue;
            }
            struct rb_map_gpu *g = &m->gpus[m->ngpus];
            gobj[m->ngpus] = o;
            g->index = m->ngpus++;
            busid(o, g->busid, sizeof g->busid);
            g->vendor_id = o->attr->pcidev.vendor_id;
            g->device_id = o->attr->pcidev.device_id;
            g->class_id = o->attr->pcidev.class_id;
            int v = g->vendor_id == 0x10de ? 0 : g->vendor_id == 0x1002 ? 1 : 2;
            g->vendor_index = (int)vendor_count[v]++;
            gpu_model(o, g->model, sizeof g->model);
            add_osdev_names(o, g->osdevs, sizeof g->osdevs);
            locality(topo, o, &g->numa, g->cpus, sizeof g->cpus);
            g->pcie_gbyte_per_s = o->attr->pcidev.linkspeed;
            g->nic = -1;
        } else if (is_nic(o)) {
            if (m->nnics == RB_MAP_MAX_DEV) {
                m->truncated = true;
                continue;
            }
            struct rb_map_nic *n = &m->nics[m->nnics];
            nobj[m->nnics++] = o;
            busid(o, n->busid, sizeof n->busid);
            n->vendor_id = o->attr->pcidev.vendor_id;
            n->device_id = o->attr->pcidev.device_id;
            n->class_id = o->attr->pcidev.class_id;
            hwloc_obj_t of = osdev_of(o, HWLOC_OBJ_OSDEV_OPENFABRICS), net = osdev_of(o, HWLOC_OBJ_OSDEV_NETWORK);
            if (of && of->name)
                snprintf(n->rdma, sizeof n->rdma, "%s", of->name);
            if (net && net->name)
                snprintf(n->netdev, sizeof n->netdev, "%s", net->name);
            locality(topo, o, &n->numa, n->cpus, sizeof n->cpus);
            n->pcie_gbyte_per_s = o->attr->pcidev.linkspeed;
            n->rail = -1;
            char layer[32];
            sys_link(sys_root, n, layer, sizeof layer);
            if (n->rdma[0])
                snprintf(n->transport, sizeof n->transport, "%s",
                         strcmp(layer, "Ethernet") == 0 ? "RoCE"
                         : strcmp(layer, "InfiniBand") == 0 || n->class_id == 0x0207 ? "InfiniBand"
                                                                                    : "RoCE");
            else
                snprintf(n->transport, sizeof n->transport, "%s", n->class_id == 0x0207 ? "InfiniBand" : "Ethernet");
        }
    }
    for (int g = 0; g < m->ngpus; g++)
        for (int n = 0; n < m->nnics; n++)
            m->dist[g][n] = (unsigned char)distance(gobj[g], nobj[n], m->gpus[g].numa, m->nics[n].numa);
    hwloc_topology_destroy(topo);
    rb_map_assign(m);
    return 0;
}

static int numa_slot(const struct rb_map *m, int os)
{
    for (int k = 0; k < m->numa_nodes; k++)
        if (m->numa_os[k] == os)
            return k;
    return -1;
}

void rb_map_assign(struct rb_map *m)
{
    bool any_rdma = false;
    for (int n = 0; n < m->nnics; n++) {
        m->nics[n].rail = -1;
        m->nics[n].gpus = 0;
        any_rdma |= m->nics[n].rdma[0] != '\0';
    }
    m->rails_rdma = any_rdma;
    m->rails = 0;
    int cand = 0;
    for (int n = 0; n < m->nnics; n++)
        cand += !any_rdma || m->nics[n].rdma[0];
    for (int g = 0; g < m->ngpus; g++)
        m->gpus[g].nic = -1;
    if (cand > 0 && m->ngpus > 0) {
        int room = (m->ngpus + cand - 1) / cand;
        /* Closest pairs first; among equals the lower GPU, then the lower NIC (bus order). */
        for (int d = RB_MAP_PIX; d <= RB_MAP_SYS; d++)
            for (int g = 0; g < m->ngpus; g++) {
                if (m->gpus[g].nic >= 0)
                    continue;
                for (int n = 0; n < m->nnics; n++) {
                    if ((any_rdma && !m->nics[n].rdma[0]) || m->dist[g][n] != d || m->nics[n].gpus >= room)
                        continue;
                    m->gpus[g].nic = n;
                    m->nics[n].gpus++;
                    break;
                }
            }
        for (int n = 0; n < m->nnics; n++)
            if (m->nics[n].gpus > 0)
                m->nics[n].rail = m->rails++;
    }

    /* Local ranks: NUMA node, then bus order, so ranks bound in core order sit next to their GPU. */
    int order[RB_MAP_MAX_DEV] = {0};
    for (int g = 0; g < m->ngpus; g++)
        order[g] = g;
    for (int i = 1; i < m->ngpus; i++)
        for (int j = i; j > 0; j--) {
            const struct rb_map_gpu *a = &m->gpus[order[j - 1]], *b = &m->gpus[order[j]];
            int na = a->numa < 0 ? 1 << 30 : a->numa, nb = b->numa < 0 ? 1 << 30 : b->numa;
            if (na < nb || (na == nb && a->index < b->index))
                break;
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    for (int r = 0; r < m->ngpus; r++)
        m->gpus[order[r]].local_rank = r;
    m->cores_per_rank = m->ngpus > 0 && m->cores >= m->ngpus ? m->cores / m->ngpus : 1;
    m->binding_follows_numa = m->ngpus > 0;
    for (int r = 0; r < m->ngpus; r++) {
        struct rb_map_gpu *g = &m->gpus[order[r]];
        int k = numa_slot(m, g->numa);
        g->rank_cores[0] = '\0';
        if (k < 0 || m->numa_ncores[k] == 0) {
            m->binding_follows_numa = false;
            continue;
        }
        /* This NUMA node's cores, split evenly among the ranks whose GPU is on it. */
        int on = 0, mine = 0;
        for (int q = 0; q < m->ngpus; q++)
            if (m->gpus[order[q]].numa == g->numa) {
                if (q < r)
                    mine++;
                on++;
            }
        int per = m->numa_ncores[k] / on;
        int first = m->numa_first_core[k] + mine * per;
        if (per >= 1)
            snprintf(g->rank_cores, sizeof g->rank_cores, per > 1 ? "%d-%d" : "%d", first, first + per - 1);
        else
            snprintf(g->rank_cores, sizeof g->rank_cores, "%d-%d", m->numa_first_core[k],
                     m->numa_first_core[k] + m->numa_ncores[k] - 1);
        /* mpirun --map-by ppr:G:node:PE=C binds rank r to cores [r*C, (r+1)*C): does that stay on g's node? */
        int lo = r * m->cores_per_rank, hi = lo + m->cores_per_rank - 1;
        if (lo < m->numa_first_core[k] || hi >= m->numa_first_core[k] + m->numa_ncores[k])
            m->binding_follows_numa = false;
    }
}

void rb_map_mpirun(const struct rb_map *m, char *buf, size_t len)
{
    if (m->ngpus == 0) {
        snprintf(buf, len, "mpirun -np $((NODES * %d)) --map-by core --bind-to core", m->cores > 0 ? m->cores : 1);
        return;
    }
    snprintf(buf, len, "mpirun -np $((NODES * %d)) --map-by ppr:%d:node:PE=%d --bind-to core%s", m->ngpus, m->ngpus,
             m->cores_per_rank, m->gpus[0].vendor_id == 0x10de ? " -x CUDA_DEVICE_ORDER=PCI_BUS_ID" : "");
}

/* The variables a rank launcher sets for local rank r's GPU and NIC. */
static cJSON *rank_env(const struct rb_map *m, const struct rb_map_gpu *g)
{
    cJSON *env = cJSON_CreateObject();
    char v[48];
    snprintf(v, sizeof v, "%d", g->vendor_index);
    if (g->vendor_id == 0x10de)
        cJSON_AddStringToObject(env, "CUDA_VISIBLE_DEVICES", v);
    else if (g->vendor_id == 0x1002)
        cJSON_AddStringToObject(env, "ROCR_VISIBLE_DEVICES", v);
    if (g->nic >= 0) {
        const struct rb_map_nic *n = &m->nics[g->nic];
        if (n->rdma[0]) {
            snprintf(v, sizeof v, "%s:1", n->rdma);
            cJSON_AddStringToObject(env, "UCX_NET_DEVICES", v);
        } else if (n->netdev[0]) {
            cJSON_AddStringToObject(env, "UCX_NET_DEVICES", n->netdev);
        }
    }
    return env;
}

cJSON *rb_map_to_json(const struct rb_map *m)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "host", m->host);
    cJSON_AddNumberToObject(j, "numa_nodes", m->numa_nodes);
    cJSON_AddNumberToObject(j, "cores", m->cores);
    cJSON_AddNumberToObject(j, "pus", m->pus);
    cJSON_AddBoolToObject(j, "truncated", m->truncated);
    cJSON *gs = cJSON_AddArrayToObject(j, "gpus");
    for (int i = 0; i < m->ngpus; i++) {
        const struct rb_map_gpu *g = &m->gpus[i];
        cJSON *o = cJSON_CreateObject();
        char id[16];
        cJSON_AddNumberToObject(o, "index", g->index);
        cJSON_AddStringToObject(o, "pci", g->busid);
        snprintf(id, sizeof id, "%04x:%04x", g->vendor_id, g->device_id);
        cJSON_AddStringToObject(o, "id", id);
        snprintf(id, sizeof id, "0x%04x", g->class_id);
        cJSON_AddStringToObject(o, "class", id);
        cJSON_AddStringToObject(o, "model", g->model);
        cJSON_AddStringToObject(o, "os_devices", g->osdevs);
        cJSON_AddNumberToObject(o, "numa", g->numa);
        cJSON_AddStringToObject(o, "cpus", g->cpus);
        cJSON_AddNumberToObject(o, "pcie_gbyte_per_s", g->pcie_gbyte_per_s);
        if (g->nic >= 0) {
            const struct rb_map_nic *n = &m->nics[g->nic];
            cJSON_AddStringToObject(o, "nic", n->rdma[0] ? n->rdma : n->netdev[0] ? n->netdev : n->busid);
            cJSON_AddNumberToObject(o, "rail", n->rail);
            cJSON_AddStringToObject(o, "pcie_path", rb_map_link_name((enum rb_map_link)m->dist[i][g->nic]));
        } else {
            cJSON_AddNullToObject(o, "nic");
            cJSON_AddNullToObject(o, "rail");
        }
        cJSON_AddNumberToObject(o, "local_rank", g->local_rank);
        cJSON_AddItemToArray(gs, o);
    }
    cJSON *ns = cJSON_AddArrayToObject(j, "nics");
    for (int i = 0; i < m->nnics; i++) {
        const struct rb_map_nic *n = &m->nics[i];
        cJSON *o = cJSON_CreateObject();
        char id[16];
        cJSON_AddStringToObject(o, "pci", n->busid);
        snprintf(id, sizeof id, "%04x:%04x", n->vendor_id, n->device_id);
        cJSON_AddStringToObject(o, "id", id);
        snprintf(id, sizeof id, "0x%04x", n->class_id);
        cJSON_AddStringToObject(o, "class", id);
        cJSON_AddStringToObject(o, "rdma_device", n->rdma);
        cJSON_AddStringToObject(o, "netdev", n->netdev);
        cJSON_AddStringToObject(o, "transport", n->transport);
        if (n->rate_gbit_per_s > 0)
            cJSON_AddNumberToObject(o, "rate_gbit_per_s", n->rate_gbit_per_s);
        else
            cJSON_AddNullToObject(o, "rate_gbit_per_s");
        cJSON_AddNumberToObject(o, "numa", n->numa);
        cJSON_AddStringToObject(o, "cpus", n->cpus);
        cJSON_AddNumberToObject(o, "pcie_gbyte_per_s", n->pcie_gbyte_per_s);
        if (n->rail >= 0)
            cJSON_AddNumberToObject(o, "rail", n->rail);
        else
            cJSON_AddNullToObject(o, "rail");
        cJSON_AddNumberToObject(o, "gpus", n->gpus);
        cJSON_AddItemToArray(ns, o);
    }
    cJSON_AddNumberToObject(j, "rails", m->rails);
    cJSON_AddBoolToObject(j, "rails_rdma", m->rails_rdma);
    cJSON *pl = cJSON_AddArrayToObject(j, "placement");
    for (int r = 0; r < m->ngpus; r++)
        for (int i = 0; i < m->ngpus; i++) {
            const struct rb_map_gpu *g = &m->gpus[i];
            if (g->local_rank != r)
                continue;
            cJSON *o = cJSON_CreateObject();
            cJSON_AddNumberToObject(o, "local_rank", r);
            cJSON_AddNumberToObject(o, "gpu", g->index);
            cJSON_AddStringToObject(o, "gpu_pci", g->busid);
            if (g->nic >= 0) {
                const struct rb_map_nic *n = &m->nics[g->nic];
                cJSON_AddStringToObject(o, "nic", n->rdma[0] ? n->rdma : n->netdev[0] ? n->netdev : n->busid);
                cJSON_AddNumberToObject(o, "rail", n->rail);
            }
            cJSON_AddNumberToObject(o, "numa", g->numa);
            cJSON_AddStringToObject(o, "cores", g->rank_cores);
            cJSON_AddItemToObject(o, "env", rank_env(m, g));
            cJSON_AddItemToArray(pl, o);
        }
    char line[256];
    rb_map_mpirun(m, line, sizeof line);
    cJSON_AddStringToObject(j, "mpirun", line);
    cJSON_AddNumberToObject(j, "cores_per_rank", m->cores_per_rank);
    cJSON_AddBoolToObject(j, "binding_follows_numa", m->binding_follows_numa);
    return j;
}
