/* HTML for reports: escaping of text from result files, and the self-contained page around tables and plots. */
#ifndef RB_HTML_INT_H
#define RB_HTML_INT_H

#include <stddef.h>

#include "railbench/buf.h"

/*
 * Appends s as HTML/SVG text or attribute value: & < > " ' become entities,
 * control characters other than tab and newline are dropped, and bytes that
 * are not valid UTF-8 become U+FFFD, so no result file can add markup. NULL
 * appends nothing.
 */
void rb_html_escape(struct rb_buf *out, const char *s);

/* The same for the first n bytes of s. */
void rb_html_escape_n(struct rb_buf *out, const char *s, size_t n);

/*
 * Appends the start of a page: doctype, a Content-Security-Policy that lets
 * the page load nothing (no scripts, fonts, images or styles from anywhere but
 * the page itself), the stylesheet (light and dark through
 * prefers-color-scheme, or forced with class "dark"/"light" on <html>), and
 * <body> with an <h1> of title.
 */
void rb_html_begin(struct rb_buf *out, const char *title);

/*
 * Opens a figure of a plot: <figure><svg class="cls" data-plot="id"> of w x h
 * user units, titled (role img, <title> and a heading at title_x) with title;
 * every string escaped. The caller draws, then closes </svg> and </figure>.
 */
void rb_html_svg_begin(struct rb_buf *out, const char *cls, const char *id, double w, double h, const char *title,
                       double title_x);

/* Closes what rb_html_begin opened. */
void rb_html_end(struct rb_buf *out);

#endif
