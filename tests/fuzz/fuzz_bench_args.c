/* fuzz_bench_args.c - fuzz target for the collective benchmarks' flag parser (src/bench/opts.c).
 *
 * The input is lines "NAME=VALUE" (a missing '=' gives an empty value), applied in order to
 * one cfit_bench_opts with cfit_bench_opt(), then cfit_bench_opts_check().  Oracles beyond
 * "no crash": a rejected flag sets a message and leaves the options unchanged; accepted
 * values are in their documented ranges; and when the check passes, the sweep the driver
 * would run has between 1 and CFIT_BENCH_MAX_SIZES sizes, all within [-b, -e] and rising.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bench/coll.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int ok)
{
    if (!ok)
        abort();
}

static void check_ranges(const cfit_bench_opts *o)
{
    check(o->min_bytes <= CFIT_BENCH_MAX_BYTES && o->max_bytes <= CFIT_BENCH_MAX_BYTES);
    check(o->step_bytes >= 1 && o->step_bytes <= CFIT_BENCH_MAX_BYTES);
    check(o->step_factor == 0 || (o->step_factor >= 2 && o->step_factor <= 1024));
    check(o->iters >= 1 && o->iters <= 1000000 && o->warmup >= 0 && o->warmup <= 1000000);
    check(o->check == 0 || o->check == 1);
    check((unsigned)o->dtype < CFIT_DTYPE_COUNT && (unsigned)o->op < CFIT_REDOP_COUNT);
    check((unsigned)o->algo <= CFIT_BENCH_ALGO_SHM);
}

static void apply(cfit_bench_opts *o, char *line)
{
    char *eq = strchr(line, '=');
    const char *value = "";
    if (eq) {
        *eq = '\0';
        value = eq + 1;
    }
    cfit_bench_opts before = *o;
    cfit_diag d;
    cfit_diag_clear(&d);
    if (cfit_bench_opt(o, line, value, &d)) {
        check(d.msg[0] != '\0');
        check(memcmp(&before, o, sizeof before) == 0);
    }
    check_ranges(o);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    cfit_bench_opts o;
    cfit_bench_opts_init(&o);
    for (char *line = s, *nl; line; line = nl) {
        nl = strchr(line, '\n');
        if (nl)
            *nl++ = '\0';
        if (*line)
            apply(&o, line);
    }
    cfit_diag d;
    cfit_diag_clear(&d);
    if (cfit_bench_opts_check(&o, &d) == 0) {
        uint64_t sz = o.min_bytes, next;
        long n = 1;
        while (cfit__bench_next_size(&o, sz, &next)) {
            check(next > sz && next <= o.max_bytes);
            sz = next;
            check(++n <= CFIT_BENCH_MAX_SIZES);
        }
    } else {
        check(d.msg[0] != '\0');
    }
    free(s);
    return 0;
}
