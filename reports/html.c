/* HTML for reports: escaping of text from result files, and the self-contained page around tables and plots. */
#include "html_int.h"

#include <string.h>

/* Length of the valid UTF-8 sequence at s (at most n bytes), or 0 when the bytes there are not one. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    size_t len;
    unsigned min;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
        min = 0x80;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        min = 0x800;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        min = 0x10000;
    } else {
        return 0;
    }
    if (len > n)
        return 0;
    unsigned cp = c & (0x7Fu >> len);
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3Fu);
    }
    /* Overlong forms, UTF-16 surrogates and values past U+10FFFF are not text. */
    if (cp < min || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
        return 0;
    return len;
}

void rb_html_escape_n(struct rb_buf *out, const char *s, size_t n)
{
    if (!s)
        return;
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0, run = 0; /* run: bytes from i - run that need no escaping, appended in one go */
    while (i < n) {
        unsigned char c = p[i];
        const char *rep = NULL;
        size_t step = 1;
        switch (c) {
        case '&': rep = "&amp;"; break;
        case '<': rep = "&lt;"; break;
        case '>': rep = "&gt;"; break;
        case '"': rep = "&quot;"; break;
        case '\'': rep = "&#39;"; break;
        default:
            if (c < 0x20 && c != '\t' && c != '\n') {
                rep = "";
            } else if (c == 0x7F) {
                rep = "";
            } else if (c >= 0x80) {
                step = utf8_len(p + i, n - i);
                if (!step) {
                    rep = "\xEF\xBF\xBD";
                    step = 1;
                }
            }
        }
        if (!rep) {
            run += step;
            i += step;
            continue;
        }
        if (run)
            rb_buf_append(out, p + i - run, run);
        run = 0;
        rb_buf_append(out, rep, strlen(rep));
        i += step;
    }
    if (run)
        rb_buf_append(out, p + i - run, run);
}

void rb_html_escape(struct rb_buf *out, const char *s)
{
    if (s)
        rb_html_escape_n(out, s, strlen(s));
}

/*
 * Colours: one palette per scheme, chosen for contrast on its background
 * (series colours from the Okabe-Ito set, distinguishable with colour blindness).
 */
static const char css[] =
    ":root{color-scheme:light dark;--bg:#ffffff;--fg:#1f2328;--muted:#59636e;--grid:#d8dee4;--border:#d1d9e0;"
    "--head:#f6f8fa;--bad:#cf222e;--bad-bg:#ffebe9;--good:#1a7f37;--good-bg:#dafbe1;"
    "--c0:#0072b2;--c1:#d55e00;--c2:#009e73;--c3:#cc79a7;--c4:#e69f00;--c5:#56b4e9;--c6:#7a5c00;--c7:#6e6e6e}\n"
    "@media (prefers-color-scheme:dark){:root:not(.light){--bg:#0d1117;--fg:#e6edf3;--muted:#9198a1;--grid:#30363d;"
    "--border:#3d444d;--head:#161b22;--bad:#ff7b72;--bad-bg:#490202;--good:#56d364;--good-bg:#04260f;"
    "--c0:#58a6ff;--c1:#ff9e57;--c2:#3fd0a0;--c3:#f09fcf;--c4:#f2c14e;--c5:#9fd8ff;--c6:#d2a8ff;--c7:#b1bac4}}\n"
    ":root.dark{color-scheme:dark;--bg:#0d1117;--fg:#e6edf3;--muted:#9198a1;--grid:#30363d;--border:#3d444d;"
    "--head:#161b22;--bad:#ff7b72;--bad-bg:#490202;--good:#56d364;--good-bg:#04260f;"
    "--c0:#58a6ff;--c1:#ff9e57;--c2:#3fd0a0;--c3:#f09fcf;--c4:#f2c14e;--c5:#9fd8ff;--c6:#d2a8ff;--c7:#b1bac4}\n"
    "body{background:var(--bg);color:var(--fg);font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;"
    "margin:24px auto;max-width:1600px;padding:0 16px}\n"
    "h1{font-size:24px}h2{font-size:19px;margin-top:32px;border-bottom:1px solid var(--border)}"
    "h3{font-size:15px}\n"
    ".meta,.notes{color:var(--muted)}.notes{margin:6px 0 14px}\n"
    /* Headers stay in view while a long table scrolls; the columns past the key ones fold into a detail row. */
    ".wrap{max-width:100%}\n"
    "table{border-collapse:collapse;margin:8px 0;font-size:13px;max-width:100%}\n"
    "th,td{border:1px solid var(--border);padding:3px 8px}\n"
    "td.num{white-space:nowrap}\n"
    "th{background:var(--head);text-align:left;position:sticky;top:0;z-index:1}\n"
    "tr.detail>td{border-top:none;padding:0 8px 4px}\n"
    "tr.detail summary{color:var(--muted);font-size:12px;cursor:pointer}\n"
    "tr.detail dl{display:flex;flex-wrap:wrap;gap:2px 18px;margin:4px 0}\n"
    "tr.detail dt{color:var(--muted)}tr.detail dd{margin:0 0 0 4px;font-variant-numeric:tabular-nums}\n"
    "tr.detail div{display:flex}\n"
    "td.num{text-align:right;font-variant-numeric:tabular-nums}\n"
    "td.regression{color:var(--bad);background:var(--bad-bg);font-weight:600}\n"
    "td.improved{color:var(--good);background:var(--good-bg)}\n"
    ".warnings{color:var(--bad)}\n"
    "figure{margin:12px 0 24px}figcaption{color:var(--muted);font-size:12px}\n"
    "svg.plot{width:100%;height:auto;background:var(--bg)}\n"
    "svg.plot text{fill:var(--fg);font-size:12px;font-family:system-ui,sans-serif}\n"
    "svg.plot text.title{font-size:14px;font-weight:600}\n"
    "svg.plot text.tick{fill:var(--muted);font-size:11px}\n"
    "svg.plot .grid{stroke:var(--grid);stroke-width:1}\n"
    "svg.plot .axis{stroke:var(--fg);stroke-width:1}\n"
    "svg.plot .series{fill:none;stroke-width:2.2}\n"
    "svg.plot .dash{stroke-dasharray:8 5}svg.plot .dot{stroke-dasharray:2 4}svg.plot .dashdot{stroke-dasharray:10 4 2 4}\n"
    "svg.plot text.pt-label,svg.plot text.mark-label,svg.plot text.bar-label{paint-order:stroke;stroke:var(--bg);"
    "stroke-width:3px}\n"
    "svg.plot text.pt-label{fill:var(--muted);font-size:11px}\n"
    "svg.plot text.bar-label{font-size:12px;font-weight:600}\n"
    "svg.plot text.bar-label.inside{fill:#000000;stroke:none;font-weight:400}\n"
    "svg.plot .span0{fill:var(--head);fill-opacity:.6}svg.plot .span1{fill:none}svg.plot .span{stroke:var(--grid)}\n"
    "svg.plot text.span-label{fill:var(--muted);font-size:11px}\n"
    "svg.plot text.mark-label{font-weight:600}\n"
    "svg.plot .cell{stroke:var(--bg);stroke-width:1}svg.plot .cell.missing{fill:var(--grid)}\n"
    "svg.plot text.cell-label{fill:#ffffff;font-size:11px}svg.plot text.cell-label.dark{fill:#000000}\n"
    "svg.plot .ref{stroke:var(--bad);stroke-width:1.5;stroke-dasharray:6 4}\n"
    "svg.plot text.ref-label{fill:var(--bad);paint-order:stroke;stroke:var(--bg);stroke-width:4px}\n"
    "svg.plot .mark{fill:none;stroke:var(--fg);stroke-width:2}\n"
    "svg.plot .s0{stroke:var(--c0)}svg.plot .s1{stroke:var(--c1)}svg.plot .s2{stroke:var(--c2)}"
    "svg.plot .s3{stroke:var(--c3)}svg.plot .s4{stroke:var(--c4)}svg.plot .s5{stroke:var(--c5)}"
    "svg.plot .s6{stroke:var(--c6)}svg.plot .s7{stroke:var(--c7)}\n"
    "svg.plot .f0{fill:var(--c0)}svg.plot .f1{fill:var(--c1)}svg.plot .f2{fill:var(--c2)}"
    "svg.plot .f3{fill:var(--c3)}svg.plot .f4{fill:var(--c4)}svg.plot .f5{fill:var(--c5)}"
    "svg.plot .f6{fill:var(--c6)}svg.plot .f7{fill:var(--c7)}\n";

void rb_html_begin(struct rb_buf *out, const char *title)
{
    rb_buf_printf(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                       /* Nothing may be fetched or run: the report is one file, readable offline. */
                       "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
                       "style-src 'unsafe-inline'; img-src data:\">\n"
                       "<meta name=\"color-scheme\" content=\"light dark\">\n"
                       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>");
    rb_html_escape(out, title);
    rb_buf_printf(out, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<h1>", css);
    rb_html_escape(out, title);
    rb_buf_printf(out, "</h1>\n");
}

void rb_html_svg_begin(struct rb_buf *out, const char *cls, const char *id, double w, double h, const char *title,
                       double title_x)
{
    rb_buf_printf(out, "<figure>\n<svg class=\"");
    rb_html_escape(out, cls);
    rb_buf_printf(out, "\" data-plot=\"");
    rb_html_escape(out, id);
    rb_buf_printf(out, "\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" height=\"%.0f\" role=\"img\" aria-label=\"", w, h,
                  w, h);
    rb_html_escape(out, title);
    rb_buf_printf(out, "\">\n<title>");
    rb_html_escape(out, title);
    rb_buf_printf(out, "</title>\n<text class=\"title\" x=\"%.1f\" y=\"22\">", title_x);
    rb_html_escape(out, title);
    rb_buf_printf(out, "</text>\n");
}

void rb_html_end(struct rb_buf *out)
{
    rb_buf_printf(out, "</body>\n</html>\n");
}
