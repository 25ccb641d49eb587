/* fuzz_jobline.c - fuzz target for the job report line parser (src/exporter/jobline.c).
 *
 * Oracles beyond "no crash": a rejected line has a message and a column inside the line; an
 * accepted one has a valid job name, a rank in range and finite times in [0, 1e6], and the
 * line rebuilt from the report parses back to the same report. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clusterfit/exporter.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int ok)
{
    if (!ok)
        abort();
}

static int seconds_ok(double s)
{
    return isfinite(s) && s >= 0 && s <= 1e6;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cfit_job_report r, again;
    cfit_diag d;
    int rc = cfit_job_parse_line((const char *)data, size, &r, &d);
    if (rc) {
        check(rc == CFIT_EPARSE && d.msg[0] && d.line == 1 && d.col >= 1 && (size_t)d.col <= size + 1);
        return 0;
    }
    size_t n = strlen(r.job);
    check(n >= 1 && n <= CFIT_JOB_NAME_MAX && strspn(r.job, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:-") == n);
    check(r.rank >= 0 && r.rank <= 2147483647L);
    check(seconds_ok(r.step_s) && seconds_ok(r.data_s) && seconds_ok(r.allreduce_s) && seconds_ok(r.optimizer_s));
    char line[256];
    int len = snprintf(line, sizeof line, "job=%s rank=%ld step=%.17g data=%.17g allreduce=%.17g optimizer=%.17g",
                       r.job, r.rank, r.step_s, r.data_s, r.allreduce_s, r.optimizer_s);
    check(len > 0 && (size_t)len < sizeof line);
    check(cfit_job_parse_line(line, (size_t)len, &again, &d) == 0);
    check(strcmp(again.job, r.job) == 0 && again.rank == r.rank && again.step_s == r.step_s &&
          again.data_s == r.data_s && again.allreduce_s == r.allreduce_s && again.optimizer_s == r.optimizer_s);
    return 0;
}
