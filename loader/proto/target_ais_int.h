/* The ais:// protocol's own options and state, shared by its files: target_ais.c, target_ais_evict.c, ais_smap.c. */
#ifndef RB_TARGET_AIS_INT_H
#define RB_TARGET_AIS_INT_H

#include <stdbool.h>

#include "target_int.h"

/* Its option rows' values (struct rb_proto_opt's off), in its slot of struct rb_target_cfg. */
struct rb_ais_opts {
    const char *provider;         /* backend provider query ("ais", "aws", "gcp", "azure"); NULL: ais */
    bool direct;                  /* --ais-direct: requests straight to the owning target by the cluster map */
};

/* A target's state (its priv), made by its parse. */
struct rb_ais {
    char bucket[256];
    char provider[32];
    char *token_header;           /* "Authorization: Bearer ..." ($AIS_AUTHN_TOKEN) or NULL */
    struct rb_ais_smap *smap;     /* --ais-direct: the cluster map, loaded once (ais_smap_int.h); else NULL */
};

static inline const struct rb_ais *rb_ais_of(const struct rb_target *t)
{
    return (const struct rb_ais *)t->priv;
}

#endif
