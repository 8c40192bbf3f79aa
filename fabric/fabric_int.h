/* Subcommands of railbench fabric and the helpers they share (internal to fabric/). */
#ifndef RB_FABRIC_INT_H
#define RB_FABRIC_INT_H

#include "railbench/buf.h"

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "railbench/cli.h"
#include "topo_int.h"

/* Entry points (argv[0] is the subcommand word); each returns an exit status. */
int rb_fabric_counters_main(int argc, char **argv);
int rb_fabric_topo_main(int argc, char **argv);
int rb_fabric_map_main(int argc, char **argv);
int rb_fabric_sim_main(int argc, char **argv);
int rb_fabric_overhead_main(int argc, char **argv);
int rb_fabric_check_main(int argc, char **argv);

/* Topology options shared by topo and sim; all optional strings, NULL when not given. */
struct rb_topo_opts {
    const char *topology, *kind, *nodes, *gpus_per_node, *nics_per_node, *rails;
    const char *leaf_radix, *spines, *oversubscription;
    struct rb_strs links;
};

/* The rb_opt entries of struct rb_topo_opts o, to place inside an options array. */
#define RB_TOPO_OPTS(o)                                                                                             \
    {"topology", 0, RB_OPT_STR, &(o).topology, "FILE", "read the topology from this JSON file", NULL},              \
    {"kind", 0, RB_OPT_STR, &(o).kind, "fat-tree|rail-optimized|rail-only", "design of the fabric", NULL},          \
    {"nodes", 0, RB_OPT_STR, &(o).nodes, "N", "nodes (if not given: --topology's, else 32)", NULL},                 \
    {"gpus-per-node", 0, RB_OPT_STR, &(o).gpus_per_node, "N",                                                       \
     "GPUs per node (if not given: --topology's, else 8)", NULL},                                                   \
    {"nics-per-node", 0, RB_OPT_STR, &(o).nics_per_node, "N",                                                       \
     "NIC ports per node (if not given: --topology's, else 8)", NULL},                                              \
    {"rails", 0, RB_OPT_STR, &(o).rails, "N", "rails; NIC i is on rail i % N (if not given: NICs per node)", NULL}, \
    {"leaf-radix", 0, RB_OPT_STR, &(o).leaf_radix, "N",                                                             \
     "ports per leaf switch (if not given: --topology's, else 64)", NULL},                                          \
    {"spines", 0, RB_OPT_STR, &(o).spines, "N", "spine switches (if not given: --topology's, else 8)", NULL},       \
    {"oversubscription", 0, RB_OPT_STR, &(o).oversubscription, "X",                                                 \
     "leaf downlink:uplink ratio, >= 1 (if not given: --topology's, else 1)", NULL},                                \
    {"link", 0, RB_OPT_STRS, &(o).links, "CLASS:GBIT[:LAT]",                                                        \
     "repeatable; bandwidth in Gbit/s and latency (500ns, 1.5us) of nvlink, pcie, leaf or spine", NULL}

/*
 * Builds the topology: the file of --topology (or the built-in default),
 * then every option given on top. Prints one line naming the option or the
 * file and what is wrong, and returns RB_EXIT_USAGE; 0 on success.
 */
int rb_fabric_topo_resolve(const struct rb_topo_opts *o, struct rb_topo *t);

/* Appends the one-line description of design t (kind, name, sizes, rails, leaves, spines), without a newline. */
void rb_fabric_design_text(struct rb_buf *b, const struct rb_topo *t);

/*
 * Writes JSON j (pretty, with a final newline) to path atomically, for the
 * option opt (--save). Prints one line and returns RB_EXIT_RUNTIME when it
 * cannot; 0 on success.
 */
int rb_fabric_save_json(const char *opt, const char *path, const cJSON *j);

/*
 * Ends a calculator command (no MPI): prints table to stdout, or the summary
 * as JSON with json_out; with --out also writes result.json (summary under
 * "summary") and table.md. Takes ownership of summary. Returns the exit status.
 */
int rb_fabric_emit(const char *command, struct rb_cli *cli, const char *table, cJSON *summary, bool json_out);


#endif
