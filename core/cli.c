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

#include "cli_int.h"

static const struct rb_opt common_tmpl[NCOMMON] = {
    [C_OUT] = {"out", 0, RB_OPT_STR, NULL, "DIR",
               "write results under DIR, a new or empty directory (default: railbench-results/<UTC time>-<command>)",
               NULL},
    [C_FORCE] = {"force", 0, RB_OPT_FLAG, NULL, NULL,
                 "let --out name a directory that holds an earlier result: railbench's files in it are removed "
                 "first; anything else there refuses the run", NULL},
    [C_INTERVAL] = {"interval", 0, RB_OPT_DURATION, NULL, "DURATION",
                    "interval of live statistics and time series", NULL},
    [C_LABEL] = {"label", 0, RB_OPT_STRS, NULL, "K=V",
                 "add a label to results and metrics; repeatable", NULL},
    [C_CONFIG] = {"config", 0, RB_OPT_STR, NULL, "FILE.json",
                  "read options from a JSON object keyed by long option names; the command line wins",
                  NULL},
    [C_QUIET] = {"quiet", 0, RB_OPT_FLAG, NULL, NULL,
                 "stderr: only warnings, errors and a failed run's outcome (the table still goes to stdout)", NULL},
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
void cli_common_opts(struct rb_opt out[NCOMMON], struct rb_common *c)
{
    memcpy(out, common_tmpl, sizeof(common_tmpl));
    out[C_OUT].dest = &c->out_dir;
    out[C_FORCE].dest = &c->force;
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
int cli_own(struct rb_cli *cli, void *p)
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

bool rb_cli_given(const struct rb_cli *cli, const char *option)
{
    size_t n = strlen(option);
    const cJSON *arg;
    cJSON_ArrayForEach(arg, cli->argv_json)
        if (cJSON_IsString(arg) && strncmp(arg->valuestring, option, n) == 0 &&
            (arg->valuestring[n] == '\0' || arg->valuestring[n] == '='))
            return true;
    return false;
}

const char *rb_cli_strdup(struct rb_cli *cli, const char *s)
{
    if (!cli || !s)
        return NULL;
    char *d = strdup(s);
    if (cli_own(cli, d) != 0)
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
bool cli_choice_at(const char *choices, int idx, const char **p, size_t *len)
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

int cli_choice_index(const char *choices, const char *s)
{
    const char *p;
    size_t len;
    for (int i = 0; cli_choice_at(choices, i, &p, &len); i++)
        if (strlen(s) == len && strncmp(p, s, len) == 0)
            return i;
    return -1;
}

/* "a, b, c" from "a|b|c". */
void cli_choice_list(char *buf, size_t len, const char *choices)
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

void cli_load_default(struct slot *sl)
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

struct slot *cli_find_long(const struct parse *P, const char *name, size_t len)
{
    for (size_t i = 0; i < P->nslots; i++) {
        const char *n = P->slots[i].opt->name;
        if (strlen(n) == len && strncmp(n, name, len) == 0)
            return &P->slots[i];
    }
    return NULL;
}

bool cli_common_taken(const struct rb_cmd_spec *spec, int c)
{
    return !spec->reads_results || c == C_CONFIG || c == C_QUIET;
}

/* Optimal string alignment distance (Levenshtein plus transpositions) of a[0..al) and b, capped at 9. */
static size_t edit_distance(const char *a, size_t al, const char *b)
{
    size_t bl = strlen(b);
    if (al > 40 || bl > 40)
        return 9;
    size_t d[41][41];
    for (size_t i = 0; i <= al; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= bl; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= al; i++)
        for (size_t j = 1; j <= bl; j++) {
            size_t cost = a[i - 1] != b[j - 1], best = d[i - 1][j - 1] + cost;
            if (d[i - 1][j] + 1 < best)
                best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[al][bl];
}

/* Keeps n in *best when it is a closer typo of name[0..len) than *best (distance *best_d). */
static void closer(const char *name, size_t len, const char *n, const char **best, size_t *best_d)
{
    size_t d = edit_distance(name, len, n);
    if (d <= *best_d && (!*best || d < *best_d)) {
        *best = n;
        *best_d = d;
    }
}

const char *cli_suggest(const struct parse *P, const char *name, size_t len)
{
    const char *best = NULL;
    size_t best_d = len < 5 ? 1 : 2; /* a typo, not another word */
    for (size_t i = 0; i < P->nslots; i++)
        closer(name, len, P->slots[i].opt->name, &best, &best_d);
    return best;
}

const char *rb_cli_suggest_word(const char *word, const char *const *names, size_t stride_bytes)
{
    const char *best = NULL;
    size_t len = strlen(word), best_d = len < 5 ? 1 : 2;
    for (const char *const *n = names; *n; n = (const char *const *)((const char *)n + stride_bytes))
        closer(word, len, *n, &best, &best_d);
    return best;
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
    fprintf(stderr, "railbench: error: %s\n", msg);
}

void cli_complain(const char *fmt, ...)
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
void cli_opt_error(const struct parse *P, const struct rb_opt *o, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (P->config_path)
        cli_complain("config %s: %s: %s", P->config_path, o->name, msg);
    else
        cli_complain("--%s: %s", o->name, msg);
}

/* What a value of type t is called and how to write one. */
void cli_type_words(enum rb_opt_type t, const char **noun, const char **hint)
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
const char *cli_shown(const struct rb_opt *o, const char *quoted)
{
    return rb_cli_is_secret(o->name) ? "***" : quoted;
}

/* Reports that shown_val (already quoted if text) failed with rc; returns -EINVAL. */
int cli_bad_value(const struct parse *P, const struct rb_opt *o, const char *shown_val, int rc)
{
    const char *noun, *hint;
    cli_type_words(o->type, &noun, &hint);
    if (rc == -ERANGE)
        cli_opt_error(P, o, "%s is out of range for %s (%s)", cli_shown(o, shown_val), noun, hint);
    else
        cli_opt_error(P, o, "%s is not %s (%s)", cli_shown(o, shown_val), noun, hint);
    return -EINVAL;
}

/* "text" for a message: at most 200 characters, control characters escaped so it stays one line. */
void cli_quote(char *buf, size_t len, const char *s)
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
void cli_format_number(char *buf, size_t len, double d)
{
    snprintf(buf, len, "%.15g", d);
    if (strtod(buf, NULL) != d)
        snprintf(buf, len, "%.17g", d);
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
    cli_type_words(o->type, &noun, &hint);
    if (*hint)
        cli_opt_error(P, o, "missing value (%s; %s)", o->metavar ? o->metavar : noun, hint);
    else
        cli_opt_error(P, o, "missing value (%s)", o->metavar ? o->metavar : noun);
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
            struct slot *sl = cli_find_long(P, name, nl);
            const char *val = NULL;
            if (!sl) {
                if (nl == 4 && strncmp(name, "help", 4) == 0)
                    return RB_CLI_HELP;
                char shown_name[256], q[300];
                snprintf(shown_name, sizeof shown_name, "%.*s", (int)(nl > 200 ? 200 : nl), name);
                cli_quote(q, sizeof q, shown_name); /* control characters escaped, never printed raw */
                q[strlen(q) - 1] = '\0';            /* without the closing quote */
                const char *near = cli_suggest(P, name, nl);
                if (near)
                    cli_complain("unknown option --%s; did you mean --%s? (see %s --help)", q + 1, near, P->cmd);
                else
                    cli_complain("unknown option --%s (see %s --help)", q + 1, P->cmd);
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
                cli_complain("unknown option -%c (see %s --help)", *p, P->cmd);
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
        cli_complain("%s%smissing argument (expected at least %d, got %d%s)", cmd, sep,
                spec->min_args, nargs, usage);
        return -EINVAL;
    }
    if (spec->max_args >= 0 && nargs > spec->max_args) {
        cli_quote(q, sizeof(q), args[spec->max_args]);
        cli_complain("%s%sunexpected argument %s (expected at most %d%s)", cmd, sep, q,
                spec->max_args, usage);
        return -EINVAL;
    }
    return 0;
}

/* One slot per option of the command, then per common option it takes, each holding its default. -ENOMEM or 0. */
static int make_slots(struct parse *P)
{
    const struct rb_cmd_spec *spec = P->spec;
    size_t nspec = 0;
    cli_common_opts(P->copts, &P->cli->common);
    while (spec->opts && spec->opts[nspec].name)
        nspec++;
    P->slots = calloc(nspec + NCOMMON, sizeof(*P->slots));
    if (!P->slots)
        return -ENOMEM;
    for (size_t i = 0; i < nspec; i++)
        P->slots[P->nslots++].opt = &spec->opts[i];
    for (int c = 0; c < NCOMMON; c++) {
        if (!cli_common_taken(spec, c))
            continue;
        struct slot *sl = &P->slots[P->nslots++];
        sl->opt = &P->copts[c];
        P->label = c == C_LABEL ? sl : P->label;
        P->interval = c == C_INTERVAL ? sl : P->interval;
        P->config = c == C_CONFIG ? sl : P->config;
    }
    for (size_t i = 0; i < P->nslots; i++)
        cli_load_default(&P->slots[i]);
    return 0;
}

int rb_cli_parse(struct rb_cli *cli, const struct rb_cmd_spec *spec, int argc, char **argv)
{
    struct parse P;
    struct tok *toks = NULL;
    size_t ntoks = 0, *redact = NULL, cap = 0;
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
    rc = -ENOMEM;
    if (make_slots(&P) != 0)
        goto out;

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
    if ((rc = cli_own(cli, (void *)args)) != 0) {
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

    /* The config file first (the last --config given), then the command line over it. */
    const char *config_path = NULL;
    for (size_t t = 0; t < ntoks; t++)
        if (toks[t].sl == P.config)
            config_path = toks[t].val;
    if (config_path && (rc = cli_load_config(&P, config_path)) != 0)
        goto out;
    if (nargs == 0 && P.config_nargs > 0) { /* the config's positional arguments, when none are given */
        args = P.config_args;
        nargs = P.config_nargs;
    }
    if ((rc = check_nargs(&P, args, nargs)) != 0)
        goto out;
    for (size_t t = 0; t < ntoks; t++) {
        struct slot *sl = toks[t].sl;
        if (sl->opt->type == RB_OPT_STRS && sl->src != SRC_CLI)
            sl->val.strs.n = 0; /* command-line occurrences replace the config's or default list */
        sl->src = SRC_CLI;
        if ((rc = cli_apply_string(&P, sl, toks[t].val)) != 0)
            goto out;
    }

    rc = -ENOMEM;
    cli->config = cli_build_config(&P, args, nargs);
    cli->argv_json = cli_build_argv(argc, argv, redact);
    cli_redact_userinfo(cli->config);
    cli_redact_userinfo(cli->argv_json);
    if (!cli->config || !cli->argv_json)
        goto out;
    for (size_t i = 0; i < P.nslots; i++)
        commit(&P.slots[i]);
    cli->nargs = nargs;
    cli->args = args;
    rc = 0;
    /*
     * RAILBENCH_PARSE_ONLY=1: print the resolved config and stop as after --help, running nothing. The doc
     * test parses the examples that need a cluster this way (every option exists, every value parses).
     */
    const char *parse_only = getenv("RAILBENCH_PARSE_ONLY");
    if (parse_only && *parse_only && strcmp(parse_only, "0") != 0) {
        char *text = cJSON_PrintUnformatted(cli->config);
        printf("%s\n", text ? text : "null");
        free(text);
        fflush(stdout);
        rc = RB_CLI_HELP;
    }
out:
    free(P.slots);
    free(toks);
    free(redact);
    if (rc != 0)
        rb_cli_free(cli);
    return rc;
}

bool rb_cli_help_json(void)
{
    const char *v = getenv("RAILBENCH_HELP");
    return v && strcmp(v, "json") == 0;
}

bool rb_cli_parse_cmd(struct rb_cli *cli, const struct rb_cmd_spec *spec, int argc, char **argv, int *status)
{
    int rc = rb_cli_parse(cli, spec, argc, argv);
    *status = rc == 0 || rc == RB_CLI_HELP ? RB_EXIT_OK : RB_EXIT_USAGE;
    if (rc == 0)
        return true;
    rb_cli_free(cli);
    return false;
}
