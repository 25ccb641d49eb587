/* nccl_log.c - read the text log of an nccl-tests binary (all_reduce_perf, all_gather_perf,
 * reduce_scatter_perf, alltoall_perf, sendrecv_perf) into measured fabric numbers (calibration.h).
 *
 * What the reader relies on (nccl-tests' src/util.cu and common.cu print it):
 *   # Collective test starting: all_reduce_perf            (newer versions; names the collective)
 *   # nThread 1 nGpus 1 minBytes 8 maxBytes ... validation: 1 graph: 0   (nGpus: -g, GPUs per thread)
 *   #  Rank  0 Group  0 Pid 1234 on node01 device  0 [0000:19:00] NVIDIA H100 80GB HBM3
 *   #       size  count  type  redop  root  time algbw busbw #wrong  time algbw busbw #wrong
 *   #        (B)  (elements)                (us) (GB/s) (GB/s)       (us) (GB/s) (GB/s)
 *             8      2  float    sum    -1  31.2  0.00  0.00      0  30.9  0.00  0.00      0
 *   # Out of bounds values : 0 OK
 * The column-name line, when present, says where each field is (older versions lack redop and
 * root, per-iteration timing adds i_min/i_max/i_p99/i_cv% columns, timestamps a date and a time);
 * without it a row is size, count, one to three descriptive fields and the two groups of four.
 * A line whose first field starts with a digit and holds no ':' or '[' is a data row and must
 * read cleanly; other lines without '#' (NCCL INFO output, launcher chatter) are skipped.
 */
#include "clusterfit/calibration.h"
#include "clusterfit/collective.h"
#include "base/grow.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_LINE = 4096, MAX_TOK = 64 };

/* Column roles of the column-name line. */
enum { C_SIZE, C_COUNT, C_TYPE, C_REDOP, C_ROOT, C_TIME, C_ALGBW, C_BUSBW, C_WRONG, C_ERROR, C_STAMP, C_OTHER };

typedef struct tok {
    const char *s;   /* NUL-terminated copy inside the line buffer */
    int col;         /* 1-based column in the original line */
} tok;

typedef struct row {
    double size, count, time, algbw, busbw;
    int line;
} row;

typedef struct rankline {
    long rank;
    int line;
    char host[128];
} rankline;

typedef struct parser {
    const char *file;
    cfit_diag *d;
    /* layout: from the column-name line (ncols > 0) or fixed by the first row */
    int ncols, have_header, header_line, stamp;
    int role[MAX_TOK];
    int i_size, i_count, i_type, i_redop, i_time, i_algbw, i_busbw, i_wrong;   /* -1 = absent */
    int wrong_is_error;   /* the old "error" column: a max deviation, not a count */
    double time_scale;    /* s per time unit (us, or ms in the oldest logs) */
    row *rows;
    size_t nrows, caprows;
    rankline *ranks;
    size_t nranks, capranks;
    char program[64];
    char redop[32], type[32];
    const char *buf;   /* the tokenised copy of the current line (token offsets = offsets in raw) */
} parser;

#if defined(__GNUC__)
__attribute__((format(printf, 5, 6)))
#endif
static int fail(const parser *p, int err, int line, int col, const char *fmt, ...)
{
    char msg[sizeof p->d->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return cfit_diag_set(p->d, err, p->file, line, col, "%s", msg);
}

/* Split buf (modified) into whitespace-separated tokens; col counts from base (the prefix length). */
static int split(char *buf, int base, tok *t, int max)
{
    int n = 0;
    char *s = buf;
    for (;;) {
        while (*s == ' ' || *s == '\t')
            s++;
        if (!*s)
            break;
        if (n == max)
            return max + 1;
        t[n].s = s;
        t[n].col = base + (int)(s - buf) + 1;
        n++;
        while (*s && *s != ' ' && *s != '\t')
            s++;
        if (*s)
            *s++ = '\0';
    }
    return n;
}

/* Length of an `srun --label` ("  0: ") or `mpirun --tag-output` ("[1,0]<stdout>:") prefix, or 0. */
static size_t prefix_len(const char *s, size_t n)
{
    size_t i = 0;
    if (n && s[0] == '[') {
        i = 1;
        while (i < n && (isdigit((unsigned char)s[i]) || s[i] == ','))
            i++;
        if (i + 1 >= n || s[i] != ']' || s[i + 1] != '<')
            return 0;
        i += 2;
        while (i < n && isalpha((unsigned char)s[i]))
            i++;
        if (i + 1 >= n || s[i] != '>' || s[i + 1] != ':')
            return 0;
        return i + 2;
    }
    while (i < n && s[i] == ' ')
        i++;
    size_t j = i;
    while (j < n && isdigit((unsigned char)s[j]))
        j++;
    if (j > i && j < n && s[j] == ':' && (j + 1 == n || s[j + 1] == ' '))
        return j + 1 < n ? j + 2 : j + 1;
    return 0;
}

static int number(const char *s, double *out)
{
    char *end;
    if (!*s || !(isdigit((unsigned char)*s) || *s == '-' || *s == '+' || *s == '.'))
        return 0;
    double v = strtod(s, &end);
    if (*end || !isfinite(v))
        return 0;
    *out = v;
    return 1;
}

static int whole(const char *s, double *out)
{
    for (const char *c = s; *c; c++)
        if (!isdigit((unsigned char)*c))
            return 0;
    if (!*s || strlen(s) > 18)
        return 0;
    *out = strtod(s, NULL);
    return 1;
}

static int role_of(const char *name)
{
    static const struct { const char *name; int role; } names[] = {
        {"size", C_SIZE}, {"bytes", C_SIZE}, {"count", C_COUNT}, {"N", C_COUNT}, {"type", C_TYPE},
        {"redop", C_REDOP}, {"op", C_REDOP}, {"root", C_ROOT}, {"time", C_TIME}, {"cputime", C_TIME},
        {"algbw", C_ALGBW}, {"busbw", C_BUSBW}, {"#wrong", C_WRONG}, {"wrong", C_WRONG},
        {"error", C_ERROR}, {"timestamp", C_STAMP}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(name, names[i].name) == 0)
            return names[i].role;
    return C_OTHER;
}

/* The column-name line "# size count type redop root time algbw busbw #wrong time ...". */
static int read_header(parser *p, const tok *t, int n, int line)
{
    if (p->nrows)
        return fail(p, CFIT_EPARSE, line, t[0].col, "a second result table after the data rows: give one "
                    "nccl-tests run per file");
    p->have_header = 1;
    p->header_line = line;
    p->ncols = n - 1;
    p->stamp = 0;
    p->i_size = p->i_count = p->i_type = p->i_redop = p->i_time = p->i_algbw = p->i_busbw = p->i_wrong = -1;
    p->wrong_is_error = 0;
    for (int i = 1; i < n; i++) {
        int r = role_of(t[i].s), c = i - 1;
        p->role[c] = r;
        int *slot = r == C_SIZE ? &p->i_size : r == C_COUNT ? &p->i_count : r == C_TYPE ? &p->i_type
                  : r == C_REDOP ? &p->i_redop : r == C_TIME ? &p->i_time : r == C_ALGBW ? &p->i_algbw
                  : r == C_BUSBW ? &p->i_busbw : r == C_WRONG || r == C_ERROR ? &p->i_wrong : NULL;
        if (slot && *slot < 0) {   /* the first of each: the out-of-place group */
            *slot = c;
            if (r == C_ERROR)
                p->wrong_is_error = 1;
        }
        if (r == C_STAMP)
            p->stamp = 1;
    }
    if (p->i_size != 0 || p->i_time < 0 || p->i_busbw < 0)
        return fail(p, CFIT_EPARSE, line, t[0].col, "this column header has no size, time or busbw column "
                    "where nccl-tests prints them");
    return CFIT_EOK;
}

/* Without a column-name line: size, count, 1-3 descriptive fields, then time algbw busbw #wrong twice. */
static int default_layout(parser *p, int n, int line, int col)
{
    if (n < 11 || n > 13)
        return fail(p, CFIT_EPARSE, line, col, "a data row of %d fields, and no column header line to say "
                    "what they are (nccl-tests prints 11 to 13: size count type [redop] [root] and time "
                    "algbw busbw #wrong, out-of-place then in-place)", n);
    p->ncols = n;
    p->i_size = 0;
    p->i_count = 1;
    p->i_type = 2;
    p->i_redop = n >= 12 ? 3 : -1;
    p->i_time = n - 8;
    p->i_algbw = n - 7;
    p->i_busbw = n - 6;
    p->i_wrong = n - 5;
    for (int c = 0; c < n; c++)
        p->role[c] = c == 0 ? C_SIZE : c == 1 ? C_COUNT : c == 2 ? C_TYPE : c < n - 8 ? (c == 3 && n >= 12 ? C_REDOP : C_ROOT)
                   : ((c - (n - 8)) % 4 == 0 ? C_TIME : (c - (n - 8)) % 4 == 1 ? C_ALGBW
                   : (c - (n - 8)) % 4 == 2 ? C_BUSBW : C_WRONG);
    return CFIT_EOK;
}

static int read_row(parser *p, const tok *t, int n, int line)
{
    if (!p->ncols) {
        int err = default_layout(p, n, line, t[0].col);
        if (err)
            return err;
    }
    int want = p->ncols + p->stamp;
    if (n != want)
        return fail(p, CFIT_EPARSE, line, t[0].col, "a data row of %d fields where the %s has %d",
                    n > MAX_TOK ? MAX_TOK : n, p->have_header ? "column header" : "first row", want);
    row r = {0, 0, 0, 0, 0, line};
    for (int c = 0; c < p->ncols; c++) {
        const char *s = t[c].s;
        double v = 0;
        switch (p->role[c]) {
        case C_SIZE:
        case C_COUNT:
            if (!whole(s, &v))
                return fail(p, CFIT_EPARSE, line, t[c].col, "the %s column must be a whole number, not '%s'",
                            p->role[c] == C_SIZE ? "size" : "count", s);
            if (c == p->i_size)
                r.size = v;
            else if (c == p->i_count)
                r.count = v;
            break;
        case C_TYPE:
        case C_REDOP:
        case C_STAMP:
            if (c == p->i_type && !p->type[0])
                snprintf(p->type, sizeof p->type, "%s", s);
            if (c == p->i_redop && !p->redop[0])
                snprintf(p->redop, sizeof p->redop, "%s", s);
            break;
        case C_ROOT:
            if (!number(s, &v) || v != floor(v))
                return fail(p, CFIT_EPARSE, line, t[c].col, "the root column must be a rank number, not '%s'", s);
            break;
        case C_WRONG:
        case C_ERROR:
            if (strcmp(s, "N/A") == 0)
                break;
            if (!number(s, &v) || v < 0)
                return fail(p, CFIT_EPARSE, line, t[c].col, "the %s column must be a count or N/A, not '%s'",
                            p->role[c] == C_WRONG ? "#wrong" : "error", s);
            if (p->role[c] == C_WRONG && v > 0)
                return fail(p, CFIT_EINVALID, line, t[c].col, "this size had %s wrong element%s: a run that "
                            "failed its check cannot calibrate the fabric", s, v == 1 ? "" : "s");
            break;
        default:   /* time, algbw, busbw and the per-iteration statistics */
            if (!number(s, &v) || v < 0) {
                if (p->role[c] == C_OTHER && strcmp(s, "N/A") == 0)
                    break;
                const char *what = p->role[c] == C_TIME ? "time" : p->role[c] == C_ALGBW ? "algbw"
                                 : p->role[c] == C_BUSBW ? "busbw" : "this";
                return fail(p, CFIT_EPARSE, line, t[c].col, "the %s column must be a number >= 0, not '%s'",
                            what, s);
            }
            if (c == p->i_time)
                r.time = v * p->time_scale;
            else if (c == p->i_algbw)
                r.algbw = v * 1e9;
            else if (c == p->i_busbw)
                r.busbw = v * 1e9;
        }
    }
    if (p->nrows && !(r.size > p->rows[p->nrows - 1].size))
        return fail(p, CFIT_EPARSE, line, t[0].col, "sizes must increase down the table (%s bytes after %.0f); "
                    "give one run of one data type per file (-d all and -N repeat the sizes)", t[0].s,
                    p->rows[p->nrows - 1].size);
    if (cfit__grow(&p->rows, &p->caprows, p->nrows + 1, sizeof *p->rows))
        return fail(p, CFIT_ENOMEM, 0, 0, "out of memory");
    p->rows[p->nrows++] = r;
    return CFIT_EOK;
}

/* "#  Rank  0 Group  0 Pid 1234 on node01 device  0 [0000:19:00] NVIDIA H100 80GB HBM3" (older
 * versions lack Group and Pid).  gpu gets the description of the first one. */
static int read_rank(parser *p, const tok *t, int n, int line, const char *raw, cfit_calibration *out)
{
    double rank;
    int on = -1, dev = -1;
    for (int i = 3; i < n; i++) {
        if (on < 0 && strcmp(t[i].s, "on") == 0)
            on = i;
        else if (on >= 0 && dev < 0 && i > on + 1 && strcmp(t[i].s, "device") == 0)
            dev = i;
    }
    if (n < 3 || !whole(t[2].s, &rank) || rank > 1e9 || on < 0 || on + 1 >= n || dev < 0)
        return fail(p, CFIT_EPARSE, line, t[1].col, "cannot read this Rank line (nccl-tests prints '#  Rank N "
                    "... on HOST device D [BUS] GPU')");
    if (cfit__grow(&p->ranks, &p->capranks, p->nranks + 1, sizeof *p->ranks))
        return fail(p, CFIT_ENOMEM, 0, 0, "out of memory");
    rankline *r = &p->ranks[p->nranks++];
    r->rank = (long)rank;
    r->line = line;
    snprintf(r->host, sizeof r->host, "%s", t[on + 1].s);
    if (p->nranks == 1) {   /* the description: the raw text after the bus token (or the device number) */
        int from = dev + 2 < n && t[dev + 2].s[0] == '[' ? dev + 3 : dev + 2;
        if (from < n) {
            const char *s = raw + (t[from].s - p->buf);
            size_t m = strlen(s);
            while (m && isspace((unsigned char)s[m - 1]))
                m--;
            snprintf(out->gpu, sizeof out->gpu, "%.*s", (int)(m < sizeof out->gpu ? m : sizeof out->gpu - 1), s);
        }
    }
    return CFIT_EOK;
}

/* One comment line: program name, Rank line, column header, units, footers; the rest is ignored. */
static int read_comment(parser *p, const tok *t, int n, int line, const char *raw, cfit_calibration *out)
{
    if (n >= 2 && strcmp(t[0].s, "#") != 0)   /* "#Rank": no such output; ignore */
        return CFIT_EOK;
    if (n >= 5 && strcmp(t[1].s, "Collective") == 0 && strcmp(t[2].s, "test") == 0 &&
        (strcmp(t[3].s, "starting:") == 0 || strcmp(t[3].s, "concluded:") == 0)) {
        const char *base = strrchr(t[4].s, '/');
        base = base ? base + 1 : t[4].s;
        if (!p->program[0])
            snprintf(p->program, sizeof p->program, "%s", base);
        return CFIT_EOK;
    }
    if (n >= 5 && strcmp(t[1].s, "nThread") == 0 && strcmp(t[3].s, "nGpus") == 0) {
        /* "# nThread 1 nGpus 8 minBytes ...": -g, the GPUs each of a process's threads drives */
        double g;
        if (!number(t[4].s, &g) || g < 1 || g > 1024 || g != floor(g))
            return fail(p, CFIT_EPARSE, line, t[4].col, "nGpus '%s' is not a GPU count", t[4].s);
        out->gpus_per_process = (int)g;
        return CFIT_EOK;
    }
    if (n >= 3 && strcmp(t[1].s, "Rank") == 0)
        return read_rank(p, t, n, line, raw, out);
    if (n >= 4 && (strcmp(t[1].s, "size") == 0 || strcmp(t[1].s, "bytes") == 0))
        return read_header(p, t, n, line);
    if (n >= 3 && strcmp(t[1].s, "(B)") == 0) {
        for (int i = 2; i < n; i++)
            if (strcmp(t[i].s, "(ms)") == 0)
                p->time_scale = 1e-3;
        return CFIT_EOK;
    }
    if (n >= 6 && strcmp(t[1].s, "Out") == 0 && strcmp(t[2].s, "of") == 0 && strcmp(t[3].s, "bounds") == 0) {
        int v = 4;
        while (v < n && strcmp(t[v].s, ":") != 0)
            v++;
        double bad;
        if (v + 1 < n && number(t[v + 1].s, &bad) && bad > 0)
            return fail(p, CFIT_EINVALID, line, t[v + 1].col, "the run reports %s out-of-bounds values: a run "
                        "that failed its check cannot calibrate the fabric", t[v + 1].s);
    }
    return CFIT_EOK;
}

static int cmp_host(const void *a, const void *b)
{
    return strcmp(((const rankline *)a)->host, ((const rankline *)b)->host);
}

static int cmp_rank(const void *a, const void *b)
{
    long x = ((const rankline *)a)->rank, y = ((const rankline *)b)->rank;
    return (x > y) - (x < y);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int cfit_calibration_fit(const cfit_calibration_point *p, size_t n, double *alpha_s, double *beta,
                         double *median_rel_err, int *rows)
{
    /* time_i / time_i = 1 ~ alpha (1 / t_i) + b (s_i / t_i), b = 1 / beta: ordinary least squares
     * on the scaled columns x = (1/t) / max, y = (s/t) / max. */
    double umax = 0, vmax = 0, smin = 0, smax = 0;
    size_t used = 0;
    *alpha_s = *beta = 0;
    *median_rel_err = -1;
    for (size_t i = 0; i < n; i++) {
        if (!(p[i].size_bytes > 0 && p[i].time_s > 0) || !isfinite(p[i].size_bytes) || !isfinite(p[i].time_s))
            continue;
        double u = 1 / p[i].time_s, v = p[i].size_bytes / p[i].time_s;
        umax = u > umax ? u : umax;
        vmax = v > vmax ? v : vmax;
        smin = !used || p[i].size_bytes < smin ? p[i].size_bytes : smin;
        smax = !used || p[i].size_bytes > smax ? p[i].size_bytes : smax;
        used++;
    }
    if (rows)
        *rows = (int)(used > 1u << 30 ? 1u << 30 : used);
    if (used < 2 || !(smax > smin) || !isfinite(umax) || !isfinite(vmax))
        return -1;
    double sxx = 0, sxy = 0, syy = 0, sx = 0, sy = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(p[i].size_bytes > 0 && p[i].time_s > 0) || !isfinite(p[i].size_bytes) || !isfinite(p[i].time_s))
            continue;
        double x = 1 / p[i].time_s / umax, y = p[i].size_bytes / p[i].time_s / vmax;
        sxx += x * x;
        sxy += x * y;
        syy += y * y;
        sx += x;
        sy += y;
    }
    double det = sxx * syy - sxy * sxy;
    if (!(det > 1e-12 * sxx * syy))
        return -1;
    double a = (syy * sx - sxy * sy) / det / umax, b = (sxx * sy - sxy * sx) / det / vmax;
    *alpha_s = a;
    *beta = b > 0 ? 1 / b : 0;
    double *e = malloc(used * sizeof *e);
    if (!e)
        return -1;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (p[i].size_bytes > 0 && p[i].time_s > 0 && isfinite(p[i].size_bytes) && isfinite(p[i].time_s))
            e[k++] = fabs(a + b * p[i].size_bytes - p[i].time_s) / p[i].time_s;
    qsort(e, k, sizeof *e, cmp_double);
    *median_rel_err = k % 2 ? e[k / 2] : (e[k / 2 - 1] + e[k / 2]) / 2;
    free(e);
    return a > 0 && b > 0 && isfinite(a) && isfinite(*beta) ? 0 : -1;
}

/* The collective: the program name when the log has one, else the redop column and the ratios of
 * the largest measured row: size / (count x element size) is n for all_gather, reduce_scatter and
 * alltoall and 1 for all_reduce and sendrecv, busbw / algbw is 2(n-1)/n for all_reduce and 1 for
 * sendrecv (n > 2).  What those cannot tell apart is refused, never guessed. */
static int collective(parser *p, int ranks, cfit_calibration *out)
{
    int line = p->rows[0].line;
    if (p->program[0]) {   /* the registry's nccl-tests names (collective.h), modelled or not */
        char stem[64], list[160];
        snprintf(stem, sizeof stem, "%s", p->program);
        char *suf = strstr(stem, "_perf");
        if (suf)
            *suf = '\0';
        const cfit_coll_info *e = cfit_coll_find(stem);
        if (e && strcmp(stem, e->nccl_name) != 0)
            e = NULL;   /* a log names the binary, never clusterfit's spelling */
        if (e && e->id != CFIT_COLL_COUNT) {
            snprintf(out->benchmark, sizeof out->benchmark, "%s", e->name);
            return CFIT_EOK;
        }
        cfit_coll_list(list, sizeof list, 1, NULL);
        if (e)
            return fail(p, CFIT_EINVALID, line, 1, "%s measures a collective the planner does not model; "
                        "calibrate with %s", p->program, list);
        return fail(p, CFIT_EINVALID, line, 1, "unknown nccl-tests binary '%s' (expected %s)", p->program, list);
    }
    static const struct { const char *name; double bytes; } types[] = {
        {"int8", 1}, {"uint8", 1}, {"char", 1}, {"f8e4m3", 1}, {"f8e5m2", 1}, {"half", 2}, {"float16", 2},
        {"bfloat16", 2}, {"int32", 4}, {"uint32", 4}, {"int", 4}, {"float", 4}, {"float32", 4},
        {"int64", 8}, {"uint64", 8}, {"double", 8}, {"float64", 8}};
    double word = 0;
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (strcmp(p->type, types[i].name) == 0)
            word = types[i].bytes;
    const row *r = NULL;   /* the largest row with elements, bandwidths measured */
    for (size_t i = p->nrows; i-- > 0;)
        if (p->rows[i].count > 0 && p->rows[i].algbw > 0 && p->rows[i].busbw > 0) {
            r = &p->rows[i];
            break;
        }
    const char *guess = NULL, *maybe = "which collective";
    if (word > 0 && r) {
        double per = r->size / (r->count * word), bus = r->busbw / r->algbw, n = ranks;
        int has_op = p->redop[0] != '\0', reduces = has_op && strcmp(p->redop, "none") != 0;
        int spread = fabs(per - n) < 0.01 * n && n > 1;   /* n x count elements */
        int flat = fabs(per - 1) < 0.01, may_reduce = !has_op || reduces;
        if (flat && may_reduce && n > 2 && fabs(bus - cfit_coll_bus_factor(CFIT_COLL_ALLREDUCE, ranks)) < 0.05)
            guess = cfit_collective_name(CFIT_COLL_ALLREDUCE);
        else if (flat && may_reduce && n > 2 && fabs(bus - cfit_coll_bus_factor(CFIT_COLL_SENDRECV, ranks)) < 0.05)
            guess = cfit_collective_name(CFIT_COLL_SENDRECV);
        else if (spread && reduces)
            guess = cfit_collective_name(CFIT_COLL_REDUCESCATTER);
        else if (flat && may_reduce)
            maybe = "all_reduce or sendrecv";
        else if (spread)
            maybe = has_op ? "all_gather or alltoall" : "all_gather, reduce_scatter or alltoall";
    }
    if (!guess)
        return fail(p, CFIT_EINVALID, line, 1, "cannot tell %s this log ran: keep the '# Collective test "
                    "starting: NAME_perf' line nccl-tests prints (or add it by hand)", maybe);
    snprintf(out->benchmark, sizeof out->benchmark, "%s", guess);
    return CFIT_EOK;
}

static int finish(parser *p, cfit_calibration *out)
{
    if (!p->nrows)
        return fail(p, CFIT_EPARSE, p->have_header ? p->header_line : 0, p->have_header ? 1 : 0,
                    "no data rows: not a `clusterfit bench --json` file (that starts with '{') nor an "
                    "nccl-tests log with a result table");
    if (!p->nranks)
        return fail(p, CFIT_EPARSE, p->rows[0].line, 1, "no '#  Rank N ... on HOST device ...' lines: keep "
                    "nccl-tests' '# Using devices' section, which tells the ranks and hosts");
    qsort(p->ranks, p->nranks, sizeof *p->ranks, cmp_rank);
    for (size_t i = 1; i < p->nranks; i++)
        if (p->ranks[i].rank == p->ranks[i - 1].rank) {
            int l = p->ranks[i].line > p->ranks[i - 1].line ? p->ranks[i].line : p->ranks[i - 1].line;
            return fail(p, CFIT_EPARSE, l, 1, "rank %ld is listed twice: give one nccl-tests run per file",
                        p->ranks[i].rank);
        }
    int first_line = p->ranks[0].line;
    for (size_t i = 0; i < p->nranks; i++)
        first_line = p->ranks[i].line < first_line ? p->ranks[i].line : first_line;
    qsort(p->ranks, p->nranks, sizeof *p->ranks, cmp_host);
    size_t hosts = 1;
    for (size_t i = 1; i < p->nranks; i++)
        hosts += strcmp(p->ranks[i].host, p->ranks[i - 1].host) != 0;
    if (p->nranks > 1u << 30)
        return fail(p, CFIT_ERANGE, first_line, 1, "too many ranks");
    out->ranks = (int)p->nranks;
    out->hosts = (int)hosts;
    if (hosts < 2)
        return fail(p, CFIT_EINVALID, first_line, 1, "measured within one host (all %d ranks on %s): that is "
                    "NVLink or shared memory, not the fabric; run nccl-tests with ranks on two or more hosts",
                    out->ranks, p->ranks[0].host);
    int err = collective(p, out->ranks, out);
    if (err)
        return err;
    snprintf(out->program, sizeof out->program, "%s", p->program);
    const row *big = &p->rows[p->nrows - 1];
    if (!(big->busbw > 0))
        return fail(p, CFIT_ERANGE, big->line, 1, "the largest size has no bus bandwidth (busbw must be above 0)");
    cfit_calibration_point *pts = malloc(p->nrows * sizeof *pts);
    if (!pts)
        return fail(p, CFIT_ENOMEM, 0, 0, "out of memory");
    for (size_t i = 0; i < p->nrows; i++) {
        pts[i].size_bytes = p->rows[i].size;
        pts[i].time_s = p->rows[i].time;
        pts[i].busbw_bytes_per_s = p->rows[i].busbw;
    }
    int bad = cfit_calibration_fit(pts, p->nrows, &out->fit_alpha_s, &out->fit_beta_bytes_per_s,
                                   &out->fit_error, &out->fit_rows);
    size_t keep = p->nrows < CFIT_CALIBRATION_MAX_POINTS ? p->nrows : CFIT_CALIBRATION_MAX_POINTS;
    for (size_t k = 0; k < keep; k++) {   /* evenly spaced, first and last included */
        size_t i = keep < 2 ? 0 : (size_t)((double)k * (double)(p->nrows - 1) / (double)(keep - 1) + 0.5);
        out->points[k] = pts[i];
    }
    out->npoints = (int)keep;
    free(pts);
    if (bad)
        return fail(p, CFIT_EINVALID, p->rows[0].line, 1, "the fit time = alpha + size/beta over %d size%s "
                    "gives no positive latency and bandwidth: the log needs rows from small (e.g. 8 B) to "
                    "large sizes", out->fit_rows, out->fit_rows == 1 ? "" : "s");
    out->bw_bytes_per_s = big->busbw;
    out->bw_size_bytes = big->size;
    out->lat_size_bytes = 0;
    out->steps = cfit_calibration_steps(out->benchmark, out->ranks);
    out->latency_s = out->fit_alpha_s / out->steps;
    return CFIT_EOK;
}

int cfit_calibration_parse_nccl_log(const char *text, size_t len, const char *file, cfit_calibration *out,
                                    cfit_diag *d)
{
    parser p;
    memset(&p, 0, sizeof p);
    p.file = file ? file : "";
    p.d = d;
    p.time_scale = 1e-6;
    memset(out, 0, sizeof *out);
    snprintf(out->file, sizeof out->file, "%s", p.file);
    snprintf(out->source, sizeof out->source, "nccl-tests");
    out->fit_error = -1;
    char *buf = malloc(MAX_LINE + 1), *raw = malloc(MAX_LINE + 1);
    tok t[MAX_TOK];
    p.buf = buf;
    int err = buf && raw ? CFIT_EOK : fail(&p, CFIT_ENOMEM, 0, 0, "out of memory");
    int line = 0;
    size_t pos = 0;
    while (!err && pos < len) {
        size_t end = pos;
        while (end < len && text[end] != '\n')
            end++;
        line++;
        const char *s = text + pos;
        size_t n = end - pos;
        pos = end + 1;
        if (n && s[n - 1] == '\r')
            n--;
        if (memchr(s, '\0', n)) {
            err = fail(&p, CFIT_EPARSE, line, (int)((const char *)memchr(s, '\0', n) - s) + 1,
                       "a NUL byte: not a text log");
            break;
        }
        size_t pre = prefix_len(s, n);
        if (n - pre > MAX_LINE) {
            size_t i = pre;
            while (i < n && (s[i] == ' ' || s[i] == '\t'))
                i++;
            if (i < n && s[i] != '#' && isdigit((unsigned char)s[i])) {
                err = fail(&p, CFIT_EPARSE, line, 1, "a line of more than %d bytes", MAX_LINE);
                break;
            }
            continue;   /* a long comment or chatter line */
        }
        memcpy(raw, s + pre, n - pre);
        raw[n - pre] = '\0';
        memcpy(buf, raw, n - pre + 1);
        int nt = split(buf, (int)pre, t, MAX_TOK);
        if (!nt)
            continue;
        if (t[0].s[0] == '#') {
            if (nt > MAX_TOK)
                nt = MAX_TOK;
            err = read_comment(&p, t, nt, line, raw, out);
        } else if (isdigit((unsigned char)t[0].s[0]) && !strchr(t[0].s, ':') && !strchr(t[0].s, '[')) {
            if (nt > MAX_TOK)
                err = fail(&p, CFIT_EPARSE, line, t[0].col, "a data row of more than %d fields", MAX_TOK);
            else
                err = read_row(&p, t, nt, line);
        }
    }
    if (!err)
        err = finish(&p, out);
    free(buf);
    free(raw);
    free(p.rows);
    free(p.ranks);
    return err;
}
