/* Object sets: generated names computed per index, listed names in one arena; partitions across ranks. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "objset_int.h"
#include "railbench/objname.h"
#include "railbench/units.h"

#define BLOCK_NAMES (1ull << RB_OBJSET_BLOCK_SHIFT)

bool rb_objset_generated(const struct rb_objset *s)
{
    return s->prefix != NULL;
}

/* Grows a listed set's arrays to hold one more object and its arena len more bytes. Returns 0 or -ENOMEM. */
static int reserve(struct rb_objset *s, uint64_t len)
{
    if (s->n == s->cap) {
        uint64_t cap = s->cap ? 2 * s->cap : 64;
        uint32_t *rel = realloc(s->rel_off, cap * sizeof *rel);
        if (!rel)
            return -ENOMEM;
        s->rel_off = rel;
        uint64_t *sizes = realloc(s->sizes, cap * sizeof *sizes);
        if (!sizes)
            return -ENOMEM;
        s->sizes = sizes;
        uint64_t *blk = realloc(s->block_off, ((cap + BLOCK_NAMES - 1) / BLOCK_NAMES) * sizeof *blk);
        if (!blk)
            return -ENOMEM;
        s->block_off = blk;
        s->cap = cap;
    }
    if (s->arena_len + len > s->arena_cap) {
        uint64_t cap = s->arena_cap ? 2 * s->arena_cap : 4096;
        while (cap < s->arena_len + len)
            cap *= 2;
        char *a = realloc(s->arena, cap);
        if (!a)
            return -ENOMEM;
        s->arena = a;
        s->arena_cap = cap;
    }
    return 0;
}

int rb_objset_add(struct rb_objset *s, const char *name, uint64_t size_bytes)
{
    if (s->prefix || s->shared)
        return -EINVAL;
    size_t len = strlen(name);
    if (len > RB_OBJSET_NAME_MAX)
        return -ENAMETOOLONG;
    int rc = reserve(s, len + 1);
    if (rc)
        return rc;
    if ((s->n & (BLOCK_NAMES - 1)) == 0)
        s->block_off[s->n >> RB_OBJSET_BLOCK_SHIFT] = s->arena_len;
    s->rel_off[s->n] = (uint32_t)(s->arena_len - s->block_off[s->n >> RB_OBJSET_BLOCK_SHIFT]);
    memcpy(s->arena + s->arena_len, name, len + 1);
    s->arena_len += len + 1;
    s->sizes[s->n] = size_bytes;
    s->n++;
    return 0;
}

int rb_objset_generate(struct rb_objset *s, const char *prefix, uint64_t n)
{
    if (!prefix)
        prefix = "";
    size_t plen = strlen(prefix);
    if (plen > 1000)
        return -ENAMETOOLONG;
    unsigned width = 8;
    for (uint64_t top = n ? n - 1 : 0; top >= 100000000ull; top /= 10)
        width++;
    rb_objset_free(s);
    s->prefix = malloc(plen + 1);
    if (!s->prefix)
        return -ENOMEM;
    memcpy(s->prefix, prefix, plen + 1);
    s->prefix_len = plen;
    s->width = width;
    s->base = 0;
    s->stride = 1;
    s->n = n;
    return 0;
}

/* Formats v zero-padded to width digits (width <= 20) into out; returns the digits written. */
static size_t format_index(char *out, uint64_t v, unsigned width)
{
    char tmp[20];
    unsigned k = 0;
    do {
        tmp[k++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (k < width)
        tmp[k++] = '0';
    for (unsigned j = 0; j < k; j++)
        out[j] = tmp[k - 1 - j];
    return k;
}

const char *rb_objset_name(const struct rb_objset *s, uint64_t i, char buf[RB_OBJSET_NAME_BYTES])
{
    if (!s->prefix)
        return s->arena + s->block_off[i >> RB_OBJSET_BLOCK_SHIFT] + s->rel_off[i];
    memcpy(buf, s->prefix, s->prefix_len);
    size_t l = s->prefix_len + format_index(buf + s->prefix_len, s->base + i * s->stride, s->width);
    buf[l] = '\0';
    return buf;
}

uint64_t rb_objset_size(const struct rb_objset *s, uint64_t i)
{
    return s->sizes && s->sizes[i] ? s->sizes[i] : s->size_bytes;
}

int rb_objset_set_size(struct rb_objset *s, uint64_t i, uint64_t size_bytes)
{
    if (s->shared)
        return -EPERM;
    if (!s->sizes) {
        s->sizes = calloc(s->n ? s->n : 1, sizeof *s->sizes);
        if (!s->sizes)
            return -ENOMEM;
    }
    s->sizes[i] = size_bytes;
    return 0;
}

void rb_objset_set_common_size(struct rb_objset *s, uint64_t size_bytes)
{
    s->size_bytes = size_bytes;
}

/* Parses one --filelist line in place: *name and *size, or 1 for a line without a name. Returns 0, 1 or -EINVAL. */
static int parse_line(char *line, ssize_t len, char **name, uint64_t *size)
{
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
        line[--len] = '\0';
    char *p = line;
    while (*p == ' ' || *p == '\t')
        p++;
    if (!*p || *p == '#')
        return 1;
    char *sep = p + strcspn(p, " \t");
    *size = 0;
    if (*sep) {
        *sep++ = '\0';
        while (*sep == ' ' || *sep == '\t')
            sep++;
        if (*sep && rb_parse_size(sep, size) != 0) {
            *name = sep; /* what was wrong, for the message */
            return -EINVAL;
        }
    }
    *name = p;
    return 0;
}

int rb_objset_from_file(struct rb_objset *s, const char *path, int rank, int size, uint64_t *total, char *err,
                        size_t errlen)
{
    if (size < 1 || rank < 0 || rank >= size)
        return -EINVAL;
    FILE *f = fopen(path, "r");
    if (!f) {
        int rc = -errno;
        snprintf(err, errlen, "--filelist %s: %s", path, strerror(errno));
        return rc;
    }
    char *line = NULL, *name;
    size_t cap = 0;
    ssize_t len;
    unsigned long lineno = 0;
    uint64_t k = 0, bytes;
    int rc = 0;
    while ((len = getline(&line, &cap, f)) >= 0) {
        lineno++;
        int r = parse_line(line, len, &name, &bytes);
        if (r == 1)
            continue;
        if (r) {
            snprintf(err, errlen, "--filelist %s:%lu: bad size \"%.64s\" (expected NAME [SIZE])", path, lineno, name);
            rc = -EINVAL;
            break;
        }
        if (strlen(name) > RB_OBJSET_NAME_MAX) {
            snprintf(err, errlen, "--filelist %s:%lu: object name longer than %d bytes", path, lineno,
                     RB_OBJSET_NAME_MAX);
            rc = -EINVAL;
            break;
        }
        const char *why = rb_objname_problem(name, false);
        if (why) {
            snprintf(err, errlen, "--filelist %s:%lu: \"%.200s\" %s; give names below the target", path, lineno,
                     name, why);
            rc = -EINVAL;
            break;
        }
        if (k++ % (uint64_t)size != (uint64_t)rank)
            continue;
        if ((rc = rb_objset_add(s, name, bytes))) {
            snprintf(err, errlen, "--filelist %s: out of memory", path);
            break;
        }
    }
    if (!rc && ferror(f)) {
        rc = -EIO;
        snprintf(err, errlen, "--filelist %s: read error", path);
    }
    if (total)
        *total = k;
    free(line);
    fclose(f);
    return rc;
}

int rb_objset_partition(const struct rb_objset *all, int rank, int size, struct rb_objset *mine)
{
    if (size < 1 || rank < 0 || rank >= size)
        return -EINVAL;
    uint64_t r = (uint64_t)rank, m = (uint64_t)size;
    uint64_t n = all->n / m + (r < all->n % m ? 1 : 0);
    if (all->prefix) {
        int rc = rb_objset_generate(mine, all->prefix, 0);
        if (rc)
            return rc;
        mine->width = all->width;
        mine->base = all->base + r * all->stride;
        mine->stride = all->stride * m;
        mine->n = n;
        mine->size_bytes = all->size_bytes;
        if (all->sizes) {
            if (!(mine->sizes = malloc((n ? n : 1) * sizeof *mine->sizes)))
                return -ENOMEM;
            for (uint64_t j = 0; j < n; j++)
                mine->sizes[j] = all->sizes[r + j * m];
        }
        return 0;
    }
    char buf[RB_OBJSET_NAME_BYTES];
    for (uint64_t i = r; i < all->n; i += m) {
        int rc = rb_objset_add(mine, rb_objset_name(all, i, buf), all->sizes[i]);
        if (rc)
            return rc;
    }
    mine->size_bytes = all->size_bytes;
    return 0;
}

void rb_objset_free(struct rb_objset *s)
{
    if (!s)
        return;
    if (s->shared) {
        rb_objset_unshare(s);
        memset(s, 0, sizeof *s);
        return;
    }
    free(s->prefix);
    free(s->arena);
    free(s->rel_off);
    free(s->block_off);
    free(s->sizes);
    memset(s, 0, sizeof *s);
}
