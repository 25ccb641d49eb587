/* finetune.c - LoRA and QLoRA fine-tuning (docs/model.md §10.4-§10.6): frozen base weights,
 * trained low-rank adapters, the backward without weight gradients.
 *
 * LoRA (Hu et al., "LoRA: Low-Rank Adaptation of Large Language Models", arXiv 2106.09685) adds
 * to a frozen projection W (d_out x d_in) a trained B A with A r x d_in and B d_out x r.  QLoRA
 * (Dettmers et al., arXiv 2305.14314) stores the frozen W in 4-bit NormalFloat with double
 * quantization, dequantizes it to bf16 for every GEMM, and pages the optimizer states; following
 * QLoRA §4 ("LoRA on all linear transformer block layers are required to match full finetuning
 * performance"), adapters go on Q, K, V, the output projection and every MLP projection.
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

static int layer_projs(const cfit_model *m, proj *p)
{
    double h = m->hidden_size, d = cfit_model_head_dim(m), f = m->ffn_hidden_size;
    double q = m->num_heads * d, kv = m->num_kv_heads * d;
    int n = 0;
    p[n++] = (proj){h, q, 1};
    p[n++] = (proj){h, kv, 1};
    p[n++] = (proj){h, kv, 1};
    p[n++] = (proj){q, h, 0};
    p[n++] = (proj){h, f, 1};
    if (m->mlp == CFIT_MLP_SWIGLU)
        p[n++] = (proj){h, f, 1};
    p[n++] = (proj){f, h, 0};
    return n;
}

double cfit_lora_layer_params(const cfit_model *m, int rank)
{
    proj p[8];
    int n = layer_projs(m, p);
    double s = 0.0;
    for (int i = 0; i < n; i++)
        s += p[i].in + p[i].out;
    return (double)rank * s;
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
    /* frozen weights: the backward's weight-gradient GEMMs (2 FLOPs per weight per token) go;
     * the adapters run forward (2 per adapter weight), activation and weight gradients (4) */
    double weights = m->layers * cfit_model_layer_matmul_params(m) + (double)m->hidden_size * m->vocab_size;
    return full - 2.0 * weights + 6.0 * m->layers * cfit_lora_layer_params(m, rank);
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
    if (cfit_model_is_moe(m) || cfit_model_is_mla(m))
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                             "--finetune %s is modelled for dense attention and MLP projections; '%s' has %s",
                             cfit_finetune_name(f), m->name, cfit_model_is_moe(m) ? "experts (MoE)" : "MLA attention");
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
    h->linear_layer_params = cfit_model_layer_matmul_params(ctx->m);
    h->linear_weight_bytes = r->finetune == CFIT_FINETUNE_QLORA ? cfit_nf4_bytes_per_param() : 2.0;
    double ft = cfit_finetune_flops_per_token(ctx->m, ctx->seq, (cfit_finetune)r->finetune, h->rank);
    h->flops_delta = ft - ctx->model_flops;
    ctx->model_flops = ft;
}

void cfit__finetune_forward(const cfit__ctx *ctx, double tokens, int tp, cfit__acc *fwd, cfit__acc *frozen)
{
    const cfit__host *h = &ctx->host;
    proj p[8];
    int n = layer_projs(ctx->m, p);
    for (int i = 0; i < n; i++) {   /* x A^T, then (x A^T) B^T; TP splits A's input or B's output */
        cfit__gemm(ctx, tokens, h->rank, p[i].col ? p[i].in : p[i].in / tp, 1.0, fwd);
        cfit__gemm(ctx, tokens, p[i].col ? p[i].out / tp : p[i].out, h->rank, 1.0, fwd);
    }
    if (h->finetune == CFIT_FINETUNE_QLORA) {
        /* bitsandbytes dequantizes NF4 to bf16 before each GEMM: read 4-bit + constants, write bf16
         * (the GEMM's own read of it is in gemm()); the backward dequantizes once more, not twice */
        cfit__acc dq = {0, 0, 0};
        cfit__membound(ctx, (h->linear_weight_bytes + 2.0) * h->linear_layer_params / tp, &dq);
        fwd->t += dq.t, fwd->mb += dq.mb;
        frozen->t += dq.t, frozen->mb += dq.mb;
    }
}

double cfit__finetune_act_bytes(const cfit__ctx *ctx, double tokens, int recompute)
{
    const cfit__host *h = &ctx->host;
    if (!h->frozen || recompute == CFIT_RECOMPUTE_FULL)
        return 0.0;
    /* each adapter keeps x A^T (r wide, bf16) for B's gradient; x itself is already stored */
    proj p[8];
    return 2.0 * tokens * h->rank * layer_projs(ctx->m, p);
}

void cfit__finetune_stage_memory(const cfit__ctx *ctx, int n, double P, const cfit_layout *l, cfit__stage_mem *sm)
{
    const cfit__host *h = &ctx->host;
    double lin = n * h->linear_layer_params / l->tp, rest = P > lin ? P - lin : 0.0;
    double A = cfit__finetune_trainable(ctx, n, l->tp), d = l->dp;
    sm->w = h->linear_weight_bytes * lin + 2.0 * rest + 2.0 * A;   /* embeddings and norms stay bf16 */
    if (ctx->prec == CFIT_PREC_FP8)
        sm->w += lin;                                              /* fp8 weight copies */
    sm->gr = ctx->grad_bytes * A * (l->zero >= 2 ? 1.0 / d : 1.0);
    sm->opt = 12.0 * A * (l->zero >= 1 ? 1.0 / d : 1.0);
}

double cfit__finetune_trainable(const cfit__ctx *ctx, int n, int tp)
{
    return n * ctx->host.adapter_layer_params / tp;
}
