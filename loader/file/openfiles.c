/* Files kept open across ranged reads: open addressing by the name's FNV-1a hash, twice the entries it may hold. */
#define _GNU_SOURCE
#include "openfiles_int.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SLOTS (2 * RB_OPENFILES_MAX)

struct entry {
    char *name; /* NULL: an empty entry */
    int fd;
};

struct rb_openfiles {
    struct entry e[SLOTS];
    unsigned n;
};

static size_t slot_of(const struct rb_openfiles *t, const char *name)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        h = (h ^ *p) * 1099511628211ull;
    size_t i = (size_t)(h % SLOTS);
    while (t->e[i].name && strcmp(t->e[i].name, name) != 0)
        i = (i + 1) % SLOTS;
    return i;
}

int rb_openfiles_new(struct rb_openfiles **out)
{
    *out = calloc(1, sizeof **out);
    return *out ? 0 : -ENOMEM;
}

int rb_openfiles_find(const struct rb_openfiles *t, const char *name)
{
    const struct entry *e = &t->e[slot_of(t, name)];
    return e->name ? e->fd : -1;
}

bool rb_openfiles_keep(struct rb_openfiles *t, const char *name, int fd)
{
    struct entry *e = &t->e[slot_of(t, name)];
    if (e->name || t->n >= RB_OPENFILES_MAX || !(e->name = strdup(name)))
        return false;
    e->fd = fd;
    t->n++;
    return true;
}

void rb_openfiles_free(struct rb_openfiles *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < SLOTS; i++)
        if (t->e[i].name) {
            close(t->e[i].fd);
            free(t->e[i].name);
        }
    free(t);
}
