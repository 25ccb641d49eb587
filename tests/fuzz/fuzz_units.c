/* fuzz_units.c - fuzz target for the unit parsers, cfit_closest and cfit_suggest (src/base/units.c).
 *
 * Oracles beyond "no crash": failures set a message; results are in range; a parsed
 * count or size printed as plain digits parses back to the same value; a suggestion
 * is always one of the candidates.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clusterfit/base.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef int (*parse_u64_fn)(const char *, uint64_t *, cfit_diag *);
typedef int (*parse_dbl_fn)(const char *, double *, cfit_diag *);

static void check(int ok)
{
    if (!ok)
        abort();
}

static void check_failure(int rc, const cfit_diag *d)
{
    check(rc == CFIT_EPARSE || rc == CFIT_ERANGE);
    check(d->msg[0] != '\0' && d->line == 0 && d->col == 0 && d->file[0] == '\0');
}

/* Parse s; on success the value must be in [min, 2^63-1] and print-parse the same. */
static void fuzz_u64(parse_u64_fn fn, const char *s, uint64_t min)
{
    cfit_diag d;
    uint64_t v = 0, again = 0;
    char digits[32];
    cfit_diag_clear(&d);
    int rc = fn(s, &v, &d);
    if (rc) {
        check_failure(rc, &d);
        return;
    }
    check(v >= min && v <= (uint64_t)INT64_MAX);
    snprintf(digits, sizeof digits, "%llu", (unsigned long long)v);
    check(fn(digits, &again, &d) == CFIT_EOK && again == v);
}

/* Parse s; on success the value must be finite and at least min (strictly if strict). */
static void fuzz_dbl(parse_dbl_fn fn, const char *s, double min, int strict)
{
    cfit_diag d;
    double v = 0.0;
    cfit_diag_clear(&d);
    int rc = fn(s, &v, &d);
    if (rc) {
        check_failure(rc, &d);
        return;
    }
    check(isfinite(v) && (strict ? v > min : v >= min));
}

static void fuzz_closest(const char *s)
{
    const char *names[] = {"h100-sxm", "h200-sxm", "b200", "mi300x", "llama3-70b",
                           "fattree", NULL, "", s};
    const size_t n = sizeof names / sizeof names[0];
    const char *got = cfit_closest(s, names, n - 1);
    int member = got == NULL;
    for (size_t i = 0; i + 1 < n; i++)
        member |= got == names[i];
    check(member);
    if (strlen(s) <= 256)   /* keep the quadratic distance cheap */
        check(cfit_closest(s, names, n) != NULL);   /* s itself is at distance 0 */
    got = strlen(s) <= 256 ? cfit_suggest(s, names, n - 1) : NULL;
    member = got == NULL;
    for (size_t i = 0; i + 1 < n; i++)
        member |= got == names[i];
    check(member);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    fuzz_u64(cfit_parse_count, s, 1);
    fuzz_u64(cfit_parse_size, s, 0);
    fuzz_dbl(cfit_parse_rate, s, 0.0, 1);
    fuzz_dbl(cfit_parse_time, s, 0.0, 0);
    fuzz_dbl(cfit_parse_real, s, -INFINITY, 1);
    fuzz_closest(s);
    free(s);
    return 0;
}
