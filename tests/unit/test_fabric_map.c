/* Unit tests of fabric/map.c: hwloc XML fixtures of an 8-GPU/8-NIC node, a 4-GPU/2-NIC node and a CPU-only host. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "map_int.h"

#ifndef RB_FIXTURES_DIR
#define RB_FIXTURES_DIR "tests/fixtures"
#endif

#define FIX(name) RB_FIXTURES_DIR "/fabric/" name

static struct rb_map *load(const char *xml, const char *root)
{
    struct rb_map *m = malloc(sizeof *m);
    char err[512] = "";
    assert_non_null(m);
    if (rb_map_discover(m, xml, root, err, sizeof err) != 0)
        fail_msg("%s: %s", xml, err);
    return m;
}

static const char *nic_of(const struct rb_map *m, int gpu)
{
    int n = m->gpus[gpu].nic;
    return n < 0 ? "-" : m->nics[n].rdma[0] ? m->nics[n].rdma : m->nics[n].netdev;
}

static void test_gpu8_nic8(void **state)
{
    (void)state;
    struct rb_map *m = load(FIX("hwloc/gpu8-nic8.xml"), FIX("sys-gpu8"));
    assert_string_equal(m->host, "gpu-node-8x8");
    assert_int_equal(m->numa_nodes, 2);
    assert_int_equal(m->cores, 16);
    /* The BMC's ASPEED VGA (card0) is not a GPU; the NVMe drive is not a NIC. */
    assert_int_equal(m->ngpus, 8);
    assert_int_equal(m->nnics, 9);
    assert_int_equal(m->rails, 8);
    assert_true(m->rails_rdma);
    /* Each GPU takes the HCA on its own PCIe switch, whatever the HCAs are called. */
    static const char *const want[8] = {"mlx5_3", "mlx5_2", "mlx5_1", "mlx5_0", "mlx5_7", "mlx5_6", "mlx5_5", "mlx5_4"};
    for (int g = 0; g < 8; g++) {
        assert_string_equal(nic_of(m, g), want[g]);
        assert_int_equal(m->dist[g][m->gpus[g].nic], RB_MAP_PIX);
        assert_int_equal(m->nics[m->gpus[g].nic].rail, g);
        assert_int_equal(m->gpus[g].numa, g < 4 ? 0 : 1);
        assert_int_equal(m->gpus[g].local_rank, g);
        assert_int_equal(m->gpus[g].vendor_index, g);
        assert_int_equal(m->gpus[g].class_id, 0x0302);
    }
    assert_string_equal(m->gpus[0].busid, "0000:12:00.0");
    assert_string_equal(m->gpus[0].model, "NVIDIA H100 80GB HBM3");
    assert_string_equal(m->gpus[0].osdevs, "cuda0,nvml0");
    assert_string_equal(m->gpus[5].cpus, "8-15");
    assert_string_equal(m->gpus[5].rank_cores, "10-11");
    /* Distances: another switch on the same socket is NODE, the other socket SYS. */
    int nic_of_gpu1 = m->gpus[1].nic, nic_of_gpu4 = m->gpus[4].nic;
    assert_int_equal(m->dist[0][nic_of_gpu1], RB_MAP_NODE);
    assert_int_equal(m->dist[0][nic_of_gpu4], RB_MAP_SYS);
    /* Rates and link layers from the sysfs fixture; the management NIC carries no rail. */
    for (int n = 0; n < m->nnics; n++) {
        const struct rb_map_nic *x = &m->nics[n];
        if (x->rdma[0]) {
            assert_string_equal(x->transport, "InfiniBand");
            assert_true(x->rate_gbit_per_s == 400);
        } else {
            assert_string_equal(x->netdev, "eno1");
            assert_string_equal(x->transport, "Ethernet");
            assert_true(x->rate_gbit_per_s == 25);
            assert_int_equal(x->rail, -1);
        }
    }
    assert_int_equal(m->cores_per_rank, 2);
    assert_true(m->binding_follows_numa);
    char line[256];
    rb_map_mpirun(m, line, sizeof line);
    assert_string_equal(line, "mpirun -np $((NODES * 8)) --map-by ppr:8:node:PE=2 --bind-to core -x "
                              "CUDA_DEVICE_ORDER=PCI_BUS_ID");
    cJSON *j = rb_map_to_json(m);
    cJSON *pl = cJSON_GetObjectItemCaseSensitive(j, "placement");
    assert_int_equal(cJSON_GetArraySize(pl), 8);
    cJSON *env = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(pl, 3), "env");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(env, "CUDA_VISIBLE_DEVICES")), "3");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(env, "UCX_NET_DEVICES")), "mlx5_0:1");
    cJSON_Delete(j);
    free(m);
}

static void test_gpu4_nic2(void **state)
{
    (void)state;
    struct rb_map *m = load(FIX("hwloc/gpu4-nic2.xml"), FIX("sys-gpu4"));
    assert_int_equal(m->ngpus, 4);
    assert_int_equal(m->nnics, 2);
    assert_int_equal(m->rails, 2);
    /* AMD MI210s are display-class (0x0380) GPUs with RSMI and OpenCL devices. */
    assert_int_equal(m->gpus[0].class_id, 0x0380);
    assert_string_equal(m->gpus[0].model, "AMD Instinct MI210");
    /* Two GPUs per HCA, by PCIe switch (not round-robin: GPU 1 goes with GPU 0). */
    assert_string_equal(nic_of(m, 0), "mlx5_0");
    assert_string_equal(nic_of(m, 1), "mlx5_0");
    assert_string_equal(nic_of(m, 2), "mlx5_1");
    assert_string_equal(nic_of(m, 3), "mlx5_1");
    for (int g = 0; g < 4; g++)
        assert_int_equal(m->dist[g][m->gpus[g].nic], RB_MAP_PIX);
    assert_int_equal(m->nics[0].gpus, 2);
    assert_string_equal(m->nics[0].transport, "RoCE");
    assert_true(m->nics[0].rate_gbit_per_s == 200);
    assert_int_equal(m->cores_per_rank, 4);
    assert_string_equal(m->gpus[2].rank_cores, "8-11");
    cJSON *j = rb_map_to_json(m);
    cJSON *env = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "placement"), 2), "env");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(env, "ROCR_VISIBLE_DEVICES")), "2");
    cJSON_Delete(j);

    /* Without a sysfs root the rates are unknown but the transport still follows the PCI class. */
    free(m);
    m = load(FIX("hwloc/gpu4-nic2.xml"), NULL);
    assert_true(m->nics[1].rate_gbit_per_s == 0);
    assert_string_equal(m->nics[1].transport, "RoCE");
    free(m);
}

static void test_cpu_only(void **state)
{
    (void)state;
    struct rb_map *m = load(FIX("hwloc/cpu-only.xml"), NULL);
    assert_string_equal(m->host, "cpu-host");
    assert_int_equal(m->ngpus, 0);
    assert_int_equal(m->nnics, 1);
    assert_string_equal(m->nics[0].netdev, "eth0");
    assert_string_equal(m->nics[0].transport, "Ethernet");
    assert_int_equal(m->rails, 0);
    assert_false(m->rails_rdma);
    char line[256];
    rb_map_mpirun(m, line, sizeof line);
    assert_string_equal(line, "mpirun -np $((NODES * 4)) --map-by core --bind-to core");
    free(m);
}

/* The assignment alone, on distances made up for it: capacity ceil(GPUs / NICs), closest first. */
static void test_assign(void **state)
{
    (void)state;
    struct rb_map *m = calloc(1, sizeof *m);
    assert_non_null(m);
    m->ngpus = 4;
    m->nnics = 3;
    m->cores = 8;
    m->numa_nodes = 1;
    m->numa_ncores[0] = 8;
    for (int g = 0; g < 4; g++)
        m->gpus[g].index = g;
    snprintf(m->nics[0].rdma, sizeof m->nics[0].rdma, "mlx5_0");
    snprintf(m->nics[1].rdma, sizeof m->nics[1].rdma, "mlx5_1");
    snprintf(m->nics[2].netdev, sizeof m->nics[2].netdev, "eth0"); /* not RDMA: never a rail when RDMA exists */
    /* Every GPU is closest to mlx5_0 and the Ethernet NIC; mlx5_1 is across the socket. */
    for (int g = 0; g < 4; g++) {
        m->dist[g][0] = RB_MAP_PIX;
        m->dist[g][1] = RB_MAP_SYS;
        m->dist[g][2] = RB_MAP_PIX;
    }
    rb_map_assign(m);
    assert_int_equal(m->gpus[0].nic, 0);
    assert_int_equal(m->gpus[1].nic, 0);
    assert_int_equal(m->gpus[2].nic, 1); /* mlx5_0 is full (2 = ceil(4 / 2)) */
    assert_int_equal(m->gpus[3].nic, 1);
    assert_int_equal(m->rails, 2);
    assert_int_equal(m->nics[2].rail, -1);
    /* No RDMA NIC at all: Ethernet NICs stand in. */
    m->nics[0].rdma[0] = m->nics[1].rdma[0] = '\0';
    rb_map_assign(m);
    assert_false(m->rails_rdma);
    assert_int_equal(m->gpus[0].nic, 0);
    assert_int_equal(m->gpus[1].nic, 0);
    assert_int_equal(m->gpus[2].nic, 2);
    assert_int_equal(m->gpus[3].nic, 2);
    free(m);
}

static void test_bad_xml(void **state)
{
    (void)state;
    struct rb_map *m = malloc(sizeof *m);
    char err[512] = "";
    assert_int_equal(rb_map_discover(m, FIX("does-not-exist.xml"), NULL, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "does-not-exist.xml"));
    assert_int_equal(rb_map_discover(m, FIX("coll-run/result.json"), NULL, err, sizeof err), -EINVAL);
    free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gpu8_nic8),
        cmocka_unit_test(test_gpu4_nic2),
        cmocka_unit_test(test_cpu_only),
        cmocka_unit_test(test_assign),
        cmocka_unit_test(test_bad_xml),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
