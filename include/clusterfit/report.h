/* report.h - SVG charts and a self-contained HTML page writer for `--report FILE.html`.
 *
 * One small chart module: line, scatter, grouped and stacked bar charts and a heat map, drawn as
 * inline SVG with "nice" ticks (1/2/5 x 10^k on linear axes, powers of the base on log axes),
 * units in the axis labels, a legend, the Okabe-Ito colour-blind-safe palette (plus distinct
 * markers and dashes so a grey print still separates the series), and <title>/<desc> for screen
 * readers.  Output is deterministic: coordinates are written with one decimal and tick labels
 * with %g-style formats, so golden files are stable.  The HTML writer makes XHTML-compatible
 * pages (every element closed, text escaped) with inline CSS, no script and nothing fetched:
 * a report opens offline and prints on white (docs/report.md).
 *
 * Everything appends to a cfit_buf (clusterfit/writer.h); check cfit_buf_ok() once at the end.
 */
#ifndef CLUSTERFIT_REPORT_H
#define CLUSTERFIT_REPORT_H

#include <stddef.h>
#include "clusterfit/writer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How tick labels are written. */
typedef enum cfit_tick_fmt {
    CFIT_FMT_NUM = 0,   /* SI suffixes k M G T (1000s): 1.5k, 2M */
    CFIT_FMT_BYTES,     /* binary byte sizes: 512 B, 1 KiB, 32 MiB */
    CFIT_FMT_PLAIN,     /* %.3g */
    CFIT_FMT_INT        /* whole numbers below 100000 in full (1024, 16384), SI suffixes above */
} cfit_tick_fmt;

typedef struct cfit_axis {
    const char *label;   /* with its unit, e.g. "bus bandwidth (GB/s)" */
    int log;             /* 0 = linear; 2 or 10 = logarithmic in that base */
    cfit_tick_fmt fmt;
    double min, max;     /* both 0 = from the data (linear value axes include 0) */
} cfit_axis;

typedef struct cfit_series {
    const char *name;
    const double *x, *y; /* n points; bar charts use only y (y[i] belongs to category i) */
    size_t n;
    int reference;       /* a theoretical bound: drawn as a dashed black line without markers */
} cfit_series;

typedef enum cfit_chart_kind {
    CFIT_CHART_LINE = 0, CFIT_CHART_SCATTER, CFIT_CHART_BAR, CFIT_CHART_STACKED
} cfit_chart_kind;

typedef struct cfit_chart {
    cfit_chart_kind kind;
    const char *id;                  /* unique in the page (letters, digits, '-') */
    const char *title, *desc;        /* desc: one sentence a screen reader speaks */
    cfit_axis x, y;                 /* bar charts ignore x.log/min/max */
    const char *const *categories;   /* bar charts: ncat labels along x */
    size_t ncat;
    const cfit_series *series;
    size_t nseries;
    int width, height;               /* pixels; 0 = 640 x 340 */
} cfit_chart;

/* Append c as one <svg> element.  Points that a log axis cannot show (<= 0) and non-finite
 * values are skipped.  Returns 0, or -1 (nothing appended) when c has no series or a bar chart
 * no categories. */
CFIT_API int cfit_chart_svg(cfit_buf *b, const cfit_chart *c);

typedef struct cfit_heatmap {
    const char *id, *title, *desc;
    const char *unit;                /* of the values, e.g. "GB/s" (legend label) */
    const char *const *rows, *const *cols;
    size_t nrows, ncols;
    const double *v;                 /* nrows x ncols, row-major; NaN = no value (drawn blank) */
    const unsigned char *mark;       /* NULL, or nrows x ncols flags: cells drawn with a red-free
                                        black frame and a cross (e.g. slow links) */
    const char *mark_label;          /* legend text for marked cells */
    int cell;                        /* cell size in pixels; 0 = chosen from the size */
} cfit_heatmap;

/* Append h as one <svg> element with a colour scale (viridis, colour-blind safe).  Returns 0, or
 * -1 (nothing appended) when h is empty. */
CFIT_API int cfit_heatmap_svg(cfit_buf *b, const cfit_heatmap *h);

/* Viridis colour at t in [0,1] (clamped) written to out as "#rrggbb". */
CFIT_API void cfit_heat_colour(double t, char out[8]);
/* Append s with & < > " ' escaped (XML text and attribute safe). */
CFIT_API void cfit_xml_text(cfit_buf *b, const char *s);

/* HTML page: begin writes the doctype, head (title, inline CSS incl. @media print) and opens
 * <body> with an <h1>; end closes it. */
CFIT_API void cfit_html_begin(cfit_buf *b, const char *title);
CFIT_API void cfit_html_end(cfit_buf *b);
/* <hN>text</hN>, <p>text</p> (printf-style, escaped after formatting). */
CFIT_API void cfit_html_h(cfit_buf *b, int level, const char *text);
CFIT_API void cfit_html_p(cfit_buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* A figure: opens <figure class="chart"> ... the caller appends SVG and a table ... closes it. */
CFIT_API void cfit_html_figure_begin(cfit_buf *b);
CFIT_API void cfit_html_figure_end(cfit_buf *b);
/* A table with a caption and n header cells; rows of n escaped cells; numeric-looking cells
 * are right-aligned. */
CFIT_API void cfit_html_table_begin(cfit_buf *b, const char *caption, const char *const *head, size_t n);
CFIT_API void cfit_html_row(cfit_buf *b, const char *const *cells, size_t n);
CFIT_API void cfit_html_table_end(cfit_buf *b);

#ifdef __cplusplus
}
#endif
#endif
