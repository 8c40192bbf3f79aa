/* The run record: result.json, intervals.jsonl and table.md in one directory per run. */
#define _POSIX_C_SOURCE 200809L
#include "railbench/result.h"

#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "railbench/cli.h"
#include "railbench/file.h"
#include "railbench/clock.h"
#include "railbench/log.h"

#ifndef RB_VERSION
#define RB_VERSION "unknown"
#endif

const char *rb_version(void)
{
    return RB_VERSION;
}

cJSON *rb_json_u64(uint64_t v)
{
    if (v <= (1ull << 53))
        return cJSON_CreateNumber((double)v);
    char buf[24];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
    return cJSON_CreateString(buf);
}

cJSON *rb_json_i64(int64_t v)
{
    if (v <= (int64_t)(1ll << 53) && v >= -(int64_t)(1ll << 53))
        return cJSON_CreateNumber((double)v);
    char buf[24];
    snprintf(buf, sizeof buf, "%lld", (long long)v);
    return cJSON_CreateString(buf);
}

cJSON *rb_json_number(double v)
{
    return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull();
}

int rb_json_get_u64(const cJSON *item, uint64_t *v)
{
    if (cJSON_IsNumber(item)) {
        double d = item->valuedouble;
        if (!(d >= 0) || d > 9007199254740992.0 || d != (double)(uint64_t)d)
            return -EINVAL;
        *v = (uint64_t)d;
        return 0;
    }
    if (cJSON_IsString(item)) {
        const char *s = item->valuestring;
        if (!*s)
            return -EINVAL;
        uint64_t x = 0;
        for (; *s; s++) {
            if (*s < '0' || *s > '9' || x > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
                return -EINVAL;
            x = x * 10 + (uint64_t)(*s - '0');
        }
        *v = x;
        return 0;
    }
    return -EINVAL;
}

int rb_result_open(struct rb_result *r, const char *dir, const char *command,
                   const struct rb_cli *cli)
{
    memset(r, 0, sizeof *r);
    snprintf(r->dir, sizeof r->dir, "%s", dir);
    int rc = rb_file_mkdir_p(dir);
    if (rc < 0) {
        rb_error("cannot create result directory %s: %s", dir, strerror(-rc));
        return rc;
    }
    char path[4200];
    snprintf(path, sizeof path, "%s/intervals.jsonl", dir);
    r->intervals = fopen(path, "a");
    if (!r->intervals) {
        rc = -errno;
        rb_error("cannot open %s: %s", path, strerror(errno));
        return rc;
    }
    r->root = cJSON_CreateObject();
    cJSON_AddStringToObject(r->root, "schema", RB_RESULT_SCHEMA);
    cJSON_AddStringToObject(r->root, "command", command);
    cJSON_AddStringToObject(r->root, "version", rb_version());
    char ts[40];
    rb_clock_iso8601(ts, sizeof ts, rb_clock_wall_ns());
    cJSON_AddStringToObject(r->root, "started_at", ts);
    cJSON *labels = cJSON_AddObjectToObject(r->root, "labels");
    if (cli) {
        cJSON_AddItemToObject(r->root, "argv", cJSON_Duplicate(cli->argv_json, 1));
        cJSON_AddItemToObject(r->root, "config", cJSON_Duplicate(cli->config, 1));
        for (size_t i = 0; i < cli->common.labels.n; i++) {
            const char *kv = cli->common.labels.v[i];
            const char *eq = strchr(kv, '=');
            if (!eq)
                continue;
            char key[256];
            snprintf(key, sizeof key, "%.*s", (int)(eq - kv), kv);
            cJSON_DeleteItemFromObjectCaseSensitive(labels, key);
            cJSON_AddStringToObject(labels, key, eq + 1);
        }
    }
    r->phases = cJSON_AddArrayToObject(r->root, "phases");
    r->checks = cJSON_AddArrayToObject(r->root, "checks");
    return 0;
}

int rb_result_interval(struct rb_result *r, cJSON *obj)
{
    int rc = 0;
    char *line = cJSON_PrintUnformatted(obj);
    cJSON_Delete(obj);
    if (!line)
        return -ENOMEM;
    if (r->intervals) {
        if (fprintf(r->intervals, "%s\n", line) < 0 || fflush(r->intervals) != 0)
            rc = -EIO;
    }
    free(line);
    return rc;
}

void rb_result_add_phase(struct rb_result *r, cJSON *phase)
{
    cJSON_AddItemToArray(r->phases, phase);
}

void rb_result_set(struct rb_result *r, const char *key, cJSON *value)
{
    if (cJSON_GetObjectItemCaseSensitive(r->root, key))
        cJSON_ReplaceItemInObjectCaseSensitive(r->root, key, value);
    else
        cJSON_AddItemToObject(r->root, key, value);
}

void rb_result_check(struct rb_result *r, const char *name, bool passed, const char *fmt, ...)
{
    char detail[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "name", name);
    cJSON_AddBoolToObject(c, "passed", passed);
    cJSON_AddStringToObject(c, "detail", detail);
    cJSON_AddItemToArray(r->checks, c);
    if (!passed)
        r->failed = true;
}

bool rb_result_failed(const struct rb_result *r)
{
    return r->failed;
}

int rb_result_write_table(struct rb_result *r, const char *text)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/table.md", r->dir);
    int rc = rb_file_write_atomic(path, text, strlen(text));
    if (rc < 0)
        rb_error("cannot write %s: %s", path, strerror(-rc));
    return rc;
}

int rb_result_finish(struct rb_result *r)
{
    char ts[40];
    rb_clock_iso8601(ts, sizeof ts, rb_clock_wall_ns());
    rb_result_set(r, "ended_at", cJSON_CreateString(ts));
    char *text = cJSON_Print(r->root);
    if (!text)
        return -ENOMEM;
    char path[4200];
    snprintf(path, sizeof path, "%s/result.json", r->dir);
    size_t len = strlen(text);
    char *nl = realloc(text, len + 2);
    if (!nl) {
        free(text);
        return -ENOMEM;
    }
    text = nl;
    text[len++] = '\n';
    text[len] = '\0';
    int rc = rb_file_write_atomic(path, text, len);
    free(text);
    if (rc < 0)
        rb_error("cannot write %s: %s", path, strerror(-rc));
    return rc;
}

void rb_result_close(struct rb_result *r)
{
    if (!r)
        return;
    if (r->intervals)
        fclose(r->intervals);
    r->intervals = NULL;
    cJSON_Delete(r->root);
    r->root = NULL;
    r->phases = r->checks = NULL;
}
