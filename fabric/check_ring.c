/* railbench fabric check --ring: a ring all-reduce per rail over the hosts whose links on it completed; its bus bandwidth. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check_int.h"
#include "railbench/clock.h"
#include "railbench/harness.h"

/* Sends len bytes to out while receiving len bytes from in; 0, -ETIMEDOUT or -errno. */
static int shift(int out, const char *sbuf, int in, char *rbuf, size_t len, uint64_t deadline_ns)
{
    size_t sent = 0, got = 0;
    while (sent < len || got < len) {
        if (rb_clock_ns() >= deadline_ns)
            return -ETIMEDOUT;
        struct pollfd p[2] = {{.fd = sent < len ? out : -1, .events = POLLOUT}, {.fd = got < len ? in : -1, .events = POLLIN}};
        if (poll(p, 2, 100) < 0 && errno != EINTR)
            return -errno;
        if (p[0].revents) {
            ssize_t n = send(out, sbuf + sent, len - sent, MSG_NOSIGNAL);
            if (n < 0 && errno != EAGAIN && errno != EINTR)
                return -errno;
            sent += n > 0 ? (size_t)n : 0;
        }
        if (p[1].revents) {
            ssize_t n = recv(in, rbuf + got, len - got, 0);
            if (n == 0)
                return -ECONNRESET;
            if (n < 0 && errno != EAGAIN && errno != EINTR)
                return -errno;
            got += n > 0 ? (size_t)n : 0;
        }
    }
    return 0;
}

/*
 * One ring all-reduce (sum of floats) of k chunks of chunk floats, member i
 * of k: k-1 steps of reduce-scatter then k-1 of all-gather (nccl-tests'
 * ring; busbw factor 2(k-1)/k, ANCHORS.md).
 */
static int ring_allreduce(int next, int prev, float *data, float *tmp, size_t chunk, int i, int k, uint64_t deadline_ns)
{
    size_t bytes = chunk * sizeof *data;
    for (int s = 0; s < 2 * (k - 1); s++) {
        int send_c = ((i - s) % k + k) % k, recv_c = ((i - s - 1) % k + k) % k;
        int rc = shift(next, (const char *)(data + (size_t)send_c * chunk), prev, (char *)tmp, bytes, deadline_ns);
        if (rc)
            return rc;
        float *dst = data + (size_t)recv_c * chunk;
        if (s < k - 1)
            for (size_t j = 0; j < chunk; j++)
                dst[j] += tmp[j];
        else
            memcpy(dst, tmp, bytes);
    }
    return 0;
}

/* This rank's ring: the members of its rail (hosts with no hung link on it), then connections and the reps. */
static void ring_member(const struct rb_check_opts *o, struct rb_check_run *R, const int *hung, int round,
                        struct rb_check_ring *me)
{
    int k = 0, pos = -1;
    int *members = malloc((size_t)R->nhosts * sizeof *members);
    if (!members)
        return;
    for (int h = 0; h < R->nhosts; h++)
        if (!hung[h * R->nrails + R->rail] && R->peers[h * R->nrails + R->rail].ip) {
            if (h == R->host)
                pos = k;
            members[k++] = h;
        }
    me->hosts = k;
    if (pos < 0 || k < 2) {
        me->status = RB_CHECK_SKIPPED;
        free(members);
        return;
    }
    int nh = members[(pos + 1) % k], ph = members[(pos + k - 1) % k];
    free(members);
    uint64_t deadline = rb_clock_ns() + o->timeout_ns;
    struct rb_check_link l = {.a = R->host, .b = nh, .rail = R->rail, .round = round};
    int next = rb_cnet_connect(&R->peers[R->host * R->nrails + R->rail], &R->peers[nh * R->nrails + R->rail],
                               deadline, &l);
    int prev = next >= 0 ? rb_cnet_accept(R->listen_fd, round, ph, R->host, deadline) : -1;
    size_t chunk = o->net.size_bytes / sizeof(float) / (size_t)k + 1;
    float *data = calloc(chunk * (size_t)k, sizeof *data), *tmp = calloc(chunk, sizeof *tmp);
    int rc = next < 0 || prev < 0 || !data || !tmp ? -ETIMEDOUT : 0;
    me->status = RB_CHECK_OK;
    for (uint64_t r = 0; r <= o->net.reps && !rc; r++) { /* the first one warms up */
        for (size_t j = 0; j < chunk * (size_t)k; j++)
            data[j] = 1.0f; /* a sum of ones is exactly k everywhere */
        uint64_t t0 = rb_clock_ns();
        rc = ring_allreduce(next, prev, data, tmp, chunk, pos, k, deadline);
        double s = (double)(rb_clock_ns() - t0) * 1e-9;
        if (!rc && r > 0 && (me->time_s == 0 || s < me->time_s))
            me->time_s = s;
        for (size_t j = 0; !rc && j < chunk * (size_t)k; j++)
            me->wrong += data[j] != (float)k;
    }
    if (rc)
        me->status = RB_CHECK_TIMEOUT;
    free(data);
    free(tmp);
    if (next >= 0)
        close(next);
    if (prev >= 0)
        close(prev);
}

/* Every hung link of the run as (a, b, rail) triples, on every rank; *n triples. Collective. */
static int *hung_links(struct rb_harness *h, const struct rb_check_run *R, int *n)
{
    int cnt = 0, *counts = calloc((size_t)h->size, sizeof *counts), *displs = calloc((size_t)h->size, sizeof *displs);
    int *mine = malloc((3 * R->nmine + 1) * sizeof *mine);
    if (!counts || !displs || !mine)
        rb_harness_fatal(h, RB_EXIT_RUNTIME, "out of memory");
    for (size_t i = 0; i < R->nmine; i++)
        if (R->mine[i].status == RB_CHECK_TIMEOUT) {
            mine[cnt++] = R->mine[i].a;
            mine[cnt++] = R->mine[i].b;
            mine[cnt++] = R->mine[i].rail;
        }
    RB_MPI_CHECK(MPI_Allgather(&cnt, 1, MPI_INT, counts, 1, MPI_INT, h->comm));
    int total = 0;
    for (int i = 0; i < h->size; i++) {
        displs[i] = total;
        total += counts[i];
    }
    int *all = malloc(((size_t)total + 1) * sizeof *all);
    if (!all)
        rb_harness_fatal(h, RB_EXIT_RUNTIME, "out of memory");
    RB_MPI_CHECK(MPI_Allgatherv(mine, cnt, MPI_INT, all, counts, displs, MPI_INT, h->comm));
    free(counts);
    free(displs);
    free(mine);
    *n = total / 3;
    return all;
}

/*
 * Leaves out of rail r's ring the hosts a ring through would hang on: while a
 * hung link joins two members, the member with the most such links goes
 * (the lower index on a tie). out[h] = 1 for a host left out. Same result on every rank.
 */
static void leave_out(const int *links, int n, int nhosts, int r, int *out)
{
    int *deg = malloc((size_t)nhosts * sizeof *deg);
    if (!deg)
        return;
    for (;;) {
        memset(deg, 0, (size_t)nhosts * sizeof *deg);
        int worst = -1;
        for (int i = 0; i < n; i++) {
            const int *l = &links[3 * i];
            if (l[2] != r || out[l[0]] || out[l[1]])
                continue;
            deg[l[0]]++;
            deg[l[1]]++;
        }
        for (int x = 0; x < nhosts; x++)
            if (deg[x] > 0 && (worst < 0 || deg[x] > deg[worst]))
                worst = x;
        if (worst < 0)
            break;
        out[worst] = 1;
    }
    free(deg);
}

void rb_check_rings(struct rb_harness *h, const struct rb_check_opts *o, struct rb_check_run *R)
{
    /* Every rank learns which hosts to leave out of its rail's ring: a ring through a hung link hangs again. */
    int nh = 0, *links = hung_links(h, R, &nh);
    int *hung = calloc((size_t)R->nhosts * (size_t)R->nrails, sizeof *hung);
    R->rings = calloc((size_t)R->nrails, sizeof *R->rings);
    if (!hung || !R->rings)
        rb_harness_fatal(h, RB_EXIT_RUNTIME, "out of memory");
    int *col = calloc((size_t)R->nhosts, sizeof *col);
    for (int r = 0; col && r < R->nrails; r++) {
        memset(col, 0, (size_t)R->nhosts * sizeof *col);
        leave_out(links, nh, R->nhosts, r, col);
        for (int x = 0; x < R->nhosts; x++)
            hung[x * R->nrails + r] = col[x];
    }
    free(col);
    free(links);
    rb_harness_barrier(h);
    struct rb_check_ring me = {.rail = R->rail, .status = RB_CHECK_SKIPPED};
    if (R->rail >= 0)
        ring_member(o, R, hung, rb_check_plan_rounds(R->nhosts) + 1, &me);
    /* Per rail on rank 0: the slowest member's time, the worst status. */
    struct rb_check_ring *all = h->rank == 0 ? calloc((size_t)h->size, sizeof *all) : NULL;
    RB_MPI_CHECK(MPI_Gather(&me, sizeof me, MPI_BYTE, all, sizeof me, MPI_BYTE, 0, h->comm));
    for (int r = 0; h->rank == 0 && all && r < R->nrails; r++) {
        struct rb_check_ring *g = &R->rings[r];
        *g = (struct rb_check_ring){.rail = r, .status = RB_CHECK_SKIPPED};
        for (int i = 0; i < h->size; i++) {
            if (all[i].rail != r || all[i].status == RB_CHECK_SKIPPED)
                continue;
            g->hosts = all[i].hosts;
            g->status = g->status == RB_CHECK_TIMEOUT || all[i].status == RB_CHECK_TIMEOUT ? RB_CHECK_TIMEOUT
                                                                                         : RB_CHECK_OK;
            if (all[i].time_s > g->time_s)
                g->time_s = all[i].time_s;
            g->wrong += all[i].wrong;
        }
        if (g->status == RB_CHECK_OK && g->time_s > 0) {
            size_t chunk = o->net.size_bytes / sizeof(float) / (size_t)g->hosts + 1;
            double bytes = (double)(chunk * (size_t)g->hosts * sizeof(float));
            g->busbw_bytes_per_s = bytes / g->time_s * 2.0 * (g->hosts - 1) / g->hosts;
        }
    }
    free(all);
    free(hung);
}
