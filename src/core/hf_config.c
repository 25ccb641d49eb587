/* hf_config.c - a Hugging Face config.json as a clusterfit model (include/clusterfit/hf_config.h).
 *
 * Each family maps its own keys, as the transformers configuration and modeling code of that
 * model_type reads them (transformers/models/<type>/configuration_<type>.py and modeling_*.py):
 * which keys are required, their defaults, which layers are MoE.  Every error names the
 * position of the offending value, or of the object a required key is missing from.
 */
#include "clusterfit/hf_config.h"
#include "clusterfit/workload.h"
#include "core/hf_json.h"

#include <stdio.h>
#include <string.h>

typedef struct hf {
    const cfit_json *root;     /* the document */
    const cfit_json *cfg;      /* where the text model's keys are: root, or llama4's text_config */
    const char *file;
    const char *type;           /* the model_type it was recognised as */
    cfit_diag *d;
} hf;

#define HF_MAX_DIM (1 << 24)

/* The member, or NULL when absent or JSON null (transformers treats both as "not set"). */
static const cfit_json *hf_get(const hf *c, const char *key)
{
    const cfit_json *v = cfit_json_get(c->cfg, key);
    return v && v->type != CFIT_JSON_NULL ? v : NULL;
}

static int hf_missing(const hf *c, const char *key)
{
    return cfit_diag_set(c->d, CFIT_EPARSE, c->file, c->cfg->line, c->cfg->col,
                         "config.json (model_type '%s') is missing required key '%s'", c->type, key);
}

/* A whole number in [lo, HF_MAX_DIM]; dflt when absent unless required. */
static int hf_int(const hf *c, const char *key, int required, int lo, int dflt, int *out)
{
    const cfit_json *v = hf_get(c, key);
    if (!v) {
        *out = dflt;
        return required ? hf_missing(c, key) : CFIT_EOK;
    }
    if (v->type != CFIT_JSON_NUMBER)
        return cfit_diag_set(c->d, CFIT_EPARSE, c->file, v->line, v->col, "config.json key '%s' must be a whole number, got %s",
                             key, cfit_json_type_name(v->type));
    if (v->number < lo || v->number > HF_MAX_DIM)
        return cfit_diag_set(c->d, CFIT_ERANGE, c->file, v->line, v->col, "config.json key '%s' must be between %d and %d, got %g",
                             key, lo, HF_MAX_DIM, v->number);
    if (v->number != (double)(int)v->number)
        return cfit_diag_set(c->d, CFIT_EPARSE, c->file, v->line, v->col, "config.json key '%s' must be a whole number, got %g",
                             key, v->number);
    *out = (int)v->number;
    return CFIT_EOK;
}

static int hf_bool(const hf *c, const cfit_json *obj, const char *key, int dflt, int *out)
{
    const cfit_json *v = cfit_json_get(obj, key);
    *out = dflt;
    if (!v || v->type == CFIT_JSON_NULL)
        return CFIT_EOK;
    if (v->type != CFIT_JSON_BOOL)
        return cfit_diag_set(c->d, CFIT_EPARSE, c->file, v->line, v->col, "config.json key '%s' must be true or false, got %s",
                             key, cfit_json_type_name(v->type));
    *out = v->boolean;
    return CFIT_EOK;
}

/* A list of layer numbers below layers (mlp_only_layers, moe_layers). */
static int hf_layers(const hf *c, const char *key, int layers, cfit_layer_list *out, int *given)
{
    const cfit_json *v = hf_get(c, key);
    out->n = 0;
    *given = v != NULL;
    if (!v)
        return CFIT_EOK;
    if (v->type != CFIT_JSON_ARRAY || v->n > CFIT_MODEL_MAX_DENSE_LIST)
        return cfit_diag_set(c->d, CFIT_EPARSE, c->file, v->line, v->col, "config.json key '%s' must be a list of at most %d layer numbers",
                             key, CFIT_MODEL_MAX_DENSE_LIST);
    for (size_t i = 0; i < v->n; i++) {
        const cfit_json *e = v->items[i];
        if (e->type != CFIT_JSON_NUMBER || e->number < 0 || e->number >= layers || e->number != (double)(int)e->number)
            return cfit_diag_set(c->d, CFIT_EPARSE, c->file, e->line, e->col,
                                 "config.json key '%s' must list layer numbers from 0 to %d", key, layers - 1);
        out->layer[out->n++] = (int)e->number;
    }
    return CFIT_EOK;
}

/* An error found after mapping, at the member's position (or its object's). */
static int hf_at(const hf *c, const char *key, int err, const char *msg)
{
    const cfit_json *v = hf_get(c, key);
    const cfit_json *at = v ? v : c->cfg;
    return cfit_diag_set(c->d, err, c->file, at->line, at->col, "%s", msg);
}

/* ---- what every family has ---- */

/* Sliding-window layers from "layer_types" (gpt-oss, newer saves of others): how many are
 * "sliding_attention"; the window is "sliding_window". */
static int hf_layer_types(const hf *c, cfit_model *m)
{
    const cfit_json *v = hf_get(c, "layer_types");
    if (!v)
        return CFIT_EOK;
    if (v->type != CFIT_JSON_ARRAY || v->n != (size_t)m->layers)
        return cfit_diag_set(c->d, CFIT_EPARSE, c->file, v->line, v->col,
                             "config.json key 'layer_types' must list one type for each of the %d layers", m->layers);
    m->sliding_layers = 0;
    for (size_t i = 0; i < v->n; i++) {
        const cfit_json *e = v->items[i];
        if (e->type != CFIT_JSON_STRING)
            return cfit_diag_set(c->d, CFIT_EPARSE, c->file, e->line, e->col, "config.json 'layer_types' entries must be strings");
        m->sliding_layers += strcmp(e->string, "sliding_attention") == 0;
    }
    if (m->sliding_layers == 0)
        return CFIT_EOK;
    return hf_int(c, "sliding_window", 1, 1, 0, &m->sliding_window);
}

static int hf_common(const hf *c, cfit_model *m)
{
    int rc, ctx, head_dim;
    if ((rc = hf_int(c, "num_hidden_layers", 1, 1, 0, &m->layers)) || (rc = hf_int(c, "hidden_size", 1, 1, 0, &m->hidden_size)) ||
        (rc = hf_int(c, "intermediate_size", 1, 1, 0, &m->ffn_hidden_size)) ||
        (rc = hf_int(c, "num_attention_heads", 1, 1, 0, &m->num_heads)) ||
        (rc = hf_int(c, "num_key_value_heads", 0, 1, m->num_heads, &m->num_kv_heads)) ||
        (rc = hf_int(c, "head_dim", 0, 1, 0, &head_dim)) || (rc = hf_int(c, "vocab_size", 1, 1, 0, &m->vocab_size)) ||
        (rc = hf_int(c, "max_position_embeddings", 0, 1, CFIT_HF_DEFAULT_SEQ_LEN, &ctx)))
        return rc;
    /* llama4 keeps tie_word_embeddings beside text_config; the others in the one object */
    if ((rc = hf_bool(c, c->root, "tie_word_embeddings", 0, &m->tied_embeddings)) ||
        (c->cfg != c->root && (rc = hf_bool(c, c->cfg, "tie_word_embeddings", m->tied_embeddings, &m->tied_embeddings))))
        return rc;
    m->head_dim = (long long)head_dim * m->num_heads == m->hidden_size ? 0 : head_dim;
    m->seq_len = ctx < CFIT_HF_DEFAULT_SEQ_LEN ? ctx : CFIT_HF_DEFAULT_SEQ_LEN;
    m->mlp = CFIT_MLP_SWIGLU;   /* every supported family has a gated (SiLU/SwiGLU) MLP */
    return hf_layer_types(c, m);
}

static int map_dense(const hf *c, cfit_model *m)
{
    return hf_common(c, m);
}

/* Mistral: sliding_window, when set, applies to every layer (MistralAttention). */
static int map_mistral(const hf *c, cfit_model *m)
{
    int rc = hf_common(c, m);
    if (rc || hf_get(c, "layer_types") || !hf_get(c, "sliding_window"))
        return rc;
    m->sliding_layers = m->layers;
    return hf_int(c, "sliding_window", 1, 1, 0, &m->sliding_window);
}

/* Qwen2/Qwen3: a window only with use_sliding_window, on layers from max_window_layers on. */
static int qwen_window(const hf *c, cfit_model *m)
{
    int use, from, rc = hf_bool(c, c->cfg, "use_sliding_window", 0, &use);
    if (rc || !use || hf_get(c, "layer_types"))
        return rc;
    if ((rc = hf_int(c, "max_window_layers", 0, 0, 0, &from)) || (rc = hf_int(c, "sliding_window", 1, 1, 0, &m->sliding_window)))
        return rc;
    m->sliding_layers = from < m->layers ? m->layers - from : 0;
    if (m->sliding_layers == 0)
        m->sliding_window = 0;
    return CFIT_EOK;
}

static int map_qwen(const hf *c, cfit_model *m)
{
    int rc = hf_common(c, m);
    return rc ? rc : qwen_window(c, m);
}

/* ---- mixture of experts ---- */

static int hf_experts(const hf *c, cfit_model *m, const char *experts_key)
{
    int rc = hf_int(c, experts_key, 1, 1, 0, &m->num_experts);
    if (!rc)
        rc = hf_int(c, "num_experts_per_tok", 1, 1, 0, &m->experts_per_token);
    if (!rc && m->experts_per_token > m->num_experts) {
        char msg[128];
        snprintf(msg, sizeof msg, "config.json num_experts_per_tok (top-k) %d is larger than the %d routed experts",
                 m->experts_per_token, m->num_experts);
        rc = hf_at(c, "num_experts_per_tok", CFIT_EINVALID, msg);
    }
    return rc;
}

/* Mixtral: every layer's MLP is num_local_experts experts of intermediate_size. */
static int map_mixtral(const hf *c, cfit_model *m)
{
    int rc = map_mistral(c, m);
    if (!rc)
        rc = hf_experts(c, m, "num_local_experts");
    m->moe_ffn_hidden_size = m->ffn_hidden_size;
    return rc;
}

/* Qwen2-MoE / Qwen3-MoE: layer i is MoE unless in mlp_only_layers, when (i + 1) %
 * decoder_sparse_step == 0 (Qwen2MoeDecoderLayer); Qwen2-MoE adds one gated shared expert. */
static int map_qwen_moe(const hf *c, cfit_model *m)
{
    int rc = map_qwen(c, m), given;
    if (rc || (rc = hf_experts(c, m, "num_experts")) ||
        (rc = hf_int(c, "moe_intermediate_size", 1, 1, 0, &m->moe_ffn_hidden_size)) ||
        (rc = hf_int(c, "decoder_sparse_step", 0, 1, 1, &m->moe_layer_step)) ||
        (rc = hf_int(c, "shared_expert_intermediate_size", 0, 0, 0, &m->shared_ffn_hidden_size)))
        return rc;
    m->shared_expert_gate = m->shared_ffn_hidden_size > 0;
    return hf_layers(c, "mlp_only_layers", m->layers, &m->dense_layers, &given);
}

/* DeepSeek-V3 / Kimi-K2: MLA in every layer; MoE from first_k_dense_replace on, with
 * n_shared_experts shared experts of moe_intermediate_size (DeepseekV3MoE). */
static int map_mla(const hf *c, cfit_model *m)
{
    int rc;
    if ((rc = hf_int(c, "q_lora_rank", 0, 1, 0, &m->q_lora_rank)) || (rc = hf_int(c, "kv_lora_rank", 1, 1, 0, &m->kv_lora_rank)) ||
        (rc = hf_int(c, "qk_nope_head_dim", 1, 1, 0, &m->qk_nope_head_dim)) ||
        (rc = hf_int(c, "qk_rope_head_dim", 1, 1, 0, &m->qk_rope_head_dim)) ||
        (rc = hf_int(c, "v_head_dim", 1, 1, 0, &m->v_head_dim)))
        return rc;
    m->num_kv_heads = m->num_heads;   /* MLA: every head has its own K and V from the latent */
    m->head_dim = 0;
    return CFIT_EOK;
}

/* MoEGate's routed_scaling_factor: the top-k weights are multiplied by it (DeepSeek-V3 2.5,
 * Kimi-K2 2.827 in their config.json). Absent: not set (0), not transformers' class default,
 * so a trimmed config.json does not gain a scale it did not state. */
static int hf_scaling(const hf *c, cfit_model *m)
{
    const cfit_json *v = hf_get(c, "routed_scaling_factor");
    if (!v)
        return CFIT_EOK;
    if (v->type != CFIT_JSON_NUMBER || !(v->number > 0) || v->number > 1e6)
        return hf_at(c, "routed_scaling_factor", CFIT_EINVALID,
                     "config.json routed_scaling_factor must be a positive number");
    m->router_topk_scaling_factor = v->number;
    return CFIT_EOK;
}

/* DeepSeek-V3's router (report §2.1.2; its modeling_deepseek.py MoEGate): group-limited routing
 * over n_group expert groups (one per node in DeepSeek's deployment), a token's experts drawn
 * from topk_group of them (M = 4 nodes); scoring_func "softmax" or "sigmoid" (V3, Kimi-K2);
 * topk_method "noaux_tc", the aux-loss-free expert bias (e_score_correction_bias), the only one
 * MoEGate implements. */
static int hf_deepseek_router(const hf *c, cfit_model *m)
{
    int rc, groups, topk_groups;
    if ((rc = hf_int(c, "n_group", 0, 1, 1, &groups)) || (rc = hf_int(c, "topk_group", 0, 1, 1, &topk_groups)))
        return rc;
    if (topk_groups > groups)
        return hf_at(c, "topk_group", CFIT_EINVALID, "config.json topk_group is larger than n_group");
    if (groups > 1) {
        m->router_groups = groups;
        m->router_group_topk = topk_groups;
    }
    const cfit_json *sf = hf_get(c, "scoring_func");
    if (sf && (sf->type != CFIT_JSON_STRING || (strcmp(sf->string, "softmax") && strcmp(sf->string, "sigmoid"))))
        return hf_at(c, "scoring_func", CFIT_EINVALID, "config.json scoring_func must be \"softmax\" or \"sigmoid\"");
    m->router_sigmoid = sf && strcmp(sf->string, "sigmoid") == 0;
    const cfit_json *tm = hf_get(c, "topk_method");
    if (tm && (tm->type != CFIT_JSON_STRING || strcmp(tm->string, "noaux_tc")))
        return hf_at(c, "topk_method", CFIT_EINVALID,
                     "config.json topk_method must be \"noaux_tc\" (the only one DeepSeek-V3's MoEGate implements)");
    m->router_expert_bias = tm != NULL;
    if (m->router_expert_bias && !m->router_sigmoid)
        return hf_at(c, "topk_method", CFIT_EINVALID, "config.json topk_method \"noaux_tc\" needs scoring_func \"sigmoid\"");
    return hf_scaling(c, m);
}

/* Multi-token prediction modules (DeepSeek-V3 report §2.2): num_nextn_predict_layers, stored in
 * the checkpoint as layers num_hidden_layers.. (Megatron-Bridge's DeepSeek bridge maps it to
 * mtp_num_layers); absent = none. */
static int hf_mtp(const hf *c, cfit_model *m)
{
    int rc = hf_int(c, "num_nextn_predict_layers", 0, 0, 0, &m->mtp_layers);
    if (rc == CFIT_EOK && m->mtp_layers > CFIT_MTP_LAYERS_MAX) {
        char msg[96];
        snprintf(msg, sizeof msg, "config.json num_nextn_predict_layers must be at most %d", CFIT_MTP_LAYERS_MAX);
        return hf_at(c, "num_nextn_predict_layers", CFIT_ERANGE, msg);
    }
    return rc;
}

static int map_deepseek(const hf *c, cfit_model *m)
{
    int rc = hf_common(c, m), shared, freq;
    if (rc || (rc = map_mla(c, m)) || (rc = hf_mtp(c, m)))
        return rc;
    if (!hf_get(c, "n_routed_experts"))
        return CFIT_EOK;   /* null: a dense DeepSeek model */
    if ((rc = hf_experts(c, m, "n_routed_experts")) || (rc = hf_int(c, "moe_intermediate_size", 1, 1, 0, &m->moe_ffn_hidden_size)) ||
        (rc = hf_int(c, "n_shared_experts", 0, 0, 0, &shared)) ||
        (rc = hf_int(c, "first_k_dense_replace", 0, 0, 0, &m->first_dense_layers)) ||
        (rc = hf_int(c, "moe_layer_freq", 0, 1, 1, &freq)))
        return rc;
    if (freq != 1)
        return hf_at(c, "moe_layer_freq", CFIT_EINVALID, "config.json moe_layer_freq other than 1 is not supported");
    m->shared_ffn_hidden_size = shared * m->moe_ffn_hidden_size;
    return hf_deepseek_router(c, m);
}

/* gpt-oss: every layer is num_local_experts experts of intermediate_size; layer_types
 * alternates 128-token sliding windows with full attention. */
static int map_gpt_oss(const hf *c, cfit_model *m)
{
    int rc = hf_common(c, m);
    if (!rc)
        rc = hf_experts(c, m, "num_local_experts");
    m->moe_ffn_hidden_size = m->ffn_hidden_size;
    return rc;
}

/* Llama 4 (text_config): MoE layers are moe_layers, or every interleave_moe_layer_step-th;
 * each has one shared expert and num_local_experts routed ones of intermediate_size; dense
 * layers are intermediate_size_mlp wide (Llama4TextDecoderLayer). */
static int llama4_layers(const hf *c, cfit_model *m)
{
    cfit_layer_list moe;
    int given, rc = hf_layers(c, "moe_layers", m->layers, &moe, &given);
    if (rc || !given)
        return rc;
    m->moe_layer_step = 1;
    m->dense_layers.n = 0;
    for (int i = 0; i < m->layers; i++) {
        int listed = 0;
        for (int j = 0; j < moe.n; j++)
            listed |= moe.layer[j] == i;
        if (!listed && m->dense_layers.n == CFIT_MODEL_MAX_DENSE_LIST)
            return hf_at(c, "moe_layers", CFIT_ERANGE, "config.json moe_layers leaves more than 64 dense layers");
        if (!listed)
            m->dense_layers.layer[m->dense_layers.n++] = i;
    }
    return CFIT_EOK;
}

/* Chunked attention (attention_chunk_size) on the rope layers, no_rope_layers[i] == 1; by
 * default three of every four (Llama4TextConfig). Counted as a window of the chunk size. */
static int llama4_chunks(const hf *c, cfit_model *m)
{
    const cfit_json *v = hf_get(c, "no_rope_layers");
    int rc = hf_int(c, "attention_chunk_size", 0, 1, 0, &m->sliding_window);
    if (rc || m->sliding_window == 0)
        return rc;
    m->sliding_layers = m->layers - m->layers / 4;
    if (!v || v->type != CFIT_JSON_ARRAY || v->n == 0)
        return CFIT_EOK;
    if (v->n != (size_t)m->layers)
        return cfit_diag_set(c->d, CFIT_EPARSE, c->file, v->line, v->col,
                             "config.json key 'no_rope_layers' must have one entry for each of the %d layers", m->layers);
    m->sliding_layers = 0;
    for (size_t i = 0; i < v->n; i++)
        m->sliding_layers += v->items[i]->type == CFIT_JSON_NUMBER && v->items[i]->number != 0;
    return CFIT_EOK;
}

static int map_llama4(const hf *c, cfit_model *m)
{
    int rc = hf_common(c, m);
    if (rc || (rc = hf_experts(c, m, "num_local_experts")) || (rc = hf_int(c, "intermediate_size_mlp", 1, 1, 0, &m->ffn_hidden_size)) ||
        (rc = hf_int(c, "interleave_moe_layer_step", 0, 1, 1, &m->moe_layer_step)) || (rc = llama4_layers(c, m)))
        return rc;
    if ((rc = hf_int(c, "intermediate_size", 1, 1, 0, &m->moe_ffn_hidden_size)))
        return rc;
    m->shared_ffn_hidden_size = m->moe_ffn_hidden_size;   /* Llama4TextMoe.shared_expert */
    m->router_sigmoid = 1;   /* Llama4TextMoe: sigmoid of the top-k router logits (modeling_llama4.py) */
    return llama4_chunks(c, m);
}

/* ---- recognising the family ---- */

typedef int (*hf_map)(const hf *c, cfit_model *m);

static const struct family {
    const char *type;           /* model_type */
    const char *arch;           /* architectures entry */
    int text_config;            /* the text model's keys are in "text_config" */
    hf_map map;
} families[] = {
    {"llama", "LlamaForCausalLM", 0, map_dense},
    {"mistral", "MistralForCausalLM", 0, map_mistral},
    {"mixtral", "MixtralForCausalLM", 0, map_mixtral},
    {"qwen2", "Qwen2ForCausalLM", 0, map_qwen},
    {"qwen2_moe", "Qwen2MoeForCausalLM", 0, map_qwen_moe},
    {"qwen3", "Qwen3ForCausalLM", 0, map_qwen},
    {"qwen3_moe", "Qwen3MoeForCausalLM", 0, map_qwen_moe},
    {"deepseek_v3", "DeepseekV3ForCausalLM", 0, map_deepseek},
    {"kimi_k2", NULL, 0, map_deepseek},   /* Kimi-K2: DeepseekV3ForCausalLM under its own model_type */
    {"gpt_oss", "GptOssForCausalLM", 0, map_gpt_oss},
    {"llama4", "Llama4ForConditionalGeneration", 1, map_llama4},
    {"llama4_text", "Llama4ForCausalLM", 0, map_llama4},
};
#define NFAMILIES (sizeof families / sizeof families[0])

const char *cfit_hf_supported_types(void)
{
    return "llama, mistral, mixtral, qwen2, qwen2_moe, qwen3, qwen3_moe, deepseek_v3, kimi_k2, gpt_oss, llama4, llama4_text";
}

int cfit__hf_is_config(const cfit_json *root)
{
    return root && root->type == CFIT_JSON_OBJECT &&
           (cfit_json_get(root, "model_type") || cfit_json_get(root, "architectures"));
}

static const struct family *by_type(const char *type)
{
    for (size_t i = 0; i < NFAMILIES; i++)
        if (strcmp(families[i].type, type) == 0)
            return &families[i];
    return NULL;
}

static const struct family *by_arch(const cfit_json *archs)
{
    for (size_t j = 0; archs && archs->type == CFIT_JSON_ARRAY && j < archs->n; j++)
        for (size_t i = 0; i < NFAMILIES; i++)
            if (archs->items[j]->type == CFIT_JSON_STRING && families[i].arch &&
                strcmp(families[i].arch, archs->items[j]->string) == 0)
                return &families[i];
    return NULL;
}

static const struct family *recognise(const cfit_json *root, const char *file, cfit_diag *d)
{
    const cfit_json *t = cfit_json_get(root, "model_type");
    if (t && t->type != CFIT_JSON_STRING) {
        cfit_diag_set(d, CFIT_EPARSE, file, t->line, t->col, "config.json key 'model_type' must be a string, got %s",
                      cfit_json_type_name(t->type));
        return NULL;
    }
    const struct family *f = t ? by_type(t->string) : NULL;
    if (!f)
        f = by_arch(cfit_json_get(root, "architectures"));
    if (!f) {
        const cfit_json *at = t ? t : root;
        cfit_diag_set(d, CFIT_EPARSE, file, at->line, at->col, "unsupported model_type '%s' (supported: %s)",
                      t ? t->string : "(none)", cfit_hf_supported_types());
    }
    return f;
}

/* The model's name: the file's base name without ".json", or its directory's for config.json. */
static void hf_name(const char *file, const char *type, char *out)
{
    const char *path = file ? file : "", *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(base);
    if (n > 5 && strcmp(base + n - 5, ".json") == 0)
        n -= 5;
    if ((n == 6 && strncmp(base, "config", 6) == 0) || n == 0) {
        const char *dir_end = base > path ? base - 1 : path, *dir = dir_end;
        while (dir > path && dir[-1] != '/')
            dir--;
        base = dir, n = (size_t)(dir_end - dir);
    }
    if (n == 0)
        base = type, n = strlen(type);
    snprintf(out, CFIT_NAME_MAX, "%.*s", (int)(n < CFIT_NAME_MAX - 1 ? n : CFIT_NAME_MAX - 1), base);
}

int cfit__hf_model_from_json(const cfit_json *root, const char *name, cfit_model *out, cfit_diag *d)
{
    memset(out, 0, sizeof *out);
    const struct family *f = recognise(root, name, d);
    if (!f)
        return CFIT_EPARSE;
    hf c = {root, root, name, f->type, d};
    if (f->text_config) {
        c.cfg = cfit_json_get(root, "text_config");
        if (!c.cfg || c.cfg->type != CFIT_JSON_OBJECT)
            return cfit_diag_set(d, CFIT_EPARSE, name, c.cfg ? c.cfg->line : root->line, c.cfg ? c.cfg->col : root->col,
                                 "config.json (model_type '%s') needs a 'text_config' object", f->type);
    }
    int rc = f->map(&c, out);
    if (rc)
        return rc;
    hf_name(name, f->type, out->name);
    snprintf(out->source, CFIT_TEXT_MAX, "Hugging Face config.json %s (model_type %s)", name ? name : "", f->type);
    if (cfit_model_validate(out, d))
        return cfit_diag_set(d, CFIT_EINVALID, name, c.cfg->line, c.cfg->col, "%s", d ? d->msg : "invalid model");
    return CFIT_EOK;
}

int cfit_hf_model_load_buffer(const char *text, size_t len, const char *name, cfit_model *out, cfit_diag *d)
{
    int rc;
    cfit_json *root = cfit_json_parse(text, len, name, &rc, d);
    if (!root)
        return rc ? rc : CFIT_EPARSE;
    if (root->type != CFIT_JSON_OBJECT)
        rc = cfit_diag_set(d, CFIT_EPARSE, name, root->line, root->col, "a config.json must be one object");
    else
        rc = cfit__hf_model_from_json(root, name, out, d);
    cfit_json_free(root);
    return rc;
}
