/* Inference traces: Mooncake JSON lines and BurstGPT CSV read into one arena, each block's seen flag, the hit rate. */
#include "kv_trace_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "railbench/file.h"
#include "railbench/mix.h"

/* Mooncake's hash_ids stand for 512-token blocks (FAST25-release/README.md, "Trace Format"). */
#define MOONCAKE_BLOCK_TOKENS 512
/* The largest integer a JSON number holds exactly where numbers are doubles (RFC 7493, I-JSON): 2^53 - 1. */
#define KVT_INT_MAX 9007199254740991.0
/* The hash set's empty slot: above KVT_INT_MAX, so never an id. */
#define KVT_EMPTY UINT64_MAX

/* What arena_ points to: the skipped rows, then every request's ids in order, then their seen flags. */
struct kvt_arena {
    size_t skipped;
    uint64_t ids[];
};

/* The state of one load while it reads the file. */
struct kvt_load {
    const char *path;
    char *err;
    size_t errlen;
    size_t line;                  /* 1-based number of the line being read */
    bool sniffed;
    enum rb_kvtrace_fmt fmt;
    struct rb_kvtrace_req *req;   /* t_s holds the raw timestamp (ms or s) until the end */
    size_t n, cap;
    struct kvt_arena *arena;
    size_t n_ids, cap_ids;
    size_t rows;                  /* requests read, skipped ones included */
    double t_prev;                /* the last row's raw timestamp */
    size_t skipped;
    /* BurstGPT: the header's column count and where the three columns read are; one line's fields. */
    size_t ncols, col_ts, col_in, col_out;
    char *scratch;
    size_t scratch_cap;
    char **fld;
    size_t fld_cap;
};

__attribute__((format(printf, 2, 3))) static int kvt_fail(struct kvt_load *ld, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (ld->err && ld->errlen)
        snprintf(ld->err, ld->errlen, "%s:%zu: %s", ld->path, ld->line, msg);
    return -EINVAL;
}

static int kvt_oom(struct kvt_load *ld)
{
    if (ld->err && ld->errlen)
        snprintf(ld->err, ld->errlen, "%s:%zu: out of memory", ld->path, ld->line);
    return -ENOMEM;
}

/* Makes room in *p for need elements of elem bytes after head bytes, doubling. Returns 0 or -ENOMEM. */
static int kvt_reserve(void **p, size_t *cap, size_t need, size_t elem, size_t head)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 64;
    while (c < need) {
        if (c > SIZE_MAX / 2)
            return -ENOMEM;
        c *= 2;
    }
    if (c > (SIZE_MAX - head) / elem)
        return -ENOMEM;
    void *q = realloc(*p, head + c * elem);
    if (!q)
        return -ENOMEM;
    *p = q;
    *cap = c;
    return 0;
}

static bool kvt_blank(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (s[i] != ' ' && s[i] != '\t')
            return false;
    return true;
}

/* Checks that ts (raw units) does not go back from the row before; name is the field's name in the file. */
static int kvt_arrival(struct kvt_load *ld, double ts, const char *name)
{
    if (ld->rows > 0 && ts < ld->t_prev)
        return kvt_fail(ld, "\"%s\" %.15g is before the previous request's %.15g: requests must be in arrival order",
                        name, ts, ld->t_prev);
    ld->t_prev = ts;
    ld->rows++;
    return 0;
}

/* Appends one request (t_s raw) and returns it, or NULL when out of memory. */
static struct rb_kvtrace_req *kvt_push(struct kvt_load *ld)
{
    if (kvt_reserve((void **)&ld->req, &ld->cap, ld->n + 1, sizeof *ld->req, 0) != 0)
        return NULL;
    struct rb_kvtrace_req *r = &ld->req[ld->n++];
    memset(r, 0, sizeof *r);
    return r;
}

/* ---- Mooncake: one JSON object a line ---- */

/*
 * A small JSON reader for one line, in place of cJSON: a trace line is mostly
 * ids, and cJSON's node per number took twice this reader's time on a
 * 24k-request trace. It reads RFC 8259's grammar (strings' escapes checked,
 * not decoded) and keeps integers exact.
 */
struct jp {
    const char *s;
    size_t i, len;
};

#define JP_DEPTH_MAX 64

static void jp_ws(struct jp *p)
{
    while (p->i < p->len && (p->s[p->i] == ' ' || p->s[p->i] == '\t' || p->s[p->i] == '\r'))
        p->i++;
}

static bool jp_eat(struct jp *p, char c)
{
    jp_ws(p);
    if (p->i < p->len && p->s[p->i] == c) {
        p->i++;
        return true;
    }
    return false;
}

static bool jp_digit(const struct jp *p)
{
    return p->i < p->len && p->s[p->i] >= '0' && p->s[p->i] <= '9';
}

/* A string at the cursor: [*str, *str + *n) is its text between the quotes, escapes as written. */
static bool jp_string(struct jp *p, const char **str, size_t *n)
{
    if (p->i >= p->len || p->s[p->i] != '"')
        return false;
    size_t start = ++p->i;
    while (p->i < p->len) {
        unsigned char c = (unsigned char)p->s[p->i];
        if (c == '"') {
            *str = p->s + start;
            *n = p->i++ - start;
            return true;
        }
        if (c < 0x20)
            return false;
        if (c == '\\') {
            if (++p->i >= p->len)
                return false;
            if (p->s[p->i] == 'u') {
                for (int k = 0; k < 4; k++)
                    if (++p->i >= p->len || !strchr("0123456789abcdefABCDEF", p->s[p->i]))
                        return false;
            } else if (!memchr("\"\\/bfnrt", p->s[p->i], 8)) {
                return false;
            }
        }
        p->i++;
    }
    return false;
}

/* A number at the cursor (RFC 8259's grammar); *integer when it has no sign, fraction or exponent. */
static bool jp_number(struct jp *p, bool *integer)
{
    *integer = true;
    if (p->i < p->len && p->s[p->i] == '-') {
        p->i++;
        *integer = false;
    }
    if (!jp_digit(p))
        return false;
    if (p->s[p->i++] != '0')
        while (jp_digit(p))
            p->i++;
    if (p->i < p->len && p->s[p->i] == '.') {
        p->i++;
        *integer = false;
        if (!jp_digit(p))
            return false;
        while (jp_digit(p))
            p->i++;
    }
    if (p->i < p->len && (p->s[p->i] == 'e' || p->s[p->i] == 'E')) {
        p->i++;
        *integer = false;
        if (p->i < p->len && (p->s[p->i] == '+' || p->s[p->i] == '-'))
            p->i++;
        if (!jp_digit(p))
            return false;
        while (jp_digit(p))
            p->i++;
    }
    return true;
}

/* Any value at the cursor, passed over. */
static bool jp_skip(struct jp *p, int depth)
{
    const char *str;
    size_t n;
    bool integer;
    jp_ws(p);
    if (p->i >= p->len)
        return false;
    char c = p->s[p->i], close = c == '[' ? ']' : '}';
    if (c == '"')
        return jp_string(p, &str, &n);
    if (c == '-' || (c >= '0' && c <= '9'))
        return jp_number(p, &integer);
    static const char *const lit[] = {"true", "false", "null"};
    for (int k = 0; k < 3; k++) {
        size_t l = strlen(lit[k]);
        if (p->len - p->i >= l && memcmp(p->s + p->i, lit[k], l) == 0) {
            p->i += l;
            return true;
        }
    }
    if ((c != '[' && c != '{') || depth >= JP_DEPTH_MAX)
        return false;
    p->i++;
    if (jp_eat(p, close))
        return true;
    do {
        jp_ws(p);
        if (c == '{' && (!jp_string(p, &str, &n) || !jp_eat(p, ':')))
            return false;
        if (!jp_skip(p, depth + 1))
            return false;
    } while (jp_eat(p, ','));
    return jp_eat(p, close);
}

/* An integer 0..max at the cursor into *v; false for any other value (or none). */
static bool jp_uint(struct jp *p, uint64_t max, uint64_t *v)
{
    size_t start = p->i;
    bool integer;
    if (!jp_number(p, &integer) || !integer)
        return false;
    uint64_t x = 0;
    for (size_t k = start; k < p->i; k++) {
        unsigned d = (unsigned)(p->s[k] - '0');
        if (x > (max - d) / 10)
            return false;
        x = x * 10 + d;
    }
    *v = x;
    return true;
}

/* One request's members as read; have_* until each is found. */
struct mc_req {
    double ts;
    uint64_t in, out;
    uint32_t nb;
    bool have_ts, have_in, have_out, have_ids;
};

/* hash_ids' array at the cursor: its ids appended to the arena. */
static int mc_ids(struct kvt_load *ld, struct jp *p, struct mc_req *q)
{
    jp_ws(p);
    if (!jp_eat(p, '['))
        return kvt_fail(ld, "\"hash_ids\" is not an array");
    size_t k = 0;
    if (!jp_eat(p, ']')) {
        do {
            jp_ws(p);
            uint64_t id;
            if (!jp_uint(p, (uint64_t)KVT_INT_MAX, &id))
                return kvt_fail(ld, "hash_ids[%zu] is not an integer from 0 to %.0f", k, KVT_INT_MAX);
            if (kvt_reserve((void **)&ld->arena, &ld->cap_ids, ld->n_ids + k + 1, sizeof(uint64_t),
                            sizeof(struct kvt_arena)) != 0)
                return kvt_oom(ld);
            ld->arena->ids[ld->n_ids + k++] = id;
        } while (jp_eat(p, ','));
        if (!jp_eat(p, ']'))
            return kvt_fail(ld, "not JSON (column %zu)", p->i + 1);
    }
    ld->n_ids += k; /* fewer than RB_KVTRACE_LINE_MAX / 2: fits n_blocks */
    q->nb = (uint32_t)k;
    return 0;
}

/* The value of member key (n bytes) at the cursor: one of the four read, or any other, skipped. */
static int mc_member(struct kvt_load *ld, struct jp *p, const char *key, size_t n, struct mc_req *q)
{
#define KEY_IS(k) (n == sizeof(k) - 1 && memcmp(key, k, n) == 0)
    bool *have = KEY_IS("timestamp") ? &q->have_ts : KEY_IS("input_length") ? &q->have_in
                 : KEY_IS("output_length") ? &q->have_out : KEY_IS("hash_ids") ? &q->have_ids : NULL;
    jp_ws(p);
    if (!have)
        return jp_skip(p, 1) ? 0 : kvt_fail(ld, "not JSON (column %zu)", p->i + 1);
    if (*have)
        return kvt_fail(ld, "\"%.*s\" twice", (int)n, key);
    *have = true;
    if (have == &q->have_ids)
        return mc_ids(ld, p, q);
    if (have == &q->have_in || have == &q->have_out) {
        if (!jp_uint(p, UINT32_MAX, have == &q->have_in ? &q->in : &q->out))
            return kvt_fail(ld, "\"%.*s\" is not an integer from 0 to %u", (int)n, key, UINT32_MAX);
        return 0;
    }
    size_t start = p->i;
    bool integer;
    char *end = NULL;
    if (jp_number(p, &integer))
        q->ts = strtod(p->s + start, &end); /* the number is followed by a character no number holds */
    if (end != p->s + p->i || !(q->ts >= 0 && q->ts <= KVT_INT_MAX))
        return kvt_fail(ld, "\"timestamp\" is not a number of milliseconds from 0 to %.0f", KVT_INT_MAX);
    return 0;
#undef KEY_IS
}

static int mc_line(struct kvt_load *ld, const char *s, size_t len)
{
    struct jp p = {s, 0, len};
    struct mc_req q = {0};
    if (!jp_eat(&p, '{'))
        return kvt_fail(ld, "not a JSON object");
    if (!jp_eat(&p, '}')) {
        do {
            const char *key;
            size_t n;
            jp_ws(&p);
            if (!jp_string(&p, &key, &n) || !jp_eat(&p, ':'))
                return kvt_fail(ld, "not JSON (column %zu)", p.i + 1);
            int rc = mc_member(ld, &p, key, n, &q);
            if (rc != 0)
                return rc;
        } while (jp_eat(&p, ','));
        if (!jp_eat(&p, '}'))
            return kvt_fail(ld, "not JSON (column %zu)", p.i + 1);
    }
    jp_ws(&p);
    if (p.i < len)
        return kvt_fail(ld, "text after the JSON object (column %zu)", p.i + 1);
    const char *missing = !q.have_ts ? "timestamp" : !q.have_in ? "input_length"
                          : !q.have_out ? "output_length" : !q.have_ids ? "hash_ids" : NULL;
    if (missing)
        return kvt_fail(ld, "no \"%s\"", missing);
    int rc = kvt_arrival(ld, q.ts, "timestamp");
    if (rc != 0)
        return rc;
    struct rb_kvtrace_req *r = kvt_push(ld);
    if (!r)
        return kvt_oom(ld);
    r->t_s = q.ts;
    r->input_tokens = (uint32_t)q.in;
    r->output_tokens = (uint32_t)q.out;
    r->n_blocks = q.nb;
    return 0;
}

/* ---- BurstGPT: CSV with a header ---- */

/*
 * Splits one CSV line into ld->fld: unquoted, NUL-terminated copies in
 * ld->scratch ("" inside quotes is one quote; a quoted field ends on its
 * line). Returns the field count, or -1 with *why, or -ENOMEM.
 */
static long csv_split(struct kvt_load *ld, const char *s, size_t len, const char **why)
{
    /* Each field's text is at most its raw bytes, and its NUL takes its comma's place: len + 1 in all. */
    if (kvt_reserve((void **)&ld->scratch, &ld->scratch_cap, len + 1, 1, 0) != 0)
        return -ENOMEM;
    char *o = ld->scratch;
    size_t nf = 0, i = 0;
    for (;;) {
        if (kvt_reserve((void **)&ld->fld, &ld->fld_cap, nf + 1, sizeof *ld->fld, 0) != 0)
            return -ENOMEM;
        ld->fld[nf++] = o;
        if (i < len && s[i] == '"') {
            for (i++;; i++) {
                if (i >= len) {
                    *why = "a quoted field has no closing quote on its line";
                    return -1;
                }
                if (s[i] == '"' && (i + 1 >= len || s[i + 1] != '"'))
                    break;
                *o++ = s[i];
                i += s[i] == '"';
            }
            if (++i < len && s[i] != ',') {
                *why = "text after a quoted field's closing quote";
                return -1;
            }
        } else {
            for (; i < len && s[i] != ','; i++) {
                if (s[i] == '"') {
                    *why = "a quote inside an unquoted field";
                    return -1;
                }
                *o++ = s[i];
            }
        }
        *o++ = '\0';
        if (i >= len)
            return (long)nf;
        i++;
    }
}

/* f without the blanks around it (in place). */
static char *csv_trim(char *f)
{
    while (*f == ' ' || *f == '\t')
        f++;
    size_t l = strlen(f);
    while (l > 0 && (f[l - 1] == ' ' || f[l - 1] == '\t'))
        f[--l] = '\0';
    return f;
}

/* A decimal number from 0 to KVT_INT_MAX (digits, '.', an exponent): no sign, hex, inf or nan. */
static bool csv_seconds(const char *f, double *v)
{
    if (!((*f >= '0' && *f <= '9') || *f == '.') || strspn(f, "0123456789.eE+-") != strlen(f))
        return false;
    char *end;
    double d = strtod(f, &end);
    if (*end || !(d >= 0 && d <= KVT_INT_MAX))
        return false;
    *v = d;
    return true;
}

/* Digits only, 0..UINT32_MAX. */
static bool csv_u32(const char *f, uint32_t *v)
{
    uint64_t x = 0;
    if (!*f)
        return false;
    for (; *f; f++) {
        if (*f < '0' || *f > '9')
            return false;
        x = x * 10 + (uint64_t)(*f - '0');
        if (x > UINT32_MAX)
            return false;
    }
    *v = (uint32_t)x;
    return true;
}

/* Finds column name in the header's nf fields; -EINVAL when it is missing or twice. */
static int csv_column(struct kvt_load *ld, size_t nf, const char *name, size_t *col)
{
    *col = SIZE_MAX;
    for (size_t i = 0; i < nf; i++) {
        if (strcmp(ld->fld[i], name) != 0)
            continue;
        if (*col != SIZE_MAX)
            return kvt_fail(ld, "column \"%s\" twice in the header", name);
        *col = i;
    }
    return *col == SIZE_MAX ? kvt_fail(ld, "the header has no \"%s\" column", name) : 0;
}

/* The first line that is not JSON: a BurstGPT header when one of its fields is Timestamp. */
static int bg_header(struct kvt_load *ld, const char *s, size_t len)
{
    const char *why = NULL;
    long nf = csv_split(ld, s, len, &why);
    if (nf == -ENOMEM)
        return kvt_oom(ld);
    bool ts = false;
    for (long i = 0; i < nf; i++)
        ts |= strcmp(ld->fld[i] = csv_trim(ld->fld[i]), "Timestamp") == 0;
    if (!ts)
        return kvt_fail(ld, "neither a Mooncake JSON object nor a BurstGPT CSV header (Timestamp,Model,...)");
    ld->fmt = RB_KVTRACE_BURSTGPT;
    ld->ncols = (size_t)nf;
    int rc = csv_column(ld, ld->ncols, "Timestamp", &ld->col_ts);
    if (rc == 0)
        rc = csv_column(ld, ld->ncols, "Request tokens", &ld->col_in);
    if (rc == 0)
        rc = csv_column(ld, ld->ncols, "Response tokens", &ld->col_out);
    return rc;
}

static int bg_row(struct kvt_load *ld, const char *s, size_t len)
{
    const char *why = NULL;
    long nf = csv_split(ld, s, len, &why);
    if (nf == -ENOMEM)
        return kvt_oom(ld);
    if (nf < 0)
        return kvt_fail(ld, "%s", why);
    if ((size_t)nf != ld->ncols)
        return kvt_fail(ld, "%ld fields where the header has %zu", nf, ld->ncols);
    double ts;
    uint32_t in, out;
    if (!csv_seconds(csv_trim(ld->fld[ld->col_ts]), &ts))
        return kvt_fail(ld, "\"Timestamp\" is not a number of seconds from 0 to %.0f", KVT_INT_MAX);
    if (!csv_u32(csv_trim(ld->fld[ld->col_in]), &in))
        return kvt_fail(ld, "\"Request tokens\" is not an integer from 0 to %u", UINT32_MAX);
    if (!csv_u32(csv_trim(ld->fld[ld->col_out]), &out))
        return kvt_fail(ld, "\"Response tokens\" is not an integer from 0 to %u", UINT32_MAX);
    int rc = kvt_arrival(ld, ts, "Timestamp");
    if (rc != 0)
        return rc;
    if (out == 0) { /* BurstGPT's README: a failed request is logged with 0 response tokens */
        ld->skipped++;
        return 0;
    }
    struct rb_kvtrace_req *r = kvt_push(ld);
    if (!r)
        return kvt_oom(ld);
    r->t_s = ts;
    r->input_tokens = in;
    r->output_tokens = out;
    return 0;
}

/* ---- the whole file ---- */

/* The first line with text decides the format: '{' opens a Mooncake object, else it must be a CSV header. */
static int kvt_line(struct kvt_load *ld, const char *s, size_t len)
{
    if (ld->sniffed)
        return ld->fmt == RB_KVTRACE_MOONCAKE ? mc_line(ld, s, len) : bg_row(ld, s, len);
    ld->sniffed = true;
    size_t i = strspn(s, " \t");
    if (i < len && s[i] == '{') {
        ld->fmt = RB_KVTRACE_MOONCAKE;
        return mc_line(ld, s, len);
    }
    return bg_header(ld, s, len);
}

static int kvt_parse(struct kvt_load *ld, const char *data, size_t len)
{
    size_t off = len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0; /* a UTF-8 byte order mark */
    while (off < len) {
        const char *s = data + off, *nl = memchr(s, '\n', len - off);
        size_t l = nl ? (size_t)(nl - s) : len - off;
        off += l + (nl != NULL);
        ld->line++;
        if (l > RB_KVTRACE_LINE_MAX)
            return kvt_fail(ld, "line longer than %u bytes", RB_KVTRACE_LINE_MAX);
        if (memchr(s, '\0', l))
            return kvt_fail(ld, "a NUL byte");
        if (l > 0 && s[l - 1] == '\r')
            l--;
        if (kvt_blank(s, l))
            continue;
        int rc = kvt_line(ld, s, l);
        if (rc != 0)
            return rc;
    }
    ld->line++; /* where the next request would be */
    if (!ld->sniffed)
        return kvt_fail(ld, "no requests: the file is empty");
    if (ld->n == 0 && ld->skipped > 0)
        return kvt_fail(ld, "no requests: every row has 0 response tokens (failed requests)");
    if (ld->n == 0)
        return kvt_fail(ld, "no requests after the header");
    return 0;
}

/* Slot of id in the set (mask + 1 slots): where it is, or the empty slot where it would go. */
static size_t kvt_slot(const uint64_t *set, size_t mask, uint64_t id)
{
    size_t h = (size_t)rb_mix64(id) & mask;
    while (set[h] != KVT_EMPTY && set[h] != id)
        h = (h + 1) & mask;
    return h;
}

/*
 * flags[i] = 1 when ids[i] is among an earlier request's ids: per request,
 * look its ids up, then add them, in an open-addressing set at most half
 * full (O(total ids)). Returns the number of flags set, or -1 when out of memory.
 */
static int64_t kvt_seen(const uint64_t *ids, uint8_t *flags, const struct rb_kvtrace_req *req, size_t n,
                        size_t total)
{
    size_t cap = 16;
    while (cap < 2 * total)
        cap *= 2;
    uint64_t *set = malloc(cap * sizeof *set);
    if (!set)
        return -1;
    memset(set, 0xff, cap * sizeof *set);
    int64_t seen = 0;
    for (size_t r = 0, off = 0; r < n; off += req[r++].n_blocks) {
        for (size_t j = off; j < off + req[r].n_blocks; j++) {
            flags[j] = set[kvt_slot(set, cap - 1, ids[j])] == ids[j];
            seen += flags[j];
        }
        for (size_t j = off; j < off + req[r].n_blocks; j++)
            set[kvt_slot(set, cap - 1, ids[j])] = ids[j];
    }
    free(set);
    return seen;
}

/* Moves what ld read into t: the arena's flags after its ids, times relative to the first request. */
static int kvt_finish(struct kvt_load *ld, struct rb_kvtrace *t)
{
    size_t n_ids = ld->n_ids;
    if (n_ids > (SIZE_MAX - sizeof(struct kvt_arena)) / (sizeof(uint64_t) + 1))
        return kvt_oom(ld);
    struct kvt_arena *a = realloc(ld->arena, sizeof *a + n_ids * (sizeof(uint64_t) + 1));
    if (!a)
        return kvt_oom(ld);
    ld->arena = a;
    a->skipped = ld->skipped;
    uint8_t *flags = (uint8_t *)(a->ids + n_ids);
    int64_t seen = kvt_seen(a->ids, flags, ld->req, ld->n, n_ids);
    if (seen < 0)
        return kvt_oom(ld);
    bool mc = ld->fmt == RB_KVTRACE_MOONCAKE;
    double t0 = ld->req[0].t_s, unit = mc ? 1000.0 : 1.0;
    for (size_t r = 0, off = 0; r < ld->n; off += ld->req[r++].n_blocks) {
        ld->req[r].t_s = (ld->req[r].t_s - t0) / unit;
        if (mc) {
            ld->req[r].blocks = a->ids + off;
            ld->req[r].seen = flags + off;
        }
    }
    *t = (struct rb_kvtrace){.fmt = ld->fmt,
                             .block_tokens = mc ? MOONCAKE_BLOCK_TOKENS : 0,
                             .n = ld->n,
                             .req = ld->req,
                             .blocks_total = n_ids,
                             .blocks_seen = (uint64_t)seen,
                             .arena_ = a};
    ld->req = NULL;
    ld->arena = NULL;
    return 0;
}

int rb_kvtrace_load(const char *path, struct rb_kvtrace *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    if (err && errlen)
        err[0] = '\0';
    char *data = NULL;
    size_t len = 0;
    int rc = rb_file_read(path, RB_KVTRACE_FILE_MAX, &data, &len);
    if (rc != 0) {
        if (err && errlen)
            snprintf(err, errlen, "%s: cannot read: %s", path,
                     rc == -EFBIG ? "larger than 1 GiB" : strerror(-rc));
        return rc;
    }
    struct kvt_load ld = {.path = path, .err = err, .errlen = errlen};
    rc = kvt_parse(&ld, data, len);
    free(data);
    if (rc == 0)
        rc = kvt_finish(&ld, t);
    free(ld.req);
    free(ld.arena);
    free(ld.scratch);
    free(ld.fld);
    return rc;
}

void rb_kvtrace_free(struct rb_kvtrace *t)
{
    if (!t)
        return;
    free(t->req);
    free(t->arena_);
    memset(t, 0, sizeof *t);
}

size_t rb_kvtrace_skipped(const struct rb_kvtrace *t)
{
    return t && t->arena_ ? ((const struct kvt_arena *)t->arena_)->skipped : 0;
}
