/* fuzz_calibration.c - fuzz target for the bench-file reader behind `plan --calibration`
 * (src/core/calibration.c).
 *
 * Oracles beyond "no crash": a refusal names the file, says why and points inside the input
 * (line and column within the text, or 0 for whole-file range errors); an accepted file gives
 * a positive, finite bandwidth and latency, at least two hosts, a known benchmark and a step
 * count that matches cfit_calibration_steps().
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
    int rc = cfit_calibration_parse((const char *)data, size, "fuzz.json", &c, &d);
    if (rc) {
        check(rc == CFIT_EPARSE || rc == CFIT_EINVALID || rc == CFIT_ERANGE || rc == CFIT_ENOMEM);
        check(d.msg[0] != '\0' && strcmp(d.file, "fuzz.json") == 0);
        check(d.line >= 0 && d.line <= lines && d.col >= 0);
        return 0;
    }
    check(isfinite(c.bw_bytes_per_s) && c.bw_bytes_per_s > 0);
    check(isfinite(c.latency_s) && c.latency_s > 0);
    check(c.hosts >= 2 && c.ranks >= c.hosts && c.steps >= 1);
    if (strcmp(c.benchmark, "pairs") == 0)
        check(c.steps == 1);
    else
        check(c.steps == cfit_calibration_steps(c.benchmark, c.ranks));
    return 0;
}
