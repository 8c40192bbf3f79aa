/* load checkpoint on file://: the directories a run makes (NAME/, NAME/global_stepK/), removed at the end when empty. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../engine/fwatch_int.h"
#include "ckpt_int.h"
#include "railbench/beneath.h"
#include "railbench/log.h"

/*
 * Notes path (a directory's name beneath the target's root) when nothing is
 * there (a link there is the user's: never noted, never removed); a name
 * already noted is skipped.
 */
static int note(struct rb_ckpt_run *x, const char *path)
{
    struct stat st;
    int dir = rb_target_file_dir(x->t);
    int rc = dir < 0 ? dir : rb_beneath_stat(dir, path, &st);
    if (rc == 0 || rc == -RB_BENEATH_LINK)
        return 0;
    for (unsigned i = 0; i < x->nmade; i++)
        if (strcmp(x->made_dirs[i], path) == 0)
            return 0;
    char **n = realloc(x->made_dirs, (x->nmade + 1) * sizeof *n);
    if (!n)
        return -ENOMEM;
    x->made_dirs = n;
    if (!(n[x->nmade] = strdup(path)))
        return -ENOMEM;
    x->nmade++;
    return 0;
}

int rb_ckpt_dirs_note(struct rb_ckpt_run *x)
{
    const struct rb_ckpt_args *a = x->a;
    int rc = 0;
    if (a->files && a->mode != RB_CKPT_MODE_READ && x->h.local_rank == 0) {
        /* Every directory between the root and each checkpoint's folder, shallowest first: NAME may hold slashes. */
        char path[4200];
        for (unsigned k = 1; k <= a->writes && !rc; k++) {
            int n = snprintf(path, sizeof path, "%sglobal_step%u", x->mine.base, k);
            if (n < 0 || (size_t)n >= sizeof path) {
                rc = -ENAMETOOLONG;
                break;
            }
            for (char *p = path; !rc && (p = strchr(p, '/')); p++) {
                *p = '\0';
                rc = note(x, path);
                *p = '/';
            }
            if (!rc)
                rc = note(x, path);
        }
        if (rc)
            rb_error("load checkpoint: cannot note the directories of %s: %s", x->where, strerror(-rc));
    }
    /* No rank writes before every host has looked (on a shared file system another host's writes would make them). */
    int bad = rc != 0, any = bad;
    if (x->h.mpi)
        RB_MPI_CHECK(MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, x->h.comm));
    return any ? RB_EXIT_RUNTIME : 0;
}

void rb_ckpt_dirs_remove(struct rb_ckpt_run *x)
{
    rb_harness_barrier(&x->h); /* every rank's files are deleted */
    unsigned long long mine = 0, all = 0;
    int dir = rb_target_file_dir(x->t);
    for (unsigned i = x->nmade; i-- > 0 && !rb_fwatch_fired();) { /* a stalled file system: left as they are */
        int rc = dir < 0 ? dir : rb_beneath_rmdir(dir, x->made_dirs[i]);
        if (rc == 0)
            mine++;
        else if (rc != -ENOENT && rc != -ENOTEMPTY && rc != -EEXIST)
            rb_warn("load checkpoint: cannot remove the directory %s/%s this run made: %s", rb_target_file_root(x->t),
                    x->made_dirs[i], rc == -RB_BENEATH_LINK ? "a symbolic link now, not followed" : strerror(-rc));
    }
    all = mine;
    if (x->h.mpi)
        RB_MPI_CHECK(MPI_Reduce(&mine, &all, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, x->h.comm));
    x->dirs_removed = all;
}

void rb_ckpt_dirs_free(struct rb_ckpt_run *x)
{
    for (unsigned i = 0; i < x->nmade; i++)
        free(x->made_dirs[i]);
    free(x->made_dirs);
    x->made_dirs = NULL;
    x->nmade = 0;
}
