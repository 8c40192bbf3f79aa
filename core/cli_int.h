/* Internals of the command-line parser shared by core/cli.c, cli_apply.c and cli_show.c. */
#ifndef RB_CLI_INT_H
#define RB_CLI_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "railbench/cli.h"

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

enum { C_OUT, C_FORCE, C_INTERVAL, C_LABEL, C_CONFIG, C_QUIET, C_PROM, C_PROM_RANK, C_PROM_TEXT, C_PUSH, C_LINGER, NCOMMON };

struct parse {
    struct rb_cli *cli;
    const struct rb_cmd_spec *spec;
    char cmd[128];               /* "railbench load get", for messages */
    struct rb_opt copts[NCOMMON];
    struct slot *slots;          /* the command's options, then the common ones */
    size_t nslots;
    struct slot *label, *interval, *config;
    const char *config_path;     /* set while applying a config file, for messages */
    const char **config_args;    /* positional arguments a config file gave ("args"), owned by the cli */
    int config_nargs;
};

void cli_common_opts(struct rb_opt out[NCOMMON], struct rb_common *c);
bool cli_choice_at(const char *choices, int idx, const char **p, size_t *len);
void cli_choice_list(char *buf, size_t len, const char *choices);
int cli_choice_index(const char *choices, const char *s);
void cli_load_default(struct slot *sl);
struct slot *cli_find_long(const struct parse *P, const char *name, size_t len);
void cli_complain(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_opt_error(const struct parse *P, const struct rb_opt *o, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void cli_type_words(enum rb_opt_type t, const char **noun, const char **hint);
const char *cli_shown(const struct rb_opt *o, const char *quoted);
void cli_quote(char *buf, size_t len, const char *s);
int cli_bad_value(const struct parse *P, const struct rb_opt *o, const char *shown_val, int rc);
void cli_format_number(char *buf, size_t len, double d);
int cli_apply_string(struct parse *P, struct slot *sl, const char *s);
int cli_load_config(struct parse *P, const char *path);
cJSON *cli_build_argv(int argc, char **argv, const size_t *redact);
/* The resolved options and positional arguments ("args") as JSON, secrets redacted; NULL on ENOMEM. */
cJSON *cli_build_config(const struct parse *P, const char *const *args, int nargs);
/* Takes ownership of p (freed by rb_cli_free); on failure frees p and returns -ENOMEM. */
int cli_own(struct rb_cli *cli, void *p);
/* Whether spec takes the common option c (C_OUT ...): a command that reads results takes only --config and --quiet. */
bool cli_common_taken(const struct rb_cmd_spec *spec, int c);
void cli_redact_userinfo(cJSON *item);
/* The option name closest to name[0..len) within a typo's distance, or NULL: for "did you mean". */
const char *cli_suggest(const struct parse *P, const char *name, size_t len);

#endif
