/* expo.c - the metric registry of one scrape and its Prometheus text 0.0.4 / OpenMetrics 1.0
 * writers (docs/exporter.md "Exposition").
 *
 * Collectors add samples in any order; rendering groups them by family so each family is one
 * contiguous block after its HELP and TYPE lines, as both formats require.  Label values and
 * HELP text are escaped here, so collectors may pass any bytes they read from sysfs or NVML.
 */
#include "clusterfit/exporter.h"
#include "base/json.h"
#include "base/grow.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct family {
    char *name;              /* as sampled: foo_total, foo_info, foo */
    char *help;
    cfit_metric_type type;
} family;

typedef struct sample {
    size_t fam;
    const char *suffix;      /* "", "_bucket", "_sum", "_count" (static) */
    char *labels;            /* rendered: k="v",k2="v2" (escaped), may be "" */
    char le[32];             /* bucket bound, "" for other samples */
    double value;
} sample;

struct cfit_expo {
    family *fams;
    size_t nfams, capfams;
    sample *samples;
    size_t nsamples, capsamples;
    size_t last;             /* the family found last: find_family tries it and the next first */
};

const char *cfit_expo_content_type(cfit_expo_format f)
{
    return f == CFIT_EXPO_OPENMETRICS ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
                                      : "text/plain; version=0.0.4; charset=utf-8";
}

cfit_expo_format cfit_expo_negotiate(const char *accept)
{
    return accept && strstr(accept, "application/openmetrics-text") ? CFIT_EXPO_OPENMETRICS
                                                                     : CFIT_EXPO_TEXT;
}

cfit_expo *cfit_expo_new(void)
{
    return calloc(1, sizeof(cfit_expo));
}

void cfit_expo_free(cfit_expo *e)
{
    if (!e)
        return;
    cfit_expo_rollback(e, (cfit_expo_mark){0, 0});
    free(e->fams);
    free(e->samples);
    free(e);
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n > m && strcmp(s + n - m, suffix) == 0;
}

/* [a-zA-Z_:][a-zA-Z0-9_:]* for metrics (colon allowed), [a-zA-Z_][a-zA-Z0-9_]* for labels. */
static int valid_name(const char *s, int colon)
{
    if (!s || !*s)
        return 0;
    for (const char *p = s; *p; p++) {
        char c = *p;
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colon && c == ':') ||
                 (p != s && c >= '0' && c <= '9');
        if (!ok)
            return 0;
    }
    return 1;
}

static char *dup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p)
        memcpy(p, s, n);
    return p;
}

static long find_family(cfit_expo *e, const char *name)
{
    /* a collector adds a run of samples to one family, then the next family (per GPU, the same
     * families in the same order): try the last one found and its successor, then newest first */
    for (size_t i = e->last; i < e->last + 2 && i < e->nfams; i++)
        if (strcmp(e->fams[i].name, name) == 0)
            return (long)(e->last = i);
    for (size_t i = e->nfams; i-- > 0;)
        if (strcmp(e->fams[i].name, name) == 0)
            return (long)(e->last = i);
    return -1;
}

int cfit_expo_family(cfit_expo *e, const char *name, cfit_metric_type type, const char *help)
{
    if (!valid_name(name, 1) || (type == CFIT_METRIC_COUNTER && !ends_with(name, "_total")) ||
        (type == CFIT_METRIC_INFO && !ends_with(name, "_info")))
        return CFIT_EINVALID;
    long i = find_family(e, name);
    if (i >= 0)
        return e->fams[i].type == type ? 0 : CFIT_EINVALID;
    if (cfit__grow(&e->fams, &e->capfams, e->nfams + 1, sizeof *e->fams))
        return CFIT_ENOMEM;
    family *f = &e->fams[e->nfams];
    f->name = dup(name);
    f->help = dup(help ? help : "");
    f->type = type;
    if (!f->name || !f->help) {
        free(f->name);
        free(f->help);
        return CFIT_ENOMEM;
    }
    e->nfams++;
    return 0;
}

/* Append s with the escapes of a label value (\\, \", \n); HELP text (om = 0) leaves " alone. */
static void escape(cfit_buf *b, const char *s, int quote)
{
    const char *run = s;
    for (; *s; s++) {
        const char *esc = *s == '\\' ? "\\\\" : *s == '\n' ? "\\n" : quote && *s == '"' ? "\\\"" : NULL;
        if (!esc)
            continue;
        cfit_buf_printf(b, "%.*s%s", (int)(s - run), run, esc);
        run = s + 1;
    }
    cfit_buf_puts(b, run);
}

static void escape_label(cfit_buf *b, const char *s)
{
    escape(b, s, 1);
}

static int render_labels(const char *const *labels, char **out)
{
    cfit_buf b;
    cfit_buf_init(&b);
    cfit_buf_puts(&b, "");
    for (size_t i = 0; labels && labels[i]; i += 2) {
        if (!valid_name(labels[i], 0) || strncmp(labels[i], "__", 2) == 0 || strcmp(labels[i], "le") == 0 ||
            !labels[i + 1]) {
            cfit_buf_fini(&b);
            return CFIT_EINVALID;
        }
        if (i)
            cfit_buf_puts(&b, ",");
        cfit_buf_puts(&b, labels[i]);
        cfit_buf_puts(&b, "=\"");
        escape_label(&b, labels[i + 1]);
        cfit_buf_puts(&b, "\"");
    }
    if (!cfit_buf_ok(&b)) {
        cfit_buf_fini(&b);
        return CFIT_ENOMEM;
    }
    *out = b.data;
    return 0;
}

static int push(cfit_expo *e, size_t fam, const char *suffix, const char *labels, const char *le,
                double value)
{
    if (cfit__grow(&e->samples, &e->capsamples, e->nsamples + 1, sizeof *e->samples))
        return CFIT_ENOMEM;
    sample *s = &e->samples[e->nsamples];
    s->labels = dup(labels);
    if (!s->labels)
        return CFIT_ENOMEM;
    s->fam = fam;
    s->suffix = suffix;
    snprintf(s->le, sizeof s->le, "%s", le ? le : "");
    s->value = value;
    e->nsamples++;
    return 0;
}

int cfit_expo_sample(cfit_expo *e, const char *name, const char *const *labels, double value)
{
    long f = find_family(e, name);
    if (f < 0)
        return CFIT_EUNKNOWN;
    if (e->fams[f].type == CFIT_METRIC_HISTOGRAM)
        return CFIT_EINVALID;
    char *l;
    int rc = render_labels(labels, &l);
    if (rc)
        return rc;
    rc = push(e, (size_t)f, "", l, NULL, e->fams[f].type == CFIT_METRIC_INFO ? 1.0 : value);
    free(l);
    return rc;
}

int cfit_expo_histogram(cfit_expo *e, const char *name, const char *const *labels,
                        const double *bounds, const uint64_t *cumulative, size_t nb,
                        double sum, uint64_t count)
{
    long f = find_family(e, name);
    if (f < 0)
        return CFIT_EUNKNOWN;
    if (e->fams[f].type != CFIT_METRIC_HISTOGRAM)
        return CFIT_EINVALID;
    for (size_t i = 1; i < nb; i++)
        if (!(bounds[i] > bounds[i - 1]))
            return CFIT_EINVALID;
    char *l;
    int rc = render_labels(labels, &l);
    if (rc)
        return rc;
    char le[32];
    for (size_t i = 0; i < nb && !rc; i++) {
        cfit_expo_format_value(le, sizeof le, bounds[i]);
        rc = push(e, (size_t)f, "_bucket", l, le, (double)cumulative[i]);
    }
    if (!rc)
        rc = push(e, (size_t)f, "_bucket", l, "+Inf", (double)count);
    if (!rc)
        rc = push(e, (size_t)f, "_sum", l, NULL, sum);
    if (!rc)
        rc = push(e, (size_t)f, "_count", l, NULL, (double)count);
    free(l);
    return rc;
}

cfit_expo_mark cfit_expo_mark_get(const cfit_expo *e)
{
    return (cfit_expo_mark){e->nfams, e->nsamples};
}

void cfit_expo_rollback(cfit_expo *e, cfit_expo_mark m)
{
    while (e->nsamples > m.samples)
        free(e->samples[--e->nsamples].labels);
    while (e->nfams > m.families) {
        family *f = &e->fams[--e->nfams];
        free(f->name);
        free(f->help);
    }
}

void cfit_expo_format_value(char *buf, size_t n, double v)
{
    if (isnan(v)) {
        snprintf(buf, n, "NaN");
        return;
    }
    if (isinf(v)) {
        snprintf(buf, n, v > 0 ? "+Inf" : "-Inf");
        return;
    }
    if (v == 0.0) {
        snprintf(buf, n, "0");
        return;
    }
    if (fabs(v) < 1e15 && v == floor(v)) {   /* whole numbers (most samples): digits by hand, no printf */
        char tmp[24];
        size_t k = 0, o = 0;
        unsigned long long u = (unsigned long long)fabs(v);
        do
            tmp[k++] = (char)('0' + u % 10);
        while ((u /= 10) && k < sizeof tmp);
        if (v < 0 && o + 1 < n)
            buf[o++] = '-';
        while (k && o + 1 < n)
            buf[o++] = tmp[--k];
        buf[o] = '\0';
        return;
    }
    for (int prec = 15; prec <= 17; prec++) {   /* shortest of 15-17 digits that round-trips */
        snprintf(buf, n, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

static void escape_help(cfit_buf *b, const char *s, int om)
{
    escape(b, s, om);
}

static const char *type_name(cfit_metric_type t, int om)
{
    switch (t) {
    case CFIT_METRIC_COUNTER: return "counter";
    case CFIT_METRIC_COUNTER_UNSUFFIXED: return om ? "unknown" : "counter";
    case CFIT_METRIC_HISTOGRAM: return "histogram";
    case CFIT_METRIC_INFO: return om ? "info" : "gauge";
    case CFIT_METRIC_GAUGE: break;
    }
    return "gauge";
}

static void render_family(cfit_buf *b, const family *f, const sample *const *ss, size_t n, int om)
{
    /* OpenMetrics names the family without the _total / _info suffix the samples carry. */
    size_t baselen = strlen(f->name);
    if (om && f->type == CFIT_METRIC_COUNTER)
        baselen -= strlen("_total");
    if (om && f->type == CFIT_METRIC_INFO)
        baselen -= strlen("_info");
    cfit_buf_printf(b, "# HELP %.*s ", (int)baselen, f->name);
    escape_help(b, f->help, om);
    cfit_buf_printf(b, "\n# TYPE %.*s %s\n", (int)baselen, f->name, type_name(f->type, om));
    char v[40];
    for (size_t i = 0; i < n; i++) {
        const sample *s = ss[i];
        /* puts, not printf: this loop is most of a scrape's CPU time */
        cfit_buf_puts(b, f->name);
        cfit_buf_puts(b, s->suffix);
        if (s->labels[0] || s->le[0]) {
            cfit_buf_puts(b, "{");
            cfit_buf_puts(b, s->labels);
            if (s->le[0]) {
                cfit_buf_puts(b, s->labels[0] ? ",le=\"" : "le=\"");
                cfit_buf_puts(b, s->le);
                cfit_buf_puts(b, "\"");
            }
            cfit_buf_puts(b, "}");
        }
        v[0] = ' ';
        cfit_expo_format_value(v + 1, sizeof v - 2, s->value);
        cfit_buf_puts(b, v);
        cfit_buf_puts(b, "\n");
    }
}

int cfit_expo_render(const cfit_expo *e, cfit_expo_format fmt, char **out, size_t *len)
{
    int om = fmt == CFIT_EXPO_OPENMETRICS;
    /* Counting sort of the samples by family keeps each family's insertion order. */
    size_t *start = calloc(e->nfams + 1, sizeof *start);
    const sample **order = malloc((e->nsamples ? e->nsamples : 1) * sizeof *order);
    if (!start || !order) {
        free(start);
        free(order);
        return CFIT_ENOMEM;
    }
    for (size_t i = 0; i < e->nsamples; i++)
        start[e->samples[i].fam + 1]++;
    for (size_t f = 0; f < e->nfams; f++)
        start[f + 1] += start[f];
    size_t *fill = calloc(e->nfams + 1, sizeof *fill);
    if (!fill) {
        free(start);
        free(order);
        return CFIT_ENOMEM;
    }
    for (size_t i = 0; i < e->nsamples; i++) {
        size_t f = e->samples[i].fam;
        order[start[f] + fill[f]++] = &e->samples[i];
    }
    cfit_buf b;
    cfit_buf_init(&b);
    cfit_buf_puts(&b, "");
    for (size_t f = 0; f < e->nfams; f++)
        if (start[f + 1] > start[f])
            render_family(&b, &e->fams[f], order + start[f], start[f + 1] - start[f], om);
    if (om)
        cfit_buf_puts(&b, "# EOF\n");
    free(start);
    free(order);
    free(fill);
    if (!cfit_buf_ok(&b)) {
        cfit_buf_fini(&b);
        return CFIT_ENOMEM;
    }
    *out = b.data;
    *len = b.len;
    return 0;
}
