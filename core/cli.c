/* Command-line and --config parsing shared by every command: values are staged, then committed at once. */
#define _POSIX_C_SOURCE 200809L

#include "railbench/cli.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "railbench/file.h"
#include "railbench/units.h"

#define REDACTED "***REDACTED***"
#define NS_PER_S 1000000000ull
/* A config file larger than this is a mistake (a result file, a data set), not options. */
#define CONFIG_MAX_BYTES (16u << 20)
/* Whole numbers past 2^53 do not survive a JSON double; the config writes them as strings. */
#define JSON_EXACT_MAX 9007199254740992.0
#define TWO_POW_63 9223372036854775808.0
#define TWO_POW_64 18446744073709551616.0
/* Left column width of --help before the text moves to its own line. */
#define HELP_COL_MAX 30

/*
 * A value held aside until the whole command line and config are known good,
 * so that a failed parse leaves every destination exactly as it was.
 */
union value {
    bool b;
    const char *s;
    struct rb_strs strs;
    int64_t i;
    uint64_t u;
    double d;
    struct rb_u64s list;
    int choice;
};

/* Where a value came from: a repeatable option's first use from a later source replaces the list. */
enum source { SRC_DEFAULT, SRC_CONFIG, SRC_CLI };

struct slot {
    const struct rb_opt *opt;
    union value val;
    enum source src;
};

/* One option occurrence on the command line; val is NULL for a bare flag. */
struct tok {
    struct slot *sl;
    const char *val;
};

enum { C_OUT, C_INTERVAL, C_LABEL, C_CONFIG, C_QUIET, C_PROM, C_PROM_RANK, C_PROM_TEXT, C_PUSH, C_LINGER, NCOMMON };

struct parse {
    struct rb_cli *cli;
    const struct rb_cmd_spec *spec;
    char cmd[128];               /* "railbench load get", for messages */
    struct rb_opt copts[NCOMMON];
    struct slot *slots;          /* the command's options, then the common ones */
    size_t nslots;
    struct slot *label, *interval, *config;
    const char *config_path;     /* set while applying a config file, for messages */
};

static const struct rb_opt common_tmpl[NCOMMON] = {
    [C_OUT] = {"out", 0, RB_OPT_STR, NULL, "DIR",
               "write results under DIR (default: railbench-results/<UTC time>-<command>)", NULL},
    [C_INTERVAL] = {"interval", 0, RB_OPT_DURATION, NULL, "DURATION",
                    "interval of live statistics and time series", NULL},
    [C_LABEL] = {"label", 0, RB_OPT_STRS, NULL, "K=V",
                 "add a label to results and metrics; repeatable", NULL},
    [C_CONFIG] = {"config", 0, RB_OPT_STR, NULL, "FILE.json",
                  "read options from a JSON object keyed by long option names; the command line wins",
                  NULL},
    [C_QUIET] = {"quiet", 0, RB_OPT_FLAG, NULL, NULL, "print only warnings and errors", NULL},
    [C_PROM] = {"prom-listen", 0, RB_OPT_STR, NULL, "[ADDR:]PORT",
                "serve Prometheus /metrics from rank 0 (address defaults to 127.0.0.1)", NULL},
    [C_PROM_RANK] = {"prom-per-rank", 0, RB_OPT_U64, NULL, "BASEPORT",
                     "also serve each rank's own /metrics on 127.0.0.1:BASEPORT+rank (0: off)", NULL},
    [C_PROM_TEXT] = {"prom-textfile", 0, RB_OPT_STR, NULL, "DIR",
                     "write the final metrics to DIR/railbench.prom for node_exporter's textfile collector",
                     NULL},
    [C_PUSH] = {"pushgateway", 0, RB_OPT_STR, NULL, "URL",
                "push the run's final metrics to a Prometheus Pushgateway", NULL},
    [C_LINGER] = {"prom-linger", 0, RB_OPT_DURATION, NULL, "DURATION",
                  "keep serving /metrics this long after the run so a last scrape sees the final values",
                  NULL},
};

/* The common options with their destinations inside c. */
static void common_opts(struct rb_opt out[NCOMMON], struct rb_common *c)
{
    memcpy(out, common_tmpl, sizeof(common_tmpl));
    out[C_OUT].dest = &c->out_dir;
    out[C_INTERVAL].dest = &c->interval_ns;
    out[C_LABEL].dest = &c->labels;
    out[C_CONFIG].dest = &c->config_path;
    out[C_QUIET].dest = &c->quiet;
    out[C_PROM].dest = &c->prom_listen;
    out[C_PROM_RANK].dest = &c->prom_per_rank_port;
    out[C_PROM_TEXT].dest = &c->prom_textfile;
    out[C_PUSH].dest = &c->pushgateway;
    out[C_LINGER].dest = &c->prom_linger_ns;
}

static bool contains_nocase(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] && (hay[i] | 0x20) == needle[i])
            i++;
        if (i == n)
            return true;
    }
    return false;
}

bool rb_cli_is_secret(const char *name)
{
    static const char *const words[] = {"key", "secret", "token", "password"};
    if (!name)
        return false;
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
        if (contains_nocase(name, words[i]))
            return true;
    return false;
}

/* Takes ownership of p (freed by rb_cli_free); on failure frees p and returns -ENOMEM. */
static int own(struct rb_cli *cli, void *p)
{
    if (!p)
        return -ENOMEM;
    if (cli->nowned == cli->capowned) {
        size_t cap = cli->capowned ? 2 * cli->capowned : 16;
        char **o = realloc(cli->owned, cap * sizeof(*o));
        if (!o) {
            free(p);
            return -ENOMEM;
        }
        cli->owned = o;
        cli->capowned = cap;
    }
    cli->owned[cli->nowned++] = p;
    return 0;
}

const char *rb_cli_strdup(struct rb_cli *cli, const char *s)
{
    if (!cli || !s)
        return NULL;
    char *d = strdup(s);
    if (own(cli, d) != 0)
        return NULL;
    return d;
}

void rb_cli_free(struct rb_cli *cli)
{
    if (!cli)
        return;
    for (size_t i = 0; i < cli->nowned; i++)
        free(cli->owned[i]);
    free(cli->owned);
    cJSON_Delete(cli->config);
    cJSON_Delete(cli->argv_json);
    memset(cli, 0, sizeof(*cli));
}

/* ---- choices "a|b|c" ---- */

/* The idx-th choice as (*p, *len); false when idx is out of range. */
static bool choice_at(const char *choices, int idx, const char **p, size_t *len)
{
    if (!choices || idx < 0)
        return false;
    const char *c = choices;
    for (int i = 0; i < idx; i++) {
        c = strchr(c, '|');
        if (!c)
            return false;
        c++;
    }
    *p = c;
    *len = strcspn(c, "|");
    return true;
}

static int choice_index(const char *choices, const char *s)
{
    const char *p;
    size_t len;
    for (int i = 0; choice_at(choices, i, &p, &len); i++)
        if (strlen(s) == len && strncmp(p, s, len) == 0)
            return i;
    return -1;
}

/* "a, b, c" from "a|b|c". */
static void choice_list(char *buf, size_t len, const char *choices)
{
    size_t n = 0;
    buf[0] = '\0';
    for (const char *c = choices ? choices : ""; *c && n + 3 < len; c++) {
        if (*c == '|') {
            buf[n++] = ',';
            buf[n++] = ' ';
        } else {
            buf[n++] = *c;
        }
    }
    buf[n < len ? n : len - 1] = '\0';
}

/* ---- slots ---- */

static void load_default(struct slot *sl)
{
    const void *d = sl->opt->dest;
    memset(&sl->val, 0, sizeof(sl->val));
    sl->src = SRC_DEFAULT;
    if (!d)
        return;
    switch (sl->opt->type) {
    case RB_OPT_FLAG: sl->val.b = *(const bool *)d; break;
    case RB_OPT_STR: sl->val.s = *(const char *const *)d; break;
    case RB_OPT_STRS: sl->val.strs = *(const struct rb_strs *)d; break;
    case RB_OPT_INT: sl->val.i = *(const int64_t *)d; break;
    case RB_OPT_U64: case RB_OPT_SIZE: case RB_OPT_DURATION: sl->val.u = *(const uint64_t *)d; break;
    case RB_OPT_DOUBLE: case RB_OPT_PERCENT: case RB_OPT_RATE: sl->val.d = *(const double *)d; break;
    case RB_OPT_SIZES: case RB_OPT_U64S: sl->val.list = *(const struct rb_u64s *)d; break;
    case RB_OPT_CHOICE: sl->val.choice = *(const int *)d; break;
    }
    if (sl->opt->type == RB_OPT_STRS && sl->val.strs.n > RB_LIST_MAX)
        sl->val.strs.n = RB_LIST_MAX;
    if ((sl->opt->type == RB_OPT_SIZES || sl->opt->type == RB_OPT_U64S) && sl->val.list.n > RB_LIST_MAX)
        sl->val.list.n = RB_LIST_MAX;
}

static void commit(const struct slot *sl)
{
    void *d = sl->opt->dest;
    if (!d)
        return;
    switch (sl->opt->type) {
    case RB_OPT_FLAG: *(bool *)d = sl->val.b; break;
    case RB_OPT_STR: *(const char **)d = sl->val.s; break;
    case RB_OPT_STRS: *(struct rb_strs *)d = sl->val.strs; break;
    case RB_OPT_INT: *(int64_t *)d = sl->val.i; break;
    case RB_OPT_U64: case RB_OPT_SIZE: case RB_OPT_DURATION: *(uint64_t *)d = sl->val.u; break;
    case RB_OPT_DOUBLE: case RB_OPT_PERCENT: case RB_OPT_RATE: *(double *)d = sl->val.d; break;
    case RB_OPT_SIZES: case RB_OPT_U64S: *(struct rb_u64s *)d = sl->val.list; break;
    case RB_OPT_CHOICE: *(int *)d = sl->val.choice; break;
    }
}

static struct slot *find_long(const struct parse *P, const char *name, size_t len)
{
    for (size_t i = 0; i < P->nslots; i++) {
        const char *n = P->slots[i].opt->name;
        if (strlen(n) == len && strncmp(n, name, len) == 0)
            return &P->slots[i];
    }
    return NULL;
}

static struct slot *find_short(const struct parse *P, char c)
{
    for (size_t i = 0; i < P->nslots; i++)
        if (c && P->slots[i].opt->short_name == c)
            return &P->slots[i];
    return NULL;
}

/* ---- messages ---- */

bool rb_cli_first_rank(void)
{
    /* Set by mpirun (OpenMPI), Hydra/PMI, PMIx and srun before MPI starts. */
    static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v)
            return strcmp(v, "0") == 0;
    }
    return true;
}

/* Prints "railbench: MESSAGE" on the first rank only, so a launch of N ranks says it once. */
static void vcomplain(const char *fmt, va_list ap)
{
    if (!rb_cli_first_rank())
        return;
    char msg[2048];
    vsnprintf(msg, sizeof msg, fmt, ap);
    fprintf(stderr, "railbench: %s\n", msg);
}

static void complain(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void complain(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vcomplain(fmt, ap);
    va_end(ap);
}

int rb_cli_usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vcomplain(fmt, ap);
    va_end(ap);
    return RB_EXIT_USAGE;
}

/*
 * Prints one line about option o: "railbench: --bs: ..." on the command line,
 * "railbench: config FILE: bs: ..." inside a config file.
 */
static void opt_error(const struct parse *P, const struct rb_opt *o, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void opt_error(const struct parse *P, const struct rb_opt *o, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (P->config_path)
        complain("config %s: %s: %s", P->config_path, o->name, msg);
    else
        complain("--%s: %s", o->name, msg);
}

/* What a value of type t is called and how to write one. */
static void type_words(enum rb_opt_type t, const char **noun, const char **hint)
{
    switch (t) {
    case RB_OPT_INT: *noun = "a whole number"; *hint = "use e.g. -1, 0, 42"; return;
    case RB_OPT_U64: *noun = "a non-negative whole number"; *hint = "use e.g. 0, 8, 1000"; return;
    case RB_OPT_DOUBLE: *noun = "a number"; *hint = "use e.g. 0.5, 10, 1e-3"; return;
    case RB_OPT_PERCENT: *noun = "a percentage"; *hint = "use 0 to 100, e.g. 90 or 90%"; return;
    case RB_OPT_SIZE: *noun = "a size"; *hint = "use e.g. 4096, 4k, 4KiB, 1MB"; return;
    case RB_OPT_SIZES: *noun = "a size"; *hint = "use a comma-separated list, e.g. 4k,64k,1M"; return;
    case RB_OPT_U64S:
        *noun = "a non-negative whole number";
        *hint = "use a comma-separated list, e.g. 1,2,4,8";
        return;
    case RB_OPT_DURATION:
        *noun = "a duration";
        *hint = "use e.g. 500us, 1.5s, 2m, 1h; a plain number is seconds";
        return;
    case RB_OPT_RATE: *noun = "a rate"; *hint = "use e.g. 1000, 1000/s, 60/m, 2.5k/s; must be > 0"; return;
    case RB_OPT_FLAG: *noun = "true or false"; *hint = "a flag takes no value on the command line"; return;
    case RB_OPT_STR: case RB_OPT_STRS: case RB_OPT_CHOICE: break;
    }
    *noun = "a string";
    *hint = "";
}

/* The value as shown in a message: quoted text, or *** for a secret option. */
static const char *shown(const struct rb_opt *o, const char *quoted)
{
    return rb_cli_is_secret(o->name) ? "***" : quoted;
}

/* Reports that shown_val (already quoted if text) failed with rc; returns -EINVAL. */
static int bad_value(const struct parse *P, const struct rb_opt *o, const char *shown_val, int rc)
{
    const char *noun, *hint;
    type_words(o->type, &noun, &hint);
    if (rc == -ERANGE)
        opt_error(P, o, "%s is out of range for %s (%s)", shown(o, shown_val), noun, hint);
    else
        opt_error(P, o, "%s is not %s (%s)", shown(o, shown_val), noun, hint);
    return -EINVAL;
}

/* "text" for a message: at most 200 characters, control characters escaped so it stays one line. */
static void quote(char *buf, size_t len, const char *s)
{
    size_t n = 0, i = 0;
    if (len < 8)
        return;
    buf[n++] = '"';
    for (; i < 200 && s[i] && n + 6 < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\n' || c == '\r' || c == '\t' || c == '"' || c == '\\') {
            buf[n++] = '\\';
            buf[n++] = c == '\n' ? 'n' : c == '\r' ? 'r' : c == '\t' ? 't' : (char)c;
        } else if (c < 0x20 || c == 0x7f) {
            n += (size_t)snprintf(buf + n, len - n, "\\x%02x", c);
        } else {
            buf[n++] = (char)c;
        }
    }
    if (s[i] && n + 4 < len) {
        memcpy(buf + n, "...", 3);
        n += 3;
    }
    buf[n++] = '"';
    buf[n] = '\0';
}

/* A JSON number as written in a message: the shortest form that reads back the same. */
static void format_number(char *buf, size_t len, double d)
{
    snprintf(buf, len, "%.15g", d);
    if (strtod(buf, NULL) != d)
        snprintf(buf, len, "%.17g", d);
}

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
        quote(q, sizeof(q), s);
        if (!label_ok(s, &kl)) {
            opt_error(P, sl->opt,
                      "%s is not k=v (k is a letter or _ then letters, digits or _; v is non-empty text "
                      "on one line)",
                      q);
            return -EINVAL;
        }
        for (size_t i = 0; i < l->n; i++) {
            if (strncmp(l->v[i], s, kl + 1) == 0) {
                opt_error(P, sl->opt, "%s repeats the key \"%.*s\"", q, (int)kl, s);
                return -EINVAL;
            }
        }
    }
    if (l->n >= RB_LIST_MAX) {
        opt_error(P, sl->opt, "more than %d values", RB_LIST_MAX);
        return -EINVAL;
    }
    l->v[l->n++] = s;
    return 0;
}

static int set_duration(struct parse *P, struct slot *sl, uint64_t ns, const char *shown_val)
{
    if (sl == P->interval && ns == 0) {
        opt_error(P, sl->opt, "%s must be greater than 0 (use e.g. 1s, 500ms)", shown_val);
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
    type_words(o->type, &noun, &hint);
    quote(q, sizeof(q), s);
    if (rc == -E2BIG) {
        opt_error(P, o, "%s has more than %d elements", shown(o, q), RB_LIST_MAX);
    } else {
        size_t len = bad ? strcspn(bad, ",") : 0;
        if (len == 0 || rb_cli_is_secret(o->name))
            opt_error(P, o, "%s has an empty or bad element (%s)", shown(o, q), hint);
        else
            opt_error(P, o, "%s: \"%.*s\" is not %s (%s)", q, (int)(len > 200 ? 200 : len), bad, noun,
                      hint);
    }
    return -EINVAL;
}

/*
 * Parses text s into sl's staged value. s must outlive the rb_cli for STR and
 * STRS (argv, or a copy owned by the rb_cli); other types copy what they need.
 * s is NULL only for a bare flag.
 */
static int apply_string(struct parse *P, struct slot *sl, const char *s)
{
    const struct rb_opt *o = sl->opt;
    char q[256];
    int rc = 0;

    if (s)
        quote(q, sizeof(q), s);
    switch (o->type) {
    case RB_OPT_FLAG:
        if (!s || strcmp(s, "true") == 0) {
            sl->val.b = true;
        } else if (strcmp(s, "false") == 0) {
            sl->val.b = false;
        } else {
            opt_error(P, o, "%s is not true or false (a flag takes no value; --%s=false turns it off)", q,
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
            return set_duration(P, sl, v, shown(o, q));
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
        int idx = choice_index(o->choices, s);
        if (idx < 0) {
            char list[512];
            choice_list(list, sizeof(list), o->choices);
            opt_error(P, o, "%s is not one of %s", shown(o, q), list);
            return -EINVAL;
        }
        sl->val.choice = idx;
        return 0;
    }
    }
    return rc ? bad_value(P, o, q, rc) : 0;
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
    opt_error(P, o, "expected %s, got %s", want, json_type_name(it));
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

    format_number(num, sizeof(num), d);
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
    return rc ? bad_value(P, o, num, rc) : 0;
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
            format_number(show, sizeof(show), e->valuedouble);
            rc = json_u64(e->valuedouble, &v);
        } else if (cJSON_IsString(e)) {
            quote(show, sizeof(show), e->valuestring);
            rc = parse(e->valuestring, &v);
        } else {
            return wrong_type(P, o, arr);
        }
        if (rc)
            return bad_value(P, o, show, rc);
        if (l.n >= RB_LIST_MAX) {
            opt_error(P, o, "more than %d elements", RB_LIST_MAX);
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
        opt_error(P, o, "the value is " REDACTED " (from a saved result); "
                        "give the real value or drop the key");
        return -EINVAL;
    }
    sl->src = SRC_CONFIG;
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
            return apply_string(P, sl, it->valuestring);
        if (cJSON_IsNumber(it)) {
            uint64_t v;
            char num[64];
            int rc = json_u64(it->valuedouble, &v);
            format_number(num, sizeof(num), it->valuedouble);
            if (rc)
                return bad_value(P, o, num, rc);
            sl->val.list.n = 1;
            sl->val.list.v[0] = v;
            return 0;
        }
        return wrong_type(P, o, it);
    case RB_OPT_CHOICE:
        if (!cJSON_IsString(it))
            return wrong_type(P, o, it);
        return apply_string(P, sl, it->valuestring);
    case RB_OPT_INT: case RB_OPT_U64: case RB_OPT_DOUBLE: case RB_OPT_PERCENT: case RB_OPT_SIZE:
    case RB_OPT_DURATION: case RB_OPT_RATE:
        if (cJSON_IsString(it))
            return apply_string(P, sl, it->valuestring); /* scalars copy what they need */
        if (cJSON_IsNumber(it))
            return apply_number(P, sl, it);
        return wrong_type(P, o, it);
    }
    return wrong_type(P, o, it);
}

/* Applies the options in a JSON object file; every failure is reported in one line. */
static int load_config(struct parse *P, const char *path)
{
    char *buf = NULL;
    size_t len;
    const char *end = NULL;
    int rc = rb_file_read(path, CONFIG_MAX_BYTES, &buf, &len);

    if (rc) {
        complain("config %s: cannot read: %s", path, strerror(-rc));
        return -EINVAL;
    }
    cJSON *root = cJSON_ParseWithOpts(buf, &end, 1);
    if (!root) {
        int line = 1;
        for (const char *p = buf; end && p < end && *p; p++)
            line += *p == '\n';
        complain("config %s: invalid JSON near line %d", path, line);
        free(buf);
        return -EINVAL;
    }
    free(buf);
    if (!cJSON_IsObject(root)) {
        complain("config %s: expected a JSON object of option names and values, got %s",
                path, json_type_name(root));
        cJSON_Delete(root);
        return -EINVAL;
    }
    P->config_path = path;
    const cJSON *it;
    cJSON_ArrayForEach(it, root)
    {
        /* "config" is in every saved config; feeding one back must not chain files. */
        if (strcmp(it->string, "config") == 0)
            continue;
        struct slot *sl = find_long(P, it->string, strlen(it->string));
        if (!sl) {
            char q[256];
            quote(q, sizeof(q), it->string);
            complain("config %s: unknown option %s", path, q);
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

/* ---- the command line ---- */

static bool is_cmd_word(const char *w, size_t len)
{
    if (len == 0 || !(w[0] >= 'a' && w[0] <= 'z'))
        return false;
    for (size_t i = 0; i < len; i++)
        if (!((w[i] >= 'a' && w[i] <= 'z') || (w[i] >= '0' && w[i] <= '9') || w[i] == '-'))
            return false;
    return true;
}

/* "railbench load get" from the usage line, or "railbench <argv0>". */
static void cmd_name(char *buf, size_t len, const struct rb_cmd_spec *spec, const char *argv0)
{
    const char *u = spec->usage;
    size_t n = 0;

    if (u && strncmp(u, "usage: ", 7) == 0)
        u += 7;
    if (u && strncmp(u, "railbench", 9) == 0 && (u[9] == ' ' || u[9] == '\0')) {
        const char *p = u;
        while (*p) {
            const char *w = p;
            while (*p && *p != ' ')
                p++;
            size_t wl = (size_t)(p - w);
            if (!is_cmd_word(w, wl) || n + wl + 2 > len)
                break;
            if (n)
                buf[n++] = ' ';
            memcpy(buf + n, w, wl);
            n += wl;
            while (*p == ' ')
                p++;
        }
        buf[n] = '\0';
        return;
    }
    snprintf(buf, len, "railbench %s", argv0 ? argv0 : "");
}

static bool wants_help(const struct parse *P, int argc, char **argv)
{
    bool h_free = find_short(P, 'h') == NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            break;
        if (strcmp(argv[i], "--help") == 0 || (h_free && strcmp(argv[i], "-h") == 0))
            return true;
    }
    return false;
}

static int missing_value(const struct parse *P, const struct rb_opt *o)
{
    const char *noun, *hint;
    type_words(o->type, &noun, &hint);
    if (*hint)
        opt_error(P, o, "missing value (%s; %s)", o->metavar ? o->metavar : noun, hint);
    else
        opt_error(P, o, "missing value (%s)", o->metavar ? o->metavar : noun);
    return -EINVAL;
}

/*
 * Splits argv into option occurrences and positional arguments without
 * parsing values. redact[i] is the offset in argv[i] from which a secret
 * value starts (SIZE_MAX: nothing to hide). Returns 0, RB_CLI_HELP or -EINVAL.
 */
static int tokenize(struct parse *P, int argc, char **argv, struct tok *toks, size_t *ntoks,
                    const char **args, int *nargs, size_t *redact)
{
    bool opts_done = false;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (opts_done || a[0] != '-' || a[1] == '\0') {
            args[(*nargs)++] = a;
            continue;
        }
        if (strcmp(a, "--") == 0) {
            opts_done = true;
            continue;
        }
        if (a[1] == '-') {
            const char *name = a + 2;
            const char *eq = strchr(name, '=');
            size_t nl = eq ? (size_t)(eq - name) : strlen(name);
            struct slot *sl = find_long(P, name, nl);
            const char *val = NULL;
            if (!sl) {
                if (nl == 4 && strncmp(name, "help", 4) == 0)
                    return RB_CLI_HELP;
                complain("unknown option --%.*s (see %s --help)",
                        (int)(nl > 200 ? 200 : nl), name, P->cmd);
                return -EINVAL;
            }
            bool secret = sl->opt->type != RB_OPT_FLAG && rb_cli_is_secret(sl->opt->name);
            if (eq) {
                val = eq + 1;
                if (secret)
                    redact[i] = (size_t)(val - a);
            } else if (sl->opt->type != RB_OPT_FLAG) {
                if (i + 1 >= argc)
                    return missing_value(P, sl->opt);
                val = argv[++i];
                if (secret)
                    redact[i] = 0;
            }
            toks[(*ntoks)++] = (struct tok){sl, val};
            continue;
        }
        /* Short options: "-b 4k", "-b4k", and bundled flags "-vq". */
        for (const char *p = a + 1; *p; p++) {
            struct slot *sl = find_short(P, *p);
            if (!sl) {
                if (*p == 'h')
                    return RB_CLI_HELP;
                complain("unknown option -%c (see %s --help)", *p, P->cmd);
                return -EINVAL;
            }
            if (sl->opt->type == RB_OPT_FLAG) {
                toks[(*ntoks)++] = (struct tok){sl, NULL};
                continue;
            }
            bool secret = rb_cli_is_secret(sl->opt->name);
            const char *val;
            if (p[1]) {
                val = p + 1;
                if (secret)
                    redact[i] = (size_t)(val - a);
            } else {
                if (i + 1 >= argc)
                    return missing_value(P, sl->opt);
                val = argv[++i];
                if (secret)
                    redact[i] = 0;
            }
            toks[(*ntoks)++] = (struct tok){sl, val};
            break;
        }
    }
    return 0;
}

static int check_nargs(const struct parse *P, const char **args, int nargs)
{
    const struct rb_cmd_spec *spec = P->spec;
    char usage[512] = "";

    /* "railbench: load get: ..." names the command without repeating the program. */
    const char *cmd = strncmp(P->cmd, "railbench ", 10) == 0 ? P->cmd + 10 : "";
    const char *sep = *cmd ? ": " : "";
    char q[256];

    if (spec->usage)
        snprintf(usage, sizeof(usage), "; usage: %s", spec->usage);
    if (nargs < spec->min_args) {
        complain("%s%smissing argument (expected at least %d, got %d%s)", cmd, sep,
                spec->min_args, nargs, usage);
        return -EINVAL;
    }
    if (spec->max_args >= 0 && nargs > spec->max_args) {
        quote(q, sizeof(q), args[spec->max_args]);
        complain("%s%sunexpected argument %s (expected at most %d%s)", cmd, sep, q,
                spec->max_args, usage);
        return -EINVAL;
    }
    return 0;
}

/* ---- the resolved config ---- */

static cJSON *json_u64_value(uint64_t v)
{
    char num[32];
    if ((double)v <= JSON_EXACT_MAX)
        return cJSON_CreateNumber((double)v);
    snprintf(num, sizeof(num), "%" PRIu64, v);
    return cJSON_CreateString(num);
}

static cJSON *json_i64_value(int64_t v)
{
    char num[32];
    if ((double)v <= JSON_EXACT_MAX && (double)v >= -JSON_EXACT_MAX)
        return cJSON_CreateNumber((double)v);
    snprintf(num, sizeof(num), "%" PRId64, v);
    return cJSON_CreateString(num);
}

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
        return json_i64_value(v->i);
    case RB_OPT_U64: case RB_OPT_SIZE:
        return json_u64_value(v->u);
    case RB_OPT_DOUBLE: case RB_OPT_PERCENT: case RB_OPT_RATE:
        return cJSON_CreateNumber(v->d);
    case RB_OPT_SIZES: case RB_OPT_U64S:
        if (!(a = cJSON_CreateArray()))
            return NULL;
        for (size_t i = 0; i < v->list.n; i++) {
            cJSON *e = json_u64_value(v->list.v[i]);
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
        if (!choice_at(o->choices, v->choice, &p, &len))
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

static cJSON *build_config(const struct parse *P)
{
    cJSON *obj = cJSON_CreateObject();
    if (!obj)
        return NULL;
    for (size_t i = 0; i < P->nslots; i++) {
        const struct slot *sl = &P->slots[i];
        /* A command option of the same name hides a common one. */
        if (find_long(P, sl->opt->name, strlen(sl->opt->name)) != sl)
            continue;
        cJSON *v = redact_value(sl) ? cJSON_CreateString(REDACTED) : value_json(sl);
        if (!v || !cJSON_AddItemToObject(obj, sl->opt->name, v)) {
            cJSON_Delete(v);
            cJSON_Delete(obj);
            return NULL;
        }
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
static void redact_userinfo(cJSON *item)
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
        redact_userinfo(child);
    }
}

static cJSON *build_argv(int argc, char **argv, const size_t *redact)
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

int rb_cli_parse(struct rb_cli *cli, const struct rb_cmd_spec *spec, int argc, char **argv)
{
    struct parse P;
    struct tok *toks = NULL;
    size_t ntoks = 0, *redact = NULL, nspec = 0, cap = 0;
    const char **args = NULL;
    int nargs = 0, rc;

    if (!cli)
        return -EINVAL;
    memset(cli, 0, sizeof(*cli));
    if (!spec || argc < 1 || !argv)
        return -EINVAL;
    cli->common.interval_ns = NS_PER_S;

    memset(&P, 0, sizeof(P));
    P.cli = cli;
    P.spec = spec;
    cmd_name(P.cmd, sizeof(P.cmd), spec, argv[0]);
    common_opts(P.copts, &cli->common);
    while (spec->opts && spec->opts[nspec].name)
        nspec++;
    P.nslots = nspec + NCOMMON;
    rc = -ENOMEM;
    P.slots = calloc(P.nslots, sizeof(*P.slots));
    if (!P.slots)
        goto out;
    for (size_t i = 0; i < P.nslots; i++) {
        P.slots[i].opt = i < nspec ? &spec->opts[i] : &P.copts[i - nspec];
        load_default(&P.slots[i]);
    }
    P.label = &P.slots[nspec + C_LABEL];
    P.interval = &P.slots[nspec + C_INTERVAL];
    P.config = &P.slots[nspec + C_CONFIG];

    /* --help wins over any mistake around it. */
    if (wants_help(&P, argc, argv)) {
        rb_cli_usage(spec);
        rc = RB_CLI_HELP;
        goto out;
    }

    for (int i = 0; i < argc; i++)
        cap += strlen(argv[i]) + 1; /* bundled short flags give at most one token per character */
    toks = calloc(cap, sizeof(*toks));
    redact = malloc((size_t)argc * sizeof(*redact));
    args = calloc((size_t)argc + 1, sizeof(*args));
    if (!toks || !redact || !args)
        goto out;
    if ((rc = own(cli, (void *)args)) != 0) {
        args = NULL; /* freed by own() */
        goto out;
    }
    for (int i = 0; i < argc; i++)
        redact[i] = SIZE_MAX;

    rc = tokenize(&P, argc, argv, toks, &ntoks, args, &nargs, redact);
    if (rc == RB_CLI_HELP)
        rb_cli_usage(spec);
    if (rc)
        goto out;
    if ((rc = check_nargs(&P, args, nargs)) != 0)
        goto out;

    /* The config file first (the last --config given), then the command line over it. */
    const char *config_path = NULL;
    for (size_t t = 0; t < ntoks; t++)
        if (toks[t].sl == P.config)
            config_path = toks[t].val;
    if (config_path && (rc = load_config(&P, config_path)) != 0)
        goto out;
    for (size_t t = 0; t < ntoks; t++) {
        struct slot *sl = toks[t].sl;
        if (sl->opt->type == RB_OPT_STRS && sl->src != SRC_CLI)
            sl->val.strs.n = 0; /* command-line occurrences replace the config's or default list */
        sl->src = SRC_CLI;
        if ((rc = apply_string(&P, sl, toks[t].val)) != 0)
            goto out;
    }

    rc = -ENOMEM;
    cli->config = build_config(&P);
    cli->argv_json = build_argv(argc, argv, redact);
    redact_userinfo(cli->config);
    redact_userinfo(cli->argv_json);
    if (!cli->config || !cli->argv_json)
        goto out;
    for (size_t i = 0; i < P.nslots; i++)
        commit(&P.slots[i]);
    cli->nargs = nargs;
    cli->args = args;
    rc = 0;
out:
    free(P.slots);
    free(toks);
    free(redact);
    if (rc != 0)
        rb_cli_free(cli);
    return rc;
}

/* ---- --help ---- */

/* Exact size for --help: the largest binary or decimal unit that divides it ("4KiB", "4KB"). */
static void format_size_exact(char *buf, size_t len, uint64_t b)
{
    static const char *const bin[] = {"KiB", "MiB", "GiB", "TiB"};
    static const char *const dec[] = {"KB", "MB", "GB", "TB"};
    for (int i = 3; i >= 0 && b > 0; i--) {
        uint64_t m = (uint64_t)1 << (10 * (i + 1));
        if (b % m == 0) {
            snprintf(buf, len, "%" PRIu64 "%s", b / m, bin[i]);
            return;
        }
    }
    for (int i = 3; i >= 0 && b > 0; i--) {
        uint64_t m = 1000;
        for (int k = 0; k < i; k++)
            m *= 1000;
        if (b % m == 0) {
            snprintf(buf, len, "%" PRIu64 "%s", b / m, dec[i]);
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
        if (!choice_at(o->choices, v->choice, &p, &cl))
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
    bool has_def = format_default(def, sizeof(def), sl);
    if (o->type == RB_OPT_CHOICE && o->choices && o->metavar && strcmp(o->metavar, o->choices) != 0) {
        char list[512];
        choice_list(list, sizeof(list), o->choices);
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
    common_opts(copts, &defaults);
    for (const struct rb_opt *o = spec->opts; o && o->name; o++) {
        left_column(left, sizeof(left), o);
        if ((int)strlen(left) > width && strlen(left) <= HELP_COL_MAX)
            width = (int)strlen(left);
    }
    for (int i = 0; i < NCOMMON; i++) {
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
            load_default(&sl);
            print_opt(&sl, width);
        }
    }
    printf("\ncommon options:\n");
    for (int i = 0; i < NCOMMON; i++) {
        /* A command option of the same name replaces the common one (report's -o, --out FILE). */
        bool shadowed = false;
        for (const struct rb_opt *o = spec->opts; o && o->name && !shadowed; o++)
            shadowed = strcmp(o->name, copts[i].name) == 0;
        if (shadowed)
            continue;
        sl.opt = &copts[i];
        load_default(&sl);
        print_opt(&sl, width);
    }
    printf("%-*s  %s\n", width, help_left, "show this help and exit");
    printf("\nSizes: 4096 (bytes), 4k = 4KiB = 4096, 4KB = 4000. Durations: 500us, 1.5s, 2m, 1h; "
           "a plain number is seconds.\n");
    fflush(stdout);
}

int rb_cli_parse_cmd(struct rb_cli *cli, const struct rb_cmd_spec *spec, int argc, char **argv)
{
    int rc = rb_cli_parse(cli, spec, argc, argv);
    if (rc == 0)
        return 0;
    rb_cli_free(cli);
    return rc == RB_CLI_HELP ? RB_EXIT_OK : RB_EXIT_USAGE;
}
