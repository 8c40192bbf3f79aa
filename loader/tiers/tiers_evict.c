/* railbench load tiers: emptying the tier before a cold phase (AIStore's evict API, or the user's command). */
#include "tiers_int.h"

#include <inttypes.h>
#include <stdio.h>

#include "../proto/evict_int.h"

/* The environment an --evict-cmd sees: which objects the next cold phase reads. */
static void evict_env(char env[6][1200], char *envp[7], const struct rb_tiers_evict *e, const char *phase,
                      uint64_t size, uint64_t n, const char *tier_prefix)
{
    snprintf(env[0], sizeof env[0], "RB_TIERS_PHASE=%s", phase);
    snprintf(env[1], sizeof env[1], "RB_TIERS_SIZE_BYTES=%" PRIu64, size);
    snprintf(env[2], sizeof env[2], "RB_TIERS_OBJECTS=%" PRIu64, n);
    snprintf(env[3], sizeof env[3], "RB_TIERS_PREFIX=%.1100s", tier_prefix);
    snprintf(env[4], sizeof env[4], "RB_TIERS_TIER=%.1100s", rb_target_name(e->tier));
    snprintf(env[5], sizeof env[5], "RB_TIERS_BACKEND=%.1100s", rb_target_name(e->backend));
    for (int i = 0; i < 6; i++)
        envp[i] = env[i];
    envp[6] = NULL;
}

int rb_tiers_evict_run(const struct rb_tiers_evict *e, const char *phase, uint64_t size,
                       const struct rb_objset *tier_all, const char *tier_prefix, const volatile int *stop,
                       const char **how, char *err, size_t len)
{
    if (e->objects) {
        *how = "AIStore evict-listrange";
        return rb_target_evict(e->tier, tier_all, tier_prefix, e->timeout_ns, stop, err, len);
    }
    if (e->bucket) {
        *how = "AIStore evict-remote-bck";
        return rb_target_evict(e->tier, NULL, NULL, e->timeout_ns, stop, err, len);
    }
    *how = "--evict-cmd";
    char env[6][1200], *envp[7];
    evict_env(env, envp, e, phase, size, tier_all->n, tier_prefix);
    return rb_evict_run(e->words, envp, e->timeout_ns, stop, err, len);
}
