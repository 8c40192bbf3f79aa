/* Command-line parser: applying option values from the command line, JSON and --config files. */
#define _POSIX_C_SOURCE 200809L
#include "cli_int.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "railbench/file.h"
#include "railbench/units.h"

/* ---- applying values ---- */

/* k=v with k in [A-Za-z_][A-Za-z0-9_]* and v non-empty on one line; *keylen gets k's length. */
static bool label_ok(const char *s, size_t *keylen)
{
    size_t i = 0;
    for (;; i++) {
        char c = s[i];
        bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
        if (!(alpha || (i > 0 && c >= '0' && c <= '9')))
            break;
    }
    if (i == 0 || s[i] != '=' || s[i + 1] == '\0' || strpbrk(s + i + 1, "\r\n"))
        return false;
    *keylen = i;
    return true;
}

/* Appends s (which outlives the rb_cli) to a repeatable option; labels are validated here. */
static int add_str(struct parse *P, struct slot *sl, const char *s)
{
    struct rb_strs *l = &sl->val.strs;
    char q[256];
    if (sl == P->label) {
        size_t kl;
        cli_quote(q, sizeof(q), s);
        if (!label_ok(s, &kl)) {
            cli_opt_error(P, sl->opt,
                      "%s is not k=v (k is a letter or _ then letters, digits or _; v is non-empty text "
                      "on one line)",
                      q);
            return -EINVAL;
        }
        for (size_t i = 0; i < l->n; i++) {
            if (strncmp(l->v[i], s, kl + 1) == 0) {
                cli_opt_error(P, sl->opt, "%s repeats the key \"%.*s\"", q, (int)kl, s);
                return -EINVAL;
            }
        }
    }
    if (l->n >= RB_LIST_MAX) {
        cli_opt_error(P, sl->opt, "more than %d values", RB_LIST_MAX);
        return -EINVAL;
    }
    l->v[l->n++] = s;
    return 0;
}

static int set_duration(struct parse *P, struct slot *sl, uint64_t ns, const char *shown_val)
{
    if (sl == P->interval && ns == 0) {
        cli_opt_error(P, sl->opt, "%s must be greater than 0 (use e.g. 1s, 500ms)", shown_val);
        return -EINVAL;
    }
    sl->val.u = ns;
    return 0;
}

/* Reports a bad list element: empty, unparsable or one too many. */
static int bad_list(struct parse *P, const struct rb_opt *o, const char *s, const char *bad, int rc)
{
    const char *noun, *hint;
    char q[256];
    cli_type_words(o->type, &noun, &hint);
    cli_quote(q, sizeof(q), s);
    if (rc == -E2BIG) {
        cli_opt_error(P, o, "%s has more than %d elements", cli_shown(o, q), RB_LIST_MAX);
    } else {
        size_t len = bad ? strcspn(bad, ",") : 0;
        if (len == 0 || rb_cli_is_secret(o->name))
            cli_opt_error(P, o, "%s has an empty or bad element (%s)", cli_shown(o, q), hint);
        else
            cli_opt_error(P, o, "%s: \"%.*s\" is not %s (%s)", q, (int)(len > 200 ? 200 : len), bad, noun,
                      hint);
    }
    return -EINVAL;
}

/*
 * Parses text s into sl's staged value. s must outlive the rb_cli for STR and
 * STRS (argv, or a copy owned by the rb_cli); other types copy what they need.
 * s is NULL only for a bare flag.
 */
int cli_apply_string(struct parse *P, struct slot *sl, const char *s)
{
    const struct rb_opt *o = sl->opt;
    char q[256];
    int rc = 0;

    if (s)
        cli_quote(q, sizeof(q), s);
    switch (o->type) {
    case RB_OPT_FLAG:
        if (!s || strcmp(s, "true") == 0) {
            sl->val.b = true;
        } else if (strcmp(s, "false") == 0) {
            sl->val.b = false;
        } else {
            cli_opt_error(P, o, "%s is not true or false (a flag takes no value; --%s=false turns it off)", q,
                      o->name);
            return -EINVAL;
        }
        return 0;
    case RB_OPT_STR:
        sl->val.s = s;
        return 0;
    case RB_OPT_STRS:
        return add_str(P, sl, s);
    case RB_OPT_INT: {
        int64_t v;
        if ((rc = rb_parse_i64(s, &v)) == 0)
            sl->val.i = v;
        break;
    }
    case RB_OPT_U64: {
        uint64_t v;
        if ((rc = rb_parse_u64(s, &v)) == 0)
            sl->val.u = v;
        break;
    }
    case RB_OPT_SIZE: {
        uint64_t v;
        if ((rc = rb_parse_size(s, &v)) == 0)
            sl->val.u = v;
        break;
    }
    case RB_OPT_DURATION: {
        uint64_t v;
        if ((rc = rb_parse_duration(s, &v)) == 0)
            return set_duration(P, sl, v, cli_shown(o, q));
        break;
    }
    case RB_OPT_DOUBLE: {
        double v;
        if ((rc = rb_parse_double(s, &v)) == 0)
            sl->val.d = v;
        break;
    }
    case RB_OPT_PERCENT: {
        double v;
        if ((rc = rb_parse_percent(s, &v)) == 0)
            sl->val.d = v;
        break;
    }
    case RB_OPT_RATE: {
        double v;
        if ((rc = rb_parse_rate(s, &v)) == 0)
            sl->val.d = v;
        break;
    }
    case RB_OPT_SIZES: case RB_OPT_U64S: {
        struct rb_u64s l = {0}; /* zeroed past n too, so results compare bytewise */
        const char *bad = NULL;
        rc = rb_parse_list(s, o->type == RB_OPT_SIZES ? rb_parse_size : rb_parse_u64, l.v, RB_LIST_MAX,
                           &l.n, &bad);
        if (rc)
            return bad_list(P, o, s, bad, rc);
        sl->val.list = l;
        return 0;
    }
    case RB_OPT_CHOICE: {
        int idx = cli_choice_index(o->choices, s);
        if (idx < 0) {
            char list[512];
            cli_choice_list(list, sizeof(list), o->choices);
            cli_opt_error(P, o, "%s is not one of %s", cli_shown(o, q), list);
            return -EINVAL;
        }
        sl->val.choice = idx;
        return 0;
    }
    }
    return rc ? cli_bad_value(P, o, q, rc) : 0;
}

static const char *json_type_name(const cJSON *it)
{
    if (cJSON_IsNull(it))
        return "null";
    if (cJSON_IsBool(it))
        return "a boolean";
    if (cJSON_IsNumber(it))
        return "a number";
    if (cJSON_IsString(it))
        return "a string";
    if (cJSON_IsArray(it))
        return "an array";
    return "an object";
}

static int wrong_type(struct parse *P, const struct rb_opt *o, const cJSON *it)
{
    const char *want = "a string";
    switch (o->type) {
    case RB_OPT_FLAG: want = "true or false"; break;
    case RB_OPT_STR: want = "a string"; break;
    case RB_OPT_STRS: want = "an array of strings"; break;
    case RB_OPT_INT: case RB_OPT_U64: want = "a whole number"; break;
    case RB_OPT_DOUBLE: want = "a number"; break;
    case RB_OPT_PERCENT: want = "a number from 0 to 100"; break;
    case RB_OPT_SIZE: want = "a number of bytes or a string such as \"4k\""; break;
    case RB_OPT_SIZES: want = "an array of sizes such as [4096, \"1M\"]"; break;
    case RB_OPT_U64S: want = "an array of whole numbers"; break;
    case RB_OPT_DURATION: want = "a number of seconds or a string such as \"500ms\""; break;
    case RB_OPT_RATE: want = "a number per second or a string such as \"60/m\""; break;
    case RB_OPT_CHOICE: want = "a string"; break;
    }
    cli_opt_error(P, o, "expected %s, got %s", want, json_type_name(it));
    return -EINVAL;
}

/* A JSON number as a whole uint64_t: 0, -EINVAL (negative or fractional) or -ERANGE. */
static int json_u64(double d, uint64_t *v)
{
    if (d != floor(d) || d < 0)
        return -EINVAL;
    if (d >= TWO_POW_64)
        return -ERANGE;
    *v = (uint64_t)d;
    return 0;
}

/* Applies a JSON number to a numeric option; a size is bytes, a duration seconds, a rate per second. */
static int apply_number(struct parse *P, struct slot *sl, const cJSON *it)
{
    const struct rb_opt *o = sl->opt;
    double d = it->valuedouble;
    char num[64];
    int rc = 0;

    cli_format_number(num, sizeof(num), d);
    switch (o->type) {
    case RB_OPT_INT:
        if (d != floor(d))
            rc = -EINVAL;
        else if (d < -TWO_POW_63 || d >= TWO_POW_63)
            rc = -ERANGE;
        else
            sl->val.i = (int64_t)d;
        break;
    case RB_OPT_U64: case RB_OPT_SIZE: {
        uint64_t v;
        if ((rc = json_u64(d, &v)) == 0)
            sl->val.u = v;
        break;
    }
    case RB_OPT_DOUBLE:
        sl->val.d = d;
        break;
    case RB_OPT_PERCENT:
        if (d < 0 || d > 100)
            rc = -ERANGE;
        else
            sl->val.d = d;
        break;
    case RB_OPT_RATE:
        if (!(d > 0))
            rc = -EINVAL;
        else
            sl->val.d = d;
        break;
    case RB_OPT_DURATION: {
        double ns = floor(d * 1e9 + 0.5);
        if (d < 0)
            rc = -EINVAL;
        else if (ns >= TWO_POW_64)
            rc = -ERANGE;
        else
            return set_duration(P, sl, (uint64_t)ns, num);
        break;
    }
    default:
        return wrong_type(P, o, it);
    }
    return rc ? cli_bad_value(P, o, num, rc) : 0;
}

/* A list option from a JSON array of numbers and strings ("4k" for sizes). */
static int apply_json_list(struct parse *P, struct slot *sl, const cJSON *arr)
{
    const struct rb_opt *o = sl->opt;
    int (*parse)(const char *, uint64_t *) = o->type == RB_OPT_SIZES ? rb_parse_size : rb_parse_u64;
    struct rb_u64s l = {0};
    const cJSON *e;
    char show[256];

    cJSON_ArrayForEach(e, arr)
    {
        uint64_t v;
        int rc;
        if (cJSON_IsNumber(e)) {
            cli_format_number(show, sizeof(show), e->valuedouble);
            rc = json_u64(e->valuedouble, &v);
        } else if (cJSON_IsString(e)) {
            cli_quote(show, sizeof(show), e->valuestring);
            rc = parse(e->valuestring, &v);
        } else {
            return wrong_type(P, o, arr);
        }
        if (rc)
            return cli_bad_value(P, o, show, rc);
        if (l.n >= RB_LIST_MAX) {
            cli_opt_error(P, o, "more than %d elements", RB_LIST_MAX);
            return -EINVAL;
        }
        l.v[l.n++] = v;
    }
    sl->val.list = l;
    return 0;
}

/* Applies one key of a config file. */
static int apply_json(struct parse *P, struct slot *sl, const cJSON *it)
{
    const struct rb_opt *o = sl->opt;

    if (rb_cli_is_secret(o->name) && cJSON_IsString(it) && strcmp(it->valuestring, REDACTED) == 0) {
        cli_opt_error(P, o, "the value is " REDACTED " (from a saved result); "
                        "give the real value or drop the key");
        return -EINVAL;
    }
    sl->src = SRC_CONFIG;
    if (cJSON_IsNull(it) && o->type != RB_OPT_STR) {
        cli_load_default(sl); /* null: not set, as a saved config writes an option left at "none" */
        return 0;
    }
    switch (o->type) {
    case RB_OPT_FLAG:
        if (!cJSON_IsBool(it))
            return wrong_type(P, o, it);
        sl->val.b = cJSON_IsTrue(it);
        return 0;
    case RB_OPT_STR:
        if (cJSON_IsNull(it)) {
            sl->val.s = NULL;
            return 0;
        }
        if (!cJSON_IsString(it))
            return wrong_type(P, o, it);
        sl->val.s = rb_cli_strdup(P->cli, it->valuestring);
        return sl->val.s ? 0 : -ENOMEM;
    case RB_OPT_STRS: {
        const cJSON *e;
        sl->val.strs.n = 0; /* the config replaces the default list */
        if (cJSON_IsString(it)) {
            const char *s = rb_cli_strdup(P->cli, it->valuestring);
            return s ? add_str(P, sl, s) : -ENOMEM;
        }
        if (!cJSON_IsArray(it))
            return wrong_type(P, o, it);
        cJSON_ArrayForEach(e, it)
        {
            if (!cJSON_IsString(e))
                return wrong_type(P, o, it);
            const char *s = rb_cli_strdup(P->cli, e->valuestring);
            if (!s)
                return -ENOMEM;
            int rc = add_str(P, sl, s);
            if (rc)
                return rc;
        }
        return 0;
    }
    case RB_OPT_SIZES: case RB_OPT_U64S:
        if (cJSON_IsArray(it))
            return apply_json_list(P, sl, it);
        if (cJSON_IsString(it))
            return cli_apply_string(P, sl, it->valuestring);
        if (cJSON_IsNumber(it)) {
            uint64_t v;
            char num[64];
            int rc = json_u64(it->valuedouble, &v);
            cli_format_number(num, sizeof(num), it->valuedouble);
            if (rc)
                return cli_bad_value(P, o, num, rc);
            sl->val.list.n = 1;
            sl->val.list.v[0] = v;
            return 0;
        }
        return wrong_type(P, o, it);
    case RB_OPT_CHOICE:
        if (!cJSON_IsString(it))
            return wrong_type(P, o, it);
        return cli_apply_string(P, sl, it->valuestring);
    case RB_OPT_INT: case RB_OPT_U64: case RB_OPT_DOUBLE: case RB_OPT_PERCENT: case RB_OPT_SIZE:
    case RB_OPT_DURATION: case RB_OPT_RATE:
        if (cJSON_IsString(it))
            return cli_apply_string(P, sl, it->valuestring); /* scalars copy what they need */
        if (cJSON_IsNumber(it))
            return apply_number(P, sl, it);
        return wrong_type(P, o, it);
    }
    return wrong_type(P, o, it);
}

/* Applies the options in a JSON object file; every failure is reported in one line. */
/* A config's "args": the positional arguments, used when the command line gives none. */
static int config_args(struct parse *P, const char *path, const cJSON *arr)
{
    int n = cJSON_GetArraySize(arr);
    if (!cJSON_IsArray(arr) || n > 64) {
        cli_complain("config %s: args: expected an array of at most 64 strings (the positional arguments)", path);
        return -EINVAL;
    }
    const char **v = calloc((size_t)n + 1, sizeof *v);
    if (!v || cli_own(P->cli, (void *)v) != 0)
        return -ENOMEM;
    const cJSON *e;
    int i = 0;
    cJSON_ArrayForEach(e, arr)
    {
        if (!cJSON_IsString(e)) {
            cli_complain("config %s: args: expected strings, got %s", path, json_type_name(e));
            return -EINVAL;
        }
        if (!(v[i++] = rb_cli_strdup(P->cli, e->valuestring)))
            return -ENOMEM;
    }
    P->config_args = v;
    P->config_nargs = n;
    return 0;
}

/*
 * A saved result (result.json, or its run directory) as a config: its command must be this one; its
 * resolved options apply except where the run's output went and secrets (those come from the
 * environment again). Returns the object to apply, or NULL after one line.
 */
static const cJSON *result_config(const struct parse *P, const char *path, const cJSON *root)
{
    const char *cmd = strncmp(P->cmd, "railbench ", 10) == 0 ? P->cmd + 10 : P->cmd;
    const char *was = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(root, "command"));
    const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(root, "config");
    if (!cJSON_IsObject(cfg)) {
        cli_complain("config %s: a result without a \"config\" object (written by a calculator without --out?)", path);
        return NULL;
    }
    /* "coll allreduce" is a result of "coll" with the positional argument "allreduce". */
    size_t cl = strlen(cmd);
    if (!was || strncmp(was, cmd, cl) != 0 || (was[cl] != '\0' && was[cl] != ' ')) {
        char q[256];
        cli_quote(q, sizeof q, was ? was : "");
        cli_complain("config %s: the result of %s, not of \"%s\" (run that command with it)", path, q, cmd);
        return NULL;
    }
    return cfg;
}

/* Keys of a saved result's config that are not carried into a new run. */
static bool skip_saved_key(const struct parse *P, const cJSON *it)
{
    static const char *const skip[] = {"config", "out", "force"};
    for (size_t i = 0; i < sizeof skip / sizeof skip[0]; i++)
        if (strcmp(it->string, skip[i]) == 0)
            return true;
    struct slot *sl = cli_find_long(P, it->string, strlen(it->string));
    return sl && rb_cli_is_secret(sl->opt->name) && cJSON_IsString(it) &&
           strcmp(it->valuestring, REDACTED) == 0;
}

int cli_load_config(struct parse *P, const char *path)
{
    char *buf = NULL;
    size_t len;
    const char *end = NULL;
    char file[4200];
    struct stat st;
    /* A run directory stands for its result.json. */
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(file, sizeof file, "%s/result.json", path);
        if (access(file, R_OK) != 0) {
            cli_complain("config %s: a directory without a readable result.json (give a JSON file of options, "
                         "or a run's directory)", path);
            return -EINVAL;
        }
        path = file;
    }
    int rc = rb_file_read(path, CONFIG_MAX_BYTES, &buf, &len);

    if (rc) {
        cli_complain("config %s: cannot read: %s", path, strerror(-rc));
        return -EINVAL;
    }
    cJSON *root = cJSON_ParseWithOpts(buf, &end, 1);
    if (!root) {
        int line = 1;
        for (const char *p = buf; end && p < end && *p; p++)
            line += *p == '\n';
        cli_complain("config %s: invalid JSON near line %d", path, line);
        free(buf);
        return -EINVAL;
    }
    free(buf);
    if (!cJSON_IsObject(root)) {
        cli_complain("config %s: expected a JSON object of option names and values, got %s",
                path, json_type_name(root));
        cJSON_Delete(root);
        return -EINVAL;
    }
    const char *schema = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(root, "schema"));
    const bool saved = schema && strncmp(schema, "railbench.result/", 17) == 0;
    const cJSON *opts = saved ? result_config(P, path, root) : root;
    if (!opts) {
        cJSON_Delete(root);
        return -EINVAL;
    }
    P->config_path = path;
    const cJSON *it;
    rc = 0;
    cJSON_ArrayForEach(it, opts)
    {
        /* "config" is in every saved config; feeding one back must not chain files. */
        if (strcmp(it->string, "config") == 0 || (saved && skip_saved_key(P, it)))
            continue;
        if (strcmp(it->string, "args") == 0) {
            if ((rc = config_args(P, path, it)) != 0)
                break;
            continue;
        }
        struct slot *sl = cli_find_long(P, it->string, strlen(it->string));
        if (!sl) {
            char q[256];
            cli_quote(q, sizeof(q), it->string);
            cli_complain("config %s: unknown option %s", path, q);
            rc = -EINVAL;
            break;
        }
        rc = apply_json(P, sl, it);
        if (rc)
            break;
    }
    P->config_path = NULL;
    cJSON_Delete(root);
    return rc;
}

