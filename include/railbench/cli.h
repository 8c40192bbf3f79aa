/* Command-line and --config parsing shared by every command. */
#ifndef RB_CLI_H
#define RB_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#define RB_LIST_MAX 64

/* Exit statuses (README.md, "Exit status"): 1 a check the user asked for failed, 2 usage, 3 runtime. */
enum { RB_EXIT_OK = 0, RB_EXIT_CHECK = 1, RB_EXIT_USAGE = 2, RB_EXIT_RUNTIME = 3 };

/* A list of numbers ("4k,8k", "1,2,4"). */
struct rb_u64s {
    size_t n;
    uint64_t v[RB_LIST_MAX];
};

/* A repeatable string option (--label, --endpoint). Strings are owned by the rb_cli. */
struct rb_strs {
    size_t n;
    const char *v[RB_LIST_MAX];
};

enum rb_opt_type {
    RB_OPT_FLAG,     /* bool *; no value on the command line, true/false in --config */
    RB_OPT_STR,      /* const char ** */
    RB_OPT_STRS,     /* struct rb_strs *; repeatable */
    RB_OPT_INT,      /* int64_t * */
    RB_OPT_U64,      /* uint64_t * */
    RB_OPT_DOUBLE,   /* double * */
    RB_OPT_PERCENT,  /* double * in percent, "90" or "90%" */
    RB_OPT_SIZE,     /* uint64_t * bytes */
    RB_OPT_SIZES,    /* struct rb_u64s * of byte sizes */
    RB_OPT_U64S,     /* struct rb_u64s * of whole numbers */
    RB_OPT_DURATION, /* uint64_t * nanoseconds */
    RB_OPT_RATE,     /* double * per second */
    RB_OPT_CHOICE,   /* int * index into choices "a|b|c" */
};

/*
 * A help text that ends with "(if not given: WHAT)" describes a default
 * worked out at run time (from the environment, another option, a preset);
 * *dest then holds only a sentinel, and --help does not show it as a default.
 */
#define RB_CLI_IF_NOT_GIVEN "(if not given: "

/*
 * One option. The value already in *dest before parsing is its default,
 * which --help shows as "(default: X)" in a form that parses back to it.
 */
struct rb_opt {
    const char *name;    /* long name without "--"; also the --config key */
    char short_name;     /* 0 for none; e.g. 'b' for nccl-tests' -b */
    enum rb_opt_type type;
    void *dest;
    const char *metavar; /* shown in --help, e.g. "SIZE" */
    const char *help;
    const char *choices; /* RB_OPT_CHOICE: "random|sequential|epoch"; RB_OPT_STR: the words of a comma-separated
                          * list (man page and completion only; the command checks the list) */
};

/* Rows a composed option table holds at most (see rb_opts_add). */
#define RB_OPTS_MAX 96

/*
 * An option table composed from named groups (common to a family of
 * commands, a protocol's, the engine's, the command's own), in the order
 * added; v is always a table ending with {0}, ready for rb_cmd_spec.opts.
 * Start from {0}.
 */
struct rb_opts {
    size_t n;
    struct rb_opt v[RB_OPTS_MAX + 1];
};

/*
 * Appends the rows of group (a table ending with {0}) to t. A name or short
 * name already in t, or more than RB_OPTS_MAX rows, is a programming error:
 * one line on stderr and abort(). Not thread-safe for one t.
 */
void rb_opts_add(struct rb_opts *t, const struct rb_opt *group);

/* A command's interface: usage line, one-line summary, options (ending with {0}), positional count. */
struct rb_cmd_spec {
    const char *usage;   /* "railbench load get [options] URL" */
    const char *summary;
    const struct rb_opt *opts;
    int min_args, max_args; /* positional arguments; max_args < 0 means unlimited */
    bool reads_results;     /* reads results instead of making a run: of the common options only --config, --quiet */
};

/* Options every command takes (docs/options.md, "Common options"). */
struct rb_common {
    const char *out_dir;     /* --out; NULL means railbench-results/<UTC time>-<command> */
    bool force;              /* --force: --out may name a directory that holds a result; it is cleared first */
    uint64_t interval_ns;    /* --interval, default 1s */
    struct rb_strs labels;   /* --label k=v, validated: k is [A-Za-z_][A-Za-z0-9_]* */
    const char *config_path; /* --config */
    bool quiet;              /* --quiet */
    const char *prom_listen; /* --prom-listen [ADDR:]PORT; NULL: no exporter */
    uint64_t prom_per_rank_port; /* --prom-per-rank BASEPORT; 0: off */
    const char *prom_textfile;   /* --prom-textfile DIR */
    const char *pushgateway;     /* --pushgateway URL */
    uint64_t prom_linger_ns;     /* --prom-linger: keep /metrics up after the run */
};

struct rb_cli {
    struct rb_common common;
    int nargs;
    const char **args;   /* positional arguments (owned) */
    cJSON *config;       /* every option's resolved value, secrets redacted (owned) */
    cJSON *argv_json;    /* the command line as given, secrets redacted (owned) */
    /* internal */
    char **owned;
    size_t nowned, capowned;
};

#define RB_CLI_HELP 1

/*
 * Parses argv (argv[0] is the command word, e.g. "get") against spec plus
 * the common options. Values from --config FILE.json are applied first, then
 * the command line, which wins. Returns 0; RB_CLI_HELP after printing --help
 * to stdout; or -EINVAL after printing one line naming the option, the value
 * and the accepted form (the caller exits 2). Free with rb_cli_free.
 */
int rb_cli_parse(struct rb_cli *cli, const struct rb_cmd_spec *spec, int argc, char **argv);

/*
 * rb_cli_parse for a command's entry point. Returns true when the command
 * should run (free cli with rb_cli_free later). Returns false when it should
 * not, with *status the exit status to return now: RB_EXIT_OK after --help,
 * RB_EXIT_USAGE after the one-line error; cli is already freed then.
 */
bool rb_cli_parse_cmd(struct rb_cli *cli, const struct rb_cmd_spec *spec, int argc, char **argv, int *status);

/*
 * Prints "railbench: error: MESSAGE" to stderr on the first rank only (see
 * rb_cli_first_rank) and returns RB_EXIT_USAGE: the one usage-error path of
 * every command. Thread-safe.
 */
int rb_cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * The name a mistyped word most likely meant (at most 1 edit for words under
 * 5 characters, 2 above; transpositions count 1), or NULL. names points at
 * the first name of a table whose entries are stride_bytes apart and which
 * ends with a NULL name (a {name, ...} struct array). Pure.
 */
const char *rb_cli_suggest_word(const char *word, const char *const *names, size_t stride_bytes);

/*
 * False in every rank but rank 0 of an mpirun or srun launch, true otherwise;
 * read from the launcher's environment, so it works before MPI starts.
 */
bool rb_cli_first_rank(void);

/* Releases what rb_cli_parse allocated; NULL-safe, idempotent. */
void rb_cli_free(struct rb_cli *cli);

/* Prints the --help text of spec to stdout (as one JSON object when rb_cli_help_json()). */
void rb_cli_usage(const struct rb_cmd_spec *spec);

/*
 * True when RAILBENCH_HELP=json: --help prints JSON (options with their defaults, a group's commands)
 * for the generators of man pages and completion. Not for users; see docs/HACKING.md.
 */
bool rb_cli_help_json(void);

/* True when an option of this name carries a secret (contains key, secret, token or password). */
bool rb_cli_is_secret(const char *name);

/*
 * Copies s to out with any user:password@ of a URL ("http://u:p@host/x")
 * replaced by "***@", for messages, logs and records. Other text is copied as is.
 */
void rb_cli_redact_url(char *out, size_t len, const char *s);

/* Keeps s alive until rb_cli_free; returns the copy or NULL when out of memory. */
const char *rb_cli_strdup(struct rb_cli *cli, const char *s);

/*
 * Whether the command line (not --config) names option, as "--NAME VALUE"
 * or "--NAME=VALUE" (option with its dashes: "--inflight"), so a default
 * can be told apart from the same value given. Pure.
 */
bool rb_cli_given(const struct rb_cli *cli, const char *option);

#endif
