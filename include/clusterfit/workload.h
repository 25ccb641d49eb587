/* workload.h - what is trained: parameter counts and FLOPs of a transformer.
 *
 * Conventions (docs/model.md derives each): a GEMM of m x k by k x n costs 2mkn FLOPs;
 * "model FLOPs" count forward + backward (3x forward) of every GEMM and of full
 * (non-causal) attention scores, as Narayanan et al. 2021 and the PaLM MFU definition
 * do; "hardware FLOPs" add what recomputation runs again.
 */
#ifndef CLUSTERFIT_WORKLOAD_H
#define CLUSTERFIT_WORKLOAD_H

#include "clusterfit/catalog.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum cfit_recompute {
    CFIT_RECOMPUTE_NONE = 0,
    CFIT_RECOMPUTE_SELECTIVE = 1,   /* attention core recomputed (Korthikanti et al. 2022) */
    CFIT_RECOMPUTE_FULL = 2,        /* whole layer recomputed from its stored input */
    CFIT_RECOMPUTE_BLOCK = 3,       /* full recomputation of only the first k layers of each
                                       stage, k the fewest that fit (Megatron's
                                       --recompute-method block) */
    CFIT_RECOMPUTE_COUNT
} cfit_recompute;

const char *cfit_recompute_name(cfit_recompute r);     /* "none", "selective", "full", "block" */
const char *cfit_precision_name(cfit_precision p);     /* "bf16", "fp8" */

/* Weights of one transformer layer's GEMMs (QKV, output projection, MLP), no norms. */
double cfit_model_layer_matmul_params(const cfit_model *m);
/* Parameters of one layer including its two norms. */
double cfit_model_layer_params(const cfit_model *m);
/* Embedding parameters (vocab x hidden; counted once when tied). */
double cfit_model_embedding_params(const cfit_model *m);
/* All parameters. */
double cfit_model_params(const cfit_model *m);
/* Model FLOPs per trained token (forward + backward, no recomputation) at sequence
 * length seq. */
double cfit_model_flops_per_token(const cfit_model *m, int seq);
/* Hardware FLOPs per trained token: model FLOPs plus what the recompute mode reruns
 * (BLOCK counts as FULL here, an upper bound; a plan scales it by the layers it reruns). */
double cfit_model_hw_flops_per_token(const cfit_model *m, int seq, cfit_recompute r);

/* Check a model's fields (positive sizes, heads divide hidden, kv heads divide heads);
 * returns CFIT_EOK or CFIT_ERANGE/CFIT_EINVALID with d->msg set. */
int cfit_model_validate(const cfit_model *m, cfit_diag *d);

#ifdef __cplusplus
}
#endif
#endif
