/* confidence.h - how sure a plan is: how clusterfit's model did on the published training runs
 * closest to it (the catalog's "fidelity" entries, data/fidelity.json, written by
 * bench/fidelity.py --emit-table from bench/data/calibration.csv; docs/plan.md "Model check").
 *
 * The runs compared are those on a GPU of the plan's architecture (hopper, ampere, ...) of the
 * plan model's kind (dense, or MoE: data/moe-fidelity.json from bench/moe_fidelity.py; an MoE
 * model whose family has no MoE run is compared with the dense ones), the CFIT_CONFIDENCE_RUNS
 * nearest in scale: by |log GPU count ratio|, then |log parameter ratio|.
 * One computation per printed plan, never per searched layout.
 */
#ifndef CLUSTERFIT_CONFIDENCE_H
#define CLUSTERFIT_CONFIDENCE_H

#include "clusterfit/catalog.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CFIT_CONFIDENCE_RUNS 5

typedef struct cfit_confidence {
    int runs;                                   /* 0: no published run of this GPU architecture */
    double median_abs_error, max_abs_error;     /* of |predicted - published| / published tokens/s */
    int gpus_min, gpus_max;                     /* GPU counts of the runs compared */
    const char *ids[CFIT_CONFIDENCE_RUNS];      /* their row ids, nearest first (catalog-owned) */
    cfit_gpu_arch arch;                         /* the plan GPU's architecture */
    int moe_runs;                               /* 1: the runs compared are MoE runs */
    int dense_for_moe;                          /* 1: an MoE model compared with dense runs (none of
                                                   its family is MoE) */
} cfit_confidence;

/* The published runs nearest a plan of gpus x gpu training a model of params parameters, an MoE
 * one when moe. */
CFIT_API void cfit_plan_confidence(const cfit_catalog *c, const cfit_gpu *gpu, long gpus, double params, int moe,
                                   cfit_confidence *out);

#ifdef __cplusplus
}
#endif

#endif
