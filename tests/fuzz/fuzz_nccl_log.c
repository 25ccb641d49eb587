/* fuzz_nccl_log.c - fuzz target for the nccl-tests log reader behind `plan --calibration LOG`
 * (src/core/nccl_log.c).
 *
 * Oracles beyond "no crash": a refusal names the file, says why and points inside the input (a
 * line within the text, or 0 for whole-file errors); an accepted log gives a positive, finite
 * bandwidth and latency, at least two hosts, a collective the planner models, a step count that
 * matches cfit_calibration_steps(), latency = alpha / steps, a positive fit with a non-negative
 * error and at most CFIT_CALIBRATION_MAX_POINTS points with sizes increasing.  Each input is also
 * fed through cfit_calibration_parse(), which must agree unless the text looks like JSON.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "clusterfit/calibration.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int ok)
{
    if (!ok)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cfit_calibration c;
    cfit_diag d;
    cfit_diag_clear(&d);
    int lines = 1;
    for (size_t i = 0; i < size; i++)
        lines += data[i] == '\n';
    int rc = cfit_calibration_parse_nccl_log((const char *)data, size, "fuzz.log", &c, &d);
    /* the content-detecting reader takes a text that does not start like JSON ('{', '[', a
     * byte-order mark, or nothing but blanks) as a log too: the same refusal, or the same
     * acceptance unless its range check refuses the figures */
    size_t first = 0;
    while (first < size && (data[first] == ' ' || data[first] == '\t' || data[first] == '\r' || data[first] == '\n'))
        first++;
    if (first < size && data[first] != '{' && data[first] != '[' && data[first] != 0xEF) {
        cfit_calibration c2;
        cfit_diag d2;
        cfit_diag_clear(&d2);
        int rc2 = cfit_calibration_parse((const char *)data, size, "fuzz.log", &c2, &d2);
        check(rc ? rc2 == rc : rc2 == CFIT_EOK || rc2 == CFIT_ERANGE);
    }
    if (rc) {
        check(rc == CFIT_EPARSE || rc == CFIT_EINVALID || rc == CFIT_ERANGE || rc == CFIT_ENOMEM);
        check(d.msg[0] != '\0' && strcmp(d.file, "fuzz.log") == 0);
        check(d.line >= 0 && d.line <= lines && d.col >= 0);
        return 0;
    }
    check(isfinite(c.bw_bytes_per_s) && c.bw_bytes_per_s > 0);
    check(isfinite(c.latency_s) && c.latency_s > 0);
    check(c.hosts >= 2 && c.ranks >= c.hosts && c.steps >= 1);
    check(c.steps == cfit_calibration_steps(c.benchmark, c.ranks));
    check(strcmp(c.source, "nccl-tests") == 0);
    check(c.fit_alpha_s > 0 && c.fit_beta_bytes_per_s > 0 && c.fit_error >= 0 && c.fit_rows >= 2);
    check(fabs(c.latency_s - c.fit_alpha_s / c.steps) <= 1e-12 * c.fit_alpha_s);
    check(c.npoints >= 1 && c.npoints <= CFIT_CALIBRATION_MAX_POINTS);
    for (int i = 1; i < c.npoints; i++)
        check(c.points[i].size_bytes > c.points[i - 1].size_bytes);
    check(c.points[c.npoints - 1].busbw_bytes_per_s == c.bw_bytes_per_s);
    return 0;
}
