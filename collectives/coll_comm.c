/* railbench coll's communicators: nodes, rails and split groups (--split, --per-rail, NCCL_TESTS_SPLIT). */
#include <stdlib.h>
#include <string.h>

#include "run_int.h"

static void comm_of(MPI_Comm c, struct rb_coll_comm *out)
{
    out->comm = c;
    RB_MPI_CHECK(MPI_Comm_rank(c, &out->rank));
    RB_MPI_CHECK(MPI_Comm_size(c, &out->size));
}

/*
 * Nodes and rails. A node is the ranks of one host (MPI_Comm_split_type
 * SHARED, as the harness found them), or with --ranks-per-node L the ranks
 * r with the same r / L. A rail is the ranks with the same local index on
 * every node: in a rail-optimised cluster, the GPUs whose NIC sits on the
 * same leaf switch.
 */
void rb_coll_rails_place(struct rb_harness *h, uint64_t ranks_per_node, struct rb_coll_rails *r)
{
    memset(r, 0, sizeof *r);
    if (ranks_per_node) {
        int L = (int)ranks_per_node;
        r->node_index = h->rank / L;
        r->local = h->rank % L;
        r->ranks_per_node = L;
    } else {
        r->node_index = h->host_index;
        r->local = h->local_rank;
        r->ranks_per_node = h->local_size;
    }
}

void rb_coll_rails_build(struct rb_harness *h, MPI_Comm group, struct rb_coll_rails *r)
{
    MPI_Comm node, rail;
    RB_MPI_CHECK(MPI_Comm_split(group, r->node_index, h->rank, &node));
    RB_MPI_CHECK(MPI_Comm_split(group, r->local, r->node_index, &rail));
    comm_of(group, &r->world);
    comm_of(node, &r->node);
    comm_of(rail, &r->rail);
    /* Rails need as many ranks of a group on every node. */
    int mm[2] = {r->node.size, -r->node.size};
    RB_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, mm, 2, MPI_INT, MPI_MAX, h->comm));
    r->hier_ok = mm[0] == -mm[1] && r->node.size * r->rail.size == r->world.size;
    snprintf(r->hier_why, sizeof r->hier_why,
             "nodes hold between %d and %d ranks of a group; rails need the same number on every node "
             "(see --ranks-per-node)",
             -mm[1], mm[0]);
    /* Who sits where: (rail rank = node position, node rank = local index) of every rank. */
    int n = r->world.size, mine[2] = {r->rail.rank, r->node.rank}, *all = malloc(2 * sizeof(int) * (size_t)n);
    r->world_of = malloc(sizeof(int) * (size_t)n);
    if (!all || !r->world_of)
        rb_harness_fatal(h, RB_EXIT_RUNTIME, "out of memory");
    RB_MPI_CHECK(MPI_Allgather(mine, 2, MPI_INT, all, 2, MPI_INT, r->world.comm));
    for (int i = 0; i < n && r->hier_ok; i++)
        r->world_of[all[2 * i] * r->node.size + all[2 * i + 1]] = i;
    free(all);
}

void rb_coll_rails_free(struct rb_harness *h, struct rb_coll_rails *r)
{
    if (r->node.comm != MPI_COMM_NULL && r->node.comm)
        RB_MPI_CHECK(MPI_Comm_free(&r->node.comm));
    if (r->rail.comm != MPI_COMM_NULL && r->rail.comm)
        RB_MPI_CHECK(MPI_Comm_free(&r->rail.comm));
    if (r->world.comm && r->world.comm != h->comm)
        RB_MPI_CHECK(MPI_Comm_free(&r->world.comm));
    free(r->world_of);
    r->world_of = NULL;
}

void rb_coll_run_comms(struct rb_coll_run *R)
{
    struct rb_harness *h = R->h;
    rb_coll_rails_place(h, R->o->ranks_per_node, &R->rl);
    int color = 0;
    if (R->o->per_rail)
        color = R->rl.local;
    else if (R->split_expr && rb_coll_split_color(R->split_expr, h->rank, &color) != 0)
        rb_harness_fatal(h, RB_EXIT_USAGE, "--split %s: not a split expression", R->split_expr);
    else if (R->split_mask && rb_coll_split_mask_color(R->split_mask, h->rank, &color) != 0)
        rb_harness_fatal(h, RB_EXIT_USAGE, "NCCL_TESTS_SPLIT_MASK %s: not a hex mask", R->split_mask);
    R->out.group = color;
    MPI_Comm group = h->comm;
    if (R->split_expr || R->split_mask || R->o->per_rail)
        RB_MPI_CHECK(MPI_Comm_split(h->comm, color, h->rank, &group));
    rb_coll_rails_build(h, group, &R->rl);
    R->out.group_size = R->rl.world.size;
    int *colors = malloc(sizeof(int) * (size_t)h->size);
    if (!colors)
        rb_harness_fatal(h, RB_EXIT_RUNTIME, "out of memory");
    RB_MPI_CHECK(MPI_Allgather(&color, 1, MPI_INT, colors, 1, MPI_INT, h->comm));
    R->out.ngroups = 0;
    for (int r = 0; r < h->size; r++) {
        bool seen = false;
        for (int q = 0; q < r && !seen; q++)
            seen = colors[q] == colors[r];
        R->out.ngroups += !seen;
    }
    free(colors);
}
