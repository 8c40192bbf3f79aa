/*
 * AIStore's cluster map (Smap) and its object placement, for requests sent
 * straight to the target that owns an object (ais:// --ais-direct) instead
 * of through the proxy's redirect.
 *
 * Placement as AIStore's own code does it (core/meta/hrw.go, Smap.HrwName2T):
 * the object's uname "<provider>/@#/<bucket>/<object>" (global namespace) is
 * hashed with XXH64 seeded with MLCG32 (1103515245); each target's digest is
 * the XXH64 of its daemon id with the same seed; the owner is the target, not
 * in maintenance or being decommissioned, with the highest
 * xoshiro256-hash(target digest ^ uname digest).
 */
#ifndef RB_AIS_SMAP_INT_H
#define RB_AIS_SMAP_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rb_target;

#define RB_AIS_MLCG32 1103515245u
/* A target's URL (public_net.direct_url) and id, at most. */
#define RB_AIS_URL_MAX 256
#define RB_AIS_ID_MAX 128

/* XXH64 of p[0..n) with seed, as xxHash's specification defines it. Pure. */
uint64_t rb_xxh64(const void *p, size_t n, uint64_t seed);
/* AIStore's cmn/xoshiro256.Hash: splitmix64 twice, then xoshiro256**'s output scrambler. Pure. */
uint64_t rb_ais_xoshiro_hash(uint64_t seed);

struct rb_ais_node {
    char id[RB_AIS_ID_MAX];
    char url[RB_AIS_URL_MAX];   /* "http://HOST:PORT" (public network) */
    uint64_t digest;            /* XXH64(id, MLCG32) */
};

/*
 * One target's cluster map: the active targets, sorted by id, and the uname
 * prefix of its bucket. Loaded once (rb_ais_smap_load) and read-only after;
 * mu guards the load.
 */
struct rb_ais_smap {
    pthread_mutex_t mu;
    bool loaded;
    char version[32];
    struct rb_ais_node *t;
    size_t n;
    char prefix[400];           /* "<provider>/@#/<bucket>/" */
    size_t prefix_len;
};

/* A map for bucket of provider (aliases s3, gs, az are AIStore's aws, gcp, azure), not loaded. NULL: no memory. */
struct rb_ais_smap *rb_ais_smap_new(const char *provider, const char *bucket);
/* Frees m; NULL-safe. */
void rb_ais_smap_free(struct rb_ais_smap *m);

/*
 * Reads the JSON of GET /v1/daemon?what=smap into m: every "tmap" entry's
 * daemon_id and public_net.direct_url, skipping targets whose flags say
 * maintenance (4) or decommission (8). Returns 0, or -EPROTO with one line in
 * err (not a JSON object, no active target, an entry without an id or an
 * http(s) URL, a field too long). Pure apart from m.
 */
int rb_ais_smap_parse(struct rb_ais_smap *m, const char *json, char *err, size_t errlen);

/* The index in m->t of the target that owns object name (m loaded, m->n > 0). No allocation. */
size_t rb_ais_smap_owner(const struct rb_ais_smap *m, const char *name);

/*
 * Loads t's map once (t->smap; later calls return at once): GET
 * /v1/daemon?what=smap on t's first endpoint (the proxy), within timeout_ns
 * (at most 30 s). Returns 0, or -EIO/-EPROTO with one line in err naming the
 * proxy and what it answered. Any thread.
 */
int rb_ais_smap_load(const struct rb_target *t, uint64_t timeout_ns, char *err, size_t errlen);

#endif
