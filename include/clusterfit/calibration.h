/* calibration.h - measured fabric numbers for the planner, read from a `clusterfit bench --json` file.
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
} cfit_calibration;

/* Parse len bytes of bench JSON.  file names the input in diagnostics (may be NULL).  Returns
 * CFIT_EOK and fills out, or CFIT_EPARSE (not JSON, missing or mistyped key), CFIT_EINVALID (a
 * measurement that cannot calibrate the fabric: one host, wrong elements, another benchmark),
 * CFIT_ERANGE (a non-positive or absurd value) or CFIT_ENOMEM, with d set (line/col of the
 * offending value where there is one).  out is left unspecified on failure. */
int cfit_calibration_parse(const char *text, size_t len, const char *file, cfit_calibration *out,
                           cfit_diag *d);

/* Read and parse a file: as cfit_calibration_parse, plus CFIT_EIO when it cannot be read. */
int cfit_calibration_load(const char *path, cfit_calibration *out, cfit_diag *d);

/* Steps of a collective's ring schedule on n ranks (all-reduce 2(n-1), all-gather,
 * reduce-scatter and all-to-all n-1, send-recv 1); 0 for an unknown name or n < 2. */
int cfit_calibration_steps(const char *benchmark, int n);

#ifdef __cplusplus
}
#endif
#endif
