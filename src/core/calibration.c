/* calibration.c - read a `clusterfit bench --json` file into measured fabric numbers (calibration.h).
 *
 * The reader walks the position-tracking JSON tree (base/json.h) so that every refusal names the
 * line and column of the value at fault: the "hosts" that says the run stayed on one host, the
 * "wrong" count of a bad row, the key that is missing (the position of its object then).
 */
#include "clusterfit/calibration.h"
#include "clusterfit/collective.h"
#include "base/json.h"
#include "base/file.h"

#include <errno.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct reader {
    const char *file;
    cfit_diag *d;
} reader;

#if defined(__GNUC__)
__attribute__((format(printf, 5, 6)))
#endif
static int fail_at(const reader *r, int err, int line, int col, const char *fmt, ...)
{
    char msg[sizeof r->d->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return cfit_diag_set(r->d, err, r->file, line, col, "%s", msg);
}

/* The member `key` of obj (an object), or NULL after setting "missing key" at obj's position. */
static const cfit_json *need(const reader *r, const cfit_json *obj, const char *key, const char *where,
                              int *err)
{
    const cfit_json *v = cfit_json_get(obj, key);
    if (!v)
        *err = fail_at(r, CFIT_EPARSE, obj->line, obj->col, "%s has no \"%s\" (required for a calibration)",
                       where, key);
    return v;
}

static int need_number(const reader *r, const cfit_json *obj, const char *key, const char *where,
                       double *out)
{
    int err = CFIT_EOK;
    const cfit_json *v = need(r, obj, key, where, &err);
    if (!v)
        return err;
    if (v->type != CFIT_JSON_NUMBER)
        return fail_at(r, CFIT_EPARSE, v->line, v->col, "\"%s\" must be a number, not %s", key,
                       cfit_json_type_name(v->type));
    *out = v->number;
    return CFIT_EOK;
}

/* A whole number in [min, 2^31). */
static int need_int(const reader *r, const cfit_json *obj, const char *key, const char *where, long min,
                    long *out)
{
    double x;
    int err = need_number(r, obj, key, where, &x);
    if (err)
        return err;
    if (x != floor(x) || x < (double)min || x >= 2147483648.0) {
        const cfit_json *v = cfit_json_get(obj, key);
        return fail_at(r, CFIT_ERANGE, v->line, v->col, "\"%s\" must be a whole number >= %ld", key, min);
    }
    *out = (long)x;
    return CFIT_EOK;
}

int cfit_calibration_steps(const char *benchmark, int n)
{
    const cfit_coll_info *e = cfit_coll_find(benchmark);
    if (n < 2 || !e || strcmp(e->name, benchmark) != 0 || !e->ring_steps)   /* `bench --json` spells it so */
        return 0;
    return e->ring_steps(n);
}

/* One row of "results": its size, time, busbw and wrong count, checked. */
typedef struct row {
    double size, time, busbw;
    int in_place;
} row;

static int read_row(const reader *r, const cfit_json *it, row *out)
{
    const char *where = "a \"results\" entry";
    if (it->type != CFIT_JSON_OBJECT)
        return fail_at(r, CFIT_EPARSE, it->line, it->col, "%s must be an object, not %s", where,
                       cfit_json_type_name(it->type));
    long wrong = 0;
    int err = need_int(r, it, "wrong", where, 0, &wrong);
    if (err)
        return err;
    if (wrong > 0) {
        const cfit_json *v = cfit_json_get(it, "wrong");
        return fail_at(r, CFIT_EINVALID, v->line, v->col,
                       "this run had %ld wrong element%s: a benchmark that failed its check cannot calibrate "
                       "the fabric", wrong, wrong == 1 ? "" : "s");
    }
    if ((err = need_number(r, it, "size_bytes", where, &out->size)) ||
        (err = need_number(r, it, "time_s", where, &out->time)) ||
        (err = need_number(r, it, "busbw_gbs", where, &out->busbw)))
        return err;
    const cfit_json *ip = need(r, it, "in_place", where, &err);
    if (!ip)
        return err;
    if (ip->type != CFIT_JSON_BOOL)
        return fail_at(r, CFIT_EPARSE, ip->line, ip->col, "\"%s\" must be true or false, not %s", "in_place",
                       cfit_json_type_name(ip->type));
    out->in_place = ip->boolean;
    const char *bad = out->size < 0 ? "size_bytes" : out->time < 0 ? "time_s" : out->busbw < 0 ? "busbw_gbs" : NULL;
    if (bad) {
        const cfit_json *v = cfit_json_get(it, bad);
        return fail_at(r, CFIT_ERANGE, v->line, v->col, "\"%s\" must not be negative", bad);
    }
    return CFIT_EOK;
}

static int read_collective(const reader *r, const cfit_json *root, cfit_calibration *out)
{
    long ranks = 0, hosts = 0;
    int err;
    if ((err = need_int(r, root, "ranks", "the file", 1, &ranks)) ||
        (err = need_int(r, root, "hosts", "the file", 1, &hosts)))
        return err;
    if (hosts < 2) {
        const cfit_json *v = cfit_json_get(root, "hosts");
        return fail_at(r, CFIT_EINVALID, v->line, v->col,
                       "measured within one host (\"hosts\": 1): that is shared memory, not the fabric; run "
                       "the benchmark with ranks on two or more hosts");
    }
    if (ranks < hosts) {
        const cfit_json *v = cfit_json_get(root, "ranks");
        return fail_at(r, CFIT_EINVALID, v->line, v->col, "\"ranks\" is smaller than \"hosts\"");
    }
    const cfit_json *wt = cfit_json_get(root, "wrong_total");
    if (wt && wt->type == CFIT_JSON_NUMBER && wt->number > 0)
        return fail_at(r, CFIT_EINVALID, wt->line, wt->col,
                       "the run had wrong elements (\"wrong_total\" > 0): a benchmark that failed its check "
                       "cannot calibrate the fabric");
    const cfit_json *res = need(r, root, "results", "the file", &err);
    if (!res)
        return err;
    if (res->type != CFIT_JSON_ARRAY)
        return fail_at(r, CFIT_EPARSE, res->line, res->col, "\"%s\" must be an array, not %s", "results",
                       cfit_json_type_name(res->type));
    out->steps = cfit_calibration_steps(out->benchmark, (int)ranks);
    int have = 0;
    row big = {0, 0, 0, 0}, small = {0, 0, 0, 0};
    for (size_t i = 0; i < res->n; i++) {   /* check every row, then use the out-of-place ones */
        row w;
        if ((err = read_row(r, res->items[i], &w)))
            return err;
        if (w.in_place || w.size <= 0)
            continue;
        if (!have || w.size > big.size)
            big = w;
        if (!have || w.size < small.size)
            small = w;
        have = 1;
    }
    if (!have)
        return fail_at(r, CFIT_EINVALID, res->line, res->col,
                       "\"results\" has no out-of-place row with a size above 0 bytes");
    if (big.busbw <= 0 || small.time <= 0)
        return fail_at(r, CFIT_ERANGE, res->line, res->col,
                       "the largest size has no bandwidth or the smallest no time (busbw_gbs and time_s must "
                       "be above 0)");
    out->ranks = (int)ranks;
    out->hosts = (int)hosts;
    out->bw_bytes_per_s = big.busbw * 1e9;
    out->bw_size_bytes = big.size;
    out->lat_size_bytes = small.size;
    out->latency_s = small.time / out->steps;
    return CFIT_EOK;
}

static int read_pairs(const reader *r, const cfit_json *root, cfit_calibration *out)
{
    int err = CFIT_EOK;
    const cfit_json *h = need(r, root, "hosts", "the file", &err);
    if (!h)
        return err;
    if (h->type != CFIT_JSON_ARRAY)
        return fail_at(r, CFIT_EPARSE, h->line, h->col, "\"%s\" of a pairs run must be an array of host names, "
                       "not %s", "hosts", cfit_json_type_name(h->type));
    if (h->n < 2)
        return fail_at(r, CFIT_EINVALID, h->line, h->col, "measured within one host (\"hosts\" names %s): "
                       "there is no fabric link to calibrate", h->n ? "one" : "none");
    double bw, lat, size = 0;
    if ((err = need_number(r, root, "median_bandwidth_gbs", "the file", &bw)) ||
        (err = need_number(r, root, "median_latency_s", "the file", &lat)))
        return err;
    const char *bad = !(bw > 0) ? "median_bandwidth_gbs" : !(lat > 0) ? "median_latency_s" : NULL;
    if (bad) {
        const cfit_json *v = cfit_json_get(root, bad);
        return fail_at(r, CFIT_ERANGE, v->line, v->col, "\"%s\" must be above 0", bad);
    }
    const cfit_json *sz = cfit_json_get(root, "size_bytes");
    if (sz && sz->type == CFIT_JSON_NUMBER && sz->number > 0)
        size = sz->number;
    out->ranks = out->hosts = (int)(h->n > 1 << 30 ? 1 << 30 : h->n);
    out->bw_bytes_per_s = bw * 1e9;
    out->latency_s = lat;
    out->bw_size_bytes = out->lat_size_bytes = size;
    out->steps = 1;
    return CFIT_EOK;
}

/* The refusal of a "benchmark" that is neither a modelled collective (collective.h) nor pairs. */
static int unknown_benchmark(const reader *r, const cfit_json *b)
{
    const char *fabric[CFIT_COLL_COUNT + 1];
    for (int c = 0; c < CFIT_COLL_COUNT; c++)
        fabric[c] = cfit_collective_name((cfit_collective)c);
    fabric[CFIT_COLL_COUNT] = "pairs";
    const char *near = cfit_closest(b->string, fabric, CFIT_COLL_COUNT + 1);
    char list[160];
    if (strcmp(b->string, "storage") == 0 || strcmp(b->string, "memory") == 0)
        return fail_at(r, CFIT_EINVALID, b->line, b->col, "a %s benchmark measures no fabric; calibrate with "
                       "a collective or pairs run across hosts", b->string);
    if (near)
        return fail_at(r, CFIT_EINVALID, b->line, b->col, "unknown benchmark \"%s\" (did you mean \"%s\"?)",
                       b->string, near);
    return fail_at(r, CFIT_EINVALID, b->line, b->col, "unknown benchmark \"%s\" (expected %s)", b->string,
                   cfit_coll_list(list, sizeof list, 0, "pairs"));
}

static int parse_json(const char *text, size_t len, const char *file, cfit_calibration *out, cfit_diag *d)
{
    reader r = {file ? file : "", d};
    memset(out, 0, sizeof *out);
    snprintf(out->file, sizeof out->file, "%s", r.file);
    snprintf(out->source, sizeof out->source, "bench-json");
    out->fit_error = -1;
    int err = CFIT_EOK;
    cfit_json *root = cfit_json_parse(text, len, file, &err, d);
    if (!root)
        return err;
    const cfit_json *b = NULL;
    if (root->type != CFIT_JSON_OBJECT)
        err = fail_at(&r, CFIT_EPARSE, root->line, root->col, "expected the object `clusterfit bench --json` "
                      "writes, not %s", cfit_json_type_name(root->type));
    else if ((b = need(&r, root, "benchmark", "the file", &err)) && b->type != CFIT_JSON_STRING)
        err = fail_at(&r, CFIT_EPARSE, b->line, b->col, "\"%s\" must be a string, not %s", "benchmark",
                      cfit_json_type_name(b->type));
    if (err) {
        cfit_json_free(root);
        return err;
    }
    const cfit_coll_info *e = cfit_coll_find(b->string);
    int pairs = strcmp(b->string, "pairs") == 0;
    if (pairs || (e && e->id != CFIT_COLL_COUNT && strcmp(e->name, b->string) == 0)) {
        snprintf(out->benchmark, sizeof out->benchmark, "%s", b->string);
        err = pairs ? read_pairs(&r, root, out) : read_collective(&r, root, out);
    } else {
        err = unknown_benchmark(&r, b);
    }
    cfit_json_free(root);
    return err;
}

/* JSON when the first byte after blanks (and a UTF-8 byte-order mark) is '{', or '[' not followed by
 * an MPI output tag such as "[1,0]<stdout>:"; otherwise an nccl-tests log. */
static int looks_json(const char *s, size_t n)
{
    size_t i = 0;
    if (n >= 3 && (unsigned char)s[0] == 0xEF && (unsigned char)s[1] == 0xBB && (unsigned char)s[2] == 0xBF)
        i = 3;
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n'))
        i++;
    if (i == n || s[i] == '{')
        return 1;
    if (s[i] != '[')
        return 0;
    size_t j = i + 1;
    while (j < n && s[j] >= '0' && s[j] <= '9')
        j++;
    return !(j > i + 1 && j < n && s[j] == ',');
}

int cfit_calibration_parse(const char *text, size_t len, const char *file, cfit_calibration *out,
                           cfit_diag *d)
{
    int err = looks_json(text, len) ? parse_json(text, len, file, out, d)
                                    : cfit_calibration_parse_nccl_log(text, len, file, out, d);
    if (!err && !(isfinite(out->bw_bytes_per_s) && isfinite(out->latency_s) && out->bw_bytes_per_s < 1e15 &&
                  out->latency_s < 3600))
        err = cfit_diag_set(d, CFIT_ERANGE, file ? file : "", 0, 0, "measured bandwidth %.3g B/s or latency %.3g s is out "
                            "of range", out->bw_bytes_per_s, out->latency_s);
    return err;
}

int cfit_calibration_load(const char *path, cfit_calibration *out, cfit_diag *d)
{
    char *buf;
    size_t n;
    int err = cfit__read_input(path, (size_t)64 << 20, &buf, &n, d);
    if (!err)
        err = cfit_calibration_parse(buf, n, cfit_input_name(path), out, d);
    free(buf);
    return err;
}
