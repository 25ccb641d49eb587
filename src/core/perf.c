/* perf.c - memory and step-time model of one training layout (docs/model.md §2-§5).
 *
 * Every operation costs max(FLOPs / (peak x efficiency), bytes / achievable bandwidth)
 * (a roofline); GEMM efficiency falls with small dimensions; collectives take NCCL's model
 * (comm.c, clusterfit/nccl.h) on each group's real shape and message size.  Rates and
 * efficiencies come from the catalog.
 */
#include "core/perf.h"
#include "base/grow.h"
#include "clusterfit/calibration.h"
#include "clusterfit/schedule.h"
#include "clusterfit/sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --fabric without --topology: a non-blocking rail-optimised fabric (NVIDIA's reference
 * architecture, two tiers) of CFIT__AUTO_NODES nodes with the fabric's achievable per-GPU rate
 * and latency, on which cross-node exchanges are simulated like a --topology's (docs/plan.md). */
static int assume_topology(cfit__ctx *ctx, cfit_diag *d)
{
    char spec[64];
    cfit_plan_assumed_topology(CFIT__AUTO_NODES, ctx->gpn, spec, sizeof spec);
    cfit_topo_params p;
    cfit_topo_params_init(&p);
    p.link_bw_bytes_per_s = ctx->nic_bw;
    p.link_latency_s = ctx->nic_lat / 4;   /* the diameter of a two-tier fabric: 4 links */
    if (ctx->up_bw > 0)
        p.scaleup_bw_bytes_per_s = ctx->up_bw;
    p.gpus_per_node = ctx->gpn;
    int rc = cfit_topo_new(spec, &p, &ctx->own_topo, d);
    if (rc)
        return rc;
    ctx->topo = ctx->own_topo;
    return CFIT_EOK;
}

/* A fused attention kernel's rate at head dimension d, against the head dimension 128 that
 * attention_efficiency is measured at: the QK^T and AV products are d deep, so at d = 64 each tile
 * does half the work per load. cuDNN on H100 (FlashAttention-3 paper, arXiv:2407.08608, Figs. 5-6,
 * causal): forward 225-388 TFLOP/s at d = 64 against 315-539 at d = 128 (0.71 at every length from
 * 512 to 16K), backward 266-433 against 305-516 (0.84); a forward and its 2.5x backward FLOPs take
 * 1/0.71 + 2.5/0.84 = 4.38 units of time where d = 128 takes 3.5, so 0.80. Linear between 64 and
 * 128; below 64 and above 128 the nearest measured figure (no published cuDNN rate there). MLA's
 * depth is its query-key width (qk_nope + qk_rope). */
static double attn_head_dim_factor(const cfit_model *m)
{
    double d = cfit_model_is_mla(m) ? (double)m->qk_nope_head_dim + m->qk_rope_head_dim : cfit_model_head_dim(m);
    const double d64 = 0.80;
    if (d >= 128)
        return 1.0;
    if (d <= 64)
        return d64;
    return d64 + (1.0 - d64) * (d - 64) / 64;
}

/* The MoE terms of ctx (docs/model.md §5.12): the MoE layers' share, the routed experts'
 * weights of the mean layer, the framework's load imbalance. */
static void moe_init(cfit__ctx *ctx)
{
    const cfit_model *m = ctx->m;
    ctx->moe = cfit_model_is_moe(m);
    if (!ctx->moe)
        return;
    double gated = m->mlp == CFIT_MLP_SWIGLU ? 3.0 : 2.0;
    ctx->moe_frac = (double)cfit_model_moe_layers(m) / m->layers;
    ctx->moe_layer_expert_params = gated * m->hidden_size * (double)m->num_experts * m->moe_ffn_hidden_size;
    ctx->expert_layer_params = ctx->moe_frac * ctx->moe_layer_expert_params;
    ctx->moe_mlp_delta_params = cfit_model_moe_mlp_params(m, 0) - ctx->moe_layer_expert_params -
                                cfit_model_dense_mlp_params(m);
    double imb = ctx->req->moe_imbalance >= 1.0 ? ctx->req->moe_imbalance : ctx->fw->moe_imbalance;
    ctx->imbalance = imb >= 1.0 ? imb : 1.0;
    ctx->a2a_overlap = ctx->req->moe_a2a_overlap >= 0 ? ctx->req->moe_a2a_overlap : ctx->fw->moe_a2a_overlap;
}

/* The MTP modules' weights (docs/model.md §3.9): what the last stage holds beyond its layers. */
static void mtp_init(cfit__ctx *ctx)
{
    const cfit_model *m = ctx->m;
    ctx->mtp = m->mtp_layers > 0 ? m->mtp_layers : 0;
    ctx->mtp_expert_params = cfit_model_mtp_moe(m) ? ctx->mtp * ctx->moe_layer_expert_params : 0.0;
    ctx->mtp_params = cfit_model_mtp_params(m, 0) - ctx->mtp_expert_params;
}

int cfit__ctx_init(cfit__ctx *ctx, const cfit_plan_request *r, const cfit_gpu *g, cfit_diag *d)
{
    memset(ctx, 0, sizeof *ctx);
    ctx->req = r;
    ctx->rec_modules = r->fixed.recompute == CFIT_RECOMPUTE_MODULES ? (unsigned)r->fixed.recompute_modules : 0u;
    ctx->off_modules = (unsigned)r->offload_modules;
    ctx->m = r->model;
    ctx->g = g;
    ctx->seq = r->seq_len > 0 ? r->seq_len : r->model->seq_len;
    ctx->gbs = r->global_batch;
    ctx->prec = r->precision;
    ctx->grad_bytes = r->grad_bytes > 0 ? r->grad_bytes : 2;
    ctx->peak = g->peak_flops[r->precision];
    ctx->peak_bf16 = g->peak_flops[CFIT_PREC_BF16];
    if (ctx->peak <= 0 || ctx->peak_bf16 <= 0)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "gpu '%s' has no dense %s tensor rate",
                             g->name, cfit_precision_name(ctx->peak <= 0 ? r->precision : CFIT_PREC_BF16));
    ctx->node = cfit_catalog_node(r->catalog, g->default_node, d);
    if (!ctx->node)
        return CFIT_EUNKNOWN;
    ctx->out = r->fabric ? r->fabric : cfit_catalog_fabric(r->catalog, ctx->node->fabric, d);
    if (!ctx->out)
        return CFIT_EUNKNOWN;
    ctx->up = cfit_catalog_fabric(r->catalog, g->scaleup_fabric, d);
    if (!ctx->up)
        return CFIT_EUNKNOWN;
    ctx->fw = r->framework ? r->framework : cfit_catalog_framework(r->catalog, "megatron-core", d);
    if (!ctx->fw)
        return CFIT_EUNKNOWN;
    ctx->unfused = r->unfused_attention >= 0 ? r->unfused_attention : ctx->fw->unfused_attention;
    ctx->attn_eff = g->cal.attention_efficiency * ctx->fw->attention_efficiency_scale * attn_head_dim_factor(r->model);
    cfit_diag_clear(d);
    ctx->mem_bw = g->memory_bw_bytes_per_s * g->cal.memory_bw_efficiency;
    ctx->up_bw = g->scaleup_bw_bytes_per_s * ctx->up->efficiency;
    ctx->up_lat = ctx->up->latency_s;
    ctx->gpn = ctx->node->gpus_per_node;
    int nics = r->nics_per_node > 0 ? r->nics_per_node : ctx->node->nics_per_node;
    double oversub = r->oversub > 1.0 ? r->oversub : 1.0;   /* spine-crossing traffic shares uplinks */
    ctx->nic_share = (double)nics / ctx->gpn / oversub;
    ctx->nic_bw = ctx->out->bw_bytes_per_s * ctx->out->efficiency * ctx->nic_share;
    ctx->nic_lat = ctx->out->latency_s;
    if (r->calibration) {   /* measured by `clusterfit bench` (calibration.h): one NIC's achievable rate */
        ctx->nic_bw = r->calibration->bw_bytes_per_s * ctx->nic_share;
        ctx->nic_lat = r->calibration->latency_s;
    }
    ctx->overlap = ctx->out->overlap_efficiency;
    ctx->domain = g->scaleup_domain > 0 ? g->scaleup_domain : 1;
    /* a scale-up domain smaller than the node (NVLink bridges of 2 or 4) splits the node;
     * without one (domain 1) the node's GPUs share its PCIe fabric */
    ctx->link_group = ctx->domain > 1 && ctx->domain < ctx->gpn ? ctx->domain : ctx->gpn;
    ctx->layer_params = cfit_model_layer_params(ctx->m);
    ctx->emb_params = cfit_model_embedding_params(ctx->m);
    ctx->model_flops = cfit_model_flops_per_token(ctx->m, ctx->seq);   /* walks every layer: once */
    moe_init(ctx);
    mtp_init(ctx);
    if (cfit__moe_prefix_init(ctx))
        return cfit_diag_set(d, CFIT_ENOMEM, NULL, 0, 0, "out of memory");
    cfit__finetune_init(ctx);   /* adjusts model_flops for frozen weights */
    int rc = cfit__offload_init(ctx, d);
    if (!rc)
        rc = cfit__comm_init(ctx, d);
    if (rc)
        return rc;
    ctx->topo = r->topology;
    if (!r->topology && r->fabric && r->assume_topology)
        return assume_topology(ctx, d);
    return CFIT_EOK;
}

void cfit__ctx_fini(cfit__ctx *ctx)
{
    cfit_sim_state_free(ctx->sim);
    ctx->sim = NULL;
    cfit_topo_free(ctx->own_topo);
    cfit__comm_fini(ctx);
    free(ctx->slow);
    ctx->slow = NULL;
    free(ctx->moe_prefix);
    ctx->moe_prefix = NULL;
    ctx->nslow = ctx->slow_cap = 0;
    ctx->own_topo = NULL;
    ctx->topo = NULL;
}

int cfit_plan_assumed_topology(long nodes, int gpus_per_node, char *spec, size_t len)
{
    int n = snprintf(spec, len, "railopt:nodes=%ld,gpus=%d", nodes > 0 ? nodes : 1,
                     gpus_per_node > 0 ? gpus_per_node : 1);
    return n >= 0 && (size_t)n < len ? CFIT_EOK : CFIT_ERANGE;
}

/* ---- collectives: NCCL's model (comm.c) on each group, a topology's contention on top ---- */

/* Ranks of a group of n with stride `stride` that share one scale-up link group. */
static int ranks_per_node(const cfit__ctx *ctx, long n, long stride)
{
    if (stride >= ctx->link_group)
        return 1;
    long k = ctx->link_group / stride;
    return (int)(k < n ? k : n);
}

/* The simulated slowdown (1 without a topology) of an exchange across `nodes` nodes, k ranks
 * each, rank r to r + stride within groups of `group` ranks (cfit_sim_internode_curve), for
 * messages of `bytes` per flow: the factors of 14 sizes, 1 KiB to 64 GiB 4x apart, are
 * simulated once per exchange and cached in ctx (the search asks for few distinct exchanges,
 * many times), then interpolated linearly in log2(bytes) and clamped at the ends. */
static double topo_factor(const cfit__ctx *cctx, long nodes, int k, long stride, long group, double bytes)
{
    const struct cfit_topo *t = cctx->topo;
    if (!t || nodes < 2)
        return 1.0;
    cfit__ctx *ctx = (cfit__ctx *)cctx;   /* the cache is the only state a const ctx changes */
    int tgpn = cfit_topo_gpus_per_node(t);
    long tnodes = cfit_topo_hosts(t) / tgpn;
    nodes = nodes < tnodes ? nodes : tnodes;   /* the largest group t holds (as the simulator clamps) */
    k = k < tgpn ? k : tgpn;
    if (nodes < 2)
        return 1.0;
    long n = nodes * k;                        /* the same normalisation as the simulator's */
    group = group > 0 && group < n ? group : 0;
    stride = (stride > 0 ? stride : k) % (group ? group : n);
    if (stride == 0 && !group)
        stride = k % n;
    struct cfit__topo_slow *e = NULL, tmp;
    for (size_t i = 0; i < ctx->nslow && !e; i++)
        if (ctx->slow[i].nodes == nodes && ctx->slow[i].k == k && ctx->slow[i].stride == stride &&
            ctx->slow[i].group == group)
            e = &ctx->slow[i];
    if (!e) {
        cfit__grow(&ctx->slow, &ctx->slow_cap, ctx->nslow + 1, sizeof *ctx->slow);   /* else tmp, uncached */
        e = ctx->nslow < ctx->slow_cap ? &ctx->slow[ctx->nslow++] : &tmp;
        *e = (struct cfit__topo_slow){nodes, stride, group, k, {0}};
        double sizes[CFIT__SLOW_GRID];
        for (int i = 0; i < CFIT__SLOW_GRID; i++)
            sizes[i] = ldexp(1.0, 10 + 2 * i);
        cfit_sim_exchange x = {nodes > 1 << 30 ? 1 << 30 : (int)nodes, k, stride, group, ctx->nic_bw, ctx->nic_lat};
        cfit_diag d;
        cfit_diag_clear(&d);
        if (!ctx->sim)
            ctx->sim = cfit_sim_state_new(t, &d);
        int rc = ctx->sim ? cfit_sim_state_curve(ctx->sim, &x, CFIT__SLOW_GRID, sizes, e->f, &d) : CFIT_ENOMEM;
        if (rc && !ctx->topo_rc) {   /* an unroutable or disconnected fabric: the plan fails with it */
            char grp[40] = "";
            if (group)
                snprintf(grp, sizeof grp, " in groups of %ld", group);
            ctx->topo_rc = rc;
            cfit_diag_set(&ctx->topo_diag, rc, NULL, 0, 0,
                          "simulating a cross-node exchange (%d nodes, %d ranks each, rank stride %ld%s) failed: %s",
                          x.nodes, k, stride, grp, d.msg[0] ? d.msg : cfit_strerror(rc));
        }
    }
    double x = (log2(bytes > 1 ? bytes : 1) - 10) / 2;
    if (x <= 0)
        return e->f[0];
    if (x >= CFIT__SLOW_GRID - 1)
        return e->f[CFIT__SLOW_GRID - 1];
    int i = (int)x;
    return e->f[i] + (x - i) * (e->f[i + 1] - e->f[i]);
}

/* Collective c of S bytes over n ranks, k of them per link group, on NCCL's model; the inter-node
 * bytes are slowed by `slow` (a simulated factor; < 0: that of the group's own k rings across its
 * nodes, ring steps of S/k/nodes per flow, as for TP beyond the link group). */
static double coll_s(const cfit__ctx *ctx, cfit_collective c, double S, long n, int k, double slow)
{
    if (n <= 1 || S <= 0)
        return 0.0;
    long nodes = (n + k - 1) / k;
    if (slow < 0)
        slow = topo_factor(ctx, nodes, k, k, 0, S / k / nodes);
    return cfit__comm_group_s(ctx, c, n, k, slow, S);
}

/* The factor of a data-parallel all-reduce of S bytes across nodes: every DP group of the job
 * runs its rings at once, each GPU to the GPU of its DP group in the same slot of the next
 * node (rank stride tp x cp x k, k DP ranks per node) inside its stage's block of tp x cp x dp
 * ranks, over all the job's nodes; a ring step moves S/k/nodes (nodes the group spans). */
static double dp_factor(const cfit__ctx *ctx, const cfit_layout *l, long N, int k, double S)
{
    long tc = (long)l->tp * l->cp, nodes = (l->dp + k - 1) / k;
    if (l->dp <= 1 || nodes <= 1)
        return 1.0;
    return topo_factor(ctx, (N + ctx->gpn - 1) / ctx->gpn, ctx->gpn, tc * k, tc * l->dp, S / k / nodes);
}

/* ---- compute: roofline per operation ---- */

typedef cfit__acc acc;

static double shape_eff(const cfit__ctx *ctx, double x)
{
    return x / (x + ctx->g->cal.gemm_half_dim);
}

/* One GEMM (M x K) by (K x N), forward; backward is two GEMMs of the same size. */
static void gemm(const cfit__ctx *ctx, double M, double N, double K, double passes, acc *a)
{
    double eff = ctx->g->cal.gemm_efficiency[ctx->prec] * shape_eff(ctx, M) * shape_eff(ctx, N) *
                 shape_eff(ctx, K);
    double in_bytes = ctx->prec == CFIT_PREC_FP8 ? 1.0 : 2.0;
    double tc = 2.0 * M * N * K / (ctx->peak * eff);
    double tm = (in_bytes * (M * K + K * N) + 2.0 * M * N) / ctx->mem_bw;
    double t = (tc > tm ? tc : tm) * passes;
    a->t += t;
    if (tc > tm)
        a->cb += t;
    else
        a->mb += t;
}

static void membound(const cfit__ctx *ctx, double bytes, acc *a)
{
    double t = bytes / ctx->mem_bw;
    a->t += t;
    a->mb += t;
}

void cfit__gemm(const cfit__ctx *ctx, double M, double N, double K, double passes, cfit__acc *a)
{
    gemm(ctx, M, N, K, passes, a);
}

void cfit__membound(const cfit__ctx *ctx, double bytes, cfit__acc *a)
{
    membound(ctx, bytes, a);
}

static void flops_bound(double flops, double rate, acc *a)
{
    double t = flops / rate;
    a->t += t;
    a->cb += t;
}

static void add_scaled(acc *a, const acc *b, double w)
{
    a->t += w * b->t;
    a->cb += w * b->cb;
    a->mb += w * b->mb;
}

/* MLA's projections (DeepSeek-V3 report §2.1.1; Megatron-Core multi_latent_attention.py): the
 * q and kv down projections are replicated over TP ("duplicated" TELinear) and run on a rank's
 * own tokens under SP; the up projections split the heads; the output comes from heads x v. */
static void mla_proj_forward(const cfit__ctx *ctx, double tokens, int tp, int sp, acc *a)
{
    const cfit_model *m = ctx->m;
    double h = m->hidden_size, heads = m->num_heads, v = m->v_head_dim;
    double qk = (double)m->qk_nope_head_dim + m->qk_rope_head_dim, own = tokens / (sp ? tp : 1);
    if (m->q_lora_rank > 0) {
        gemm(ctx, own, m->q_lora_rank, h, 1.0, a);                           /* q down */
        gemm(ctx, tokens, heads * qk / tp, m->q_lora_rank, 1.0, a);          /* q up */
    } else {
        gemm(ctx, tokens, heads * qk / tp, h, 1.0, a);                       /* plain q */
    }
    gemm(ctx, own, (double)m->kv_lora_rank + m->qk_rope_head_dim, h, 1.0, a); /* kv down + rope key */
    gemm(ctx, tokens, heads * (m->qk_nope_head_dim + v) / tp, m->kv_lora_rank, 1.0, a); /* k, v up */
    gemm(ctx, tokens, h, heads * v / tp, 1.0, a);                              /* output */
}

/* Attention projections: QKV and output at the model's head width, or MLA's. */
static void attn_proj_forward(const cfit__ctx *ctx, double tokens, int tp, int sp, acc *a)
{
    const cfit_model *m = ctx->m;
    if (cfit_model_is_mla(m)) {
        mla_proj_forward(ctx, tokens, tp, sp, a);
        return;
    }
    double h = m->hidden_size, d = cfit_model_head_dim(m);
    double q = m->num_heads * d, kv = m->num_kv_heads * d;
    gemm(ctx, tokens, (q + 2.0 * kv) / tp, h, 1.0, a);            /* QKV */
    gemm(ctx, tokens, h, q / tp, 1.0, a);                          /* output projection */
}

/* A dense MLP of width f split over TP: FC1 (gate + up), FC2. */
static void dense_mlp_forward(const cfit__ctx *ctx, double tokens, int tp, double f, acc *a)
{
    double h = ctx->m->hidden_size;
    int gated = ctx->m->mlp == CFIT_MLP_SWIGLU;
    gemm(ctx, tokens, (gated ? 2.0 : 1.0) * f / tp, h, 1.0, a);    /* FC1 (gate + up) */
    gemm(ctx, tokens, h, f / tp, 1.0, a);                          /* FC2 */
}

/* Routed tokens one GPU's experts run per micro-batch, per local expert (docs/model.md §5.12): a
 * rank's own tokens (split over TP by SP) x top-k, gathered over the EP x ETP ranks and spread
 * over E experts, the busiest expert's imbalance on top; *local: experts per EP rank. */
static double tokens_per_expert(const cfit__ctx *ctx, double tokens, int tp, int ep, int etp, double *local)
{
    const cfit_model *m = ctx->m;
    *local = (double)m->num_experts / ep;
    return tokens / tp * m->experts_per_token * ep * etp / m->num_experts * ctx->imbalance;
}

/* One MoE layer's MLP, forward: the router, the local experts as a grouped GEMM of per-expert
 * shape (the FFN split over ETP), the shared experts as a TP-split dense MLP, and the permute /
 * unpermute copies of the dispatched tokens with the experts' element-wise traffic. */
static void expert_mlp_forward(const cfit__ctx *ctx, double tokens, int tp, int ep, int etp, acc *a)
{
    const cfit_model *m = ctx->m;
    double h = m->hidden_size, f = (double)m->moe_ffn_hidden_size / etp, fs = m->shared_ffn_hidden_size;
    int gated = m->mlp == CFIT_MLP_SWIGLU, fp8 = ctx->prec == CFIT_PREC_FP8;
    double local, per_expert = tokens_per_expert(ctx, tokens, tp, ep, etp, &local);
    gemm(ctx, tokens / tp, m->num_experts, h, 1.0, a);                   /* router */
    gemm(ctx, per_expert, (gated ? 2.0 : 1.0) * f, h, local, a);         /* expert FC1 */
    gemm(ctx, per_expert, h, f, local, a);                               /* expert FC2 */
    double routed = per_expert * local;
    double act = (gated ? 3.0 : 2.0) * f + (fp8 ? h + f : 0.0);
    membound(ctx, 2.0 * routed * (4.0 * h + act), a);   /* permute + unpermute, both directions */
    if (fs > 0) {
        dense_mlp_forward(ctx, tokens, tp, fs, a);
        membound(ctx, 2.0 * tokens * ((gated ? 3.0 : 2.0) * fs + (fp8 ? 2.0 * fs : 0.0)) / tp, a);
    }
}

/* The mean layer's MLP: the dense layers' share (first_dense_layers, ...) and the MoE layers'
 * (also added to *experts, what recomputing the experts reruns). */
static void mlp_forward(const cfit__ctx *ctx, double tokens, int tp, int ep, int etp, acc *a, acc *experts)
{
    const cfit_model *m = ctx->m;
    if (!ctx->moe) {
        dense_mlp_forward(ctx, tokens, tp, m->ffn_hidden_size, a);
        return;
    }
    acc dense = {0, 0, 0}, moe = {0, 0, 0};
    if (ctx->moe_frac < 1.0)
        dense_mlp_forward(ctx, tokens, tp, m->ffn_hidden_size, &dense);
    expert_mlp_forward(ctx, tokens, tp, ep, etp, &moe);
    add_scaled(a, &dense, 1.0 - ctx->moe_frac);
    add_scaled(a, &moe, ctx->moe_frac);
    add_scaled(experts, &moe, ctx->moe_frac);
}

/* Half the score width per head pair: heads x (qk + v head dims) / 2 (= hidden for plain MHA). */
static double score_width(const cfit_model *m)
{
    if (cfit_model_is_mla(m))
        return m->num_heads * ((double)m->qk_nope_head_dim + m->qk_rope_head_dim + m->v_head_dim) / 2.0;
    return (double)m->num_heads * cfit_model_head_dim(m);
}

/* A fused attention kernel's rate on a sequence of `len` tokens: short sequences leave its tiles
 * part-filled and the causal diagonal's share large, so it reaches the GPU's long-sequence
 * attention_efficiency as len / (len + attention_half_seq) (docs/model.md §5.2). */
static double attn_rate(const cfit__ctx *ctx, double len)
{
    double half = ctx->g->cal.attention_half_seq;
    return ctx->peak_bf16 * ctx->attn_eff * (half > 0 && len > 0 ? len / (len + half) : 1.0);
}

/* The fused attention core's forward time for `tokens` queries per GPU: each rank's kernels run on
 * its seq / cp slice (ring attention's blocks), sliding-window layers on their window. */
static void fused_attention(const cfit__ctx *ctx, double tokens, int tp, int cp, double sw, acc *at)
{
    const cfit_model *m = ctx->m;
    double per_key = 4.0 * tokens * sw / tp * 0.5, len = ctx->seq / (cp > 1 ? cp : 1);
    if (m->sliding_layers == 0 || m->sliding_window >= ctx->seq) {
        flops_bound(per_key * ctx->seq, attn_rate(ctx, len), at);
        return;
    }
    double full = (double)(m->layers - m->sliding_layers) / m->layers, local = 1.0 - full;
    double window = m->sliding_window < len ? m->sliding_window : len;
    flops_bound(per_key * full * ctx->seq, attn_rate(ctx, len), at);
    flops_bound(per_key * local * 2.0 * m->sliding_window, attn_rate(ctx, window), at);
}

/* Forward pass of one layer for `tokens` tokens on one GPU (a cp-th of the sequence); attn
 * receives the attention core's part of it. */
static void layer_forward(const cfit__ctx *ctx, double tokens, int tp, int cp, int sp, int ep, int etp, acc *a,
                          acc *attn, acc *experts)
{
    const cfit_model *m = ctx->m;
    double h = m->hidden_size, sw = score_width(m);
    int gated = m->mlp == CFIT_MLP_SWIGLU;
    attn_proj_forward(ctx, tokens, tp, sp, a);
    mlp_forward(ctx, tokens, tp, ep, etp, a, experts);
    /* attention core: QK^T and AV.  A fused kernel skips the masked half of the causal
     * scores and never writes them; an unfused one runs batched GEMMs over all s x s
     * scores and streams them through HBM (scale, mask, softmax, dropout: ~10 bytes
     * per score forward). */
    acc at = {0, 0, 0};
    double heads = (double)m->num_heads / tp;
    if (ctx->unfused) {
        flops_bound(4.0 * tokens * ctx->seq * sw / tp,
                    ctx->peak_bf16 * ctx->g->cal.gemm_efficiency[CFIT_PREC_BF16], &at);
        membound(ctx, 10.0 * tokens * heads * ctx->seq, &at);
    } else {
        fused_attention(ctx, tokens, tp, cp, sw, &at);
    }
    a->t += at.t;
    a->cb += at.cb;
    a->mb += at.mb;
    *attn = at;
    /* element-wise traffic: norms, residuals, rotary (replicated over TP unless SP)
     * and the dense MLP activation (always split over TP); 2-byte elements read + write. */
    double f = ctx->moe ? (1.0 - ctx->moe_frac) * m->ffn_hidden_size : m->ffn_hidden_size;
    double rep = 14.0 * h / (sp ? tp : 1);
    double act = (gated ? 3.0 : 2.0) * f / tp;
    double cast = ctx->prec == CFIT_PREC_FP8 ? (3.0 * h + 2.0 * f) / tp : 0.0;
    membound(ctx, 2.0 * tokens * (rep + act + cast), a);
}

/* Stored bytes of one MoE layer's experts per micro-batch (docs/model.md §3.7): the permuted
 * tokens expert FC1 reads (a GEMM input: gin bytes), each expert's FC1 output and FC2 input at
 * the per-ETP width (the routing weights multiply inside the activation, so the combine keeps no
 * expert output), and the shared experts' as a dense MLP's.  *off (when not NULL): of them, what
 * the offload modules (expert_fc1, moe_act, fused_group_mlp) move to host memory. */
static double expert_activation_bytes(const cfit__ctx *ctx, double tokens, int tp, int ep, int etp, double gin,
                                      unsigned mods, double *off)
{
    const cfit_model *m = ctx->m;
    double f = (double)m->moe_ffn_hidden_size / etp, fs = m->shared_ffn_hidden_size, h = m->hidden_size;
    double fc1_out = m->mlp == CFIT_MLP_SWIGLU ? 4.0 : 2.0, per_token = fc1_out + gin;
    double local, routed = tokens_per_expert(ctx, tokens, tp, ep, etp, &local) * local;
    /* moe_act drops the activation's output, FC2's input; recomputed shared experts keep only
     * their input (the layer's, already counted) */
    double fc2_in = mods & CFIT_RECMOD_MOE_ACT ? 0.0 : gin;
    double shared = mods & CFIT_RECMOD_SHARED_EXPERTS ? 0.0 : tokens * per_token * fs / tp;
    if (off) {
        unsigned o = ctx->off_modules;
        int fused = (o & CFIT_OFFMOD_FUSED_GROUP_MLP) != 0;
        *off = routed * ((fused || (o & CFIT_OFFMOD_EXPERT_FC1) ? gin * h : 0.0) +
                         (fused || (o & CFIT_OFFMOD_MOE_ACT) ? fc1_out * f : 0.0) + (fused ? fc2_in * f : 0.0));
    }
    return routed * (gin * h + (fc1_out + fc2_in) * f) + shared;
}

/* The submodules recompute mode rec reruns (CFIT_RECMOD_* bits): the request's list for
 * CFIT_RECOMPUTE_MODULES, which is never searched. */
static unsigned rec_modules(const cfit__ctx *ctx, int rec)
{
    return cfit_recompute_mask((cfit_recompute)rec, ctx->rec_modules);
}

/* Attention's stored bytes per token over hidden_size, split over TP: Q, K, V (2 bytes; MLA's are
 * heads x (qk, qk, v)), the core attention's input ... */
static double attn_qkv_activation(const cfit_model *m)
{
    double h = m->hidden_size;
    if (cfit_model_is_mla(m)) {
        double heads = m->num_heads, qk = (double)m->qk_nope_head_dim + m->qk_rope_head_dim, v = m->v_head_dim;
        return 2.0 * heads * (2.0 * qk + v) / h;
    }
    double g_over_a = (double)m->num_kv_heads / m->num_heads, width = (double)m->num_heads * cfit_model_head_dim(m) / h;
    return 2.0 * (1.0 + 2.0 * g_over_a) * width;
}

/* ... and the output projection's input (gin bytes; MLA's heads x v). */
static double attn_proj_activation(const cfit_model *m, double gin)
{
    double h = m->hidden_size;
    if (cfit_model_is_mla(m))
        return gin * m->num_heads * (double)m->v_head_dim / h;
    return gin * (double)m->num_heads * cfit_model_head_dim(m) / h;
}

/* Stored activation bytes per layer per micro-batch (Korthikanti et al. 2022, with a
 * fused attention kernel that keeps no s x s scores; no dropout masks); the mean layer of an
 * MoE model adds its experts' share and MLA its gathered latents.  With off not NULL, the bytes
 * the request's offload modules move to host memory go to *off and not into the result (the GPU's
 * part); with NULL nothing is offloaded (a recomputed layer's working set). */
static double layer_activation_bytes(const cfit__ctx *ctx, double tokens, int tp, int sp, int rec, int ep, int etp,
                                     double *off)
{
    const cfit_model *m = ctx->m;
    double h = m->hidden_size;
    double f = ctx->moe ? (1.0 - ctx->moe_frac) * m->ffn_hidden_size : m->ffn_hidden_size;
    if (off)
        *off = 0.0;
    if (rec == CFIT_RECOMPUTE_FULL)
        return 2.0 * tokens * h / (sp ? tp : 1);
    /* GEMM inputs kept for the backward are fp8 (1 byte) when the GEMMs run in fp8
     * (Transformer Engine saves the casted inputs); norm inputs and Q, K, V stay 2 bytes */
    double gin = ctx->prec == CFIT_PREC_FP8 ? 1.0 : 2.0;
    unsigned mods = rec_modules(ctx, rec), o = off ? ctx->off_modules : 0u;
    double per_rep = tokens * h / (sp ? tp : 1), per_split = tokens * h / tp;
    /* two norm inputs, QKV and FC1 inputs; layernorm drops the norms' outputs where they are
     * those inputs (bf16 GEMMs: in fp8 Transformer Engine keeps its own cast copies) */
    double qkv_in = mods & CFIT_RECMOD_LAYERNORM && gin == 2.0 ? 0.0 : gin;   /* and FC1's: each a norm's output */
    double replicated = 4.0 + 2.0 * qkv_in;
    /* the dense MLP's FC1 output and FC2 input; recomputed (mlp), only its input stays */
    double mlp = mods & CFIT_RECMOD_MLP ? 0.0 : m->mlp == CFIT_MLP_SWIGLU ? (4.0 + gin) * f / h : (2.0 + gin) * f / h;
    double qkv = attn_qkv_activation(m), proj = attn_proj_activation(m, gin);
    if (cfit_model_is_mla(m) && (mods & CFIT_RECMOD_MLA_UP_PROJ))   /* the up-projected Q, K, V */
        qkv = 0.0;
    double split = qkv + proj + mlp;    /* Q K V, out-proj input, MLP */
    /* unfused attention without core_attn recomputed keeps the scores: 5·a·s/h */
    if (ctx->unfused && !(mods & CFIT_RECMOD_CORE_ATTN))
        split += 5.0 * m->num_heads * (double)ctx->seq / h;
    double bytes = per_rep * replicated + per_split * split;
    if (cfit_model_is_mla(m))   /* the q and kv latents the up projections read, gathered over TP */
        bytes += 2.0 * tokens * ((double)m->q_lora_rank + m->kv_lora_rank + m->qk_rope_head_dim);
    if (o) {   /* Megatron's fine-grained offloading moves each listed module's input (docs/model.md §10.1) */
        double moved = per_rep * ((o & CFIT_OFFMOD_ATTN_NORM ? 2.0 : 0.0) + (o & CFIT_OFFMOD_MLP_NORM ? 2.0 : 0.0) +
                                  (o & CFIT_OFFMOD_QKV_LINEAR ? qkv_in : 0.0)) +
                       per_split * ((o & CFIT_OFFMOD_CORE_ATTN ? qkv : 0.0) + (o & CFIT_OFFMOD_ATTN_PROJ ? proj : 0.0));
        *off += moved;
        bytes -= moved;
    }
    if (ctx->moe && !(mods & CFIT_RECMOD_MOE)) {   /* recomputed experts keep only their input */
        double moe_off = 0.0;
        bytes += ctx->moe_frac * expert_activation_bytes(ctx, tokens, tp, ep, etp, gin, mods, o ? &moe_off : NULL);
        if (o) {
            *off += ctx->moe_frac * moe_off;
            bytes -= ctx->moe_frac * moe_off;
        }
    }
    return bytes;
}

/* One layer's time for one micro-batch: its GPU work, exposed communication, overhead and
 * any wait for a host-bound framework. */
double cfit__layer_time_s(const cfit__layer_cost *lc)
{
    return lc->fwd_s + lc->bwd_s + lc->tp_s + lc->cp_s + lc->overhead_s + lc->host_s + lc->ep_s;
}

/* The most of the EP group's `groups` link groups one token's experts can lie on (docs/model.md
 * §5.13); 0 = no bound.  Node-limited routing states it (moe_max_nodes_per_token); group-limited
 * routing implies it: Megatron-Core lays the router's G equal expert groups out in order over the
 * EP ranks, so each group spans ceil(groups / G) link groups and a token's router_group_topk
 * groups at most that many times as many (DeepSeek-V3 §2.1.2: G = 8 nodes, 4 of them). */
static double node_limit(const cfit_model *m, long groups)
{
    double limit = m->moe_max_nodes_per_token;
    if (m->router_groups > 1) {
        double span = (double)((groups + m->router_groups - 1) / m->router_groups);
        double by_groups = m->router_group_topk * span;
        if (limit <= 0 || by_groups < limit)
            limit = by_groups;
    }
    return limit;
}

/* The share of a token's top-k copies that a dispatch sends (docs/model.md §5.13): NCCL's
 * all-to-all sends every copy.  DeepEP and HybridEP send a token once to each destination rank
 * that holds any of its experts, inside a link group (DeepEP's dispatch layout is_token_in_rank;
 * NeMo AutoModel's DeepEP vs HybridEP study counts "per-token deduplicated destination bytes"),
 * and once per destination node across link groups, forwarded there over the scale-up link: the
 * expected distinct ranks (nodes) among k experts spread uniformly over ep ranks (the groups),
 * n (1 - (1 - 1/n)^k), the nodes capped by node- or group-limited routing. */
static double dispatch_share(const cfit__ctx *ctx, int ep, long groups)
{
    const cfit_model *m = ctx->m;
    double k = m->experts_per_token;
    if (ctx->fw->moe_dispatcher == CFIT_DISPATCH_ALLTOALL)
        return 1.0;
    double n = groups > 1 ? (double)groups : (double)ep, distinct = n * (1.0 - pow(1.0 - 1.0 / n, k));
    double limit = groups > 1 ? node_limit(m, groups) : 0.0;
    if (limit > 0 && distinct > limit)
        distinct = limit;
    return distinct < k ? distinct / k : 1.0;
}

/* An MoE layer's compute per micro-batch as the overlapped schedule pairs it with communication:
 * the part before the dispatch (attention, norms, router; Megatron's pre_dispatch_computation) and
 * the MLP (experts, shared experts), forward and backward. */
typedef struct ep_window {
    double pre_fwd, pre_bwd, mlp_fwd, mlp_bwd;
} ep_window;

/* Exposed time of communication comm beside compute comp on the other stream. */
static double beside(double comm, double comp)
{
    return comm > comp ? comm - comp : 0.0;
}

/* Dispatch and combine of one MoE layer per micro-batch, fwd + bwd (docs/model.md §5.13): each
 * rank sends its own tokens x top-k x hidden in bf16 (the busiest rank's share scaled by the
 * imbalance) to the ep ranks of stride etp - NCCL's all-to-all on that group's real shape -
 * twice forward (dispatch, combine) and twice backward, twice more when the forward is
 * recomputed; ETP > 1 all-gathers the dispatched tokens and reduce-scatters the outputs over
 * the etp ranks.  With the framework's overlap each all-to-all runs beside the compute of
 * another micro-batch that Megatron-Core's merged 1F1B step pairs it with
 * (megatron/core/models/common/model_chunk_schedule_plan.py, schedule_layer_1f1b): the backward's
 * combine beside the forward's pre-dispatch part, both dispatches (and a recomputed layer's pair,
 * and ETP's gathers) beside the two MLPs, the forward's combine beside the backward's pre-dispatch
 * part; the fabric's overlap share of each partner hides it, at the cost of the SMs the dispatch
 * kernels hold meanwhile (moe_comm_sm_share of the hidden time); the rest is exposed. */
static double ep_comm_s(const cfit__ctx *ctx, double tokens, int tp, int ep, int etp, int recompute, const ep_window *w)
{
    const cfit_model *m = ctx->m;
    double h = m->hidden_size, own = tokens / tp;
    double passes = recompute == CFIT_RECOMPUTE_FULL || (rec_modules(ctx, recompute) & CFIT_RECMOD_MOE) ? 3.0 : 2.0;
    double one = 0.0, etp_s = 0.0;   /* one all-to-all; ETP's collectives of the layer */
    if (ep > 1) {
        int k = ranks_per_node(ctx, ep, etp);
        long groups = (ep + k - 1) / k;
        double S = 2.0 * own * m->experts_per_token * h * ctx->imbalance * dispatch_share(ctx, ep, groups);
        one = coll_s(ctx, CFIT_COLL_ALLTOALL, S, ep, k, 1.0);
    }
    if (etp > 1) {
        int k = ranks_per_node(ctx, etp, 1);
        double S = 2.0 * own * m->experts_per_token * h * etp * ctx->imbalance;
        etp_s = passes * (coll_s(ctx, CFIT_COLL_ALLGATHER, S, etp, k, 1.0) + coll_s(ctx, CFIT_COLL_REDUCESCATTER, S, etp, k, 1.0));
    }
    double t = 2.0 * passes * one + etp_s;
    if (!ctx->a2a_overlap)
        return t;
    double ov = ctx->overlap;
    double exposed = beside(one, ov * w->pre_fwd) +
                     beside(2.0 * (passes - 1.0) * one + etp_s, ov * (w->mlp_fwd + w->mlp_bwd)) +
                     beside(one, ov * w->pre_bwd);
    /* the hidden part still holds the dispatch kernels' SMs, which the compute it hides behind lacks */
    return exposed + ctx->fw->moe_comm_sm_share * (t - exposed);
}

/* W, the weight-gradient share of a layer's backward (docs/model.md §5.8): one GEMM of each
 * forward weight GEMM's shape (dW = X^T dY), i.e. the projections' and MLP's forward time again;
 * the attention core has no weights, so its backward is all B (Qi et al. 2024, Table 1:
 * W = 24 s b h^2 FLOPs, B = 24 s b h^2 + 8 b s^2 h). */
static double weight_grad_s(const cfit__ctx *ctx, double tokens, int tp, int sp, int ep, int etp)
{
    acc w = {0, 0, 0}, experts = {0, 0, 0};
    attn_proj_forward(ctx, tokens, tp, sp, &w);
    mlp_forward(ctx, tokens, tp, ep, etp, &w, &experts);
    return w.t;
}

/* The share of an eager layer's host issue time that stays on the host with Transformer Engine's
 * scoped graphs (attention, router, preprocessing captured; permutation, all-to-all, experts and
 * combine eager): our count of Megatron-Core's MoE layer forward, 41-49% of a Qwen3-30B-A3B
 * layer's launches and torch calls (docs/model.md "Host-bound MoE layers"). */
static const double scoped_host_share = 0.5;

/* The host's time to issue one forward pass of the mean layer (docs/model.md §5.3). */
static double host_issue_s(const cfit__ctx *ctx)
{
    int graphs = ctx->req->cuda_graphs;
    if (graphs == CFIT_GRAPHS_FULL)
        return 0.0;
    double moe = ctx->moe ? ctx->moe_frac * ctx->fw->moe_host_layer_s : 0.0;
    if (graphs == CFIT_GRAPHS_SCOPED)
        return scoped_host_share * (ctx->fw->host_layer_s + moe);
    return ctx->fw->host_layer_s + moe;
}

/* The forward work the submodules in mods rerun before the backward (docs/model.md §3.8):
 * core_attn the attention core (attn), moe the MoE MLPs (experts: router, dispatch copies,
 * experts, shared experts), mlp the dense layers' MLPs, shared_experts the MoE layers' shared
 * experts, mla_up_proj MLA's q and k/v up projections, layernorm the two pre-norms and moe_act
 * the experts' activation function (element-wise: HBM traffic). */
static void rerun_forward(const cfit__ctx *ctx, double tokens, int tp, int sp, int ep, int etp, unsigned mods,
                          const acc *attn, const acc *experts, acc *out)
{
    const cfit_model *m = ctx->m;
    double h = m->hidden_size, moe = ctx->moe ? ctx->moe_frac : 0.0;
    int gated = m->mlp == CFIT_MLP_SWIGLU;
    if (mods & CFIT_RECMOD_CORE_ATTN)
        add_scaled(out, attn, 1.0);
    if (mods & CFIT_RECMOD_MOE)
        add_scaled(out, experts, 1.0);
    if ((mods & CFIT_RECMOD_MLP) && moe < 1.0) {
        acc d = {0, 0, 0};
        dense_mlp_forward(ctx, tokens, tp, m->ffn_hidden_size, &d);
        add_scaled(out, &d, 1.0 - moe);
    }
    if ((mods & CFIT_RECMOD_SHARED_EXPERTS) && !(mods & CFIT_RECMOD_MOE) && moe > 0 && m->shared_ffn_hidden_size > 0) {
        acc d = {0, 0, 0};
        dense_mlp_forward(ctx, tokens, tp, m->shared_ffn_hidden_size, &d);
        add_scaled(out, &d, moe);
    }
    if ((mods & CFIT_RECMOD_MLA_UP_PROJ) && cfit_model_is_mla(m)) {
        double heads = m->num_heads, qk = (double)m->qk_nope_head_dim + m->qk_rope_head_dim;
        if (m->q_lora_rank > 0)
            gemm(ctx, tokens, heads * qk / tp, m->q_lora_rank, 1.0, out);
        gemm(ctx, tokens, heads * (m->qk_nope_head_dim + (double)m->v_head_dim) / tp, m->kv_lora_rank, 1.0, out);
    }
    if (mods & CFIT_RECMOD_LAYERNORM)   /* two norms: read and write tokens x hidden in bf16 */
        membound(ctx, 2.0 * 4.0 * tokens * h / (sp ? tp : 1), out);
    if ((mods & CFIT_RECMOD_MOE_ACT) && !(mods & CFIT_RECMOD_MOE) && moe > 0) {
        double local, routed = tokens_per_expert(ctx, tokens, tp, ep, etp, &local) * local;
        double f = (double)m->moe_ffn_hidden_size / etp;
        membound(ctx, moe * 2.0 * routed * ((gated ? 2.0 : 1.0) * f + f), out);
    }
}

static void layer_cost_at(const cfit__ctx *ctx, int tp, int cp, int mbs, int recompute,
                          int sp, int ep, int etp, cfit__layer_cost *lc)
{
    const cfit_model *m = ctx->m;
    double h = m->hidden_size;
    double tokens = (double)mbs * ctx->seq / cp;
    memset(lc, 0, sizeof *lc);
    lc->tp_slow = lc->cp_slow = 1.0;
    lc->tp = tp; lc->cp = cp; lc->mbs = mbs; lc->recompute = recompute; lc->sp = sp;
    ep = ep > 1 ? ep : 1;
    etp = etp > 1 ? etp : 1;
    lc->ep = ep; lc->etp = etp; lc->ep_slow = 1.0;

    acc fwd = {0, 0, 0}, attn = {0, 0, 0}, experts = {0, 0, 0};
    layer_forward(ctx, tokens, tp, cp, sp, ep, etp, &fwd, &attn, &experts);
    acc frozen = {0, 0, 0};   /* LoRA / QLoRA: the weight-gradient GEMMs the frozen weights skip */
    if (ctx->host.frozen) {
        acc frozen_experts = {0, 0, 0};
        attn_proj_forward(ctx, tokens, tp, sp, &frozen);
        mlp_forward(ctx, tokens, tp, ep, etp, &frozen, &frozen_experts);
        cfit__finetune_forward(ctx, tokens, tp, ep, etp, &fwd, &frozen);
    }
    /* backward: two GEMMs per forward GEMM, attention backward 2.5x its forward */
    double bwd_t = 2.0 * fwd.t + 0.5 * attn.t - frozen.t;
    double bwd_cb = 2.0 * fwd.cb + 0.5 * attn.cb - frozen.cb, bwd_mb = 2.0 * fwd.mb + 0.5 * attn.mb - frozen.mb;
    acc rerun = {0, 0, 0};   /* the forward work recomputed before the backward */
    if (recompute == CFIT_RECOMPUTE_FULL)
        rerun = fwd;
    else
        rerun_forward(ctx, tokens, tp, sp, ep, etp, rec_modules(ctx, recompute), &attn, &experts, &rerun);
    bwd_t += rerun.t; bwd_cb += rerun.cb; bwd_mb += rerun.mb;
    double attn_s = attn.t;
    lc->fwd_s = fwd.t;
    lc->bwd_s = bwd_t;
    lc->wgrad_s = weight_grad_s(ctx, tokens, tp, sp, ep, etp);
    lc->cb_s = fwd.cb + bwd_cb;
    lc->mb_s = fwd.mb + bwd_mb;
    lc->attn_fwd_s = attn_s;
    lc->overhead_s = 3.0 * ctx->g->cal.layer_overhead_s;

    /* TP: two all-reduces (or all-gather + reduce-scatter with SP) forward, two backward,
     * two more when the forward is recomputed; exposed. */
    if (tp > 1) {
        double S = 2.0 * tokens * h;
        int k = ranks_per_node(ctx, tp, 1);
        /* an MoE layer's MLP without shared experts needs no TP collective: its tokens stay
         * split by SP and reach the experts by the all-to-all (ep_comm_s) */
        double mlp = ctx->moe ? 1.0 - ctx->moe_frac * (m->shared_ffn_hidden_size > 0 ? 0.0 : 1.0) : 1.0;
        double n_coll = (1.0 + mlp) * (recompute == CFIT_RECOMPUTE_FULL ? 3.0 : 2.0);
        long tnodes = (tp + k - 1) / k;
        lc->tp_slow = topo_factor(ctx, tnodes, k, k, 0, S / k / tnodes);
        double one = sp ? coll_s(ctx, CFIT_COLL_ALLGATHER, S, tp, k, lc->tp_slow) +
                              coll_s(ctx, CFIT_COLL_REDUCESCATTER, S, tp, k, lc->tp_slow)
                        : coll_s(ctx, CFIT_COLL_ALLREDUCE, S, tp, k, lc->tp_slow);
        lc->tp_s = n_coll * one;
    }
    /* CP: ring attention passes K,V (forward) and K,V + their gradients (backward)
     * around cp ranks, overlapped with the attention kernels. */
    if (cp > 1) {
        double kv = (double)m->num_kv_heads * cfit_model_head_dim(m);
        double chunk = 2.0 * 2.0 * tokens * kv / tp;   /* K and V, 2 bytes */
        if (cfit_model_is_mla(m))                      /* MLA passes the up-projected K and V of every head */
            chunk = 2.0 * tokens * m->num_heads * ((double)m->qk_nope_head_dim + m->qk_rope_head_dim + m->v_head_dim) / tp;
        int intra = (long)tp * cp <= ctx->link_group;
        /* across nodes every GPU passes its chunk to the rank tp further in its block of tp x cp
         * at once: the simulator's exchange over the whole job's nodes */
        long jnodes = (ctx->job_gpus + ctx->gpn - 1) / ctx->gpn;
        lc->cp_slow = intra ? 1.0 : topo_factor(ctx, jnodes, ctx->gpn, tp, (long)tp * cp, chunk);
        double step = cfit__comm_p2p_s(ctx, chunk, intra, lc->cp_slow);
        double fwd_comm = (cp - 1) * step, bwd_comm = 2.0 * (cp - 1) * step;
        double fwd_exp = fwd_comm - ctx->overlap * attn_s;
        double bwd_exp = bwd_comm - ctx->overlap * 2.5 * attn_s;
        lc->cp_s = (fwd_exp > 0 ? fwd_exp : 0) + (bwd_exp > 0 ? bwd_exp : 0);
        if (recompute == CFIT_RECOMPUTE_FULL && fwd_exp > 0)
            lc->cp_s += fwd_exp;
    }

    /* Host-bound: the framework's CPU issues a layer's kernels in host_layer_s per forward
     * pass, an MoE layer's moe_host_layer_s more (backward counts two, a recomputed forward one
     * more); when the GPU's work for the layer is shorter, the GPU waits for the host and the
     * layer takes the host's time.  CUDA graphs replay the kernels without the host: all of
     * them with full-iteration graphs, the attention, router and preprocessing modules with
     * Transformer Engine's scoped graphs (docs/model.md "Host-bound layers"). */
    if (ctx->moe) {   /* the MLP's share of the layer's forward, and of its backward alike */
        double r = fwd.t > 0 ? experts.t / fwd.t : 0.0;
        ep_window w = {(1.0 - r) * lc->fwd_s, (1.0 - r) * lc->bwd_s, r * lc->fwd_s, r * lc->bwd_s};
        lc->ep_s = ctx->moe_frac * ep_comm_s(ctx, tokens, tp, ep, etp, recompute, &w);
    }
    double passes = 3.0 + (recompute == CFIT_RECOMPUTE_FULL ? 1.0 : 0.0);
    double host = passes * host_issue_s(ctx);
    double gpu = cfit__layer_time_s(lc);   /* host_s is still 0 (lc was cleared) */
    lc->host_s = host > gpu ? host - gpu : 0.0;
    lc->host_pass_s = host;

    /* Logits and loss on the last stage: GEMM (vocab split over TP) + softmax traffic. */
    acc lg = {0, 0, 0};
    double V = m->vocab_size;
    gemm(ctx, tokens, V / tp, h, ctx->host.frozen ? 2.0 : 3.0, &lg);   /* a frozen head: no weight gradient */
    membound(ctx, tokens * V / tp * 4.0 * 4.0, &lg);
    lc->logits_s = lg.t;
    lc->logits_cb_s = lg.cb;
    lc->logits_mb_s = lg.mb;

    lc->act_bytes = layer_activation_bytes(ctx, tokens, tp, sp, recompute, ep, etp, &lc->act_off_bytes) +
                    cfit__finetune_act_bytes(ctx, tokens, recompute);
    lc->work_bytes = recompute == CFIT_RECOMPUTE_FULL
                         ? layer_activation_bytes(ctx, tokens, tp, sp, CFIT_RECOMPUTE_NONE, ep, etp, NULL) : 0.0;
    if ((rec_modules(ctx, recompute) & CFIT_RECMOD_MOE) && ctx->moe)   /* one MoE layer's experts rebuilt at a time */
        lc->work_bytes = expert_activation_bytes(ctx, tokens, tp, ep, etp, ctx->prec == CFIT_PREC_FP8 ? 1.0 : 2.0, 0,
                                                 NULL);
    lc->logits_bytes = tokens * V / tp * 6.0;                      /* bf16 logits + fp32 copy */
    lc->pp_msg_bytes = 2.0 * tokens * h / tp;                      /* scatter/gather over TP */
}

/* The MTP modules on the last stage (docs/model.md §3.9; Megatron-Core
 * MultiTokenPredictionLayer): each normalises the shifted tokens' embeddings and the hidden
 * states, projects their concatenation 2h -> h, runs one layer of cost `layer` and its own logits
 * and loss, one after the other.  Added to lc's head terms. */
static void mtp_head(const cfit__ctx *ctx, const cfit__layer_cost *layer, cfit__layer_cost *lc)
{
    const cfit_model *m = ctx->m;
    double h = m->hidden_size, n = ctx->mtp, tokens = (double)lc->mbs * ctx->seq / lc->cp;
    double tp = lc->tp, own = tokens / (lc->sp ? tp : 1.0);
    acc x = {0, 0, 0};
    gemm(ctx, tokens, h / tp, 2.0 * h, 3.0, &x);        /* eh_proj, fwd + 2 bwd GEMMs */
    membound(ctx, 3.0 * 2.0 * 2.0 * 2.0 * own * h, &x);  /* enorm, hnorm, final norm: fwd + bwd, bf16 in and out */
    double logits_t = lc->logits_s, logits_cb = lc->logits_cb_s, logits_mb = lc->logits_mb_s;
    lc->logits_s += n * (x.t + logits_t + cfit__layer_time_s(layer));
    lc->logits_cb_s += n * (x.cb + logits_cb + layer->cb_s);
    lc->logits_mb_s += n * (x.mb + logits_mb + layer->mb_s);
    lc->head_tp_s = n * layer->tp_s;
    lc->head_ep_s = n * layer->ep_s;
    lc->head_cp_s = n * layer->cp_s;
    lc->head_other_s = n * (layer->overhead_s + layer->host_s);
    lc->head_host_s = n * layer->host_s;
    /* each module's logits, its layer's activations, its projection's 2h input (bf16) */
    lc->logits_bytes += n * (lc->logits_bytes + layer->act_bytes + 2.0 * 2.0 * own * h);
}

/* b - a, field by field, into d. */
static void moe_delta_of(const cfit__layer_cost *a, const cfit__layer_cost *b, cfit__moe_delta *d)
{
    d->fwd_s = b->fwd_s - a->fwd_s;
    d->bwd_s = b->bwd_s - a->bwd_s;
    d->wgrad_s = b->wgrad_s - a->wgrad_s;
    d->cb_s = b->cb_s - a->cb_s;
    d->mb_s = b->mb_s - a->mb_s;
    d->tp_s = b->tp_s - a->tp_s;
    d->ep_s = b->ep_s - a->ep_s;
    d->act_bytes = b->act_bytes - a->act_bytes;
    d->act_off_bytes = b->act_off_bytes - a->act_off_bytes;
    d->host_pass_s = b->host_pass_s - a->host_pass_s;
}

/* The mean layer's cost, and for a model mixing dense and MoE layers what an MoE layer adds over
 * a dense one (the layer costed as all dense and as all MoE: every term is linear in the MoE
 * share but the host wait, which cfit__layer_cost_mixed recomputes).  The search is
 * single-threaded; the share is set back before returning. */
void cfit__layer_cost_compute(const cfit__ctx *ctx, int tp, int cp, int mbs, int recompute,
                              int sp, int ep, int etp, cfit__layer_cost *lc)
{
    layer_cost_at(ctx, tp, cp, mbs, recompute, sp, ep, etp, lc);
    if (!ctx->moe_prefix) {
        if (ctx->mtp) {
            cfit__layer_cost layer = *lc;   /* every layer alike: an MTP layer is the mean one */
            mtp_head(ctx, &layer, lc);
        }
        return;
    }
    cfit__ctx *c = (cfit__ctx *)ctx;
    double share = c->moe_frac;
    cfit__layer_cost dense, moe;
    c->moe_frac = 0.0;
    layer_cost_at(c, tp, cp, mbs, recompute, sp, ep, etp, &dense);
    c->moe_frac = 1.0;
    layer_cost_at(c, tp, cp, mbs, recompute, sp, ep, etp, &moe);
    c->moe_frac = share;
    moe_delta_of(&dense, &moe, &lc->moe_delta);
    if (ctx->mtp)   /* an MTP layer is of the last layer's kind */
        mtp_head(ctx, cfit_model_mtp_moe(ctx->m) ? &moe : &dense, lc);
}

/* Parameters held by one GPU of a stage with n layers, first/last flags, but for the routed
 * experts (stage_expert_params): attention, norms, dense and shared MLPs, router, embeddings. */
static double stage_params(const cfit__ctx *ctx, int n, int first, int last, int tp)
{
    double p = n * (ctx->layer_params - ctx->expert_layer_params);
    if (first)
        p += ctx->emb_params;
    if (last && (!ctx->m->tied_embeddings || !first))
        p += ctx->emb_params + ctx->m->hidden_size;
    if (last && ctx->mtp)   /* the MTP modules, and the embedding they read (Megatron builds it there) */
        p += ctx->mtp_params + (!first && !ctx->m->tied_embeddings ? ctx->emb_params : 0.0);
    return p / tp;
}

/* Layers per stage: the last stage carries the logits, so it takes a short stage when
 * the layers do not divide evenly; the first takes a long one. */
static void stage_layers(int L, int p, int *n_first, int *n_last, int *n_min, int *n_max)
{
    *n_max = (L + p - 1) / p;
    *n_min = L / p;
    *n_first = p == 1 ? L : *n_max;
    *n_last = p == 1 ? L : (L % p ? *n_min : *n_max);
}

/* Routed-expert parameters one GPU of a stage of n layers holds: sharded over EP x ETP. */
static double stage_expert_params(const cfit__ctx *ctx, int n, const cfit_layout *l)
{
    int ep = l->ep > 1 ? l->ep : 1, etp = l->etp > 1 ? l->etp : 1;
    return n * ctx->expert_layer_params / ((double)ep * etp);
}

/* Expert data parallel size (Megatron-Core parallel folding): the tp x cp x dp ranks of a stage
 * over EP x ETP. */
static double expert_dp(const cfit_layout *l)
{
    int ep = l->ep > 1 ? l->ep : 1, etp = l->etp > 1 ? l->etp : 1;
    double edp = (double)l->tp * l->cp * l->dp / ((double)ep * etp);
    return edp >= 1.0 ? edp : 1.0;
}

typedef cfit__stage_mem stage_mem;

/* Which ends of the model a device holds under the layout's schedule (docs/model.md §5.8): the
 * V shapes put the last chunk on the first device and turn in the middle on the last one;
 * DualPipe's end devices hold both end stages. */
static void device_ends(const cfit_layout *l, const cfit_schedule_terms *st, int *first, int *last)
{
    if (!st->ends_together)
        return;
    if (cfit_layout_schedule(l) == CFIT_SCHED_DUALPIPE || *first)
        *first = *last = 1;
    else
        *last = 0;
}

/* MoE layers of a stage beyond the mean layer's share of its n_params layers (n_moe of its layers
 * are MoE, -1 = the mean share): what its parameters move by (stages.c). */
static double extra_moe_layers(const cfit__ctx *ctx, int n_params, int n_moe, int copies)
{
    return n_moe >= 0 && ctx->moe_prefix ? (double)n_moe * copies - ctx->moe_frac * n_params : 0.0;
}

/* One device's memory: n_layers of layer cost lc (n_moe of them MoE; -1 = the mean layer's share),
 * first/last stage flags, the schedule's terms st. */
static void stage_memory(const cfit__ctx *ctx, const cfit__layer_cost *lc, const cfit_layout *l,
                         const cfit_schedule_terms *st, int n_layers, int n_moe, int first, int last, stage_mem *sm)
{
    double inflight = first ? st->inflight_first : st->inflight_last;
    device_ends(l, st, &first, &last);
    int n_params = n_layers * st->param_copies;              /* DualPipe: two stages' parameters */
    double mix = extra_moe_layers(ctx, n_params, n_moe, st->param_copies);
    double params = stage_params(ctx, n_params, first, last, l->tp) + mix * ctx->moe_mlp_delta_params / l->tp;
    double dp = l->dp;
    sm->w = 2.0 * params * (l->zero >= 3 ? 1.0 / dp : 1.0);
    if (ctx->prec == CFIT_PREC_FP8)
        sm->w += 1.0 * params;                                     /* fp8 weight copies */
    sm->gr = ctx->grad_bytes * params * (l->zero >= 2 ? 1.0 / dp : 1.0);
    sm->opt = 12.0 * params * (l->zero >= 1 ? 1.0 / dp : 1.0);    /* fp32 master, Adam m, v */
    if (ctx->moe) {   /* routed experts: over EP x ETP, their ZeRO shards over the expert-DP ranks */
        double e_params = stage_expert_params(ctx, n_params, l), e_dp = expert_dp(l);
        e_params += (mix * ctx->moe_layer_expert_params + (last ? ctx->mtp_expert_params : 0.0)) /
                    ((double)(l->ep > 1 ? l->ep : 1) * (l->etp > 1 ? l->etp : 1));
        sm->w += 2.0 * e_params * (l->zero >= 3 ? 1.0 / e_dp : 1.0) + (ctx->prec == CFIT_PREC_FP8 ? e_params : 0.0);
        sm->gr += ctx->grad_bytes * e_params * (l->zero >= 2 ? 1.0 / e_dp : 1.0);
        sm->opt += 12.0 * e_params * (l->zero >= 1 ? 1.0 / e_dp : 1.0);
    }
    if (ctx->host.frozen)   /* LoRA / QLoRA: frozen base weights, trained adapters (finetune.c) */
        cfit__finetune_stage_memory(ctx, n_params, params, ctx->moe ? stage_expert_params(ctx, n_params, l) : 0.0,
                                    ctx->moe ? expert_dp(l) : 1.0, l, sm);
    /* micro-batches in flight (schedule.c): 1F1B keeps up to pp on the first stage; interleaving
     * multiplies by 1 + (p-1)/(p v); the other schedules their own */
    sm->act = lc->act_bytes * n_layers * inflight + lc->work_bytes;
    if (last)
        sm->act += lc->logits_bytes;
    sm->host = sm->nvme = 0.0;
    if (ctx->host.offload || ctx->off_modules)   /* what moves to host memory (offload.c) */
        cfit__offload_stage_memory(ctx, lc, l, n_layers, inflight, sm);
    double other = 0.0;
    if (l->zero >= 3) {                                            /* parameters gathered at once */
        /* a layer's dense part over TP, and only the rank's own routed experts (over EP x ETP):
         * the experts' ZeRO shards are gathered over the expert-DP ranks, not the whole layer */
        double live = (ctx->layer_params - ctx->expert_layer_params) / l->tp + stage_expert_params(ctx, 1, l);
        double cap = ctx->fw->zero3_max_live_params;
        double b = ctx->host.frozen ? ctx->host.linear_weight_bytes : 2.0;   /* QLoRA gathers NF4 */
        other += b * (cap > 0 && cap < live ? cap : live);
    }
    double sum = sm->w + sm->gr + sm->opt + sm->act + other;
    sm->other = other + ctx->g->cal.reserved_bytes + ctx->g->cal.fragmentation * sum;
    sm->total = sm->w + sm->gr + sm->opt + sm->act + sm->other;
}

/* Exposed data-parallel communication of one step (docs/model.md §5.9): gradients (and
 * parameters when sharded: at ZeRO-3 the gather_bytes a GPU's stage holds whole, 2 x params but
 * under LoRA, whose frozen weights are gathered too) of `params` parameters per GPU over the dp
 * ranks of stride tp x cp, each collective on NCCL's model, overlapped with the slower stage's
 * forward (fwd_s) and backward (bwd_s) of one micro-batch when the framework overlaps; job_gpus:
 * the job's GPUs.  *dp_slow: the gradients' factor. */
static double dp_comm_s(const cfit__ctx *ctx, const cfit_layout *l, long job_gpus, double params, double gather_bytes,
                        long m_mb, double fwd_s, double bwd_s, double *dp_slow)
{
    long dp = l->dp;
    int per_group = ranks_per_node(ctx, dp, (long)l->tp * l->cp);   /* DP ranks per link group */
    double grads_bytes = ctx->grad_bytes * params, params_bytes = l->zero >= 3 ? gather_bytes : 2.0 * params;
    double overlap = ctx->fw->dp_overlap ? ctx->overlap : 0.0;
    *dp_slow = dp_factor(ctx, l, job_gpus, per_group, grads_bytes);
    if (dp <= 1)
        return 0.0;
    if (l->zero >= 3) {
        /* per micro-batch: gather params for forward and backward, reduce-scatter grads;
         * a flat gather moves the whole volume through each GPU's own NIC */
        int k = ctx->fw->flat_param_gather ? 1 : per_group;
        double mb_s = 2.0 * coll_s(ctx, CFIT_COLL_ALLGATHER, params_bytes, dp, k,
                                   dp_factor(ctx, l, job_gpus, k, params_bytes)) +
                      coll_s(ctx, CFIT_COLL_REDUCESCATTER, grads_bytes, dp, k, dp_factor(ctx, l, job_gpus, k, grads_bytes));
        double exposed_s = mb_s - overlap * (fwd_s + bwd_s);
        return m_mb * (exposed_s > 0 ? exposed_s : 0.0);
    }
    double rs_s = coll_s(ctx, l->zero >= 1 ? CFIT_COLL_REDUCESCATTER : CFIT_COLL_ALLREDUCE, grads_bytes, dp,
                         per_group, *dp_slow);
    double ag_s = l->zero >= 1 ? coll_s(ctx, CFIT_COLL_ALLGATHER, params_bytes, dp, per_group,
                                        dp_factor(ctx, l, job_gpus, per_group, params_bytes)) : 0.0;
    double ex_rs_s = rs_s - overlap * bwd_s, ex_ag_s = ag_s - overlap * fwd_s;
    return (ex_rs_s > 0 ? ex_rs_s : 0.0) + (ex_ag_s > 0 ? ex_ag_s : 0.0);
}

/* An MoE layout's data-parallel communication: the dense parameters' (params[0], gathered
 * gather_bytes[0] at ZeRO-3) over DP as for a dense model, the routed experts' (params[1],
 * gather_bytes[1]) over the expert-DP ranks (stride ep x etp), each overlapped with its share of
 * the compute window (by parameters). */
static double moe_dp_comm_s(const cfit__ctx *ctx, const cfit_layout *l, long job_gpus, const double *params,
                            const double *gather_bytes, long m_mb, double fwd_s, double bwd_s, double *dp_slow)
{
    double e_params = params[1], share = params[0] / (params[0] + e_params);
    double total_s = dp_comm_s(ctx, l, job_gpus, params[0], gather_bytes[0], m_mb, share * fwd_s, share * bwd_s, dp_slow);
    cfit_layout le = *l;
    le.tp = (l->ep > 1 ? l->ep : 1) * (l->etp > 1 ? l->etp : 1);
    le.cp = 1;
    le.dp = (int)expert_dp(l);
    double slow_e = 1.0;
    total_s += dp_comm_s(ctx, &le, job_gpus, e_params, gather_bytes[1], m_mb, (1.0 - share) * fwd_s,
                         (1.0 - share) * bwd_s, &slow_e);
    *dp_slow = slow_e > *dp_slow ? slow_e : *dp_slow;
    return total_s;
}

/* Hardware FLOPs per token with recompute mode rec, memoised in ctx (it walks every layer). */
static double hw_flops(const cfit__ctx *cctx, int rec)
{
    cfit__ctx *ctx = (cfit__ctx *)cctx;   /* the memo is the only state a const ctx changes */
    rec = rec >= 0 && rec < CFIT_RECOMPUTE_COUNT ? rec : 0;
    if (!(ctx->hw_have & (1u << rec))) {
        ctx->hw_flops[rec] = cfit_model_hw_flops_per_token(ctx->m, ctx->seq, (cfit_recompute)rec, ctx->rec_modules) +
                             ctx->host.flops_delta;
        ctx->hw_have |= 1u << rec;
    }
    return ctx->hw_flops[rec];
}

/* ---- a whole layout: memory first (the search's fit test), then the step time ----
 *
 * cfit__plan_memory fills a cfit__plan_eval with the layout's stages (the split of its layers and
 * each stage's mean layer, stages.c), schedule terms and the worst device's memory;
 * cfit__plan_finish runs the time model on it: the pipeline's pace (stage_pace, pipeline_sends),
 * the data-parallel step (dp_step), the optimizer (optimizer_step), then the plan's figures
 * (plan_breakdown, plan_rates).  The search finishes only the layouts it keeps (search.c
 * consider): one that does not fit is ranked by its memory shortfall alone. */

/* The layout's job size, default stages and schedule terms (what memory and time both need). */
static void eval_layout(const cfit__ctx *ctx, const cfit_layout *l, cfit__plan_eval *e)
{
    e->ctx = ctx;
    e->layout = *l;
    e->gpus = (long)l->tp * l->cp * l->pp * l->dp;
    e->m_mb = ctx->gbs / ((long)l->mbs * l->dp);
    stage_layers(ctx->m->layers, l->pp, &e->n_first, &e->n_last, &e->n_min, &e->n_max);
    e->n_mid = 0;
    e->moe_first = e->moe_mid = e->moe_last = -1;
    e->lcm = NULL;
    e->sched = cfit_layout_schedule(l);
    cfit_schedule_terms_of(e->sched, l->pp, l->vp, e->m_mb, &e->st);
}

/* The split of e's layers over its stages (stages.c), chosen on layer cost lc: balanced for a
 * model mixing dense and MoE layers where Megatron can run it, else the default (balanced 0). */
static void layout_split(cfit__plan_eval *e, const cfit__layer_cost *lc)
{
    memset(&e->split, 0, sizeof e->split);
    if (!cfit__split_balanced(e->ctx) || e->layout.pp < 2)
        return;
    cfit__split_choose(e->ctx, lc, e->layout.pp, e->layout.vp, e->st.ends_together, &e->split);
}

/* A balanced split's stage layer counts and MoE layers into e (the default's stand). */
static void split_counts(cfit__plan_eval *e)
{
    const cfit__split *sp = &e->split;
    if (!sp->balanced)
        return;
    int p = e->layout.pp;
    e->n_first = sp->first, e->n_last = sp->last;
    e->moe_first = sp->moe_first, e->moe_last = sp->moe_last, e->moe_mid = sp->moe_mid;
    e->n_mid = p > 2 ? sp->mid : 0;
    int hi = sp->first > sp->last ? sp->first : sp->last, lo = sp->first < sp->last ? sp->first : sp->last;
    if (p > 2) {
        hi = sp->mid > hi ? sp->mid : hi;
        lo = sp->mid < lo ? sp->mid : lo;
    }
    e->n_max = hi;
    e->n_min = lo;
}

/* A stage of n layers, moe of them MoE: its mean layer from lc at its own share. */
static void stage_layer(const cfit__ctx *ctx, const cfit__layer_cost *lc, int n, int moe, cfit__layer_cost *out)
{
    cfit__layer_cost_mixed(ctx, lc, n > 0 ? (double)moe / n : ctx->moe_frac, out);
}

/* Each stage's mean layer: the first stage's from lcf, the last's from lcl, each moved to its
 * own MoE share under a balanced split (the middle one's from lcf). */
static void split_layers(cfit__plan_eval *e, const cfit__layer_cost *lcf, const cfit__layer_cost *lcl)
{
    e->lcf = lcf;
    e->lcl = lcl;
    if (!e->split.balanced)
        return;
    const cfit__split *sp = &e->split;
    stage_layer(e->ctx, lcf, sp->first, sp->moe_first, &e->stage[0]);
    e->lcf = &e->stage[0];
    if (e->layout.pp > 2) {
        stage_layer(e->ctx, lcf, sp->mid, sp->moe_mid, &e->stage[1]);
        e->lcm = &e->stage[1];
    }
    stage_layer(e->ctx, lcl, sp->last, sp->moe_last, &e->stage[2]);
    e->lcl = &e->stage[2];
}

/* The worst device's memory (first, last or a middle stage) and whether the layout fits the GPU
 * (and, with offload, the node's host memory and NVMe array). */
static void plan_memory(cfit__plan_eval *e)
{
    const cfit__ctx *ctx = e->ctx;
    const cfit_layout *l = &e->layout;
    int p = l->pp;
    stage_mem first, last = {0}, mid = {0};
    stage_memory(ctx, e->lcf, l, &e->st, e->n_first, e->moe_first, 1, p == 1, &first);
    const stage_mem *worst = &first;
    if (p > 1) {
        stage_memory(ctx, e->lcl, l, &e->st, e->n_last, e->moe_last, 0, 1, &last);
        if (last.total > first.total)
            worst = &last;
    }
    if (e->n_mid > 0) {   /* at the first stage's in-flight count: the second holds one fewer (a bound) */
        cfit_schedule_terms sm = e->st;
        sm.inflight_last = e->st.inflight_first;
        stage_memory(ctx, e->lcm, l, &sm, e->n_mid, e->moe_mid, 0, 0, &mid);
        if (mid.total > worst->total)
            worst = &mid;
    }
    cfit_memory *mem = &e->mem;
    memset(mem, 0, sizeof *mem);
    mem->weights_bytes = worst->w;
    mem->grads_bytes = worst->gr;
    mem->optimizer_bytes = worst->opt;
    mem->activations_bytes = worst->act;
    mem->other_bytes = worst->other;
    mem->total_bytes = worst->total;
    mem->capacity_bytes = ctx->g->memory_bytes;
    e->fits = worst->total <= ctx->g->memory_bytes;
    if (ctx->host.offload || ctx->off_modules) {   /* the offloaded state must fit the node's host memory too */
        mem->host_bytes = p > 1 && last.host > first.host ? last.host : first.host;
        if (e->n_mid > 0 && mid.host > mem->host_bytes)
            mem->host_bytes = mid.host;
        mem->host_capacity_bytes = cfit__host_capacity_bytes(ctx, e->gpus);
        e->fits = e->fits && mem->host_bytes <= mem->host_capacity_bytes;
    }
    if (ctx->host.offload & CFIT_OFFLOAD_NVME) {   /* and what goes on to NVMe its array */
        mem->nvme_bytes = p > 1 && last.nvme > first.nvme ? last.nvme : first.nvme;
        mem->nvme_capacity_bytes = cfit__nvme_capacity_bytes(ctx, e->gpus);
        e->fits = e->fits && mem->nvme_bytes <= mem->nvme_capacity_bytes;
    }
}

/* The pipeline's pace: one micro-batch through each stage, which stage sets it, and the sends
 * and the bubble around it. */
typedef struct pipe_pace {
    double stage_s, fast_s;       /* the slowest stage's and the fastest stage's */
    const cfit__layer_cost *lc;   /* the mean layer of the stage that sets the pace */
    int n_slow;                   /* its layers */
    double logits_share;          /* 1 when the pacing device runs the logits, else 0 */
    double pp_s, pp_slow;         /* point-to-point sends of one micro-batch; their simulated factor */
    double mb_s;                  /* one micro-batch on the pacing device: stage_s + pp_s */
    double bubble_s;              /* the schedule's bubble per step */
} pipe_pace;

/* The default split's pace (stage_layers): the first stage's layers lcf, the last's lcl. */
static void default_pace(const cfit__plan_eval *e, pipe_pace *pc)
{
    int p = e->layout.pp;
    int together = e->st.ends_together;
    double layer_first_s = cfit__layer_time_s(e->lcf), layer_last_s = cfit__layer_time_s(e->lcl);
    /* the logits run on the last stage, or on the first device where it holds the last chunk */
    double first_s = e->n_first * layer_first_s + (p == 1 || together ? e->lcf->logits_s : 0.0);
    double last_s = e->n_last * layer_last_s + (together ? 0.0 : e->lcl->logits_s);
    pc->stage_s = first_s > last_s ? first_s : last_s;
    pc->fast_s = p == 1 ? pc->stage_s : (e->n_min * layer_first_s);
    if (p > 1 && last_s < pc->fast_s)
        pc->fast_s = last_s;
    int slow_is_last = p > 1 && last_s >= first_s;
    pc->n_slow = slow_is_last ? e->n_last : e->n_first;
    pc->lc = slow_is_last ? e->lcl : e->lcf;
    pc->logits_share = (slow_is_last != together || p == 1) ? 1.0 : 0.0;
}

/* One stage of a balanced split, n layers of mean layer lc (logits: it runs them): the slowest
 * and fastest so far updated. */
static void stage_put(const cfit__layer_cost *lc, int n, int logits, pipe_pace *pc)
{
    double t = n * cfit__layer_time_s(lc) + (logits ? lc->logits_s : 0.0);
    if (!pc->lc || t > pc->stage_s) {
        pc->stage_s = t;
        pc->n_slow = n;
        pc->lc = lc;
        pc->logits_share = logits ? 1.0 : 0.0;
    }
    pc->fast_s = pc->fast_s < 0 || t < pc->fast_s ? t : pc->fast_s;
}

static void stage_pace(const cfit__plan_eval *e, pipe_pace *pc)
{
    if (!e->split.balanced) {
        default_pace(e, pc);
        return;
    }
    pc->lc = NULL;   /* a balanced split (the logits on the last device): first, middle, last */
    pc->stage_s = 0.0;
    pc->fast_s = -1.0;
    stage_put(e->lcf, e->split.first, 0, pc);
    if (e->layout.pp > 2)
        stage_put(e->lcm, e->split.mid, 0, pc);
    stage_put(e->lcl, e->split.last, 1, pc);
}
/* Pipeline point-to-point: activations forward, gradients backward, per chunk; then the
 * micro-batch's time and the schedule's bubble. */
static void pipeline_sends(const cfit__plan_eval *e, pipe_pace *pc)
{
    const cfit__ctx *ctx = e->ctx;
    const cfit_layout *l = &e->layout;
    pc->pp_s = 0.0;
    pc->pp_slow = 1.0;
    if (l->pp > 1) {
        long stride = (long)l->tp * l->cp * l->dp;   /* ranks between a GPU and its next stage's */
        int intra = stride < ctx->link_group;
        if (!intra)   /* every GPU of a stage sends at once: the simulator's send-recv */
            pc->pp_slow = topo_factor(ctx, (e->gpus + ctx->gpn - 1) / ctx->gpn, ctx->gpn, stride, 0,
                                      pc->lc->pp_msg_bytes);
        pc->pp_s = 2.0 * e->st.sends * cfit__comm_p2p_s(ctx, pc->lc->pp_msg_bytes, intra, pc->pp_slow);
    }
    pc->mb_s = pc->stage_s + pc->pp_s;
    pc->bubble_s = cfit_schedule_bubble_s(e->sched, l->pp, l->vp, pc->mb_s, pc->n_slow * pc->lc->bwd_s,
                                          pc->n_slow * pc->lc->wgrad_s);
}

/* The data-parallel step: gradients (and parameters when sharded) over the DP group. */
typedef struct dp_terms {
    double exposed_s;      /* communication not hidden behind the pacing stage's compute */
    double slow;           /* the gradients' simulated factor */
    double opt_params;     /* parameters one GPU's optimizer updates */
    double shard_bytes;    /* the parameter shard parameter offload moves */
} dp_terms;

static void dp_step(const cfit__plan_eval *e, const pipe_pace *pc, dp_terms *dt)
{
    const cfit__ctx *ctx = e->ctx;
    const cfit_layout *l = &e->layout;
    int n_held = e->n_max * e->st.param_copies;   /* layers whose parameters a device holds */
    /* [0] the dense parameters, [1] the routed experts' */
    double params[2] = {stage_params(ctx, n_held, l->pp == 1, 1, l->tp),
                        ctx->moe ? stage_expert_params(ctx, n_held, l) +
                                       ctx->mtp_expert_params / ((double)(l->ep > 1 ? l->ep : 1) * (l->etp > 1 ? l->etp : 1))
                                 : 0.0};
    double gather_bytes[2] = {2.0 * params[0], 2.0 * params[1]}, e_dp = ctx->moe ? expert_dp(l) : 1.0;
    if (ctx->host.frozen) {   /* only the adapters have gradients and optimizer states (finetune.c) */
        cfit__finetune_weight_bytes(ctx, n_held, params[0], params[1], l, &gather_bytes[0], &gather_bytes[1]);
        params[0] = cfit__finetune_trainable(ctx, n_held, l->tp);
        params[1] = ctx->moe ? cfit__finetune_expert_trainable(ctx, n_held, l) : 0.0;
    }
    dt->shard_bytes = gather_bytes[0] / (l->zero >= 3 ? (double)l->dp : 1.0) + gather_bytes[1] / (l->zero >= 3 ? e_dp : 1.0);
    double fwd_s = pc->n_slow * pc->lc->fwd_s, bwd_s = pc->n_slow * pc->lc->bwd_s;
    dt->slow = 1.0;
    dt->exposed_s = ctx->moe ? moe_dp_comm_s(ctx, l, e->gpus, params, gather_bytes, e->m_mb, fwd_s, bwd_s, &dt->slow)
                             : dp_comm_s(ctx, l, e->gpus, params[0], gather_bytes[0], e->m_mb, fwd_s, bwd_s, &dt->slow);
    dt->opt_params = params[0] / (l->zero >= 1 ? (double)l->dp : 1.0) + params[1] / (l->zero >= 1 ? e_dp : 1.0);
}

/* The optimizer step on the GPU (fp32 master, m, v read + written, fp32 grad read, bf16 weight
 * written: 32 bytes a parameter) into *opt_s; returns the offload's exposed seconds (offload.c
 * may move the step to the CPU and zero *opt_s). */
static double optimizer_step(const cfit__plan_eval *e, const pipe_pace *pc, const dp_terms *dt, double *opt_s)
{
    const cfit__ctx *ctx = e->ctx;
    *opt_s = dt->opt_params * 32.0 / ctx->mem_bw;
    if (!ctx->host.offload && !ctx->off_modules)
        return 0.0;
    return cfit__offload_step_s(ctx, pc->lc, e->gpus, pc->n_slow, e->m_mb, dt->opt_params, dt->shard_bytes, opt_s);
}

/* The step's breakdown, the bound parts and the layout's shape into out. */
static void plan_breakdown(const cfit__plan_eval *e, const pipe_pace *pc, const dp_terms *dt, cfit_plan *out)
{
    const cfit__layer_cost *lc = pc->lc;
    long m_mb = e->m_mb;
    double nl = (double)pc->n_slow, logits = pc->logits_share;
    double head_comm = lc->head_tp_s + lc->head_ep_s + lc->head_cp_s + lc->head_other_s;   /* MTP layers */
    out->br.compute_s = m_mb * (nl * (lc->fwd_s + lc->bwd_s) + logits * (lc->logits_s - head_comm));
    out->br.tp_comm_s = m_mb * (nl * lc->tp_s + logits * lc->head_tp_s);
    out->br.ep_comm_s = m_mb * (nl * lc->ep_s + logits * lc->head_ep_s);
    out->br.cp_comm_s = m_mb * (nl * lc->cp_s + logits * lc->head_cp_s);
    out->br.pp_comm_s = m_mb * pc->pp_s;
    out->br.pp_bubble_s = pc->bubble_s;
    out->br.dp_comm_s = dt->exposed_s;
    out->br.other_s = m_mb * (nl * (lc->overhead_s + lc->host_s) + logits * lc->head_other_s);
    out->br.host_wait_s = m_mb * (nl * lc->host_s + logits * lc->head_host_s);
    out->compute_bound_s = m_mb * (nl * lc->cb_s + logits * lc->logits_cb_s);
    out->memory_bound_s = m_mb * (nl * lc->mb_s + logits * lc->logits_mb_s) + out->br.optimizer_s;
    out->comm_exposed_s = out->br.tp_comm_s + out->br.cp_comm_s + out->br.pp_comm_s + dt->exposed_s + out->br.ep_comm_s;
    out->recompute_layers = e->recompute_layers;
    out->stage_layers_min = e->layout.pp == 1 ? e->ctx->m->layers : e->n_min;
    out->stage_layers_max = e->n_max;
    out->stage_layers_first = e->split.balanced ? e->split.first : 0;
    out->stage_layers_last = e->split.balanced ? e->split.last : 0;
    out->stage_imbalance = pc->stage_s > 0 ? (pc->stage_s - pc->fast_s) / pc->stage_s : 0.0;
    /* the factors applied: DP's gradient reduction, TP's, PP's, CP's */
    double slow = dt->slow > lc->tp_slow ? dt->slow : lc->tp_slow;
    slow = slow > pc->pp_slow ? slow : pc->pp_slow;
    out->fabric_slowdown = slow > lc->cp_slow ? slow : lc->cp_slow;
    out->slowdown_dp = dt->slow;
    out->slowdown_tp = lc->tp_slow;
    out->slowdown_pp = pc->pp_slow;
    out->slowdown_cp = lc->cp_slow;
}

/* Throughput, FLOP rates and time to train from out->step_time_s. */
static void plan_rates(const cfit__plan_eval *e, cfit_plan *out)
{
    const cfit__ctx *ctx = e->ctx;
    const cfit_layout *l = &e->layout;
    double tokens_per_step = (double)ctx->gbs * ctx->seq;
    out->tokens_per_s = tokens_per_step / out->step_time_s;
    out->tokens_per_s_per_gpu = out->tokens_per_s / e->gpus;
    double model_flops = ctx->model_flops, hw_flops_per_token = hw_flops(ctx, l->recompute);
    if (l->recompute == CFIT_RECOMPUTE_BLOCK) {   /* only the recomputed share reruns */
        double share = (double)e->recompute_layers * l->pp / ctx->m->layers;
        hw_flops_per_token = model_flops + (share < 1.0 ? share : 1.0) * (hw_flops_per_token - model_flops);
    }
    out->model_tflops_per_gpu = out->tokens_per_s_per_gpu * model_flops / 1e12;
    out->hardware_tflops_per_gpu = out->tokens_per_s_per_gpu * hw_flops_per_token / 1e12;
    out->mfu = out->model_tflops_per_gpu * 1e12 / ctx->peak;
    out->hfu = out->hardware_tflops_per_gpu * 1e12 / ctx->peak;
    out->time_to_train_s = ctx->req->tokens > 0 ? ctx->req->tokens / out->tokens_per_s : 0.0;
}

void cfit__plan_finish(const cfit__plan_eval *e, cfit_plan *out)
{
    const cfit__ctx *ctx = e->ctx;
    pipe_pace pc;
    dp_terms dt;
    stage_pace(e, &pc);
    pipeline_sends(e, &pc);
    dp_step(e, &pc, &dt);
    memset(out, 0, sizeof *out);
    double offload_s = optimizer_step(e, &pc, &dt, &out->br.optimizer_s);
    out->br.offload_s = offload_s;
    out->step_time_s = e->m_mb * pc.mb_s + pc.bubble_s + dt.exposed_s + out->br.optimizer_s + offload_s;
    out->gpu = ctx->g;
    out->node = ctx->node;
    out->fabric = ctx->out;
    out->gpus = e->gpus;
    out->nodes = (e->gpus + ctx->gpn - 1) / ctx->gpn;
    out->layout = e->layout;
    out->offload = ctx->host.offload;
    out->offload_modules = (int)ctx->off_modules;
    out->layout.schedule = e->layout.pp > 1 ? (int)e->sched : CFIT_SCHED_DEFAULT;   /* the family resolved by vp */
    out->global_batch = ctx->gbs;
    out->grad_accum = e->m_mb;
    out->fits = e->fits;
    out->mem = e->mem;
    plan_breakdown(e, &pc, &dt, out);
    plan_rates(e, out);
}


void cfit__plan_memory(const cfit__ctx *ctx, const cfit__layer_cost *lc, const cfit_layout *l, cfit__plan_eval *e)
{
    eval_layout(ctx, l, e);
    layout_split(e, lc);
    split_counts(e);
    split_layers(e, lc, lc);
    e->recompute_layers = l->recompute == CFIT_RECOMPUTE_FULL ? e->n_max : 0;
    plan_memory(e);
}

/* The average layer of a stage of n layers whose first k are recomputed in full (cost
 * full) and the rest are not (cost none). */
static void blend(const cfit__layer_cost *none, const cfit__layer_cost *full, int k, int n,
                  cfit__layer_cost *out)
{
    double f = n > 0 ? (double)(k < n ? k : n) / n : 0.0;
    *out = *none;
    out->recompute = CFIT_RECOMPUTE_BLOCK;
    out->bwd_s += f * (full->bwd_s - none->bwd_s);
    out->cb_s += f * (full->cb_s - none->cb_s);
    out->mb_s += f * (full->mb_s - none->mb_s);
    out->tp_s += f * (full->tp_s - none->tp_s);
    out->cp_s += f * (full->cp_s - none->cp_s);
    out->host_s += f * (full->host_s - none->host_s);
    out->host_pass_s += f * (full->host_pass_s - none->host_pass_s);
    out->ep_s += f * (full->ep_s - none->ep_s);
    out->act_bytes += f * (full->act_bytes - none->act_bytes);
    out->act_off_bytes += f * (full->act_off_bytes - none->act_off_bytes);
    out->work_bytes = k > 0 ? full->work_bytes : none->work_bytes;
    /* the MoE delta blends alike */
    out->moe_delta.bwd_s += f * (full->moe_delta.bwd_s - none->moe_delta.bwd_s);
    out->moe_delta.cb_s += f * (full->moe_delta.cb_s - none->moe_delta.cb_s);
    out->moe_delta.mb_s += f * (full->moe_delta.mb_s - none->moe_delta.mb_s);
    out->moe_delta.tp_s += f * (full->moe_delta.tp_s - none->moe_delta.tp_s);
    out->moe_delta.ep_s += f * (full->moe_delta.ep_s - none->moe_delta.ep_s);
    out->moe_delta.act_bytes += f * (full->moe_delta.act_bytes - none->moe_delta.act_bytes);
    out->moe_delta.act_off_bytes += f * (full->moe_delta.act_off_bytes - none->moe_delta.act_off_bytes);
}

/* One stage whose memory is checked: n layers (n_moe MoE, -1 = the mean share), which end it is;
 * a middle stage is taken at the first stage's in-flight count. */
typedef struct stage_spec {
    int n, n_moe, first, last, middle;
} stage_spec;

/* The stages e's split checks for memory: first, last (p > 1) and a middle one (a balanced
 * split, p > 2); returns how many. */
static int split_specs(const cfit__plan_eval *e, stage_spec spec[3])
{
    int p = e->layout.pp;
    spec[0] = (stage_spec){e->n_first, e->moe_first, 1, p == 1, 0};
    spec[1] = (stage_spec){e->n_last, e->moe_last, 0, 1, 0};
    spec[2] = (stage_spec){e->split.mid, e->moe_mid, 0, 0, 1};
    return p == 1 ? 1 : e->split.balanced && p > 2 ? 3 : 2;
}

/* Stage memory with k of its layers recomputed, under e's layout and schedule terms. */
static double stage_total_bytes(const cfit__plan_eval *e, const cfit__layer_cost *none, const cfit__layer_cost *full,
                                int k, const stage_spec *sg)
{
    cfit__layer_cost b;
    stage_mem sm;
    blend(none, full, k, sg->n, &b);
    cfit_schedule_terms st = e->st;
    if (sg->middle)
        st.inflight_last = st.inflight_first;
    if (sg->n_moe >= 0)   /* the stage's own MoE share */
        stage_layer(e->ctx, &b, sg->n, sg->n_moe, &b);
    stage_memory(e->ctx, &b, &e->layout, &st, sg->n, sg->n_moe, sg->first, sg->last, &sm);
    return sm.total;
}

/* The fewest layers k (0..n) of a stage to recompute so that it fits; memory falls
 * linearly in k from k = 1 on, so two evaluations locate it.  n when even all do not. */
static int layers_to_fit(const cfit__plan_eval *e, const cfit__layer_cost *none, const cfit__layer_cost *full,
                         const stage_spec *sg)
{
    double cap = e->ctx->g->memory_bytes;
    int n = sg->n;
    if (stage_total_bytes(e, none, full, 0, sg) <= cap)
        return 0;
    double m1 = stage_total_bytes(e, none, full, 1, sg);
    if (m1 <= cap || n <= 1)
        return 1 < n ? 1 : n;
    double mn = stage_total_bytes(e, none, full, n, sg);
    if (mn > cap || m1 <= mn)
        return n;
    int k = 1 + (int)ceil((m1 - cap) / ((m1 - mn) / (n - 1)) - 1e-9);
    return k < n ? k : n;
}

int cfit__plan_memory_block(const cfit__ctx *ctx, const cfit__layer_cost *none, const cfit__layer_cost *full,
                            const cfit_layout *l, cfit__plan_eval *e)
{
    eval_layout(ctx, l, e);
    layout_split(e, none);
    split_counts(e);
    stage_spec spec[3];
    int ns = split_specs(e, spec), k = 0;
    for (int i = 0; i < ns; i++) {
        int ki = layers_to_fit(e, none, full, &spec[i]);
        k = ki > k ? ki : k;
    }
    blend(none, full, k, spec[0].n, &e->blend[0]);
    blend(none, full, k, spec[ns > 1 ? 1 : 0].n, &e->blend[1]);
    split_layers(e, &e->blend[0], &e->blend[1]);
    e->recompute_layers = k;
    plan_memory(e);
    return k;
}
