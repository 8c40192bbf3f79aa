/* Counts heap allocations (not frees) and writes the total to $ALLOC_COUNT_OUT at exit (railbench only: MPI's helpers inherit the preload). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>
extern void *__libc_malloc(size_t), *__libc_calloc(size_t, size_t), *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
static unsigned long long n;
/* Only threads other than the main one: the workers (the main thread writes results, sized by the run's seconds). */
#define COUNT() (gettid() != getpid() ? __atomic_fetch_add(&n, 1, __ATOMIC_RELAXED) : 0)
void *malloc(size_t s) { COUNT(); return __libc_malloc(s); }
void *calloc(size_t a, size_t b) { COUNT(); return __libc_calloc(a, b); }
void *realloc(void *p, size_t s) { COUNT(); return __libc_realloc(p, s); }
int posix_memalign(void **p, size_t a, size_t s) { COUNT(); *p = __libc_memalign(a, s); return *p ? 0 : 12; }
__attribute__((destructor)) static void done(void)
{
    const char *f = getenv("ALLOC_COUNT_OUT");
    if (strcmp(program_invocation_short_name, "railbench") != 0)
        return;
    FILE *o = f ? fopen(f, "w") : NULL;
    if (o) { fprintf(o, "%llu\n", n); fclose(o); }
}
