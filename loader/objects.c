/* Object sets: generated names, a file list or a bucket listing; partitions across ranks; seeded permutations. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "objset_int.h"
#include "railbench/units.h"

int rb_objset_add(struct rb_objset *s, const char *name, uint64_t size_bytes)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 64;
        char **names = realloc(s->names, cap * sizeof *names);
        if (!names)
            return -ENOMEM;
        s->names = names;
        uint64_t *sizes = realloc(s->sizes, cap * sizeof *sizes);
        if (!sizes)
            return -ENOMEM;
        s->sizes = sizes;
        s->cap = cap;
    }
    char *copy = strdup(name);
    if (!copy)
        return -ENOMEM;
    s->names[s->n] = copy;
    s->sizes[s->n] = size_bytes;
    s->n++;
    return 0;
}

int rb_objset_generate(struct rb_objset *s, const char *prefix, uint64_t n)
{
    int width = 8;
    for (uint64_t top = n ? n - 1 : 0; top >= 100000000ull; top /= 10)
        width++;
    char name[1100], num[32];
    if (prefix && strlen(prefix) > 1000)
        return -ENAMETOOLONG;
    for (uint64_t i = 0; i < n; i++) {
        snprintf(num, sizeof num, "%020" PRIu64, i);
        snprintf(name, sizeof name, "%.1000s%s", prefix ? prefix : "", num + 20 - width);
        int rc = rb_objset_add(s, name, 0);
        if (rc)
            return rc;
    }
    return 0;
}

int rb_objset_from_file(struct rb_objset *s, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        int rc = -errno;
        snprintf(err, errlen, "--filelist %s: %s", path, strerror(errno));
        return rc;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    unsigned long lineno = 0;
    int rc = 0;
    while ((len = getline(&line, &cap, f)) >= 0) {
        lineno++;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = '\0';
        char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p || *p == '#')
            continue;
        char *sep = p + strcspn(p, " \t");
        uint64_t size = 0;
        if (*sep) {
            *sep++ = '\0';
            while (*sep == ' ' || *sep == '\t')
                sep++;
            if (*sep && rb_parse_size(sep, &size) != 0) {
                snprintf(err, errlen, "--filelist %s:%lu: bad size \"%.64s\" (expected NAME [SIZE])",
                         path, lineno, sep);
                rc = -EINVAL;
                break;
            }
        }
        if (strlen(p) > 1024) {
            snprintf(err, errlen, "--filelist %s:%lu: object name longer than 1024 bytes", path, lineno);
            rc = -EINVAL;
            break;
        }
        rc = rb_objset_add(s, p, size);
        if (rc) {
            snprintf(err, errlen, "--filelist %s: out of memory", path);
            break;
        }
    }
    if (!rc && ferror(f)) {
        rc = -EIO;
        snprintf(err, errlen, "--filelist %s: read error", path);
    }
    free(line);
    fclose(f);
    return rc;
}

int rb_objset_partition(const struct rb_objset *all, int rank, int size, struct rb_objset *mine)
{
    if (size < 1 || rank < 0 || rank >= size)
        return -EINVAL;
    for (size_t i = (size_t)rank; i < all->n; i += (size_t)size) {
        int rc = rb_objset_add(mine, all->names[i], all->sizes[i]);
        if (rc)
            return rc;
    }
    return 0;
}

void rb_objset_free(struct rb_objset *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        free(s->names[i]);
    free(s->names);
    free(s->sizes);
    memset(s, 0, sizeof *s);
}

/* xorshift64* (Vigna, "An experimental exploration of Marsaglia's xorshift generators", 2016). */
static uint64_t next_rand(uint64_t *x)
{
    *x ^= *x >> 12;
    *x ^= *x << 25;
    *x ^= *x >> 27;
    return *x * 0x2545f4914f6cdd1dull;
}

void rb_objset_shuffle(uint32_t *idx, size_t n, uint64_t seed)
{
    uint64_t x = seed * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;
    if (!x)
        x = 1;
    for (size_t i = n; i > 1; i--) {
        /* Lemire's multiply-shift maps 64 random bits onto [0, i) with negligible bias for i < 2^32. */
        size_t j = (size_t)(((unsigned __int128)next_rand(&x) * i) >> 64);
        uint32_t t = idx[i - 1];
        idx[i - 1] = idx[j];
        idx[j] = t;
    }
}

/* MPI counts are ints: big buffers go in pieces of at most 1 GiB. */
#define BCAST_CHUNK (1ull << 30)

static int bcast_bytes(void *buf, uint64_t len, MPI_Datatype type, size_t elem, int root, MPI_Comm comm)
{
    for (uint64_t off = 0; off < len; off += BCAST_CHUNK / elem) {
        uint64_t n = len - off < BCAST_CHUNK / elem ? len - off : BCAST_CHUNK / elem;
        if (MPI_Bcast((char *)buf + off * elem, (int)n, type, root, comm) != MPI_SUCCESS)
            return -EIO;
    }
    return 0;
}

int rb_objset_bcast(struct rb_objset *s, int root, MPI_Comm comm)
{
    int rank, size;
    if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS || MPI_Comm_size(comm, &size) != MPI_SUCCESS)
        return -EIO;
    if (size == 1)
        return 0;
    /* Root packs the names as "name\0name\0..." and the sizes as one array; UINT64_MAX says it could not. */
    uint64_t hdr[2] = {0, 0};
    char *names = NULL;
    uint64_t *sizes = NULL;
    if (rank == root) {
        uint64_t len = 0;
        for (size_t i = 0; i < s->n; i++)
            len += strlen(s->names[i]) + 1;
        names = malloc(len ? len : 1);
        if (names) {
            char *p = names;
            for (size_t i = 0; i < s->n; i++) {
                size_t l = strlen(s->names[i]) + 1;
                memcpy(p, s->names[i], l);
                p += l;
            }
            hdr[0] = s->n;
            hdr[1] = len;
        } else {
            hdr[0] = UINT64_MAX;
        }
        sizes = s->sizes;
    }
    if (MPI_Bcast(hdr, 2, MPI_UINT64_T, root, comm) != MPI_SUCCESS) {
        free(names);
        return -EIO;
    }
    int rc = hdr[0] == UINT64_MAX ? -ENOMEM : 0;
    if (!rc && rank != root) {
        names = malloc(hdr[1] ? hdr[1] : 1);
        sizes = malloc(hdr[0] ? hdr[0] * sizeof *sizes : 1);
    }
    /* Every rank says whether it has the memory before anything large moves. */
    int bad = rc || !names || !sizes, any = bad;
    if (MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS)
        any = 1;
    if (any) {
        rc = rc ? rc : -ENOMEM;
    } else {
        rc = bcast_bytes(names, hdr[1], MPI_CHAR, 1, root, comm);
        if (!rc)
            rc = bcast_bytes(sizes, hdr[0], MPI_UINT64_T, sizeof *sizes, root, comm);
    }
    if (!rc && rank != root) {
        const char *p = names;
        for (uint64_t i = 0; i < hdr[0] && !rc; i++) {
            rc = rb_objset_add(s, p, sizes[i]);
            p += strlen(p) + 1;
        }
    }
    free(names);
    if (rank != root)
        free(sizes);
    /* Out of memory while adding on one rank is everybody's failure. */
    int mine = rc, worst = rc;
    if (MPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS)
        worst = -EIO;
    return worst;
}
