/* Command-line parser: the resolved config and argv records (secrets redacted) and --help. */
#define _POSIX_C_SOURCE 200809L
#include "cli_int.h"
#include "railbench/result.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "railbench/file.h"
#include "railbench/units.h"

/* ---- the resolved config ---- */


/* The staged value as JSON of the type --config reads back; NULL when out of memory. */
static cJSON *value_json(const struct slot *sl)
{
    const struct rb_opt *o = sl->opt;
    const union value *v = &sl->val;
    cJSON *a;
    char buf[64];

    switch (o->type) {
    case RB_OPT_FLAG:
        return cJSON_CreateBool(v->b);
    case RB_OPT_STR:
        return v->s ? cJSON_CreateString(v->s) : cJSON_CreateNull();
    case RB_OPT_STRS:
        if (!(a = cJSON_CreateArray()))
            return NULL;
        for (size_t i = 0; i < v->strs.n; i++) {
            cJSON *e = cJSON_CreateString(v->strs.v[i] ? v->strs.v[i] : "");
            if (!e || !cJSON_AddItemToArray(a, e)) {
                cJSON_Delete(e);
                cJSON_Delete(a);
                return NULL;
            }
        }
        return a;
    case RB_OPT_INT:
        return rb_json_i64(v->i);
    case RB_OPT_U64: case RB_OPT_SIZE:
        return rb_json_u64(v->u);
    case RB_OPT_RATE: /* 0 is "no rate" (closed loop), which --rate cannot be given as: null reads back */
        return v->d > 0 ? cJSON_CreateNumber(v->d) : cJSON_CreateNull();
    case RB_OPT_DOUBLE: case RB_OPT_PERCENT:
        return cJSON_CreateNumber(v->d);
    case RB_OPT_SIZES: case RB_OPT_U64S:
        if (!(a = cJSON_CreateArray()))
            return NULL;
        for (size_t i = 0; i < v->list.n; i++) {
            cJSON *e = rb_json_u64(v->list.v[i]);
            if (!e || !cJSON_AddItemToArray(a, e)) {
                cJSON_Delete(e);
                cJSON_Delete(a);
                return NULL;
            }
        }
        return a;
    case RB_OPT_DURATION:
        rb_format_duration(buf, sizeof(buf), v->u);
        return cJSON_CreateString(buf);
    case RB_OPT_CHOICE: {
        const char *p;
        size_t len;
        if (!cli_choice_at(o->choices, v->choice, &p, &len))
            return cJSON_CreateNull();
        snprintf(buf, sizeof(buf), "%.*s", (int)(len < 63 ? len : 63), p);
        return cJSON_CreateString(buf);
    }
    }
    return cJSON_CreateNull();
}

/* A secret's value is hidden unless it carries nothing: a flag, an unset string, an empty list. */
static bool redact_value(const struct slot *sl)
{
    if (!rb_cli_is_secret(sl->opt->name))
        return false;
    switch (sl->opt->type) {
    case RB_OPT_FLAG: return false;
    case RB_OPT_STR: return sl->val.s != NULL;
    case RB_OPT_STRS: return sl->val.strs.n > 0;
    default: return true;
    }
}

cJSON *cli_build_config(const struct parse *P, const char *const *args, int nargs)
{
    cJSON *obj = cJSON_CreateObject();
    if (!obj)
        return NULL;
    for (size_t i = 0; i < P->nslots; i++) {
        const struct slot *sl = &P->slots[i];
        /* A command option of the same name hides a common one. */
        if (cli_find_long(P, sl->opt->name, strlen(sl->opt->name)) != sl)
            continue;
        cJSON *v = redact_value(sl) ? cJSON_CreateString(REDACTED) : value_json(sl);
        if (!v || !cJSON_AddItemToObject(obj, sl->opt->name, v)) {
            cJSON_Delete(v);
            cJSON_Delete(obj);
            return NULL;
        }
    }
    /* Positional arguments too, so that --config RUN repeats the run on the same target. */
    cJSON *a = cJSON_AddArrayToObject(obj, "args");
    for (int i = 0; a && i < nargs; i++)
        if (!cJSON_AddItemToArray(a, cJSON_CreateString(args[i]))) {
            a = NULL;
            break;
        }
    if (!a) {
        cJSON_Delete(obj);
        return NULL;
    }
    return obj;
}

void rb_cli_redact_url(char *out, size_t len, const char *s)
{
    const char *scheme = strstr(s, "://");
    const char *host = scheme ? scheme + 3 : NULL;
    const char *end = host ? host + strcspn(host, "/?#") : NULL;
    const char *at = NULL;
    for (const char *c = host; c && c < end; c++)
        if (*c == '@')
            at = c;
    if (!at) {
        snprintf(out, len, "%s", s);
        return;
    }
    snprintf(out, len, "%.*s***%s", (int)(host - s), s, at);
}

/* Hides user:password@ in every URL-looking string of a config or argv record. */
void cli_redact_userinfo(cJSON *item)
{
    if (!item)
        return;
    if (cJSON_IsString(item) && strstr(item->valuestring, "://") && strchr(item->valuestring, '@')) {
        size_t len = strlen(item->valuestring) + 8;
        char *clean = malloc(len);
        if (clean) {
            rb_cli_redact_url(clean, len, item->valuestring);
            cJSON_SetValuestring(item, clean);
            free(clean);
        }
        return;
    }
    cJSON *child;
    cJSON_ArrayForEach(child, item)
    {
        cli_redact_userinfo(child);
    }
}

cJSON *cli_build_argv(int argc, char **argv, const size_t *redact)
{
    cJSON *arr = cJSON_CreateArray();
    if (!arr)
        return NULL;
    for (int i = 0; i < argc; i++) {
        cJSON *e;
        if (redact[i] == SIZE_MAX) {
            e = cJSON_CreateString(argv[i]);
        } else {
            size_t off = redact[i];
            char *s = malloc(off + sizeof(REDACTED));
            if (!s) {
                cJSON_Delete(arr);
                return NULL;
            }
            memcpy(s, argv[i], off);
            memcpy(s + off, REDACTED, sizeof(REDACTED));
            e = cJSON_CreateString(s);
            free(s);
        }
        if (!e || !cJSON_AddItemToArray(arr, e)) {
            cJSON_Delete(e);
            cJSON_Delete(arr);
            return NULL;
        }
    }
    return arr;
}

/* ---- --help ---- */

/*
 * Exact size for --help, in a form that parses back to the same bytes: the
 * largest binary unit that divides it ("4KiB"), else the plain number of
 * bytes ("9000", not "9KB", which a reader takes for 9k = 9,216).
 */
static void format_size_exact(char *buf, size_t len, uint64_t b)
{
    static const char *const bin[] = {"KiB", "MiB", "GiB", "TiB"};
    for (int i = 3; i >= 0 && b > 0; i--) {
        uint64_t m = (uint64_t)1 << (10 * (i + 1));
        if (b % m == 0) {
            snprintf(buf, len, "%" PRIu64 "%s", b / m, bin[i]);
            return;
        }
    }
    snprintf(buf, len, "%" PRIu64, b);
}

/* Appends s to buf[len] at *n, keeping it NUL-terminated and never overflowing. */
static void append(char *buf, size_t len, size_t *n, const char *s)
{
    int w = snprintf(buf + *n, len - *n, "%s", s);
    if (w > 0)
        *n = *n + (size_t)w < len ? *n + (size_t)w : len - 1;
}

/* The default as --help shows it; false when there is nothing worth showing. */
static bool format_default(char *buf, size_t len, const struct slot *sl)
{
    const union value *v = &sl->val;
    const struct rb_opt *o = sl->opt;
    char one[64];
    size_t n = 0;

    buf[0] = '\0';
    if (redact_value(sl)) {
        snprintf(buf, len, "set, hidden");
        return true;
    }
    switch (o->type) {
    case RB_OPT_FLAG:
        if (!v->b)
            return false;
        snprintf(buf, len, "on");
        return true;
    case RB_OPT_STR:
        if (!v->s || !*v->s)
            return false;
        snprintf(buf, len, "%s", v->s);
        return true;
    case RB_OPT_STRS:
        for (size_t i = 0; i < v->strs.n; i++) {
            if (i)
                append(buf, len, &n, " ");
            append(buf, len, &n, v->strs.v[i] ? v->strs.v[i] : "");
        }
        return v->strs.n > 0;
    case RB_OPT_INT:
        snprintf(buf, len, "%" PRId64, v->i);
        return true;
    case RB_OPT_U64:
        snprintf(buf, len, "%" PRIu64, v->u);
        return true;
    case RB_OPT_DOUBLE:
        snprintf(buf, len, "%g", v->d);
        return true;
    case RB_OPT_PERCENT:
        snprintf(buf, len, "%g%%", v->d);
        return true;
    case RB_OPT_RATE:
        if (!(v->d > 0))
            return false;
        snprintf(buf, len, "%g/s", v->d);
        return true;
    case RB_OPT_SIZE:
        format_size_exact(buf, len, v->u);
        return true;
    case RB_OPT_SIZES: case RB_OPT_U64S:
        for (size_t i = 0; i < v->list.n; i++) {
            if (i)
                append(buf, len, &n, ",");
            if (o->type == RB_OPT_SIZES)
                format_size_exact(one, sizeof(one), v->list.v[i]);
            else
                snprintf(one, sizeof(one), "%" PRIu64, v->list.v[i]);
            append(buf, len, &n, one);
        }
        return v->list.n > 0;
    case RB_OPT_DURATION:
        rb_format_duration(buf, len, v->u);
        return true;
    case RB_OPT_CHOICE: {
        const char *p;
        size_t cl;
        if (!cli_choice_at(o->choices, v->choice, &p, &cl))
            return false;
        snprintf(buf, len, "%.*s", (int)(cl < len ? cl : len - 1), p);
        return true;
    }
    }
    return false;
}

static const char *metavar(const struct rb_opt *o)
{
    if (o->metavar)
        return o->metavar;
    switch (o->type) {
    case RB_OPT_FLAG: return NULL;
    case RB_OPT_STR: case RB_OPT_STRS: return "VALUE";
    case RB_OPT_INT: case RB_OPT_U64: return "N";
    case RB_OPT_DOUBLE: return "X";
    case RB_OPT_PERCENT: return "PCT";
    case RB_OPT_SIZE: return "SIZE";
    case RB_OPT_SIZES: return "SIZE,...";
    case RB_OPT_U64S: return "N,...";
    case RB_OPT_DURATION: return "DURATION";
    case RB_OPT_RATE: return "RATE";
    case RB_OPT_CHOICE: return o->choices ? o->choices : "VALUE";
    }
    return "VALUE";
}

static void left_column(char *buf, size_t len, const struct rb_opt *o)
{
    const char *mv = metavar(o);
    if (o->short_name)
        snprintf(buf, len, "  -%c, --%s%s%s", o->short_name, o->name, mv ? " " : "", mv ? mv : "");
    else
        snprintf(buf, len, "      --%s%s%s", o->name, mv ? " " : "", mv ? mv : "");
}

static void print_opt(const struct slot *sl, int width)
{
    const struct rb_opt *o = sl->opt;
    char left[256], def[512], extra[1100] = "";

    left_column(left, sizeof(left), o);
    /*
     * A default worked out at run time (from the environment, another option,
     * a preset) is described in the help text as "(if not given: ...)"; *dest
     * holds only a sentinel then, which --help does not show as a default.
     */
    bool has_def = !(o->help && strstr(o->help, RB_CLI_IF_NOT_GIVEN)) && format_default(def, sizeof(def), sl);
    if (o->type == RB_OPT_CHOICE && o->choices && o->metavar && strcmp(o->metavar, o->choices) != 0) {
        char list[512];
        cli_choice_list(list, sizeof(list), o->choices);
        snprintf(extra, sizeof(extra), " (one of %s%s%s)", list, has_def ? "; default: " : "",
                 has_def ? def : "");
    } else if (has_def) {
        snprintf(extra, sizeof(extra), " (default: %s)", def);
    }
    if ((int)strlen(left) > width)
        printf("%s\n%*s  %s%s\n", left, width, "", o->help ? o->help : "", extra);
    else
        printf("%-*s  %s%s\n", width, left, o->help ? o->help : "", extra);
}

/* One option of --help as JSON (RAILBENCH_HELP=json), with the default exactly as the text shows it. */
static cJSON *opt_json(const struct slot *sl, bool common)
{
    const struct rb_opt *o = sl->opt;
    const char *mv = metavar(o);
    const char *described = o->help ? strstr(o->help, RB_CLI_IF_NOT_GIVEN) : NULL;
    char def[512], one[2] = {o->short_name, '\0'};
    cJSON *j = cJSON_CreateObject();
    if (!j)
        return NULL;
    cJSON_AddStringToObject(j, "long", o->name);
    cJSON_AddItemToObject(j, "short", o->short_name ? cJSON_CreateString(one) : cJSON_CreateNull());
    cJSON_AddItemToObject(j, "metavar", mv ? cJSON_CreateString(mv) : cJSON_CreateNull());
    cJSON_AddStringToObject(j, "help", o->help ? o->help : "");
    cJSON_AddItemToObject(j, "default", !described && format_default(def, sizeof(def), sl) ?
                                            cJSON_CreateString(def) : cJSON_CreateNull());
    if (described) {
        size_t n = strlen(described + strlen(RB_CLI_IF_NOT_GIVEN));
        snprintf(def, sizeof(def), "%.*s", (int)(n > 0 ? n - 1 : 0), described + strlen(RB_CLI_IF_NOT_GIVEN));
        cJSON_AddStringToObject(j, "if_not_given", def);
    }
    cJSON *choices = cJSON_AddArrayToObject(j, "choices");
    const char *p;
    size_t cl;
    for (int i = 0; o->choices && cli_choice_at(o->choices, i, &p, &cl); i++) {
        snprintf(def, sizeof(def), "%.*s", (int)(cl < sizeof(def) ? cl : sizeof(def) - 1), p);
        cJSON_AddItemToArray(choices, cJSON_CreateString(def));
    }
    cJSON_AddBoolToObject(j, "takes_value", o->type != RB_OPT_FLAG);
    cJSON_AddBoolToObject(j, "repeatable", o->type == RB_OPT_STRS);
    cJSON_AddBoolToObject(j, "list", o->type != RB_OPT_CHOICE && o->choices); /* "ring,hier": choices, comma-separated */
    cJSON_AddBoolToObject(j, "common", common);
    return j;
}

/*
 * --help as one JSON object on stdout (RAILBENCH_HELP=json): usage, summary, positional counts and every
 * option the text shows, in the same order, with the same defaults. The man pages and the shell completion
 * are generated from it (scripts/gen-man.py), so they cannot drift from --help.
 */
static void usage_json(const struct rb_cmd_spec *spec, const struct rb_opt *copts)
{
    struct slot sl;
    cJSON *j = cJSON_CreateObject(), *opts = j ? cJSON_AddArrayToObject(j, "options") : NULL;
    if (!opts) {
        cJSON_Delete(j);
        return;
    }
    cJSON_AddStringToObject(j, "usage", spec->usage ? spec->usage : "railbench [options]");
    cJSON_AddStringToObject(j, "summary", spec->summary ? spec->summary : "");
    cJSON_AddNumberToObject(j, "min_args", spec->min_args);
    cJSON_AddNumberToObject(j, "max_args", spec->max_args);
    for (const struct rb_opt *o = spec->opts; o && o->name; o++) {
        sl.opt = o;
        cli_load_default(&sl);
        cJSON_AddItemToArray(opts, opt_json(&sl, false));
    }
    for (int i = 0; i < NCOMMON; i++) {
        bool shadowed = false;
        for (const struct rb_opt *o = spec->opts; o && o->name && !shadowed; o++)
            shadowed = strcmp(o->name, copts[i].name) == 0;
        if (!cli_common_taken(spec, i) || shadowed)
            continue;
        sl.opt = &copts[i];
        cli_load_default(&sl);
        cJSON_AddItemToArray(opts, opt_json(&sl, true));
    }
    static const struct rb_opt help = {"help", 'h', RB_OPT_FLAG, NULL, NULL, "show this help and exit", NULL};
    sl.opt = &help;
    cJSON *h = opt_json(&sl, true);
    cJSON_ReplaceItemInObject(h, "default", cJSON_CreateNull());
    cJSON_AddItemToArray(opts, h);
    char *text = cJSON_PrintUnformatted(j);
    if (text)
        printf("%s\n", text);
    free(text);
    cJSON_Delete(j);
    fflush(stdout);
}

void rb_cli_usage(const struct rb_cmd_spec *spec)
{
    struct rb_common defaults = {.interval_ns = NS_PER_S};
    struct rb_opt copts[NCOMMON];
    struct slot sl;
    char left[256];
    const char *help_left = "  -h, --help";
    int width = (int)strlen(help_left);

    if (!spec)
        return;
    cli_common_opts(copts, &defaults);
    if (rb_cli_help_json()) {
        usage_json(spec, copts);
        return;
    }
    for (const struct rb_opt *o = spec->opts; o && o->name; o++) {
        left_column(left, sizeof(left), o);
        if ((int)strlen(left) > width && strlen(left) <= HELP_COL_MAX)
            width = (int)strlen(left);
    }
    for (int i = 0; i < NCOMMON; i++) {
        if (!cli_common_taken(spec, i))
            continue;
        left_column(left, sizeof(left), &copts[i]);
        if ((int)strlen(left) > width && strlen(left) <= HELP_COL_MAX)
            width = (int)strlen(left);
    }

    printf("usage: %s\n", spec->usage ? spec->usage : "railbench [options]");
    if (spec->summary)
        printf("\n%s\n", spec->summary);
    if (spec->opts && spec->opts[0].name) {
        printf("\noptions:\n");
        for (const struct rb_opt *o = spec->opts; o->name; o++) {
            sl.opt = o;
            cli_load_default(&sl);
            print_opt(&sl, width);
        }
    }
    printf("\ncommon options:\n");
    for (int i = 0; i < NCOMMON; i++) {
        if (!cli_common_taken(spec, i))
            continue;
        /* A command option of the same name replaces the common one (report's -o, --out FILE). */
        bool shadowed = false;
        for (const struct rb_opt *o = spec->opts; o && o->name && !shadowed; o++)
            shadowed = strcmp(o->name, copts[i].name) == 0;
        if (shadowed)
            continue;
        sl.opt = &copts[i];
        cli_load_default(&sl);
        print_opt(&sl, width);
    }
    printf("%-*s  %s\n", width, help_left, "show this help and exit");
    printf("\nSizes: 4096 (bytes), 4k = 4KiB = 4096, 4KB = 4000. Durations: 500us, 1.5s, 2m, 1h; "
           "a plain number is seconds.\n");
    fflush(stdout);
}

