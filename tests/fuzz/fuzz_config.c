/* libFuzzer target: --config FILE.json with arbitrary content gives 0 or -EINVAL, never a crash or leak. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "railbench/cli.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[] = "/tmp/rb-fuzz-config-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return 0;
    if (write(fd, data, size) != (ssize_t)size) {
        close(fd);
        unlink(path);
        return 0;
    }
    close(fd);
    bool flag = false;
    const char *str = NULL, *secret = NULL;
    struct rb_strs strs = {0};
    int64_t i = 0;
    uint64_t u = 0, sz = 0, dur = 0;
    double dbl = 0, pct = 0, rate = 0;
    struct rb_u64s sizes = {0}, nums = {0};
    int choice = 0;
    const struct rb_opt opts[] = {
        {"flag", 'f', RB_OPT_FLAG, &flag, NULL, "", NULL},
        {"str", 0, RB_OPT_STR, &str, "S", "", NULL},
        {"secret-key", 0, RB_OPT_STR, &secret, "S", "", NULL},
        {"strs", 0, RB_OPT_STRS, &strs, "S", "", NULL},
        {"int", 0, RB_OPT_INT, &i, "N", "", NULL},
        {"u64", 0, RB_OPT_U64, &u, "N", "", NULL},
        {"double", 0, RB_OPT_DOUBLE, &dbl, "X", "", NULL},
        {"percent", 0, RB_OPT_PERCENT, &pct, "P", "", NULL},
        {"size", 'b', RB_OPT_SIZE, &sz, "SIZE", "", NULL},
        {"sizes", 0, RB_OPT_SIZES, &sizes, "SIZES", "", NULL},
        {"nums", 0, RB_OPT_U64S, &nums, "N,N", "", NULL},
        {"duration", 0, RB_OPT_DURATION, &dur, "D", "", NULL},
        {"rate", 0, RB_OPT_RATE, &rate, "R", "", NULL},
        {"choice", 0, RB_OPT_CHOICE, &choice, "C", "", "a|b|c"},
        {0},
    };
    const struct rb_cmd_spec spec = {"railbench fuzz [options]", "fuzz", opts, 0, -1, false};
    char *argv[] = {"fuzz", "--config", path, NULL};
    struct rb_cli cli;
    FILE *saved = stderr;
    stderr = fopen("/dev/null", "w"); /* the one-line messages are expected; keep the fuzzer's output clean */
    (void)rb_cli_parse(&cli, &spec, 3, argv);
    fclose(stderr);
    stderr = saved;
    rb_cli_free(&cli);
    unlink(path);
    return 0;
}
