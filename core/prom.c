/* Prometheus exposition: a registry of the run's metrics, a /metrics listener, textfile and Pushgateway output. */
#define _GNU_SOURCE
#include "railbench/prom.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <curl/curl.h>
#include <microhttpd.h>

#include "railbench/file.h"
#include "railbench/buf.h"
#include "railbench/cli.h"
#include "railbench/result.h"

#define LE_MIN_EXP 10
#define LE_MAX_EXP 36
#define LE_PER_OCTAVE 4

struct sample {
    char *name, *type, *help, *labels;
    double value;
};

struct phase {
    char *phase, *op;
    const char *const *err;
    const char *const *extra;
    struct rb_stats *stats;
};

struct rb_prom {
    char *const_labels;
    struct sample *samples;
    size_t nsamples, capsamples;
    struct phase *phases;
    size_t nphases, capphases;

    struct MHD_Daemon *mhd;
    int fd;
    pthread_mutex_t lock;     /* guards text: the server thread reads it, the publisher swaps it */
    char *text;
};

size_t rb_prom_le_count(void)
{
    return (LE_MAX_EXP - LE_MIN_EXP + 1) * LE_PER_OCTAVE;
}

uint64_t rb_prom_le_ns(size_t i)
{
    uint64_t base = 1ull << (LE_MIN_EXP + i / LE_PER_OCTAVE);
    return base + base / LE_PER_OCTAVE * (i % LE_PER_OCTAVE);
}

void rb_prom_escape(char *out, size_t len, const char *value)
{
    size_t o = 0;
    for (const char *c = value; *c && o + 3 < len; c++) {
        if (*c == '\\' || *c == '"') {
            out[o++] = '\\';
            out[o++] = *c;
        } else if (*c == '\n') {
            out[o++] = '\\';
            out[o++] = 'n';
        } else {
            out[o++] = *c;
        }
    }
    if (len)
        out[o < len ? o : len - 1] = '\0';
}

struct rb_prom *rb_prom_new(const char *const_labels)
{
    struct rb_prom *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->const_labels = strdup(const_labels ? const_labels : "");
    p->fd = -1;
    pthread_mutex_init(&p->lock, NULL);
    if (!p->const_labels) {
        free(p);
        return NULL;
    }
    return p;
}

void rb_prom_free(struct rb_prom *p)
{
    if (!p)
        return;
    if (p->mhd)
        MHD_stop_daemon(p->mhd);
    if (p->fd >= 0)
        close(p->fd);
    for (size_t i = 0; i < p->nsamples; i++) {
        free(p->samples[i].name);
        free(p->samples[i].type);
        free(p->samples[i].help);
        free(p->samples[i].labels);
    }
    free(p->samples);
    for (size_t i = 0; i < p->nphases; i++) {
        free(p->phases[i].phase);
        free(p->phases[i].op);
        rb_stats_free(p->phases[i].stats);
    }
    free(p->phases);
    pthread_mutex_destroy(&p->lock);
    free(p->text);
    free(p->const_labels);
    free(p);
}

void rb_prom_set(struct rb_prom *p, const char *name, const char *type, const char *help,
                 const char *labels, double value)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->nsamples; i++) {
        struct sample *s = &p->samples[i];
        if (strcmp(s->name, name) == 0 && strcmp(s->labels, labels) == 0) {
            s->value = value;
            return;
        }
    }
    if (p->nsamples == p->capsamples) {
        size_t cap = p->capsamples ? p->capsamples * 2 : 64;
        struct sample *n = realloc(p->samples, cap * sizeof *n);
        if (!n)
            return;
        p->samples = n;
        p->capsamples = cap;
    }
    struct sample s = {strdup(name), strdup(type), strdup(help), strdup(labels), value};
    if (!s.name || !s.type || !s.help || !s.labels) {
        free(s.name);
        free(s.type);
        free(s.help);
        free(s.labels);
        return;
    }
    p->samples[p->nsamples++] = s;
}

void rb_prom_phase(struct rb_prom *p, const char *phase, const char *op,
                   const struct rb_stats_names *names, const struct rb_stats *total)
{
    if (!p)
        return;
    struct phase *ph = NULL;
    for (size_t i = 0; i < p->nphases; i++)
        if (strcmp(p->phases[i].phase, phase) == 0 && strcmp(p->phases[i].op, op) == 0)
            ph = &p->phases[i];
    if (!ph) {
        if (p->nphases == p->capphases) {
            size_t cap = p->capphases ? p->capphases * 2 : 8;
            struct phase *n = realloc(p->phases, cap * sizeof *n);
            if (!n)
                return;
            p->phases = n;
            p->capphases = cap;
        }
        struct phase fresh = {strdup(phase), strdup(op), NULL, NULL, rb_stats_new()};
        if (!fresh.phase || !fresh.op || !fresh.stats) {
            free(fresh.phase);
            free(fresh.op);
            rb_stats_free(fresh.stats);
            return;
        }
        p->phases[p->nphases] = fresh;
        ph = &p->phases[p->nphases++];
    }
    ph->err = names ? names->err : NULL;
    ph->extra = names ? names->extra : NULL;
    memcpy(ph->stats, total, sizeof *total);
}

/* Writes "{labels}" joining the constant labels and the series' own; nothing when both are empty. */
static void labelset(struct rb_buf *b, const char *const_labels, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void labelset(struct rb_buf *b, const char *const_labels, const char *fmt, ...)
{
    char own[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(own, sizeof own, fmt, ap);
    va_end(ap);
    if (!*own && !*const_labels)
        return;
    rb_buf_printf(b, "{%s%s%s}", own, *own && *const_labels ? "," : "", const_labels);
}

static void family(struct rb_buf *b, const char *name, const char *type, const char *help)
{
    rb_buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* Success class of a phase: HTTP phases count successes as 2xx, others as ok. */
static const char *ok_class(const struct phase *ph)
{
    for (size_t i = 0; ph->err && ph->err[i]; i++)
        if (strncmp(ph->err[i], "http_", 5) == 0)
            return "2xx";
    return "ok";
}

/* The code_class an error class belongs to: http_4xx -> 4xx, http_5xx -> 5xx, the rest -> error. */
static const char *err_code_class(const char *cls)
{
    if (strncmp(cls, "http_", 5) == 0)
        return cls + 5;
    return "error";
}

static void histogram(struct rb_buf *b, const char *cl, const char *name, const char *phase,
                      const char *op, const struct rb_hist *h)
{
    uint64_t cum = 0;
    size_t bucket = 0;
    for (size_t i = 0; i < rb_prom_le_count(); i++) {
        size_t upto = rb_hist_index(rb_prom_le_ns(i)); /* buckets below this one are < le */
        for (; bucket < upto; bucket++)
            cum += h->counts[bucket];
        rb_buf_printf(b, "%s_bucket", name);
        labelset(b, cl, "op=\"%s\",phase=\"%s\",le=\"%.9g\"", op, phase,
                 (double)rb_prom_le_ns(i) / 1e9);
        rb_buf_printf(b, " %llu\n", (unsigned long long)cum);
    }
    rb_buf_printf(b, "%s_bucket", name);
    labelset(b, cl, "op=\"%s\",phase=\"%s\",le=\"+Inf\"", op, phase);
    rb_buf_printf(b, " %llu\n%s_sum", (unsigned long long)h->count, name);
    labelset(b, cl, "op=\"%s\",phase=\"%s\"", op, phase);
    rb_buf_printf(b, " %.9f\n%s_count", (double)h->sum_ns / 1e9, name);
    labelset(b, cl, "op=\"%s\",phase=\"%s\"", op, phase);
    rb_buf_printf(b, " %llu\n", (unsigned long long)h->count);
}

static void render_phases(struct rb_buf *b, const struct rb_prom *p)
{
    const char *cl = p->const_labels;
    char ph_[256], op_[128], cls_[128];
    if (!p->nphases)
        return;
    family(b, "railbench_requests_total", "counter", "Completed operations by outcome class.");
    for (size_t i = 0; i < p->nphases; i++) {
        const struct phase *ph = &p->phases[i];
        rb_prom_escape(ph_, sizeof ph_, ph->phase);
        rb_prom_escape(op_, sizeof op_, ph->op);
        const struct rb_stats *s = ph->stats;
        rb_buf_printf(b, "railbench_requests_total");
        labelset(b, cl, "op=\"%s\",phase=\"%s\",code_class=\"%s\"", op_, ph_, ok_class(ph));
        rb_buf_printf(b, " %llu\n", (unsigned long long)(s->ops - s->errors));
        /* Error classes sharing a code class (e.g. connect and timeout) add up into one series. */
        for (size_t k = 0; ph->err && ph->err[k]; k++) {
            const char *cc = err_code_class(ph->err[k]);
            bool first = true;
            for (size_t j = 0; j < k; j++)
                if (strcmp(err_code_class(ph->err[j]), cc) == 0)
                    first = false;
            if (!first)
                continue;
            uint64_t n = 0;
            for (size_t j = k; j < RB_STATS_ERR_MAX && ph->err[j]; j++)
                if (strcmp(err_code_class(ph->err[j]), cc) == 0)
                    n += s->err[j];
            rb_buf_printf(b, "railbench_requests_total");
            labelset(b, cl, "op=\"%s\",phase=\"%s\",code_class=\"%s\"", op_, ph_, cc);
            rb_buf_printf(b, " %llu\n", (unsigned long long)n);
        }
    }
    family(b, "railbench_bytes_total", "counter", "Payload bytes moved.");
    for (size_t i = 0; i < p->nphases; i++) {
        rb_prom_escape(ph_, sizeof ph_, p->phases[i].phase);
        rb_prom_escape(op_, sizeof op_, p->phases[i].op);
        rb_buf_printf(b, "railbench_bytes_total");
        labelset(b, cl, "op=\"%s\",phase=\"%s\"", op_, ph_);
        rb_buf_printf(b, " %llu\n", (unsigned long long)p->phases[i].stats->bytes);
    }
    family(b, "railbench_errors_total", "counter", "Failed operations by error class.");
    for (size_t i = 0; i < p->nphases; i++) {
        const struct phase *ph = &p->phases[i];
        rb_prom_escape(ph_, sizeof ph_, ph->phase);
        rb_prom_escape(op_, sizeof op_, ph->op);
        for (size_t k = 0; ph->err && ph->err[k] && k < RB_STATS_ERR_MAX; k++) {
            rb_prom_escape(cls_, sizeof cls_, ph->err[k]);
            rb_buf_printf(b, "railbench_errors_total");
            labelset(b, cl, "op=\"%s\",phase=\"%s\",class=\"%s\"", op_, ph_, cls_);
            rb_buf_printf(b, " %llu\n", (unsigned long long)ph->stats->err[k]);
        }
    }
    bool any_events = false;
    for (size_t i = 0; i < p->nphases; i++)
        any_events |= p->phases[i].extra && p->phases[i].extra[0];
    if (any_events) {
        family(b, "railbench_events_total", "counter",
               "Command-specific events per phase (cache hits and misses, redirects).");
        for (size_t i = 0; i < p->nphases; i++) {
            const struct phase *ph = &p->phases[i];
            rb_prom_escape(ph_, sizeof ph_, ph->phase);
            rb_prom_escape(op_, sizeof op_, ph->op);
            for (size_t k = 0; ph->extra && ph->extra[k] && k < RB_STATS_EXTRA_MAX; k++) {
                rb_prom_escape(cls_, sizeof cls_, ph->extra[k]);
                rb_buf_printf(b, "railbench_events_total");
                labelset(b, cl, "op=\"%s\",phase=\"%s\",event=\"%s\"", op_, ph_, cls_);
                rb_buf_printf(b, " %llu\n", (unsigned long long)ph->stats->extra[k]);
            }
        }
    }
    family(b, "railbench_request_duration_seconds", "histogram",
           "Operation latency, start to last byte (from the intended start under --rate).");
    for (size_t i = 0; i < p->nphases; i++) {
        rb_prom_escape(ph_, sizeof ph_, p->phases[i].phase);
        rb_prom_escape(op_, sizeof op_, p->phases[i].op);
        histogram(b, cl, "railbench_request_duration_seconds", ph_, op_, &p->phases[i].stats->lat);
    }
    bool any_ttfb = false;
    for (size_t i = 0; i < p->nphases; i++)
        any_ttfb |= p->phases[i].stats->ttfb.count > 0;
    if (any_ttfb) {
        family(b, "railbench_ttfb_seconds", "histogram", "Time to first byte.");
        for (size_t i = 0; i < p->nphases; i++) {
            if (!p->phases[i].stats->ttfb.count)
                continue;
            rb_prom_escape(ph_, sizeof ph_, p->phases[i].phase);
            rb_prom_escape(op_, sizeof op_, p->phases[i].op);
            histogram(b, cl, "railbench_ttfb_seconds", ph_, op_, &p->phases[i].stats->ttfb);
        }
    }
}

char *rb_prom_render(const struct rb_prom *p)
{
    struct rb_buf b = {0};
    render_phases(&b, p);
    /* Samples grouped by family, families in order of first appearance. */
    for (size_t i = 0; i < p->nsamples; i++) {
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = strcmp(p->samples[j].name, p->samples[i].name) == 0;
        if (seen)
            continue;
        family(&b, p->samples[i].name, p->samples[i].type, p->samples[i].help);
        for (size_t j = i; j < p->nsamples; j++) {
            const struct sample *s = &p->samples[j];
            if (strcmp(s->name, p->samples[i].name) != 0)
                continue;
            rb_buf_printf(&b, "%s", s->name);
            labelset(&b, p->const_labels, "%s", s->labels);
            /* The shortest of %.15g and %.17g that reads back as the same double. */
            char num[40];
            snprintf(num, sizeof num, "%.15g", s->value);
            if (strtod(num, NULL) != s->value)
                snprintf(num, sizeof num, "%.17g", s->value);
            rb_buf_printf(&b, " %s\n", num);
        }
    }
    if (!b.s)
        rb_buf_printf(&b, "%s", "");
    if (b.oom) {
        free(b.s);
        return NULL;
    }
    return b.s;
}

void rb_prom_publish(struct rb_prom *p)
{
    if (!p)
        return;
    char *text = rb_prom_render(p);
    if (!text)
        return;
    pthread_mutex_lock(&p->lock);
    char *old = p->text;
    p->text = text;
    pthread_mutex_unlock(&p->lock);
    free(old);
}

static enum MHD_Result serve(void *cls, struct MHD_Connection *conn, const char *url,
                             const char *method, const char *version, const char *upload_data,
                             size_t *upload_data_size, void **req_cls)
{
    (void)version;
    (void)upload_data;
    (void)upload_data_size;
    (void)req_cls;
    struct rb_prom *p = cls;
    struct MHD_Response *resp;
    unsigned code = MHD_HTTP_OK;
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
        static const char msg[] = "only GET\n";
        code = MHD_HTTP_METHOD_NOT_ALLOWED;
        resp = MHD_create_response_from_buffer(sizeof msg - 1, (void *)msg, MHD_RESPMEM_PERSISTENT);
    } else if (strcmp(url, "/metrics") != 0) {
        static const char msg[] = "railbench serves /metrics\n";
        code = MHD_HTTP_NOT_FOUND;
        resp = MHD_create_response_from_buffer(sizeof msg - 1, (void *)msg, MHD_RESPMEM_PERSISTENT);
    } else {
        pthread_mutex_lock(&p->lock);
        char *copy = strdup(p->text ? p->text : "");
        pthread_mutex_unlock(&p->lock);
        if (!copy)
            return MHD_NO;
        resp = MHD_create_response_from_buffer(strlen(copy), copy, MHD_RESPMEM_MUST_FREE);
        if (resp)
            MHD_add_response_header(resp, "Content-Type", "text/plain; version=0.0.4; charset=utf-8");
    }
    if (!resp)
        return MHD_NO;
    enum MHD_Result r = MHD_queue_response(conn, code, resp);
    MHD_destroy_response(resp);
    return r;
}

int rb_prom_listen(struct rb_prom *p, const char *spec, char *msg, size_t msglen)
{
    char host[64] = "127.0.0.1";
    const char *port_s = spec;
    const char *colon = strrchr(spec, ':');
    if (colon) {
        size_t n = (size_t)(colon - spec);
        if (n == 0 || n >= sizeof host) {
            snprintf(msg, msglen, "\"%s\" is not [ADDR:]PORT (e.g. 9464 or 127.0.0.1:9464)", spec);
            return -EINVAL;
        }
        memcpy(host, spec, n);
        host[n] = '\0';
        port_s = colon + 1;
    }
    char *end;
    long port = strtol(port_s, &end, 10);
    struct sockaddr_in sa = {.sin_family = AF_INET};
    if (!*port_s || *end || port < 1 || port > 65535 || inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
        snprintf(msg, msglen, "\"%s\" is not [ADDR:]PORT with an IPv4 address and a port 1-65535 (e.g. 9464 or 127.0.0.1:9464)", spec);
        return -EINVAL;
    }
    sa.sin_port = htons((uint16_t)port);
    /* Bind ourselves so a port in use is a clear error, not an opaque NULL daemon. */
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, 64) != 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        snprintf(msg, msglen, "cannot listen on %s:%ld: %s", host, port, strerror(e));
        return -e;
    }
    p->fd = fd;
    p->mhd = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG, 0, NULL, NULL,
                              serve, p, MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_END);
    if (!p->mhd) {
        snprintf(msg, msglen, "libmicrohttpd could not start on %s:%ld", host, port);
        return -EIO;
    }
    p->fd = -1; /* the daemon owns and closes it now */
    if (!p->text)
        rb_prom_publish(p);
    return 0;
}

int rb_prom_write_textfile(const struct rb_prom *p, const char *dir)
{
    char *text = rb_prom_render(p);
    if (!text)
        return -ENOMEM;
    char path[4200];
    snprintf(path, sizeof path, "%s/railbench.prom", dir);
    int rc = rb_file_mkdir_p(dir);
    if (rc == 0)
        rc = rb_file_write_atomic(path, text, strlen(text));
    free(text);
    return rc;
}

struct upload {
    const char *data;
    size_t len, off;
};

static size_t read_cb(char *dst, size_t size, size_t n, void *arg)
{
    struct upload *u = arg;
    size_t want = size * n, left = u->len - u->off;
    if (want > left)
        want = left;
    memcpy(dst, u->data + u->off, want);
    u->off += want;
    return want;
}

static size_t discard_cb(char *data, size_t size, size_t n, void *arg)
{
    (void)data;
    (void)arg;
    return size * n;
}

int rb_prom_push(const struct rb_prom *p, const char *url, const char *instance, char *msg,
                 size_t msglen)
{
    char *text = rb_prom_render(p);
    CURL *c = curl_easy_init();
    char *inst = c ? curl_easy_escape(c, instance, 0) : NULL;
    int rc = -EIO;
    if (!text || !c || !inst) {
        snprintf(msg, msglen, "out of memory");
        goto fail;
    }
    char full[2048];
    size_t ul = strlen(url);
    snprintf(full, sizeof full, "%.*s/metrics/job/railbench/instance/%s",
             (int)(ul && url[ul - 1] == '/' ? ul - 1 : ul), url, inst);
    struct upload u = {text, strlen(text), 0};
    struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: text/plain; version=0.0.4");
    curl_easy_setopt(c, CURLOPT_URL, full);
    curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(c, CURLOPT_READFUNCTION, read_cb);
    curl_easy_setopt(c, CURLOPT_READDATA, &u);
    curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, (curl_off_t)u.len);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard_cb);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    CURLcode cr = curl_easy_perform(c);
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    curl_slist_free_all(hdr);
    char shown[1024];
    rb_cli_redact_url(shown, sizeof shown, url);
    if (cr != CURLE_OK)
        snprintf(msg, msglen, "push to %s failed: %s", shown, curl_easy_strerror(cr));
    else if (status < 200 || status > 299)
        snprintf(msg, msglen, "push to %s answered HTTP %ld", shown, status);
    else
        rc = 0;
fail:
    curl_free(inst);
    curl_easy_cleanup(c);
    free(text);
    return rc;
}
