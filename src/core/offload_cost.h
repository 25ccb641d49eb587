/* offload_cost.h - the planner's offload and fine-tuning hooks (internal; offload.c, finetune.c).
 *
 * perf.c calls these from its memory and step-time model; search.c from its ZeRO loop and its
 * fallback when nothing fits.  docs/model.md §10 derives every term.
 */
#ifndef CFIT_OFFLOAD_COST_H
#define CFIT_OFFLOAD_COST_H

#include "clusterfit/plan.h"

struct cfit__ctx;
struct cfit__layer_cost;

/* What a (request, GPU type) fixes for offload and fine-tuning. */
typedef struct cfit__host {
    int offload;                   /* CFIT_OFFLOAD_* bits of the layouts being costed (the search sets it) */
    int has_host;                  /* the node entry has host memory, its bandwidth and the PCIe link */
    double link_bw;                /* one GPU's achievable PCIe bytes/s per direction */
    double host_bw;                /* the node's host memory bytes/s */
    double host_bytes;             /* the node's host memory */
    int has_nvme;                  /* the node names a local NVMe array (offload.h's NVMe tier) */
    double nvme_read_bw;           /* the array's sequential read bytes/s, all drives */
    double nvme_write_bw;          /* its sequential write bytes/s */
    double nvme_bytes;             /* its capacity */
    int finetune;                  /* cfit_finetune */
    int frozen;                    /* lora / qlora: base weights frozen */
    int rank;                      /* LoRA rank */
    double adapter_layer_params;   /* LoRA adapter parameters of the mean layer, routed experts' included */
    double expert_adapter_layer_params; /* of them, the routed experts' (sharded over EP x ETP) */
    double linear_layer_params;    /* the mean layer's projection weights but the routed experts' (what
                                      LoRA freezes, QLoRA quantizes; the experts' are ctx->expert_layer_params) */
    double linear_weight_bytes;    /* bytes per frozen projection weight: 2 (lora), NF4's (qlora) */
    double flops_delta;            /* fine-tuning model FLOPs per token minus pre-training's */
} cfit__host;

/* Roofline accumulator: time, of it compute-bound and memory-bound (perf.c's). */
typedef struct cfit__acc { double t, cb, mb; } cfit__acc;

/* Per-GPU memory of one pipeline stage (perf.c's stage_memory); host = offloaded bytes, nvme =
 * those moved on to the node's NVMe array. */
typedef struct cfit__stage_mem { double w, gr, opt, act, other, total, host, nvme; } cfit__stage_mem;

/* perf.c's roofline pieces, for the adapters' and dequantization costs. */
void cfit__gemm(const struct cfit__ctx *ctx, double M, double N, double K, double passes, cfit__acc *a);
void cfit__membound(const struct cfit__ctx *ctx, double bytes, cfit__acc *a);

/* ---- offload.c ---- */
/* Fill ctx->host's node figures; CFIT_EINVALID when the request fixes an offload and the GPU's
 * node entry lacks them. */
int cfit__offload_init(struct cfit__ctx *ctx, cfit_diag *d);
/* Whether ZeRO stage `zero` at dp ranks may carry offload mask (DeepSpeed: offload_optimizer on
 * stages 1-3, offload_param on 3); *floor: the lowest
 * stage the mask allows, which the search tries even where dp = 1 has nothing to shard. */
int cfit__offload_zero_ok(const struct cfit__ctx *ctx, int mask, int zero, int *floor);
/* Move what ctx->host.offload moves from sm (GPU) to sm->host; lc: the stage's layer cost, n its layers,
 * inflight its micro-batches in flight. */
void cfit__offload_stage_memory(const struct cfit__ctx *ctx, const struct cfit__layer_cost *lc,
                                const cfit_layout *l, int n, double inflight, cfit__stage_mem *sm);
/* Exposed seconds per step of a layout's offload (host-link transfers not hidden behind compute,
 * the CPU's Adam step); N the job's GPUs, n the pacing stage's layers, P_opt the parameters one
 * GPU's optimizer updates, w_bytes its parameter shard; *t_opt_s (the GPU's optimizer step) is
 * zeroed when the optimizer runs on the CPU. */
double cfit__offload_step_s(const struct cfit__ctx *ctx, const struct cfit__layer_cost *lc, long N, int n, long m_mb, double P_opt, double w_bytes, double *t_opt_s);
/* The node's host memory per GPU of a job of N GPUs (0 when unknown). */
double cfit__host_capacity_bytes(const struct cfit__ctx *ctx, long N);
/* The node's NVMe capacity per GPU of a job of N GPUs (0 when unknown). */
double cfit__nvme_capacity_bytes(const struct cfit__ctx *ctx, long N);
/* Validate the request's offload and fine-tuning fields (CFIT_EOK or an error with d set). */
int cfit__offload_validate(const cfit_plan_request *r, cfit_diag *d);

/* What a launch config of kind k (cfit_emit_kind) cannot express for plan p: activation offload
 * (no DeepSpeed or Megatron key), Megatron's parameter offload, its optimizer offload beyond the
 * distributed optimizer, and LoRA / QLoRA in pretrain_gpt.py; CFIT_EINVALID with d set, else 0. */
int cfit__emit_offload_bad(int k, const cfit_plan_request *r, const cfit_plan *p, cfit_diag *d);

/* ---- finetune.c ---- */
void cfit__finetune_init(struct cfit__ctx *ctx);
/* A frozen layer's forward extras: adapters and QLoRA's dequantization added to fwd; to `frozen`
 * (already holding the base projections' forward) what the backward does not repeat. */
void cfit__finetune_forward(const struct cfit__ctx *ctx, double tokens, int tp, int ep, int etp, cfit__acc *fwd,
                            cfit__acc *frozen);
/* Stored adapter activations per layer per micro-batch (0 under full recomputation). */
double cfit__finetune_act_bytes(const struct cfit__ctx *ctx, double tokens, int recompute);
/* Weight bytes one GPU of a stage of n layers holds before ZeRO-3 shards them: the dense part (P
 * parameters, the frozen projections in their storage bytes, the adapters) and the routed experts'
 * (Pe frozen expert parameters and their adapters). */
void cfit__finetune_weight_bytes(const struct cfit__ctx *ctx, int n, double P, double Pe, const cfit_layout *l,
                                 double *dense_bytes, double *expert_bytes);
/* Weights, gradients and optimizer states of a stage of n layers holding P dense and Pe routed-expert
 * parameters per GPU, de the expert data-parallel size. */
void cfit__finetune_stage_memory(const struct cfit__ctx *ctx, int n, double P, double Pe, double de,
                                 const cfit_layout *l, cfit__stage_mem *sm);
/* Trainable parameters one GPU of a stage of n layers holds: the adapters but the routed experts'. */
double cfit__finetune_trainable(const struct cfit__ctx *ctx, int n, int tp);
/* The routed experts' adapters one GPU of a stage of n layers holds (sharded over EP x ETP). */
double cfit__finetune_expert_trainable(const struct cfit__ctx *ctx, int n, const cfit_layout *l);

#endif
