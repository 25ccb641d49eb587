/* opts.c - nccl-tests' flags for the collective benchmarks, parsed and range-checked.
 *
 * The CLI hands every benchmark flag here by its long name, so the rules (and their fuzz
 * target, tests/fuzz/fuzz_bench_args.c) live in one place: sizes take K M G T suffixes
 * (powers of 1024) up to CFIT_BENCH_MAX_BYTES, counts are whole numbers in range, names
 * are the dtype/op/algorithm names or "all".
 */
#include "bench/coll.h"

#include <string.h>

void cfit_bench_opts_init(cfit_bench_opts *o)
{
    memset(o, 0, sizeof *o);
    o->collective = "allreduce";
    o->min_bytes = o->max_bytes = (uint64_t)32 << 20;
    o->step_bytes = (uint64_t)1 << 20;
    o->iters = 20;
    o->warmup = 5;
    o->check = 1;
    o->dtype = CFIT_DTYPE_FLOAT;
    o->op = CFIT_REDOP_SUM;
    o->algo = CFIT_BENCH_ALGO_AUTO;
    o->seed = 1;
}

static int size_arg(const char *value, uint64_t min, uint64_t *out, cfit_diag *d)
{
    uint64_t v;
    int rc = cfit_parse_size(value, &v, d);
    if (rc)
        return rc;
    if (v < min || v > CFIT_BENCH_MAX_BYTES)
        return cfit_diag_set(d, CFIT_ERANGE, NULL, 0, 0, "%s is out of range (%llu bytes to 16G)", value,
                             (unsigned long long)min);
    *out = v;
    return 0;
}

/* A whole number in [min, max]; "0" is allowed when min is 0. */
static int int_arg(const char *value, long min, long max, long *out, cfit_diag *d)
{
    uint64_t v = 0;
    if (strcmp(value, "0") != 0) {
        int rc = cfit_parse_count(value, &v, d);
        if (rc)
            return rc;
    }
    if (v < (uint64_t)min || v > (uint64_t)max)
        return cfit_diag_set(d, CFIT_ERANGE, NULL, 0, 0, "%s is out of range (%ld to %ld)", value, min, max);
    *out = (long)v;
    return 0;
}

int cfit_bench_opt(cfit_bench_opts *o, const char *name, const char *value, cfit_diag *d)
{
    long v = 0;
    int rc;
    if (strcmp(name, "minbytes") == 0)
        return size_arg(value, 0, &o->min_bytes, d);
    if (strcmp(name, "maxbytes") == 0)
        return size_arg(value, 0, &o->max_bytes, d);
    if (strcmp(name, "stepbytes") == 0)
        return size_arg(value, 1, &o->step_bytes, d);
    if (strcmp(name, "stepfactor") == 0) {
        if (!(rc = int_arg(value, 1, 1024, &v, d)))
            o->step_factor = v == 1 ? 0 : (uint64_t)v;   /* nccl-tests: 1 = use the additive step */
        return rc;
    }
    if (strcmp(name, "iters") == 0) {
        if (!(rc = int_arg(value, 1, 1000000, &v, d)))
            o->iters = (int)v;
        return rc;
    }
    if (strcmp(name, "warmup_iters") == 0) {
        if (!(rc = int_arg(value, 0, 1000000, &v, d)))
            o->warmup = (int)v;
        return rc;
    }
    if (strcmp(name, "check") == 0) {   /* nccl-tests counts checked iterations; any N > 0 checks once */
        if (!(rc = int_arg(value, 0, 1000000, &v, d)))
            o->check = v > 0;
        return rc;
    }
    if (strcmp(name, "seed") == 0) {
        if (!(rc = int_arg(value, 0, 0x7fffffffL, &v, d)))
            o->seed = (uint64_t)v;
        return rc;
    }
    if (strcmp(name, "datatype") == 0) {
        if (strcmp(value, "all") == 0)
            return o->all_dtypes = 1, 0;
        if (!(rc = cfit_dtype_parse(value, &o->dtype, d)))
            o->all_dtypes = 0;
        return rc;
    }
    if (strcmp(name, "op") == 0) {
        if (strcmp(value, "all") == 0)
            return o->all_ops = 1, 0;
        if (!(rc = cfit_redop_parse(value, &o->op, d)))
            o->all_ops = 0;
        return rc;
    }
    if (strcmp(name, "algo") == 0) {
        static const char *const names[] = {"auto", "ring", "shm"};
        for (int i = 0; i < 3; i++)
            if (strcmp(value, names[i]) == 0)
                return o->algo = (cfit_bench_algo)i, 0;
        return cfit_diag_set(d, CFIT_EUNKNOWN, NULL, 0, 0, "'%s' is not auto, ring or shm", value);
    }
    return cfit_diag_set(d, CFIT_EUNKNOWN, NULL, 0, 0, "'%s' is not a benchmark flag", name);
}

int cfit_bench_opts_check(const cfit_bench_opts *o, cfit_diag *d)
{
    if (o->min_bytes > o->max_bytes)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "--maxbytes %llu is smaller than --minbytes %llu",
                             (unsigned long long)o->max_bytes, (unsigned long long)o->min_bytes);
    if (!o->step_factor && o->step_bytes == 0)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "--stepbytes must be at least 1");
    if (!o->step_factor && (o->max_bytes - o->min_bytes) / o->step_bytes >= CFIT_BENCH_MAX_SIZES)
        return cfit_diag_set(d, CFIT_ERANGE, NULL, 0, 0,
                             "-b %llu to -e %llu in steps of -i %llu is more than %d sizes (use -f)",
                             (unsigned long long)o->min_bytes, (unsigned long long)o->max_bytes,
                             (unsigned long long)o->step_bytes, CFIT_BENCH_MAX_SIZES);
    return 0;
}

int cfit__bench_next_size(const cfit_bench_opts *o, uint64_t size, uint64_t *next)
{
    if (o->step_factor) {
        if (size > o->max_bytes / o->step_factor)
            return 0;
        *next = size ? size * o->step_factor : 1;
    } else {
        if (o->step_bytes == 0 || size > o->max_bytes - o->step_bytes)
            return 0;
        *next = size + o->step_bytes;
    }
    return *next <= o->max_bytes;
}
