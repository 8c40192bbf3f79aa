/* Prometheus exposition: a registry of the run's metrics, a /metrics listener, textfile and Pushgateway output. */
#define _GNU_SOURCE
#include "railbench/prom.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <curl/curl.h>

#include "railbench/file.h"
#include "railbench/cli.h"
#include "railbench/result.h"

#include "prom_int.h"

#define LE_MIN_EXP 10
#define LE_MAX_EXP 36
#define LE_PER_OCTAVE 4

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
        free(p->phases[i].ex);
    }
    free(p->phases);
    for (size_t i = 0; i < p->nsteps; i++) {
        free(p->steps[i].phase);
        free(p->steps[i].op);
        free(p->steps[i].step);
        rb_hist_free(p->steps[i].h);
    }
    free(p->steps);
    pthread_mutex_destroy(&p->lock);
    free(p->text);
    free(p->om);
    free(p->pb);
    free(p->const_labels);
    free(p);
}

void rb_prom_set(struct rb_prom *p, const char *name, const char *type, const char *help,
                 const char *labels, double value)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->nsamples; i++) {
        struct rb_prom_sample *s = &p->samples[i];
        if (strcmp(s->name, name) == 0 && strcmp(s->labels, labels) == 0) {
            s->value = value;
            return;
        }
    }
    if (p->nsamples == p->capsamples) {
        size_t cap = p->capsamples ? p->capsamples * 2 : 64;
        struct rb_prom_sample *n = realloc(p->samples, cap * sizeof *n);
        if (!n)
            return;
        p->samples = n;
        p->capsamples = cap;
    }
    struct rb_prom_sample s = {strdup(name), strdup(type), strdup(help), strdup(labels), value};
    if (!s.name || !s.type || !s.help || !s.labels) {
        free(s.name);
        free(s.type);
        free(s.help);
        free(s.labels);
        return;
    }
    p->samples[p->nsamples++] = s;
}

/* The entry of {phase, op}, made when missing; NULL when out of memory. */
static struct rb_prom_phase *phase_of(struct rb_prom *p, const char *phase, const char *op)
{
    for (size_t i = 0; i < p->nphases; i++)
        if (strcmp(p->phases[i].phase, phase) == 0 && strcmp(p->phases[i].op, op) == 0)
            return &p->phases[i];
    if (p->nphases == p->capphases) {
        size_t cap = p->capphases ? p->capphases * 2 : 8;
        struct rb_prom_phase *n = realloc(p->phases, cap * sizeof *n);
        if (!n)
            return NULL;
        p->phases = n;
        p->capphases = cap;
    }
    struct rb_prom_phase fresh = {.phase = strdup(phase), .op = strdup(op), .stats = rb_stats_new()};
    if (!fresh.phase || !fresh.op || !fresh.stats) {
        free(fresh.phase);
        free(fresh.op);
        rb_stats_free(fresh.stats);
        return NULL;
    }
    p->phases[p->nphases] = fresh;
    return &p->phases[p->nphases++];
}

void rb_prom_phase(struct rb_prom *p, const char *phase, const char *op,
                   const struct rb_stats_names *names, const struct rb_stats *total)
{
    struct rb_prom_phase *ph = p ? phase_of(p, phase, op) : NULL;
    if (!ph)
        return;
    ph->err = names ? names->err : NULL;
    ph->extra = names ? names->extra : NULL;
    memcpy(ph->stats, total, sizeof *total);
    ph->has_stats = true;
}

void rb_prom_step(struct rb_prom *p, const char *phase, const char *op, const char *step, const struct rb_hist *h)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->nsteps; i++) {
        struct rb_prom_step *s = &p->steps[i];
        if (strcmp(s->phase, phase) == 0 && strcmp(s->op, op) == 0 && strcmp(s->step, step) == 0) {
            memcpy(s->h, h, sizeof *h);
            return;
        }
    }
    if (p->nsteps == p->capsteps) {
        size_t cap = p->capsteps ? p->capsteps * 2 : 16;
        struct rb_prom_step *n = realloc(p->steps, cap * sizeof *n);
        if (!n)
            return;
        p->steps = n;
        p->capsteps = cap;
    }
    struct rb_prom_step s = {strdup(phase), strdup(op), strdup(step), rb_hist_new()};
    if (!s.phase || !s.op || !s.step || !s.h) {
        free(s.phase);
        free(s.op);
        free(s.step);
        rb_hist_free(s.h);
        return;
    }
    memcpy(s.h, h, sizeof *h);
    p->steps[p->nsteps++] = s;
}

size_t rb_prom_slot(double value_s)
{
    size_t n = rb_prom_le_count(), i = 0;
    while (i < n && !(value_s < (double)rb_prom_le_ns(i) / 1e9))
        i++;
    return i;
}

void rb_prom_exemplar(struct rb_prom *p, const char *phase, const char *op, double value_s,
                      const char *request_id, double ts_s)
{
    bool valid = p && request_id && isfinite(value_s) && value_s >= 0 && isfinite(ts_s) && ts_s >= 0;
    struct rb_prom_phase *ph = valid ? phase_of(p, phase, op) : NULL;
    if (!ph)
        return;
    if (!ph->ex && !(ph->ex = calloc(RB_PROM_SLOTS(rb_prom_le_count()), sizeof *ph->ex)))
        return;
    struct rb_prom_ex *e = &ph->ex[rb_prom_slot(value_s)];
    if (e->set && e->value_s >= value_s)
        return;
    e->set = true;
    e->value_s = value_s;
    e->ts_s = ts_s;
    /* Cut at a character boundary: a UTF-8 sequence split in two would make the whole scrape invalid. */
    size_t n = strnlen(request_id, RB_PROM_ID_MAX + 1);
    if (n > RB_PROM_ID_MAX)
        for (n = RB_PROM_ID_MAX; n > 0 && ((unsigned char)request_id[n] & 0xc0) == 0x80; n--)
            ;
    memcpy(e->id, request_id, n);
    e->id[n] = '\0';
}

void rb_prom_publish(struct rb_prom *p)
{
    if (!p)
        return;
    /* Without a listener nothing serves OpenMetrics or protobuf: only the text is kept up to date. */
    char *text = rb_prom_render(p), *om = p->mhd ? rb_prom_render_openmetrics(p) : NULL;
    void *pb = NULL;
    size_t pblen = 0;
    if (!text || (p->mhd && (!om || rb_prom_render_protobuf(p, &pb, &pblen) != 0))) {
        free(text);
        free(om);
        return;
    }
    pthread_mutex_lock(&p->lock);
    char *old = p->text, *old_om = p->om;
    void *old_pb = p->pb;
    p->text = text;
    p->om = om;
    p->pb = pb;
    p->pblen = pblen;
    pthread_mutex_unlock(&p->lock);
    free(old);
    free(old_om);
    free(old_pb);
}

/* A media range's parameter value (quotes removed) into out; false when absent. */
static bool media_param(const char *params, size_t len, const char *key, char *out, size_t outlen)
{
    size_t kl = strlen(key);
    for (size_t i = 0; i < len;) {
        while (i < len && (params[i] == ';' || params[i] == ' ' || params[i] == '\t'))
            i++;
        size_t end = i;
        while (end < len && params[end] != ';')
            end++;
        if (end - i > kl && strncasecmp(params + i, key, kl) == 0 && params[i + kl] == '=') {
            const char *v = params + i + kl + 1;
            size_t vl = (size_t)(params + end - v);
            while (vl && (v[vl - 1] == ' ' || v[vl - 1] == '\t'))
                vl--;
            if (vl >= 2 && v[0] == '"' && v[vl - 1] == '"') {
                v++;
                vl -= 2;
            }
            snprintf(out, outlen, "%.*s", (int)vl, v);
            return true;
        }
        i = end;
    }
    return false;
}

/* The format one media range names, or -1 for one railbench does not serve. */
static int media_format(const char *type, size_t tl, const char *params, size_t pl)
{
    char proto[128], enc[32];
#define IS(t) (tl == sizeof(t) - 1 && strncasecmp(type, t, tl) == 0)
    if (IS("application/vnd.google.protobuf"))
        return media_param(params, pl, "proto", proto, sizeof proto) &&
                       strcmp(proto, "io.prometheus.client.MetricFamily") == 0 &&
                       media_param(params, pl, "encoding", enc, sizeof enc) && strcmp(enc, "delimited") == 0
                   ? RB_PROM_PROTOBUF
                   : -1;
    if (IS("application/openmetrics-text"))
        return RB_PROM_OPENMETRICS;
    if (IS("text/plain") || IS("text/*") || IS("*/*"))
        return RB_PROM_TEXT;
#undef IS
    return -1;
}

enum rb_prom_format rb_prom_negotiate(const char *accept)
{
    enum rb_prom_format best = RB_PROM_TEXT;
    double best_q = 0;
    if (!accept)
        return best;
    for (const char *r = accept; *r;) {
        while (*r == ',' || *r == ' ' || *r == '\t')
            r++;
        const char *end = r + strcspn(r, ",");
        size_t tl = strcspn(r, ";,");
        while (tl && (r[tl - 1] == ' ' || r[tl - 1] == '\t'))
            tl--;
        const char *params = r + strcspn(r, ";,");
        size_t pl = (size_t)(end - params);
        char qs[32];
        double q = media_param(params, pl, "q", qs, sizeof qs) ? strtod(qs, NULL) : 1;
        int f = media_format(r, tl, params, pl);
        if (f >= 0 && q > best_q) {
            best = (enum rb_prom_format)f;
            best_q = q;
        }
        r = end;
    }
    return best;
}

static const char *const content_type[] = {
    [RB_PROM_TEXT] = "text/plain; version=0.0.4; charset=utf-8",
    [RB_PROM_OPENMETRICS] = "application/openmetrics-text; version=1.0.0; charset=utf-8",
    [RB_PROM_PROTOBUF] = ("application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; "
                          "encoding=delimited"),
};

/* A copy of the published form f (its length in *len); NULL when out of memory. */
static void *published(struct rb_prom *p, enum rb_prom_format f, size_t *len)
{
    pthread_mutex_lock(&p->lock);
    const void *src = f == RB_PROM_PROTOBUF ? p->pb : f == RB_PROM_OPENMETRICS ? (void *)p->om : (void *)p->text;
    *len = !src ? 0 : f == RB_PROM_PROTOBUF ? p->pblen : strlen(src);
    void *copy = malloc(*len + 1);
    if (copy && *len)
        memcpy(copy, src, *len);
    pthread_mutex_unlock(&p->lock);
    return copy;
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
        enum rb_prom_format f =
            rb_prom_negotiate(MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT));
        size_t len;
        void *copy = published(p, f, &len);
        if (!copy)
            return MHD_NO;
        resp = MHD_create_response_from_buffer(len, copy, MHD_RESPMEM_MUST_FREE);
        if (!resp)
            free(copy);
        else
            MHD_add_response_header(resp, "Content-Type", content_type[f]);
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
    if (!p->om)
        rb_prom_publish(p); /* the OpenMetrics and protobuf forms too, from now on */
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
