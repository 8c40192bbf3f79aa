/* Discovery of a host's GPUs, NICs, NUMA nodes and PCIe affinity (hwloc, sysfs), GPU -> NIC rails and rank placement. */
#ifndef RB_FABRIC_MAP_INT_H
#define RB_FABRIC_MAP_INT_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#define RB_MAP_MAX_DEV 64
#define RB_MAP_MAX_NUMA 64

/* PCIe distance between two devices, in nvidia-smi topo's words; smaller is closer. */
enum rb_map_link {
    RB_MAP_PIX,  /* same PCIe switch */
    RB_MAP_PHB,  /* same PCIe host bridge */
    RB_MAP_NODE, /* same NUMA node, different host bridges */
    RB_MAP_SYS,  /* across NUMA nodes (the CPUs' interconnect) */
};

struct rb_map_gpu {
    char busid[16];           /* "0000:12:00.0" */
    unsigned vendor_id, device_id, class_id;
    char model[96];
    char osdevs[96];          /* hwloc OS devices, "cuda0,nvml0" */
    int index;                /* among GPUs in PCI bus order */
    int vendor_index;         /* among GPUs of the same vendor (CUDA_VISIBLE_DEVICES with PCI_BUS_ID order) */
    int numa;                 /* NUMA node (OS index), -1 when not a single one */
    char cpus[64];            /* CPUs local to it (list) */
    double pcie_gbyte_per_s;  /* hwloc's link speed, 0 unknown */
    int nic;                  /* assigned NIC (index in nics[]) or -1 */
    int local_rank;           /* proposed rank on the node */
    char rank_cores[32];      /* cores proposed for that rank (logical indices) */
};

struct rb_map_nic {
    char busid[16];
    unsigned vendor_id, device_id, class_id;
    char rdma[32];            /* OpenFabrics device ("mlx5_0"), "" without RDMA */
    char netdev[32];          /* network interface, "" when none */
    char transport[16];       /* "InfiniBand", "RoCE" or "Ethernet" */
    double rate_gbit_per_s;   /* from sysfs; 0 unknown */
    int numa;
    char cpus[64];
    double pcie_gbyte_per_s;
    int rail;                 /* rail index, -1 when it carries no GPU's traffic */
    int gpus;                 /* GPUs assigned */
};

struct rb_map {
    char host[64];
    int numa_nodes, cores, pus;
    int numa_os[RB_MAP_MAX_NUMA];          /* OS index of each NUMA node */
    int numa_first_core[RB_MAP_MAX_NUMA];  /* logical index of its first core */
    int numa_ncores[RB_MAP_MAX_NUMA];
    int ngpus, nnics;
    bool truncated;                        /* more than RB_MAP_MAX_DEV of a kind */
    struct rb_map_gpu gpus[RB_MAP_MAX_DEV];
    struct rb_map_nic nics[RB_MAP_MAX_DEV];
    unsigned char dist[RB_MAP_MAX_DEV][RB_MAP_MAX_DEV]; /* enum rb_map_link, [gpu][nic] */
    int rails;
    bool rails_rdma;          /* rails are RDMA NICs; false: no RDMA NIC, Ethernet NICs stand in */
    int cores_per_rank;       /* PE= of the proposed mpirun line */
    bool binding_follows_numa;/* ranks bound in core order land on their GPU's NUMA node */
};

/* "PIX", "PHB", "NODE", "SYS". */
const char *rb_map_link_name(enum rb_map_link l);

/*
 * Discovers GPUs (PCI class 0x0302 3D controller and 0x1200 accelerator;
 * 0x0300 VGA and 0x0380 display when NVIDIA, AMD, or with a compute OS
 * device such as CUDA, NVML, RSMI, OpenCL, LevelZero), NICs (0x0207
 * InfiniBand, 0x0200 Ethernet, anything with an OpenFabrics OS device),
 * NUMA nodes and PCIe distances through hwloc, from this host or from the
 * hwloc XML file xml_path. Link rates and link layers come from
 * sys_root/sys/class/{infiniband,net}; sys_root NULL skips them. Then
 * assigns rails and placement (rb_map_assign). Returns 0 or -EINVAL with
 * a message in err when hwloc cannot load the topology.
 */
int rb_map_discover(struct rb_map *m, const char *xml_path, const char *sys_root, char *err, size_t errlen);

/*
 * Assigns GPUs to NICs from m->dist: rails are the RDMA NICs (all NICs
 * when there is none); each GPU takes the closest NIC with room, room being
 * ceil(GPUs / rails), ties to the lower bus ids; rails are numbered in bus
 * order of the NICs that got a GPU. Local ranks follow NUMA node then bus
 * order, each NUMA node's cores split among its ranks.
 */
void rb_map_assign(struct rb_map *m);

/* The map as JSON (host, gpus, nics, rails, placement, mpirun line); caller frees. */
cJSON *rb_map_to_json(const struct rb_map *m);

/* The proposed mpirun line for nodes hosts like this one (program and its arguments left to the user). */
void rb_map_mpirun(const struct rb_map *m, char *buf, size_t len);

#endif
