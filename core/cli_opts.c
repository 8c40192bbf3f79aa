/* Option tables composed from named groups: a group is declared once and every command that takes it adds it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "railbench/cli.h"

/* A duplicate or an overflow is a mistake in the code, not the user's: say which row, then stop. */
static void composed_wrong(const char *what, const char *name)
{
    fprintf(stderr, "railbench: internal error: option table: %s --%s\n", what, name);
    abort();
}

void rb_opts_add(struct rb_opts *t, const struct rb_opt *group)
{
    for (const struct rb_opt *g = group; g->name; g++) {
        for (size_t i = 0; i < t->n; i++)
            if (strcmp(t->v[i].name, g->name) == 0 || (g->short_name && t->v[i].short_name == g->short_name))
                composed_wrong("a second row named", g->name);
        if (t->n >= RB_OPTS_MAX)
            composed_wrong("more than RB_OPTS_MAX rows at", g->name);
        t->v[t->n++] = *g;
    }
    memset(&t->v[t->n], 0, sizeof t->v[t->n]);
}
