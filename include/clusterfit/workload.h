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
    CFIT_RECOMPUTE_EXPERTS = 4,     /* an MoE model's expert MLPs (router, dispatch, experts,
                                       combine) recomputed from their input (Megatron
                                       --recompute-modules moe); nothing else */
    CFIT_RECOMPUTE_MODULES = 5,     /* the Megatron-Core submodules of the layout's recompute_modules
                                       (CFIT_RECMOD_* bits; --recompute-granularity selective
                                       --recompute-modules LIST); never searched */
    CFIT_RECOMPUTE_COUNT
} cfit_recompute;

/* Megatron-Core's recompute_modules (megatron/core/transformer/transformer_config.py):
 * core_attn, mlp, moe and shared_experts keep their input and rerun their forward (normal
 * checkpointing); layernorm, moe_act and mla_up_proj discard their output and recompute it
 * before the backward (output-discarding checkpointing). docs/model.md §3.8 costs each. */
enum {
    CFIT_RECMOD_CORE_ATTN = 1 << 0,
    CFIT_RECMOD_MOE_ACT = 1 << 1,
    CFIT_RECMOD_LAYERNORM = 1 << 2,
    CFIT_RECMOD_MLA_UP_PROJ = 1 << 3,
    CFIT_RECMOD_MLP = 1 << 4,
    CFIT_RECMOD_MOE = 1 << 5,
    CFIT_RECMOD_SHARED_EXPERTS = 1 << 6,
    CFIT_RECMOD_COUNT = 7
};

CFIT_API const char *cfit_recompute_name(cfit_recompute r);     /* "none", "selective", "full", "block",
                                                                   "experts", "modules" */
/* Megatron's name of module bit i (0 .. CFIT_RECMOD_COUNT - 1): "core_attn", ... */
CFIT_API const char *cfit_recompute_module_name(int i);
/* Parse a comma-separated list of module names into CFIT_RECMOD_* bits; 0 = ok, else -1 with
 * the first bad name's offset in *bad_at (an empty list or name is bad). */
CFIT_API int cfit_recompute_modules_parse(const char *list, unsigned *mask, size_t *bad_at);
/* The names of mask's bits, comma-separated in Megatron's order, into buf (n >= 1); buf. */
CFIT_API char *cfit_recompute_modules_str(unsigned mask, char *buf, size_t n);
/* The submodules a recompute mode reruns as CFIT_RECMOD_* bits (selective = core_attn,
 * experts = moe, modules = `modules`; none, full and block: 0). */
CFIT_API unsigned cfit_recompute_mask(cfit_recompute r, unsigned modules);
CFIT_API const char *cfit_precision_name(cfit_precision p);     /* "bf16", "fp8" */

/* Width of one attention head: head_dim, or hidden_size / num_heads when it is 0. */
CFIT_API int cfit_model_head_dim(const cfit_model *m);
/* Mixture of experts (num_experts > 0) and multi-head latent attention (kv_lora_rank > 0). */
CFIT_API int cfit_model_is_moe(const cfit_model *m);
CFIT_API int cfit_model_is_mla(const cfit_model *m);
/* Whether layer (0-based) has an MoE MLP; how many layers do. */
CFIT_API int cfit_model_layer_is_moe(const cfit_model *m, int layer);
CFIT_API int cfit_model_moe_layers(const cfit_model *m);
/* GEMM weights of one layer's attention (Q, K, V, output; MLA's down/up projections). */
CFIT_API double cfit_model_attn_params(const cfit_model *m);
/* GEMM weights of one dense MLP (ffn_hidden_size). */
CFIT_API double cfit_model_dense_mlp_params(const cfit_model *m);
/* GEMM weights of one MoE MLP: all routed experts, or (active) the top-k one token uses; with
 * the shared experts and the router either way. */
CFIT_API double cfit_model_moe_mlp_params(const cfit_model *m, int active);
/* Weights of one transformer layer's GEMMs (QKV, output projection, MLP), no norms; the mean
 * over the layers when MoE and dense layers mix. */
CFIT_API double cfit_model_layer_matmul_params(const cfit_model *m);
/* Parameters of one layer including its norms (mean over the layers, as above). */
CFIT_API double cfit_model_layer_params(const cfit_model *m);
/* Embedding parameters (vocab x hidden; counted once when tied). */
CFIT_API double cfit_model_embedding_params(const cfit_model *m);
/* The multi-token-prediction modules' parameters (mtp_layers of them, each a 2h -> h projection,
 * its norms and one layer of the last layer's kind; the embedding and head are shared); active:
 * only the experts a token is sent to. 0 without MTP. */
CFIT_API double cfit_model_mtp_params(const cfit_model *m, int active);
/* Whether the MTP modules' layers are MoE layers (the last layer's kind); 0 without MTP. */
CFIT_API int cfit_model_mtp_moe(const cfit_model *m);
/* All parameters (the MTP modules included). */
CFIT_API double cfit_model_params(const cfit_model *m);
/* Parameters one token's forward pass uses: all but the routed experts it is not sent to
 * (embeddings included, so it equals cfit_model_params() for a dense model). */
CFIT_API double cfit_model_active_params(const cfit_model *m);
/* Model FLOPs per trained token (forward + backward, no recomputation) at sequence
 * length seq; MoE layers count the top-k experts and the router only. */
CFIT_API double cfit_model_flops_per_token(const cfit_model *m, int seq);
/* Hardware FLOPs per trained token: model FLOPs plus what the recompute mode reruns (BLOCK
 * counts as FULL here, an upper bound; a plan scales it by the layers it reruns); modules:
 * CFIT_RECOMPUTE_MODULES's CFIT_RECMOD_* bits (ignored by the other modes), whose GEMM and
 * attention-score forwards count (layernorm and moe_act are element-wise: none). */
CFIT_API double cfit_model_hw_flops_per_token(const cfit_model *m, int seq, cfit_recompute r, unsigned modules);

/* What the planner (src/core/perf.c costs dense MHA/GQA layers from hidden_size, ffn_hidden_size
 * and num_heads) cannot cost yet at sequence length seq: "MoE", "MLA", "head_dim" (a head width
 * other than hidden_size / num_heads) or "sliding-window" (a window shorter than seq); NULL
 * when it can.  Issue 13 lifts these. */
CFIT_API const char *cfit_model_unplanned_feature(const cfit_model *m, int seq);

/* Check a model's fields (positive sizes, heads divide hidden, kv heads divide heads);
 * returns CFIT_EOK or CFIT_ERANGE/CFIT_EINVALID with d->msg set. */
CFIT_API int cfit_model_validate(const cfit_model *m, cfit_diag *d);

#ifdef __cplusplus
}
#endif
#endif
