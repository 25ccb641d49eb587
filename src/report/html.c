/* html.c - the self-contained HTML page around report charts (report.h).
 *
 * XHTML-compatible (every element closed, text escaped) so an XML parser can check a report;
 * CSS is inline, there is no script and nothing is fetched, and @media print keeps charts whole
 * on white paper.
 */
#include "report/report.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char css[] =
    "body{font-family:sans-serif;color:#111;background:#fff;margin:24px;max-width:1100px}\n"
    "h1{font-size:22px}h2{font-size:18px;margin-top:28px;border-bottom:1px solid #ccc}\n"
    "figure.chart{margin:12px 0;display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start}\n"
    "table{border-collapse:collapse;font-size:13px}caption{text-align:left;font-weight:bold;padding:4px 0}\n"
    "th,td{border:1px solid #ccc;padding:2px 6px}th{background:#f2f2f2}td.n{text-align:right}\n"
    "p.note{font-size:13px;color:#333}\n"
    "@media print{body{margin:0}figure.chart,table,svg{break-inside:avoid}h2{break-after:avoid}}\n";

void cfit_html_begin(cfit_buf *b, const char *title)
{
    cfit_buf_puts(b, "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n"
                      "<meta charset=\"utf-8\"/>\n"
                      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n<title>");
    cfit_xml_text(b, title);
    cfit_buf_printf(b, "</title>\n<style>\n%s</style>\n</head>\n<body>\n", css);
    cfit_html_h(b, 1, title);
}

void cfit_html_end(cfit_buf *b)
{
    cfit_buf_puts(b, "</body>\n</html>\n");
}

void cfit_html_h(cfit_buf *b, int level, const char *text)
{
    if (level < 1 || level > 6)
        level = 2;
    cfit_buf_printf(b, "<h%d>", level);
    cfit_xml_text(b, text);
    cfit_buf_printf(b, "</h%d>\n", level);
}

void cfit_html_p(cfit_buf *b, const char *fmt, ...)
{
    va_list ap;
    cfit_buf t;
    cfit_buf_init(&t);
    va_start(ap, fmt);
    cfit_buf_vprintf(&t, fmt, ap);
    va_end(ap);
    cfit_buf_puts(b, "<p class=\"note\">");
    cfit_xml_text(b, t.data ? t.data : "");
    cfit_buf_puts(b, "</p>\n");
    if (!cfit_buf_ok(&t))
        b->oom = 1;
    cfit_buf_fini(&t);
}

void cfit_html_figure_begin(cfit_buf *b)
{
    cfit_buf_puts(b, "<figure class=\"chart\">\n");
}

void cfit_html_figure_end(cfit_buf *b)
{
    cfit_buf_puts(b, "</figure>\n");
}

void cfit_html_table_begin(cfit_buf *b, const char *caption, const char *const *head, size_t n)
{
    cfit_buf_puts(b, "<table>\n<caption>");
    cfit_xml_text(b, caption);
    cfit_buf_puts(b, "</caption>\n<tr>");
    for (size_t i = 0; i < n; i++) {
        cfit_buf_puts(b, "<th>");
        cfit_xml_text(b, head[i]);
        cfit_buf_puts(b, "</th>");
    }
    cfit_buf_puts(b, "</tr>\n");
}

/* Starts like a number ("1.5 GB", "-3", "$1.2M", "87%"): right-aligned. */
static int numeric(const char *s)
{
    if (*s == '$' || *s == '-' || *s == '+')
        s++;
    return *s >= '0' && *s <= '9';
}

void cfit_html_row(cfit_buf *b, const char *const *cells, size_t n)
{
    cfit_buf_puts(b, "<tr>");
    for (size_t i = 0; i < n; i++) {
        const char *s = cells[i] ? cells[i] : "";
        cfit_buf_puts(b, numeric(s) ? "<td class=\"n\">" : "<td>");
        cfit_xml_text(b, s);
        cfit_buf_puts(b, "</td>");
    }
    cfit_buf_puts(b, "</tr>\n");
}

void cfit_html_table_end(cfit_buf *b)
{
    cfit_buf_puts(b, "</table>\n");
}
