/* perf.h - the per-GPU cost model shared by evaluation and search (internal).
 *
 * cfit__ctx holds what is fixed for one (request, GPU type) pair: achievable rates
 * taken from the catalog and the model's sizes.  cfit__layer_cost holds what depends
 * only on (tp, cp, micro-batch, recompute, sp); the search computes it once and then
 * costs every (pp, vp, dp, zero) around it, which is what makes the search fast.
 */
#ifndef CFIT_PERF_H
#define CFIT_PERF_H

#include "clusterfit/nccl.h"
#include "clusterfit/plan.h"
#include "clusterfit/schedule.h"
#include "core/offload_cost.h"

#define CFIT__SLOW_GRID 14           /* message sizes simulated per exchange: 1 KiB .. 64 GiB, x4 apart */
#define CFIT__AUTO_NODES 32          /* nodes of the rail-optimised fabric --fabric alone assumes */
#define CFIT__SPLIT_MEMO 256         /* stage splits remembered (stages.c), a power of two */

typedef struct cfit__split {
    int balanced;                    /* 1: the split below, chosen for balance; 0: stage_layers' default */
    int first, mid, last;            /* layers of the first stage, of each middle one, of the last */
    int moe_first, moe_mid, moe_last; /* MoE layers among them (moe_mid: the most of any middle stage) */
} cfit__split;

typedef struct cfit__ctx {
    const cfit_plan_request *req;
    unsigned rec_modules;          /* CFIT_RECOMPUTE_MODULES's CFIT_RECMOD_* bits (the request's, or the
                                      evaluated layout's) */
    unsigned off_modules;          /* the request's CFIT_OFFMOD_* bits (offload.h): the modules whose
                                      inputs Megatron's fine-grained offloading moves to host memory */
    const cfit_model *m;
    const cfit_gpu *g;
    const cfit_node *node;
    const cfit_fabric *out;        /* scale-out fabric */
    const cfit_fabric *up;         /* scale-up fabric (may be NULL: then no intra-node link) */
    int seq;
    long gbs;
    cfit_precision prec;
    int grad_bytes;
    const cfit_framework *fw;      /* how the framework runs it */
    int unfused;                   /* attention scores materialised in HBM */
    double attn_eff;               /* fused attention fraction of bf16 peak */
    double peak;                   /* dense FLOP/s at the training precision */
    double peak_bf16;              /* attention runs in bf16 */
    double mem_bw;                 /* achievable HBM bytes/s */
    double up_bw, up_lat;          /* achievable intra-node bytes/s per GPU, per-step latency */
    double nic_bw, nic_lat;        /* achievable scale-out bytes/s per GPU, latency */
    double nic_share;              /* NICs per GPU: nics per node / GPUs per node / oversubscription */
    double overlap;                /* fraction of compute usable to hide comm */
    int gpn;                       /* GPUs per node */
    int link_group;                /* GPUs that reach each other over the scale-up link */
    int domain;                    /* scale-up domain size */
    double layer_params, emb_params;
    /* Multi-token prediction (docs/model.md §3.9): the MTP modules the last stage runs after its
       layers; 0 for a model without them */
    int mtp;                       /* MTP modules (the model's mtp_layers) */
    double mtp_params;             /* their weights but the routed experts (over TP) */
    double mtp_expert_params;      /* their layers' routed experts (over EP x ETP) */
    double model_flops;            /* cfit_model_flops_per_token at seq (the search asks per layout) */
    double hw_flops[CFIT_RECOMPUTE_COUNT]; /* cfit_model_hw_flops_per_token at seq, per recompute mode,
                                      computed on first use (bit i of hw_have) */
    unsigned hw_have;
    /* MoE (docs/model.md §3.7, §5.12, §5.13): 0 for a dense model, whose costs never read the rest */
    int moe;                       /* the model has MoE layers */
    double moe_frac;               /* MoE layers / layers: the mean layer's share of an MoE MLP */
    double expert_layer_params;    /* routed-expert weights of the mean layer (sharded over EP x ETP) */
    double moe_layer_expert_params; /* routed-expert weights of one MoE layer */
    double moe_mlp_delta_params;   /* an MoE layer's other MLP weights (shared experts, router) less a
                                      dense layer's MLP: what a stage's layer mix moves (stages.c) */
    int *moe_prefix;               /* MoE layers among layers [0, i), i = 0..layers (owned); NULL when
                                      every layer is alike (dense, or all MoE) */
    struct cfit__split_memo {      /* stages.c: splits chosen, for the stage rates and p each was for; the
                                      search costs a few layer costs (recompute modes) in turn, each
                                      for many layouts: a small table keyed by a hash of the rates */
        int have, p;
        double g0, g1, h0, h1, logits_s;
        cfit__split split;
    } split_memo[CFIT__SPLIT_MEMO];
    double imbalance;              /* busiest expert's tokens over the mean (request or framework, >= 1) */
    int a2a_overlap;               /* the all-to-all overlaps another micro-batch's compute */
    /* --topology / --fabric: simulated slowdowns of cross-node exchanges (perf.c topo_factor) */
    const struct cfit_topo *topo;  /* the topology simulated: the request's, own_topo, or NULL */
    struct cfit_topo *own_topo;    /* --fabric without --topology: the rail-optimised fabric assumed */
    struct cfit_sim_state *sim;    /* topo_factor's simulator state on topo, made on first use (fini frees) */
    long job_gpus;                 /* GPUs of the layouts being costed (CP exchanges span the job) */
    struct cfit__topo_slow {       /* factors per exchange, on a grid of message sizes */
        long nodes, stride, group;
        int k;
        double f[CFIT__SLOW_GRID]; /* at 2^(10 + 2i) bytes per flow */
    } *slow;                       /* owned, grown as needed (cfit__ctx_fini frees it) */
    size_t nslow, slow_cap;
    /* collectives (comm.c): NCCL's model on the GPU's node and fabric, and its answers memoised */
    cfit_nccl_system nccl;         /* the template: each group sets its nodes, ranks per node, NICs, factor */
    struct cfit__comm_memo *memo;  /* open addressing, memo_cap slots (a power of two), nmemo used */
    int nmemo, memo_cap;
    /* The first simulation or NCCL evaluation that failed (an unroutable or disconnected
     * topology, out of memory, hardware the NCCL model cannot run): its cfit_err (0 = none) and
     * message.  Its numbers are not used: the search and evaluate return this error instead of a
     * plan (docs/plan.md). */
    int topo_rc;
    cfit_diag topo_diag;
    cfit__host host;               /* offload and fine-tuning terms (offload_cost.h) */
} cfit__ctx;

/* What one MoE layer's cost adds over a dense layer's (the fields of cfit__layer_cost that the
 * MoE share moves linearly); zero unless the model mixes dense and MoE layers. */
typedef struct cfit__moe_delta {
    double fwd_s, bwd_s, wgrad_s, cb_s, mb_s, tp_s, ep_s, act_bytes, act_off_bytes;
    double host_pass_s;              /* the host's extra issue time of an MoE layer */
} cfit__moe_delta;

typedef struct cfit__layer_cost {
    int tp, cp, mbs, recompute, sp;
    int ep, etp;                     /* expert parallel sizes (1, 1 for a dense model) */
    double fwd_s, bwd_s;             /* compute of one layer, one micro-batch (bwd includes recompute) */
    double wgrad_s;                  /* of bwd_s: the weight-gradient GEMMs (W of the zero-bubble
                                        schedules, docs/model.md §5.8) */
    double cb_s, mb_s;               /* of fwd_s + bwd_s: compute-bound and memory-bound parts */
    double attn_fwd_s;               /* fused attention forward (window for CP overlap) */
    double tp_s, cp_s;               /* exposed TP and CP communication, fwd + bwd */
    double ep_s;                     /* exposed expert dispatch/combine (and ETP) communication, fwd + bwd */
    double ep_slow;                  /* simulated factor applied to the all-to-all's cross-node bytes (1 = none) */
    double tp_slow, cp_slow;         /* simulated factors applied to TP's and CP's cross-node terms (1 = none) */
    double overhead_s;               /* per-layer launch/sync overhead, fwd + bwd */
    double host_s;                   /* host-bound time beyond the GPU's (framework host_layer_s) */
    double host_pass_s;              /* the framework's host time for the layer (host_s = what exceeds the GPU's) */
    cfit__moe_delta moe_delta;       /* an MoE layer less a dense one (stages.c) */
    double logits_s;                 /* the last stage's head fwd + bwd: logits and loss, and each MTP
                                        module's projection, layer and logits (docs/model.md §3.9) */
    double logits_cb_s, logits_mb_s;
    double head_tp_s, head_ep_s, head_cp_s, head_other_s; /* of logits_s: the MTP layers' exposed
                                        TP, expert and CP communication and their overhead */
    double head_host_s;              /* of head_other_s: their GPU's wait for the host */
    double act_bytes;                /* stored activations per layer per in-flight micro-batch (on the GPU) */
    double act_off_bytes;            /* of a layer's stored activations, those its offload modules move to
                                        host memory (not in act_bytes; 0 without --offload-modules) */
    double work_bytes;               /* transient working set (one layer recomputed, logits) */
    double logits_bytes;             /* logits kept for the loss, last stage (and the MTP modules'
                                        logits and activations) */
    double pp_msg_bytes;             /* activation sent between stages per micro-batch */
} cfit__layer_cost;

/* The time of collective c (nccl-tests sizes: bytes is the all-reduce buffer, the all-gather's
 * output, the reduce-scatter's input) over a group of n ranks, k of them per link group, its
 * inter-node bytes slowed by slow (>= 1; a simulated factor): NCCL's tuner's least time
 * (cfit_nccl_best over every algorithm and protocol), memoised in ctx.  0 for n <= 1. */
double cfit__comm_group_s(const cfit__ctx *ctx, cfit_collective c, long n, int k, double slow, double bytes);
/* A send-recv of bytes inside a link group (intra) or across link groups, each GPU on its own NIC
 * share, the inter-node bytes slowed by slow. */
double cfit__comm_p2p_s(const cfit__ctx *ctx, double bytes, int intra, double slow);
/* Set up / free ctx's NCCL template and memo (called by cfit__ctx_init / cfit__ctx_fini). */
int cfit__comm_init(cfit__ctx *ctx, cfit_diag *d);
void cfit__comm_fini(cfit__ctx *ctx);

/* Fill ctx for one GPU type.  Fails with CFIT_EINVALID when the GPU lacks the
 * precision, CFIT_EUNKNOWN when its node/fabric entries are missing. */
int cfit__ctx_init(cfit__ctx *ctx, const cfit_plan_request *r, const cfit_gpu *g, cfit_diag *d);
/* Free what ctx owns (the assumed topology); ctx may be half-initialised (zeroed). */
void cfit__ctx_fini(cfit__ctx *ctx);
/* The mean layer's cost at (tp, cp, mbs, recompute, sp) with expert layers over (ep, etp)
 * (1, 1 for a dense model). */
void cfit__layer_cost_compute(const cfit__ctx *ctx, int tp, int cp, int mbs, int recompute,
                              int sp, int ep, int etp, cfit__layer_cost *lc);
/* A layout costed as far as its memory (cfit__plan_memory): the search's fit test, and what the
 * time model (cfit__plan_finish) then needs.  lcf, lcm and lcl may point into blend and stage:
 * an eval is filled in place and not copied. */
typedef struct cfit__plan_eval {
    const cfit__ctx *ctx;
    cfit_layout layout;
    const cfit__layer_cost *lcf, *lcl;   /* the mean layer of the first and of the last stage */
    const cfit__layer_cost *lcm;         /* a balanced split's middle stage's (p > 2), else NULL */
    cfit__layer_cost blend[2];           /* block recomputation's blends */
    cfit__layer_cost stage[3];           /* a balanced split's first, middle and last stage's mean
                                            layer at its own MoE share (stages.c) */
    cfit__split split;                   /* the split of the layers over the stages (stages.c) */
    cfit_schedule sched;                 /* cfit_layout_schedule(&layout) */
    cfit_schedule_terms st;
    long gpus;                           /* tp x cp x pp x dp */
    long m_mb;                           /* micro-batches per step per pipeline */
    int n_first, n_last, n_min, n_max;   /* layers of the first, last, shortest and longest stage */
    int n_mid;                           /* layers of each middle stage of a balanced split (p > 2), else 0 */
    int moe_first, moe_mid, moe_last;    /* MoE layers of those stages (-1: the mean layer's share) */
    int recompute_layers;                /* layers per stage recomputed in full */
    cfit_memory mem;                     /* the most loaded device's */
    int fits;                            /* in GPU memory (and host memory with offload) */
} cfit__plan_eval;

/* A layout's memory from its layer cost into e (the fields above; no time yet). */
void cfit__plan_memory(const cfit__ctx *ctx, const cfit__layer_cost *lc, const cfit_layout *l,
                       cfit__plan_eval *e);
/* The same with block recomputation, from the costs of a plain (none) and a fully recomputed
 * (full) layer: the fewest layers per stage recomputed that fit.  Returns that count (0 when
 * nothing needs recomputing; the stage size when even full does not fit). */
int cfit__plan_memory_block(const cfit__ctx *ctx, const cfit__layer_cost *none, const cfit__layer_cost *full,
                            const cfit_layout *l, cfit__plan_eval *e);
/* The step time model on an eval of cfit__plan_memory*: fills every field of out. */
void cfit__plan_finish(const cfit__plan_eval *e, cfit_plan *out);

/* stages.c: pipeline stages of a model that mixes dense and MoE layers (docs/model.md §5.8). */
/* the split (cfit__split) is defined above cfit__ctx, whose memo holds one */
/* The layer time of a layer cost (compute, exposed communication, overhead, host wait). */
double cfit__layer_time_s(const cfit__layer_cost *lc);
/* The mean layer of a stage whose layers are MoE layers by share `moe_share`: lc moved along its
 * MoE delta (from the model's mean share), the host wait recomputed. */
void cfit__layer_cost_mixed(const cfit__ctx *ctx, const cfit__layer_cost *lc, double moe_share, cfit__layer_cost *out);
/* MoE layers among layers [from, from + n). */
int cfit__moe_layers_in(const cfit__ctx *ctx, int from, int n);
/* Whether the model's layers are split over the stages for balance (cfit__split_choose): it mixes
 * dense and MoE layers, or its last stage also runs MTP modules. */
int cfit__split_balanced(const cfit__ctx *ctx);
/* Whether it is balanced at vp > 1 too: the framework places layers from a layout string
 * (pipeline_layout, Megatron-Core's --pipeline-model-parallel-layout). */
int cfit__split_by_layout(const cfit__ctx *ctx);
/* The split of such a model's layers over p devices (the logits and MTP on the last) with the
 * least slowest-device time for layer cost lc, as Megatron expresses it: at vp 1
 * --decoder-first/last-pipeline-num-layers, at vp > 1 --pipeline-model-parallel-layout (each
 * device's total over its chunks); s->balanced = 0 when it does not apply. */
void cfit__split_choose(const cfit__ctx *ctx, const cfit__layer_cost *lc, int p, int vp, int ends_together, cfit__split *s);
/* ctx->moe_prefix for a model mixing dense and MoE layers (cfit__ctx_fini frees it). */
int cfit__moe_prefix_init(cfit__ctx *ctx);

/* schedule.c: the request's framework (the catalog's megatron-core when it names none; NULL
 * without a catalog) and its pipeline rules on the fixed layout (ZeRO with PP, --schedule). */
const cfit_framework *cfit__plan_framework(const cfit_plan_request *r);
int cfit__schedule_validate(const cfit_plan_request *r, long gbs, cfit_diag *d);

#endif
