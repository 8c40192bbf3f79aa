/*
 * The provenance record of a run MLPerf Storage's closed rules judge (load train, load checkpoint):
 * provenance.json beside result.json, schema mlps-run-provenance/1, and the canonical JSON and SHA-256 that
 * fix which configuration a run had.
 */
#ifndef RB_PROVENANCE_H
#define RB_PROVENANCE_H

#include <cjson/cJSON.h>

#include "railbench/buf.h"

#define RB_PROVENANCE_SCHEMA "mlps-run-provenance/1"
#define RB_PROVENANCE_FILE "provenance.json"
#define RB_PROVENANCE_RULES "v3.0"

struct rb_result;

/*
 * The canonical form of v appended to b: object keys in byte order, no
 * white space, strings as UTF-8 with only '"', '\\' and control characters
 * escaped (\b \f \n \r \t, else \u00XX), integers within 2^53 without a
 * fraction, other numbers in the shortest form that reads back. The same
 * text as Python's json.dumps(v, sort_keys=True, separators=(",", ":"),
 * ensure_ascii=False) for such values. Returns 0, -EINVAL (a NaN or an
 * infinity, or an invalid item) or -ENOMEM.
 */
int rb_json_canonical(const cJSON *v, struct rb_buf *b);

/* The SHA-256 of v's canonical form as 64 lower-case hex digits in hex. Returns 0, -EINVAL or -ENOMEM. */
int rb_json_sha256(const cJSON *v, char hex[65]);

/*
 * The allow-listed core configuration of a result record (root: result.json
 * as written): the resolved options MLPerf's closed rules fix for its
 * command, from one table in core/provenance.c; absent figures are null.
 * NULL when the command is neither load train nor load checkpoint, or out
 * of memory.
 */
cJSON *rb_provenance_core(const cJSON *root);

/*
 * The provenance record of the result record root, its end now: tool,
 * version and git commit, rules edition, command, the core configuration
 * and its SHA-256, hosts with their ranks and memory, ranks, start and end,
 * whether caches were dropped. NULL when rb_provenance_core is.
 */
cJSON *rb_provenance_build(const cJSON *root);

/*
 * Writes r's directory's provenance.json from r's record (rank 0 holds it;
 * elsewhere, or for another command, nothing and 0). Returns 0 or -errno
 * after one warning naming the file (the run goes on).
 */
int rb_provenance_write(const struct rb_result *r);

#endif
