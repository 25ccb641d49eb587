/* jobline.c - the job report line protocol (docs/exporter.md "Job reports"):
 *
 *     job=NAME rank=N step=SECONDS [data=SECONDS] [allreduce=SECONDS] [optimizer=SECONDS]
 *
 * Fields separated by spaces or tabs, in any order, each at most once; NAME is 1-64 of
 * [A-Za-z0-9_.:-]; N a whole number 0..2^31-1; SECONDS a finite decimal 0..1e6 (no unit).
 * data, allreduce and optimizer are the time the step spent in each (all-reduce may overlap
 * compute, so they are not checked against step).
 */
#include "clusterfit/exporter.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int is_name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.' || c == ':' || c == '-';
}

/* A decimal in [0, 1e6] spanning exactly n bytes. */
static int parse_seconds(const char *s, size_t n, double *out)
{
    char buf[40];
    if (n == 0 || n >= sizeof buf)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || s[i] == '.' || s[i] == 'e' || s[i] == 'E' || s[i] == '-' ||
              s[i] == '+'))
            return -1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    char *end;
    errno = 0;
    double v = strtod(buf, &end);
    if (errno || *end || !isfinite(v) || v < 0 || v > 1e6)
        return -1;
    *out = v;
    return 0;
}

int cfit_job_parse_line(const char *line, size_t len, cfit_job_report *r, cfit_diag *d)
{
    cfit_diag_clear(d);
    memset(r, 0, sizeof *r);
    r->rank = -1;
    r->step_s = -1;
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
        len--;
    unsigned seen = 0;
    size_t i = 0;
    enum { F_JOB = 1, F_RANK = 2, F_STEP = 4, F_DATA = 8, F_AR = 16, F_OPT = 32 };
    static const struct { const char *key; unsigned bit; } keys[] = {
        {"job", F_JOB}, {"rank", F_RANK}, {"step", F_STEP}, {"data", F_DATA}, {"allreduce", F_AR},
        {"optimizer", F_OPT},
    };
    while (i < len) {
        if (line[i] == ' ' || line[i] == '\t') {
            i++;
            continue;
        }
        size_t start = i;
        while (i < len && line[i] != ' ' && line[i] != '\t')
            i++;
        const char *tok = line + start, *eq = memchr(tok, '=', i - start);
        int col = (int)start + 1;
        if (!eq)
            return cfit_diag_set(d, CFIT_EPARSE, NULL, 1, col, "expected KEY=VALUE");
        size_t klen = (size_t)(eq - tok), vlen = i - start - klen - 1;
        const char *val = eq + 1;
        unsigned bit = 0;
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
            if (strlen(keys[k].key) == klen && memcmp(keys[k].key, tok, klen) == 0)
                bit = keys[k].bit;
        if (!bit)
            return cfit_diag_set(d, CFIT_EPARSE, NULL, 1, col,
                                 "unknown key (expected job, rank, step, data, allreduce or optimizer)");
        if (seen & bit)
            return cfit_diag_set(d, CFIT_EPARSE, NULL, 1, col, "key given twice");
        seen |= bit;
        if (bit == F_JOB) {
            if (vlen == 0 || vlen > CFIT_JOB_NAME_MAX)
                return cfit_diag_set(d, CFIT_EPARSE, NULL, 1, col, "job: expected 1 to %d characters",
                                     CFIT_JOB_NAME_MAX);
            for (size_t k = 0; k < vlen; k++)
                if (!is_name_char(val[k]))
                    return cfit_diag_set(d, CFIT_EPARSE, NULL, 1, col + (int)(klen + 1 + k),
                                         "job: only letters, digits and _ . : - are allowed");
            memcpy(r->job, val, vlen);
            r->job[vlen] = '\0';
        } else if (bit == F_RANK) {
            long v = 0;
            if (vlen == 0 || vlen > 10)
                return cfit_diag_set(d, CFIT_EPARSE, NULL, 1, col, "rank: expected a whole number");
            for (size_t k = 0; k < vlen; k++) {
                if (val[k] < '0' || val[k] > '9')
                    return cfit_diag_set(d, CFIT_EPARSE, NULL, 1, col, "rank: expected a whole number");
                v = v * 10 + (val[k] - '0');
            }
            if (v > 2147483647L)
                return cfit_diag_set(d, CFIT_EPARSE, NULL, 1, col, "rank: at most 2147483647");
            r->rank = v;
        } else {
            double *dst = bit == F_STEP ? &r->step_s : bit == F_DATA ? &r->data_s
                        : bit == F_AR   ? &r->allreduce_s : &r->optimizer_s;
            if (parse_seconds(val, vlen, dst))
                return cfit_diag_set(d, CFIT_EPARSE, NULL, 1, col,
                                     "%.*s: expected seconds from 0 to 1e6 (a plain number)", (int)klen, tok);
        }
    }
    if (!(seen & F_JOB))
        return cfit_diag_set(d, CFIT_EPARSE, NULL, 1, 1, "missing job=NAME");
    if (!(seen & F_RANK))
        return cfit_diag_set(d, CFIT_EPARSE, NULL, 1, 1, "missing rank=N");
    if (!(seen & F_STEP))
        return cfit_diag_set(d, CFIT_EPARSE, NULL, 1, 1, "missing step=SECONDS");
    return 0;
}
