/* The run record: result.json, intervals.jsonl and table.md in one directory per run. */
#ifndef RB_RESULT_H
#define RB_RESULT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#define RB_RESULT_SCHEMA "railbench.result/v1"

struct rb_cli;

struct rb_result {
    char dir[4096];
    cJSON *root;        /* the record written as result.json */
    cJSON *phases;      /* root.phases */
    cJSON *checks;      /* root.checks */
    FILE *intervals;    /* intervals.jsonl, appended and flushed line by line */
    bool failed;        /* a check failed */
};

/*
 * Creates dir (and parents) and intervals.jsonl, and starts the record:
 * schema, command, argv and config (already redacted by the cli), labels,
 * version, started_at. cli may be NULL. Returns 0 or -errno after logging
 * one line naming the path. Release with rb_result_close.
 */
int rb_result_open(struct rb_result *r, const char *dir, const char *command,
                   const struct rb_cli *cli);

/* Appends obj as one line of intervals.jsonl and flushes it; takes ownership of obj. */
int rb_result_interval(struct rb_result *r, cJSON *obj);

/* Appends a phase record to root.phases; takes ownership. */
void rb_result_add_phase(struct rb_result *r, cJSON *phase);

/* Sets root[key] = value, replacing what was there; takes ownership. */
void rb_result_set(struct rb_result *r, const char *key, cJSON *value);

/* Records a check {name, passed, detail}; a failed check makes rb_result_failed() true. */
void rb_result_check(struct rb_result *r, const char *name, bool passed, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* True when any recorded check failed. */
bool rb_result_failed(const struct rb_result *r);

/* Writes text as table.md (temporary name, then rename). Returns 0 or -errno. */
int rb_result_write_table(struct rb_result *r, const char *text);

/* Sets ended_at and writes result.json (temporary name, then rename). Returns 0 or -errno. */
int rb_result_finish(struct rb_result *r);

/* Closes intervals.jsonl and frees the record; NULL-safe and idempotent. */
void rb_result_close(struct rb_result *r);

/* The JSON number helpers every module uses (NULL when out of memory): */
/* a JSON number for v when it is exact as a double (<= 2^53), else a decimal string; */
cJSON *rb_json_u64(uint64_t v);
/* the same for a signed v (|v| <= 2^53 as a number); */
cJSON *rb_json_i64(int64_t v);
/* v as a number, or null when it is not finite (NaN: not measured; a figure that was not measured is null). */
cJSON *rb_json_number(double v);

/* Reads a value written by rb_json_u64 (number or decimal string). Returns 0 or -EINVAL. */
int rb_json_get_u64(const cJSON *item, uint64_t *v);

/* The version compiled in (git describe --always --dirty). */
const char *rb_version(void);

/* ---- core/result_dir.c: a result directory is railbench's own ---- */

/* The file that makes a directory a result's: written first, when a run claims it; it holds the run id. */
#define RB_RESULT_MARKER ".railbench-result"

/*
 * True when name, an entry directly in a result directory, is a file
 * railbench writes there: the marker, result.json, intervals.jsonl,
 * table.md, railbench.prom, report.md, report.html (or one of them being
 * written: NAME.tmp.PID.N). block's per-rank files are points/<rank>/.
 */
bool rb_result_dir_own_file(const char *name);

/*
 * Claims dir (--out, or a default one) for the run run_id, before anything
 * is written in it, and writes the marker. A missing dir is made; an empty
 * one is taken. One that holds a result (the marker; or, from a railbench
 * without it, nothing but railbench's files, one of them result.json,
 * intervals.jsonl or table.md) is refused unless force, which removes
 * railbench's entries in it (never following a link) and refuses when
 * anything else is there. Any other non-empty directory is refused, force
 * or not. Returns 0, or after one line into msg: -ENOTDIR (dir or a part of
 * it is not a directory), -EEXIST (an earlier result, no force),
 * -ENOTEMPTY (something not railbench's), another -errno (a failure).
 */
int rb_result_dir_claim(const char *dir, bool force, const char *run_id, char *msg, size_t len);

#endif
