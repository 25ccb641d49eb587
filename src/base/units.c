/* units.c - strict parsing of counts, sizes, rates, times and plain numbers (DESIGN §4).
 *
 * Every parser reads a decimal mantissa (digits, optional fraction, optional exponent;
 * no sign, no hex, no inf/nan, no spaces) followed by a unit from a small table.
 * Counts and sizes are computed exactly in integers: the mantissa is kept as its
 * significant digits times a power of ten, so "1.5K" is 1500 exactly and "1.5" is
 * rejected as not whole, and every multiply is checked against 2^63-1 before it is
 * made.  Rates, times and reals go through strtod (C numeric locale assumed) and must
 * come out finite.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clusterfit/base.h"

#define MAX_WHOLE ((uint64_t)INT64_MAX)
#define EXP_LIMIT 100000L   /* exponents are clamped here; far past any finite value */
#define QUOTE_MAX 64        /* bytes of the input echoed in a message */

/* ---- messages ---------------------------------------------------------- */

/* Copy at most QUOTE_MAX bytes of s into out (control bytes become '?'). */
static void quote(char out[QUOTE_MAX + 4], const char *s)
{
    size_t i = 0;
    for (; s[i] && i < QUOTE_MAX; i++)
        out[i] = ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) ? '?' : s[i];
    if (s[i]) {
        memcpy(out + i, "...", 3);
        i += 3;
    }
    out[i] = '\0';
}

/* Set "invalid KIND 'TEXT': DETAIL" and return err. */
static int fail(cfit_diag *d, int err, const char *kind, const char *text,
                const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

static int fail(cfit_diag *d, int err, const char *kind, const char *text,
                const char *fmt, ...)
{
    char detail[256], shown[QUOTE_MAX + 4];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    quote(shown, text);
    return cfit_diag_set(d, err, NULL, 0, 0, "invalid %s '%s': %s", kind, shown, detail);
}

/* Report an unknown unit or suffix, quoting it. */
static int fail_unit(cfit_diag *d, const char *kind, const char *text, const char *what,
                     const char *unit, const char *hint)
{
    char shown[QUOTE_MAX + 4];
    quote(shown, unit);
    return fail(d, CFIT_EPARSE, kind, text, "unknown %s '%s' (%s)", what, shown, hint);
}

/* ---- the mantissa ------------------------------------------------------ */

/* A decimal number as digits x 10^exp10 (trailing zeros folded into exp10). */
typedef struct decimal {
    uint64_t digits;   /* significant digits, valid unless too_many */
    long exp10;        /* clamped to +-EXP_LIMIT */
    int too_many;      /* the significant digits do not fit in 64 bits */
    size_t len;        /* characters of text consumed */
} decimal;

static long clamp_exp(long e)
{
    return e > EXP_LIMIT ? EXP_LIMIT : e < -EXP_LIMIT ? -EXP_LIMIT : e;
}

/* Append one mantissa digit; zeros are held back so trailing ones cost nothing. */
static void push_digit(decimal *x, long *zeros, int dig)
{
    if (dig == 0) {
        if (x->digits || x->too_many)
            (*zeros)++;
        return;
    }
    for (; *zeros >= 0; (*zeros)--) {   /* the held zeros, then this digit */
        int add = *zeros ? 0 : dig;
        if (x->digits > (UINT64_MAX - (uint64_t)add) / 10)
            x->too_many = 1;
        if (x->too_many)
            continue;
        x->digits = x->digits * 10 + (uint64_t)add;
    }
    *zeros = 0;
}

/* Read an optional exponent "e[+-]digits" at s; returns its length (0 if none). */
static size_t scan_exponent(const char *s, long *exp10)
{
    size_t i = 1;
    if (*s != 'e' && *s != 'E')
        return 0;
    if (s[i] == '+' || s[i] == '-')
        i++;
    if (!isdigit((unsigned char)s[i]))
        return 0;
    long e = 0;
    for (; isdigit((unsigned char)s[i]); i++)
        e = clamp_exp(e * 10 + (s[i] - '0'));
    *exp10 = s[1] == '-' ? -e : e;
    return i;
}

/* Scan digits+ ('.' digits+)? exponent? at s.  Returns 0 on success, -1 when a
 * '.' is not followed by a digit.  x->len is 0 when s does not start with a digit. */
static int scan_decimal(const char *s, decimal *x)
{
    long zeros = 0, frac = 0, e = 0;
    size_t i = 0;
    memset(x, 0, sizeof *x);
    for (; isdigit((unsigned char)s[i]); i++)
        push_digit(x, &zeros, s[i] - '0');
    if (i && s[i] == '.') {
        if (!isdigit((unsigned char)s[++i]))
            return -1;
        for (; isdigit((unsigned char)s[i]); i++, frac = clamp_exp(frac + 1))
            push_digit(x, &zeros, s[i] - '0');
    }
    if (i)
        i += scan_exponent(s + i, &e);
    x->exp10 = clamp_exp(clamp_exp(zeros - frac) + e);
    x->len = i;
    return 0;
}

/* Common front: reject empty, spaces and signs, then scan the mantissa.
 * allow_minus lets a leading '-' through (for plain reals). */
static int read_mantissa(const char *text, const char *kind, int allow_minus,
                         decimal *x, cfit_diag *d)
{
    if (!text || !*text)
        return fail(d, CFIT_EPARSE, kind, text ? text : "", "empty value");
    for (const char *p = text; *p; p++)
        if (isspace((unsigned char)*p))
            return fail(d, CFIT_EPARSE, kind, text, "unexpected space");
    const char *s = text + (allow_minus && *text == '-');
    if (*s == '+')
        return fail(d, CFIT_EPARSE, kind, text, "unexpected '+'");
    if (*s == '-')
        return fail(d, CFIT_ERANGE, kind, text, "must not be negative");
    if (scan_decimal(s, x) < 0)
        return fail(d, CFIT_EPARSE, kind, text, "expected a digit after '.'");
    if (!x->len)
        return fail(d, CFIT_EPARSE, kind, text, "expected a number");
    x->len += (size_t)(s - text);
    return CFIT_EOK;
}

/* strtod over the scanned mantissa; it must stop exactly where the scan did. */
static int mantissa_double(const char *text, const decimal *x, const char *kind,
                           double *out, cfit_diag *d)
{
    char *end;
    errno = 0;
    *out = strtod(text, &end);
    if ((size_t)(end - text) != x->len)
        return fail(d, CFIT_EPARSE, kind, text, "malformed number");
    if (!isfinite(*out))
        return fail(d, CFIT_ERANGE, kind, text, "out of range");
    return CFIT_EOK;
}

/* ---- exact integers ---------------------------------------------------- */

enum { WHOLE_OK, WHOLE_FRACTION, WHOLE_OVERFLOW, WHOLE_DIGITS };

/* out = x * 10^pow10 * 2^pow2 exactly, if it is a whole number <= 2^63-1. */
static int to_whole(const decimal *x, long pow10, int pow2, uint64_t *out)
{
    long e = x->exp10 + pow10;
    uint64_t v = x->digits;
    *out = 0;
    if (!x->too_many && v == 0)
        return WHOLE_OK;
    if (x->too_many)
        return e < 0 ? WHOLE_DIGITS : WHOLE_OVERFLOW;
    for (; e < 0; e++, pow2--) {        /* divide by 10 = by 5, then by 2 below */
        if (v % 5)
            return WHOLE_FRACTION;
        v /= 5;
    }
    for (; pow2 < 0; pow2++) {
        if (v % 2)
            return WHOLE_FRACTION;
        v /= 2;
    }
    for (; e > 0; e--) {
        if (v > MAX_WHOLE / 10)
            return WHOLE_OVERFLOW;
        v *= 10;
    }
    if (v > MAX_WHOLE >> pow2)
        return WHOLE_OVERFLOW;
    *out = v << pow2;
    return WHOLE_OK;
}

static int whole_fail(int status, const char *kind, const char *text, const char *what,
                      cfit_diag *d)
{
    if (status == WHOLE_FRACTION)
        return fail(d, CFIT_EPARSE, kind, text, "not a whole number of %s", what);
    if (status == WHOLE_DIGITS)
        return fail(d, CFIT_ERANGE, kind, text, "too many significant digits");
    return fail(d, CFIT_ERANGE, kind, text, "out of range (at most %llu)",
                (unsigned long long)MAX_WHOLE);
}

/* Index of c (case-insensitive) in letters, plus one; 0 if absent or c is NUL. */
static int prefix_index(const char *letters, char c)
{
    const char *p = c ? strchr(letters, toupper((unsigned char)c)) : NULL;
    return p ? (int)(p - letters) + 1 : 0;
}

/* ---- public parsers ---------------------------------------------------- */

int cfit_parse_count(const char *text, uint64_t *out, cfit_diag *d)
{
    static const char *const kind = "count";
    decimal x;
    uint64_t v;
    int rc = read_mantissa(text, kind, 0, &x, d);
    if (rc)
        return rc;
    const char *suf = text + x.len;
    int k = prefix_index("KMBT", *suf);
    if (*suf && (!k || suf[1]))
        return fail_unit(d, kind, text, "suffix", suf, "use K M B T");
    int st = to_whole(&x, 3L * k, 0, &v);
    if (st != WHOLE_OK)
        return whole_fail(st, kind, text, "items", d);
    if (v == 0)
        return fail(d, CFIT_ERANGE, kind, text, "must be at least 1");
    *out = v;
    return CFIT_EOK;
}

int cfit_parse_size(const char *text, uint64_t *out_bytes, cfit_diag *d)
{
    static const char *const kind = "size";
    decimal x;
    uint64_t v;
    int rc = read_mantissa(text, kind, 0, &x, d);
    if (rc)
        return rc;
    const char *suf = text + x.len;
    int k = prefix_index("KMGTP", *suf);
    const char *tail = suf + (k > 0);
    if (strcmp(tail, "") && strcmp(tail, "B") && !(k && !strcmp(tail, "iB")))
        return fail_unit(d, kind, text, "suffix", suf, "use K M G T P");
    int st = to_whole(&x, 0, 10 * k, &v);
    if (st != WHOLE_OK)
        return whole_fail(st, kind, text, "bytes", d);
    *out_bytes = v;
    return CFIT_EOK;
}

/* Rate units after the K M G T prefix: bits or bytes per second. */
static const struct rate_unit {
    const char *tail;
    double bytes;       /* bytes per unit */
} rate_units[] = {
    {"bps", 0.125}, {"b/s", 0.125}, {"bit/s", 0.125},
    {"Bps", 1.0}, {"B/s", 1.0}, {NULL, 0.0}
};

int cfit_parse_rate(const char *text, double *out_bytes_per_s, cfit_diag *d)
{
    static const char *const kind = "rate";
    static const char *const hint = "use e.g. 400G, 400Gbps or 50GB/s";
    decimal x;
    double v;
    int rc = read_mantissa(text, kind, 0, &x, d);
    if (rc)
        return rc;
    const char *suf = text + x.len;
    int k = prefix_index("KMGT", *suf);
    const char *tail = suf + (k > 0);
    double unit = k && !*tail ? 0.125 : 0.0;   /* "400G" is bits */
    for (const struct rate_unit *u = rate_units; u->tail && unit == 0.0; u++)
        if (!strcmp(tail, u->tail))
            unit = u->bytes;
    if (!*suf)
        return fail(d, CFIT_EPARSE, kind, text, "missing unit (e.g. 400G or 50GB/s)");
    if (unit == 0.0)
        return fail_unit(d, kind, text, "unit", suf, hint);
    if ((rc = mantissa_double(text, &x, kind, &v, d)))
        return rc;
    v *= pow(1000.0, k) * unit;
    if (!isfinite(v))
        return fail(d, CFIT_ERANGE, kind, text, "out of range");
    if (v <= 0.0)
        return fail(d, CFIT_ERANGE, kind, text, "must be greater than zero");
    *out_bytes_per_s = v;
    return CFIT_EOK;
}

/* Sub-second units divide, so "5ms" is exactly the double nearest 0.005. */
static const struct time_unit {
    const char *name;
    double mul, div;
} time_units[] = {
    {"ns", 1.0, 1e9}, {"us", 1.0, 1e6}, {"ms", 1.0, 1e3}, {"s", 1.0, 1.0},
    {"m", 60.0, 1.0}, {"h", 3600.0, 1.0}, {"d", 86400.0, 1.0}, {NULL, 0.0, 1.0}
};

int cfit_parse_time(const char *text, double *out_s, cfit_diag *d)
{
    static const char *const kind = "time";
    decimal x;
    double v;
    int rc = read_mantissa(text, kind, 0, &x, d);
    if (rc)
        return rc;
    const char *suf = text + x.len;
    const struct time_unit *u = time_units;
    while (u->name && strcmp(suf, u->name))
        u++;
    int zero = !x.too_many && x.digits == 0;
    if (!*suf && !zero)
        return fail(d, CFIT_EPARSE, kind, text, "missing unit (e.g. 5ms)");
    if (*suf && !u->name)
        return fail_unit(d, kind, text, "unit", suf, "use ns us ms s m h d");
    if ((rc = mantissa_double(text, &x, kind, &v, d)))
        return rc;
    v = v * u->mul / u->div;   /* a bare zero meets the NULL row: 0 * 0 / 1 */
    if (!isfinite(v))
        return fail(d, CFIT_ERANGE, kind, text, "out of range");
    *out_s = v;
    return CFIT_EOK;
}

int cfit_parse_real(const char *text, double *out, cfit_diag *d)
{
    static const char *const kind = "number";
    decimal x;
    double v;
    int rc = read_mantissa(text, kind, 1, &x, d);
    if (rc)
        return rc;
    if (text[x.len]) {
        char shown[QUOTE_MAX + 4];
        quote(shown, text + x.len);
        return fail(d, CFIT_EPARSE, kind, text, "unexpected '%s' after the number", shown);
    }
    if ((rc = mantissa_double(text, &x, kind, &v, d)))
        return rc;
    *out = v;
    return CFIT_EOK;
}

/* ---- did you mean ------------------------------------------------------ */

/* Levenshtein distance between a and b, using row (|b|+1 entries) as scratch. */
static size_t edit_distance(const char *a, size_t na, const char *b, size_t nb, size_t *row)
{
    for (size_t j = 0; j <= nb; j++)
        row[j] = j;
    for (size_t i = 1; i <= na; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= nb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[nb];
}

size_t cfit_edit_distance(const char *a, const char *b)
{
    size_t na = strlen(a), nb = strlen(b);
    size_t *row = malloc((nb + 1) * sizeof *row);
    if (!row)
        return (size_t)-1;
    size_t dist = edit_distance(a, na, b, nb, row);
    free(row);
    return dist;
}

const char *cfit_closest(const char *name, const char *const *candidates, size_t n)
{
    if (!name || !candidates)
        return NULL;
    size_t nlen = strlen(name);
    size_t limit = nlen / 3 > 2 ? nlen / 3 : 2;
    size_t best_d = limit + 1;
    const char *best = NULL;
    for (size_t i = 0; i < n; i++) {
        const char *c = candidates[i];
        size_t clen = c ? strlen(c) : 0;
        size_t gap = clen > nlen ? clen - nlen : nlen - clen;
        if (!c || gap >= best_d)   /* the distance is at least the length gap */
            continue;
        size_t *row = malloc((clen + 1) * sizeof *row);
        if (!row)
            return best;
        size_t dist = edit_distance(name, nlen, c, clen, row);
        free(row);
        if (dist < best_d)
            best_d = dist, best = c;
    }
    return best;
}

const char *cfit_suggest(const char *name, const char *const *candidates, size_t n)
{
    if (!name || !candidates)
        return NULL;
    size_t len = strlen(name);
    const char *best = NULL;
    for (size_t i = 0; len >= 2 && i < n; i++)
        if (candidates[i] && strncmp(candidates[i], name, len) == 0 &&
            (!best || strlen(candidates[i]) < strlen(best)))
            best = candidates[i];
    return best ? best : cfit_closest(name, candidates, n);
}
