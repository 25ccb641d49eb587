/* memory.h - `clusterfit bench memory`: STREAM copy, scale, add and triad on host memory.
 *
 * Follows McCalpin's STREAM: three arrays of doubles a, b, c; each of ntimes iterations runs
 * copy c = a, scale b = s*c, add c = a + b, triad a = b + s*c (s = 3) and times each kernel;
 * the first iteration is a warm-up and is left out of the statistics; the rate is bytes counted
 * the STREAM way (copy and scale 2 x 8 bytes per element, add and triad 3 x 8; write-allocate
 * traffic not counted) over the best (minimum) time.  Threads own contiguous slices of every
 * array and touch their slice first, so pages land on their NUMA node.  After the run every
 * element is checked against the recurrence's exact values, like STREAM's checkSTREAMresults.
 */
#ifndef CLUSTERFIT_MEMORY_H
#define CLUSTERFIT_MEMORY_H

#include <stddef.h>
#include <stdint.h>
#include "clusterfit/base.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { CFIT_STREAM_COPY, CFIT_STREAM_SCALE, CFIT_STREAM_ADD, CFIT_STREAM_TRIAD, CFIT_STREAM_KERNELS };

typedef struct cfit_memory_opts {
    uint64_t array_bytes;      /* bytes per array; 0 = 4 x the last-level cache (128 MiB if unknown) */
    int threads;               /* >= 1; 0 = online CPUs */
    int ntimes;                /* iterations, >= 2 (the first is not counted) */
} cfit_memory_opts;

typedef struct cfit_memory_kernel {
    const char *name;          /* "Copy", "Scale", "Add", "Triad" */
    double bytes;              /* bytes counted per iteration */
    double min_s, avg_s, max_s;
    double best_bytes_per_s;   /* bytes / min_s */
} cfit_memory_kernel;

typedef struct cfit_memory_result {
    uint64_t elements;         /* doubles per array */
    uint64_t array_bytes;
    uint64_t llc_bytes;        /* last-level cache found in sysfs (all instances); 0 if unknown */
    int threads, ntimes;
    cfit_memory_kernel k[CFIT_STREAM_KERNELS];
    uint64_t wrong;            /* elements off the expected values (0 = validated) */
    double avg_err[3];         /* mean absolute relative error of a, b, c */
} cfit_memory_result;

/* Total last-level cache in bytes from sysfs under root ("/sys" normally), summed over distinct
 * cache instances; 0 when it cannot be read. */
CFIT_API uint64_t cfit_memory_llc_bytes(const char *sysfs_root);

/* Run STREAM.  Returns CFIT_EOK (check res->wrong for the validation), CFIT_EINVALID for bad
 * options, CFIT_ENOMEM or CFIT_ESYS (threads) with d set. */
CFIT_API int cfit_memory_run(const cfit_memory_opts *o, cfit_memory_result *res, cfit_diag *d);

/* STREAM's validation: elements of a, b, c (n each) that differ from the values ntimes
 * iterations give (relative error above 1e-13); avg_err[3] gets the mean relative errors
 * (may be NULL). */
CFIT_API uint64_t cfit_memory_validate(const double *a, const double *b, const double *c, size_t n, int ntimes,
                              double *avg_err);

#ifdef __cplusplus
}
#endif
#endif
