/* Unit tests for core/cli.c: options, --config merging, the resolved config, redaction and --help. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "railbench/cli.h"
#include "railbench/command.h"

#define NS_PER_S 1000000000ull

/* Every option type, with defaults a test can tell apart from parsed values. */
struct fx {
    uint64_t bs;
    int64_t offset;
    uint64_t count;
    double ratio;
    double pct;
    struct rb_u64s sizes;
    struct rb_u64s threads;
    uint64_t duration;
    double rate;
    int order;
    bool verify;
    bool direct;
    const char *name;
    struct rb_strs endpoints;
    const char *secret_key;
    const char *api_token;
    struct rb_opt opts[20];
    struct rb_cmd_spec spec;
};

static void fx_init(struct fx *f)
{
    memset(f, 0, sizeof(*f));
    f->bs = 4096;
    f->offset = -1;
    f->count = UINT64_MAX;
    f->ratio = 0.5;
    f->pct = 90;
    f->sizes.n = 2;
    f->sizes.v[0] = 4096;
    f->sizes.v[1] = 1 << 20;
    f->threads.n = 1;
    f->threads.v[0] = 1;
    f->duration = 10 * NS_PER_S;
    f->rate = 0;
    f->order = 0;
    f->direct = true;
    f->name = "bench";
    f->endpoints.n = 1;
    f->endpoints.v[0] = "http://default";
    const struct rb_opt o[] = {
        {"bs", 'b', RB_OPT_SIZE, &f->bs, "SIZE", "block size", NULL},
        {"offset", 0, RB_OPT_INT, &f->offset, "N", "offset", NULL},
        {"count", 'n', RB_OPT_U64, &f->count, "N", "requests", NULL},
        {"ratio", 0, RB_OPT_DOUBLE, &f->ratio, "X", "read ratio", NULL},
        {"pct", 0, RB_OPT_PERCENT, &f->pct, "PCT", "target utilisation", NULL},
        {"sizes", 's', RB_OPT_SIZES, &f->sizes, "SIZE,...", "object sizes", NULL},
        {"threads", 't', RB_OPT_U64S, &f->threads, "N,...", "threads", NULL},
        {"duration", 'd', RB_OPT_DURATION, &f->duration, "DURATION", "how long", NULL},
        {"rate", 0, RB_OPT_RATE, &f->rate, "RATE", "open-loop rate", NULL},
        {"order", 0, RB_OPT_CHOICE, &f->order, NULL, "read order", "random|sequential|epoch"},
        {"verify", 'V', RB_OPT_FLAG, &f->verify, NULL, "check bodies", NULL},
        {"direct", 0, RB_OPT_FLAG, &f->direct, NULL, "bypass the cache", NULL},
        {"name", 0, RB_OPT_STR, &f->name, "NAME", "run name", NULL},
        {"endpoint", 'e', RB_OPT_STRS, &f->endpoints, "URL", "endpoint; repeatable", NULL},
        {"secret-key", 'k', RB_OPT_STR, &f->secret_key, "KEY", "secret key", NULL},
        {"api-token", 0, RB_OPT_STR, &f->api_token, "TOKEN", "token", NULL},
        {0},
    };
    memcpy(f->opts, o, sizeof(o));
    f->spec = (struct rb_cmd_spec){"railbench load get [options] URL", "Read objects.", f->opts, 1, 1, false};
}

/* A copy of the values only, to compare "unchanged". */
static void fx_snapshot(const struct fx *f, struct fx *copy)
{
    memcpy(copy, f, offsetof(struct fx, opts));
}

static void assert_fx_unchanged(const struct fx *f, const struct fx *copy)
{
    assert_memory_equal(f, copy, offsetof(struct fx, opts));
}

#define ARGV(...) ((char *[]){__VA_ARGS__, NULL})
#define ARGC(...) ((int)(sizeof((char *[]){__VA_ARGS__}) / sizeof(char *)))
#define PARSE(cli, f, ...) rb_cli_parse((cli), &(f)->spec, ARGC(__VA_ARGS__), ARGV(__VA_ARGS__))

/* ---- capturing stdout/stderr ---- */

struct capture {
    int fd, saved;
    FILE *tmp;
};

static void capture_start(struct capture *c, int fd)
{
    fflush(stdout);
    fflush(stderr);
    c->fd = fd;
    c->tmp = tmpfile();
    assert_non_null(c->tmp);
    c->saved = dup(fd);
    assert_true(c->saved >= 0);
    assert_true(dup2(fileno(c->tmp), fd) >= 0);
}

/* Restores fd and returns what was written (caller frees). */
static char *capture_stop(struct capture *c)
{
    fflush(stdout);
    fflush(stderr);
    dup2(c->saved, c->fd);
    close(c->saved);
    fseek(c->tmp, 0, SEEK_END);
    long len = ftell(c->tmp);
    rewind(c->tmp);
    char *buf = calloc(1, (size_t)len + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)len, c->tmp), (size_t)len);
    fclose(c->tmp);
    return buf;
}

/* Parses argv expecting failure: -EINVAL, one stderr line containing want, every value unchanged. */
static void expect_error(struct fx *f, const char *want, int argc, char **argv)
{
    struct rb_cli cli;
    struct capture c;
    struct fx before;
    fx_snapshot(f, &before);
    capture_start(&c, STDERR_FILENO);
    int rc = rb_cli_parse(&cli, &f->spec, argc, argv);
    char *err = capture_stop(&c);
    if (rc != -EINVAL || !strstr(err, want))
        fail_msg("rc %d, stderr \"%s\", wanted -EINVAL and \"%s\"", rc, err, want);
    const char *nl = strchr(err, '\n');
    assert_non_null(nl);
    assert_string_equal(nl + 1, ""); /* exactly one line */
    assert_true(strncmp(err, "railbench: error: ", 18) == 0);
    assert_fx_unchanged(f, &before);
    /* A failed parse leaves nothing to free, and freeing is still fine. */
    assert_null(cli.config);
    assert_null(cli.owned);
    rb_cli_free(&cli);
    free(err);
}
#define EXPECT_ERROR(f, want, ...) expect_error((f), (want), ARGC(__VA_ARGS__), ARGV(__VA_ARGS__))

/* Writes text to a new temporary file; path must hold 32 bytes. */
static void write_config(char *path, const char *text)
{
    strcpy(path, "/tmp/rb_test_cli_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    size_t len = strlen(text);
    assert_int_equal(write(fd, text, len), (ssize_t)len);
    close(fd);
}

/* A config file's text and the error it must give. */
struct config_case {
    const char *json, *want;
};

/* A config file holding json makes the parse fail with "config PATH: want" and nothing changed. */
static void expect_config_error(const char *json, const char *want)
{
    struct fx f;
    char path[32], line[512];
    write_config(path, json);
    snprintf(line, sizeof(line), "railbench: error: config %s: %s", path, want);
    fx_init(&f);
    EXPECT_ERROR(&f, line, "get", "--config", path, "u");
    unlink(path);
}

/* ---- tests ---- */

static void test_defaults_retained(void **state)
{
    (void)state;
    struct fx f, before;
    struct rb_cli cli;
    fx_init(&f);
    fx_snapshot(&f, &before);
    assert_int_equal(PARSE(&cli, &f, "get", "http://h/o"), 0);
    assert_fx_unchanged(&f, &before);
    assert_int_equal(cli.nargs, 1);
    assert_string_equal(cli.args[0], "http://h/o");
    assert_null(cli.common.out_dir);
    assert_int_equal(cli.common.interval_ns, NS_PER_S);
    assert_int_equal(cli.common.labels.n, 0);
    assert_null(cli.common.config_path);
    assert_false(cli.common.quiet);
    rb_cli_free(&cli);
    rb_cli_free(&cli); /* idempotent */
    rb_cli_free(NULL);
}

static void test_long_short_forms(void **state)
{
    (void)state;
    struct fx f;
    struct rb_cli cli;
    fx_init(&f);
    assert_int_equal(PARSE(&cli, &f, "get", "--bs", "8k", "-n", "5", "--offset=-3", "--ratio", "0.25",
                           "--pct=75%", "-t1,2,4", "-d", "1.5s", "--rate", "60/m", "--name=run1", "u",
                           "--out", "/tmp/x", "--interval=250ms", "--quiet"),
                     0);
    assert_int_equal(f.bs, 8192);
    assert_int_equal(f.count, 5);
    assert_int_equal(f.offset, -3);
    assert_true(f.ratio == 0.25);
    assert_true(f.pct == 75);
    assert_int_equal(f.threads.n, 3);
    assert_int_equal(f.threads.v[2], 4);
    assert_int_equal(f.duration, 1500000000ull);
    assert_true(f.rate == 1);
    assert_string_equal(f.name, "run1");
    assert_int_equal(cli.nargs, 1);
    assert_string_equal(cli.args[0], "u");
    assert_string_equal(cli.common.out_dir, "/tmp/x");
    assert_int_equal(cli.common.interval_ns, 250000000ull);
    assert_true(cli.common.quiet);
    rb_cli_free(&cli);

    /* -bVALUE, a negative value after a separate option, and the last of a repeated option wins. */
    fx_init(&f);
    assert_int_equal(PARSE(&cli, &f, "get", "-b16k", "--offset", "-5", "--bs", "1M", "--bs=2M", "u"), 0);
    assert_int_equal(f.bs, 2u << 20);
    assert_int_equal(f.offset, -5);
    rb_cli_free(&cli);

    /* Bundled short flags, the last taking a value. */
    fx_init(&f);
    assert_int_equal(PARSE(&cli, &f, "get", "-Vb", "64k", "u"), 0);
    assert_true(f.verify);
    assert_int_equal(f.bs, 65536);
    rb_cli_free(&cli);

    /* After "--" everything is positional, even things that look like options. */
    fx_init(&f);
    f.spec.max_args = -1;
    assert_int_equal(PARSE(&cli, &f, "get", "--", "-b", "--bs"), 0);
    assert_int_equal(cli.nargs, 2);
    assert_string_equal(cli.args[0], "-b");
    assert_string_equal(cli.args[1], "--bs");
    assert_int_equal(f.bs, 4096);
    rb_cli_free(&cli);
}

static void test_flags(void **state)
{
    (void)state;
    struct fx f;
    struct rb_cli cli;
    fx_init(&f);
    assert_int_equal(PARSE(&cli, &f, "get", "--verify", "--direct=false", "u"), 0);
    assert_true(f.verify);
    assert_false(f.direct);
    rb_cli_free(&cli);

    fx_init(&f);
    assert_int_equal(PARSE(&cli, &f, "get", "--verify", "--verify=false", "u"), 0);
    assert_false(f.verify);
    rb_cli_free(&cli);

    /* A flag does not eat the next word: "u" stays the positional argument. */
    fx_init(&f);
    assert_int_equal(PARSE(&cli, &f, "get", "--verify", "u"), 0);
    assert_int_equal(cli.nargs, 1);
    rb_cli_free(&cli);

    fx_init(&f);
    EXPECT_ERROR(&f, "--verify: \"maybe\" is not true or false", "get", "--verify=maybe", "u");
}

static void test_bad_values(void **state)
{
    (void)state;
    struct fx f;
    struct rb_cli cli;
    struct capture c;

    /* The exact line users see. */
    fx_init(&f);
    capture_start(&c, STDERR_FILENO);
    assert_int_equal(PARSE(&cli, &f, "get", "--bs", "4x", "u"), -EINVAL);
    char *err = capture_stop(&c);
    assert_string_equal(err, "railbench: error: --bs: \"4x\" is not a size (use e.g. 4096, 4k, 4KiB, 1MB)\n");
    free(err);
    assert_int_equal(f.bs, 4096);
    rb_cli_free(&cli);

    fx_init(&f);
    EXPECT_ERROR(&f, "--bs: \"20000000TiB\" is out of range for a size", "get", "-b", "20000000TiB", "u");
    /* A good value before a bad one is not stored either. */
    EXPECT_ERROR(&f, "--count: \"x\" is not a non-negative whole number", "get", "--bs", "8k", "--count",
                 "x", "u");
    EXPECT_ERROR(&f, "--duration: \"10 parsecs\" is not a duration", "get", "-d", "10 parsecs", "u");
    EXPECT_ERROR(&f, "--rate: \"0\" is not a rate", "get", "--rate", "0", "u");
    EXPECT_ERROR(&f, "--pct: \"101\" is out of range for a percentage", "get", "--pct", "101", "u");
    EXPECT_ERROR(&f, "--ratio: \"1x\" is not a number", "get", "--ratio", "1x", "u");
    EXPECT_ERROR(&f, "--offset: \"1.5\" is not a whole number", "get", "--offset", "1.5", "u");
    EXPECT_ERROR(&f, "--interval: \"0s\" must be greater than 0", "get", "--interval", "0s", "u");
    EXPECT_ERROR(&f, "--interval: \"soon\" is not a duration", "get", "--interval", "soon", "u");
    EXPECT_ERROR(&f, "unknown option --foo (see railbench load get --help)", "get", "--foo", "u");
    EXPECT_ERROR(&f, "unknown option --foo (see railbench load get --help)", "get", "--foo=1", "u");
    EXPECT_ERROR(&f, "unknown option -x (see railbench load get --help)", "get", "-x", "u");
    /* A typo gets the nearest name; another word gets none; control characters are escaped. */
    EXPECT_ERROR(&f, "unknown option --duraton; did you mean --duration? (see railbench load get --help)", "get",
                 "--duraton", "5s", "u");
    EXPECT_ERROR(&f, "unknown option --thraeds; did you mean --threads?", "get", "--thraeds=2", "u");
    EXPECT_ERROR(&f, "unknown option --rat; did you mean --rate?", "get", "--rat", "1", "u");
    EXPECT_ERROR(&f, "unknown option --colour (see", "get", "--colour", "u");
    EXPECT_ERROR(&f, "unknown option --a\\r\\nb (see", "get", "--a\r\nb", "u");
    EXPECT_ERROR(&f, "unknown option -x", "get", "-Vx", "u");
    EXPECT_ERROR(&f, "--bs: missing value (SIZE; use e.g. 4096, 4k, 4KiB, 1MB)", "get", "u", "--bs");
    EXPECT_ERROR(&f, "-b", "get", "u", "-b");
    EXPECT_ERROR(&f, "--bs: \"\" is not a size", "get", "--bs=", "u");
}

static void test_choices(void **state)
{
    (void)state;
    struct fx f;
    struct rb_cli cli;
    fx_init(&f);
    assert_int_equal(PARSE(&cli, &f, "get", "--order", "epoch", "u"), 0);
    assert_int_equal(f.order, 2);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(cli.config, "order")), "epoch");
    rb_cli_free(&cli);

    fx_init(&f);
    EXPECT_ERROR(&f, "--order: \"bogus\" is not one of random, sequential, epoch", "get", "--order", "bogus",
                 "u");
    EXPECT_ERROR(&f, "is not one of", "get", "--order", "Epoch", "u");
    EXPECT_ERROR(&f, "is not one of", "get", "--order", "epoc", "u");
}

static void test_lists(void **state)
{
    (void)state;
    struct fx f;
    struct rb_cli cli;
    fx_init(&f);
    assert_int_equal(PARSE(&cli, &f, "get", "--sizes", "4k,64k,1M", "u"), 0);
    assert_int_equal(f.sizes.n, 3);
    assert_int_equal(f.sizes.v[0], 4096);
    assert_int_equal(f.sizes.v[1], 65536);
    assert_int_equal(f.sizes.v[2], 1 << 20);
    rb_cli_free(&cli);

    fx_init(&f);
    EXPECT_ERROR(&f, "--sizes: \"4k,,8k\" has an empty or bad element", "get", "--sizes", "4k,,8k", "u");
    EXPECT_ERROR(&f, "has an empty or bad element", "get", "--sizes", "4k,8k,", "u");
    EXPECT_ERROR(&f, "--sizes: \"4k,4x\": \"4x\" is not a size (use a comma-separated list", "get", "-s",
                 "4k,4x", "u");
    EXPECT_ERROR(&f, "--threads: \"1,-2\": \"-2\" is not a non-negative whole number", "get", "-t", "1,-2",
                 "u");

    char many[400] = "1";
    for (int i = 0; i < RB_LIST_MAX; i++)
        strcat(many, ",1");
    EXPECT_ERROR(&f, "has more than 64 elements", "get", "--threads", many, "u");
}

static void test_labels(void **state)
{
    (void)state;
    struct fx f;
    struct rb_cli cli;
    fx_init(&f);
    assert_int_equal(PARSE(&cli, &f, "get", "--label", "site=lab", "--label=_run2=a b=c", "u"), 0);
    assert_int_equal(cli.common.labels.n, 2);
    assert_string_equal(cli.common.labels.v[0], "site=lab");
    assert_string_equal(cli.common.labels.v[1], "_run2=a b=c");
    cJSON *l = cJSON_GetObjectItem(cli.config, "label");
    assert_int_equal(cJSON_GetArraySize(l), 2);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetArrayItem(l, 1)), "_run2=a b=c");
    rb_cli_free(&cli);

    static const char *const bad[] = {"1a=x", "a=", "a", "=x", "a-b=1", "a=x\ny", "é=1", ""};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        EXPECT_ERROR(&f, "is not k=v", "get", "--label", (char *)bad[i], "u");
    EXPECT_ERROR(&f, "--label: \"a=2\" repeats the key \"a\"", "get", "--label", "a=1", "--label", "a=2",
                 "u");
    /* "ab=1" does not clash with "a=1". */
    assert_int_equal(PARSE(&cli, &f, "get", "--label", "a=1", "--label", "ab=1", "u"), 0);
    rb_cli_free(&cli);
}

static void test_positional_count(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f);
    EXPECT_ERROR(&f, "railbench: error: load get: missing argument (expected at least 1, got 0; usage: "
                     "railbench load get [options] URL)",
                 "get");
    EXPECT_ERROR(&f, "unexpected argument \"extra\" (expected at most 1", "get", "u", "extra");
    EXPECT_ERROR(&f, "missing argument", "get", "--bs", "8k");

    struct rb_cli cli;
    f.spec.min_args = 0;
    f.spec.max_args = 0;
    assert_int_equal(PARSE(&cli, &f, "get"), 0);
    assert_int_equal(cli.nargs, 0);
    assert_non_null(cli.args);
    rb_cli_free(&cli);
    /* "-" is a positional argument (stdin), not an option. */
    f.spec.max_args = 1;
    assert_int_equal(PARSE(&cli, &f, "get", "-"), 0);
    assert_string_equal(cli.args[0], "-");
    rb_cli_free(&cli);
}

static void test_config_merge(void **state)
{
    (void)state;
    struct fx f;
    struct rb_cli cli;
    char path[32];
    write_config(path, "{\n"
                       "  \"bs\": \"64k\",\n"
                       "  \"count\": 10,\n"
                       "  \"sizes\": [4096, \"8k\", \"1M\"],\n"
                       "  \"threads\": \"2,4\",\n"
                       "  \"duration\": 1.5,\n"
                       "  \"rate\": 250,\n"
                       "  \"pct\": 99.5,\n"
                       "  \"offset\": -7,\n"
                       "  \"order\": \"sequential\",\n"
                       "  \"verify\": true,\n"
                       "  \"direct\": false,\n"
                       "  \"name\": \"from-config\",\n"
                       "  \"interval\": \"2s\",\n"
                       "  \"out\": \"/tmp/cfg-out\",\n"
                       "  \"label\": [\"a=1\", \"b=2\"],\n"
                       "  \"quiet\": true,\n"
                       "  \"config\": \"ignored.json\"\n"
                       "}\n");
    fx_init(&f);
    assert_int_equal(PARSE(&cli, &f, "get", "--config", path, "--count", "20", "u"), 0);
    assert_int_equal(f.bs, 65536);             /* from the config */
    assert_int_equal(f.count, 20);             /* the command line wins */
    assert_int_equal(f.sizes.n, 3);
    assert_int_equal(f.sizes.v[1], 8192);
    assert_int_equal(f.threads.n, 2);
    assert_int_equal(f.threads.v[1], 4);
    assert_int_equal(f.duration, 1500000000ull);
    assert_true(f.rate == 250);
    assert_true(f.pct == 99.5);
    assert_int_equal(f.offset, -7);
    assert_int_equal(f.order, 1);
    assert_true(f.verify);
    assert_false(f.direct);
    assert_string_equal(f.name, "from-config");
    assert_int_equal(cli.common.interval_ns, 2 * NS_PER_S);
    assert_string_equal(cli.common.out_dir, "/tmp/cfg-out");
    assert_int_equal(cli.common.labels.n, 2);
    assert_string_equal(cli.common.labels.v[1], "b=2");
    assert_true(cli.common.quiet);
    assert_string_equal(cli.common.config_path, path);
    rb_cli_free(&cli);

    /* Config before or after on the command line makes no difference: the command line wins. */
    fx_init(&f);
    EXPECT_ERROR(&f, "railbench: error: config : cannot read", "get", "--count", "20", "--config=", "u");
    char arg[64];
    snprintf(arg, sizeof(arg), "--config=%s", path);
    fx_init(&f);
    assert_int_equal(PARSE(&cli, &f, "get", "--bs", "1M", arg, "u"), 0);
    assert_int_equal(f.bs, 1 << 20);
    assert_int_equal(f.count, 10);
    rb_cli_free(&cli);
    unlink(path);
}

static void test_config_errors(void **state)
{
    (void)state;
    static const struct config_case cases[] = {
        {"{\"bs\": \"8k\", \"foo\": 1}", "unknown option \"foo\""},
        {"{\"bs\": \"8k\",\n\"verify\": \"yes\"}", "verify: expected true or false, got a string"},
        {"{\"bs\": true}", "bs: expected a number of bytes or a string such as \"4k\", got a boolean"},
        {"{\"sizes\": {\"a\": 1}}", "sizes: expected an array of sizes"},
        {"{\"sizes\": [4096, true]}", "sizes: expected an array of sizes"},
        {"{\"endpoint\": [\"a\", 1]}", "endpoint: expected an array of strings, got an array"},
        {"{\"name\": 5}", "name: expected a string, got a number"},
        {"{\"order\": 1}", "order: expected a string, got a number"},
        {"{\"order\": \"sideways\"}", "order: \"sideways\" is not one of random, sequential, epoch"},
        {"{\"bs\": -1}", "bs: -1 is not a size"},
        {"{\"bs\": 1.5}", "bs: 1.5 is not a size"},
        {"{\"bs\": \"4x\"}", "bs: \"4x\" is not a size (use e.g. 4096, 4k, 4KiB, 1MB)"},
        {"{\"count\": 1e30}", "count: 1e+30 is out of range"},
        {"{\"offset\": 0.5}", "offset: 0.5 is not a whole number"},
        {"{\"pct\": 150}", "pct: 150 is out of range for a percentage"},
        {"{\"rate\": 0}", "rate: 0 is not a rate"},
        {"{\"duration\": -1}", "duration: -1 is not a duration"},
        {"{\"interval\": 0}", "interval: 0 must be greater than 0"},
        {"{\"label\": [\"ok=1\", \"bad\"]}", "label: \"bad\" is not k=v"},
        {"{\"threads\": [1, 2.5]}", "threads: 2.5 is not a non-negative whole number"},
        {"{\n  \"bs\": \"8k\",\n  \"count\": 10,\n}\n", "invalid JSON near line 4"},
        {"{\"bs\": \"8k\"} trailing", "invalid JSON near line 1"},
        {"", "invalid JSON near line 1"},
        {"[1, 2]", "expected a JSON object of option names and values, got an array"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        expect_config_error(cases[i].json, cases[i].want);

    struct fx f;
    fx_init(&f);
    EXPECT_ERROR(&f, "railbench: error: config /nonexistent/rb.json: cannot read: No such file or directory", "get",
                 "--config", "/nonexistent/rb.json", "u");
    EXPECT_ERROR(&f, "railbench: error: config /tmp: a directory without a readable result.json", "get", "--config", "/tmp", "u");
}

/* {"key": [elem, elem, ...]} with n copies of elem (JSON text), for limits; the caller frees. */
static char *json_list(const char *key, const char *elem, int n)
{
    size_t cap = 64 + (size_t)n * (strlen(elem) + 4);
    char *j = malloc(cap);
    assert_non_null(j);
    int off = snprintf(j, cap, "{\"%s\": [", key);
    for (int i = 0; i < n; i++)
        off += snprintf(j + off, cap - (size_t)off, "%s%s", i ? ", " : "", elem);
    snprintf(j + off, cap - (size_t)off, "]}");
    return j;
}

/* cli_apply.c: what each option type refuses from a config (its JSON type, its range, its limit) and says. */
static void test_config_type_errors(void **state)
{
    (void)state;
    static const struct config_case cases[] = {
        {"{\"count\": true}", "count: expected a whole number, got a boolean"},
        {"{\"offset\": [1]}", "offset: expected a whole number, got an array"},
        {"{\"ratio\": [0.5]}", "ratio: expected a number, got an array"},
        {"{\"pct\": {}}", "pct: expected a number from 0 to 100, got an object"},
        {"{\"threads\": true}", "threads: expected an array of whole numbers, got a boolean"},
        {"{\"duration\": false}", "duration: expected a number of seconds or a string such as \"500ms\", got a boolean"},
        {"{\"rate\": [1]}", "rate: expected a number per second or a string such as \"60/m\", got an array"},
        {"{\"endpoint\": 7}", "endpoint: expected an array of strings, got a number"},
        {"{\"offset\": 1e19}", "offset: 1e+19 is out of range"},
        {"{\"duration\": 1e11}", "duration: 100000000000 is out of range for a duration"},
        {"{\"sizes\": -1}", "sizes: -1 is not a size"},
        {"{\"sizes\": \"4k,,8k\"}", "sizes: \"4k,,8k\" has an empty or bad element"},
        {"{\"secret-key\": \"***REDACTED***\"}", "secret-key: the value is ***REDACTED*** (from a saved result); "
                                                 "give the real value or drop the key"},
        {"{\"args\": \"u\"}", "args: expected an array of at most 64 strings (the positional arguments)"},
        {"{\"args\": [\"u\", null]}", "args: expected strings, got null"},
        {"{\"label\": [\"a=1\", \"a=2\"]}", "label: \"a=2\" repeats the key \"a\""},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        expect_config_error(cases[i].json, cases[i].want);
    /* One past the list limit, as an array of numbers and of strings. */
    char *lists[2] = {json_list("threads", "1", RB_LIST_MAX + 1), json_list("endpoint", "\"http://e\"", RB_LIST_MAX + 1)};
    const char *wants[2] = {"threads: more than 64 elements", "endpoint: more than 64 values"};
    for (int i = 0; i < 2; i++) {
        expect_config_error(lists[i], wants[i]);
        free(lists[i]);
    }
}

/* cli_apply.c: the forms a config may give besides each type's own (null, one value for a list, the arguments). */
static void test_config_forms(void **state)
{
    (void)state;
    struct fx f;
    struct rb_cli cli;
    char path[32];
    /* null: the option's default (a saved config writes an option left at "none" so); STR null: unset. */
    write_config(path, "{\"bs\": null, \"sizes\": 8192, \"endpoint\": \"http://one\", \"name\": null, "
                       "\"args\": [\"http://from-config\"], \"threads\": [2, \"3\"], \"count\": 1, \"count\": 2}");
    fx_init(&f);
    assert_int_equal(PARSE(&cli, &f, "get", "--config", path), 0);
    assert_int_equal(f.bs, 4096);
    assert_int_equal(f.sizes.n, 1);
    assert_int_equal(f.sizes.v[0], 8192);
    assert_int_equal(f.endpoints.n, 1);
    assert_string_equal(f.endpoints.v[0], "http://one");
    assert_null(f.name);
    assert_int_equal(f.threads.n, 2);
    assert_int_equal(f.threads.v[1], 3);
    assert_int_equal(f.count, 2); /* a key given twice: the later one, as on the command line */
    assert_int_equal(cli.nargs, 1); /* the config's arguments stand when the command line gives none */
    assert_string_equal(cli.args[0], "http://from-config");
    rb_cli_free(&cli);
    /* Arguments on the command line replace the config's. */
    fx_init(&f);
    assert_int_equal(PARSE(&cli, &f, "get", "--config", path, "http://cli"), 0);
    assert_int_equal(cli.nargs, 1);
    assert_string_equal(cli.args[0], "http://cli");
    rb_cli_free(&cli);
    unlink(path);
}

/* Writes a saved result of command with config cfg (JSON text) as dir/result.json. */
static void write_result(const char *dir, const char *command, const char *cfg)
{
    char file[128];
    snprintf(file, sizeof file, "%s/result.json", dir);
    FILE *fp = fopen(file, "w");
    assert_non_null(fp);
    fprintf(fp, "{\"schema\": \"railbench.result/v1\", \"command\": \"%s\"%s%s}\n", command, cfg ? ", \"config\": " : "",
            cfg ? cfg : "");
    fclose(fp);
}

/*
 * cli_apply.c: a saved result (its result.json, or its run directory) as --config: its options again, but not
 * where it wrote (out, force) nor its redacted secrets; only for the command that made it.
 */
static void test_config_from_result(void **state)
{
    (void)state;
    char dir[] = "/tmp/rb_test_cli_run_XXXXXX";
    assert_non_null(mkdtemp(dir));
    write_result(dir, "load get", "{\"bs\": \"8k\", \"count\": 5, \"out\": \"/tmp/elsewhere\", \"force\": true, "
                                  "\"secret-key\": \"***REDACTED***\", \"config\": \"/x.json\", \"args\": [\"http://saved\"]}");
    char file[128];
    snprintf(file, sizeof file, "%s/result.json", dir);
    const char *forms[2] = {dir, file};
    for (int i = 0; i < 2; i++) {
        struct fx f;
        struct rb_cli cli;
        fx_init(&f);
        assert_int_equal(PARSE(&cli, &f, "get", "--config", (char *)forms[i], "--count", "9"), 0);
        assert_int_equal(f.bs, 8192);
        assert_int_equal(f.count, 9); /* the command line still wins */
        assert_null(f.secret_key);
        assert_null(cli.common.out_dir);
        assert_false(cli.common.force);
        assert_string_equal(cli.args[0], "http://saved");
        rb_cli_free(&cli);
    }
    /* A result of another command is refused, and so is one without its options. */
    struct fx f;
    char want[512];
    write_result(dir, "load put", "{\"bs\": \"8k\"}");
    snprintf(want, sizeof want, "railbench: error: config %s: the result of \"load put\", not of \"load get\" "
                                "(run that command with it)", file);
    fx_init(&f);
    EXPECT_ERROR(&f, want, "get", "--config", dir, "u");
    write_result(dir, "load get", NULL);
    snprintf(want, sizeof want, "railbench: error: config %s: a result without a \"config\" object", file);
    fx_init(&f);
    EXPECT_ERROR(&f, want, "get", "--config", file, "u");
    unlink(file);
    rmdir(dir);
}

static void test_repeatable_override(void **state)
{
    (void)state;
    struct fx f;
    struct rb_cli cli;
    char path[32];
    write_config(path, "{\"endpoint\": [\"http://a\", \"http://b\"], \"label\": [\"x=1\", \"y=2\"]}");

    /* The config replaces the default list... */
    fx_init(&f);
    assert_int_equal(PARSE(&cli, &f, "get", "--config", path, "u"), 0);
    assert_int_equal(f.endpoints.n, 2);
    assert_string_equal(f.endpoints.v[0], "http://a");
    assert_string_equal(f.endpoints.v[1], "http://b");
    assert_int_equal(cli.common.labels.n, 2);
    rb_cli_free(&cli);

    /* ...and command-line occurrences replace the config's, keeping all of their own. */
    fx_init(&f);
    assert_int_equal(PARSE(&cli, &f, "get", "--config", path, "-e", "http://c", "--endpoint=http://d",
                           "--label", "z=3", "u"),
                     0);
    assert_int_equal(f.endpoints.n, 2);
    assert_string_equal(f.endpoints.v[0], "http://c");
    assert_string_equal(f.endpoints.v[1], "http://d");
    assert_int_equal(cli.common.labels.n, 1);
    assert_string_equal(cli.common.labels.v[0], "z=3");
    rb_cli_free(&cli);

    /* Without a config, the command line replaces the default list. */
    fx_init(&f);
    assert_int_equal(PARSE(&cli, &f, "get", "-e", "http://c", "u"), 0);
    assert_int_equal(f.endpoints.n, 1);
    assert_string_equal(f.endpoints.v[0], "http://c");
    rb_cli_free(&cli);
    unlink(path);
}

/* Asserts that needle appears nowhere in the compact JSON of j. */
static void assert_json_lacks(const cJSON *j, const char *needle)
{
    char *s = cJSON_PrintUnformatted(j);
    assert_non_null(s);
    if (strstr(s, needle))
        fail_msg("\"%s\" found in %s", needle, s);
    free(s);
}

static void test_redaction(void **state)
{
    (void)state;
    struct fx f;
    struct rb_cli cli;
    fx_init(&f);
    assert_int_equal(PARSE(&cli, &f, "get", "--secret-key=hunter2", "--api-token", "s3cr3t", "u"), 0);
    assert_string_equal(f.secret_key, "hunter2"); /* the command sees the real value */
    assert_string_equal(f.api_token, "s3cr3t");
    assert_json_lacks(cli.config, "hunter2");
    assert_json_lacks(cli.config, "s3cr3t");
    assert_json_lacks(cli.argv_json, "hunter2");
    assert_json_lacks(cli.argv_json, "s3cr3t");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(cli.config, "secret-key")),
                        "***REDACTED***");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(cli.config, "api-token")), "***REDACTED***");
    assert_int_equal(cJSON_GetArraySize(cli.argv_json), 5);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetArrayItem(cli.argv_json, 0)), "get");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetArrayItem(cli.argv_json, 1)),
                        "--secret-key=***REDACTED***");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetArrayItem(cli.argv_json, 2)), "--api-token");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetArrayItem(cli.argv_json, 3)), "***REDACTED***");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetArrayItem(cli.argv_json, 4)), "u");
    rb_cli_free(&cli);

    /* Short forms, bundled or not. */
    fx_init(&f);
    assert_int_equal(PARSE(&cli, &f, "get", "-Vkhunter2", "-k", "s3cr3t", "u"), 0);
    assert_string_equal(f.secret_key, "s3cr3t");
    assert_json_lacks(cli.argv_json, "hunter2");
    assert_json_lacks(cli.argv_json, "s3cr3t");
    assert_json_lacks(cli.config, "s3cr3t");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetArrayItem(cli.argv_json, 1)), "-Vk***REDACTED***");
    rb_cli_free(&cli);

    /* From a config file: the value is used, and redacted in the resolved config. */
    char path[32];
    write_config(path, "{\"secret-key\": \"zzTopSecret\", \"api-token\": null}");
    fx_init(&f);
    assert_int_equal(PARSE(&cli, &f, "get", "--config", path, "u"), 0);
    assert_string_equal(f.secret_key, "zzTopSecret");
    assert_null(f.api_token);
    assert_json_lacks(cli.config, "zzTopSecret");
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(cli.config, "api-token"))); /* unset: nothing to hide */
    rb_cli_free(&cli);
    unlink(path);

    /* A saved, redacted config fed back must not quietly use the placeholder as a key. */
    write_config(path, "{\"secret-key\": \"***REDACTED***\"}");
    EXPECT_ERROR(&f, "secret-key: the value is ***REDACTED***", "get", "--config", path, "u");
    unlink(path);

    assert_true(rb_cli_is_secret("secret-key"));
    assert_true(rb_cli_is_secret("API_TOKEN"));
    assert_true(rb_cli_is_secret("Password"));
    assert_true(rb_cli_is_secret("s3-Key-id"));
    assert_false(rb_cli_is_secret("bs"));
    assert_false(rb_cli_is_secret("ke"));
    assert_false(rb_cli_is_secret(NULL));
}

/* Parses, feeds the resolved config back as --config, and expects the same values. */
static void test_config_round_trip(void **state)
{
    (void)state;
    struct fx f, first;
    struct rb_cli cli;
    fx_init(&f);
    f.offset = INT64_MIN;
    assert_int_equal(PARSE(&cli, &f, "get", "--bs", "1.5KiB", "-s", "4k,1M", "-t", "1,2,8", "-d", "1500ms",
                           "--rate", "2.5k/s", "--pct", "12.5", "--order", "epoch", "--verify",
                           "--direct=false",
                           "--label", "a=1", "--interval", "90s", "--count", "18446744073709551615", "u"),
                     0);
    const cJSON *c = cli.config;
    assert_true(cJSON_IsNumber(cJSON_GetObjectItem(c, "bs")));
    assert_true(cJSON_GetObjectItem(c, "bs")->valuedouble == 1536);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(c, "duration")), "1500ms");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(c, "interval")), "90s");
    assert_true(cJSON_IsArray(cJSON_GetObjectItem(c, "sizes")));
    assert_true(cJSON_IsBool(cJSON_GetObjectItem(c, "quiet")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(c, "out")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(c, "config")));
    assert_true(cJSON_IsArray(cJSON_GetObjectItem(c, "label")));
    /* Past 2^53 a number would lose digits, so it is written as a string. */
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(c, "count")), "18446744073709551615");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(c, "offset")), "-9223372036854775808");
    assert_true(cJSON_GetObjectItem(c, "rate")->valuedouble == 2500);
    /* Command options first, then the common ones, every one present, then the positional "args". */
    assert_int_equal(cJSON_GetArraySize(c), 16 + 11 + 1);
    assert_string_equal(cJSON_GetArrayItem(c, 0)->string, "bs");
    assert_string_equal(cJSON_GetArrayItem(c, 16)->string, "out");

    char *text = cJSON_Print(c);
    char path[32];
    write_config(path, text);
    free(text);
    fx_snapshot(&f, &first);
    uint64_t interval = cli.common.interval_ns;
    rb_cli_free(&cli);

    fx_init(&f);
    f.offset = 0;
    assert_int_equal(PARSE(&cli, &f, "get", "--config", path, "u"), 0);
    /* Strings now point at copies owned by cli; compare them by value, the rest bytewise. */
    assert_string_equal(f.name, first.name);
    f.name = first.name;
    assert_string_equal(f.endpoints.v[0], first.endpoints.v[0]);
    f.endpoints.v[0] = first.endpoints.v[0];
    assert_fx_unchanged(&f, &first);
    assert_int_equal(cli.common.interval_ns, interval);
    assert_string_equal(cli.common.labels.v[0], "a=1");
    rb_cli_free(&cli);
    unlink(path);
}

static void test_help(void **state)
{
    (void)state;
    struct fx f, before;
    struct rb_cli cli;
    struct capture c;
    fx_init(&f);
    fx_snapshot(&f, &before);

    capture_start(&c, STDOUT_FILENO);
    int rc = PARSE(&cli, &f, "get", "--help");
    char *out = capture_stop(&c);
    assert_int_equal(rc, RB_CLI_HELP);
    assert_fx_unchanged(&f, &before);
    assert_true(strncmp(out, "usage: railbench load get [options] URL\n\nRead objects.\n", 52) == 0);
    assert_non_null(strstr(out, "-b, --bs SIZE"));
    assert_non_null(strstr(out, "block size (default: 4KiB)"));
    assert_non_null(strstr(out, "--sizes SIZE,..."));
    assert_non_null(strstr(out, "(default: 4KiB,1MiB)"));
    assert_non_null(strstr(out, "(default: 10s)"));
    assert_non_null(strstr(out, "--order random|sequential|epoch"));
    assert_non_null(strstr(out, "(default: random)"));
    assert_non_null(strstr(out, "(default: bench)"));
    assert_non_null(strstr(out, "--interval DURATION"));
    assert_non_null(strstr(out, "(default: 1s)"));
    assert_non_null(strstr(out, "--label K=V"));
    assert_non_null(strstr(out, "--config FILE.json"));
    assert_non_null(strstr(out, "--quiet"));
    assert_non_null(strstr(out, "-h, --help"));
    /* Command options come before common ones. */
    assert_true(strstr(out, "--api-token") < strstr(out, "--out DIR"));
    free(out);
    rb_cli_free(&cli);

    /* -h, and help winning over a mistake next to it. */
    capture_start(&c, STDOUT_FILENO);
    assert_int_equal(PARSE(&cli, &f, "get", "--bogus", "-h"), RB_CLI_HELP);
    assert_int_equal(PARSE(&cli, &f, "get", "--bs", "4x", "--help"), RB_CLI_HELP);
    assert_int_equal(PARSE(&cli, &f, "get", "-Vh"), RB_CLI_HELP);
    free(capture_stop(&c));
    assert_fx_unchanged(&f, &before);
    rb_cli_free(&cli);

    /* After "--", "--help" is an argument. */
    assert_int_equal(PARSE(&cli, &f, "get", "--", "--help"), 0);
    assert_string_equal(cli.args[0], "--help");
    rb_cli_free(&cli);
}

static void test_strdup_and_ownership(void **state)
{
    (void)state;
    struct fx f;
    struct rb_cli cli;
    fx_init(&f);
    assert_int_equal(PARSE(&cli, &f, "get", "u"), 0);
    char src[] = "temporary";
    const char *copy = rb_cli_strdup(&cli, src);
    assert_non_null(copy);
    assert_ptr_not_equal(copy, src);
    src[0] = 'X';
    assert_string_equal(copy, "temporary");
    assert_null(rb_cli_strdup(&cli, NULL));
    for (int i = 0; i < 100; i++)
        assert_non_null(rb_cli_strdup(&cli, "grow the owned array"));
    rb_cli_free(&cli);
    assert_null(cli.owned);
    assert_int_equal(cli.nowned, 0);

    /* A command without options still gets the common ones. */
    static const struct rb_opt none[] = {{0}};
    const struct rb_cmd_spec bare = {"railbench version", "Print the version.", none, 0, 0, false};
    char *argv[] = {"version", "--quiet", "--label", "k=v", NULL};
    assert_int_equal(rb_cli_parse(&cli, &bare, 4, argv), 0);
    assert_true(cli.common.quiet);
    assert_int_equal(cJSON_GetArraySize(cli.config), 11 + 1);
    rb_cli_free(&cli);
}

static void test_url_userinfo_redacted(void **state)
{
    (void)state;
    const char *url = NULL;
    const struct rb_opt opts[] = {{"endpoint", 0, RB_OPT_STR, &url, "URL", "endpoint", NULL}, {0}};
    const struct rb_cmd_spec spec = {"railbench t", "t", opts, 0, 0, false};
    char *argv[] = {"t", "--endpoint", "http://alice:s3cr3t@host:9/x?y=1", NULL};
    struct rb_cli cli;
    assert_int_equal(rb_cli_parse(&cli, &spec, 3, argv), 0);
    assert_string_equal(url, "http://alice:s3cr3t@host:9/x?y=1"); /* the program still gets it */
    char *c = cJSON_PrintUnformatted(cli.config), *a = cJSON_PrintUnformatted(cli.argv_json);
    assert_null(strstr(c, "s3cr3t"));
    assert_null(strstr(a, "s3cr3t"));
    assert_non_null(strstr(c, "http://***@host:9/x?y=1"));
    free(c);
    free(a);
    rb_cli_free(&cli);
    char out[64];
    rb_cli_redact_url(out, sizeof out, "s3://bucket/key@odd");
    assert_string_equal(out, "s3://bucket/key@odd");
    rb_cli_redact_url(out, sizeof out, "no url here");
    assert_string_equal(out, "no url here");
}

/* --help shows a size so that it parses back unmistakably, and a default worked out at run time as described. */
static void test_help_defaults(void **state)
{
    (void)state;
    uint64_t mtu = 9000, iters = 0, chunk = 128 * 1024;
    const struct rb_opt opts[] = {
        {"mtu", 0, RB_OPT_SIZE, &mtu, "BYTES", "MTU", NULL},
        {"chunk", 0, RB_OPT_SIZE, &chunk, "SIZE", "chunk", NULL},
        {"iters", 'i', RB_OPT_U64, &iters, "N", "timed iterations " RB_CLI_IF_NOT_GIVEN "1000 up to 8 KiB)", NULL},
        {0},
    };
    const struct rb_cmd_spec spec = {"railbench x", "X.", opts, 0, 0, false};
    struct capture c;
    capture_start(&c, STDOUT_FILENO);
    rb_cli_usage(&spec);
    char *out = capture_stop(&c);
    assert_non_null(strstr(out, "MTU (default: 9000)\n"));   /* not 9KB, which reads like 9k = 9216 */
    assert_non_null(strstr(out, "chunk (default: 128KiB)\n"));
    assert_non_null(strstr(out, "timed iterations (if not given: 1000 up to 8 KiB)\n"));
    assert_null(strstr(out, "8 KiB) (default"));
    free(out);
}

/* ---- the unknown-word line every command group gives ---- */

static int sub_ok(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return 42;
}

static void test_unknown_word(void **state)
{
    (void)state;
    static const struct rb_subcommand subs[] = {
        {"topo", "t", sub_ok}, {"map", "m", sub_ok}, {"sim", "s", sub_ok}, {NULL, NULL, NULL}};
    struct capture c;
    /* a near word: the guess, then the whole list, on one line, exit 2 */
    char *argv1[] = {"fabric", "smi", NULL};
    capture_start(&c, STDERR_FILENO);
    int rc = rb_dispatch("railbench fabric", subs, 2, argv1);
    char *err = capture_stop(&c);
    assert_int_equal(rc, RB_EXIT_USAGE);
    assert_string_equal(err, "railbench: error: unknown command \"smi\" for \"railbench fabric\"; did you mean "
                             "\"sim\"? (use topo, map, sim; see railbench fabric --help)\n");
    free(err);
    /* no near word: the list alone */
    char *argv2[] = {"fabric", "frobnicate", NULL};
    capture_start(&c, STDERR_FILENO);
    rc = rb_dispatch("railbench fabric", subs, 2, argv2);
    err = capture_stop(&c);
    assert_int_equal(rc, RB_EXIT_USAGE);
    assert_string_equal(err, "railbench: error: unknown command \"frobnicate\" for \"railbench fabric\" (use topo, map, "
                             "sim; see railbench fabric --help)\n");
    free(err);
    /* a known word runs its subcommand */
    char *argv3[] = {"fabric", "map", NULL};
    assert_int_equal(rb_dispatch("railbench fabric", subs, 2, argv3), 42);
    /* a plain list of words (coll's collectives and tests) */
    const char *words[] = {"allreduce", "alltoall", "bw", "mbw_mr", "moe", NULL};
    capture_start(&c, STDERR_FILENO);
    rc = rb_unknown_word("collective", "railbench coll", "allredcue", words, sizeof words[0]);
    err = capture_stop(&c);
    assert_int_equal(rc, RB_EXIT_USAGE);
    assert_string_equal(err, "railbench: error: unknown collective \"allredcue\" for \"railbench coll\"; did you mean "
                             "\"allreduce\"? (use allreduce, alltoall, bw, mbw_mr, moe; see railbench coll --help)\n");
    free(err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_url_userinfo_redacted),
        cmocka_unit_test(test_defaults_retained),
        cmocka_unit_test(test_long_short_forms),
        cmocka_unit_test(test_flags),
        cmocka_unit_test(test_bad_values),
        cmocka_unit_test(test_choices),
        cmocka_unit_test(test_lists),
        cmocka_unit_test(test_labels),
        cmocka_unit_test(test_positional_count),
        cmocka_unit_test(test_config_merge),
        cmocka_unit_test(test_config_errors),
        cmocka_unit_test(test_config_type_errors),
        cmocka_unit_test(test_config_forms),
        cmocka_unit_test(test_config_from_result),
        cmocka_unit_test(test_repeatable_override),
        cmocka_unit_test(test_redaction),
        cmocka_unit_test(test_config_round_trip),
        cmocka_unit_test(test_help),
        cmocka_unit_test(test_help_defaults),
        cmocka_unit_test(test_strdup_and_ownership),
        cmocka_unit_test(test_unknown_word),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
