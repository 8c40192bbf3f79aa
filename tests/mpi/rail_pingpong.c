/* MPI test program: ping-pong between local rank i of the first host and a local rank of the second, to put known bytes on a rail. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One pair's outcome, gathered to world rank 0 as plain bytes. */
struct pair_result {
    int active;
    int local_rank, peer_local_rank;
    char host[64], peer_host[64], iface[64];
    double bytes, seconds;
};

struct opts {
    long long size_bytes;  /* message size */
    long long total_bytes; /* bytes each side sends */
    int only_local_rank;   /* -1: every pair */
    int cross;             /* pair local rank i with local rank i+1 on the second host */
};

static void usage(FILE *f)
{
    fprintf(f, "usage: rail_pingpong [--size BYTES] [--bytes BYTES] [--local-rank I] [--cross]\n"
               "Pairs local rank i on the first host with local rank i (--cross: i+1) on the second;\n"
               "each pair exchanges --bytes in --size messages each way. Rank 0 prints one JSON line per pair.\n");
}

/* parse_count: a positive integer with an optional k/m/g binary suffix; 0 on success. */
static int parse_count(const char *s, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || v <= 0)
        return -1;
    switch (*end) {
    case 'k': case 'K': v <<= 10; end++; break;
    case 'm': case 'M': v <<= 20; end++; break;
    case 'g': case 'G': v <<= 30; end++; break;
    default: break;
    }
    if (*end)
        return -1;
    *out = v;
    return 0;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
    *o = (struct opts){.size_bytes = 1 << 20, .total_bytes = 64LL << 20, .only_local_rank = -1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--cross")) {
            o->cross = 1;
        } else if (!strcmp(a, "--size") && v && parse_count(v, &o->size_bytes) == 0) {
            i++;
        } else if (!strcmp(a, "--bytes") && v && parse_count(v, &o->total_bytes) == 0) {
            i++;
        } else if (!strcmp(a, "--local-rank") && v) {
            char *end;
            long r = strtol(v, &end, 10);
            if (*end || r < 0 || r > 1024) {
                fprintf(stderr, "rail_pingpong: --local-rank '%s': expected a number from 0 to 1024\n", v);
                return -1;
            }
            o->only_local_rank = (int)r;
            i++;
        } else if (!strcmp(a, "--help")) {
            usage(stdout);
            return 1;
        } else {
            fprintf(stderr, "rail_pingpong: bad option '%s'%s\n", a, v ? "" : " (missing value?)");
            usage(stderr);
            return -1;
        }
    }
    if (o->size_bytes > o->total_bytes || o->size_bytes > (1LL << 30)) {
        fprintf(stderr, "rail_pingpong: --size must be at most --bytes and 1 GiB\n");
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    struct opts o;
    int rc = parse_opts(argc, argv, &o);
    if (rc != 0) {
        MPI_Finalize();
        return rc < 0 ? 2 : 0;
    }

    /* Local rank and host index, as the harness derives them. */
    MPI_Comm node, leaders;
    int local_rank, local_size, host = 0, hosts = 0;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local_rank);
    MPI_Comm_size(node, &local_size);
    MPI_Comm_split(MPI_COMM_WORLD, local_rank == 0 ? 0 : MPI_UNDEFINED, rank, &leaders);
    if (leaders != MPI_COMM_NULL) {
        MPI_Comm_rank(leaders, &host);
        MPI_Comm_size(leaders, &hosts);
        MPI_Comm_free(&leaders);
    }
    MPI_Bcast(&host, 1, MPI_INT, 0, node);
    MPI_Bcast(&hosts, 1, MPI_INT, 0, node);
    if (hosts < 2) {
        if (rank == 0)
            fprintf(stderr, "rail_pingpong: needs ranks on at least 2 hosts, got %d\n", hosts);
        MPI_Finalize();
        return 2;
    }

    /* Pair colour: host 0's local rank i is pair i; host 1's local rank j joins pair j, or
     * pair j-1 with --cross. Ranks of other hosts, and pairs not selected, stay idle. */
    int pair = MPI_UNDEFINED;
    if (host == 0)
        pair = local_rank;
    else if (host == 1)
        pair = o.cross ? (local_rank + local_size - 1) % local_size : local_rank;
    if (pair != MPI_UNDEFINED && o.only_local_rank >= 0 && pair != o.only_local_rank)
        pair = MPI_UNDEFINED;
    MPI_Comm pc;
    MPI_Comm_split(MPI_COMM_WORLD, pair, host, &pc);

    struct pair_result me;
    memset(&me, 0, sizeof me);
    if (pc != MPI_COMM_NULL) {
        int pr, pn;
        MPI_Comm_rank(pc, &pr);
        MPI_Comm_size(pc, &pn);
        char *buf = malloc((size_t)o.size_bytes);
        if (!buf) {
            fprintf(stderr, "rail_pingpong: out of memory for %lld bytes\n", o.size_bytes);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
        memset(buf, rank & 0xff, (size_t)o.size_bytes);
        if (pn == 2) {
            long long n = (o.total_bytes + o.size_bytes - 1) / o.size_bytes;
            int peer = 1 - pr;
            int peer_local = 0;
            MPI_Sendrecv(&local_rank, 1, MPI_INT, peer, 0, &peer_local, 1, MPI_INT, peer, 0, pc,
                         MPI_STATUS_IGNORE);
            char peer_host[64] = "", my_host[64] = "";
            gethostname(my_host, sizeof my_host - 1);
            MPI_Sendrecv(my_host, sizeof my_host, MPI_CHAR, peer, 1, peer_host, sizeof peer_host,
                         MPI_CHAR, peer, 1, pc, MPI_STATUS_IGNORE);
            double t0 = MPI_Wtime();
            for (long long k = 0; k < n; k++) {
                int count = (int)o.size_bytes;
                if (pr == 0) {
                    MPI_Send(buf, count, MPI_BYTE, peer, 2, pc);
                    MPI_Recv(buf, count, MPI_BYTE, peer, 2, pc, MPI_STATUS_IGNORE);
                } else {
                    MPI_Recv(buf, count, MPI_BYTE, peer, 2, pc, MPI_STATUS_IGNORE);
                    MPI_Send(buf, count, MPI_BYTE, peer, 2, pc);
                }
            }
            double dt = MPI_Wtime() - t0;
            if (pr == 0) {
                const char *ifs = getenv("OMPI_MCA_btl_tcp_if_include");
                me.active = 1;
                me.local_rank = local_rank;
                me.peer_local_rank = peer_local;
                snprintf(me.host, sizeof me.host, "%s", my_host);
                snprintf(me.peer_host, sizeof me.peer_host, "%s", peer_host);
                snprintf(me.iface, sizeof me.iface, "%s", ifs ? ifs : "");
                me.bytes = (double)n * (double)o.size_bytes * 2;
                me.seconds = dt;
            }
        }
        free(buf);
        MPI_Comm_free(&pc);
    }

    struct pair_result *all = rank == 0 ? calloc((size_t)size, sizeof *all) : NULL;
    MPI_Gather(&me, sizeof me, MPI_BYTE, all, sizeof me, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        for (int r = 0; r < size; r++) {
            if (!all[r].active)
                continue;
            printf("{\"local_rank\":%d,\"peer_local_rank\":%d,\"host\":\"%s\",\"peer_host\":\"%s\","
                   "\"btl_tcp_if_include\":\"%s\",\"bytes\":%.0f,\"seconds\":%.6f,\"bytes_per_s\":%.0f}\n",
                   all[r].local_rank, all[r].peer_local_rank, all[r].host, all[r].peer_host,
                   all[r].iface, all[r].bytes, all[r].seconds,
                   all[r].seconds > 0 ? all[r].bytes / all[r].seconds : 0.0);
        }
        free(all);
    }
    MPI_Comm_free(&node);
    MPI_Finalize();
    return 0;
}
