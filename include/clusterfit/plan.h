/* plan.h - the training-cluster planner: memory, step time and the layout search.
 *
 * A request names a model, a job (sequence length, global batch, tokens, precision),
 * candidate GPU types and either a GPU count, a deadline or a budget (cost.h).  Every layout dimension
 * the request leaves at CFIT_SEARCH is searched; the others are fixed.  The result
 * holds the best plans (by tokens/s; ties: less memory), and for each GPU type its
 * best plan at the count it was sized to.  docs/model.md derives every formula.
 */
#ifndef CLUSTERFIT_PLAN_H
#define CLUSTERFIT_PLAN_H

#include <stdint.h>
#include "clusterfit/catalog.h"
#include "clusterfit/goodput.h"
#include "clusterfit/offload.h"
#include "clusterfit/workload.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CFIT_SEARCH (-1)   /* a layout field left to the search */

/* How much of a training step the framework replays from CUDA graphs (plan --cuda-graphs,
 * docs/model.md "Host-bound layers"): none (eager: the host issues every kernel), scoped
 * (Transformer Engine graphs of the attention, router and preprocessing modules; the token
 * dispatch, experts and combine stay eager) or full (the whole iteration, no host issue time). */
typedef enum cfit_cuda_graphs { CFIT_GRAPHS_NONE = 0, CFIT_GRAPHS_SCOPED, CFIT_GRAPHS_FULL, CFIT_GRAPHS_COUNT } cfit_cuda_graphs;
CFIT_API const char *cfit_cuda_graphs_name(cfit_cuda_graphs g);   /* "none", "scoped", "full" */

typedef struct cfit_layout {
    int tp, pp, dp, cp;   /* tensor, pipeline, data, context parallel sizes */
    int vp;               /* interleaved pipeline chunks per device (1 = plain 1F1B) */
    int mbs;              /* micro-batch size, sequences */
    int zero;             /* ZeRO stage 0..3 (1 = distributed optimizer) */
    int recompute;        /* cfit_recompute */
    int sp;               /* sequence parallelism 0/1 */
    int ep, etp;          /* expert parallel and expert tensor parallel sizes of an MoE model's
                             expert layers (Megatron-Core's parallel folding, docs/model.md);
                             0 or 1 = none, as for every dense model */
    int schedule;         /* cfit_schedule (schedule.h); 0 = 1F1B, interleaved when vp > 1 */
    int recompute_modules; /* with recompute CFIT_RECOMPUTE_MODULES: its CFIT_RECMOD_* bits; else 0 */
} cfit_layout;

typedef struct cfit_memory {
    double weights_bytes, grads_bytes, optimizer_bytes, activations_bytes, other_bytes;
    double total_bytes, capacity_bytes;
    double host_bytes;            /* offloaded to host memory, per GPU (offload.h; 0 without offload) */
    double host_capacity_bytes;   /* with offload: the node's host memory over the job's GPUs on it; else 0 */
    double nvme_bytes;            /* offloaded on to the node's NVMe array, per GPU (0 without :nvme) */
    double nvme_capacity_bytes;   /* with :nvme: the array's capacity over the job's GPUs on the node; else 0 */
} cfit_memory;

typedef struct cfit_breakdown {
    double compute_s, tp_comm_s, cp_comm_s, pp_comm_s, pp_bubble_s, dp_comm_s, optimizer_s, other_s;
    double ep_comm_s;   /* exposed expert dispatch/combine all-to-all (and ETP) communication; 0 when dense */
    double offload_s;   /* exposed host-link and NVMe transfers and the CPU's Adam step (offload.h); 0 without offload */
    double host_wait_s; /* of other_s: the GPU waiting for a host-bound framework to issue kernels (docs/model.md §5.3) */
} cfit_breakdown;

typedef struct cfit_plan {
    const cfit_gpu *gpu;
    const cfit_node *node;
    const cfit_fabric *fabric;        /* scale-out fabric */
    long gpus, nodes;
    cfit_layout layout;
    int offload;                      /* CFIT_OFFLOAD_* bits this plan keeps in host memory (offload.h) */
    int offload_modules;              /* CFIT_OFFMOD_* bits whose inputs it offloads (the request's) */
    long global_batch;                /* sequences */
    long grad_accum;                  /* micro-batches per step per pipeline */
    int fits;
    cfit_memory mem;                  /* the most loaded pipeline stage */
    double step_time_s;
    cfit_breakdown br;
    double compute_bound_s;           /* step time in ops limited by FLOP/s */
    double memory_bound_s;            /* step time in ops limited by HBM bandwidth */
    double comm_exposed_s;            /* communication not hidden behind compute */
    int recompute_layers;             /* layers per stage recomputed in full (block: the fewest that fit) */
    int stage_layers_min, stage_layers_max;
    int stage_layers_first, stage_layers_last; /* a model mixing dense and MoE layers or with MTP
                                         modules: the first and last devices' layers of the split
                                         costed (the middle ones take an equal share of the rest;
                                         docs/model.md §5.8), which --emit megatron writes (with
                                         vp > 1 as a pipeline layout); 0 = the default split */
    double stage_imbalance;           /* (slowest - fastest stage time) / slowest */
    double tokens_per_s, tokens_per_s_per_gpu;
    double model_tflops_per_gpu, hardware_tflops_per_gpu, mfu, hfu;
    double time_to_train_s;           /* wall time: the ideal tokens / tokens_per_s over goodput.fraction;
                                         0 when no token count was given */
    double fabric_slowdown;           /* with request->topology: the largest simulated factor applied
                                         to this plan's cross-node collectives (>= 1); else 1 */
    double slowdown_dp, slowdown_tp, slowdown_pp, slowdown_cp;   /* the factor of each (1: none) */
    cfit_goodput goodput;             /* failures, checkpoints, restarts (goodput.h) */
} cfit_plan;

typedef struct cfit_plan_request {
    const cfit_catalog *catalog;
    const cfit_model *model;
    int seq_len;                      /* 0 = the model's */
    long global_batch;                /* sequences; 0 = default (see docs/plan.md) */
    double tokens;                    /* tokens to train; 0 = not given */
    cfit_precision precision;
    const cfit_gpu *const *gpus;      /* candidate GPU types (at least one) */
    size_t ngpus;
    const cfit_fabric *fabric;        /* scale-out fabric; NULL = the node's */
    int nics_per_node;                /* scale-out NICs per node; 0 = the node entry's */
    double oversub;                   /* fabric oversubscription (leaf downlinks per uplink); inter-node
                                         bandwidth is divided by it (docs/sizing.md); 0 or 1 = none */
    long gpus_total;                  /* 0 = sized to meet days (or budget_usd) */
    double days;                      /* deadline in days when gpus_total == 0; 0 = none (budget
                                         sizing: needs budget_usd) */
    double budget_usd;                /* 0 = none; else plans must cost at most this (cost.h) */
    int cost_basis;                   /* cfit_cost_basis the budget and ranking use (default rent) */
    cfit_layout fixed;                /* CFIT_SEARCH where searched */
    int grad_bytes;                   /* 2 = bf16 grads (16 B/param, default), 4 = fp32 (18 B/param) */
    const cfit_framework *framework;  /* NULL = the catalog's "megatron-core" */
    int unfused_attention;            /* CFIT_SEARCH (-1) = the framework's; 1 = attention scores
                                         materialised (pre-FlashAttention); 0 = fused kernel */
    int moe_a2a_overlap;              /* CFIT_SEARCH (-1) = the framework's; 1 = an MoE layer's all-to-all
                                         overlaps another micro-batch's compute; 0 = exposed */
    int cuda_graphs;                  /* cfit_cuda_graphs: how much of a layer replays from CUDA graphs
                                         (CFIT_GRAPHS_NONE by default: the frameworks' own default) */
    double moe_imbalance;             /* busiest expert's tokens over the mean; 0 = the framework's
                                         (docs/model.md §5.12: 1 = balanced routing) */
    int top;                          /* plans to keep, >= 1 */
    const struct cfit_topo *topology; /* NULL = NCCL's model on a non-blocking fabric (or see
                                         assume_topology); else the inter-node bytes of DP and TP
                                         collectives, PP sends and CP ring-attention exchanges
                                         are slowed by simulated factors (NCCL's net_slowdown;
                                         cfit_sim_internode_curve, cached per exchange on a grid
                                         of sizes and interpolated; docs/plan.md) */
    int assume_topology;              /* 1 with fabric and no topology: simulate cross-node
                                         communication on cfit_plan_assumed_topology's fabric
                                         (what `plan --fabric` alone does) */
    const struct cfit_calibration *calibration; /* NULL = the catalog fabric's rate and latency; else the
                                         measured ones (calibration.h) for inter-node communication */
    int offload;                      /* CFIT_OFFLOAD_* bits kept in host memory (offload.h); CFIT_SEARCH
                                         (default) = none, or searched when nothing fits in GPU memory */
    int offload_modules;              /* CFIT_OFFMOD_* bits (offload.h): Megatron-Core's fine-grained activation
                                         offloading of those modules' inputs; 0 = none; never searched */
    int finetune;                     /* cfit_finetune (offload.h); 0 = pre-training */
    int lora_rank;                    /* adapter rank of lora/qlora; 0 = CFIT_LORA_RANK_DEFAULT */
    cfit_goodput_options goodput;     /* --mtbf, --checkpoint-every, --restart-time, --checkpoint-window
                                         (all 0 = modelled; goodput.h) */
    /* progress callback for long searches (may be NULL); fraction in [0,1] */
    void (*progress)(void *ctx, double fraction);
    void *progress_ctx;
} cfit_plan_request;

typedef struct cfit_gpu_result {
    const cfit_gpu *gpu;
    int found;               /* a fitting plan exists */
    int meets_deadline;      /* found and time_to_train <= days (sizing mode; 1 without a deadline) */
    int has_cost;            /* best has a cost on the request's basis (all its prices exist) */
    double cost_usd;         /* that cost, when has_cost */
    int within_budget;       /* no budget, or has_cost and cost_usd <= budget_usd */
    cfit_plan best;          /* when found */
    cfit_plan closest;       /* when !found and has_closest: the smallest memory shortfall */
    int has_closest;
    int offload_searched;    /* nothing fit in GPU memory without offload, so (fixed.offload left to the
                                search) the layouts were searched again with every offload mode */
} cfit_gpu_result;

typedef struct cfit_plan_result {
    cfit_plan *plans;        /* best first, at most request->top */
    size_t nplans;
    cfit_gpu_result *per_gpu;/* one per candidate GPU type, in request order */
    size_t ngpu;
    int ranked_by_cost;      /* sizing plans ranked by cost on the basis (every plan priced),
                                else by GPU-hours (deadline) or time to train (budget only) */
    uint64_t evaluated;      /* layouts costed */
    uint64_t feasible;       /* of those, layouts that fit in memory */
    double seconds;          /* wall time of the search */
    long global_batch;       /* the batch used */
    int seq_len;
} cfit_plan_result;

/* A request with defaults: everything searched, bf16, 30 days, top 5, grad_bytes 2. */
CFIT_API void cfit_plan_request_init(cfit_plan_request *r);

/* The GPU count a request fixes: gpus_total, or tp x pp x cp x dp when all four are fixed;
 * 0 when the count is to be sized (from the deadline or the budget). */
CFIT_API long cfit_plan_fixed_gpus(const cfit_plan_request *r);
/* Layers on each middle device of plan p's balanced split (stage_layers_first > 0) of a model of
 * `layers`: the rest's equal share; 0 with fewer than three stages or the default split. */
CFIT_API int cfit_plan_stage_layers_mid(const cfit_plan *p, int layers);

/* Check the fixed parts of a request against the model (divisibility, ranges).
 * Returns CFIT_EOK or CFIT_EINVALID/CFIT_ERANGE with d->msg naming the constraint. */
CFIT_API int cfit_plan_validate(const cfit_plan_request *r, cfit_diag *d);

/* Run the search.  Returns CFIT_EOK (result filled; nplans may be 0 when nothing fits,
 * then per_gpu[i].closest explains), or an error with d set.  Free with
 * cfit_plan_result_fini. */
CFIT_API int cfit_plan_search(const cfit_plan_request *r, cfit_plan_result *out, cfit_diag *d);
CFIT_API void cfit_plan_result_fini(cfit_plan_result *res);

/* The topology `plan` assumes for --fabric without --topology (request assume_topology and
 * fabric set, topology NULL): a non-blocking rail-optimised two-tier fabric, "railopt:nodes=N,gpus=G", written to
 * spec (CFIT_ERANGE when len is too short).  The simulation builds 32 nodes of it (one scalable unit) at most. */
CFIT_API int cfit_plan_assumed_topology(long nodes, int gpus_per_node, char *spec, size_t len);

/* Fill p->goodput from the request (catalog failure rates, model, storage, overrides) and set
 * p->time_to_train_s to the wall time, ideal / fraction (goodput.c).  Every plan the search and
 * cfit_plan_evaluate return has it applied; calling it again gives the same result. */
CFIT_API void cfit_plan_goodput(const cfit_plan_request *r, cfit_plan *p);

/* Cost one layout on one GPU type at a GPU count (layout fully given, dp included).
 * Evaluates even layouts the search would reject (fits may be 0). */
CFIT_API int cfit_plan_evaluate(const cfit_plan_request *r, const cfit_gpu *gpu, const cfit_layout *l,
                       cfit_plan *out, cfit_diag *d);

#ifdef __cplusplus
}
#endif
#endif
