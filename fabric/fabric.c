/* railbench fabric: topology, discovery, simulation, counters, wire overhead. */
#include "railbench/command.h"
#include "fabric_int.h"

int rb_fabric_main(int argc, char **argv)
{
    static const struct rb_subcommand subs[] = {
        {"topo", "generate or read a topology: counts, bisection, hops with PXN off and on, Graphviz", rb_fabric_topo_main},
        {"map", "this host's GPUs, NICs and NUMA (hwloc): GPU -> NIC rails and rank placement", rb_fabric_map_main},
        {"sim", "predicted collective times on a topology (alpha-beta model), --compare, --calibrate", rb_fabric_sim_main},
        {"overhead", "wire bytes and packets per object for an MTU and header stack", rb_fabric_overhead_main},
        {"counters", "per-host disk, NIC and InfiniBand rates each interval", rb_fabric_counters_main},
        {"check", "find the bad link: every host pair on every rail, slow, asymmetric and hung links", rb_fabric_check_main},
        {0, 0, 0},
    };
    return rb_dispatch("railbench fabric", subs, argc, argv);
}
