/* The ais protocol's eviction: AIStore's evict-listrange (objects, waited for) and evict-remote-bck (a bucket's cache). */
#define _GNU_SOURCE
#include "evict_int.h"
#include "target_ais_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "railbench/buf.h"
#include "railbench/clock.h"

#define REQUEST_TIMEOUT_NS (30 * RB_NS_PER_S)
#define POLL_NS (100 * RB_NS_PER_MS)
#define BODY_LIMIT (1u << 20)

/* ---- AIStore ---- */

/*
 * AIStore's API as its docs/http_api.md and api/ package describe it:
 * multi-object evict is DELETE /v1/buckets/<bucket> with the action
 * "evict-listrange" (apc.ActEvictObjects) and a list-range value
 * ({"objnames":[...]} or {"template":"prefix{0000..0099}"}); the proxy
 * answers with the id of the job (an "xaction") it started. A job's status
 * is GET /v1/cluster?what=status with the JSON body {"id":..,"kind":..}
 * (api.GetOneXactionStatus), answered by {"kind","uuid","err","end_time",
 * "aborted"}: end_time is set once every target has finished.
 */

static uint64_t remaining(uint64_t deadline)
{
    uint64_t now = rb_clock_ns();
    return now < deadline ? deadline - now : 0;
}

/* One request to the proxy; the reply body lands in out. Returns 0 (any HTTP status) or -EIO with err. */
int rb_ais_call(const struct rb_target *t, const char *method, const char *path_query, const char *body,
                uint64_t timeout_ns, struct rb_buf *out, long *status, char *err, size_t errlen)
{
    char url[RB_URL_MAX];
    if (snprintf(url, sizeof url, "%s%s", t->endpoints[0], path_query) >= (int)sizeof url) {
        snprintf(err, errlen, "%s: request URL too long", t->name);
        return -EIO;
    }
    CURL *c = curl_easy_init();
    if (!c)
        return -ENOMEM;
    struct curl_slist *hdrs = NULL;
    char ebuf[CURL_ERROR_SIZE] = "";
    int rc = rb_target_setup(t, c, RB_LOAD_GET, &hdrs);
    struct curl_slist *l = rc ? NULL : curl_slist_append(hdrs, "Content-Type: application/json");
    if (!l) {
        curl_slist_free_all(hdrs);
        curl_easy_cleanup(c);
        snprintf(err, errlen, "%s: cannot set up a request", t->name);
        return rc ? rc : -ENOMEM;
    }
    hdrs = l;
    long ms = (long)((timeout_ns < REQUEST_TIMEOUT_NS ? timeout_ns : REQUEST_TIMEOUT_NS) / RB_NS_PER_MS);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body ? body : "");
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_PROXY, "");
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, ebuf);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, ms > 0 ? ms : 1L);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, rb_buf_curl_write);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, out);
    CURLcode cc = curl_easy_perform(c);
    *status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
    curl_slist_free_all(hdrs);
    curl_easy_cleanup(c);
    if (cc != CURLE_OK) {
        snprintf(err, errlen, "%s: %s %s failed: %s", t->name, method, path_query,
                 ebuf[0] ? ebuf : curl_easy_strerror(cc));
        return -EIO;
    }
    return 0;
}

/* "HTTP 400 <AIStore's message>" for a reply that is not 200. */
void rb_ais_http_error(const struct rb_target *t, const char *what, long status, const struct rb_buf *b, char *err,
                       size_t errlen)
{
    char msg[400];
    rb_target_error_message(t, b->s ? b->s : "", b->len, msg, sizeof msg);
    /* Not AIStore's JSON: a plain-text reason is shown on one line; an HTML error page is not. */
    if (!msg[0] && b->s && b->s[0] != '<')
        snprintf(msg, sizeof msg, "%.300s", b->s);
    for (char *c = msg; *c; c++)
        if (*c == '\r' || *c == '\n' || *c == '\t')
            *c = ' ';
    snprintf(err, errlen, "%s: %s: HTTP %ld%s%s", t->name, what, status, msg[0] ? " " : "", msg);
}

/* The job id in a reply: the body as text, without blanks or JSON quotes. */
static void job_id(const struct rb_buf *b, char *out, size_t len)
{
    const char *s = b->s ? b->s : "";
    size_t n = b->len;
    while (n && (*s == ' ' || *s == '"' || *s == '\n' || *s == '\r' || *s == '\t'))
        s++, n--;
    while (n && (s[n - 1] == ' ' || s[n - 1] == '"' || s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == '\t'))
        n--;
    snprintf(out, len, "%.*s", (int)(n < len ? n : len - 1), s);
}

/* Polls the job until it ended. Returns 0, -EIO (failed or aborted), -ETIMEDOUT or -ECANCELED. */
static int wait_job(const struct rb_target *t, const char *xid, uint64_t deadline, const volatile int *stop, char *err,
                    size_t errlen)
{
    cJSON *q = cJSON_CreateObject();
    cJSON_AddStringToObject(q, "id", xid);
    cJSON_AddStringToObject(q, "kind", "evict-listrange");
    char *body = cJSON_PrintUnformatted(q);
    cJSON_Delete(q);
    if (!body)
        return -ENOMEM;
    int rc = -ETIMEDOUT;
    long last = 0;
    for (;;) {
        if (stop && *stop) {
            rc = -ECANCELED;
            snprintf(err, errlen, "%s: eviction job %s: interrupted while waiting for it", t->name, xid);
            break;
        }
        struct rb_buf b = {.limit = BODY_LIMIT};
        long status = 0;
        rc = rb_ais_call(t, "GET", "/v1/cluster?what=status", body, remaining(deadline), &b, &status, err, errlen);
        if (rc) {
            rb_buf_free(&b);
            /* A status request cut off by the deadline means the job outlived --evict-timeout. */
            if (!remaining(deadline)) {
                rc = -ETIMEDOUT;
                snprintf(err, errlen, "%s: eviction job %s did not finish in time (last status reply: HTTP %ld)",
                         t->name, xid, last);
            }
            break;
        }
        last = status;
        if (status == 200) {
            cJSON *j = cJSON_Parse(b.s ? b.s : "");
            const cJSON *end = cJSON_GetObjectItemCaseSensitive(j, "end_time");
            const char *jerr = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "err"));
            bool aborted = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "aborted"));
            bool ended = cJSON_IsNumber(end) && end->valuedouble > 0;
            if (!cJSON_IsObject(j)) {
                snprintf(err, errlen, "%s: eviction job %s: the status reply is not AIStore's JSON", t->name, xid);
                rc = -EIO;
            } else if (aborted) {
                snprintf(err, errlen, "%s: eviction job %s was aborted", t->name, xid);
                rc = -EIO;
            } else if (jerr && *jerr) {
                snprintf(err, errlen, "%s: eviction job %s failed: %.300s", t->name, xid, jerr);
                rc = -EIO;
            } else {
                rc = ended ? 0 : -EAGAIN;
            }
            cJSON_Delete(j);
        } else if (status == 404) {
            /* A job the gateways have not registered yet: ask again. */
            rc = -EAGAIN;
        } else {
            rb_ais_http_error(t, "eviction job status", status, &b, err, errlen);
            rc = -EIO;
        }
        rb_buf_free(&b);
        if (rc != -EAGAIN)
            break;
        if (!remaining(deadline)) {
            rc = -ETIMEDOUT;
            snprintf(err, errlen, "%s: eviction job %s did not finish in time (last status reply: HTTP %ld)", t->name,
                     xid, last);
            break;
        }
        uint64_t wait = remaining(deadline) < POLL_NS ? remaining(deadline) : POLL_NS;
        rb_clock_sleep_ns(wait, stop);
    }
    free(body);
    return rc;
}

/* Starts one evict-listrange job with value and waits for it. */
static int evict_one(const struct rb_target *t, cJSON *value, uint64_t deadline, const volatile int *stop, char *err,
                     size_t errlen)
{
    cJSON *msg = cJSON_CreateObject();
    cJSON_AddStringToObject(msg, "action", "evict-listrange");
    cJSON_AddItemToObject(msg, "value", value);
    char *body = cJSON_PrintUnformatted(msg);
    cJSON_Delete(msg);
    if (!body)
        return -ENOMEM;
    char path[700];
    snprintf(path, sizeof path, "/v1/buckets/%s?provider=%s", rb_ais_of(t)->bucket, rb_ais_of(t)->provider);
    struct rb_buf b = {.limit = BODY_LIMIT};
    long status = 0;
    int rc = rb_ais_call(t, "DELETE", path, body, remaining(deadline), &b, &status, err, errlen);
    free(body);
    if (!rc && status != 200) {
        rb_ais_http_error(t, "evict-listrange", status, &b, err, errlen);
        rc = -EIO;
    }
    char xid[256] = "";
    if (!rc)
        job_id(&b, xid, sizeof xid);
    rb_buf_free(&b);
    /* No job id: nothing was left to evict, so nothing to wait for. */
    if (!rc && xid[0])
        rc = wait_job(t, xid, deadline, stop, err, errlen);
    return rc;
}

/* Index digits after prefix when name is prefix + digits, else -1; *width gets the number of digits. */
static int64_t index_of(const char *name, const char *prefix, size_t plen, int *width)
{
    if (strncmp(name, prefix, plen) != 0)
        return -1;
    const char *d = name + plen;
    size_t n = strlen(d);
    if (n == 0 || n > 18 || strspn(d, "0123456789") != n)
        return -1;
    *width = (int)n;
    return (int64_t)strtoull(d, NULL, 10);
}

/* True when names are prefix + first, first+1, ... with one digit count, and the prefix is a plain template prefix. */
static bool is_template(const struct rb_objset *names, const char *prefix)
{
    if (!prefix || !names->n || strpbrk(prefix, "{}"))
        return false;
    size_t plen = strlen(prefix);
    int width0 = 0, width = 0;
    char buf[RB_OBJSET_NAME_BYTES];
    int64_t first = index_of(rb_objset_name(names, 0, buf), prefix, plen, &width0);
    if (first < 0)
        return false;
    for (uint64_t i = 1; i < names->n; i++)
        if (index_of(rb_objset_name(names, i, buf), prefix, plen, &width) != first + (int64_t)i || width != width0)
            return false;
    return true;
}

/* evict-listrange of names: one template when they allow it, else lists of RB_EVICT_LIST_BATCH names. */
static int evict_objects(const struct rb_target *t, const struct rb_objset *names, const char *prefix,
                         uint64_t timeout_ns, const volatile int *stop, char *err, size_t errlen)
{
    if (!names->n)
        return 0;
    const uint64_t deadline = rb_clock_ns() + timeout_ns;
    if (is_template(names, prefix)) {
        size_t plen = strlen(prefix);
        char lo[RB_OBJSET_NAME_BYTES], hi[RB_OBJSET_NAME_BYTES];
        const char *first = rb_objset_name(names, 0, lo), *last = rb_objset_name(names, names->n - 1, hi);
        size_t tlen = plen + 2 * strlen(first + plen) + 8;
        char *tmpl = malloc(tlen);
        if (!tmpl)
            return -ENOMEM;
        /* AIStore pads every index to the shorter of the two bounds' digit counts, which are equal here. */
        snprintf(tmpl, tlen, "%s{%s..%s}", prefix, first + plen, last + plen);
        cJSON *value = cJSON_CreateObject();
        cJSON_AddStringToObject(value, "template", tmpl);
        free(tmpl);
        return evict_one(t, value, deadline, stop, err, errlen);
    }
    for (size_t i = 0; i < names->n; i += RB_EVICT_LIST_BATCH) {
        size_t end = i + RB_EVICT_LIST_BATCH < names->n ? i + RB_EVICT_LIST_BATCH : names->n;
        cJSON *value = cJSON_CreateObject(), *list = cJSON_AddArrayToObject(value, "objnames");
        char buf[RB_OBJSET_NAME_BYTES];
        for (size_t k = i; k < end; k++)
            cJSON_AddItemToArray(list, cJSON_CreateString(rb_objset_name(names, k, buf)));
        int rc = evict_one(t, value, deadline, stop, err, errlen);
        if (rc)
            return rc;
    }
    return 0;
}

/* evict-remote-bck with keep_bck_md: the bucket stays, its cached objects go (synchronous in AIStore). */
static int evict_bucket(const struct rb_target *t, uint64_t timeout_ns, char *err, size_t errlen)
{
    char path[700];
    snprintf(path, sizeof path, "/v1/buckets/%s?provider=%s&keep_bck_md=true", rb_ais_of(t)->bucket,
             rb_ais_of(t)->provider);
    struct rb_buf b = {.limit = BODY_LIMIT};
    long status = 0;
    int rc = rb_ais_call(t, "DELETE", path, "{\"action\":\"evict-remote-bck\"}", timeout_ns, &b, &status, err, errlen);
    if (!rc && status != 200) {
        rb_ais_http_error(t, "evict-remote-bck", status, &b, err, errlen);
        rc = -EIO;
    }
    rb_buf_free(&b);
    return rc;
}

int rb_target_ais_evict(const struct rb_target *t, const struct rb_objset *names, const char *prefix,
                        uint64_t timeout_ns, const volatile int *stop, char *err, size_t errlen)
{
    if (!names)
        return evict_bucket(t, timeout_ns, err, errlen);
    return evict_objects(t, names, prefix, timeout_ns, stop, err, errlen);
}
