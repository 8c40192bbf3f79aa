/* railbench: command dispatch. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include <curl/curl.h>
#include <cjson/cJSON.h>
#include <hwloc.h>
#include <microhttpd.h>
#include <mpi.h>

#include "railbench/cli.h"
#include "railbench/command.h"
#include "railbench/result.h"

static const struct rb_subcommand commands[] = {
    {"block", "fio sweeps of block devices and files: IOPS vs latency, SLO, knee", rb_block_main},
    {"coll", "collectives with nccl-tests' flags and table, MPI and rail-aware algorithms", rb_coll_main},
    {"fabric", "fabric topology, discovery, simulation, counters", rb_fabric_main},
    {"load", "object and file loads: put, get, delete, stat, mixed, list, meta, tiers, sweep, train, checkpoint (http, s3, ais, file://)", rb_load_main},
    {"report", "tables, comparisons and an HTML report with plots from result directories", rb_report_main},
    {"version", "print the version of railbench and its libraries", rb_version_main},
    {NULL, NULL, NULL},
};

int rb_version_main(int argc, char **argv)
{
    static const struct rb_opt opts[] = {{0}};
    static const struct rb_cmd_spec spec = {
        "railbench version", "Print the version of railbench and of the libraries it uses.", opts,
        0, 0, false};
    struct rb_cli cli;
    int rc = rb_cli_parse(&cli, &spec, argc, argv);
    rb_cli_free(&cli);
    if (rc == RB_CLI_HELP)
        return RB_EXIT_OK;
    if (rc < 0)
        return RB_EXIT_USAGE;
    char mpi[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int len = 0;
    MPI_Get_library_version(mpi, &len);
    mpi[strcspn(mpi, ",\n")] = '\0';
    unsigned hw = hwloc_get_api_version();
    printf("railbench %s\n", rb_version());
    printf("libcurl %s\n", curl_version_info(CURLVERSION_NOW)->version);
    printf("%s\n", mpi);
    printf("cJSON %s\n", cJSON_Version());
    printf("libmicrohttpd %s\n", MHD_get_version());
    printf("hwloc %u.%u.%u\n", hw >> 16, (hw >> 8) & 0xff, hw & 0xff);
    return RB_EXIT_OK;
}

int main(int argc, char **argv)
{
    /* "railbench --version" is "railbench version", as users of most tools expect. */
    static char version_word[] = "version";
    if (argc == 2 && strcmp(argv[1], "--version") == 0)
        argv[1] = version_word;
    return rb_dispatch("railbench", commands, argc, argv);
}
