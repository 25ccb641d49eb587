/* test_workload.c - parameter and FLOP counts of the catalog models (src/core/workload.c).
 *
 * Parameter counts are checked against the published sizes (and, for the Llama models, the
 * exact counts of the Hugging Face checkpoints); FLOPs per token against the Megatron-LM
 * closed form (Narayanan et al. 2021, eq. 3, generalised to GQA and gated MLPs):
 *   12 L h^2 (1 + g/a + s/h + gm f/h + V/(2 L h)),  gm = 1.5 for SwiGLU, 1 for GELU.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "clusterfit/catalog.h"
#include "clusterfit/workload.h"

static int setup(void **state)
{
    cfit_diag d;
    cfit_diag_clear(&d);
    cfit_catalog *c = cfit_catalog_new(&d);
    if (!c)
        fail_msg("embedded catalog: %s:%d:%d: %s", d.file, d.line, d.col, d.msg);
    *state = c;
    return 0;
}

static int teardown(void **state)
{
    cfit_catalog_free(*state);
    return 0;
}

static const cfit_model *model(void **state, const char *name)
{
    cfit_diag d;
    cfit_diag_clear(&d);
    const cfit_model *m = cfit_catalog_model(*state, name, &d);
    if (!m)
        fail_msg("catalog model '%s': %s", name, d.msg);
    return m;
}

static void assert_rel(double got, double want, double tol, const char *what)
{
    if (!(fabs(got - want) <= tol * fabs(want)))
        fail_msg("%s: got %.17g, want %.17g (relative error %.3g > %.3g)", what, got, want,
                 fabs(got - want) / fabs(want), tol);
}

/* Dense MHA/GQA models: the closed forms below hold for them only (MoE, MLA, explicit head
 * widths and sliding windows have their own tests). */
static int plain(const cfit_model *m)
{
    return !cfit_model_is_moe(m) && !cfit_model_is_mla(m) && m->head_dim == 0 && m->sliding_layers == 0;
}

/* ---- parameter counts ------------------------------------------------------------ */

static void test_params_published(void **state)
{
    static const struct { const char *name; double lo, hi; } pub[] = {
        {"llama3-8b", 8.03e9, 8.03e9},       /* Llama 3 herd paper; HF 8,030,261,248 */
        {"llama3-70b", 70.6e9, 70.6e9},      /* HF 70,553,706,496 */
        {"llama3-405b", 405.8e9, 405.8e9},   /* HF 405,853,388,800 */
        {"gpt3-175b", 174.6e9, 175.2e9},     /* Brown et al. 2020: "175B" (174.6B with V 51200) */
        {"llama2-7b", 6.74e9, 6.74e9},       /* HF 6,738,415,616 */
        {"llama2-13b", 13.0e9, 13.0e9},      /* HF 13,015,864,320 */
        {"llama2-70b", 69.0e9, 69.0e9},      /* HF 68,976,648,192 */
    };
    for (size_t i = 0; i < sizeof pub / sizeof pub[0]; i++) {
        double p = cfit_model_params(model(state, pub[i].name));
        if (p < 0.99 * pub[i].lo || p > 1.01 * pub[i].hi)
            fail_msg("%s: %.6g parameters, published %.6g..%.6g (1%% tolerance)", pub[i].name, p,
                     pub[i].lo, pub[i].hi);
    }
}

/* The Llama checkpoints' exact counts (norms and the final norm included, untied). */
static void test_params_exact_checkpoints(void **state)
{
    static const struct { const char *name; double n; } hf[] = {
        {"llama3-8b", 8030261248.0},  {"llama3-70b", 70553706496.0}, {"llama3-405b", 405853388800.0},
        {"llama2-7b", 6738415616.0},  {"llama2-13b", 13015864320.0}, {"llama2-70b", 68976648192.0},
    };
    for (size_t i = 0; i < sizeof hf / sizeof hf[0]; i++) {
        double p = cfit_model_params(model(state, hf[i].name));
        if (p != hf[i].n)
            fail_msg("%s: %.0f parameters, checkpoint has %.0f", hf[i].name, p, hf[i].n);
    }
}

/* Closed form of every catalog model: L (QKV + O + MLP + 2 norms) + V h (x2 untied) + h. */
static void test_params_formula_all_models(void **state)
{
    const cfit_catalog *c = *state;
    assert_true(cfit_catalog_model_count(c) > 0);
    for (size_t i = 0; i < cfit_catalog_model_count(c); i++) {
        const cfit_model *m = cfit_catalog_model_at(c, i);
        if (!plain(m))
            continue;
        double h = m->hidden_size, f = m->ffn_hidden_size, L = m->layers, V = m->vocab_size;
        double kv = h / m->num_heads * m->num_kv_heads;
        double mm = 2.0 * h * h + 2.0 * h * kv + (m->mlp == CFIT_MLP_SWIGLU ? 3.0 : 2.0) * h * f;
        assert_rel(cfit_model_layer_matmul_params(m), mm, 1e-12, m->name);
        assert_rel(cfit_model_layer_params(m), mm + 2.0 * h, 1e-12, m->name);
        assert_rel(cfit_model_embedding_params(m), V * h, 1e-12, m->name);
        double want = L * (mm + 2.0 * h) + V * h * (m->tied_embeddings ? 1.0 : 2.0) + h;
        assert_rel(cfit_model_params(m), want, 1e-12, m->name);
    }
}

static void test_params_tied_and_gqa(void **state)
{
    cfit_model m = *model(state, "llama3-8b");
    double untied = cfit_model_params(&m);
    m.tied_embeddings = 1;
    assert_rel(untied - cfit_model_params(&m), (double)m.vocab_size * m.hidden_size, 1e-12, "tied");
    m.tied_embeddings = 0;
    /* MHA (kv heads = heads) has 2 h (h - kv) more weights per layer than GQA */
    double gqa = cfit_model_layer_matmul_params(&m);
    double kv = (double)m.hidden_size / m.num_heads * m.num_kv_heads;
    m.num_kv_heads = m.num_heads;
    assert_rel(cfit_model_layer_matmul_params(&m) - gqa, 2.0 * m.hidden_size * (m.hidden_size - kv),
               1e-12, "gqa");
    /* gated MLP: 3 h f instead of 2 h f */
    double gated = cfit_model_layer_matmul_params(&m);
    m.mlp = CFIT_MLP_GELU;
    assert_rel(gated - cfit_model_layer_matmul_params(&m), (double)m.hidden_size * m.ffn_hidden_size,
               1e-12, "mlp");
}

/* ---- FLOPs ----------------------------------------------------------------------- */

static double megatron_flops(const cfit_model *m, int seq)
{
    double L = m->layers, h = m->hidden_size, f = m->ffn_hidden_size, V = m->vocab_size;
    double g = m->num_kv_heads, a = m->num_heads, s = seq;
    double gm = m->mlp == CFIT_MLP_SWIGLU ? 1.5 : 1.0;
    return 12.0 * L * h * h * (1.0 + g / a + s / h + f / h * gm + V / (2.0 * L * h));
}

static void test_flops_megatron_formula(void **state)
{
    const cfit_catalog *c = *state;
    static const int seqs[] = {0, 1, 2048, 4096, 8192, 131072};
    for (size_t i = 0; i < cfit_catalog_model_count(c); i++) {
        const cfit_model *m = cfit_catalog_model_at(c, i);
        if (!plain(m))
            continue;
        for (size_t j = 0; j < sizeof seqs / sizeof seqs[0]; j++) {
            int s = seqs[j] ? seqs[j] : m->seq_len;
            char what[128];
            snprintf(what, sizeof what, "%s at seq %d", m->name, s);
            assert_rel(cfit_model_flops_per_token(m, s), megatron_flops(m, s), 1e-9, what);
        }
    }
}

/* GPT-3 175B: Narayanan et al. eq. 3 without recomputation, 72 B s l h^2 (1 + s/6h + V/12lh)
 * per batch = per token 72 l h^2 (...), about 6 N + attention. */
static void test_flops_gpt3_paper(void **state)
{
    const cfit_model *m = model(state, "gpt3-175b");
    double l = m->layers, h = m->hidden_size, s = 2048, V = m->vocab_size;
    double paper = 72.0 * l * h * h * (1.0 + s / (6.0 * h) + V / (12.0 * h * l));
    assert_rel(cfit_model_flops_per_token(m, 2048), paper, 1e-9, "gpt3-175b eq. 3");
    /* and it lies between 6 N and 6 N + the attention scores term */
    double six_n = 6.0 * cfit_model_params(m);
    double fl = cfit_model_flops_per_token(m, 2048);
    assert_true(fl > six_n * 0.99);
    assert_true(fl < six_n + 12.0 * l * h * s * 1.01);
}

static void test_flops_seq_linear(void **state)
{
    const cfit_model *m = model(state, "llama3-70b");
    /* attention scores add 12 L h per token per unit of sequence length */
    double d = cfit_model_flops_per_token(m, 8192) - cfit_model_flops_per_token(m, 4096);
    assert_rel(d, 12.0 * m->layers * m->hidden_size * 4096.0, 1e-9, "seq slope");
}

static void test_hw_flops(void **state)
{
    const cfit_catalog *c = *state;
    for (size_t i = 0; i < cfit_catalog_model_count(c); i++) {
        const cfit_model *m = cfit_catalog_model_at(c, i);
        if (!plain(m))
            continue;
        int s = m->seq_len;
        double model_f = cfit_model_flops_per_token(m, s);
        double none = cfit_model_hw_flops_per_token(m, s, CFIT_RECOMPUTE_NONE, 0);
        double sel = cfit_model_hw_flops_per_token(m, s, CFIT_RECOMPUTE_SELECTIVE, 0);
        double full = cfit_model_hw_flops_per_token(m, s, CFIT_RECOMPUTE_FULL, 0);
        assert_true(none == model_f);
        if (!(none < sel && sel < full))
            fail_msg("%s: hw flops none %g, selective %g, full %g not increasing", m->name, none, sel,
                     full);
        /* selective reruns the attention scores forward (QK^T, AV): 4 s h per layer */
        assert_rel(sel - none, 4.0 * s * m->hidden_size * m->layers, 1e-9, m->name);
        /* full reruns one forward of every layer (a third of model FLOPs) but not the logits */
        assert_rel(full - none, model_f / 3.0 - 2.0 * m->hidden_size * m->vocab_size, 1e-9, m->name);
        assert_true(full < 4.0 / 3.0 * model_f);
    }
}

/* ---- names and validation -------------------------------------------------------- */

static void test_names(void **state)
{
    (void)state;
    assert_string_equal(cfit_recompute_name(CFIT_RECOMPUTE_NONE), "none");
    assert_string_equal(cfit_recompute_name(CFIT_RECOMPUTE_SELECTIVE), "selective");
    assert_string_equal(cfit_recompute_name(CFIT_RECOMPUTE_FULL), "full");
    assert_string_equal(cfit_recompute_name(CFIT_RECOMPUTE_COUNT), "?");
    assert_string_equal(cfit_recompute_name((cfit_recompute)-1), "?");
    assert_string_equal(cfit_precision_name(CFIT_PREC_BF16), "bf16");
    assert_string_equal(cfit_precision_name(CFIT_PREC_FP8), "fp8");
    assert_string_equal(cfit_precision_name(CFIT_PREC_COUNT), "?");
}

static void expect_invalid(const cfit_model *m, int err, const char *needle)
{
    cfit_diag d;
    cfit_diag_clear(&d);
    int rc = cfit_model_validate(m, &d);
    if (rc != err)
        fail_msg("%s: got %s, want %s (%s)", needle, cfit_err_name(rc), cfit_err_name(err), d.msg);
    if (!strstr(d.msg, needle))
        fail_msg("message '%s' lacks '%s'", d.msg, needle);
    assert_non_null(strstr(d.msg, m->name));
    assert_true(d.msg[strlen(d.msg) - 1] != '.');
}

static void test_validate(void **state)
{
    const cfit_catalog *c = *state;
    cfit_diag d;
    for (size_t i = 0; i < cfit_catalog_model_count(c); i++) {
        cfit_diag_clear(&d);
        if (cfit_model_validate(cfit_catalog_model_at(c, i), &d) != CFIT_EOK)
            fail_msg("catalog model rejected: %s", d.msg);
    }
    const cfit_model base = *model(state, "llama3-70b");
    static const size_t offs[] = {
        offsetof(cfit_model, layers), offsetof(cfit_model, hidden_size),
        offsetof(cfit_model, ffn_hidden_size), offsetof(cfit_model, num_heads),
        offsetof(cfit_model, num_kv_heads), offsetof(cfit_model, vocab_size),
        offsetof(cfit_model, seq_len),
    };
    static const char *const names[] = {"layers", "hidden_size", "ffn_hidden_size", "num_heads",
                                        "num_kv_heads", "vocab_size", "seq_len"};
    static const int bad[] = {0, -1, (1 << 24) + 1, -2147483647 - 1};
    for (size_t i = 0; i < sizeof offs / sizeof offs[0]; i++)
        for (size_t j = 0; j < sizeof bad / sizeof bad[0]; j++) {
            cfit_model m = base;
            memcpy((char *)&m + offs[i], &bad[j], sizeof(int));
            expect_invalid(&m, CFIT_ERANGE, names[i]);
        }
    cfit_model m = base;
    m.hidden_size = 8190;           /* 64 heads do not divide it */
    expect_invalid(&m, CFIT_EINVALID, "num_heads 64 does not divide hidden_size 8190");
    m = base;
    m.num_kv_heads = 24;            /* does not divide 64 heads */
    expect_invalid(&m, CFIT_EINVALID, "num_kv_heads 24 does not divide num_heads 64");
    m = base;
    m.num_kv_heads = 128;           /* more kv heads than heads */
    expect_invalid(&m, CFIT_EINVALID, "num_kv_heads");
    m = base;
    m.layers = 1 << 24;             /* the bound itself is allowed */
    cfit_diag_clear(&d);
    assert_int_equal(cfit_model_validate(&m, &d), CFIT_EOK);
    /* NULL diagnostic is allowed */
    m.layers = 0;
    assert_int_equal(cfit_model_validate(&m, NULL), CFIT_ERANGE);
}


/* ---- mixture of experts and MLA (docs/model.md §1.1, §2.1) ----------------------- */

/* Published totals and active counts, each in its publisher's convention:
 *  - embeddings counted (input and output): Mixtral (arXiv:2401.04088 sec. 2: 46.7B / 12.9B
 *    "per token"), Mistral's 8x22B announcement, Qwen3 (the 22B and 3.3B only match with
 *    them), Llama 4, DeepSeek-V3 (arXiv:2412.19437: 671B / 37B; its README's finer 36.6B
 *    activated excludes the input embedding) and Kimi K2 (arXiv:2507.20534 Table 2: 1.04T /
 *    32.6B; its model card rounds to 32B);
 *  - gpt-oss (arXiv:2508.10925 Table 1): "active" excludes the embedding table (the
 *    unembedding is counted), totals count both;
 *  - MTP modules excluded (DeepSeek-V3's 671B excludes its 14B MTP module, which clusterfit
 *    counts: subtracted here); Llama 4's totals (109B Scout) include the vision encoder, not
 *    modelled here. */
static void test_moe_published(void **state)
{
    static const struct { const char *name; double total, active; int active_without_input_embedding; } pub[] = {
        {"deepseek-v3", 671e9, 37e9, 0},       {"kimi-k2", 1.04e12, 32.6e9, 0},
        {"qwen3-235b-a22b", 235e9, 22e9, 0},   {"qwen3-30b-a3b", 30.5e9, 3.3e9, 0},
        {"gpt-oss-120b", 116.83e9, 5.13e9, 1}, {"gpt-oss-20b", 20.91e9, 3.61e9, 1},
        {"llama4-scout", 109e9, 17e9, 0},      {"llama4-maverick", 400e9, 17e9, 0},
        {"mixtral-8x7b", 46.7e9, 12.9e9, 0},   {"mixtral-8x22b", 141e9, 39e9, 0},
    };
    for (size_t i = 0; i < sizeof pub / sizeof pub[0]; i++) {
        const cfit_model *m = model(state, pub[i].name);
        assert_true(cfit_model_is_moe(m));
        double active = cfit_model_active_params(m) - cfit_model_mtp_params(m, 1);
        if (pub[i].active_without_input_embedding)
            active -= cfit_model_embedding_params(m);
        char what[96];
        snprintf(what, sizeof what, "%s total", pub[i].name);
        assert_rel(cfit_model_params(m) - cfit_model_mtp_params(m, 0), pub[i].total, 0.02, what);
        snprintf(what, sizeof what, "%s active", pub[i].name);
        assert_rel(active, pub[i].active, 0.02, what);
    }
}

static void test_active_equals_total_dense(void **state)
{
    const cfit_catalog *c = *state;
    for (size_t i = 0; i < cfit_catalog_model_count(c); i++) {
        const cfit_model *m = cfit_catalog_model_at(c, i);
        if (!cfit_model_is_moe(m))
            assert_true(cfit_model_active_params(m) == cfit_model_params(m));
        else
            assert_true(cfit_model_active_params(m) < 0.5 * cfit_model_params(m));
    }
}

/* DeepSeek-V3 by hand (arXiv:2412.19437 sec. 2.1.1 and 4.2): MLA per layer is W_DQ h x d_c',
 * W_UQ (with the rope queries) d_c' x n_h (d_h + d_h^R), W_DKV and W_KR h x (d_c + d_h^R),
 * W_UK and W_UV d_c x n_h (d_h + d_h), W_O n_h d_h x h; an MoE layer 257 SwiGLU experts of 2048
 * (256 routed + 1 shared) and a 7168 x 256 router; the first 3 layers dense (18432). */
static void test_mla_deepseek_by_hand(void **state)
{
    const cfit_model *m = model(state, "deepseek-v3");
    double h = 7168, a = 128, dc = 512, dq = 1536, dh = 128, dr = 64;
    double mla = h * dq + dq * a * (dh + dr) + h * (dc + dr) + dc * a * (dh + dh) + a * dh * h;
    assert_rel(cfit_model_attn_params(m), mla, 1e-15, "MLA weights");
    double expert = 3.0 * h * 2048;
    assert_rel(cfit_model_moe_mlp_params(m, 0), 257.0 * expert + h * 256, 1e-15, "MoE layer");
    assert_rel(cfit_model_moe_mlp_params(m, 1), 9.0 * expert + h * 256, 1e-15, "MoE layer, active");
    assert_int_equal(cfit_model_moe_layers(m), 58);
    assert_false(cfit_model_layer_is_moe(m, 2));
    assert_true(cfit_model_layer_is_moe(m, 3));
    double norms = 61.0 * (2.0 * h + dq + dc);
    /* the MTP module (sec. 2.2): a 2h x h projection, one MoE layer, its norms and enorm, hnorm and
       the final norm; the embedding and output head are the main model's */
    double mtp = 2.0 * h * h + mla + 257.0 * expert + h * 256 + (2.0 * h + dq + dc) + 3.0 * h;
    assert_int_equal(m->mtp_layers, 1);
    assert_true(cfit_model_mtp_moe(m));
    assert_rel(cfit_model_mtp_params(m, 0), mtp, 1e-15, "MTP module");
    double want = 61.0 * mla + 3.0 * 3.0 * h * 18432 + 58.0 * (257.0 * expert + h * 256) + norms + 2.0 * 129280 * h + h;
    assert_rel(cfit_model_params(m), want + mtp, 1e-15, "deepseek-v3 total");
    cfit_model no_mtp = *m;
    no_mtp.mtp_layers = 0;
    assert_rel(cfit_model_params(&no_mtp), want, 1e-15, "deepseek-v3 without MTP");
    /* its FLOPs per token: the projection, the layer (full attention) and its own logits */
    double mtp_fwd = 2.0 * (2.0 * h * h + mla + 9.0 * expert + h * 256) + 2.0 * a * (dh + dr + dh) * 4096 +
                     2.0 * h * 129280;
    assert_rel(cfit_model_flops_per_token(m, 4096) - cfit_model_flops_per_token(&no_mtp, 4096), 3.0 * mtp_fwd, 1e-12,
               "MTP FLOPs");
    /* without q compression the query is one h x n_h (d_h + d_h^R) projection */
    cfit_model plain_q = *m;
    plain_q.q_lora_rank = 0;
    assert_rel(cfit_model_attn_params(&plain_q), mla - h * dq - dq * a * (dh + dr) + h * a * (dh + dr), 1e-15,
               "MLA without q_lora_rank");
}

/* Model FLOPs count what one token multiplies by: 6 x the active GEMM weights, the logits, and
 * scores over qk_head_dim (nope + rope) and v_head_dim per head. */
static void test_moe_flops_active_only(void **state)
{
    const char *const names[] = {"deepseek-v3", "kimi-k2", "qwen3-235b-a22b", "mixtral-8x7b", "llama4-maverick"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const cfit_model *m = model(state, names[i]);
        double h = m->hidden_size, V = m->vocab_size, L = m->layers + m->mtp_layers, s = 4096, a = m->num_heads;
        double norms = L * (2.0 * h + (cfit_model_is_mla(m) ? m->q_lora_rank + m->kv_lora_rank : 0)) +
                       m->mtp_layers * 3.0 * h;   /* an MTP module is one more layer (its logits below) */
        double gemm = cfit_model_active_params(m) - norms - h - V * h * (m->tied_embeddings ? 1 : 2);
        double qk = cfit_model_is_mla(m) ? m->qk_nope_head_dim + m->qk_rope_head_dim : cfit_model_head_dim(m);
        double v = cfit_model_is_mla(m) ? m->v_head_dim : cfit_model_head_dim(m);
        double want = 3.0 * (2.0 * gemm + 2.0 * h * V * (1 + m->mtp_layers) + 2.0 * a * (qk + v) * s * L);
        assert_rel(cfit_model_flops_per_token(m, 4096), want, 1e-12, names[i]);
        assert_true(cfit_model_flops_per_token(m, 4096) < 3.0 * cfit_model_params(m));
    }
}

/* gpt-oss: half the layers attend to 128 tokens, so past 128 only the full layers grow. */
static void test_sliding_window(void **state)
{
    const cfit_model *m = model(state, "gpt-oss-120b");
    double per_key = 2.0 * m->num_heads * (2.0 * cfit_model_head_dim(m));
    double d = cfit_model_flops_per_token(m, 8192) - cfit_model_flops_per_token(m, 4096);
    assert_rel(d, 3.0 * per_key * (m->layers - m->sliding_layers) * 4096.0, 1e-12, "slope");
    d = cfit_model_flops_per_token(m, 128) - cfit_model_flops_per_token(m, 64);
    assert_rel(d, 3.0 * per_key * m->layers * 64.0, 1e-12, "below the window");
}

static void test_moe_layers(void **state)
{
    const cfit_model *mav = model(state, "llama4-maverick");
    assert_int_equal(cfit_model_moe_layers(mav), 24);
    assert_false(cfit_model_layer_is_moe(mav, 0));
    assert_true(cfit_model_layer_is_moe(mav, 1));
    cfit_model m = *model(state, "qwen3-30b-a3b");
    m.dense_layers.n = 2;
    m.dense_layers.layer[0] = 0, m.dense_layers.layer[1] = 47;
    assert_int_equal(cfit_model_moe_layers(&m), 46);
    double one_dense = cfit_model_dense_mlp_params(&m) - cfit_model_moe_mlp_params(&m, 0);
    assert_rel(cfit_model_params(&m) - cfit_model_params(model(state, "qwen3-30b-a3b")), 2.0 * one_dense, 1e-12,
               "mlp_only_layers");
    /* the closed-form count agrees with layer-by-layer over steps, first dense layers and lists
       (duplicates, layers off the step or past the end among them) */
    for (int step = 1; step <= 3; step++)
        for (int first = 0; first <= 4; first++) {
            m.moe_layer_step = step, m.first_dense_layers = first;
            m.dense_layers.n = 4;
            m.dense_layers.layer[0] = 5, m.dense_layers.layer[1] = 5, m.dense_layers.layer[2] = 8;
            m.dense_layers.layer[3] = 400;
            int n = 0;
            for (int i = 0; i < m.layers; i++)
                n += cfit_model_layer_is_moe(&m, i);
            assert_int_equal(cfit_model_moe_layers(&m), n);
        }
}

static void test_unplanned(void **state)
{
    /* issue 13: MoE, MLA, explicit head_dim and sliding windows are all costed now */
    assert_null(cfit_model_unplanned_feature(model(state, "llama3-70b"), 8192));
    assert_null(cfit_model_unplanned_feature(model(state, "deepseek-v3"), 4096));
    cfit_model m = *model(state, "llama3-8b");
    m.head_dim = 64;
    assert_null(cfit_model_unplanned_feature(&m, 4096));
    m.sliding_window = 4096, m.sliding_layers = 32;
    assert_null(cfit_model_unplanned_feature(&m, 8192));
}

static void test_validate_moe(void **state)
{
    cfit_model m = *model(state, "mixtral-8x7b");
    m.experts_per_token = 9;
    expect_invalid(&m, CFIT_EINVALID, "experts_per_token (top-k) 9 must be between 1 and num_experts 8");
    m = *model(state, "mixtral-8x7b");
    m.moe_ffn_hidden_size = 0;
    expect_invalid(&m, CFIT_EINVALID, "moe_ffn_hidden_size");
    m = *model(state, "llama3-8b");
    m.experts_per_token = 2;
    expect_invalid(&m, CFIT_EINVALID, "need num_experts");
    m = *model(state, "deepseek-v3");
    m.v_head_dim = 0;
    expect_invalid(&m, CFIT_EINVALID, "v_head_dim");
    m = *model(state, "deepseek-v3");
    m.first_dense_layers = 61;
    expect_invalid(&m, CFIT_EINVALID, "no layer is an MoE layer");
    m = *model(state, "deepseek-v3");   /* the router: Megatron-Core's group and expert-bias rules */
    m.router_groups = 6;
    expect_invalid(&m, CFIT_EINVALID, "router_groups 6 must divide num_experts 256");
    m.router_groups = 8, m.router_group_topk = 9;
    expect_invalid(&m, CFIT_EINVALID, "router_group_topk 9 must be between 1 and router_groups");
    m.router_groups = 0, m.router_group_topk = 4;
    expect_invalid(&m, CFIT_EINVALID, "router_group_topk needs router_groups");
    m = *model(state, "deepseek-v3");
    m.router_groups = 256, m.router_group_topk = 4;   /* 4 groups of 1 expert cannot give top-8 */
    expect_invalid(&m, CFIT_EINVALID, "experts_per_token 8 exceeds the 4 experts");
    m = *model(state, "deepseek-v3");
    m.router_sigmoid = 0;
    expect_invalid(&m, CFIT_EINVALID, "router_expert_bias (aux-loss-free balancing) needs router_score");
    m = *model(state, "deepseek-v3");
    m.router_expert_bias = 0;
    expect_invalid(&m, CFIT_EINVALID, "router_bias_update_rate needs router_expert_bias");
    m = *model(state, "qwen3-30b-a3b");
    m.dense_layers.n = 1, m.dense_layers.layer[0] = 48;
    expect_invalid(&m, CFIT_ERANGE, "dense layer 48");
    m = *model(state, "llama3-8b");
    m.q_lora_rank = 64;
    expect_invalid(&m, CFIT_EINVALID, "need kv_lora_rank");
    m = *model(state, "gpt-oss-20b");
    m.sliding_layers = 25;
    expect_invalid(&m, CFIT_EINVALID, "sliding_layers");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_params_published),
        cmocka_unit_test(test_params_exact_checkpoints),
        cmocka_unit_test(test_params_formula_all_models),
        cmocka_unit_test(test_params_tied_and_gqa),
        cmocka_unit_test(test_flops_megatron_formula),
        cmocka_unit_test(test_flops_gpt3_paper),
        cmocka_unit_test(test_flops_seq_linear),
        cmocka_unit_test(test_hw_flops),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_validate),
        cmocka_unit_test(test_moe_published),
        cmocka_unit_test(test_active_equals_total_dense),
        cmocka_unit_test(test_mla_deepseek_by_hand),
        cmocka_unit_test(test_moe_flops_active_only),
        cmocka_unit_test(test_sliding_window),
        cmocka_unit_test(test_moe_layers),
        cmocka_unit_test(test_unplanned),
        cmocka_unit_test(test_validate_moe),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
