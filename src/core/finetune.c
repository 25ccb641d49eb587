/* finetune.c - LoRA and QLoRA fine-tuning (docs/model.md §10.4-§10.6): frozen base weights,
 * trained low-rank adapters, the backward without weight gradients.
 *
 * LoRA (Hu et al., "LoRA: Low-Rank Adaptation of Large Language Models", arXiv 2106.09685) adds
 * to a frozen projection W (d_out x d_in) a trained B A with A r x d_in and B d_out x r.  QLoRA
 * (Dettmers et al., arXiv 2305.14314) stores the frozen W in 4-bit NormalFloat with double
 * quantization, dequantizes it to bf16 for every GEMM, and pages the optimizer states; following
 * QLoRA §4 ("LoRA on all linear transformer block layers are required to match full finetuning
 * performance"), adapters go on Q, K, V, the output projection and every MLP projection.  In an
 * MoE layer they go on each routed expert's gate, up and down projections and the shared
 * experts', not on the router: PEFT's target modules for Mixtral (q_proj, k_proj, v_proj, o_proj
 * and the experts' w1, w2, w3; huggingface.co/docs/peft, the "all-linear" target excluding the
 * router gate), as the QLoRA rule asks of every linear block layer.
 */
#include "core/perf.h"
#include "clusterfit/offload.h"
#include "clusterfit/workload.h"

static const char *const ft_names[CFIT_FINETUNE_COUNT] = {"none", "full", "lora", "qlora"};

const char *cfit_finetune_name(cfit_finetune f)
{
    return f >= 0 && f < CFIT_FINETUNE_COUNT ? ft_names[f] : "?";
}

int cfit_finetune_frozen(cfit_finetune f)
{
    return f == CFIT_FINETUNE_LORA || f == CFIT_FINETUNE_QLORA;
}

/* The adapted projections of a layer: input and output widths, and whether TP splits the output
 * (column parallel: Q, K, V, gate, up) or the input (row parallel: output projection, down). */
typedef struct proj { double in, out; int col; } proj;

/* An MLP's projections of hidden h and width f (gate, up, down; fc1, fc2 without a gate). */
static int mlp_projs(const cfit_model *m, double f, proj *p)
{
    double h = m->hidden_size;
    int n = 0;
    p[n++] = (proj){h, f, 1};
    if (m->mlp == CFIT_MLP_SWIGLU)
        p[n++] = (proj){h, f, 1};
    p[n++] = (proj){f, h, 0};
    return n;
}

static int attn_projs(const cfit_model *m, proj *p)
{
    double h = m->hidden_size, d = cfit_model_head_dim(m);
    double q = m->num_heads * d, kv = m->num_kv_heads * d;
    p[0] = (proj){h, q, 1};
    p[1] = (proj){h, kv, 1};
    p[2] = (proj){h, kv, 1};
    p[3] = (proj){q, h, 0};
    return 4;
}

/* Adapter parameters r x sum (d_in + d_out) of n projections. */
static double adapters_of(const proj *p, int n, int rank)
{
    double s = 0.0;
    for (int i = 0; i < n; i++)
        s += p[i].in + p[i].out;
    return (double)rank * s;
}

/* Share of the layers whose MLP is an MoE block (0 for a dense model). */
static double moe_share(const cfit_model *m)
{
    return cfit_model_is_moe(m) ? (double)cfit_model_moe_layers(m) / m->layers : 0.0;
}

/* One routed expert's adapters (its gate, up and down). */
static double expert_adapters(const cfit_model *m, int rank)
{
    proj p[3];
    return adapters_of(p, mlp_projs(m, m->moe_ffn_hidden_size, p), rank);
}

/* The mean layer's adapters that EP does not shard (attention, dense MLPs, shared experts). */
static double dense_adapters(const cfit_model *m, int rank)
{
    proj p[8];
    double f = moe_share(m), a = adapters_of(p, attn_projs(m, p), rank);
    a += (1.0 - f) * adapters_of(p, mlp_projs(m, m->ffn_hidden_size, p), rank);
    if (f > 0 && m->shared_ffn_hidden_size > 0)
        a += f * adapters_of(p, mlp_projs(m, m->shared_ffn_hidden_size, p), rank);
    return a;
}

double cfit_lora_expert_layer_params(const cfit_model *m, int rank)
{
    return moe_share(m) * m->num_experts * expert_adapters(m, rank);
}

double cfit_lora_layer_params(const cfit_model *m, int rank)
{
    return dense_adapters(m, rank) + cfit_lora_expert_layer_params(m, rank);
}

/* The adapters one token's forward multiplies by in the mean layer: its top-k experts'. */
static double active_adapters(const cfit_model *m, int rank)
{
    return dense_adapters(m, rank) + moe_share(m) * m->experts_per_token * expert_adapters(m, rank);
}

double cfit_nf4_bytes_per_param(void)
{
    /* QLoRA §3: 4-bit NF4 in blocks of 64 with one fp32 absmax each (32/64 = 0.5 bit/param);
     * double quantization stores those as 8-bit floats in blocks of 256 with one fp32 constant
     * each: 8/64 + 32/(64 x 256) = 0.127 bit/param */
    return (4.0 + 8.0 / 64.0 + 32.0 / (64.0 * 256.0)) / 8.0;
}

double cfit_finetune_flops_per_token(const cfit_model *m, int seq, cfit_finetune f, int rank)
{
    double full = cfit_model_flops_per_token(m, seq);
    if (!cfit_finetune_frozen(f))
        return full;
    /* frozen weights: the backward's weight-gradient GEMMs (2 FLOPs per weight a token meets) go;
     * the adapters a token meets run forward (2 per adapter weight), activation and weight gradients (4) */
    int moe = cfit_model_is_moe(m) ? cfit_model_moe_layers(m) : 0;
    double gemm = m->layers * cfit_model_attn_params(m) + (m->layers - moe) * cfit_model_dense_mlp_params(m) +
                  (moe ? moe * cfit_model_moe_mlp_params(m, 1) : 0.0);
    double weights = gemm + (double)m->hidden_size * m->vocab_size;
    return full - 2.0 * weights + 6.0 * m->layers * active_adapters(m, rank);
}

double cfit_finetune_trainable_params(const cfit_plan_request *r)
{
    const cfit_model *m = r->model;
    if (!cfit_finetune_frozen((cfit_finetune)r->finetune))
        return cfit_model_params(m);
    return m->layers * cfit_lora_layer_params(m, r->lora_rank > 0 ? r->lora_rank : CFIT_LORA_RANK_DEFAULT);
}

int cfit_finetune_check(const cfit_model *m, cfit_finetune f, cfit_diag *d)
{
    if (!cfit_finetune_frozen(f))
        return CFIT_EOK;
    if (cfit_model_is_mla(m))
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                             "--finetune %s is modelled for Q, K, V and output attention projections (dense or MoE "
                             "MLPs); '%s' has MLA attention (latent down/up projections)", cfit_finetune_name(f), m->name);
    return CFIT_EOK;
}

void cfit__finetune_init(cfit__ctx *ctx)
{
    cfit__host *h = &ctx->host;
    const cfit_plan_request *r = ctx->req;
    h->finetune = r->finetune;
    h->frozen = cfit_finetune_frozen((cfit_finetune)r->finetune);
    if (!h->frozen)
        return;
    h->rank = r->lora_rank > 0 ? r->lora_rank : CFIT_LORA_RANK_DEFAULT;
    h->adapter_layer_params = cfit_lora_layer_params(ctx->m, h->rank);
    h->expert_adapter_layer_params = cfit_lora_expert_layer_params(ctx->m, h->rank);
    h->linear_layer_params = cfit_model_layer_matmul_params(ctx->m) - ctx->expert_layer_params;
    h->linear_weight_bytes = r->finetune == CFIT_FINETUNE_QLORA ? cfit_nf4_bytes_per_param() : 2.0;
    double ft = cfit_finetune_flops_per_token(ctx->m, ctx->seq, (cfit_finetune)r->finetune, h->rank);
    h->flops_delta = ft - ctx->model_flops;
    ctx->model_flops = ft;
}

/* The adapter GEMMs of n projections on M tokens, x A^T then (x A^T) B^T, TP (or ETP) t splitting
 * A's input or B's output, added to a scaled by share (the layers that have them). */
static void adapter_gemms(const cfit__ctx *ctx, const proj *p, int n, double M, int t, double share, cfit__acc *a)
{
    cfit__acc g = {0, 0, 0};
    for (int i = 0; i < n; i++) {
        cfit__gemm(ctx, M, ctx->host.rank, p[i].col ? p[i].in : p[i].in / t, 1.0, &g);
        cfit__gemm(ctx, M, p[i].col ? p[i].out / t : p[i].out, ctx->host.rank, 1.0, &g);
    }
    a->t += share * g.t, a->cb += share * g.cb, a->mb += share * g.mb;
}

void cfit__finetune_forward(const cfit__ctx *ctx, double tokens, int tp, int ep, int etp, cfit__acc *fwd,
                            cfit__acc *frozen)
{
    const cfit__host *h = &ctx->host;
    const cfit_model *m = ctx->m;
    proj p[8];
    double f = moe_share(m);
    adapter_gemms(ctx, p, attn_projs(m, p), tokens, tp, 1.0, fwd);
    adapter_gemms(ctx, p, mlp_projs(m, m->ffn_hidden_size, p), tokens, tp, 1.0 - f, fwd);
    if (f > 0 && m->shared_ffn_hidden_size > 0)
        adapter_gemms(ctx, p, mlp_projs(m, m->shared_ffn_hidden_size, p), tokens, tp, f, fwd);
    if (f > 0)   /* a GPU's experts see its tokens' top-k copies (EP balances them over the ranks) */
        adapter_gemms(ctx, p, mlp_projs(m, m->moe_ffn_hidden_size, p), tokens * m->experts_per_token * ctx->imbalance,
                      etp, f, fwd);
    if (h->finetune == CFIT_FINETUNE_QLORA) {
        /* bitsandbytes dequantizes NF4 to bf16 before each GEMM: read 4-bit + constants, write bf16
         * (the GEMM's own read of it is in gemm()); the backward dequantizes once more, not twice;
         * a GPU's routed experts are sharded over EP x ETP */
        cfit__acc dq = {0, 0, 0};
        double w = h->linear_layer_params / tp + ctx->expert_layer_params / ((double)ep * etp);
        cfit__membound(ctx, (h->linear_weight_bytes + 2.0) * w, &dq);
        fwd->t += dq.t, fwd->mb += dq.mb;
        frozen->t += dq.t, frozen->mb += dq.mb;
    }
}

double cfit__finetune_act_bytes(const cfit__ctx *ctx, double tokens, int recompute)
{
    const cfit__host *h = &ctx->host;
    if (!h->frozen || recompute == CFIT_RECOMPUTE_FULL)
        return 0.0;
    /* each adapter keeps x A^T (r wide, bf16) for B's gradient; x itself is already stored; an
     * MoE layer's token passes its top-k experts' (and the shared experts') adapters */
    const cfit_model *m = ctx->m;
    proj p[8];
    double f = moe_share(m), mlp = mlp_projs(m, m->ffn_hidden_size, p);
    double projs = attn_projs(m, p) + (1.0 - f) * mlp + f * m->experts_per_token * mlp +
                   (f > 0 && m->shared_ffn_hidden_size > 0 ? f * mlp : 0.0);
    return 2.0 * tokens * h->rank * projs;
}

void cfit__finetune_weight_bytes(const cfit__ctx *ctx, int n, double P, double Pe, const cfit_layout *l,
                                 double *dense_bytes, double *expert_bytes)
{
    const cfit__host *h = &ctx->host;
    double lin = n * h->linear_layer_params / l->tp, rest = P > lin ? P - lin : 0.0;
    double b = h->linear_weight_bytes;
    /* the projections frozen in b bytes, embeddings and norms in bf16, the adapters in bf16 */
    *dense_bytes = b * lin + 2.0 * rest + 2.0 * cfit__finetune_trainable(ctx, n, l->tp);
    *expert_bytes = b * Pe + 2.0 * cfit__finetune_expert_trainable(ctx, n, l);
    if (ctx->prec == CFIT_PREC_FP8) {   /* fp8 weight copies */
        *dense_bytes += lin;
        *expert_bytes += Pe;
    }
}

void cfit__finetune_stage_memory(const cfit__ctx *ctx, int n, double P, double Pe, double de, const cfit_layout *l,
                                 cfit__stage_mem *sm)
{
    double wd, we, d = l->dp;
    cfit__finetune_weight_bytes(ctx, n, P, Pe, l, &wd, &we);
    double A = cfit__finetune_trainable(ctx, n, l->tp), Ae = cfit__finetune_expert_trainable(ctx, n, l);
    /* ZeRO-3 (FSDP) shards the frozen weights as well (PEFT with DeepSpeed ZeRO-3 / FSDP, QLoRA
     * included: huggingface.co/docs/peft/accelerate/deepspeed and .../fsdp) */
    sm->w = wd / (l->zero >= 3 ? d : 1.0) + we / (l->zero >= 3 ? de : 1.0);
    sm->gr = ctx->grad_bytes * (A / (l->zero >= 2 ? d : 1.0) + Ae / (l->zero >= 2 ? de : 1.0));
    sm->opt = 12.0 * (A / (l->zero >= 1 ? d : 1.0) + Ae / (l->zero >= 1 ? de : 1.0));
}

double cfit__finetune_trainable(const cfit__ctx *ctx, int n, int tp)
{
    const cfit__host *h = &ctx->host;
    return n * (h->adapter_layer_params - h->expert_adapter_layer_params) / tp;
}

double cfit__finetune_expert_trainable(const cfit__ctx *ctx, int n, const cfit_layout *l)
{
    int ep = l->ep > 1 ? l->ep : 1, etp = l->etp > 1 ? l->etp : 1;
    return n * ctx->host.expert_adapter_layer_params / ((double)ep * etp);
}
