/* workload.c - parameter and FLOP counts of a decoder-only transformer (docs/model.md §1). */
#include "clusterfit/workload.h"

#include <string.h>

const char *cfit_recompute_name(cfit_recompute r)
{
    static const char *const names[] = {"none", "selective", "full", "block"};
    return (unsigned)r < CFIT_RECOMPUTE_COUNT ? names[r] : "?";
}

const char *cfit_precision_name(cfit_precision p)
{
    static const char *const names[] = {"bf16", "fp8"};
    return (unsigned)p < CFIT_PREC_COUNT ? names[p] : "?";
}

double cfit_model_layer_matmul_params(const cfit_model *m)
{
    double h = m->hidden_size, f = m->ffn_hidden_size;
    double kv = (double)m->num_kv_heads * (h / m->num_heads);
    double attn = h * h + 2.0 * h * kv + h * h;            /* Q, K, V, output */
    double mlp = (m->mlp == CFIT_MLP_SWIGLU ? 3.0 : 2.0) * h * f;
    return attn + mlp;
}

double cfit_model_layer_params(const cfit_model *m)
{
    return cfit_model_layer_matmul_params(m) + 2.0 * m->hidden_size;   /* two norms */
}

double cfit_model_embedding_params(const cfit_model *m)
{
    return (double)m->vocab_size * m->hidden_size;
}

double cfit_model_params(const cfit_model *m)
{
    double emb = cfit_model_embedding_params(m) * (m->tied_embeddings ? 1.0 : 2.0);
    return m->layers * cfit_model_layer_params(m) + emb + m->hidden_size;
}

/* Forward FLOPs per token: GEMMs, full attention scores (QK^T and AV), logits. */
static double fwd_flops_per_token(const cfit_model *m, int seq)
{
    double h = m->hidden_size;
    double gemm = 2.0 * cfit_model_layer_matmul_params(m) * m->layers;
    double attn = 4.0 * (double)seq * h * m->layers;
    double logits = 2.0 * h * m->vocab_size;
    return gemm + attn + logits;
}

double cfit_model_flops_per_token(const cfit_model *m, int seq)
{
    return 3.0 * fwd_flops_per_token(m, seq);
}

double cfit_model_hw_flops_per_token(const cfit_model *m, int seq, cfit_recompute r)
{
    double model = cfit_model_flops_per_token(m, seq);
    if (r == CFIT_RECOMPUTE_FULL || r == CFIT_RECOMPUTE_BLOCK)
        return model + fwd_flops_per_token(m, seq) - 2.0 * (double)m->hidden_size * m->vocab_size;
    if (r == CFIT_RECOMPUTE_SELECTIVE)
        return model + 4.0 * (double)seq * m->hidden_size * m->layers;
    return model;
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
    if (m->hidden_size % m->num_heads != 0)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                             "model '%s': num_heads %d does not divide hidden_size %d",
                             m->name, m->num_heads, m->hidden_size);
    if (m->num_heads % m->num_kv_heads != 0)
        return cfit_diag_set(d, CFIT_EINVALID, NULL, 0, 0,
                             "model '%s': num_kv_heads %d does not divide num_heads %d",
                             m->name, m->num_kv_heads, m->num_heads);
    return CFIT_EOK;
}
