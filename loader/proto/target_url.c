/* Targets' URL text: split into its parts, checked for credentials and control characters, escaped for logs, percent-encoded. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "target_int.h"

int rb_target_split_url(const char *url, char *scheme, size_t slen, char *hostport, size_t hlen,
                        char *path, size_t plen)
{
    const char *sep = strstr(url, "://");
    if (!sep || sep == url || (size_t)(sep - url) >= slen)
        return -EINVAL;
    for (const char *c = url; c < sep; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              *c == '+' || *c == '-' || *c == '.'))
            return -EINVAL;
    memcpy(scheme, url, (size_t)(sep - url));
    scheme[sep - url] = '\0';
    const char *h = sep + 3, *p = h + strcspn(h, "/?#");
    if ((size_t)(p - h) >= hlen)
        return -EINVAL;
    memcpy(hostport, h, (size_t)(p - h));
    hostport[p - h] = '\0';
    if (strchr(p, '?') || strchr(p, '#'))
        return -EINVAL;
    if (strlen(p) >= plen)
        return -EINVAL;
    snprintf(path, plen, "%s", p);
    return 0;
}

void rb_target_escape(const char *s, char *out, size_t len)
{
    size_t o = 0;
    for (const unsigned char *c = (const unsigned char *)s; *c && o + 5 < len; c++) {
        if (*c == '\r' || *c == '\n' || *c == '\t') {
            out[o++] = '\\';
            out[o++] = *c == '\r' ? 'r' : *c == '\n' ? 'n' : 't';
        } else if (*c < 0x20 || *c == 0x7f) {
            o += (size_t)snprintf(out + o, len - o, "\\x%02x", *c);
        } else {
            out[o++] = (char)*c;
        }
    }
    if (len)
        out[o < len ? o : len - 1] = '\0';
}

int rb_target_check_url(const char *what, const char *url, char *err, size_t errlen)
{
    const char *sep = strstr(url, "://");
    const char *auth = sep ? sep + 3 : url;
    size_t alen = strcspn(auth, "/?#");
    const char *at = memchr(auth, '@', alen);
    if (at) {
        /* Shown without what stands between "://" and "@": a password never reaches a terminal or a log. */
        char rest[300];
        rb_target_escape(at + 1, rest, sizeof rest);
        snprintf(err, errlen,
                 "%s \"%.*s***@%s\": credentials in a URL are refused (they would land in argv, logs and "
                 "results); give them in AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or --credentials-file",
                 what, (int)(auth - url > 16 ? 16 : auth - url), url, rest);
        return -EINVAL;
    }
    for (const unsigned char *c = (const unsigned char *)url; *c; c++)
        if (*c <= 0x20 || *c == 0x7f) {
            char shown[600];
            rb_target_escape(url, shown, sizeof shown);
            snprintf(err, errlen, "%s \"%s\": %s at byte %zu; percent-encode it (%%%02X)", what, shown,
                     *c == ' ' ? "a space" : "a control character", (size_t)(c - (const unsigned char *)url), *c);
            return -EINVAL;
        }
    return 0;
}

int rb_url_escape(const char *s, bool keep_slash, char *out, size_t outlen)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        bool plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
                     *p == '-' || *p == '.' || *p == '_' || *p == '~' || (keep_slash && *p == '/');
        if (o + (plain ? 1 : 3) >= outlen)
            return -ENAMETOOLONG;
        if (plain) {
            out[o++] = (char)*p;
        } else {
            out[o++] = '%';
            out[o++] = hex[*p >> 4];
            out[o++] = hex[*p & 15];
        }
    }
    if (o >= outlen)
        return -ENAMETOOLONG;
    out[o] = '\0';
    return 0;
}
