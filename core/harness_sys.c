/* What a run records of its hosts from /proc: name, kernel, CPU, memory, and each host's peak and proportional memory. */
#define _GNU_SOURCE
#include "railbench/harness.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "railbench/clock.h"
#include "railbench/file.h"
#include "railbench/log.h"

#include "harness_int.h"

/* Reads the first line of path that starts with key, returning what follows ':' (trimmed). */
static void read_proc_field(const char *path, const char *key, char *out, size_t len)
{
    out[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    char line[512];
    size_t klen = strlen(key);
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, key, klen) != 0)
            continue;
        char *v = strchr(line, ':');
        if (!v)
            continue;
        for (v++; *v == ' ' || *v == '\t'; v++)
            ;
        v[strcspn(v, "\n")] = '\0';
        snprintf(out, len, "%s", v);
        break;
    }
    fclose(f);
}

cJSON *rb_harness_host_info(const struct rb_harness *h)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", h->host);
    cJSON_AddNumberToObject(o, "ranks", h->local_size);
    struct utsname u;
    if (uname(&u) == 0) {
        cJSON_AddStringToObject(o, "kernel", u.release);
        cJSON_AddStringToObject(o, "arch", u.machine);
    }
    char buf[256];
    read_proc_field("/proc/cpuinfo", "model name", buf, sizeof buf);
    cJSON_AddStringToObject(o, "cpu", buf);
    cJSON_AddNumberToObject(o, "cpus", (double)sysconf(_SC_NPROCESSORS_ONLN));
    read_proc_field("/proc/meminfo", "MemTotal", buf, sizeof buf);
    cJSON_AddNumberToObject(o, "memory_bytes", strtod(buf, NULL) * 1024.0);
    return o;
}

/* A "NNN kB" field of a /proc file, in bytes; 0 when /proc cannot tell. */
static uint64_t proc_kib_field(const char *path, const char *key)
{
    char buf[64];
    read_proc_field(path, key, buf, sizeof buf);
    return (uint64_t)strtoull(buf, NULL, 10) * 1024;
}

/* Adds a number to result.json's host i when it has none of that name. */
static void host_number(struct rb_harness *h, int i, const char *key, const cJSON *num)
{
    cJSON *it = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(h->result.root, "hosts"), i);
    if (it && num && !cJSON_GetObjectItemCaseSensitive(it, key))
        cJSON_AddNumberToObject(it, key, cJSON_GetNumberValue(num));
}

/*
 * Adds two memory figures to each host of result.json's "hosts", both read
 * now, at the end: rss_max_bytes, the largest peak resident set (VmHWM) of
 * the host's ranks, and pss_bytes, the sum of the ranks' proportional set
 * sizes (Pss of /proc/self/smaps_rollup). A page the ranks share (MPI-3
 * shared memory, say an object listing held once per host) counts in full
 * in every rank's RSS but once in the sum of their Pss, so pss_bytes is
 * the host's memory and shows whether ranks share or copy. Collective.
 */
void rb_harness_record_rss(struct rb_harness *h)
{
    uint64_t mine[2] = {proc_kib_field("/proc/self/status", "VmHWM"),
                        proc_kib_field("/proc/self/smaps_rollup", "Pss")}, host[2] = {mine[0], mine[1]};
    if (h->mpi) {
        RB_MPI_CHECK(MPI_Allreduce(&mine[0], &host[0], 1, MPI_UINT64_T, MPI_MAX, h->node_comm));
        RB_MPI_CHECK(MPI_Allreduce(&mine[1], &host[1], 1, MPI_UINT64_T, MPI_SUM, h->node_comm));
    }
    /* One pair per host, from its first rank: gathered in the order of "hosts" (host index). */
    cJSON *pair = NULL;
    if (h->local_rank == 0) {
        pair = cJSON_CreateArray();
        cJSON_AddItemToArray(pair, cJSON_CreateNumber((double)host[0]));
        /* Pss unknown (no smaps_rollup): absent, not 0. */
        cJSON_AddItemToArray(pair, host[1] ? cJSON_CreateNumber((double)host[1]) : cJSON_CreateNull());
    }
    cJSON *all = rb_harness_gather_json(h, pair);
    cJSON_Delete(pair);
    if (h->rank == 0 && h->result.root)
        for (int i = 0; i < cJSON_GetArraySize(all); i++) {
            const cJSON *p = cJSON_GetArrayItem(all, i);
            host_number(h, i, "rss_max_bytes", cJSON_GetArrayItem(p, 0));
            if (cJSON_IsNumber(cJSON_GetArrayItem(p, 1)))
                host_number(h, i, "pss_bytes", cJSON_GetArrayItem(p, 1));
        }
    cJSON_Delete(all);
}
