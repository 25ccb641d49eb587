/* workload.c - parameter and FLOP counts of a decoder-only transformer (docs/model.md §1). */
#include "clusterfit/workload.h"
#include "core/names.h"

const char *cfit_recompute_name(cfit_recompute r)
{
    static const char *const names[] = {"none", "selective", "full", "block", "experts", "modules"};
    return (unsigned)r < CFIT_RECOMPUTE_COUNT ? names[r] : "?";
}

static const char *const module_names[CFIT_RECMOD_COUNT] = {
    "core_attn", "moe_act", "layernorm", "mla_up_proj", "mlp", "moe", "shared_experts",
};

const char *cfit_recompute_module_name(int i)
{
    return i >= 0 && i < CFIT_RECMOD_COUNT ? module_names[i] : "?";
}

int cfit_recompute_modules_parse(const char *list, unsigned *mask, size_t *bad_at)
{
    return cfit__name_list_mask(list, module_names, CFIT_RECMOD_COUNT, mask, bad_at);
}

char *cfit_recompute_modules_str(unsigned mask, char *buf, size_t n)
{
    return cfit__name_list_str(mask, module_names, CFIT_RECMOD_COUNT, buf, n);
}

unsigned cfit_recompute_mask(cfit_recompute r, unsigned modules)
{
    switch (r) {
    case CFIT_RECOMPUTE_SELECTIVE: return CFIT_RECMOD_CORE_ATTN;
    case CFIT_RECOMPUTE_EXPERTS: return CFIT_RECMOD_MOE;
    case CFIT_RECOMPUTE_MODULES: return modules;
    default: return 0;
    }
}

const char *cfit_precision_name(cfit_precision p)
{
    static const char *const names[] = {"bf16", "fp8"};
    return (unsigned)p < CFIT_PREC_COUNT ? names[p] : "?";
}

int cfit_model_head_dim(const cfit_model *m)
{
    return m->head_dim > 0 ? m->head_dim : m->hidden_size / m->num_heads;
}

int cfit_model_is_moe(const cfit_model *m)
{
    return m->num_experts > 0;
}

int cfit_model_is_mla(const cfit_model *m)
{
    return m->kv_lora_rank > 0;
}

int cfit_model_layer_is_moe(const cfit_model *m, int layer)
{
    int step = m->moe_layer_step > 0 ? m->moe_layer_step : 1;
    if (!cfit_model_is_moe(m) || layer < m->first_dense_layers || (layer + 1) % step != 0)
        return 0;
    for (int i = 0; i < m->dense_layers.n; i++)
        if (m->dense_layers.layer[i] == layer)
            return 0;
    return 1;
}

/* O(dense list) rather than O(layers): the planner asks for it per layout costed. */
int cfit_model_moe_layers(const cfit_model *m)
{
    if (!cfit_model_is_moe(m) || m->layers <= m->first_dense_layers)
        return 0;
    int step = m->moe_layer_step > 0 ? m->moe_layer_step : 1, first = m->first_dense_layers > 0 ? m->first_dense_layers : 0;
    int n = m->layers / step - first / step;   /* layers i in [first, layers) with (i + 1) % step == 0 */
    for (int i = 0; i < m->dense_layers.n; i++) {
        int l = m->dense_layers.layer[i], dup = 0;
        for (int j = 0; j < i && !dup; j++)
            dup = m->dense_layers.layer[j] == l;
        n -= !dup && l >= first && l < m->layers && (l + 1) % step == 0;
    }
    return n;
}

/* Widths of one token's query-key and value per head: nope + rope and v_head_dim under MLA. */
static double qk_head_dim(const cfit_model *m)
{
    return cfit_model_is_mla(m) ? m->qk_nope_head_dim + m->qk_rope_head_dim : cfit_model_head_dim(m);
}

static double v_head_dim(const cfit_model *m)
{
    return cfit_model_is_mla(m) ? m->v_head_dim : cfit_model_head_dim(m);
}

/* MLA (DeepSeek-V3 report, arXiv:2412.19437, §2.1.1): q down/up (or a plain q), the joint KV
 * down projection with the decoupled rope key, K/V up, output from heads x v_head_dim. */
static double mla_params(const cfit_model *m)
{
    double h = m->hidden_size, a = m->num_heads, qk = qk_head_dim(m), v = v_head_dim(m);
    double q = m->q_lora_rank > 0 ? h * m->q_lora_rank + (double)m->q_lora_rank * a * qk : h * a * qk;
    double kv = h * (m->kv_lora_rank + m->qk_rope_head_dim) + (double)m->kv_lora_rank * a * (m->qk_nope_head_dim + v);
    return q + kv + a * v * h;
}

double cfit_model_attn_params(const cfit_model *m)
{
    if (cfit_model_is_mla(m))
        return mla_params(m);
    double h = m->hidden_size, d = cfit_model_head_dim(m);
    double q = (double)m->num_heads * d, kv = (double)m->num_kv_heads * d;
    return h * q + 2.0 * h * kv + q * h;                    /* Q, K, V, output */
}

static double mlp_factor(const cfit_model *m)
{
    return m->mlp == CFIT_MLP_SWIGLU ? 3.0 : 2.0;
}

double cfit_model_dense_mlp_params(const cfit_model *m)
{
    return mlp_factor(m) * m->hidden_size * m->ffn_hidden_size;
}

/* One MoE layer's MLP: routed experts (all, or the top-k a token uses), shared experts, router
 * (hidden x experts) and Qwen2-MoE's shared-expert gate. */
double cfit_model_moe_mlp_params(const cfit_model *m, int active)
{
    double h = m->hidden_size, routed = active ? m->experts_per_token : m->num_experts;
    double experts = mlp_factor(m) * h * (routed * m->moe_ffn_hidden_size + m->shared_ffn_hidden_size);
    return experts + h * m->num_experts + (m->shared_expert_gate ? h : 0.0);
}

/* Norm weights of one layer: the two pre-norms, and MLA's norms on the q and kv latents. */
static double layer_norm_params(const cfit_model *m)
{
    double mla = cfit_model_is_mla(m) ? (double)m->q_lora_rank + m->kv_lora_rank : 0.0;
    return 2.0 * m->hidden_size + mla;
}

/* GEMM weights of all layers; active: only what one token's forward pass multiplies by. */
static double layers_matmul_params(const cfit_model *m, int active)
{
    int moe = cfit_model_moe_layers(m), dense = m->layers - moe;
    return m->layers * cfit_model_attn_params(m) + dense * cfit_model_dense_mlp_params(m) +
           (moe ? moe * cfit_model_moe_mlp_params(m, active) : 0.0);
}

double cfit_model_layer_matmul_params(const cfit_model *m)
{
    return layers_matmul_params(m, 0) / m->layers;
}

double cfit_model_layer_params(const cfit_model *m)
{
    return cfit_model_layer_matmul_params(m) + layer_norm_params(m);
}

double cfit_model_embedding_params(const cfit_model *m)
{
    return (double)m->vocab_size * m->hidden_size;
}

int cfit_model_mtp_moe(const cfit_model *m)
{
    return m->mtp_layers > 0 && cfit_model_layer_is_moe(m, m->layers - 1);
}

/* One MTP module's GEMM weights (DeepSeek-V3 report §2.2, Megatron-Core
 * MultiTokenPredictionLayer): eh_proj (2h -> h) and a transformer layer of the last layer's kind;
 * active: the experts one token multiplies by. */
static double mtp_matmul_params(const cfit_model *m, int active)
{
    double h = m->hidden_size;
    double mlp = cfit_model_mtp_moe(m) ? cfit_model_moe_mlp_params(m, active) : cfit_model_dense_mlp_params(m);
    return 2.0 * h * h + cfit_model_attn_params(m) + mlp;
}

double cfit_model_mtp_params(const cfit_model *m, int active)
{
    if (m->mtp_layers <= 0)
        return 0.0;
    /* enorm, hnorm and the module's final norm beside the layer's own; embedding and head shared */
    return m->mtp_layers * (mtp_matmul_params(m, active) + layer_norm_params(m) + 3.0 * m->hidden_size);
}

static double params(const cfit_model *m, int active)
{
    double emb = cfit_model_embedding_params(m) * (m->tied_embeddings ? 1.0 : 2.0);
    return layers_matmul_params(m, active) + m->layers * layer_norm_params(m) + emb + m->hidden_size +
           cfit_model_mtp_params(m, active);
}

double cfit_model_params(const cfit_model *m)
{
    return params(m, 0);
}

double cfit_model_active_params(const cfit_model *m)
{
    return params(m, 1);
}

/* One layer's score FLOPs per token and key it attends to: QK^T over qk_head_dim and A.V over
 * v_head_dim for every head. */
static double score_flops_per_key(const cfit_model *m)
{
    return 2.0 * m->num_heads * (qk_head_dim(m) + v_head_dim(m));
}

/* Score FLOPs of all layers per token, the full s x s matrix; sliding-window layers see at most
 * the window. */
static double attn_score_flops(const cfit_model *m, int seq)
{
    double per_key = score_flops_per_key(m);
    double local = m->sliding_window > 0 && m->sliding_window < seq ? m->sliding_window : seq;
    return per_key * ((double)(m->layers - m->sliding_layers) * seq + (double)m->sliding_layers * local);
}

/* Forward FLOPs per token: GEMMs (active experts and router only), attention scores, logits; each
 * MTP module its projection, its layer (full attention) and its own logits (Megatron-Core's
 * num_floating_point_operations counts them so: megatron/training/training.py). */
static double fwd_flops_per_token(const cfit_model *m, int seq)
{
    double gemm = 2.0 * layers_matmul_params(m, 1);
    double logits = 2.0 * m->hidden_size * m->vocab_size;
    double mtp = m->mtp_layers * (2.0 * mtp_matmul_params(m, 1) + score_flops_per_key(m) * seq + logits);
    return gemm + attn_score_flops(m, seq) + logits + mtp;
}

double cfit_model_flops_per_token(const cfit_model *m, int seq)
{
    return 3.0 * fwd_flops_per_token(m, seq);
}

double cfit_model_hw_flops_per_token(const cfit_model *m, int seq, cfit_recompute r, unsigned modules)
{
    if (r == CFIT_RECOMPUTE_FULL || r == CFIT_RECOMPUTE_BLOCK)   /* every layer's forward again, not the logits */
        return cfit_model_flops_per_token(m, seq) + fwd_flops_per_token(m, seq) -
               2.0 * (double)m->hidden_size * m->vocab_size * (1 + m->mtp_layers);
    modules = cfit_recompute_mask(r, modules);
    double extra = 0, h = m->hidden_size;
    /* an MTP module's layer recomputes its modules as a layer of its kind does */
    int mtp_moe = cfit_model_mtp_moe(m) ? m->mtp_layers : 0;
    int moe = (cfit_model_is_moe(m) ? cfit_model_moe_layers(m) : 0) + mtp_moe;
    int layers = m->layers + m->mtp_layers, dense = layers - moe;
    if (modules & CFIT_RECMOD_CORE_ATTN)
        extra += attn_score_flops(m, seq) + m->mtp_layers * score_flops_per_key(m) * seq;
    if (modules & CFIT_RECMOD_MLP)
        extra += 2.0 * dense * cfit_model_dense_mlp_params(m);
    if (moe && (modules & CFIT_RECMOD_MOE))            /* the MoE layer: router, experts, shared */
        extra += 2.0 * moe * cfit_model_moe_mlp_params(m, 1);
    else if (moe && (modules & CFIT_RECMOD_SHARED_EXPERTS))
        extra += 2.0 * moe * mlp_factor(m) * h * m->shared_ffn_hidden_size;
    if (cfit_model_is_mla(m) && (modules & CFIT_RECMOD_MLA_UP_PROJ)) {   /* q up, k/v up */
        double a = m->num_heads, q_up = m->q_lora_rank > 0 ? (double)m->q_lora_rank * a * qk_head_dim(m) : 0.0;
        extra += 2.0 * layers * (q_up + (double)m->kv_lora_rank * a * (m->qk_nope_head_dim + v_head_dim(m)));
    }
    return cfit_model_flops_per_token(m, seq) + extra;
}

const char *cfit_model_unplanned_feature(const cfit_model *m, int seq)
{
    (void)m;
    (void)seq;
    return NULL;   /* MoE, MLA, head_dim and sliding windows are costed (docs/model.md §3.7, §5.12) */
}

static int bad(cfit_diag *d, const cfit_model *m, const char *what)
{
    return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0, "model '%s': %s", m->name, what);
}

/* The router's groups and expert bias (Megatron-Core TransformerConfig.__post_init__: the groups
 * divide the experts, group top-k at most the groups; expert bias only with sigmoid scores). */
static int validate_router(const cfit_model *m, cfit_diag *d)
{
    int g = m->router_groups, gk = m->router_group_topk;
    if (gk > 0 && g < 1)
        return bad(d, m, "router_group_topk needs router_groups");
    if (g > 0 && (m->num_experts % g || gk < 1 || gk > g))
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                             "model '%s': router_groups %d must divide num_experts %d, and router_group_topk %d "
                             "must be between 1 and router_groups", m->name, g, m->num_experts, gk);
    if (g > 0 && m->experts_per_token > gk * (m->num_experts / g))
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                             "model '%s': experts_per_token %d exceeds the %d experts of router_group_topk %d groups",
                             m->name, m->experts_per_token, gk * (m->num_experts / g), gk);
    if (m->router_expert_bias && !m->router_sigmoid)
        return bad(d, m, "router_expert_bias (aux-loss-free balancing) needs router_score \"sigmoid\"");
    if (m->router_bias_update_rate > 0 && !m->router_expert_bias)
        return bad(d, m, "router_bias_update_rate needs router_expert_bias");
    return CFIT_EOK;
}

static int validate_moe(const cfit_model *m, cfit_diag *d)
{
    if (!cfit_model_is_moe(m)) {
        if (m->experts_per_token || m->moe_ffn_hidden_size || m->shared_ffn_hidden_size || m->shared_expert_gate ||
            m->router_groups || m->router_group_topk || m->router_expert_bias || m->router_topk_scaling_factor > 0)
            return bad(d, m, "experts_per_token, moe_ffn_hidden_size, shared experts and router keys need num_experts");
        return CFIT_EOK;
    }
    if (m->experts_per_token < 1 || m->experts_per_token > m->num_experts)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                             "model '%s': experts_per_token (top-k) %d must be between 1 and num_experts %d",
                             m->name, m->experts_per_token, m->num_experts);
    if (m->moe_ffn_hidden_size < 1)
        return bad(d, m, "an MoE model needs moe_ffn_hidden_size (the routed experts' width)");
    if (m->first_dense_layers > m->layers || m->moe_layer_step > m->layers)
        return bad(d, m, "first_dense_layers and moe_layer_step must not exceed layers");
    for (int i = 0; i < m->dense_layers.n; i++)
        if (m->dense_layers.layer[i] < 0 || m->dense_layers.layer[i] >= m->layers)
            return cfit_diag_set(d, CFIT_ERANGE, NULL, 0, 0, "model '%s': dense layer %d is not between 0 and %d",
                                 m->name, m->dense_layers.layer[i], m->layers - 1);
    if (cfit_model_moe_layers(m) == 0)
        return bad(d, m, "num_experts is set but no layer is an MoE layer");
    return validate_router(m, d);
}

static int validate_attention(const cfit_model *m, cfit_diag *d)
{
    if (cfit_model_is_mla(m)) {
        if (m->qk_nope_head_dim < 1 || m->qk_rope_head_dim < 1 || m->v_head_dim < 1)
            return bad(d, m, "MLA (kv_lora_rank) needs qk_nope_head_dim, qk_rope_head_dim and v_head_dim");
    } else if (m->q_lora_rank || m->qk_nope_head_dim || m->qk_rope_head_dim || m->v_head_dim) {
        return bad(d, m, "q_lora_rank and the qk/v head dims are MLA keys and need kv_lora_rank");
    }
    if (m->head_dim == 0 && !cfit_model_is_mla(m) && m->hidden_size % m->num_heads != 0)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                             "model '%s': num_heads %d does not divide hidden_size %d (give head_dim)",
                             m->name, m->num_heads, m->hidden_size);
    if (m->num_heads % m->num_kv_heads != 0)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                             "model '%s': num_kv_heads %d does not divide num_heads %d",
                             m->name, m->num_kv_heads, m->num_heads);
    if (m->sliding_layers > m->layers || (m->sliding_layers > 0) != (m->sliding_window > 0))
        return bad(d, m, "sliding_window and sliding_layers go together, sliding_layers at most layers");
    if (m->mtp_layers < 0 || m->mtp_layers > CFIT_MTP_LAYERS_MAX)
        return cfit_diag_set(d, CFIT_ERANGE, NULL, 0, 0, "model '%s': mtp_layers must be between 0 and %d, got %d",
                             m->name, CFIT_MTP_LAYERS_MAX, m->mtp_layers);
    return CFIT_EOK;
}

int cfit_model_validate(const cfit_model *m, cfit_diag *d)
{
    static const int max_dim = 1 << 24;
    struct { const char *name; int v; } f[] = {
        {"layers", m->layers}, {"hidden_size", m->hidden_size},
        {"ffn_hidden_size", m->ffn_hidden_size}, {"num_heads", m->num_heads},
        {"num_kv_heads", m->num_kv_heads}, {"vocab_size", m->vocab_size}, {"seq_len", m->seq_len},
    };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        if (f[i].v < 1 || f[i].v > max_dim)
            return cfit_diag_set(d, CFIT_ERANGE, NULL, 0, 0,
                                 "model '%s': %s must be between 1 and %d, got %d",
                                 m->name, f[i].name, max_dim, f[i].v);
    int rc = validate_attention(m, d);
    return rc ? rc : validate_moe(m, d);
}
