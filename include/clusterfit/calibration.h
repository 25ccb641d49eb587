/* calibration.h - measured fabric numbers for the planner, read from a `clusterfit bench --json` file
 * or from the text log of an nccl-tests binary (all_reduce_perf, all_gather_perf, ...).
 *
 * `plan --calibration FILE` replaces the catalog fabric's achievable rate (bandwidth x efficiency)
 * and per-step latency with what a benchmark measured across hosts.  Two shapes are accepted:
 * a collective run (allreduce, allgather, reducescatter, alltoall, sendrecv) and a `bench pairs`
 * run.  Rules (docs/plan.md "Calibration"):
 *   - collective: bandwidth = busbw of the largest out-of-place size; per-step latency = time of
 *     the smallest non-zero out-of-place size / the collective's step count (ring all-reduce
 *     2(n-1), all-gather, reduce-scatter and all-to-all n-1, send-recv 1; n = ranks);
 *   - pairs: the median bandwidth and the median latency of every host pair.
 * Refused (CFIT_EINVALID or CFIT_EPARSE, with FILE:LINE:COL): a run within one host (it measured
 * shared memory, not the fabric), any wrong element, another benchmark (storage, memory), a
 * missing or mistyped required key.  Unknown keys are ignored (the file is our own output).
 * nccl-tests logs (the input does not start with '{'; docs/plan.md "Calibration"): bandwidth = busbw
 * of the largest size; per-step latency = alpha / steps, alpha and beta from a least-squares fit of
 * time = alpha + size / beta over every out-of-place row of a size above 0 (residuals relative to
 * the measured time); the fit's median |relative error| is reported.  Refused with FILE:LINE:COL:
 * a row that cannot be read, sizes that do not increase, no data rows, #wrong > 0 or "Out of
 * bounds values" > 0, ranks on one host, a collective that cannot be told or is not modelled.
 * The planner takes the bandwidth as one NIC's achievable rate per direction: a node with k NICs
 * gets k times it, shared by its GPUs and divided by --oversub, as the catalog rate would be.
 */
#ifndef CLUSTERFIT_CALIBRATION_H
#define CLUSTERFIT_CALIBRATION_H

#include <stddef.h>
#include "clusterfit/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Most per-size points a calibration keeps (an nccl-tests log with more rows keeps this many,
 * evenly spaced, the first and the last included; the fit uses every row). */
#define CFIT_CALIBRATION_MAX_POINTS 64

/* One measured size of an nccl-tests log (out-of-place columns). */
typedef struct cfit_calibration_point {
    double size_bytes;         /* the row's size column, bytes */
    double time_s;             /* out-of-place time, s */
    double busbw_bytes_per_s;  /* out-of-place busbw, bytes/s */
} cfit_calibration_point;

typedef struct cfit_calibration {
    char file[256];            /* the file it came from ("" when parsed from memory without a name) */
    char benchmark[32];        /* "allreduce", "allgather", "reducescatter", "alltoall", "sendrecv", "pairs" */
    int ranks;                 /* ranks of a collective run; hosts of a pairs run */
    int hosts;                 /* distinct hosts the run spanned (>= 2) */
    double bw_bytes_per_s;     /* achievable bandwidth per direction, bytes/s (> 0) */
    double latency_s;          /* per-step latency, s (> 0) */
    double bw_size_bytes;      /* message size the bandwidth was taken at (0 for pairs: its size_bytes) */
    double lat_size_bytes;     /* message size the latency was taken at */
    int steps;                 /* steps the latency time was divided by (1 for pairs) */
    char source[16];           /* "bench-json" or "nccl-tests" */
    /* The rest is filled for nccl-tests logs only ("" / 0, fit_error -1, for bench JSON). */
    char program[64];          /* the binary the log names ("all_reduce_perf"), "" when it names none */
    char gpu[128];             /* device description of the first Rank line ("NVIDIA H100 80GB HBM3") */
    int gpus_per_process;      /* the header's nGpus (nccl-tests -g: GPUs one host thread drives); 0 = not printed */
    double fit_alpha_s;        /* fitted fixed time of one collective call, s (> 0) */
    double fit_beta_bytes_per_s; /* fitted size / time slope (algorithm bytes per second, > 0) */
    double fit_error;          /* median |relative error| of the fit over the fitted rows; -1 = no fit */
    int fit_rows;              /* rows the fit used (out-of-place, size > 0) */
    int npoints;               /* entries of points (<= CFIT_CALIBRATION_MAX_POINTS) */
    cfit_calibration_point points[CFIT_CALIBRATION_MAX_POINTS];
} cfit_calibration;

/* Parse len bytes of bench JSON, or of an nccl-tests log when the first non-blank byte is not
 * '{' (see cfit_calibration_parse_nccl_log).  file names the input in diagnostics (may be NULL).  Returns
 * CFIT_EOK and fills out, or CFIT_EPARSE (not JSON, missing or mistyped key), CFIT_EINVALID (a
 * measurement that cannot calibrate the fabric: one host, wrong elements, another benchmark),
 * CFIT_ERANGE (a non-positive or absurd value) or CFIT_ENOMEM, with d set (line/col of the
 * offending value where there is one).  out is left unspecified on failure. */
CFIT_API int cfit_calibration_parse(const char *text, size_t len, const char *file, cfit_calibration *out,
                           cfit_diag *d);

/* Parse len bytes of an nccl-tests text log (also as printed under `srun --label` or `mpirun
 * --tag-output`: the "0: " and "[1,0]<stdout>:" line prefixes are dropped).  Returns CFIT_EOK, or
 * CFIT_EPARSE (a row that cannot be read, no data rows, no Rank lines), CFIT_EINVALID (one host,
 * wrong elements, an unknown or unmodelled collective, a fit that gives no latency), CFIT_ERANGE
 * or CFIT_ENOMEM, with d set to the line and column at fault. */
CFIT_API int cfit_calibration_parse_nccl_log(const char *text, size_t len, const char *file, cfit_calibration *out,
                                    cfit_diag *d);

/* Least-squares fit of time = alpha + size / beta over n points (those with size and time above
 * 0), minimising the residuals relative to each time.  Returns 0 and sets alpha_s, beta (bytes/s)
 * and median_rel_err (median |fit - time| / time over the points used), or -1 when fewer than two
 * distinct sizes can be used or the fit gives alpha <= 0 or beta <= 0 (outputs then set as far
 * as they were computed, beta 0 for a non-positive slope).  rows, if not NULL, gets the count used. */
CFIT_API int cfit_calibration_fit(const cfit_calibration_point *p, size_t n, double *alpha_s, double *beta,
                         double *median_rel_err, int *rows);

/* Read and parse a file: as cfit_calibration_parse, plus CFIT_EIO when it cannot be read. */
CFIT_API int cfit_calibration_load(const char *path, cfit_calibration *out, cfit_diag *d);

/* Steps of a collective's ring schedule on n ranks (all-reduce 2(n-1), all-gather,
 * reduce-scatter and all-to-all n-1, send-recv 1); 0 for an unknown name or n < 2. */
CFIT_API int cfit_calibration_steps(const char *benchmark, int n);

#ifdef __cplusplus
}
#endif
#endif
