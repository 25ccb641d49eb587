/* test_hf_config.c - Hugging Face config.json as a model (src/core/hf_config.c).
 *
 * Every fixture in tests/fixtures/hf/ (one per supported model_type, the public config.json
 * of the model named in tests/fixtures/hf/README.md) parses to the fields its family's
 * transformers code reads; errors carry FILE:LINE:COL.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "clusterfit/catalog.h"
#include "clusterfit/hf_config.h"
#include "clusterfit/workload.h"

static cfit_model load_fixture(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/tests/fixtures/hf/%s.json", CFIT_SOURCE_DIR, name);
    cfit_model m;
    cfit_diag d;
    cfit_diag_clear(&d);
    if (cfit_model_load_file(path, &m, &d))
        fail_msg("%s: %s:%d:%d: %s", name, d.file, d.line, d.col, d.msg);
    return m;
}

typedef struct want {
    const char *fixture;
    int layers, hidden, ffn, heads, kv, head_dim, vocab, seq, tied;
    int experts, topk, moe_ffn, shared_ffn, first_dense, moe_layers;
    int q_lora, kv_lora, window, sliding;
} want;

static const want wants[] = {
    /* fixture              L   h     ffn    a    g   hd  V       seq  tie  E    k  moe   shr   fd  moeL ql    kvl  win  sl */
    {"llama3-8b",           32, 4096, 14336, 32,  8,  0,  128256, 4096, 0, 0,   0, 0,    0,    0, 0,   0,    0,   0,   0},
    {"mistral-7b-v0.1",     32, 4096, 14336, 32,  8,  0,  32000,  4096, 0, 0,   0, 0,    0,    0, 0,   0,    0,   4096, 32},
    {"mixtral-8x7b-v0.1",   32, 4096, 14336, 32,  8,  0,  32000,  4096, 0, 8,   2, 14336, 0,   0, 32,  0,    0,   0,   0},
    {"qwen2.5-7b",          28, 3584, 18944, 28,  4,  0,  152064, 4096, 0, 0,   0, 0,    0,    0, 0,   0,    0,   0,   0},
    {"qwen1.5-moe-a2.7b",   24, 2048, 5632,  16,  16, 0,  151936, 4096, 0, 60,  4, 1408, 5632, 0, 24,  0,    0,   0,   0},
    {"qwen3-0.6b",          28, 1024, 3072,  16,  8,  128, 151936, 4096, 1, 0,  0, 0,    0,    0, 0,   0,    0,   0,   0},
    {"qwen3-30b-a3b",       48, 2048, 6144,  32,  4,  128, 151936, 4096, 0, 128, 8, 768, 0,    0, 48,  0,    0,   0,   0},
    {"deepseek-v3",         61, 7168, 18432, 128, 128, 0, 129280, 4096, 0, 256, 8, 2048, 2048, 3, 58,  1536, 512, 0,   0},
    {"kimi-k2-instruct",    61, 7168, 18432, 64,  64, 0,  163840, 4096, 0, 384, 8, 2048, 2048, 1, 60,  1536, 512, 0,   0},
    {"gpt-oss-20b",         24, 2880, 2880,  64,  8,  64, 201088, 4096, 0, 32,  4, 2880, 0,    0, 24,  0,    0,   128, 12},
    {"llama4-scout-17b-16e", 48, 5120, 16384, 40, 8,  0,  202048, 4096, 0, 16,  1, 8192, 8192, 0, 48,  0,    0,   8192, 36},
};

static void test_fixtures(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof wants / sizeof wants[0]; i++) {
        const want *w = &wants[i];
        cfit_model m = load_fixture(w->fixture);
        int got[] = {m.layers, m.hidden_size, m.ffn_hidden_size, m.num_heads, m.num_kv_heads, m.head_dim,
                     m.vocab_size, m.seq_len, m.tied_embeddings, m.num_experts, m.experts_per_token,
                     m.moe_ffn_hidden_size, m.shared_ffn_hidden_size, m.first_dense_layers, cfit_model_moe_layers(&m),
                     m.q_lora_rank, m.kv_lora_rank, m.sliding_window, m.sliding_layers};
        int exp[] = {w->layers, w->hidden, w->ffn, w->heads, w->kv, w->head_dim, w->vocab, w->seq, w->tied,
                     w->experts, w->topk, w->moe_ffn, w->shared_ffn, w->first_dense, w->moe_layers,
                     w->q_lora, w->kv_lora, w->window, w->sliding};
        for (size_t j = 0; j < sizeof got / sizeof got[0]; j++)
            if (got[j] != exp[j])
                fail_msg("%s: field %zu is %d, want %d", w->fixture, j, got[j], exp[j]);
        assert_string_equal(m.name, w->fixture);
        assert_int_equal(m.mlp, CFIT_MLP_SWIGLU);
        assert_int_equal(cfit_model_validate(&m, NULL), CFIT_EOK);
    }
}

/* The reader and the catalog agree where both describe the same model. */
static void test_fixture_matches_catalog(void **state)
{
    (void)state;
    static const char *const pairs[][2] = {
        {"llama3-8b", "llama3-8b"}, {"deepseek-v3", "deepseek-v3"}, {"kimi-k2-instruct", "kimi-k2"},
        {"qwen3-30b-a3b", "qwen3-30b-a3b"}, {"gpt-oss-20b", "gpt-oss-20b"}, {"mixtral-8x7b-v0.1", "mixtral-8x7b"},
        {"llama4-scout-17b-16e", "llama4-scout"},
    };
    cfit_catalog *c = cfit_catalog_new(NULL);
    assert_non_null(c);
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        cfit_model m = load_fixture(pairs[i][0]);
        const cfit_model *e = cfit_catalog_model(c, pairs[i][1], NULL);
        assert_non_null(e);
        /* deepseek-v3: 8 groups, 4 per token; kimi: none; both aux-loss-free (noaux_tc) */
        assert_int_equal(m.router_groups, e->router_groups);
        assert_int_equal(m.router_group_topk, e->router_group_topk);
        assert_int_equal(m.router_expert_bias, e->router_expert_bias);
        if (cfit_model_params(&m) != cfit_model_params(e) || cfit_model_active_params(&m) != cfit_model_active_params(e))
            fail_msg("%s: %.0f / %.0f parameters, catalog %s %.0f / %.0f", pairs[i][0], cfit_model_params(&m),
                     cfit_model_active_params(&m), pairs[i][1], cfit_model_params(e), cfit_model_active_params(e));
    }
    cfit_catalog_free(c);
}

static void expect_error(const char *text, int err, int line, int col, const char *needle)
{
    cfit_model m;
    cfit_diag d;
    cfit_diag_clear(&d);
    int rc = cfit_model_load_buffer(text, strlen(text), "config.json", &m, &d);
    if (rc != err || d.line != line || d.col != col || !strstr(d.msg, needle))
        fail_msg("got %s at %d:%d '%s'; want %s at %d:%d with '%s'", cfit_err_name(rc), d.line, d.col, d.msg,
                 cfit_err_name(err), line, col, needle);
    assert_string_equal(d.file, "config.json");
}

#define LLAMA_KEYS "\"num_hidden_layers\": 2, \"hidden_size\": 64, \"intermediate_size\": 128, " \
                   "\"num_attention_heads\": 4, \"vocab_size\": 100"

static void test_errors(void **state)
{
    (void)state;
    expect_error("{\"model_type\": \"llama\",\n \"hidden_size\": 64}", CFIT_EPARSE, 1, 1,
                 "missing required key 'num_hidden_layers'");
    expect_error("{\"model_type\": \"llama\", " LLAMA_KEYS ",\n  \"num_key_value_heads\": \"8\"}", CFIT_EPARSE, 2, 26,
                 "'num_key_value_heads' must be a whole number");
    expect_error("{\"model_type\": \"gemma3\"}", CFIT_EPARSE, 1, 16,
                 "unsupported model_type 'gemma3' (supported: llama, mistral, mixtral, qwen2, qwen2_moe, qwen3");
    expect_error("{\"architectures\": [\"BertModel\"]}", CFIT_EPARSE, 1, 1, "unsupported model_type '(none)'");
    expect_error("{\"model_type\": \"mixtral\", " LLAMA_KEYS ",\n \"num_local_experts\": 8,\n \"num_experts_per_tok\": 9}",
                 CFIT_EINVALID, 3, 25, "num_experts_per_tok (top-k) 9 is larger than the 8 routed experts");
    expect_error("{\"model_type\": \"llama\",\n  \"hidden_size\": 64,}", CFIT_EPARSE, 2, 21, "trailing comma");
    expect_error("{\"model_type\": \"llama\", " LLAMA_KEYS ", \"hidden_size\": 64}", CFIT_EPARSE, 1, 139, "duplicate key");
    expect_error("{\"model_type\": \"llama4\", " LLAMA_KEYS "}", CFIT_EPARSE, 1, 1, "needs a 'text_config' object");
    expect_error("{\"model_type\": \"qwen3_moe\", " LLAMA_KEYS ", \"num_experts\": 4, \"num_experts_per_tok\": 2,"
                 " \"moe_intermediate_size\": 32,\n \"mlp_only_layers\": [0, 2]}", CFIT_EPARSE, 2, 25,
                 "must list layer numbers from 0 to 1");
    expect_error("{\"model_type\": \"deepseek_v3\", " LLAMA_KEYS ", \"kv_lora_rank\": 16, \"qk_nope_head_dim\": 8,"
                 " \"qk_rope_head_dim\": 8, \"v_head_dim\": 8, \"n_routed_experts\": 4, \"num_experts_per_tok\": 2,"
                 " \"moe_intermediate_size\": 32,\n \"moe_layer_freq\": 2}", CFIT_EINVALID, 2, 20, "moe_layer_freq");
    expect_error("{\"model_type\": \"llama\", " LLAMA_KEYS ",\n \"num_key_value_heads\": 3}", CFIT_EINVALID, 1, 1,
                 "num_kv_heads 3 does not divide num_heads 4");
#define DSV3_KEYS "\"model_type\": \"deepseek_v3\", " LLAMA_KEYS ", \"kv_lora_rank\": 16, \"qk_nope_head_dim\": 8," \
                  " \"qk_rope_head_dim\": 8, \"v_head_dim\": 8, \"n_routed_experts\": 8, \"num_experts_per_tok\": 2," \
                  " \"moe_intermediate_size\": 32"
    expect_error("{" DSV3_KEYS ", \"n_group\": 2,\n \"topk_group\": 3}", CFIT_EINVALID, 2, 16, "topk_group is larger than n_group");
    expect_error("{" DSV3_KEYS ", \"scoring_func\": \"sigmoid\",\n \"topk_method\": \"greedy\"}", CFIT_EINVALID, 2, 17,
                 "topk_method must be \"noaux_tc\"");
    expect_error("{" DSV3_KEYS ",\n \"topk_method\": \"noaux_tc\"}", CFIT_EINVALID, 2, 17, "needs scoring_func \"sigmoid\"");
}

static void test_mapping_details(void **state)
{
    (void)state;
    cfit_model m;
    cfit_diag d;
    cfit_diag_clear(&d);
    /* architectures alone; unknown keys ignored; null head_dim; tie from the file */
    const char *t = "{\"architectures\": [\"Foo\", \"Qwen2ForCausalLM\"], " LLAMA_KEYS
                    ", \"head_dim\": null, \"tie_word_embeddings\": true, \"rope_scaling\": {\"type\": \"yarn\"},"
                    " \"max_position_embeddings\": 2048}";
    assert_int_equal(cfit_model_load_buffer(t, strlen(t), "dir/my-model/config.json", &m, &d), CFIT_EOK);
    assert_string_equal(m.name, "my-model");
    assert_int_equal(m.tied_embeddings, 1);
    assert_int_equal(m.seq_len, 2048);
    assert_int_equal(m.num_kv_heads, 4);
    assert_int_equal(m.head_dim, 0);
    /* q_lora_rank null: a plain q projection; n_routed_experts null: dense */
    t = "{\"model_type\": \"deepseek_v3\", " LLAMA_KEYS ", \"q_lora_rank\": null, \"kv_lora_rank\": 16,"
        " \"qk_nope_head_dim\": 8, \"qk_rope_head_dim\": 8, \"v_head_dim\": 8, \"n_routed_experts\": null}";
    assert_int_equal(cfit_hf_model_load_buffer(t, strlen(t), "v2.json", &m, &d), CFIT_EOK);
    assert_int_equal(m.q_lora_rank, 0);
    assert_false(cfit_model_is_moe(&m));
    assert_true(cfit_model_is_mla(&m));
    assert_true(cfit_model_attn_params(&m) == 64.0 * 4 * 16 + 64.0 * (16 + 8) + 16.0 * 4 * 16 + 4.0 * 8 * 64);
    /* llama4: explicit moe_layers, the rest dense at intermediate_size_mlp */
    t = "{\"model_type\": \"llama4\", \"text_config\": {" LLAMA_KEYS ", \"intermediate_size_mlp\": 256,"
        " \"num_local_experts\": 4, \"num_experts_per_tok\": 1, \"moe_layers\": [1]}}";
    assert_int_equal(cfit_model_load_buffer(t, strlen(t), "l4.json", &m, &d), CFIT_EOK);
    assert_int_equal(cfit_model_moe_layers(&m), 1);
    assert_false(cfit_model_layer_is_moe(&m, 0));
    assert_int_equal(m.ffn_hidden_size, 256);
    assert_int_equal(m.shared_ffn_hidden_size, 128);
    assert_string_equal(m.name, "l4");
    /* a clusterfit model file is still read as one */
    t = "{\"name\": \"x\", \"layers\": 2, \"hidden_size\": 64, \"ffn_hidden_size\": 128, \"num_heads\": 4,"
        " \"num_kv_heads\": 4, \"vocab_size\": 100, \"seq_len\": 512, \"mlp\": \"swiglu\", \"source\": \"test\","
        " \"num_experts\": 4, \"experts_per_token\": 2, \"moe_ffn_hidden_size\": 32, \"dense_layers\": [0]}";
    assert_int_equal(cfit_model_load_buffer(t, strlen(t), "x.json", &m, &d), CFIT_EOK);
    assert_int_equal(cfit_model_moe_layers(&m), 1);
    assert_non_null(strstr(cfit_hf_supported_types(), "deepseek_v3"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixtures),
        cmocka_unit_test(test_fixture_matches_catalog),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_mapping_details),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
