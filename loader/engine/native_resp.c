/* The common response's head read in one pass: what http_parser costs per byte was most of the engine's own CPU. */
#include <stdbool.h>

#include "native_resp_int.h"

/* A head longer than this is rare: the general parser and its limits read it. */
#define HEAD_MAX 8192

enum { TOKEN = 1, VALUE = 2 };

/*
 * Each byte's classes: TOKEN, RFC 9110's token characters (a header's name:
 * ALPHA, DIGIT and !#$%&'*+-.^_`|~); VALUE, what a value or the reason
 * phrase may hold (visible characters, obs-text, space and tab).
 */
static const unsigned char cls[256] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, /* 0x00: tab only */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x10 */
    2, 3, 2, 3, 3, 3, 3, 3, 2, 2, 3, 3, 2, 3, 3, 2, /* 0x20: space !"#$%&'()*+,-./ */
    3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2, /* 0x30: 0-9 :;<=>? */
    2, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, /* 0x40: @ A-O */
    3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 2, 2, 2, 3, 3, /* 0x50: P-Z [\]^_ */
    3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, /* 0x60: ` a-o */
    3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 2, 3, 2, 3, 0, /* 0x70: p-z {|}~ DEL */
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, /* 0x80-0xff: obs-text */
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
};

/*
 * s's first n bytes are lower, ignoring case. Only for names and values
 * already classed, and lower of letters and '-': no byte of those classes
 * other than a letter's two cases and '-' itself becomes one of those with
 * 0x20 set (CR would become '-', and no name or value holds a CR).
 */
static bool lower_is(const char *s, const char *lower, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((s[i] | 0x20) != lower[i])
            return false;
    return true;
}

/* A name that starts with want: http_parser 2.9 marks a Transfer-Encoding on "Transfer-EncodingX" too. */
static bool name_starts(const char *name, size_t n, const char *want, size_t want_len)
{
    return n >= want_len && lower_is(name, want, want_len);
}

size_t rb_nresp_head(const char *buf, size_t k, unsigned *status, uint64_t *length)
{
    const unsigned char *p = (const unsigned char *)buf;
    size_t lim = k < HEAD_MAX ? k : HEAD_MAX, i = 13;
    if (lim < 17) /* the shortest: "HTTP/1.1 204 \r\n\r\n" */
        return 0;
    static const char version[] = "HTTP/1.1 ";
    for (size_t j = 0; j < sizeof version - 1; j++)
        if (buf[j] != version[j])
            return 0;
    unsigned st = 0;
    for (size_t j = 9; j < 12; j++) {
        if (p[j] < '0' || p[j] > '9')
            return 0;
        st = st * 10 + (unsigned)(p[j] - '0');
    }
    if (p[12] != ' ' || (st != 200 && st != 201 && st != 204 && st != 206))
        return 0;
    while (i < lim && cls[p[i]] & VALUE) /* the reason phrase */
        i++;
    bool have_len = false;
    uint64_t len = 0;
    /* At each line's end, i is at its CR; a LF follows it, then the next line or the blank line's CR LF. */
    for (;;) {
        if (i + 3 >= lim || p[i] != '\r' || p[i + 1] != '\n')
            return 0; /* not all here, longer than HEAD_MAX, a control character, or a CR alone */
        i += 2;
        if (p[i] == '\r') {
            if (p[i + 1] != '\n')
                return 0;
            i += 2;
            break;
        }
        size_t name = i;
        while (i < lim && cls[p[i]] & TOKEN)
            i++;
        if (i == name || i >= lim || p[i] != ':')
            return 0; /* no name, or a byte no name has (a folded line starts with one) */
        size_t nl = i - name;
        i++;
        while (i < lim && (p[i] == ' ' || p[i] == '\t'))
            i++;
        size_t v = i;
        while (i < lim && cls[p[i]] & VALUE)
            i++;
        const char *line = buf + name, *val = buf + v;
        size_t vl = i - v;
        /* Only the names that change how the body is read or the connection kept matter (and names that start like them). */
        switch (line[0] | 0x20) {
        case 'c':
            if (name_starts(line, nl, "content-length", 14)) {
                size_t d = 0;
                for (; d < vl && val[d] >= '0' && val[d] <= '9'; d++)
                    len = len * 10 + (uint64_t)(val[d] - '0');
                if (nl != 14 || have_len || d == 0 || d > 18)
                    return 0; /* a second one, none, or a number that may overflow */
                while (d < vl && val[d] == ' ')
                    d++;
                if (d != vl)
                    return 0; /* after the number, spaces only (as http_parser has it) */
                have_len = true;
            } else if (name_starts(line, nl, "connection", 10) &&
                       (nl != 10 || vl != 10 || !lower_is(val, "keep-alive", 10))) {
                return 0;
            }
            break;
        case 'p':
            if (name_starts(line, nl, "proxy-connection", 16))
                return 0; /* http_parser reads it as Connection */
            break;
        case 't':
            if (name_starts(line, nl, "transfer-encoding", 17))
                return 0;
            break;
        case 'u':
            if (name_starts(line, nl, "upgrade", 7))
                return 0;
            break;
        default:
            break;
        }
    }
    if (st == 204 ? have_len : !have_len)
        return 0; /* a 204 has no body and says no length; any other answer here says its length */
    *status = st;
    *length = len;
    return i;
}
