/* railbench fabric check: acting on the findings: Slurm's DRAIN for the hosts they name, a Kubernetes Node label/taint file. */
#define _GNU_SOURCE
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "check_int.h"
#include "railbench/buf.h"
#include "railbench/file.h"
#include "railbench/harness.h"
#include "railbench/log.h"

extern char **environ;

/* The label value of a host no finding names, and of one a finding names (IBM autopilot's gpuhealth values). */
#define LABEL_PASS "PASS"
#define LABEL_EVICT "EVICT"
#define LABEL_KEY "railbench.io/fabric-check"
/* Slurm keeps a reason of any length, but sinfo -R and logs show a line: keep it to one. */
#define REASON_MAX 200

/* Host-level findings: they say the host itself is at fault. */
static bool host_kind(int kind)
{
    return kind == RB_FIND_HOST || kind == RB_FIND_HOST_TX || kind == RB_FIND_HOST_RX || kind == RB_FIND_HOST_RAIL;
}

/*
 * The finding that names each host, or -1: a host-level finding first; a
 * pair finding (link, one-way, hang, latency) names both its hosts unless a
 * host-level finding already explains one of them (a dead port hangs every
 * pair through it, and its peers passed). Rail and model findings name no host.
 */
static void named_hosts(const struct rb_check_analysis *a, int nhosts, int *by)
{
    for (int h = 0; h < nhosts; h++)
        by[h] = -1;
    for (size_t i = 0; i < a->nfindings; i++) {
        const struct rb_check_finding *f = &a->findings[i];
        if (host_kind(f->kind) && f->host >= 0 && by[f->host] < 0)
            by[f->host] = (int)i;
    }
    for (size_t i = 0; i < a->nfindings; i++) {
        const struct rb_check_finding *f = &a->findings[i];
        if (host_kind(f->kind) || f->host < 0 || f->peer < 0)
            continue;
        bool explained = (by[f->host] >= 0 && host_kind(a->findings[by[f->host]].kind)) ||
                         (by[f->peer] >= 0 && host_kind(a->findings[by[f->peer]].kind));
        if (explained)
            continue;
        if (by[f->host] < 0)
            by[f->host] = (int)i;
        if (by[f->peer] < 0)
            by[f->peer] = (int)i;
    }
}

/* The finding as a one-line ASCII reason a shell and scontrol take as is: no quotes, $, ` or \, arrows spelled out. */
static void reason_of(const struct rb_check_finding *f, char *out, size_t len)
{
    static const struct {
        const char *from, *to;
    } subst[] = {{"→", "->"}, {"⇄", "<->"}, {"×", "x"}, {"\"", "'"}};
    char text[1200];
    snprintf(text, sizeof text, "railbench fabric check: %s", f->text);
    size_t o = 0;
    for (const char *p = text; *p && o + 4 < len && o < REASON_MAX;) {
        bool done = false;
        for (size_t k = 0; k < sizeof subst / sizeof *subst && !done; k++) {
            size_t n = strlen(subst[k].from);
            if (strncmp(p, subst[k].from, n) == 0) {
                o += (size_t)snprintf(out + o, len - o, "%s", subst[k].to);
                p += n;
                done = true;
            }
        }
        if (done)
            continue;
        unsigned char c = (unsigned char)*p++;
        if (c >= 0x20 && c < 0x7f && c != '$' && c != '`' && c != '\\')
            out[o++] = (char)c;
        else if (c < 0x80)
            out[o++] = ' ';
    }
    out[o < len ? o : len - 1] = '\0';
}

/* Runs scontrol update for one host (RB_SCONTROL names another scontrol, e.g. a wrapper). The exit status or -errno. */
static int run_scontrol(const char *node, const char *reason)
{
    const char *exe = getenv("RB_SCONTROL");
    char nodearg[160], reasonarg[REASON_MAX + 64];
    snprintf(nodearg, sizeof nodearg, "NodeName=%s", node);
    snprintf(reasonarg, sizeof reasonarg, "Reason=%s", reason);
    char *argv[] = {(char *)(exe && *exe ? exe : "scontrol"), "update", nodearg, "State=DRAIN", reasonarg, NULL};
    pid_t pid;
    fflush(stdout);
    fflush(stderr);
    int rc = posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ);
    if (rc != 0)
        return -rc;
    int st = 0;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -errno;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

/* The YAML of one Node: its label, and for a named host the finding as annotation and a NoSchedule taint. */
static void node_yaml(struct rb_buf *y, const char *node, const struct rb_check_finding *f)
{
    rb_buf_printf(y, "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: %s\n  labels:\n    %s: %s\n", node,
                  LABEL_KEY, f ? LABEL_EVICT : LABEL_PASS);
    if (!f)
        return;
    char reason[REASON_MAX + 32];
    reason_of(f, reason, sizeof reason);
    rb_buf_printf(y, "  annotations:\n    %s-reason: \"%s\"\nspec:\n  taints:\n  - key: %s\n    value: %s\n"
                     "    effect: NoSchedule\n", LABEL_KEY, reason, LABEL_KEY, rb_check_kind_name(f->kind));
}

int rb_check_act(struct rb_harness *h, const struct rb_check_opts *o, const struct rb_check_run *R,
                 const struct rb_check_analysis *a, cJSON *summary, struct rb_buf *table)
{
    if (!o->drain && !o->k8s_nodes)
        return 0;
    int *by = malloc(((size_t)R->nhosts + 1) * sizeof *by), rc = 0;
    if (!by)
        return RB_EXIT_RUNTIME;
    named_hosts(a, R->nhosts, by);
    cJSON *act = cJSON_AddObjectToObject(summary, "actions");
    if (o->drain) {
        cJSON *arr = cJSON_AddArrayToObject(act, "drain");
        rb_buf_printf(table, "\n## actions: Slurm%s\n\n", o->dry_run ? " (--dry-run: not run)" : "");
        int n = 0;
        for (int x = 0; x < R->nhosts; x++) {
            if (by[x] < 0)
                continue;
            char reason[REASON_MAX + 32], cmd[REASON_MAX + 256];
            reason_of(&a->findings[by[x]], reason, sizeof reason);
            snprintf(cmd, sizeof cmd, "scontrol update NodeName=%s State=DRAIN Reason=\"%s\"", R->names[x], reason);
            int st = o->dry_run ? 0 : run_scontrol(R->names[x], reason);
            rb_buf_printf(table, "%s%s\n", cmd, st ? " # failed" : "");
            cJSON *e = cJSON_CreateObject();
            cJSON_AddStringToObject(e, "host", R->names[x]);
            cJSON_AddStringToObject(e, "finding", a->findings[by[x]].name);
            cJSON_AddStringToObject(e, "reason", reason);
            cJSON_AddStringToObject(e, "command", cmd);
            cJSON_AddBoolToObject(e, "run", !o->dry_run);
            cJSON_AddNumberToObject(e, "exit", st);
            cJSON_AddItemToArray(arr, e);
            if (!o->dry_run) {
                char name[96];
                snprintf(name, sizeof name, "drain %s", R->names[x]);
                rb_result_check(&h->result, name, st == 0, "%s: %s", cmd,
                                st == 0 ? "done" : st < 0 ? strerror(-st) : "scontrol failed");
                if (st) {
                    rb_error("--drain: %s: %s", cmd, st < 0 ? strerror(-st) : "scontrol exited non-zero");
                    rc = RB_EXIT_RUNTIME;
                }
            }
            n++;
        }
        if (n == 0)
            rb_buf_printf(table, "no host to drain: no finding names one\n");
    }
    if (o->k8s_nodes) {
        struct rb_buf y = {0};
        rb_buf_printf(&y, "# railbench fabric check: %s=%s on hosts a finding names (tainted NoSchedule), %s on the "
                          "others.\n# Apply with: kubectl apply -f %s\n", LABEL_KEY, LABEL_EVICT, LABEL_PASS,
                      o->k8s_nodes);
        for (int x = 0; x < R->nhosts; x++)
            node_yaml(&y, R->names[x], by[x] >= 0 ? &a->findings[by[x]] : NULL);
        int w = y.oom ? -ENOMEM : rb_file_write_atomic(o->k8s_nodes, y.s, y.len);
        rb_buf_free(&y);
        if (w) {
            rb_error("--k8s-nodes %s: cannot write it: %s", o->k8s_nodes, strerror(-w));
            rc = RB_EXIT_RUNTIME;
        } else {
            cJSON_AddStringToObject(act, "k8s_nodes", o->k8s_nodes);
            rb_buf_printf(table, "\n## actions: Kubernetes\n\n%s written: kubectl apply -f %s\n", o->k8s_nodes,
                          o->k8s_nodes);
        }
    }
    free(by);
    return rc;
}
