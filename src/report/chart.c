/* chart.c - SVG line, scatter, bar and stacked bar charts and heat maps (report.h).
 *
 * Layout: title on top, plot area with axes and ticks, legend in a column on the right.  Every
 * coordinate is printed with "%.1f" and every label through cfit__fmt_tick, so the same data
 * always gives the same bytes (the golden tests in tests/unit/test_report.c rely on it).
 */
#include "report/report.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

enum { LEFT = 76, RIGHT = 170, TOP = 44, BOTTOM = 56, MAX_TICKS = 12 };

static const char *const okabe_ito[] = {
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#56B4E9", "#CC79A7", "#F0E442", "#000000",
};
static const char *const dashes[] = {"", "6 3", "2 2", "8 3 2 3"};

const char *cfit__palette(size_t i)
{
    return okabe_ito[i % (sizeof okabe_ito / sizeof okabe_ito[0])];
}

void cfit_heat_colour(double t, char out[8])
{
    static const unsigned char viridis[5][3] = {
        {68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37},
    };
    if (!(t > 0))
        t = 0;
    if (t > 1)
        t = 1;
    double s = t * 4;
    int i = (int)s;
    if (i > 3)
        i = 3;
    double f = s - i;
    int rgb[3];
    for (int k = 0; k < 3; k++)
        rgb[k] = (int)lround(viridis[i][k] + f * (viridis[i + 1][k] - viridis[i][k]));
    snprintf(out, 8, "#%02x%02x%02x", rgb[0] & 255, rgb[1] & 255, rgb[2] & 255);
}

void cfit_xml_text(cfit_buf *b, const char *s)
{
    char one[2] = {0, 0};
    for (; s && *s; s++) {
        switch (*s) {
        case '&': cfit_buf_puts(b, "&amp;"); break;
        case '<': cfit_buf_puts(b, "&lt;"); break;
        case '>': cfit_buf_puts(b, "&gt;"); break;
        case '"': cfit_buf_puts(b, "&quot;"); break;
        case '\'': cfit_buf_puts(b, "&#39;"); break;
        default:
            if ((unsigned char)*s < 0x20 && *s != '\n' && *s != '\t')
                break;   /* control characters are not allowed in XML */
            one[0] = *s;
            cfit_buf_puts(b, one);
        }
    }
}

/* %.3g of v without a trailing ".0", e.g. 1.5, 250, 0.125 -> "0.125". */
static void short_num(char *buf, size_t n, double v)
{
    if (fabs(v) < 1e-12)
        v = 0;
    snprintf(buf, n, "%.3g", v);
}

const char *cfit__fmt_tick(char *buf, size_t n, double v, cfit_tick_fmt f)
{
    char num[32];
    if (f == CFIT_FMT_BYTES) {
        static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
        int u = 0;
        while (fabs(v) >= 1024 && u < 5) {
            v /= 1024;
            u++;
        }
        short_num(num, sizeof num, v);
        snprintf(buf, n, "%s %s", num, unit[u]);
    } else if (f == CFIT_FMT_INT && fabs(v) < 1e5) {
        snprintf(buf, n, "%.0f", v);
    } else if (f == CFIT_FMT_NUM || f == CFIT_FMT_INT) {
        static const char *const unit[] = {"", "k", "M", "G", "T", "P"};
        int u = 0;
        while (fabs(v) >= 1000 && u < 5) {
            v /= 1000;
            u++;
        }
        short_num(num, sizeof num, v);
        snprintf(buf, n, "%s%s", num, unit[u]);
    } else {
        short_num(buf, n, v);
    }
    return buf;
}

typedef struct scale {
    double lo, hi;        /* data range shown (linear values; log axes keep the values, not logs) */
    int log;
    double p0, p1;        /* pixel range */
    double ticks[MAX_TICKS * 4];
    int nticks;
} scale;

static double nice_step(double range, int target)
{
    double raw = range / target;
    double mag = pow(10, floor(log10(raw)));
    double f = raw / mag;
    return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
}

/* Choose the range and ticks of an axis from data [dmin, dmax]; a log axis gets at most max_ticks + 1. */
static void scale_fit(scale *s, const cfit_axis *a, double dmin, double dmax, int zero, int max_ticks)
{
    s->log = a->log == 2 || a->log == 10 ? a->log : 0;
    if (a->min != 0 || a->max != 0) {
        dmin = a->min;
        dmax = a->max;
    }
    if (!(dmin <= dmax)) {
        dmin = s->log ? 1 : 0;
        dmax = s->log ? s->log : 1;
    }
    s->nticks = 0;
    if (s->log) {
        double base = s->log;
        double e0 = floor(log(dmin) / log(base) + 1e-9), e1 = ceil(log(dmax) / log(base) - 1e-9);
        if (e1 <= e0)
            e1 = e0 + 1;
        int every = 1;
        while ((e1 - e0) / every > max_ticks)
            every++;
        e0 = floor(e0 / every) * every;   /* ticks on multiples of `every`, both ends included */
        e1 = ceil(e1 / every) * every;
        s->lo = pow(base, e0);
        s->hi = pow(base, e1);
        for (double e = e0; e <= e1 + 1e-9 && s->nticks < MAX_TICKS * 4; e += every)
            s->ticks[s->nticks++] = pow(base, e);
        return;
    }
    if (zero && dmin > 0)
        dmin = 0;
    if (zero && dmax < 0)
        dmax = 0;
    if (dmax - dmin < 1e-300) {
        dmax = dmin + (fabs(dmin) > 0 ? fabs(dmin) : 1);
    }
    double step = nice_step(dmax - dmin, 5);
    s->lo = floor(dmin / step + 1e-9) * step;
    s->hi = ceil(dmax / step - 1e-9) * step;
    for (double v = s->lo; v <= s->hi + step * 1e-6 && s->nticks < MAX_TICKS * 4; v += step)
        s->ticks[s->nticks++] = fabs(v) < step * 1e-9 ? 0 : v;
}

static double scale_px(const scale *s, double v)
{
    double f;
    if (s->log)
        f = (log(v) - log(s->lo)) / (log(s->hi) - log(s->lo));
    else
        f = (v - s->lo) / (s->hi - s->lo);
    return s->p0 + f * (s->p1 - s->p0);
}

static int usable(const scale *s, double v)
{
    return isfinite(v) && (!s->log || v > 0);
}

static void svg_open(cfit_buf *b, const char *id, const char *title, const char *desc, int w, int h)
{
    cfit_buf_printf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" id=\"");
    cfit_xml_text(b, id);
    cfit_buf_printf(b, "\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" aria-labelledby=\"", w, h, w,
                     h);
    cfit_xml_text(b, id);
    cfit_buf_puts(b, "-t ");
    cfit_xml_text(b, id);
    cfit_buf_puts(b, "-d\" font-family=\"sans-serif\" font-size=\"12\">\n<title id=\"");
    cfit_xml_text(b, id);
    cfit_buf_puts(b, "-t\">");
    cfit_xml_text(b, title);
    cfit_buf_puts(b, "</title>\n<desc id=\"");
    cfit_xml_text(b, id);
    cfit_buf_puts(b, "-d\">");
    cfit_xml_text(b, desc);
    cfit_buf_printf(b, "</desc>\n<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", w, h);
    cfit_buf_printf(b, "<text x=\"%d\" y=\"22\" font-size=\"15\" font-weight=\"bold\">", 12);
    cfit_xml_text(b, title);
    cfit_buf_puts(b, "</text>\n");
}

static void text_at(cfit_buf *b, double x, double y, const char *anchor, const char *s)
{
    cfit_buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">", x, y, anchor);
    cfit_xml_text(b, s);
    cfit_buf_puts(b, "</text>\n");
}

/* Marker k (circle, square, triangle, diamond) at (x, y) in colour col. */
static void marker(cfit_buf *b, size_t k, double x, double y, const char *col)
{
    switch (k % 4) {
    case 0: cfit_buf_printf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\">", x, y, col); break;
    case 1:
        cfit_buf_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"7\" height=\"7\" fill=\"%s\">", x - 3.5, y - 3.5, col);
        break;
    case 2:
        cfit_buf_printf(b, "<path d=\"M%.1f %.1fL%.1f %.1fL%.1f %.1fZ\" fill=\"%s\">", x, y - 4.5, x + 4.5, y + 3.5,
                         x - 4.5, y + 3.5, col);
        break;
    default:
        cfit_buf_printf(b, "<path d=\"M%.1f %.1fL%.1f %.1fL%.1f %.1fL%.1f %.1fZ\" fill=\"%s\">", x, y - 5, x + 5, y,
                         x, y + 5, x - 5, y, col);
    }
}

static const char *marker_close(size_t k)
{
    return k % 4 == 0 ? "</circle>\n" : k % 4 == 1 ? "</rect>\n" : "</path>\n";
}

static void axes(cfit_buf *b, const cfit_chart *c, const scale *xs, const scale *ys, int w, int h)
{
    char lab[48];
    double x0 = LEFT, x1 = w - RIGHT, y0 = h - BOTTOM, y1 = TOP;
    cfit_buf_puts(b, "<g class=\"grid\" stroke=\"#d9d9d9\" stroke-width=\"1\">\n");
    for (int i = 0; i < ys->nticks; i++) {
        double y = scale_px(ys, ys->ticks[i]);
        cfit_buf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", x0, y, x1, y);
    }
    if (xs)
        for (int i = 0; i < xs->nticks; i++) {
            double x = scale_px(xs, xs->ticks[i]);
            cfit_buf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", x, y0, x, y1);
        }
    cfit_buf_puts(b, "</g>\n");
    cfit_buf_printf(b, "<path d=\"M%.1f %.1fV%.1fH%.1f\" fill=\"none\" stroke=\"#000000\"/>\n", x0, y1, y0, x1);
    for (int i = 0; i < ys->nticks; i++) {
        double y = scale_px(ys, ys->ticks[i]);
        text_at(b, x0 - 6, y + 4, "end", cfit__fmt_tick(lab, sizeof lab, ys->ticks[i], c->y.fmt));
    }
    if (xs)
        for (int i = 0; i < xs->nticks; i++) {
            double x = scale_px(xs, xs->ticks[i]);
            text_at(b, x, y0 + 16, "middle", cfit__fmt_tick(lab, sizeof lab, xs->ticks[i], c->x.fmt));
        }
    text_at(b, (x0 + x1) / 2, h - 14, "middle", c->x.label ? c->x.label : "");
    cfit_buf_printf(b, "<text x=\"16\" y=\"%.1f\" text-anchor=\"middle\" transform=\"rotate(-90 16 %.1f)\">",
                     (y0 + y1) / 2, (y0 + y1) / 2);
    cfit_xml_text(b, c->y.label ? c->y.label : "");
    cfit_buf_puts(b, "</text>\n");
}

static void legend(cfit_buf *b, const cfit_chart *c, int w, int bars)
{
    double x = w - RIGHT + 14, y = TOP + 4;
    cfit_buf_puts(b, "<g class=\"legend\">\n");
    for (size_t i = 0; i < c->nseries; i++, y += 18) {
        const cfit_series *s = &c->series[i];
        const char *col = s->reference ? "#000000" : cfit__palette(i);
        if (bars) {
            cfit_buf_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"%s\"/>\n", x, y, col);
        } else {
            cfit_buf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"",
                             x, y + 6, x + 18, y + 6, col);
            if (s->reference || dashes[i % 4][0])
                cfit_buf_printf(b, " stroke-dasharray=\"%s\"", s->reference ? "5 4" : dashes[i % 4]);
            cfit_buf_puts(b, "/>\n");
            if (!s->reference) {
                marker(b, i, x + 9, y + 6, col);
                cfit_buf_puts(b, marker_close(i));
            }
        }
        text_at(b, x + 24, y + 10, "start", s->name ? s->name : "");
    }
    cfit_buf_puts(b, "</g>\n");
}

static void point_title(cfit_buf *b, const cfit_chart *c, const cfit_series *s, double x, double y)
{
    char xs[48], ys[48];
    cfit_buf_puts(b, "<title>");
    cfit_xml_text(b, s->name ? s->name : "");
    cfit_buf_printf(b, ": %s, %s", cfit__fmt_tick(xs, sizeof xs, x, c->x.fmt),
                     cfit__fmt_tick(ys, sizeof ys, y, c->y.fmt));
    cfit_buf_puts(b, "</title>");
}

static int xy_chart(cfit_buf *b, const cfit_chart *c, int w, int h)
{
    scale xs, ys;
    memset(&xs, 0, sizeof xs);
    memset(&ys, 0, sizeof ys);
    xs.log = c->x.log;
    ys.log = c->y.log;
    double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY;
    for (size_t i = 0; i < c->nseries; i++)
        for (size_t k = 0; k < c->series[i].n; k++) {
            double x = c->series[i].x[k], y = c->series[i].y[k];
            if (!usable(&xs, x) || !usable(&ys, y))
                continue;
            xmin = fmin(xmin, x), xmax = fmax(xmax, x), ymin = fmin(ymin, y), ymax = fmax(ymax, y);
        }
    scale_fit(&xs, &c->x, xmin, xmax, 0, (w - LEFT - RIGHT) / 56);   /* room for "512 KiB" */
    scale_fit(&ys, &c->y, ymin, ymax, 1, MAX_TICKS);
    xs.p0 = LEFT, xs.p1 = w - RIGHT, ys.p0 = h - BOTTOM, ys.p1 = TOP;
    axes(b, c, &xs, &ys, w, h);
    for (size_t i = 0; i < c->nseries; i++) {
        const cfit_series *s = &c->series[i];
        const char *col = s->reference ? "#000000" : cfit__palette(i);
        cfit_buf_puts(b, "<g class=\"series\">\n");
        if (c->kind == CFIT_CHART_LINE || s->reference) {
            int first = 1;
            cfit_buf_puts(b, "<path d=\"");
            for (size_t k = 0; k < s->n; k++) {
                if (!usable(&xs, s->x[k]) || !usable(&ys, s->y[k]))
                    continue;
                cfit_buf_printf(b, "%s%.1f %.1f", first ? "M" : "L", scale_px(&xs, s->x[k]), scale_px(&ys, s->y[k]));
                first = 0;
            }
            cfit_buf_printf(b, "\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"", col);
            if (s->reference || dashes[i % 4][0])
                cfit_buf_printf(b, " stroke-dasharray=\"%s\"", s->reference ? "5 4" : dashes[i % 4]);
            cfit_buf_puts(b, "/>\n");
        }
        if (!s->reference)
            for (size_t k = 0; k < s->n; k++) {
                if (!usable(&xs, s->x[k]) || !usable(&ys, s->y[k]))
                    continue;
                marker(b, i, scale_px(&xs, s->x[k]), scale_px(&ys, s->y[k]), col);
                point_title(b, c, s, s->x[k], s->y[k]);
                cfit_buf_puts(b, marker_close(i));
            }
        cfit_buf_puts(b, "</g>\n");
    }
    legend(b, c, w, 0);
    return 0;
}

static int bar_chart(cfit_buf *b, const cfit_chart *c, int w, int h)
{
    scale ys;
    memset(&ys, 0, sizeof ys);
    double ymin = 0, ymax = 0;
    int stacked = c->kind == CFIT_CHART_STACKED;
    for (size_t k = 0; k < c->ncat; k++) {
        double sum = 0;
        for (size_t i = 0; i < c->nseries; i++) {
            double v = k < c->series[i].n ? c->series[i].y[k] : NAN;
            if (!isfinite(v))
                continue;
            sum += stacked ? v : 0;
            ymax = fmax(ymax, stacked ? sum : v);
            ymin = fmin(ymin, v);
        }
    }
    cfit_axis ya = c->y;
    ya.log = 0;
    scale_fit(&ys, &ya, ymin, ymax, 1, MAX_TICKS);
    ys.p0 = h - BOTTOM, ys.p1 = TOP;
    axes(b, c, NULL, &ys, w, h);
    double slot = (double)(w - RIGHT - LEFT) / (double)c->ncat;
    double group = slot * 0.7;
    double bw = stacked ? group : group / (double)c->nseries;
    char lab[48];
    for (size_t k = 0; k < c->ncat; k++) {
        double x0 = LEFT + slot * (double)k + (slot - group) / 2;
        double base = 0;
        cfit_buf_puts(b, "<g class=\"category\">\n");
        for (size_t i = 0; i < c->nseries; i++) {
            double v = k < c->series[i].n ? c->series[i].y[k] : NAN;
            if (!isfinite(v))
                continue;
            double lo = stacked ? base : 0, hi = lo + v;
            double ya0 = scale_px(&ys, fmin(lo, hi)), ya1 = scale_px(&ys, fmax(lo, hi));
            double x = stacked ? x0 : x0 + bw * (double)i;
            cfit_buf_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" "
                                "stroke=\"#ffffff\" stroke-width=\"0.5\"><title>",
                             x, ya1, bw, ya0 - ya1, cfit__palette(i));
            cfit_xml_text(b, c->categories[k]);
            cfit_buf_puts(b, ", ");
            cfit_xml_text(b, c->series[i].name);
            cfit_buf_printf(b, ": %s</title></rect>\n", cfit__fmt_tick(lab, sizeof lab, v, c->y.fmt));
            if (stacked)
                base = hi;
        }
        cfit_buf_puts(b, "</g>\n");
        text_at(b, LEFT + slot * ((double)k + 0.5), h - BOTTOM + 16, "middle", c->categories[k]);
    }
    legend(b, c, w, 1);
    return 0;
}

int cfit_chart_svg(cfit_buf *b, const cfit_chart *c)
{
    int bars = c->kind == CFIT_CHART_BAR || c->kind == CFIT_CHART_STACKED;
    if (!c->nseries || !c->series || (bars && (!c->ncat || !c->categories)))
        return -1;
    int w = c->width > 0 ? c->width : 640, h = c->height > 0 ? c->height : 340;
    svg_open(b, c->id, c->title, c->desc, w, h);
    if (bars)
        bar_chart(b, c, w, h);
    else
        xy_chart(b, c, w, h);
    cfit_buf_puts(b, "</svg>\n");
    return 0;
}

int cfit_heatmap_svg(cfit_buf *b, const cfit_heatmap *hm)
{
    if (!hm->nrows || !hm->ncols || !hm->v)
        return -1;
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < hm->nrows * hm->ncols; i++)
        if (isfinite(hm->v[i]))
            lo = fmin(lo, hm->v[i]), hi = fmax(hi, hm->v[i]);
    if (!(lo <= hi))
        lo = 0, hi = 1;
    int cell = hm->cell > 0 ? hm->cell : (int)fmax(8, fmin(40, 480.0 / (double)(hm->nrows > hm->ncols ? hm->nrows : hm->ncols)));
    size_t maxlen = 1;   /* margins from the longest labels (about 7 px a character at 12 px) */
    for (size_t i = 0; i < hm->nrows; i++)
        maxlen = hm->rows[i] && strlen(hm->rows[i]) > maxlen ? strlen(hm->rows[i]) : maxlen;
    int left = 16 + 7 * (int)(maxlen < 28 ? maxlen : 28);
    maxlen = 1;
    for (size_t i = 0; i < hm->ncols; i++)
        maxlen = hm->cols[i] && strlen(hm->cols[i]) > maxlen ? strlen(hm->cols[i]) : maxlen;
    int top = 44 + 7 * (int)(maxlen < 20 ? maxlen : 20);
    int w = left + cell * (int)hm->ncols + 190, h = top + cell * (int)hm->nrows + 30;
    if (h < 230)
        h = 230;
    svg_open(b, hm->id, hm->title, hm->desc, w, h);
    char col[8], lab[48];
    int label_every = cell >= 14 ? 1 : (int)ceil(14.0 / cell);
    for (size_t c = 0; c < hm->ncols; c += (size_t)label_every) {   /* column labels read upwards */
        double x = left + cell * ((double)c + 0.5) + 4, y = top - 6;
        cfit_buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" transform=\"rotate(-90 %.1f %.1f)\">", x, y, x, y);
        cfit_xml_text(b, hm->cols[c]);
        cfit_buf_puts(b, "</text>\n");
    }
    for (size_t r = 0; r < hm->nrows; r++) {
        if (r % (size_t)label_every == 0)
            text_at(b, left - 6, top + cell * ((double)r + 0.5) + 4, "end", hm->rows[r]);
        for (size_t c = 0; c < hm->ncols; c++) {
            double v = hm->v[r * hm->ncols + c];
            double x = left + cell * (double)c, y = top + cell * (double)r;
            if (!isfinite(v)) {
                cfit_buf_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%d\" height=\"%d\" fill=\"#f2f2f2\"/>\n", x, y,
                                 cell, cell);
                continue;
            }
            cfit_heat_colour(hi > lo ? (v - lo) / (hi - lo) : 1, col);
            cfit_buf_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%d\" height=\"%d\" fill=\"%s\"><title>", x, y, cell,
                             cell, col);
            cfit_xml_text(b, hm->rows[r]);
            cfit_buf_puts(b, " to ");
            cfit_xml_text(b, hm->cols[c]);
            cfit_buf_printf(b, ": %s ", cfit__fmt_tick(lab, sizeof lab, v, CFIT_FMT_PLAIN));
            cfit_xml_text(b, hm->unit);
            cfit_buf_puts(b, "</title></rect>\n");
            if (hm->mark && hm->mark[r * hm->ncols + c])
                cfit_buf_printf(b, "<path d=\"M%.1f %.1fL%.1f %.1fM%.1f %.1fL%.1f %.1f\" stroke=\"#ffffff\" "
                                    "stroke-width=\"2\"/><rect x=\"%.1f\" y=\"%.1f\" width=\"%d\" height=\"%d\" "
                                    "fill=\"none\" stroke=\"#000000\" stroke-width=\"2\"/>\n",
                                 x + 2, y + 2, x + cell - 2, y + cell - 2, x + cell - 2, y + 2, x + 2, y + cell - 2,
                                 x + 1, y + 1, cell - 2, cell - 2);
        }
    }
    /* colour scale */
    double lx = left + cell * (double)hm->ncols + 30;
    cfit_buf_puts(b, "<g class=\"legend\">\n");
    for (int i = 0; i < 10; i++) {
        cfit_heat_colour(1 - i / 9.0, col);
        cfit_buf_printf(b, "<rect x=\"%.1f\" y=\"%d\" width=\"16\" height=\"14\" fill=\"%s\"/>\n", lx, top + 14 * i, col);
    }
    text_at(b, lx + 22, top + 10, "start", cfit__fmt_tick(lab, sizeof lab, hi, CFIT_FMT_PLAIN));
    text_at(b, lx + 22, top + 14 * 10, "start", cfit__fmt_tick(lab, sizeof lab, lo, CFIT_FMT_PLAIN));
    text_at(b, lx, top - 20, "start", hm->unit ? hm->unit : "");
    if (hm->mark && hm->mark_label) {
        cfit_buf_printf(b, "<rect x=\"%.1f\" y=\"%d\" width=\"14\" height=\"14\" fill=\"#3b528b\" stroke=\"#000000\" "
                            "stroke-width=\"2\"/>\n", lx, top + 160);
        text_at(b, lx + 22, top + 172, "start", hm->mark_label);
    }
    cfit_buf_puts(b, "</g>\n</svg>\n");
    return 0;
}
